"""`keel pair` on the hub and on the edge: the session on a real socket,
the port opened and closed, then each side's new config applied with
confirm and kept once the first WireGuard handshake with the new peer has
happened (else it rolls back by itself)."""

from __future__ import annotations

import contextlib
import errno
import ipaddress
import signal
import socket
import threading
import time
from collections.abc import Callable, Iterator
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
from keel.ports import PAIRING_TCP as DEFAULT_PORT
from keel.shown import shown
from keel.system.commands import CommandError, Runner
from keel.system.nics import read_nics
from keel.system.source import SourceError
from keel.system.wireguard import read_wireguard
from keel.thresholds import HANDSHAKE_STALE_S
from keel.wireguard import keys

WAIT_S = 600  # how long a code waits for an edge
HANDSHAKE_S = 90  # within the confirm window of 120 s
CONNECT_S = 15

Say = Callable[[str], None]
Network = ipaddress.IPv4Network | ipaddress.IPv6Network


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
    # the edge: what a grant must not route into the tunnel (its WAN's subnets
    # and gateways as they are now)
    wan_networks: Callable[[Config], list[tuple[str, Network]]] = field(
        default=lambda config: wan_networks_now(config))
    # the hub: what an edge's LAN must not overlap besides the config (its
    # NICs' subnets and gateways as they are now: a WAN by DHCP)
    hub_networks: Callable[[Config], list[tuple[str, Network]]] = field(
        default=lambda config: _hub_networks(config))
    # the hub, once an edge is paired: the other edges given the routes to its
    # LAN (keel fleet sync, in the background)
    sync_fleet: Callable[[], None] = field(default=lambda: _sync_fleet())


def _sync_fleet() -> None:
    from keel.fleet.background import sync_soon

    sync_soon()


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
                          nudge: Callable[[], None] | None = None,
                          stopped: Callable[[], str | None] = lambda: None) -> bool:
    sides.say(f"waiting for the first handshake with {paired_with} (at most {HANDSHAKE_S} s)")
    deadline = applied_at + HANDSHAKE_S
    while sides.clock() < deadline:
        if (signal_name := stopped()):
            sides.say(f"stopped by {signal_name} before a handshake with {paired_with}: the "
                      "change is not confirmed and rolls back by itself (keel show revisions)")
            return False
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


class Stopped(PairError):
    """SIGTERM or SIGHUP (a closed terminal, a dropped SSH session)."""


class _Signals:
    """SIGTERM and SIGHUP while `keel pair` runs on the hub: while the code
    waits and the session runs they stop it at once (Stopped: the port
    closes in a `finally`, nothing is changed); while the port closes they
    wait; once the new config is applied they end the wait for the
    handshake (the change then rolls back by itself). Only in the main
    thread (where Python runs signal handlers)."""

    SIGNALS = (signal.SIGTERM, signal.SIGHUP)

    def __init__(self) -> None:
        self.mode = "raise"  # raise | defer
        self.pending: str | None = None
        self._old: dict[int, object] = {}

    def __enter__(self) -> _Signals:
        if threading.current_thread() is threading.main_thread():
            self._old = {s: signal.signal(s, self._handle) for s in self.SIGNALS}
        return self

    def __exit__(self, *exc: object) -> None:
        for s, handler in self._old.items():
            signal.signal(s, handler)  # type: ignore[arg-type]

    def _handle(self, signum: int, _frame: object) -> None:
        name = signal.Signals(signum).name
        if self.mode == "raise" and self.pending is None:
            self.pending = name
            raise Stopped(f"stopped by {name}")
        self.pending = self.pending or name

    @contextlib.contextmanager
    def deferred(self) -> Iterator[None]:
        """A signal in here is noted, not raised (the port is closing)."""
        mode, before, self.mode = self.mode, self.pending, "defer"
        try:
            yield
        finally:
            self.mode = mode
        if self.pending and not before and mode == "raise":
            raise Stopped(f"stopped by {self.pending}")


def _used_up(err: PairError) -> PairError:
    """The hub's line for a session that ended: the code is used up."""
    text = str(err)
    if isinstance(err, Stopped):
        return Stopped(f"{text}: the pairing port is closed, nothing changed; the code is "
                       "used up")
    if "used up" not in text:
        text += "; the code is used up: run keel pair again for a new one"
    return type(err)(text)


def _listen(port_number: int) -> socket.socket:
    try:
        return socket.create_server(("", port_number), family=socket.AF_INET, backlog=1)
    except OSError as err:
        if err.errno == errno.EADDRINUSE:
            raise PairError(f"TCP {port_number} is already in use on this router (another "
                            "keel pair waiting?): nothing changed") from None
        raise PairError(f"cannot listen on TCP {port_number}: {err.strerror or err}; "
                        "nothing changed") from None


def pair_hub(sides: Sides | None = None, wait_s: float = WAIT_S,
             allow_public: tuple[str, ...] = ()) -> int:
    """`allow_public`: public LAN prefixes the hub's operator lets an edge
    claim (keel pair --allow-public PREFIX); private ones need no word."""
    sides = sides or Sides()
    config, _model = _in_force()
    settle.free_address(config)  # refuses now when there is no tunnel or it is full
    live = sides.hub_networks(config)  # read before the port opens
    own_key = sides.public_key()
    port_number = config.wireguard.listen_port
    code = new_code()
    listener = _listen(port_number)  # before the port opens: in use -> nothing opened
    port = PairingPort(port_number, wait_s, sides.runner)
    with _Signals() as signals:
        try:
            try:
                port.open()
                where = " or ".join(_hub_addresses(config)) or "THIS_ROUTER'S_ADDRESS"
                target = where if port_number == DEFAULT_PORT else f"{where}:{port_number}"
                sides.say(f"keel pair: TCP {port_number} open on {config.wan.interface} for "
                          f"one edge, for at most {_duration(wait_s)}; one attempt")
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
            finally:
                with signals.deferred():  # one attempt per code: closed before it is tried
                    listener.close()
                    sides.say(port.close())
            sides.say(f"a connection from {peer_ip}")
            with conn:
                paired = hub_session(Frames(conn), normalize(code), lambda offer: settle.hub_admit(
                    config, offer, own_key, allow_public=allow_public, live=live))
        except PairError as err:
            raise _used_up(err) from None
        return _settle_hub(sides, paired, signals)


def _settle_hub(sides: Sides, paired: Paired, signals: _Signals | None = None) -> int:
    grant, offer = paired.grant, paired.offer
    lan = f", LAN {offer.lan}" if offer.lan else ""
    lan += f", IPv6 {grant.lan6}" if grant.lan6 else ""
    sides.say(f"paired with {grant.edge_name}: tunnel {grant.tunnel_address}{lan}, "
              f"it reached this hub at {offer.hub_address}")
    if signals is not None:
        signals.mode = "defer"  # no signal cuts an apply in two; it ends the wait below
    applied_at = _apply(sides, paired.config, f"pair: {grant.edge_name}")
    kept = _keep_once_handshaken(sides, grant.edge_name, offer.public_key, applied_at,
                                 stopped=lambda: signals.pending if signals else None)
    if kept:
        sides.sync_fleet()
        sides.say("the other edges are given the routes to its LAN (keel fleet sync)")
    return 0 if kept else 1


def _port(text: str) -> int:
    if not text.isdigit() or not 1 <= int(text) <= 65535:
        raise PairError(f"not a port: {shown(text, 20)!r} (HUB or HUB:PORT)")
    return int(text)


def _split_hub(hub: str) -> tuple[str, int]:
    if hub.startswith("["):
        host, _, rest = hub[1:].partition("]")
        return host, _port(rest[1:]) if rest.startswith(":") else DEFAULT_PORT
    if hub.count(":") == 1:
        host, port = hub.split(":")
        return host, _port(port)
    return hub, DEFAULT_PORT


def _live_networks(config: Config, every_nic: bool,
                   whose: str) -> list[tuple[str, Network]]:
    """This router's subnets as its interfaces have them now (the WAN's, or
    every NIC's) and its default gateways, named for a refusal."""
    from keel.apply.probe import Probe

    found: list[tuple[str, Network]] = []
    with contextlib.suppress(SourceError):
        for nic in read_nics():
            if nic.name == config.wan.interface:
                what = f"{whose} WAN subnet"
            elif every_nic:
                what = f"{whose} network on {shown(nic.name, 20)}"
            else:
                continue
            for a in nic.addresses:
                with contextlib.suppress(ValueError):
                    found.append((what, ipaddress.ip_interface(a).network))
    probe = Probe(Runner())
    for version in (4, 6):
        with contextlib.suppress(ValueError, CommandError):
            gateway = probe.default_gateway(version)
            if gateway and gateway[0]:
                found.append((f"{whose} gateway", ipaddress.ip_network(gateway[0])))
    return found


def wan_networks_now(config: Config) -> list[tuple[str, Network]]:
    """What a grant must not route into the tunnel, as this router sees it
    now: its WAN's subnets and its default gateways."""
    return _live_networks(config, every_nic=False, whose="this router's")


def _hub_networks(config: Config) -> list[tuple[str, Network]]:
    """What an edge's LAN must not overlap on the hub besides its config:
    every NIC's subnets as they are now (a WAN by DHCP) and its gateways."""
    return [(f"{what} (live)", net)
            for what, net in _live_networks(config, every_nic=True, whose="the hub's")]


def pair_edge(hub: str, code: str, sides: Sides | None = None,
              allow_public: tuple[str, ...] = ()) -> int:
    """`allow_public`: public routes this edge takes from the hub's grant
    (keel pair --allow-public PREFIX HUB CODE); private ones need no word."""
    sides = sides or Sides()
    digits = normalize(code)
    host, port = _split_hub(hub)
    config, _ = _in_force()
    lan = (str(ipaddress.ip_interface(config.lan.address).network)
           if config.lan is not None else None)
    offer = EdgeOffer(name=config.system.hostname, public_key=sides.public_key(), lan=lan,
                      hub_address=host)
    endpoint = settle.hub_endpoint(shown(host, 80), port)
    sides.say(f"connecting to the hub at {endpoint}")
    try:
        conn = socket.create_connection((host, port), timeout=CONNECT_S)
    except (OSError, UnicodeError, ValueError) as err:
        why = err.strerror if isinstance(err, OSError) and err.strerror else type(err).__name__
        raise PairError(f"cannot reach the hub at {endpoint} ({shown(why, 80)}): the hub is "
                        "not waiting: ask for a new code (keel pair on the hub), or check "
                        "the address") from None
    with conn:
        reached = conn.getpeername()[0]
        keep_clear = [*sides.wan_networks(config),
                      ("the hub's address", ipaddress.ip_network(reached.split("%")[0]))]
        paired = edge_session(Frames(conn), digits, offer,
                              lambda grant: settle.edge_join(config, grant, host, keep_clear,
                                                             allow_public))
    grant = paired.grant
    routes = ", ".join(grant.routes) or "none besides the tunnel"
    sides.say(f"paired with {grant.name}: tunnel {grant.tunnel_address}, the hub is "
              f"{grant.hub_tunnel}; routes through it: {routes}")
    if paired.config.lan is not None and paired.config.lan.address6 and grant.lan6:
        sides.say(f"IPv6 from the hub: {grant.lan6} on the LAN (this router "
                  f"{paired.config.lan.address6}), its traffic through the tunnel")
    applied_at = _apply(sides, paired.config, f"pair: {grant.name}")

    def nudge() -> None:  # traffic into the tunnel starts the handshake at once
        with contextlib.suppress(OSError), socket.socket(socket.AF_INET,
                                                         socket.SOCK_DGRAM) as s:
            s.sendto(b"", (grant.hub_tunnel, 9))

    kept = _keep_once_handshaken(sides, grant.name, grant.public_key, applied_at, nudge)
    return 0 if kept else 1
