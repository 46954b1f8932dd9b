"""The edge's side of the fleet channel: `keel fleet agent`, started by
`keel apply` on a router whose config names a hub (a peer with fleet =
"hub"; keel.apply.fleet), answers that hub, and nothing else.

Who may ask: the WireGuard session is the authentication. The socket is
bound to this router's tunnel address and to the tunnel's interface
(SO_BINDTODEVICE: a packet that came in on another interface never reaches
it, whatever its addresses), the firewall accepts the port from the hub's
tunnel address on the tunnel only, and the server closes unread any
connection from another address. WireGuard's cryptokey routing lets only
the hub's key send from the hub's tunnel address (the other edges' packets
through the hub keep their own). No token is added: it would be one more
secret to keep, and would prove nothing the session does not.

What the hub may do: read this router's status (keel.fleet.wire.Status);
give the routes to the other edges' LANs, which this router takes only as
keel.fleet.learn allows (private prefixes, never its own networks), with a
revision of its config like any change; and offer a bundle, which this
router installs exactly as `keel upgrade FILE` would (its own keyring's
signature check, its compatible, never an older keel), then reboots into
for its own health gate to judge. Nothing else: no port opened, no key, no
user, no rate."""

from __future__ import annotations

import contextlib
import hashlib
import io
import json
import socket
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path

from keel.fleet import wire
from keel.pair.errors import PairError
from keel.shown import shown

READ_TIMEOUT_S = 5.0  # the request's line, however slowly it comes
RECV = 4096
BODY_CHUNK = 1 << 20
BODY_TIMEOUT_S = 60.0  # each read of a bundle's bytes: a hub that stalls is cut
BUNDLE = Path("/data/keel/upgrade/fleet.raucb")  # the hub's bundle while it is installed
REBOOT_AFTER_S = 2.0  # the installed reply on its way before the reboot
DAY_S = 86_400
DAY_EVERY_S = 300  # the day's p95 read from the history at most this often
LATEST = Path("/run/keel/history/latest.json")
PROPOSED = Path("/run/keel/fleet-routes.toml")
LOG = Path("/run/keel/fleet-agent.log")  # what the agent did and refused (never a secret)
SO_BINDTODEVICE = getattr(socket, "SO_BINDTODEVICE", 25)


def read_line(conn: socket.socket, limit: int, timeout_s: float = READ_TIMEOUT_S,
              clock: Callable[[], float] = time.monotonic) -> bytes:
    """One line, its newline included, of at most `limit` bytes, within
    `timeout_s` however slowly it comes; what came when the peer stopped, the
    time ran out or the limit passed (limit + 1 bytes at most: too long)."""
    return read_head(conn, limit, timeout_s, clock)[0]


def read_head(conn: socket.socket, limit: int, timeout_s: float = READ_TIMEOUT_S,
              clock: Callable[[], float] = time.monotonic) -> tuple[bytes, bytes]:
    """read_line's line, and the bytes that came after it in the same reads
    (the start of a bundle that follows an upgrade request)."""
    deadline = clock() + timeout_s
    data = b""
    while b"\n" not in data and len(data) <= limit:
        left = deadline - clock()
        if left <= 0:
            break
        conn.settimeout(left)
        try:
            chunk = conn.recv(min(RECV, limit + 1 - len(data)))
        except (TimeoutError, OSError):
            break
        if not chunk:
            break
        data += chunk
    end = data.find(b"\n")
    return (data[:end + 1], data[end + 1:]) if end >= 0 else (data[:limit + 1], b"")


class Refused(ValueError):
    """A bundle from the hub not taken: why, in one line."""


def receive(offer: wire.Offer, read: Callable[[int], bytes], dest: Path, room: int) -> Path:
    """The offered bundle read whole (`read(n)`: at most n bytes, b"" when
    the hub stopped) into `dest` through dest.part, its size and SHA-256 as
    offered; Refused (and nothing left) otherwise, or when it passes `room`
    bytes (what /data can give it)."""
    if offer.size > room:
        raise Refused(f"/data has room for {max(0, room) >> 20} MiB, the bundle is "
                      f"{offer.size >> 20} MiB")
    part = dest.with_name(dest.name + ".part")
    digest = hashlib.sha256()
    done = 0
    try:
        dest.parent.mkdir(parents=True, exist_ok=True)
        with part.open("wb") as out:
            while done < offer.size:
                chunk = read(min(BODY_CHUNK, offer.size - done))
                if not chunk:
                    raise Refused(f"the hub stopped sending at {done} of {offer.size} bytes")
                digest.update(chunk)
                out.write(chunk)
                done += len(chunk)
        if digest.hexdigest() != offer.sha256:
            raise Refused("the bundle's bytes do not match the SHA-256 the hub sent: "
                          "damaged on the way")
        part.replace(dest)
    except BaseException:
        part.unlink(missing_ok=True)
        raise
    return dest


def body_reader(conn: socket.socket, first: bytes,
                timeout_s: float = BODY_TIMEOUT_S) -> Callable[[int], bytes]:
    """read(n) over what followed the request line, then the connection,
    each read within `timeout_s` (a hub that stalls is cut: b"")."""
    pending = [first]

    def read(n: int) -> bytes:
        if pending[0]:
            chunk, pending[0] = pending[0][:n], pending[0][n:]
            return chunk
        conn.settimeout(timeout_s)
        try:
            return conn.recv(n)
        except (TimeoutError, OSError):
            return b""

    return read


# (the offer, read(n) over its bytes) -> (version, slot) installed; raises
# Refused, keel.upgrade.system.UpgradeError or OSError with why
Install = Callable[[wire.Offer, Callable[[int], bytes]], tuple[str, str]]


class Agent:
    """Answers one request a connection: `status` builds the Status, `learn`
    takes the hub's routes (returns those in force after, or raises
    RoutesRefused / OSError with why), `install` takes an offered bundle,
    and `installed` runs once the hub has been told (the reboot)."""

    def __init__(self, status: Callable[[], wire.Status],
                 learn: Callable[[tuple[str, ...]], tuple[str, ...]],
                 say: Callable[[str], None], install: Install | None = None,
                 installed: Callable[[], None] | None = None) -> None:
        self.status, self.learn, self.say = status, learn, say
        self.install, self.installed = install, installed
        self._learning = threading.Lock()  # one apply at a time
        self._installing = threading.Lock()  # one bundle at a time

    def reply(self, line: bytes, body: Callable[[int], bytes] | None = None) -> bytes:
        """The answer to one request line; `body` reads what follows it (an
        upgrade's bundle)."""
        try:
            request = wire.parse_request(line)
        except wire.WireError as err:
            return wire.refusal(str(err))
        if request.op == "status":
            return wire.status_reply(self.status())
        if request.op == "upgrade":
            assert request.offer is not None
            return self._upgrade(request.offer, body)
        with self._learning:
            try:
                now = self.learn(request.routes)
                self.say(f"keel fleet agent: the routes from the hub in force: "
                         f"{', '.join(now) or 'none'}")
                return wire.routes_reply(now)
            except (ValueError, OSError, PairError) as err:
                self.say(f"keel fleet agent: the hub's routes not taken: {shown(err, 200)}")
                return wire.refusal(str(err))

    def _upgrade(self, offer: wire.Offer, body: Callable[[int], bytes] | None) -> bytes:
        from keel.upgrade.system import UpgradeError

        if self.install is None or body is None:
            return wire.refusal("this edge takes no bundle from its hub")
        if not self._installing.acquire(blocking=False):
            return wire.refusal("a bundle from the hub is being installed already")
        try:
            self.say(f"keel fleet agent: the hub offers a bundle of {offer.size >> 20} MiB")
            version, slot = self.install(offer, body)
        except (Refused, UpgradeError, OSError) as err:
            self.say(f"keel fleet agent: the hub's bundle not installed: {shown(err, 200)}")
            return wire.refusal(f"not installed: {err}")
        finally:
            self._installing.release()
        self.say(f"keel fleet agent: the hub's bundle installed: keel {shown(version, 64)} "
                 f"in slot {slot}; rebooting into it")
        return wire.installed_reply(version, slot)

    def handle(self, conn: socket.socket) -> int | None:
        line, rest = read_head(conn, wire.MAX_REQUEST)
        if not line:
            return None
        try:
            answer = self.reply(line, body_reader(conn, rest))
        except Exception as err:  # a bug of ours: said, refused, not fatal
            self.say(f"keel fleet agent: {type(err).__name__}: {shown(err, 200)}")
            answer = wire.refusal("the edge failed to answer (its log says why)")
        try:
            conn.settimeout(READ_TIMEOUT_S)
            conn.sendall(answer)
        except OSError:
            return None
        if answer.startswith(b'{"ok":true,"installed"') and self.installed is not None:
            self.installed()
        return 200 if answer.startswith(b'{"ok":true') else 400


# --- the real side ------------------------------------------------------------------

def open_socket(address: str, port: int, device: str) -> socket.socket:
    """Listening on `address`:`port`, bound to `device` (raises OSError)."""
    family = socket.AF_INET6 if ":" in address else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.setsockopt(socket.SOL_SOCKET, SO_BINDTODEVICE, device.encode())
        sock.setsockopt(socket.SOL_IP, 15, 1)  # IP_FREEBIND: the tunnel may come later
        sock.bind((address, port))
        sock.listen(8)
    except OSError:
        sock.close()
        raise
    return sock


class LiveStatus:
    """This router's Status, read when asked (the day's p95 at most every
    DAY_EVERY_S: it reads a day of the history)."""

    def __init__(self) -> None:
        self._day: tuple[float, float | None] = (-DAY_EVERY_S, None)

    def day_p95(self, now: float) -> float | None:
        at, value = self._day
        if now - at < DAY_EVERY_S:
            return value
        from keel.history.store import DEFAULT_PATH, HistoryStore

        points = []
        if DEFAULT_PATH.exists():  # (opening would make one)
            try:
                with HistoryStore() as store:
                    points = store.points(now - DAY_S, now, seconds=60)
            except Exception:  # a store being replaced, or unreadable: no figure
                points = []
        worst = [p.latency["tunnel"].p95_ms for p in points
                 if "tunnel" in p.latency and p.latency["tunnel"].p95_ms is not None]
        value = max(worst) if worst else None
        self._day = (now, value)
        return value

    def __call__(self) -> wire.Status:
        from keel.history.point import Point
        from keel.history.sampler import HEALTHY
        from keel.model.reading import config_in_force, read_loaded
        from keel.system.console import uptime
        from keel.upgrade import slots, system
        from keel.upgrade.record import Records
        from keel.version import image_version

        now = time.time()
        config = read_loaded(config_in_force()).config
        point = None
        with contextlib.suppress(OSError, ValueError, KeyError, TypeError):
            point = Point.from_json(json.loads(LATEST.read_text())["point"])
        last = None
        try:
            outcome = Records().last()
            if outcome is not None:
                last = wire.Upgrade(outcome.result, outcome.version, outcome.reason, outcome.at)
        except (OSError, ValueError):
            pass
        try:
            slot = slots.booted_slot(system.cmdline())
        except OSError:
            slot = None
        tunnel = point.latency.get("tunnel") if point else None
        outside = point.latency.get("outside") if point else None
        cake = point.cake if point else {}
        from keel.fleet.learn import hub_peer, learned

        hub = hub_peer(config)
        # the causes named in the newest point, worst first ("healthy" is none)
        named = tuple(c for c in (point.causes if point else {}) if c != HEALTHY)
        named = named[:wire.MAX_CAUSES]
        return wire.Status(
            name=config.system.hostname, version=image_version(), at=now, uptime_s=uptime(),
            slot=slot if slot in wire.SLOTS else None, last_upgrade=last,
            tunnel_p95_ms=tunnel.p95_ms if tunnel else None,
            outside_p95_ms=outside.p95_ms if outside else None,
            loss=tunnel.loss if tunnel else None, day_p95_ms=self.day_p95(now),
            cake_up_kbit=cake["up"].rate_kbit if "up" in cake else None,
            cake_down_kbit=cake["down"].rate_kbit if "down" in cake else None,
            verdict=shown(point.evidence, wire.MAX_TEXT) if named else "",
            causes=named,
            routes=learned(config, hub) if hub else ())


def learn_live(routes: tuple[str, ...]) -> tuple[str, ...]:
    """Take the hub's routes: the config in force with them (keel.fleet.learn
    decides), applied with a revision when it changed; the routes in force
    after. Raises RoutesRefused, or OSError when the apply failed."""
    from keel.apply.command import cmd_apply
    from keel.config.dump import to_toml
    from keel.fleet.learn import edge_learn, hub_peer, learned, what_changed
    from keel.model.reading import config_in_force, read_loaded
    from keel.pair.run import wan_networks_now

    config = read_loaded(config_in_force()).config
    before = learned(config, hub_peer(config)) if hub_peer(config) else ()
    new = edge_learn(config, routes, wan_networks_now(config))
    if new == config:
        return before
    after = learned(new, hub_peer(new))  # type: ignore[arg-type]
    PROPOSED.parent.mkdir(parents=True, exist_ok=True)
    PROPOSED.write_text(to_toml(new))
    note = f"fleet: routes from the hub: {what_changed(before, after)}"
    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(out):
        code = cmd_apply(PROPOSED, dry_run=False, confirm=None, boot=False,
                         note=shown(note, 200))
    said = out.getvalue().strip().splitlines()
    if code != 0:
        raise OSError(f"keel apply failed (exit {code}): {said[-1] if said else ''}")
    return after


def install_live(offer: wire.Offer, read: Callable[[int], bytes]) -> tuple[str, str]:
    """The offered bundle received onto /data, then installed the way `keel
    upgrade FILE` installs (keel.upgrade.flow: this router's keyring, its
    compatible, no older keel) and removed; (version, slot)."""
    import shutil

    from keel.upgrade.fetch import FREE_MARGIN
    from keel.upgrade.flow import install_bundle

    BUNDLE.parent.mkdir(parents=True, exist_ok=True)
    room = shutil.disk_usage(BUNDLE.parent).free - FREE_MARGIN
    path = receive(offer, read, BUNDLE, room)
    try:
        pending = install_bundle(str(path), lambda *_: None, tunnel_wait=offer.tunnel_wait,
                                 allow_downgrade=False)
    finally:
        path.unlink(missing_ok=True)
    return pending.to_version, pending.to_slot


def reboot_soon(say: Callable[[str], None]) -> None:
    """The reboot into the installed slot, REBOOT_AFTER_S from now (the
    reply's last bytes on their way), said on the console first."""
    from keel.system.console import reboot
    from keel.system.console import say as on_console

    def later() -> None:
        time.sleep(REBOOT_AFTER_S)
        on_console("keel: the hub installed an upgrade; rebooting into it "
                   "(keel upgrade status tells the outcome)")
        reboot()

    threading.Thread(target=later, daemon=True, name="keel-fleet-reboot").start()


def serve(address: str, port: int, hub: str, device: str) -> int:
    """`keel fleet agent`: serve until SIGTERM."""
    import signal

    from keel.fleet.logfile import append
    from keel.metrics.server import Server

    def say(line: str) -> None:
        """A line in LOG (bounded: keel.fleet.logfile)."""
        try:
            append(LOG, line)
        except OSError:
            print(line, file=sys.stderr, flush=True)

    try:
        sock = open_socket(address, port, device)
    except OSError as err:
        say(f"keel fleet agent: cannot listen on {address}:{port} ({device}): {err.strerror}")
        return 1
    status = LiveStatus()
    try:  # the imports and the first reads before the first ask (seconds when emulated)
        status()
    except Exception as err:
        say(f"keel fleet agent: the status cannot be read yet: {type(err).__name__}: "
            f"{shown(err, 200)}")
    agent = Agent(status, learn_live, say, install_live, lambda: reboot_soon(say))
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    server = Server([sock], lambda: b"", say, max_connections=4, max_per_client=4,
                    handle=agent.handle, admits=lambda client: client == hub)
    say(f"keel fleet agent: answering {hub} on {address}:{port} ({device})")
    try:
        server.serve(stop)
    finally:
        server.close()
    return 0
