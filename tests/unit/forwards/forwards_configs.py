"""Configs and models with port forwards for the tests of keel.forwards: the
shipped hub example with its edge named edge1 (routing the edge's LAN), and
the shipped edge example named edge1."""

from __future__ import annotations

from keel.config import paths
from keel.model import Forward, Lan, Peer, RouterModel, Wan, WireGuard

PUB = "DGDJOoNeCQAxEAKW/6R/XQpwi4FNhdoJTo1LLorzzRg="

HUB_TEXT = paths.example_text("hub").replace(
    'allowed_ips = ["10.77.0.2/32"]',
    'name = "edge1"\nallowed_ips = ["10.77.0.2/32", "192.168.77.0/24"]').replace(
    'route = "none"', 'route = "prefixes"\nprefixes = ["192.168.77.0/24"]')
WEB_TABLE = ('\n[[forward]]\nname = "web"\nport = 8080\nto = "192.168.77.50:80"\n'
             'via = "edge1"\n')
HUB_WITH_WEB = HUB_TEXT + WEB_TABLE
EDGE_TEXT = paths.example_text("edge").replace('hostname = "edge"', 'hostname = "edge1"')

WEB = Forward("web", "tcp", 8080, 8080, "192.168.77.50", 80, "outer", via="edge1")
GAME = Forward("game", "both", 27015, 27020, "192.168.77.60", None, "outer", via="edge1")
DNS = Forward("dns", "udp", 5353, 5353, "192.168.77.53", 53, "outer", via="edge1")
HUB = RouterModel(
    wans=(Wan("eth0"),),
    wireguard=WireGuard(address=("10.77.0.1/24",), peer=(
        Peer(PUB, ("10.77.0.2/32", "192.168.77.0/24"), name="edge1"),)),
    forwards=(WEB, GAME, DNS))
EDGE = RouterModel(
    wans=(Wan("eth0"),),
    lans=(Lan("eth1", "192.168.77.1/24"),),
    wireguard=WireGuard(address=("10.77.0.2/24",), peer=(
        Peer(PUB, ("10.77.0.1/32",), endpoint="203.0.113.2:51820"),)),
    forwards=(Forward("web", "tcp", 8080, 8080, "192.168.77.50", 80, "inner", via="edge1"),))
