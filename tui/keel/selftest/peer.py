"""Which peer a self-test runs against: from `wg show all dump`, the peer's
tunnel address (where its iperf3 server listens) and its public address."""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass

from keel.parse.wgdump import WgInterface
from keel.selftest.events import SelfTestError

# The first second of a load is the load building up (TCP's slow start, the
# queues filling): iperf3 leaves it out of its totals (--omit), and the
# bufferbloat test leaves its latency samples out, so both figures describe
# the steady load.
RAMP_S = 1


@dataclass(frozen=True)
class Peer:
    interface: str
    tunnel_ip: str  # inside the tunnel
    public_ip: str | None  # the endpoint's address, outside the tunnel

    def iperf3(self, streams: int, seconds: int, output: str, *args: str) -> list[str]:
        """iperf3 against the peer's server: `seconds` of steady load after a
        RAMP_S ramp-up; `output` is --json or --json-stream."""
        return ["iperf3", "-c", self.tunnel_ip, "-P", str(streams), "-t", str(seconds),
                "-O", str(RAMP_S), output, *args]


def _host_of(endpoint: str | None) -> str | None:
    if not endpoint:
        return None
    host = endpoint.rsplit(":", 1)[0]
    return host.strip("[]")


def find_peer(interfaces: dict[str, WgInterface], tunnel_ip: str | None = None) -> Peer:
    for wg in interfaces.values():
        for peer in wg.peers:
            for allowed in peer.allowed_ips:
                net = ipaddress.ip_network(allowed, strict=False)
                if tunnel_ip is not None:
                    if ipaddress.ip_address(tunnel_ip) in net:
                        return Peer(wg.name, tunnel_ip, _host_of(peer.endpoint))
                elif net.version == 4 and net.prefixlen == 32:
                    return Peer(wg.name, str(net.network_address), _host_of(peer.endpoint))
    if tunnel_ip is not None:
        raise SelfTestError(f"no WireGuard peer routes {tunnel_ip}")
    raise SelfTestError("no WireGuard peer with a /32 tunnel address: give --peer ADDRESS")
