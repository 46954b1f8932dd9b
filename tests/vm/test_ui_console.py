"""The console UI for real: `keel tui` on the edge's serial console (80x24,
TERM=vt220: the console profile) while traffic flows through the tunnel; the
captured screen, rendered by a terminal emulator (pyte), shows the peer,
non-zero tunnel rates and the tunnel's CPU figure."""

from __future__ import annotations

import re

import pytest

from tests.lab import topology as topo
from tests.lab.configs import configure_with_keel
from tests.lab.screen import run_ui

UI_SECONDS = 25


@pytest.fixture(scope="module")
def lab(make_module_lab):
    lab = make_module_lab()
    rl = topo.build(lab)
    rl.console = lab.guest("console", smp=1, memory=384, tty1_ui=True)  # type: ignore[attr-defined]
    rl.lab.start()
    rl.hub_pub = configure_with_keel(rl)  # type: ignore[attr-defined]
    return rl


def test_ui_shows_the_peer_rates_and_tunnel_cpu_under_traffic(lab, request):
    lab.edge.check(f"(iperf3 -c {topo.HUB_TUNNEL} -t {UI_SECONDS + 20} -b 4M "
                   "> /dev/null 2>&1 &)")
    screen = run_ui(lab.edge, UI_SECONDS)
    text = "\n".join(screen.display)
    print("\n" + text)
    assert "TUNNEL" in text and "wg0" in text
    assert lab.hub_pub[:8] in text, "the peer is not shown"
    assert f"{topo.HUB_WAN}:51820" in text
    # rates through the tunnel are not zero, on the TUNNEL panel's sparkline
    # labels ("tx   4.4M") and on the peer's line (".. hs 39s 130k/4.4M", rx/tx)
    left = [line.split("|")[0] for line in screen.display]
    spark = [m for line in left if (m := re.match(r"(rx|tx)\s+([\d.]+)[kMG]?\s", line))]
    assert {m[1] for m in spark} == {"rx", "tx"}, left
    assert any(float(m[2]) > 0 for m in spark), left
    peer = next(line for line in left if f"{topo.HUB_WAN}:51820" in line)
    peer_rates = re.search(r"([\d.]+)[kMG]?/([\d.]+)[kMG]?\s*$", peer)
    assert peer_rates and float(peer_rates[2]) > 0, peer
    # the tunnel's CPU: "0.57 core = 29% of 2 CPUs" and "117.0 CPU-s/Gbit at 4.9Mbit/s"
    assert re.search(r"[\d.]+ core = \d+% of \d+ CPUs", text), text
    cost = re.search(r"([\d.]+) CPU-s/Gbit at", text)
    assert cost and float(cost[1]) > 0, text
    (lab.lab.workdir / "ui-screen-80x24.txt").write_text(text + "\n")


def test_tty1_runs_the_ui_and_falls_back_to_a_login_after_3_failed_starts(lab):
    guest = lab.console
    pid = guest.until("pgrep -f 'keel tui --console'", 120).split()[0]
    assert guest.check(f"readlink /proc/{pid}/fd/0") == "/dev/tty1"
    assert guest.check(f"tr '\\0' ' ' < /proc/{pid}/environ | grep -o 'TERM=linux'")
    # the UI ends with an error within 30 s of its start, three times: a login
    for _ in range(5):
        if guest.run("pgrep -f 'getty 38400 tty1'").rc == 0:
            break
        guest.check("pkill -f 'keel tui --console'; sleep 1; true")
        guest.until("pgrep -f 'keel tui --console' || pgrep -f 'getty 38400 tty1'", 120)
    guest.until("pgrep -f 'getty 38400 tty1'", 60)
    assert guest.run("pgrep -f 'keel tui --console'").rc != 0
    assert int(guest.check("cat /run/keel/tty1-failures")) >= 3
