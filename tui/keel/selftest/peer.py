"""The iperf3 load a self-test puts on the peer (keel.wireguard.peers chooses
the peer)."""

from __future__ import annotations

from keel.wireguard.peers import TunnelPeer

# The first second of a load is the load building up (TCP's slow start, the
# queues filling): iperf3 leaves it out of its totals (--omit), and the
# bufferbloat test leaves its latency samples out, so both figures describe
# the steady load.
RAMP_S = 1


def iperf3_argv(peer: TunnelPeer, streams: int, seconds: int, output: str,
                *args: str) -> list[str]:
    """iperf3 against the peer's server on its tunnel address: `seconds` of
    steady load after a RAMP_S ramp-up; `output` is --json or --json-stream."""
    return ["iperf3", "-c", peer.tunnel_ip, "-P", str(streams), "-t", str(seconds),
            "-O", str(RAMP_S), output, *args]
