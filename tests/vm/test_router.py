"""The router, configured by keel.toml and `keel apply`, in the lab:
`lan` client -> `edge` (keel) -> `hub` (keel, the VPS end), the WAN link
between edge and hub, a WireGuard tunnel over it."""

from __future__ import annotations

import json
import re
import time

import pytest

from tests.lab import topology as topo
from tests.lab.configs import DOWN_KBIT, UP_KBIT, edge_config, hub_config

pytestmark = pytest.mark.lab("router")  # (the quiet lane: tests/lab/labs.py says why)


def state(guest) -> str:
    """What must not change: the ruleset, the qdiscs (no counters), addresses, peers."""
    return guest.check("nft list ruleset; tc qdisc show; tc filter show dev eth0 ingress; "
                       "ip -o addr show scope global | awk '{print $2, $4}'; wg show all peers; "
                       "wg show all allowed-ips")


@pytest.fixture(scope="module")
def lab(shared_lab):
    return shared_lab


def test_lan_client_got_a_lease_from_the_edge(lab):
    addr = lab.lan.until("ip -4 -o addr show dev eth0 | grep 192.168.77.", 60)
    assert "192.168.77.1" in addr and "/24" in addr


def test_lan_reaches_behind_the_hub_through_the_tunnel(lab):
    rx = "cat /sys/class/net/wg0/statistics/rx_packets"
    before = int(lab.hub.check(rx))
    out = lab.lan.check(f"ping -n -c 10 -i 0.2 -w 30 {topo.BEHIND_HUB}", 60)
    assert "10 received" in out
    # the hub got them from the tunnel (it has no route to the LAN but wg0)
    assert int(lab.hub.check(rx)) - before >= 10
    assert "192.168.77" not in lab.hub.check("ip route")


def test_nat_out_of_the_wan(lab):
    # the hub has no route back to the LAN: a reply proves the edge masquerades
    out = lab.lan.check(f"ping -n -c 3 -i 0.2 -w 30 {topo.HUB_WAN}", 60)
    assert "3 received" in out


def test_a_vps_static_wan_with_a_slash_32_and_an_on_link_gateway(lab):
    """Many hosting providers hand out a /32 and a gateway outside it: the
    default route goes via the gateway `onlink`, and the tunnel still works."""
    edge_pub = lab.edge.check("keel show pubkey")
    lab.hub.write_file("/tmp/vps.toml", hub_config(edge_pub, gateway=topo.EDGE_WAN_DIRECT,
                                                   prefix=32))
    try:
        lab.hub.check("keel apply /tmp/vps.toml", 60)
        (link,) = lab.hub.json("ip -j -4 addr show dev eth0")
        assert [(a["local"], a["prefixlen"]) for a in link["addr_info"]] == [(topo.HUB_WAN, 32)]
        (route,) = lab.hub.json("ip -j route show default")
        assert (route["gateway"], route["dev"]) == (topo.EDGE_WAN_DIRECT, "eth0"), route
        assert "onlink" in route["flags"], route
        # no connected /24 any more: the edge is reached through the gateway
        lab.hub.check(f"ping -n -c 2 -w 20 {topo.EDGE_WAN_DIRECT}", 30)
        assert "no changes" in lab.hub.check("keel apply /tmp/vps.toml", 60)
        lab.edge.check(f"ping -n -c 2 -w 20 {topo.HUB_TUNNEL}", 30)
    finally:
        lab.hub.write_file("/tmp/hub.toml", hub_config(edge_pub))
        lab.hub.check("keel apply /tmp/hub.toml", 60)
    (route,) = lab.hub.json("ip -j route show default")
    assert "onlink" not in route.get("flags", []), route


def test_only_the_wireguard_port_is_open_on_the_wan(lab):
    lab.edge.check("(nc -l -p 8080 >/dev/null 2>&1 &); (nc -l -p 22 >/dev/null 2>&1 &)")
    for port in (8080, 22):
        r = lab.hub.run(f"nc -z -w 3 {topo.EDGE_WAN_DIRECT} {port}", 30)
        assert r.rc != 0, f"port {port} answered from the WAN"
    # while the same port answers from the LAN side
    assert lab.lan.run(f"echo | nc -w 3 {topo.LAN_EDGE} 8080", 30).rc == 0
    # the WireGuard port answers: a handshake happened within the last minutes
    dump = lab.edge.check("wg show wg0 latest-handshakes")
    assert int(dump.split()[1]) > time.time() - 600


def test_cake_on_egress_and_on_the_ifb_with_growing_counters(lab):
    def cake(dev):
        (q,) = json.loads(lab.edge.check(f"tc -s -j qdisc show dev {dev} root"))
        return q

    egress, ingress = cake("eth0"), cake("ifb4eth0")
    assert egress["kind"] == ingress["kind"] == "cake"
    assert egress["options"]["bandwidth"] == UP_KBIT * 125
    assert ingress["options"]["bandwidth"] == DOWN_KBIT * 125
    assert ingress["options"]["ingress"] is True
    lab.edge.check(f"iperf3 -c {topo.HUB_TUNNEL} -t 3 --bidir > /dev/null", 60)
    assert cake("eth0")["packets"] > egress["packets"] + 100
    assert cake("ifb4eth0")["packets"] > ingress["packets"] + 100


def test_applying_the_same_config_twice_changes_nothing(lab):
    before = state(lab.edge)
    assert "no changes" in lab.edge.check("keel apply", 60)
    assert state(lab.edge) == before


def test_an_invalid_config_changes_nothing(lab):
    before = state(lab.edge)
    lab.edge.write_file("/tmp/bad.toml", edge_config(lab.hub_pub, upload=-5))
    r = lab.edge.run("keel apply /tmp/bad.toml", 60)
    assert r.rc == 2
    assert "wan.shaping.upload_kbit" in r.output
    assert state(lab.edge) == before


def test_confirm_not_given_rolls_back(lab):
    before = state(lab.edge)
    lab.edge.write_file("/tmp/risky.toml", edge_config(lab.hub_pub, upload=3000, ssh=True))
    lab.edge.check("keel apply --confirm 10 /tmp/risky.toml", 60)
    assert "tcp dport 22 accept" in lab.edge.check("nft list ruleset")
    # the watcher rolls back once the 10 s have passed, then ends
    lab.edge.until("! pgrep -f '[c]onfirm-watch'", 60)
    assert state(lab.edge) == before
    assert "upload_kbit = 3000" not in lab.edge.check("cat /data/keel/keel.toml")


def test_doctor_reports_the_truth(lab):
    r = lab.edge.run("keel doctor --json --seconds 1", 60)
    report = json.loads(r.output)
    assert r.rc == 0 and report["status"] == "ok", report
    checks = {(c["area"], c["name"]): c for c in report["checks"]}
    assert checks[("kernel", "wireguard")]["status"] == "ok"
    assert checks[("kernel", "sch_cake")]["status"] == "ok"
    # a TCG guest has no cpufreq/cpuidle: said plainly, not a failure
    assert "hypervisor" in checks[("tuning", "governor")]["detail"]
    assert checks[("tuning", "pm qos")]["data"]["pm_qos_us"] == 3
    assert checks[("cake", "eth0 egress")]["status"] == "ok"
    assert checks[("cake", "eth0 ingress")]["status"] == "ok"
    peers = [c for (area, _), c in checks.items() if area == "wireguard" and "peer" in c["name"]]
    assert peers and peers[0]["status"] == "ok"
    # the history daemon runs and has made points (how recent the newest is
    # depends on the host's load: not asserted); the metrics endpoint is off,
    # as shipped, and said so
    kept = checks[("history", "daemon")]["data"]
    assert kept["running"] and kept["newest"] is not None, kept
    assert checks[("metrics", "endpoint")]["status"] == "info"


# the pings that are not the history daemon's own probes (it pings the tunnel's
# peer all along: S42history)
OWN_PINGS = ("h=$(cat /run/keel/history.pid 2>/dev/null); for p in $(pgrep -x ping); do "
             "[ \"$(cut -d' ' -f4 /proc/$p/stat)\" = \"$h\" ] || echo $p; done")


def test_an_interrupted_compare_puts_cake_back_and_stops_its_processes(lab):
    before = state(lab.edge)
    lab.edge.check("(keel selftest bufferbloat --compare > /run/compare.out 2>&1 & "
                   "echo $! > /run/compare.pid)")
    # bypassed once the test runs: no CAKE at the root of eth0 any more
    lab.edge.until("! tc qdisc show dev eth0 root | grep -q cake", 60, every=0.2)
    # under load: its iperf3 and its own pings both running (however slowly
    # the compare got there on a loaded host)
    lab.edge.until(f"pgrep -x iperf3 && test -n \"$({OWN_PINGS})\"", 180, every=0.5)
    lab.edge.check("kill -TERM $(cat /run/compare.pid)")
    lab.edge.until("! kill -0 $(cat /run/compare.pid)", 60)
    assert "interrupted" in lab.edge.check("cat /run/compare.out")
    assert lab.edge.run("pgrep -x iperf3").rc == 1  # none left
    assert lab.edge.check(OWN_PINGS) == ""
    assert without_handles(state(lab.edge)) == without_handles(before)


def without_handles(text: str) -> str:
    """qdisc handles are numbered by the kernel as qdiscs are made: not state."""
    return re.sub(r"qdisc (\S+) [0-9a-f]+: ", r"qdisc \1 N: ", text)


def test_the_same_state_comes_back_after_a_reboot(lab):
    before = state(lab.edge)
    lab.edge.reboot()
    # the boot's apply ended (the login waits for it): what is in force is
    # the config, so applying it again plans nothing (no dhcpcd restart)
    plan = lab.edge.check("keel apply --dry-run", 60)
    assert plan.strip().splitlines()[-1:] == ["no changes"], plan
    lab.edge.check(f"ping -n -c 1 -w 30 {topo.HUB_TUNNEL}", 60)
    after = state(lab.edge)
    assert without_handles(after).splitlines() == without_handles(before).splitlines()


@pytest.mark.parametrize(("bad", "reboot"), [
    pytest.param("printf '[system]\\nhostname = \"\\377\\376\"\\n'", True, id="not-utf8-reboot"),
    # the boot's apply run in place (what init runs: /etc/init.d/S40keel), on a
    # router whose firewall and shaping were lost: a reboot less in the lab
    pytest.param("python3 -c 'print(\"x = \" + \"[\" * 5000 + \"]\" * 5000)'", False,
                 id="nested-5000-deep-boot-script"),
])
def test_a_broken_user_config_boots_on_the_last_good_revision(lab, bad, reboot):
    """Whatever the user's keel.toml holds, the router comes back configured:
    the last good revision in force, the console and `keel doctor` saying why."""
    good = lab.edge.check("cat /data/keel/keel.toml")
    before = state(lab.edge)
    revision = lab.edge.check("keel show revisions | tail -1")
    lab.edge.check(f"{bad} > /data/keel/keel.toml")
    try:
        if reboot:
            lab.edge.reboot()
        else:
            lab.edge.check("rm /run/keel/boot-fallback.json && nft flush ruleset && "
                           "tc qdisc del dev eth0 root && "
                           "/etc/init.d/S40keel start > /dev/null", 120)
        # the boot's apply ended (its record is written last): S40keel goes on
        # without it after 100 s, as on a loaded host, and a login comes first
        lab.edge.until("test -e /run/keel/boot-fallback.json && echo applied", 300, every=1)
        log = lab.edge.check("cat /run/keel/boot-apply.log")
        assert "/data/keel/keel.toml failed" in log and "Traceback" not in log, log
        assert "applied revision" in log, log
        lab.edge.check(f"ping -n -c 1 -w 30 {topo.HUB_TUNNEL}", 60)
        assert without_handles(state(lab.edge)) == without_handles(before)
        report = json.loads(lab.edge.run("keel doctor --json --seconds 1", 60).output)
        (boot,) = [c for c in report["checks"] if (c["area"], c["name"]) == ("config", "boot")]
        assert boot["status"] == "warn" and "keel.toml" in boot["detail"], boot
        print(f"revision before: {revision}\nboot log:\n{log}\ndoctor: {boot['detail']}")
    finally:
        lab.edge.write_file("/data/keel/keel.toml", good + "\n")
