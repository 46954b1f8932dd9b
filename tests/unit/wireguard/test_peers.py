"""The one peer chooser: the dashboard probes the peer the self-tests load."""

from __future__ import annotations

import pytest

from keel.parse.wgdump import parse_wg_dump
from keel.wireguard.peers import NoPeer, TunnelPeer, choose_peer, endpoint_host
from tests.fixtures.sources import lab

KEY = "DGDJOoNeCQAxEAKW/6R/XQpwi4FNhdoJTo1LLorzzRg="


def dump(*peers: tuple[str, str]) -> str:
    head = "wg0\t(hidden)\tHlOu1tgN6jIPCqo/B9y+b7TT1bltyagEMGZGjSZNPVI=\t51820\toff\n"
    return head + "".join(f"wg0\t{KEY}\t(none)\t{endpoint}\t{allowed}\t0\t0\t0\t25\n"
                          for endpoint, allowed in peers)


def test_the_lab_peer():
    peer = choose_peer(parse_wg_dump(lab("wg-show-all-dump.txt")))
    assert peer == TunnelPeer("wg0", "10.99.0.2", "192.0.2.2")


def test_the_first_single_address_peer_and_a_given_address():
    interfaces = parse_wg_dump(dump(("198.51.100.7:51820", "0.0.0.0/0"),
                                    ("[2001:db8::1]:51820", "10.77.0.3/32,192.168.9.0/24")))
    assert choose_peer(interfaces) == TunnelPeer("wg0", "10.77.0.3", "2001:db8::1")
    assert choose_peer(interfaces, "8.8.8.8").public_ip == "198.51.100.7"  # routed by 0/0
    assert endpoint_host(None) is None


def test_no_peer_says_why():
    with pytest.raises(NoPeer, match="give --peer"):
        choose_peer(parse_wg_dump(dump(("198.51.100.7:51820", "0.0.0.0/0"))))
    with pytest.raises(NoPeer, match=r"routes 10\.1\.1\.1"):
        choose_peer({}, "10.1.1.1")
