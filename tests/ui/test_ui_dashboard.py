"""Pilot tests of the dashboard at 80x24 on the lab fixtures: what each panel shows."""

from __future__ import annotations

import asyncio
import json

from keel.system.fake import FakeLiveSource
from keel.system.source import FixtureSource
from keel.ui.lines import LinesPanel
from keel.ui.profile import MODERN
from tests.fixtures.sources import fixture_source, lab
from tests.ui.uihelpers import (
    asynctest,
    fixture_collectors,
    make_app,
    screen_lines,
    settle,
    two_polls,
)


def panel(app, name: str) -> str:
    return app.screen.query_one(f"#{name}", LinesPanel).text


@asynctest
async def test_everything_fits_at_80x24():
    app = make_app()
    async with app.run_test(size=(80, 24)) as pilot:
        await two_polls(pilot)
        lines = screen_lines(app)
        text = "\n".join(lines)
        assert len(lines) == 24 and all(len(line) <= 80 for line in lines)
        for title in ("TUNNEL", "CPU", "LATENCY", "CAKE", "TUNING"):
            assert title in text
        assert lines[-1].startswith("[s]elftest")
        assert text.isascii()  # the console profile draws nothing outside ASCII


@asynctest
async def test_tunnel_panel_shows_peer_endpoint_handshake_and_rates():
    app = make_app()
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        assert "rx      -" in panel(app, "tunnel")  # one read: no rate yet
        await pilot.press("r")
        await settle(pilot)
        text = panel(app, "tunnel")
        assert "wg0 :51820" in text
        assert "DGDJOoNe 192.0.2.2:51820" in text
        assert "handshake   12s" in text
        # peer: 1.25 MB rx, 0.5 MB tx in the 1 s between the polls
        assert "rx  10.0M  tx   4.0M" in text
        # interface: 30 MB rx / 10 MB tx, 25000 / 9000 packets in 1 s
        assert "rx 240.0M  tx  80.0M bit/s  25k/9.0k pkt/s" in text
        assert "REDACTED" not in text


@asynctest
async def test_cpu_panel_shows_cores_and_tunnel_cost():
    app = make_app()
    async with app.run_test(size=(80, 24)) as pilot:
        await two_polls(pilot)
        lines = panel(app, "cpu").splitlines()
        assert lines[0].startswith("CPU    user  sys sirq steal idle")
        assert lines[1].startswith(" cpu0    2%  38%  19%    0%  41%")
        assert lines[2].startswith(" cpu1    1%  38%  34%    0%  27%")
        # softirq 2.59 s + wg-crypt 1.00 s over 4.88 s; 40 MB = 0.32 Gbit
        assert "0.74 core = 37% of 2 CPUs" in lines[1]
        assert "11.2 CPU-s per Gbit at 65.6Mbit/s" in lines[2]
        assert len(lines) == 3  # no warning: the verdict line says the rest


def hot_stats(n: int) -> list[str]:
    """/proc/stat reads where cpu0 spends 95% in softirq and cpu1 idles."""
    reads = []
    for i in range(n):
        s0 = (5 + 95 * i, 100 + 5 * i)  # softirq, idle of cpu0
        s1 = (5, 100 + 100 * i)
        total = (s0[0] + s1[0], s0[1] + s1[1])
        reads.append(f"cpu  0 0 0 {total[1]} 0 0 {total[0]} 0 0 0\n"
                     f"cpu0 0 0 0 {s0[1]} 0 0 {s0[0]} 0 0 0\n"
                     f"cpu1 0 0 0 {s1[1]} 0 0 {s1[0]} 0 0 0\n")
    return reads


@asynctest
async def test_cpu_warning_when_one_core_carries_the_tunnel():
    source = fixture_source(stats=hot_stats(5))
    app = make_app(collectors=fixture_collectors(source))
    async with app.run_test(size=(80, 24)) as pilot:
        await two_polls(pilot)
        assert "!" not in panel(app, "cpu")  # seen once: not yet a warning
        for _ in range(2):
            await pilot.press("r")
            await settle(pilot)
        text = panel(app, "cpu")
        assert "! cpu0 softirq 95% while the other cores idle" in text
        assert "! cpu0 softirq" in "\n".join(screen_lines(app))


@asynctest
async def test_latency_panel_and_plot():
    app = make_app()
    async with app.run_test(size=(80, 24)) as pilot:
        await two_polls(pilot)
        head = panel(app, "latency").splitlines()
        assert head[0].startswith("LATENCY * tunnel  10.99.0.2")
        assert head[1].startswith("        o outside 192.0.2.2")
        assert "gap" in head[0] and "tunnel's own cost" in head[1]
        assert "idle 3.1" in head[1]
        plot = "\n".join(app.screen.query_one("#plot").model.lines())
        assert "*" in plot and "o" in plot and "x" in plot  # a lost probe (every 7th)
        assert "+5" in plot and "+30" in plot and "+60" in plot


@asynctest
async def test_cake_panel_both_directions():
    app = make_app()
    async with app.run_test(size=(80, 24)) as pilot:
        await two_polls(pilot)
        lines = panel(app, "cake").splitlines()
        assert lines[1].split() == ["egress", "eth0", "40.0M", "20.0M", "0B", "9", "0"]
        assert lines[2].strip() == "delay peak/avg ms: BE 6.7/1.6"
        assert lines[3].split() == ["ingress", "ifb4eth0", "40.0M", "40.0M", "0B", "3", "0"]
        assert "BE 10.5/4.4" in lines[4] and "Bulk 0/0" in lines[4] and "Voice" in lines[4]


@asynctest
async def test_tuning_panel_in_a_vm():
    app = make_app()
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        assert panel(app, "tuning") == ("TUNING  managed by the hypervisor (no cpufreq/cpuidle), "
                                        "2300 MHz: watch steal")


@asynctest
async def test_tuning_panel_on_bare_metal():
    from keel.metrics.collectors import TuningCollector

    collectors = fixture_collectors()
    collectors["tuning"] = TuningCollector(FakeLiveSource(cpufreq=True), pm_qos=lambda: 0)
    app = make_app(collectors=collectors)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        assert panel(app, "tuning") == ("TUNING  governor performance  2394/2400 MHz  "
                                        "idle POLL (C1 C6 off)  PM QoS 0us")


@asynctest
async def test_errors_are_shown_not_raised():
    empty = FixtureSource({"/proc/stat": lab("proc-stat-before.txt")})
    app = make_app(collectors=fixture_collectors(empty))
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        assert "wg: wg: no fixture" in panel(app, "tunnel")
        assert "tc: tc: no fixture" in panel(app, "cake")


@asynctest
async def test_hidden_dashboard_polls_nothing():
    source = fixture_source()
    fast = dict.fromkeys(("tunnel", "cpu", "cake", "tuning", "latency"), 0.05)
    app = make_app(collectors=fixture_collectors(source), intervals=fast)
    async with app.run_test(size=(80, 24)) as pilot:
        await asyncio.sleep(0.3)
        assert source.reads.count("/proc/stat") >= 3  # shown: polling
        await pilot.press("s")
        await settle(pilot)
        hidden = len(source.reads)
        await asyncio.sleep(0.4)
        assert len(source.reads) == hidden  # the self-test screen polls latency only
        await pilot.press("escape")
        await asyncio.sleep(0.3)
        assert len(source.reads) > hidden


@asynctest
async def test_modern_profile_at_120x40():
    app = make_app(MODERN)
    async with app.run_test(size=(120, 40)) as pilot:
        await two_polls(pilot)
        assert app.theme == "textual-dark"
        text = "\n".join(screen_lines(app))
        assert "\u25cf tunnel" in text  # the modern plot's glyphs
        assert app.screen.query_one("#plot").size.height > 15


@asynctest
async def test_the_verdict_line_and_the_verdicts_screen(tmp_path, monkeypatch):
    from keel.ui import signals

    monkeypatch.setattr(signals, "EXPORT_DIRS", (tmp_path / "ro" / "x", tmp_path / "export"))
    (tmp_path / "ro").write_text("a file: the first place is not writable")
    app = make_app()
    async with app.run_test(size=(80, 24)) as pilot:
        await two_polls(pilot)
        assert screen_lines(app)[0].startswith("NOW       healthy: stall max 1 ms, steal 0%")
        await pilot.press("v")
        await settle(pilot)
        for _ in range(3):
            await pilot.press("r")
            await settle(pilot)
        lines = screen_lines(app)
        assert lines[0].startswith("VERDICTS") and lines[1].strip() == "healthy"
        assert "CPU stalls (worst wakeup, ms)" in lines
        assert "tunnel latency over idle (ms)" in lines
        await pilot.press("e")
        await pilot.pause()
        (exported,) = (tmp_path / "export").iterdir()
        assert "s exported to" in screen_lines(app)[-1]
        rows = [json.loads(line) for line in exported.read_text().splitlines()]
        assert len(rows) >= 4 and rows[-1]["stall_max_ms"] == 1.2
        await pilot.press("escape")
        await pilot.pause()
        assert app.screen.id == "dashboard"
