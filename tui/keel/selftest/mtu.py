"""The MTU self-test: the path MTU to the peer outside the tunnel and through
it, by binary search with don't-fragment probes, and the WireGuard MTU to use
(the WAN path MTU less WireGuard's 80 bytes of IPv6 + UDP + WireGuard header)."""

from __future__ import annotations

from collections.abc import Callable

from keel.selftest.events import Progress, Report, SelfTestError, ignore
from keel.selftest.results import MtuResult
from keel.system.links import read_mtu
from keel.system.ping import df_probe
from keel.wireguard.peers import TunnelPeer

WG_OVERHEAD = 80
LOWEST = 576


def path_mtu(probe: Callable[[int], bool], high: int, low: int = LOWEST) -> int:
    """The largest MTU in [low, high] that `probe` passes (binary search)."""
    if not probe(low):
        raise SelfTestError(f"even {low}-byte packets do not get through")
    if probe(high):
        return high
    good, bad = low, high
    while bad - good > 1:
        mid = (good + bad) // 2
        if probe(mid):
            good = mid
        else:
            bad = mid
    return good


def _iface_mtu(ifname: str) -> int:
    mtu = read_mtu(ifname)
    if mtu is None:
        raise SelfTestError(f"cannot read {ifname}'s MTU: is it up?")
    return mtu


def run_mtu(peer: TunnelPeer, wan_ifname: str | None, report: Report = ignore,
            probe: Callable[[str, int, int | None], bool] = df_probe) -> MtuResult:
    """`probe(address, mtu, fwmark)`: the path outside the tunnel is probed
    at the peer's address there, with the tunnel's fwmark (by the WAN, as
    WireGuard's own packets go); the tunnel's at its tunnel address."""
    wan_mtu = _iface_mtu(wan_ifname) if wan_ifname else 1500
    wan_path = None
    if peer.public_ip:
        outside = peer.public_ip
        report(Progress("mtu", "wan", 0.1, f"path MTU to {outside}"))
        wan_path = path_mtu(lambda m: probe(outside, m, peer.fwmark), wan_mtu)
    tun_mtu = _iface_mtu(peer.interface)
    report(Progress("mtu", "tunnel", 0.6, f"path MTU through the tunnel to {peer.tunnel_ip}"))
    tun_path = path_mtu(lambda m: probe(peer.tunnel_ip, m, None), tun_mtu)
    report(Progress("mtu", "done", 1.0, "done"))
    return MtuResult(wan_mtu, wan_path, tun_mtu, tun_path,
                     wan_path - WG_OVERHEAD if wan_path else None)
