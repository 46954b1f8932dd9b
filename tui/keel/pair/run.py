"""`keel pair` on the hub and on the edge: the session on a real socket,
the port opened and closed, then each side's new config applied with
confirm and kept once the first WireGuard handshake with the new peer has
happened (else it rolls back by itself)."""

from __future__ import annotations

import contextlib
import ipaddress
import socket
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from keel.apply import confirmed
from keel.apply.probe import RUN_DIR
from keel.config.schema import Config
from keel.model import RouterModel
from keel.model.reading import config_in_force, model_of, read_loaded
from keel.pair import settle
from keel.pair.code import new_code, normalize
from keel.pair.errors import PairError
from keel.pair.messages import EdgeOffer
from keel.pair.port import PairingPort
from keel.pair.session import Paired, edge_session, hub_session
from keel.pair.wire import Frames
from keel.system.commands import Runner
from keel.system.nics import read_nics
from keel.system.source import SourceError
from keel.system.wireguard import read_wireguard
from keel.thresholds import HANDSHAKE_STALE_S
from keel.wireguard import keys

WAIT_S = 600  # how long a code waits for an edge
HANDSHAKE_S = 90  # within the confirm window of 120 s
CONNECT_S = 15
DEFAULT_PORT = 51820

Say = Callable[[str], None]


@dataclass
class Sides:
    """What a pairing run needs from the system (tests replace parts)."""
    say: Say = field(default=lambda line: print(line, flush=True))  # shown as it happens
    public_key: Callable[[], str] = keys.public_key
    apply: Callable[[Config, Path, str], tuple[bool, str]] = field(
        default=lambda config, path, note: confirmed.apply_with_confirm(config, path, note=note))
    confirm: Callable[[], str] = confirmed.confirm
    handshake: Callable[[str], int] = lambda key: _latest_handshake(key)
    clock: Callable[[], float] = time.time
    run_dir: Path = RUN_DIR
    runner: Runner = field(default_factory=Runner)  # nft, for the pairing port


def _latest_handshake(public_key: str) -> int:
    for iface in read_wireguard().values():
        for peer in iface.peers:
            if peer.public_key == public_key:
                return peer.latest_handshake
    return 0


def _in_force() -> tuple[Config, RouterModel]:
    loaded = read_loaded(config_in_force())
    return loaded.config, model_of(loaded)


def _keep_once_handshaken(sides: Sides, paired_with: str, public_key: str, applied_at: float,
                          nudge: Callable[[], None] | None = None) -> bool:
    sides.say(f"waiting for the first handshake with {paired_with} (at most {HANDSHAKE_S} s)")
    deadline = applied_at + HANDSHAKE_S
    while sides.clock() < deadline:
        # a session with this key that is alive now: made after the apply,
        # or (pairing again, the peer unchanged) one WireGuard still keeps
        if sides.handshake(public_key) > sides.clock() - HANDSHAKE_STALE_S:
            sides.say(f"handshake with {paired_with} after {sides.clock() - applied_at:.1f} s: "
                      f"{sides.confirm()}")
            return True
        if nudge:
            nudge()
        time.sleep(1.0)
    sides.say(f"no handshake with {paired_with} within {HANDSHAKE_S} s: the change rolls "
              "back by itself (keel show revisions)")
    return False


def _apply(sides: Sides, config: Config, note: str) -> float:
    started = sides.clock()
    ok, said = sides.apply(config, sides.run_dir / "paired.toml", note)
    if not ok:
        raise PairError(f"not applied: {said}")
    sides.say(said)
    return started


def _hub_addresses(config: Config) -> list[str]:
    if config.wan.mode == "static" and config.wan.address:
        return [str(ipaddress.ip_interface(config.wan.address).ip)]
    with contextlib.suppress(SourceError):
        for nic in read_nics():
            if nic.name == config.wan.interface:
                return [a.split("/")[0] for a in nic.addresses]
    return []


def _duration(seconds: float) -> str:
    return f"{seconds / 60:.0f} min" if seconds >= 120 else f"{seconds:.0f} s"


def pair_hub(sides: Sides | None = None, wait_s: float = WAIT_S) -> int:
    sides = sides or Sides()
    config, model = _in_force()
    settle.free_address(config)  # refuses now when there is no tunnel or it is full
    own_key = sides.public_key()
    port_number = config.wireguard.listen_port
    code = new_code()
    listener = socket.create_server(("", port_number), family=socket.AF_INET, backlog=1)
    port = PairingPort(model, port_number, sides.runner, sides.run_dir)
    try:
        port.open()
        where = " or ".join(_hub_addresses(config)) or "THIS_ROUTER'S_ADDRESS"
        target = where if port_number == DEFAULT_PORT else f"{where}:{port_number}"
        sides.say(f"keel pair: TCP {port_number} open on {config.wan.interface} for one edge, "
                  f"for at most {_duration(wait_s)}; one attempt")
        sides.say("")
        sides.say(f"    code   {code}")
        sides.say("")
        sides.say(f"on the edge: keel pair {target} {code}")
        listener.settimeout(wait_s)
        try:
            conn, (peer_ip, _) = listener.accept()
        except TimeoutError:
            raise PairError(f"no edge came within {_duration(wait_s)}: the code is no "
                            "longer valid") from None
        listener.close()  # one attempt per code
        sides.say(f"an edge connected from {peer_ip}")
        with conn:
            paired = hub_session(Frames(conn), normalize(code),
                                 lambda offer: settle.hub_admit(config, offer, own_key))
    finally:
        listener.close()
        if port.is_open:
            port.close()
        sides.say(f"TCP {port_number} closed")
    return _settle_hub(sides, paired)


def _settle_hub(sides: Sides, paired: Paired) -> int:
    grant, offer = paired.grant, paired.offer
    lan = f", LAN {offer.lan}" if offer.lan else ""
    sides.say(f"paired with {grant.edge_name}: tunnel {grant.tunnel_address}{lan}, "
              f"it reached this hub at {offer.hub_address}")
    applied_at = _apply(sides, paired.config, f"pair: {grant.edge_name}")
    kept = _keep_once_handshaken(sides, grant.edge_name, offer.public_key, applied_at)
    return 0 if kept else 1


def _split_hub(hub: str) -> tuple[str, int]:
    if hub.startswith("["):
        host, _, rest = hub[1:].partition("]")
        return host, int(rest[1:]) if rest.startswith(":") else DEFAULT_PORT
    if hub.count(":") == 1:
        host, port = hub.split(":")
        if not port.isdigit() or not 1 <= int(port) <= 65535:
            raise PairError(f"not a port: {port!r} (HUB or HUB:PORT)")
        return host, int(port)
    return hub, DEFAULT_PORT


def pair_edge(hub: str, code: str, sides: Sides | None = None) -> int:
    sides = sides or Sides()
    digits = normalize(code)
    host, port = _split_hub(hub)
    config, _ = _in_force()
    lan = (str(ipaddress.ip_interface(config.lan.address).network)
           if config.lan is not None else None)
    offer = EdgeOffer(name=config.system.hostname, public_key=sides.public_key(), lan=lan,
                      hub_address=host)
    sides.say(f"connecting to the hub at {settle.hub_endpoint(host, port)}")
    try:
        conn = socket.create_connection((host, port), timeout=CONNECT_S)
    except OSError as err:
        raise PairError(f"cannot reach the hub at {settle.hub_endpoint(host, port)}: "
                        f"{err.strerror or err} (is keel pair waiting there?)") from None
    with conn:
        paired = edge_session(Frames(conn), digits, offer,
                              lambda grant: settle.edge_join(config, grant, host))
    grant = paired.grant
    routes = ", ".join(grant.routes) or "none besides the tunnel"
    sides.say(f"paired with {grant.name}: tunnel {grant.tunnel_address}, the hub is "
              f"{grant.hub_tunnel}; routes through it: {routes}")
    applied_at = _apply(sides, paired.config, f"pair: {grant.name}")

    def nudge() -> None:  # traffic into the tunnel starts the handshake at once
        with contextlib.suppress(OSError), socket.socket(socket.AF_INET,
                                                         socket.SOCK_DGRAM) as s:
            s.sendto(b"", (grant.hub_tunnel, 9))

    kept = _keep_once_handshaken(sides, grant.name, grant.public_key, applied_at, nudge)
    return 0 if kept else 1
