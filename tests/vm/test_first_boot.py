"""First boot by keystrokes only (issue: the console is where keel is set
up): a fresh hub and edge, no user config on either, each set up through the
console UI's setup wizard on its serial console (TERM=vt220, 80x24, rendered
by pyte), the hub showing a pairing code that is typed into the edge's
wizard, the edge measuring its line with the throughput self-test and
taking the recommended CAKE rates with [a] and [k]. Shell commands here only
check: the LAN client's ping crosses the tunnel, and CAKE runs at the rates
the self-test recommended.

  lan -- edge --up-- isp (4/1.5 Mbit/s, bloated FIFO) --core-- hub
"""

from __future__ import annotations

import json
import re

import pytest

from tests.lab import topology as topo
from tests.lab.ui_driver import ConsoleUI

# the keys go in at once (the UI takes keys typed ahead in order:
# keel.ui.widgets.typeahead), and that holds beside a loaded host. It runs in the
# quiet lane (tests/lab/lanes.py), first on the lab it shares with the quiet
# modules, booted for them anyway: its guests come first for the host's CPU
# there, and its throughput self-test's recommendation is a measurement. In
# a lane of its own it cost more than it saved (a lab of its own: beside the
# host lane, that lane 12.9 min instead of 3.8; beside the main and side
# lanes, eleven guests, and the upgrade lab's new slot missed its gate's
# 120 s for the console UI on tty1)
# fresh: the guests as first started, no other module has set them up
pytestmark = [pytest.mark.lab("bloated", fresh=True), pytest.mark.measures]


@pytest.fixture(scope="module")
def lab(shared_lab):
    for guest in (shared_lab.edge, shared_lab.hub):
        assert guest.run("test -e /data/keel/keel.toml").rc != 0  # no user config
    return shared_lab


def cake_kbit(guest, dev: str) -> int:
    (root,) = [q for q in json.loads(guest.check(f"tc -j qdisc show dev {dev} root"))
               if q["kind"] == "cake"]
    return root["options"]["bandwidth"] * 8 // 1000


def apply_and_keep(ui: ConsoleUI, others: tuple[ConsoleUI, ...] = ()) -> None:
    """[y] on the review applies once its plan (keel apply --dry-run) is in:
    before that the review says "wait for the plan", so [y] again; then
    [y] on the countdown keeps it."""
    for _ in range(30):
        ui.press("y")
        text = ui.wait_for(r"KEEP THESE SETTINGS\?|wait for the plan", 180, others)
        if "KEEP THESE SETTINGS?" in text:
            break
        ui.pump(ui.guest.accel.scale(1.0))
    else:
        raise AssertionError("the review never applied:\n" + ui.text())
    ui.press("y")
    ui.wait_for(r"kept: these settings stay", 60, others)


def test_hub_and_edge_set_up_from_their_consoles_by_keystrokes(lab):
    hub_ui = ConsoleUI(lab.hub)
    hub_ui.wait_for(r"step 1/\d: What is this router\?", 180)
    hub_ui.wait_for(r"\(\*\) hub")  # one port (core): the hub is offered, already chosen
    hub_ui.press("enter")  # hub
    hub_ui.wait_for(r"step 2/6: Which NIC is which\?")
    hub_ui.press("enter")
    hub_ui.wait_for(r"step 3/6")
    hub_ui.press("down", "enter", f"{topo.HUB_WAN}/24", "enter", topo.ISP_CORE, "enter")
    hub_ui.wait_for(r"step 4/6: The WireGuard tunnel")
    hub_ui.press("up", "up", "enter", "enter", "enter")  # pair; the address and port given
    hub_ui.wait_for(r"step 5/6: Shaping")
    hub_ui.press("enter")  # off: the VPS's link is not the bottleneck
    hub_ui.wait_for(r"step 6/6")
    hub_ui.press("enter")
    hub_ui.wait_for(r"REVIEW", 120)  # the diff, and the plan below it
    apply_and_keep(hub_ui)
    hub_ui.press("enter")
    shown = hub_ui.wait_for(r"code\s+\d{4}-\d{4}", 120)
    code = re.search(r"code\s+(\d{4}-\d{4})", shown).group(1)
    print("\n--- the hub's console, its code shown (masked here) ---\n"
          + shown.replace(code, "NNNN-NNNN"))

    edge_ui = ConsoleUI(lab.edge)
    edge_ui.wait_for(r"step 1/7: What is this router\?", 180, others=(hub_ui,))
    edge_ui.press("enter")  # edge
    edge_ui.wait_for(r"step 2/7: Which NIC is which\?", others=(hub_ui,))
    edge_ui.press("enter")  # WAN eth0 (up to the isp), LAN eth1, the other of two ports
    edge_ui.wait_for(r"step 3/7", others=(hub_ui,))
    edge_ui.press("down", "enter", f"{topo.EDGE_WAN_VIA_ISP}/24", "enter", topo.ISP_UP,
                  "enter")
    edge_ui.wait_for(r"step 4/7: The LAN", others=(hub_ui,))
    edge_ui.press("enter", "enter", "enter")
    edge_ui.wait_for(r"step 5/7: The WireGuard tunnel", others=(hub_ui,))
    edge_ui.press("up", "up", "enter", topo.HUB_WAN, "enter", code, "enter")
    edge_ui.wait_for(r"step 6/7: Shaping", others=(hub_ui,))
    assert code not in edge_ui.text() and code.replace("-", "") not in edge_ui.text()
    edge_ui.press("up", "up", "enter")  # measure
    edge_ui.wait_for(r"step 7/7", others=(hub_ui,))
    edge_ui.press("enter")
    edge_ui.wait_for(r"REVIEW", 120, others=(hub_ui,))
    apply_and_keep(edge_ui, (hub_ui,))
    edge_ui.press("enter")
    paired = edge_ui.wait_for(r"paired: the tunnel is up and kept|not paired", 300,
                              others=(hub_ui,))
    print("\n--- the edge's console, paired ---\n" + paired)
    assert "paired: the tunnel is up and kept" in paired
    hub_done = hub_ui.wait_for(r"paired: the tunnel is up and kept|not paired", 180)
    assert "paired: the tunnel is up and kept" in hub_done
    edge_ui.press("enter")  # then the throughput self-test
    result = edge_ui.wait_for(r"CAKE: egress [\d.]+ ingress [\d.]+ Mbit/s|throughput failed",
                              600)
    assert "throughput failed" not in result
    print("\n--- the edge's throughput test ---\n" + result)
    edge_ui.press("a")
    edge_ui.wait_for(r"Apply CAKE rates", 60)
    edge_ui.press("y")
    applied = edge_ui.wait_for(r"applied CAKE \d+ kbit/s up, \d+ kbit/s down", 180)
    up, down = map(int, re.search(r"applied CAKE (\d+) kbit/s up, (\d+) kbit/s down",
                                  applied).groups())
    edge_ui.press("k")
    edge_ui.wait_for(r"confirmed", 60)
    edge_ui.quit()
    hub_ui.press("enter")
    hub_ui.quit()

    # the checks, from the shells
    before = int(lab.hub.check("cat /sys/class/net/wg0/statistics/rx_packets"))
    lab.lan.until("ip -4 -o addr show dev eth0 | grep 192.168.77.", 120)
    out = lab.lan.check(f"ping -n -c 5 -i 0.3 -w 30 {topo.HUB_TUNNEL}", 60)
    assert "5 received" in out
    assert int(lab.hub.check("cat /sys/class/net/wg0/statistics/rx_packets")) - before >= 5
    # CAKE at the rates the self-test recommended, both ways, under the line's rates
    assert cake_kbit(lab.edge, "eth0") == up
    assert cake_kbit(lab.edge, "ifb4eth0") == down
    line = topo.Bottleneck()
    assert 0.5 * line.up_kbit <= up < line.up_kbit and 0.5 * line.down_kbit <= down < line.down_kbit
    assert "confirmed" not in lab.edge.check("keel confirm")  # nothing left pending
