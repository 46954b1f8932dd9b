"""Port forwards through the tunnel, in the lab: `lan` -> `edge` -> `isp` ->
`hub`. The isp guest is the internet-side client (it is not behind the
tunnel); the service runs on the edge's LAN client. The same [[forward]]
tables on the hub (via names the edge: DNAT on its public address) and on
the edge (via is its own name: accepted from the tunnel, replies sent back
through it)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.lab import configs
from tests.lab import topology as topo

# its lab is the bloated one, whose isp is the internet-side client; its
# verdicts (a connection made or refused, a file's bytes) do not measure the
# host: no `measures` mark, it runs before those that do
pytestmark = pytest.mark.lab("bloated")

TARGET = "192.168.77.50"
LAN_NET = "192.168.77.0/24"
WEB = f"""
[[forward]]
name = "web"
protocol = "tcp"
port = 8080
to = "{TARGET}:80"
via = "edge"
"""
ECHO = f"""
[[forward]]
name = "echo"
protocol = "udp"
port = 5300
to = "{TARGET}:5353"
via = "edge"
"""
FILE_MB = 4

# the LAN client's services: a web server that logs each client's address,
# and a UDP echo that answers with the address it saw
ECHO_SERVER = """
import socket
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.bind(("0.0.0.0", 5353))
while True:
    data, addr = s.recvfrom(512)
    s.sendto(data + b" from " + addr[0].encode(), addr)
"""


def fetch(url: str, timeout: int = 20) -> str:
    """A shell command printing the body's size and sha256, or `refused:`."""
    return ("python3 -c \"import hashlib, urllib.request as u, sys\n"
            "try:\n"
            f"    b = u.urlopen('{url}', timeout={timeout}).read()\n"
            "    print(len(b), hashlib.sha256(b).hexdigest())\n"
            "except Exception as e:\n"
            "    print('failed:', type(e).__name__)\"")


def udp_ask(host: str, port: int) -> str:
    return ("python3 -c \"import socket\n"
            "s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.settimeout(5)\n"
            f"s.sendto(b'ping', ('{host}', {port}))\n"
            "try:\n"
            "    print(s.recv(512).decode())\n"
            "except OSError as e:\n"
            "    print('failed:', type(e).__name__)\"")


@pytest.fixture(scope="module")
def lab(shared_lab) -> Iterator[topo.RouterLab]:
    rl = shared_lab
    assert rl.isp and rl.lan
    topo.clear_bottleneck(rl.isp)  # the file's bytes cross the isp twice
    configs.configure_with_keel(rl, hub_options={"edge_lan": LAN_NET, "extra": WEB + ECHO},
                                extra=WEB + ECHO)
    lan = rl.lan
    # a client, not a router: no firewall of its own in the way
    lan.check("nft flush ruleset")
    lan.until(f"ping -n -c 1 -W 2 {topo.LAN_EDGE}", 60)  # its DHCP lease
    nic = lan.ifname("lan")
    lan.check(f"ip addr replace {TARGET}/24 dev {nic}")
    lan.check(f"mkdir -p /run/www && echo hello > /run/www/hello && "
              f"head -c {FILE_MB * 1024 * 1024} /dev/urandom > /run/www/big")
    lan.write_file("/run/echo.py", ECHO_SERVER)
    lan.check("(cd /run/www && python3 -m http.server 80 > /run/http.log 2>&1 &); "
              "(python3 /run/echo.py > /dev/null 2>&1 &)")
    lan.until("ss -ltn | grep -q ':80 '", 30)
    yield rl
    # as the next modules on this lab expect it
    lan.check(f"pkill -f http.server; pkill -f echo.py; ip addr del {TARGET}/24 dev {nic}; true")
    topo.set_bottleneck(rl.isp, topo.Bottleneck())


def test_a_tcp_forward_reaches_the_lan_service_with_the_clients_address(lab) -> None:
    got = lab.isp.check(fetch(f"http://{topo.HUB_WAN}:8080/hello"), 60)
    assert got.startswith("6 "), got  # "hello\n"
    log = lab.lan.check("cat /run/http.log")
    # the service saw the internet-side client's own address, not the hub's
    assert f"{topo.ISP_CORE} - - " in log, log
    assert topo.HUB_TUNNEL not in log, log


def test_a_udp_forward_answers_with_the_clients_address(lab) -> None:
    got = lab.isp.check(udp_ask(topo.HUB_WAN, 5300), 30)
    assert got.strip() == f"ping from {topo.ISP_CORE}", got


def test_a_file_through_the_forward_arrives_whole(lab) -> None:
    """Several MB through the tunnel's smaller MTU: the MSS is clamped, no
    stall, every byte there."""
    want = lab.lan.check("sha256sum /run/www/big").split()[0]
    got = lab.isp.check(fetch(f"http://{topo.HUB_WAN}:8080/big", timeout=120), 180)
    assert got.split() == [str(FILE_MB * 1024 * 1024), want], got


def test_ports_that_are_not_forwarded_stay_closed(lab) -> None:
    # another public port on the hub
    assert "failed" in lab.isp.check(fetch(f"http://{topo.HUB_WAN}:8081/hello", 4), 30)
    # and from the tunnel into the LAN, anything but a forward's target: the
    # hub reaches the target's forwarded port, not its others
    assert lab.hub.check(fetch(f"http://{TARGET}:80/hello", 10), 30).startswith("6 ")
    lab.lan.check("(cd /run/www && python3 -m http.server 81 > /dev/null 2>&1 &)")
    lab.lan.until("ss -ltn | grep -q ':81 '", 30)
    assert "failed" in lab.hub.check(fetch(f"http://{TARGET}:81/hello", 4), 30)


def test_the_lan_reaches_the_forward_by_the_hubs_public_address(lab) -> None:
    """Hairpin: a LAN host using the public address and port gets the service."""
    got = lab.lan.check(fetch(f"http://{topo.HUB_WAN}:8080/hello"), 60)
    assert got.startswith("6 "), got


def test_the_hub_counts_the_forwards_connections(lab) -> None:
    import json

    out = json.loads(lab.hub.check("nft -j list counters table inet keel"))
    hits = {c["counter"]["name"]: c["counter"]["packets"] for c in out["nftables"]
            if "counter" in c}
    assert hits["fwd-web"] >= 2 and hits["fwd-echo"] >= 1, hits


def test_keel_forwards_lists_them_and_a_removed_forward_closes_its_port(lab) -> None:
    listed = {f["name"]: f for f in lab.hub.json("keel forwards --json")}
    # the hub reaches the target through the tunnel: it answers
    assert listed["web"]["hits"] >= 2 and listed["web"]["status"] == "answers", listed
    assert listed["echo"]["status"] == "not checked", listed
    lab.hub.check("keel forwards remove web", 120)
    assert "failed" in lab.isp.check(fetch(f"http://{topo.HUB_WAN}:8080/hello", 4), 30)
    assert lab.isp.check(udp_ask(topo.HUB_WAN, 5300), 30).startswith("ping from")
    assert "web" not in lab.hub.check("cat /data/keel/keel.toml")
