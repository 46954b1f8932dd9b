"""Pairing in the lab: a hub and two edges set their tunnels up from one-time
codes (`keel pair`), then reach each other's LAN side through the hub; and
IPv6 both ways (issue 23): native on edge-a's WAN, and from the hub's routed
prefix through the tunnel to edge-b, which has none of its own.

  lan [a] -- edge-a (eth0 198.51.100.2) --up--  isp  --core-- hub (203.0.113.2)
  lan [b] -- edge-b (eth0 192.0.2.2)    --up2-/

Each edge's LAN is 192.168.77.1/24 on edge-a and 192.168.78.1/24 on edge-b;
the `lan` guest is a host on both, one network namespace per LAN (a, b).
The isp is the internet side for IPv6 too (tests/lab/dhcpv6.py, its servers
from the lab tools disk, never in the image): on `up`, router advertisements
(SLAAC, M flag) and a /56 by DHCPv6-PD from Kea; on `core`, advertisements
for the hub's WAN (dnsmasq, ra-only) and the hub's routed prefix
2001:db8:100::/56 routed to it; on `up2`, no IPv6 at all. The edges type the
code at keel's prompt, which does not echo it. Before any pairing, a wrong
code and an attempt after the window must leave the hub exactly as it was."""

from __future__ import annotations

import base64
import ipaddress
import json
import os
import re
import time

import pytest

from tests.lab import dhcpv6, figures, labs, labtools
from tests.lab import topology as topo
from tests.lab.guest import Guest

HUB_WAN, EDGE_A_WAN, EDGE_B_WAN = topo.HUB_WAN, "198.51.100.2", "192.0.2.2"
ISP_A, ISP_B = topo.ISP_UP, "192.0.2.1"
LAN_A, LAN_B = "192.168.77.1", "192.168.78.1"
PAIR_OUT = "/run/pair.out"
# IPv6: the isp on core (the hub's WAN takes SLAAC there), the hub's routed
# prefix (outside the isp's delegation pools), each edge's /64 of it in the
# order they pair
ISP_CORE6 = "2001:db8:0:2::1"
ROUTED = "2001:db8:100::/56"
HUB64_A, HUB64_B = "2001:db8:100:1::", "2001:db8:100:2::"
ISP_UP6 = str(dhcpv6.ISP_UP6.ip)


def hub_config() -> str:
    return f"""[system]
hostname = "hub"
[wan]
interface = "eth0"
mode = "static"
address = "{HUB_WAN}/24"
gateway = "{topo.ISP_CORE}"
[wireguard]
enabled = true
address = ["10.77.0.1/24"]
[firewall]
ping_on_wan = true
[ipv6]
routed_prefix = "{ROUTED}"
"""


def edge_config(name: str, wan: str, gateway: str, lan: str) -> str:
    net = lan.rsplit(".", 1)[0]
    return f"""[system]
hostname = "{name}"
[wan]
interface = "eth0"
mode = "static"
address = "{wan}/24"
gateway = "{gateway}"
[lan]
interface = "eth1"
address = "{lan}/24"
dhcp_start = "{net}.100"
dhcp_end = "{net}.199"
"""


pytestmark = pytest.mark.lab("pairing")


@pytest.fixture(scope="module")
def lab(make_module_lab):
    started = labs.PAIRING.build(make_module_lab, disks={"tools": labtools.disk()})
    lab = started.lab
    hub, isp, edge_a, edge_b, lan = (started[n] for n in ("hub", "isp", "edge-a", "edge-b",
                                                          "lan"))
    topo.unconfigure(isp)
    topo.unconfigure(lan)
    for ns in ("a", "b"):  # a host on each LAN, SLAAC on (a new namespace's default)
        nic = lan.ifname(f"lan-{ns}")
        lan.check(f"ip netns add {ns} && ip link set {nic} netns {ns} && "
                  f"ip -n {ns} link set lo up && ip -n {ns} link set {nic} up")
    up, core, up2 = isp.ifname("up"), isp.ifname("core"), isp.ifname("up2")
    isp.check(f"ip addr add {ISP_A}/24 dev {up} && ip link set {up} up && "
              f"ip addr add {topo.ISP_CORE}/24 dev {core} && ip link set {core} up && "
              f"ip addr add {ISP_B}/24 dev {up2} && ip link set {up2} up && "
              "sysctl -qw net.ipv4.ip_forward=1")
    # IPv6: the provider's side of edge-a's WAN, and of the hub's
    lab.isp6 = dhcpv6.Isp6(interface=up)
    dhcpv6.start(isp, lab.isp6)
    isp.check(f"ip addr add {ISP_CORE6}/64 dev {core} && sysctl -qw "
              "net.ipv6.conf.all.forwarding=1 && "
              f"dnsmasq --port=0 --interface={core} --bind-interfaces --enable-ra "
              f"--dhcp-range=::,constructor:{core},ra-only,64 --pid-file=/run/isp-ra.pid")
    for guest, text in ((hub, hub_config()),
                        (edge_a, edge_config("edge-a", EDGE_A_WAN, ISP_A, LAN_A)),
                        (edge_b, edge_config("edge-b", EDGE_B_WAN, ISP_B, LAN_B))):
        guest.write_file("/data/keel/keel.toml", text)
        guest.check("keel apply", 60)
    edge_a.check(f"ping -n -c 1 -w 20 {HUB_WAN}", 40)
    edge_b.check(f"ping -n -c 1 -w 20 {HUB_WAN}", 40)
    # the hub's routed prefix, routed by the provider to the hub's WAN
    # (its link-local address, as providers do), once the hub has one
    hub_ll = hub.until("ip -6 -o addr show dev eth0 scope link | grep -o 'fe80::[0-9a-f:]*'",
                       60)
    isp.check(f"ip -6 route replace {ROUTED} via {hub_ll.strip()} dev {core}")
    lab.hub, lab.edge_a, lab.edge_b, lab.isp, lab.lan = hub, edge_a, edge_b, isp, lan
    return lab


def hub_state(hub: Guest) -> str:
    """What a failed pairing must leave byte for byte: the config, the
    revisions, the ruleset, the peers (no private key is printed)."""
    return hub.check("sha256sum /data/keel/keel.toml; keel show revisions; nft list ruleset; "
                     "wg show wg0 peers; wg show wg0 allowed-ips; ss -ltn")


def start_hub(hub: Guest, wait_s: int = 600) -> tuple[str, float]:
    """`keel pair` on the hub in the background; the code it shows."""
    hub.check(f"rm -f {PAIR_OUT}; (keel pair --wait {wait_s} > {PAIR_OUT} 2>&1; "
              f"echo \"exit $?\" >> {PAIR_OUT}) & true")
    started = time.monotonic()
    shown = hub.until(f"grep '^on the edge:' {PAIR_OUT}", 60)
    code = re.search(r"(\d{4}-\d{4})\s*$", shown)
    assert code, shown
    return code.group(1), started


def hub_result(hub: Guest, timeout: float = 180) -> str:
    hub.until(f"grep '^exit ' {PAIR_OUT}", timeout, every=1)
    return hub.check(f"cat {PAIR_OUT}")


def pair_edge(edge: Guest, code: str, timeout: float = 240):
    """`keel pair HUB` on the edge, the code typed at its prompt (no echo)."""
    return edge._console().run_answering(f"keel pair {HUB_WAN}", "code: ", code, timeout)


def test_a_wrong_code_changes_nothing_and_closes_the_port(lab):
    before = hub_state(lab.hub)
    code, _ = start_hub(lab.hub)
    assert "elements = { 51820 timeout" in lab.hub.check("nft list set inet keel pairing")
    wrong = code[:-1] + str((int(code[-1]) + 1) % 10)
    result = pair_edge(lab.edge_a, wrong, 120)
    assert result.rc == 1 and "wrong code" in result.output, result.output
    out = hub_result(lab.hub)
    assert "wrong code" in out and "TCP 51820 closed" in out and "exit 1" in out
    assert hub_state(lab.hub) == before
    # the code is used up: the right one now finds nobody listening
    late = pair_edge(lab.edge_a, code, 120)
    assert late.rc == 1 and "cannot reach the hub" in late.output, late.output
    assert hub_state(lab.hub) == before
    assert code not in late.output + result.output  # typed without echo


def test_an_attempt_after_the_window_changes_nothing(lab):
    before = hub_state(lab.hub)
    code, _ = start_hub(lab.hub, wait_s=5)
    out = hub_result(lab.hub, 60)
    assert "no edge came within 5 s" in out and "exit 1" in out
    result = pair_edge(lab.edge_a, code, 120)
    assert result.rc == 1 and "cannot reach the hub" in result.output, result.output
    assert hub_state(lab.hub) == before


def pair(lab, edge: Guest, name: str) -> tuple[str, str, float]:
    code, started = start_hub(lab.hub)
    result = pair_edge(edge, code)
    out = hub_result(lab.hub)
    seconds = time.monotonic() - started
    assert result.rc == 0, result.output
    assert f"handshake with {name} after" in out and "confirmed" in out and "exit 0" in out, out
    assert "handshake with hub after" in result.output and "confirmed" in result.output
    return out, result.output, seconds


def test_two_edges_pair_one_after_the_other_and_reach_each_others_lan(lab):
    began = time.monotonic()
    _, edge_a_out, seconds_a = pair(lab, lab.edge_a, "edge-a")
    assert "tunnel 10.77.0.2/24" in edge_a_out
    hub_b, edge_b_out, seconds_b = pair(lab, lab.edge_b, "edge-b")
    assert "tunnel 10.77.0.3/24" in edge_b_out and "192.168.77.0/24" in edge_b_out
    # edge-a paired before edge-b existed: the hub's fleet channel gives it
    # edge-b's LAN (keel fleet sync, started by the pairing), no second pairing
    learnt = time.monotonic()
    lab.edge_a.until(f"ip -color=never route get {LAN_B} | grep -q 'dev wg0'", 240, every=2)
    seconds_learnt = time.monotonic() - learnt
    assert "fleet: routes from the hub: +192.168.78.0/24" in lab.edge_a.check(
        "keel show revisions")
    print(f"\nkeel pair to the first handshake: {seconds_a:.1f} s, {seconds_b:.1f} s; "
          f"edge-a routed edge-b's LAN {seconds_learnt:.1f} s after edge-b's pairing ended")
    # the transcript of both consoles, the (used up) code masked: no code in test output
    print(re.sub(r"\d{4}-\d{4}", "NNNN-NNNN",
                 "--- hub ---\n" + hub_b + "\n--- edge-b ---\n" + edge_b_out))
    figures.record("pairing", {"guests": "hub, isp, 2 edges; 1 vCPU each"},
                   seconds_to_handshake=[round(s, 1) for s in (seconds_a, seconds_b)],
                   seconds_to_learn_the_other_lan=round(seconds_learnt, 1))
    # each reaches the other's LAN side through the hub
    out = lab.edge_b.check(f"ping -n -c 3 -i 0.3 -w 30 {LAN_A}", 60)
    assert "3 received" in out
    out = lab.edge_a.check(f"ping -n -c 3 -i 0.3 -w 30 {LAN_B}", 60)
    assert "3 received" in out
    assert "dev wg0" in lab.edge_a.check(f"ip -color=never route get {LAN_B}")
    assert "tcp dport 51820" not in lab.hub.check("nft list ruleset")
    # each edge's handshake happened during this test (its age, from JSON,
    # within the time since the test began: no human-readable age read)
    peers = {p["name"]: p for p in lab.hub.json("keel peers --json")}
    for name, tunnel, lan in (("edge-a", "10.77.0.2", "192.168.77.0/24"),
                              ("edge-b", "10.77.0.3", "192.168.78.0/24")):
        peer = peers[name]
        assert peer["tunnel"].split("/")[0] == tunnel and lan in peer["routes"], peers
        age = peer["handshake_age_s"]
        assert age is not None and age <= time.monotonic() - began + 2, peers
    revisions = lab.hub.check("keel show revisions")
    assert "pair: edge-a" in revisions and "pair: edge-b" in revisions


def fleet(hub: Guest) -> dict[str, dict]:
    """`keel fleet --json` on the hub, by edge name (its exit code: 1 when
    an edge did not answer, which the callers check in the rows)."""
    out = hub.run("keel fleet --json", 120).output
    return {row["name"]: row for row in json.loads(out)}


# the fleet channel asked by hand from a guest: one request line, the reply
ASK = ("python3 -c \"import socket,sys; s=socket.create_connection(('{to}', 9587), 10); "
       "s.sendall(sys.argv[1].encode() + b'\\n'); print(s.recv(65536).decode())\" '{req}'")


def test_the_hub_sees_every_edge_through_the_fleet_channel(lab):
    """Both edges answer the hub with live figures from their history; the
    routes each has are the ones the hub gives."""
    rows = fleet(lab.hub)
    assert set(rows) == {"edge-a", "edge-b"}, rows
    for name, tunnel in (("edge-a", "10.77.0.2"), ("edge-b", "10.77.0.3")):
        row = rows[name]
        assert row["answered"] and row["tunnel"] == tunnel, row
        status = row["status"]
        assert status["name"] == name and status["version"], status
        assert status["uptime_s"] > 0 and row["routes_in_sync"], row
        assert row["handshake_age_s"] is not None and row["last_seen_age_s"] == 0.0, row
    assert rows["edge-a"]["status"]["routes"] == ["192.168.78.0/24"]
    assert rows["edge-b"]["status"]["routes"] == ["192.168.77.0/24"]
    text = lab.hub.check("keel fleet; true", 120)
    assert "edge-a" in text and "routes in sync" in text and "NO ANSWER" not in text, text


def test_the_channel_answers_the_hub_alone_and_takes_no_public_route(lab):
    """edge-b (through the hub) and the isp (from the WAN side) get nothing
    from edge-a's channel; the hub itself, acting hostile, cannot make edge-a
    route a public prefix or a default route: refused, nothing changed."""
    before = lab.edge_a.check("sha256sum /data/keel/keel.toml; ip route")
    status = json.dumps({"op": "status"})
    # the isp routes edge-a's tunnel address straight at edge-a's WAN
    lab.isp.check(f"ip route replace 10.77.0.2/32 via {EDGE_A_WAN}")
    try:
        for guest in (lab.edge_b, lab.isp):
            out = guest.run(ASK.format(to="10.77.0.2", req=status), 60)
            assert out.rc != 0 and '"ok"' not in out.output, out
    finally:
        lab.isp.check("ip route del 10.77.0.2/32")
    for routes in (["8.8.8.0/24"], ["0.0.0.0/0"], ["192.168.77.0/25"]):
        req = json.dumps({"op": "routes", "routes": routes})
        out = lab.hub.check(ASK.format(to="10.77.0.2", req=req), 120)
        assert '"ok":false' in out, out
    bad = lab.hub.check(ASK.format(to="10.77.0.2", req='{"op":"reboot"}'), 60)
    assert '"ok":false' in bad and "op is not" in bad, bad
    assert lab.edge_a.check("sha256sum /data/keel/keel.toml; ip route") == before
    assert "not taken" in lab.edge_a.check("cat /run/keel/fleet-agent.log; true")


def global6(guest: Guest, dev: str, within: str, ns: str | None = None) -> list[str]:
    """The global IPv6 addresses of `dev` inside the prefix `within` (in the
    namespace `ns` of that guest), not deprecated or tentative."""
    ip = f"ip -n {ns}" if ns else "ip"
    text = guest.check(f"{ip} -j -6 addr show dev {dev} scope global")
    net = ipaddress.ip_network(within)
    return [a["local"] for i in json.loads(text or "[]") for a in i.get("addr_info", [])
            if "local" in a and ipaddress.ip_address(a["local"]) in net
            and not a.get("deprecated") and not a.get("tentative")]


def wait_global6(guest: Guest, dev: str, within: str, ns: str | None = None,
                 timeout: float = 90) -> str:
    deadline = time.monotonic() + guest.accel.scale(timeout)
    while not (found := global6(guest, dev, within, ns)):
        assert time.monotonic() < deadline, (guest.name, dev, within, guest.check(
            f"ip {'-n ' + ns if ns else ''} -6 addr show dev {dev}"))
        time.sleep(2)
    return found[0]


def delegated(edge: Guest) -> ipaddress.IPv6Network:
    """The /64 of the delegated prefix on edge-a's LAN (a pool's)."""
    for pool in (dhcpv6.POOL_FIRST, dhcpv6.POOL_SECOND):
        if found := global6(edge, "eth1", str(pool)):
            return ipaddress.ip_interface(f"{found[0]}/64").network
    raise AssertionError(edge.check("ip -6 addr show dev eth1"))


def ping6(lab, ns: str, source: str, target: str) -> str:
    return lab.lan.check(f"ip netns exec {ns} ping -6 -n -c 3 -i 0.3 -w 30 -I {source} "
                         f"{target}", 60)


def test_a_native_ipv6_wan_gives_the_lan_a_delegated_prefix_that_follows_a_renumbering(lab):
    """edge-a's WAN takes SLAAC from the isp and a /56 by DHCPv6-PD (dhcpcd);
    its LAN gets a /64 of it, announced (dnsmasq RA); the LAN host takes an
    address there and reaches the internet side natively. The provider
    renumbers: the LAN's prefix and the host's address follow."""
    edge = lab.edge_a
    wan = wait_global6(edge, "eth0", str(dhcpv6.ISP_UP6.network))
    wait_global6(edge, "eth1", str(dhcpv6.POOL_FIRST))
    first = delegated(edge)
    # (the prefix's lifetimes outlast dnsmasq's advertisement interval, as a
    # provider's do: dhcpv6.Lifetimes)
    host = wait_global6(lab.lan, lab.lan.ifname("lan-a"), str(first), ns="a")
    assert "3 received" in ping6(lab, "a", host, ISP_UP6)
    # the isp routes the delegation to the edge's WAN (its link-local)
    routes = dhcpv6.delegated_routes(lab.isp)
    assert any(first.subnet_of(p) for p in routes), routes
    print(f"\nedge-a: WAN {wan}, LAN {first}, host {host}")

    lab.isp6 = dhcpv6.renumber(lab.isp, lab.isp6, dhcpv6.POOL_SECOND)
    wait_global6(edge, "eth1", str(dhcpv6.POOL_SECOND), timeout=120)
    second = delegated(edge)
    moved = wait_global6(lab.lan, lab.lan.ifname("lan-a"), str(second), ns="a", timeout=120)
    assert "3 received" in ping6(lab, "a", moved, ISP_UP6)
    assert not global6(edge, "eth1", str(dhcpv6.POOL_FIRST)), "the old prefix stayed"
    print(f"renumbered: LAN {second}, host {moved}")


def test_an_edge_without_ipv6_gets_a_64_of_the_hubs_prefix_by_pairing(lab):
    """edge-b's WAN has no IPv6; pairing gave it a /64 of the hub's routed
    prefix: its LAN host takes an address there and reaches the internet
    side over IPv6, through the tunnel and the hub (no other way exists)."""
    edge = lab.edge_b
    assert f'address6 = "{HUB64_B}1/64"' in edge.check("cat /data/keel/keel.toml")
    assert not global6(edge, "eth0", "::/0"), "edge-b's WAN has IPv6 after all"
    host = wait_global6(lab.lan, lab.lan.ifname("lan-b"), f"{HUB64_B}/64", ns="b")
    assert "3 received" in ping6(lab, "b", host, ISP_CORE6)
    assert "3 received" in ping6(lab, "b", host, ISP_UP6)
    # edge-a, paired first, has the first /64 beside its native one
    assert global6(lab.edge_a, "eth1", f"{HUB64_A}/64")


def test_the_internet_side_cannot_open_a_connection_to_a_lan_host(lab):
    """No NAT hides an IPv6 LAN host: the firewall does. A TCP listener on
    edge-b's LAN host answers its own router, not the isp."""
    host = wait_global6(lab.lan, lab.lan.ifname("lan-b"), f"{HUB64_B}/64", ns="b")
    lab.lan.check("(ip netns exec b python3 -m http.server --bind :: 8080 "
                  ">/dev/null 2>&1 &)")
    probe = ("python3 -c \"import socket,sys; s=socket.socket(socket.AF_INET6); "
             f"s.settimeout(5); sys.exit(s.connect_ex(('{host}', 8080)))\"")
    lab.edge_b.until(probe, 30)  # the listener is up: its own router reaches it
    assert lab.isp.run(probe, 30).rc != 0
    assert lab.hub.run(probe, 30).rc != 0  # nor the hub, from its WAN side
    # the same host reaches out (the connection is the LAN's to open)
    out = lab.lan.check(f"ip netns exec b python3 -c \"import socket; "
                        f"s=socket.create_connection(('{ISP_CORE6}', 22), 5); print('open')\" "
                        "2>&1; true", 30)
    assert "open" in out or "refused" in out.lower(), out


def test_unpairing_removes_the_peer_and_its_route(lab):
    """edge-b unpaired while edge-a's channel is down: edge-a still forgets
    edge-b's LAN once it answers again (the hub's watcher, every 30 s)."""
    lab.edge_a.check("kill $(cat /run/keel/fleet-agent.pid)")
    lab.hub.check("keel peers remove edge-b", 60)
    names = [p["name"] for p in lab.hub.json("keel peers --json")]
    assert names == ["edge-a"], names
    assert "192.168.78.0/24" not in lab.hub.check("ip route")
    lab.hub.until("grep -q 'edge-a does not answer' /run/keel/fleet-watch.log", 120, every=2)
    assert "dev wg0" in lab.edge_a.check(f"ip -color=never route get {LAN_B}")  # not yet
    lab.edge_a.check("keel apply", 120)  # its agent back, as at its next boot
    lab.edge_a.until(f"! ip -color=never route get {LAN_B} | grep -q 'dev wg0'", 240, every=2)
    assert "fleet: routes from the hub: -192.168.78.0/24" in lab.edge_a.check(
        "keel show revisions")
    assert "edge-a: given its routes" in lab.hub.check("cat /run/keel/fleet-watch.log")
    out = lab.hub.run("keel peers remove edge-b", 60)
    assert out.rc == 1 and "no peer named 'edge-b' (peers: edge-a)" in out.output


def test_nothing_secret_in_logs_or_consoles(lab):
    """The private keys are nowhere but in their files; the codes were
    typed without echo on the edges and never logged on the hub."""
    keys = []
    for guest in (lab.hub, lab.edge_a, lab.edge_b):
        hits = guest.check("grep -rlF -f /data/keel/wireguard.key /var/log /run /tmp /etc "
                           "/data --exclude=wireguard.key 2>/dev/null; "
                           "dmesg | grep -cF -f /data/keel/wireguard.key; true")
        assert hits.strip() == "0", f"{guest.name}: {hits}"
        # the key, reversed, so that the console's transcript never holds it
        keys.append(base64.b64decode(guest.check(
            "base64 -w0 /data/keel/wireguard.key | rev").strip()[::-1]).decode().strip())
    for guest in (lab.hub, lab.edge_a, lab.edge_b):
        guest._log.flush()
        transcript = guest.log_path.read_text(errors="replace")
        assert not any(key in transcript for key in keys), f"{guest.name}'s console"
    for edge in (lab.edge_a, lab.edge_b):
        transcript = edge.log_path.read_text(errors="replace")
        codes = re.findall(r"\b\d{4}-\d{4}\b", lab.hub.log_path.read_text(errors="replace"))
        assert codes and not any(code in transcript for code in codes), edge.name
    # the codes never reached a file on any of the three routers either (but
    # the file this test reads the hub's screen from)
    for guest in (lab.hub, lab.edge_a, lab.edge_b):
        for code in codes:
            # typed reversed: the console's transcript never holds a code
            hits = guest.check(f"grep -rlF --exclude={PAIR_OUT.rsplit('/', 1)[-1]} "
                               f"\"$(echo {code[::-1]} | rev)\" /var/log /run /tmp "
                               "/data 2>/dev/null; true")
            assert not hits.strip(), f"{guest.name}: a code in {hits}"


def test_roots_password_and_its_hash_are_never_shown(lab):
    """`keel access password` on an edge: neither the password nor its hash
    reaches the console, a log, /run or /tmp; the hash is only in the shadow
    file on /data (bound over /etc/shadow)."""
    edge = lab.edge_b
    password = "lab-" + base64.b32encode(os.urandom(10)).decode().lower()
    con = edge._console()
    tag = con._send("keel access password", 30)
    con.expect("new root password: ", 30)
    con.child.sendline(password)
    con.expect("again: ", 30)
    con.child.sendline(password)
    assert con._result("keel access password", tag, 120).rc == 0
    # the hash, reversed, so that the console's transcript never holds it
    hashed = edge.check("grep ^root: /data/keel/access/shadow | cut -d: -f2 | rev")[::-1]
    assert hashed.startswith(("$y$", "$6$")), "not a crypt hash"
    # (found by the guest's shell: typed, the hash would be echoed on the console)
    hits = edge.check("h=$(grep ^root: /data/keel/access/shadow | cut -d: -f2); "
                      'grep -rlF -e "$h" /var/log /run /tmp /data/keel/revisions '
                      "2>/dev/null; true")
    assert not hits.strip(), hits
    edge._log.flush()
    transcript = edge.log_path.read_text(errors="replace")
    assert password not in transcript and hashed not in transcript
