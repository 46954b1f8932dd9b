"""A router that remembers, taken as a user does: a loaded minute on the
bloated line (no CAKE: the isp's 500 ms FIFO fills) is kept by the history
daemon with its cause, named as the console names it live; QEMU is killed
the moment the daemon is told to write, and after the boot the store opens,
every batch written before is there, and `keel history` and the console's
history screen show the loaded minute as bloat. The hub's metrics endpoint,
turned on in its keel.toml, is scraped through the tunnel (the exposition
parsed by Prometheus's own parser) and refused from its WAN.

  lan -- edge --up-- isp (bloated FIFO) --core-- hub
"""

from __future__ import annotations

import pytest
from prometheus_client.parser import text_string_to_metric_families

from tests.lab import configs
from tests.lab import topology as topo
from tests.lab.guest import Guest
from tests.lab.history import LATEST, PID, WRITTEN, kept, written_up_to
from tests.lab.ui_driver import ConsoleUI

pytestmark = pytest.mark.lab("bloated")

LOAD_S = 40
CHECK = ("python3 -c \"import sqlite3; "
         "print(sqlite3.connect('/data/keel/history.db').execute('pragma quick_check')"
         ".fetchone()[0])\"")


METRICS_PORT = 9586
SCRAPE = ("python3 -c \"import urllib.request; print(urllib.request.urlopen("
          "'http://{}:9586/metrics', timeout={}).read().decode())\"")


@pytest.fixture(scope="module")
def lab(shared_lab):
    rl = shared_lab
    configs.configure_with_keel(rl, download=0, upload=0,  # no CAKE: the line bloats
                                hub_options={"extra": "[metrics]\nenabled = true\n"})
    # the hub's iperf3 server started afresh by its apply: left from the lab's
    # earlier modules (a wizard's pairing, their own tunnels), it once closed
    # the load's control socket at its start
    rl.hub.check("kill $(cat /run/keel/iperf3.pid) 2>/dev/null; sleep 1; keel apply", 90)
    rl.hub.until(f"ss -ltn | grep -q '{topo.HUB_TUNNEL}:5201 '", 60)
    return rl


def test_the_hubs_metrics_scraped_through_the_tunnel_parse_and_its_wan_refuses(lab):
    edge_pub = lab.edge.check("keel show pubkey")
    lab.hub.until(f"test -s /run/keel/metrics.pid && ss -ltn | grep -q ':{METRICS_PORT} '", 60)
    text = lab.edge.check(SCRAPE.format(topo.HUB_TUNNEL, 30), 90)
    samples = {}  # each sample's name: its samples (the parser's families merge _total)
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            samples.setdefault(sample.name, []).append(sample)
    assert "keel_info" in samples and "wireguard_latest_handshake_seconds" in samples, \
        sorted(samples)
    (info,) = samples["keel_info"]
    assert info.labels["version"] == lab.hub.check("keel --version").split()[-1]
    handshakes = {s.labels["public_key"]: s.value
                  for s in samples["wireguard_latest_handshake_seconds"]}
    assert handshakes[edge_pub] > 0  # the edge's tunnel is up: it has handshaken
    # the hub's private key is not in what it serves (compared in the hub: the
    # key never reaches the console's log)
    assert lab.hub.check(SCRAPE.format(topo.HUB_TUNNEL, 30) + " > /run/scraped && "
                         "wg show all private-key | cut -f2 | grep -qF -f - /run/scraped "
                         "&& echo leaked || echo clean", 90) == "clean"
    # from the WAN side: the hub answers a ping there, and refuses the scrape
    lab.isp.check(f"ping -n -c 1 -w 10 {topo.HUB_WAN}", 30)
    refused = lab.isp.run(SCRAPE.format(topo.HUB_WAN, 10), 60)
    assert refused.rc != 0, refused.output
    assert "# TYPE" not in refused.output


def now(guest: Guest) -> int:
    return int(float(guest.check("date +%s")))


def tunnel_p95(point: dict) -> float | None:
    return point["latency"].get("tunnel", {}).get("p95_ms")


def test_a_loaded_minute_is_kept_with_its_cause_across_a_power_cut(lab):
    edge = lab.edge
    # the daemon probes the hub through the tunnel (it follows the apply) and
    # has seen the idle line: a point with its probes
    edge.until(f"grep -q '\"tunnel\":{{\"p50_ms\":[0-9]' {LATEST}", 120, every=2)
    edge.check("sleep 20")  # two more idle points: the baseline the load is judged on
    begin = now(edge)
    edge.check(f"iperf3 -c {topo.HUB_TUNNEL} -P 4 -t {LOAD_S} > /dev/null", LOAD_S * 4)
    end = now(edge)
    written_up_to(edge, end + 10)
    before = kept(edge, begin - 30, end + 10)
    loaded = [p for p in before if begin + 10 <= p["t"] <= end]
    assert loaded, before
    named = [p for p in loaded if "bloat" in p["causes"]]
    assert len(named) >= len(loaded) / 2, [(p["t"], p["causes"]) for p in loaded]
    assert any("CAKE is off" in p["evidence"] for p in named), named
    # through the tunnel, the loaded points' p95 against the idle ones' before
    idle = [p95 for p in before if p["t"] < begin and (p95 := tunnel_p95(p)) is not None]
    assert idle and max(tunnel_p95(p) or 0 for p in named) > 2 * max(idle), (idle, named)

    # the power cut: QEMU killed as soon as the daemon is told to write
    edge.console.child.sendline(f"kill -USR1 $(cat {PID})")
    edge.power_cut()
    edge.wait_for_login(180)
    edge.until(f"test -s {WRITTEN}", 120, every=2)  # the daemon up, this boot's event kept
    assert edge.check(CHECK, 120) == "ok"
    after = kept(edge, begin - 30, end + 10)
    assert after == before  # every batch written before the cut is there, as it was
    events = edge.json(f"keel history events --since @{begin - 600} --json", 120)
    assert [e["kind"] for e in events].count("boot") >= 1  # this boot
    assert events[-1]["kind"] == "boot" and events[-1]["t"] > end

    # the console: its history screen shows the loaded minute as a band of bloat
    ui = ConsoleUI(edge)
    ui.wait_for(r"NOW", 180)
    ui.press("y")
    ui.wait_for(r"(?i)history", 120)
    ui.press("right")
    text = ui.wait_for(r"bloat", 120)
    ui.quit()
    assert "bloat" in text, text
