"""The MTU self-test: the path MTU to the peer outside the tunnel and through
it, by binary search with don't-fragment probes, and the WireGuard MTU to use
(the WAN path MTU less WireGuard's 80 bytes of IPv6 + UDP + WireGuard header)."""

from __future__ import annotations

import subprocess
from collections.abc import Callable
from pathlib import Path

from keel.selftest.events import Progress, Report, SelfTestError, ignore
from keel.selftest.peer import Peer
from keel.selftest.results import MtuResult

ICMP_IPV4_HEADERS = 28
WG_OVERHEAD = 80
LOWEST = 576


def df_probe(addr: str, mtu: int) -> bool:
    """Does a packet of `mtu` bytes with DF set reach `addr` (two tries)?"""
    for _ in range(2):
        proc = subprocess.run(["ping", "-M", "do", "-n", "-c", "1", "-W", "1",
                               "-s", str(mtu - ICMP_IPV4_HEADERS), addr],
                              capture_output=True, text=True, check=False)
        if proc.returncode == 0:
            return True
    return False


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
    return int(Path(f"/sys/class/net/{ifname}/mtu").read_text())


def run_mtu(peer: Peer, wan_ifname: str | None, report: Report = ignore,
            probe: Callable[[str, int], bool] = df_probe) -> MtuResult:
    wan_mtu = _iface_mtu(wan_ifname) if wan_ifname else 1500
    wan_path = None
    if peer.public_ip:
        report(Progress("mtu", "wan", 0.1, f"path MTU to {peer.public_ip}"))
        wan_path = path_mtu(lambda m: probe(peer.public_ip or "", m), wan_mtu)
    tun_mtu = _iface_mtu(peer.interface)
    report(Progress("mtu", "tunnel", 0.6, f"path MTU through the tunnel to {peer.tunnel_ip}"))
    tun_path = path_mtu(lambda m: probe(peer.tunnel_ip, m), tun_mtu)
    report(Progress("mtu", "done", 1.0, "done"))
    return MtuResult(wan_mtu, wan_path, tun_mtu, tun_path,
                     wan_path - WG_OVERHEAD if wan_path else None)
