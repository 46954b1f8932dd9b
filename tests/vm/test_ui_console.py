"""The console UI for real: `keel tui` on the edge's serial console (80x24,
TERM=vt220: the console profile) while traffic flows through the tunnel; the
captured screen, rendered by a terminal emulator (pyte), shows the peer,
non-zero tunnel rates and the tunnel's CPU figure. (tty1's UI: test_boot.)"""

from __future__ import annotations

import re

import pytest

from tests.lab import topology as topo
from tests.lab.screen import run_ui

pytestmark = pytest.mark.lab("router")  # (the quiet lane: tests/lab/labs.py says why)
UI_SECONDS = 300  # a bound: the UI is quit once the figures are drawn
RATE = r"[\d.]+[kMG]?"  # bit/s as the UI writes it: "130k", "4.4M"


def bits(rate: str) -> float:
    scale = {"k": 1e3, "M": 1e6, "G": 1e9}.get(rate[-1], 1)
    return float(rate.rstrip("kMG")) * scale


@pytest.fixture(scope="module")
def lab(shared_lab):
    shared_lab.edge.check(f"ping -n -c 1 -w 30 {topo.HUB_TUNNEL}", 60)  # the tunnel is up
    return shared_lab


def sparkline_rates(screen) -> dict[str, str]:
    """The TUNNEL panel's sparkline labels ("tx   4.4M"), by direction."""
    left = [line.split("|")[0] for line in screen.display]
    return dict(m.groups() for line in left if (m := re.match(rf"(rx|tx)\s+({RATE})\s", line)))


def drawn(screen) -> bool:
    """What the test reads is on the screen: iperf3's 4 Mbit/s on the TUNNEL
    panel and the tunnel's CPU cost (the UI's first polls show "-" and
    "measuring ...")."""
    spark = sparkline_rates(screen)
    return ("rx" in spark and "tx" in spark and bits(spark["tx"]) >= 1e6
            and "CPU-s/Gbit at" in "\n".join(screen.display))


def test_ui_shows_the_peer_rates_and_tunnel_cpu_under_traffic(lab, request):
    # traffic until the screen is read, however long the UI takes to start
    # (20 s and more under emulation on a busy host: a fixed -t ran out)
    lab.edge.check(f"(iperf3 -c {topo.HUB_TUNNEL} -t 600 -b 4M > /dev/null 2>&1 &)")
    try:
        screen = run_ui(lab.edge, UI_SECONDS, drawn)
    finally:
        lab.edge.check("pkill -x iperf3; true")
    text = "\n".join(screen.display)
    print("\n" + text)
    assert "TUNNEL" in text and "wg0" in text
    assert lab.hub_pub[:8] in text, "the peer is not shown"
    assert f"{topo.HUB_WAN}:51820" in text
    # rates through the tunnel are not zero, on the TUNNEL panel's sparkline
    # labels ("tx   4.4M") and on the peer's line (".. hs 39s 130k/4.4M", rx/tx)
    # iperf3 sends 4 Mbit/s from the edge (keepalives and pings alone: a few k)
    left = [line.split("|")[0] for line in screen.display]
    spark = sparkline_rates(screen)
    assert set(spark) == {"rx", "tx"}, left
    assert bits(spark["tx"]) >= 1e6, left
    peer = next(line for line in left if f"{topo.HUB_WAN}:51820" in line)
    peer_rates = re.search(rf"({RATE})/({RATE})\s*$", peer)
    assert peer_rates and bits(peer_rates[2]) >= 1e6, peer
    # the tunnel's CPU: "0.57 core = 29% of 2 CPUs" and "117.0 CPU-s/Gbit at 4.9Mbit/s"
    assert re.search(r"[\d.]+ core = \d+% of (1 CPU|\d+ CPUs)\b", text), text
    cost = re.search(r"([\d.]+) CPU-s/Gbit at", text)
    assert cost and float(cost[1]) > 0, text
    (lab.lab.workdir / "ui-screen-80x24.txt").write_text(text + "\n")
