"""`wg show all dump`, keeping nothing of the private-key column."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class WgPeer:
    interface: str
    public_key: str
    endpoint: str | None
    allowed_ips: tuple[str, ...]
    latest_handshake: int  # epoch seconds, 0 = never
    rx_bytes: int
    tx_bytes: int
    keepalive: int | None  # seconds, None = off

    def handshake_age(self, now: float) -> float | None:
        return None if self.latest_handshake == 0 else max(0.0, now - self.latest_handshake)


@dataclass(frozen=True)
class WgInterface:
    name: str
    public_key: str
    listen_port: int
    fwmark: int | None
    peers: tuple[WgPeer, ...]


def parse_wg_dump(text: str) -> dict[str, WgInterface]:
    """Interfaces by name. The private and preshared keys are dropped on reading."""
    heads: dict[str, tuple[str, int, int | None]] = {}
    peers: dict[str, list[WgPeer]] = {}
    for line in text.splitlines():
        cols = line.split("\t")
        if len(cols) == 5:  # name private public port fwmark
            name, _private, public, port, fwmark = cols
            heads[name] = (public, int(port), None if fwmark == "off" else int(fwmark, 0))
            peers.setdefault(name, [])
        elif len(cols) == 9:  # name public preshared endpoint ips handshake rx tx keepalive
            name, public, _psk, endpoint, ips, handshake, rx, tx, keepalive = cols
            peers.setdefault(name, []).append(WgPeer(
                interface=name,
                public_key=public,
                endpoint=None if endpoint == "(none)" else endpoint,
                allowed_ips=() if ips == "(none)" else tuple(ips.split(",")),
                latest_handshake=int(handshake),
                rx_bytes=int(rx),
                tx_bytes=int(tx),
                keepalive=None if keepalive == "off" else int(keepalive),
            ))
        elif line.strip():
            raise ValueError(f"wg dump: unexpected line with {len(cols)} columns")
    return {
        name: WgInterface(name, public, port, fwmark, tuple(peers.get(name, [])))
        for name, (public, port, fwmark) in heads.items()
    }
