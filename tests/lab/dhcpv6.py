"""The isp's IPv6 side in the lab: what a provider gives an edge router on
its WAN link.

- Router advertisements (radvd) on the isp's edge-facing link: the link's
  /64 with the A flag (the edge's WAN takes a SLAAC address from it) and
  the M flag (addresses and prefixes come by DHCPv6). radvd, not the image's
  dnsmasq: dnsmasq sets M only on a link where it is the DHCPv6 server
  itself, and it delegates no prefixes; both would answer on port 547.
- Kea's DHCPv6 server: a /56 from a pool (IA_PD), and an address of the
  link (IA_NA) to a client that asks for one; a short renew timer
  (Lifetimes), so that a change of prefix shows within a lab test, and
  lifetimes longer than the edge's LAN router repeats its advertisements.
- A route to each delegated prefix via the client's link-local address, as
  a provider's router has: Kea adds no routes, so its run_script hook calls
  route_hook() on every lease event (routes tagged `proto dhcp`; a lease
  that ends takes its route along). Chosen over reading the lease file
  from the test: the route is there the moment the lease is, whoever asks.
- The provider renumbers: renumber() stops Kea, drops every lease and route,
  starts it again on another pool. At the client's next renew (renew
  timer: 10 s) Kea answers the old prefix with lifetimes 0 and a new one
  from the new pool (RFC 8415 18.3.4, seen with Kea 2.2 and 2.6.3), and
  dhcpcd removes the old prefix's addresses and adds the new.

Both servers run from the lab tools disk (tests/lab/labtools.py), by
chroot into it, with their files under CONF_DIR and Kea's leases under
KEA_DATA_DIR (Kea 2.6.3 takes a lease file nowhere else), both tmpfs there.
The render functions are pure; the command functions return shell text for
Guest.check on the isp; start / renumber / stop / delegated_routes drive a
Guest (or any Shell). tests/unit/test_dhcpv6_pd_netns.py runs the same
commands in network namespaces on the host, with the host's own Debian
packages (bookworm: Kea 2.2, radvd 2.19) and with the tools disk (trixie:
Kea 2.6.3, radvd 2.20): one config works for both.

Addresses (documentation space, only ever on the lab's own links):
  up link           2001:db8:0:1::/64    isp ::1; the edge by SLAAC (and
                                         IA_NA from ::1000-::1fff if asked)
  delegations from  2001:db8:100::/40    /56s from one pool at a time:
    POOL_FIRST      2001:db8:110::/48    the first
    POOL_SECOND     2001:db8:120::/48    after the provider renumbers
  2001:db8:100::/48 is in no pool: the hub's routed prefix (the model's
  example, 2001:db8:100::/56) lives there.
"""

from __future__ import annotations

import ipaddress
import json
import re
import shlex
from dataclasses import dataclass, field, replace
from typing import Protocol

from tests.lab import labtools

IPv6Network = ipaddress.IPv6Network
IPv6Interface = ipaddress.IPv6Interface

ISP_UP6 = IPv6Interface("2001:db8:0:1::1/64")  # the isp on the up link; its /64 the link's
PD_SPACE = IPv6Network("2001:db8:100::/40")
POOL_FIRST = IPv6Network("2001:db8:110::/48")
POOL_SECOND = IPv6Network("2001:db8:120::/48")
DELEGATED_LENGTH = 56
LAN_RA_INTERVAL = 600  # dnsmasq's MaxRtrAdvInterval (its default; keel sets no ra-param)
NA_POOL = (0x1000, 0x1FFF)  # in the link's /64 (::1000-::1fff): IA_NA, for a client that asks

CONF_DIR = "/run/keel-lab"  # in the chroot: configs, the hook, logs, pid files
KEA_CONFIG = f"{CONF_DIR}/kea-dhcp6.conf"
KEA_LOG = f"{CONF_DIR}/kea-dhcp6.log"
KEA_RUN_DIR = "/run/kea"  # Kea's pid and lock files
KEA_PID = f"{KEA_RUN_DIR}/kea-dhcp6.kea-dhcp6.pid"  # <config's name>.<program>.pid
KEA_DATA_DIR = "/var/lib/kea"  # Kea 2.6.3 keeps leases here and nowhere else
LEASE_FILE = f"{KEA_DATA_DIR}/kea-leases6.csv"
KEA_HOOKS_DIR = "/usr/lib/x86_64-linux-gnu/kea/hooks"  # Debian's, bookworm and trixie
ROUTE_HOOK = f"{CONF_DIR}/pd-route"
ROUTE_LOG = f"{CONF_DIR}/pd-route.log"
RADVD_CONFIG = f"{CONF_DIR}/radvd.conf"
RADVD_PID = f"{CONF_DIR}/radvd.pid"
RADVD_LOG = f"{CONF_DIR}/radvd.log"
ROUTE_PROTO = "dhcp"  # the delegated prefixes' routes on the isp: `ip -6 route show proto dhcp`
SERVER_ID = b"keel-lab".hex()  # Kea's DUID-EN identifier: the same at every start

MAX_ROUTES_TEXT = 256 * 1024
MAX_ROUTES = 1024
_IFNAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,14}")


class Dhcpv6Error(ValueError):
    """A lab IPv6 setting that cannot work, or a route listing that is not one."""


@dataclass(frozen=True)
class Lifetimes:
    """Seconds: the client renews at `renew`, rebinds at `rebind`; a prefix
    is preferred for `preferred` and valid for `valid` after each reply.

    The renew timer is what makes a renumbering show within a test (Kea
    answers the old prefix with lifetimes 0 at the next renew). The
    lifetimes are longer than LAN_RA_INTERVAL, as a provider's are: the
    edge's dnsmasq announces a delegated /64 with the preferred lifetime its
    address has left, and repeats its advertisements only every 3/4 to 1
    times that interval once its first minute is over. With 30 s (the old
    default) the LAN host's address went deprecated between two
    advertisements: the pairing lab waited 486 s for the next one."""

    renew: int = 10
    rebind: int = 20
    preferred: int = 1200
    valid: int = 2400

    def __post_init__(self) -> None:
        if not 0 < self.renew < self.rebind <= self.preferred <= self.valid:
            raise Dhcpv6Error(f"lifetimes: need 0 < renew < rebind <= preferred <= valid, "
                              f"not {self.renew}, {self.rebind}, {self.preferred}, {self.valid}")


@dataclass(frozen=True)
class Isp6:
    """The isp's IPv6 side on one link: its NIC there (`interface`), its
    address on it (`link`: a /64, SLAAC), the pool of delegated prefixes."""

    interface: str
    pool: IPv6Network = POOL_FIRST
    delegated_length: int = DELEGATED_LENGTH
    lifetimes: Lifetimes = field(default_factory=Lifetimes)
    link: IPv6Interface = ISP_UP6

    def __post_init__(self) -> None:
        if not _IFNAME.fullmatch(self.interface):
            raise Dhcpv6Error(f"interface: {self.interface!r} is no interface name")
        if self.link.network.prefixlen != 64:
            raise Dhcpv6Error(f"link: {self.link} is not in a /64 (SLAAC needs one)")
        if not self.pool.prefixlen < self.delegated_length <= 64:
            raise Dhcpv6Error(f"delegated_length: /{self.delegated_length} does not cut "
                              f"{self.pool} into prefixes of at most /64")
        if self.pool.overlaps(self.link.network):
            raise Dhcpv6Error(f"pool: {self.pool} overlaps the link's {self.link.network}")

    def renumbered(self, pool: IPv6Network) -> Isp6:
        return replace(self, pool=pool)


# --- what the servers read ------------------------------------------------

def kea_config(isp: Isp6) -> str:
    """kea-dhcp6's configuration (JSON), the same for Kea 2.2 and 2.6."""
    net = isp.link.network
    first, last = (net.network_address + offset for offset in NA_POOL)
    life = isp.lifetimes
    dhcp6 = {
        # the link may not be up yet (a veth's carrier shows up to a second
        # late): Kea tries its socket again every second, for a minute
        "interfaces-config": {"interfaces": [isp.interface],
                              "service-sockets-max-retries": 60,
                              "service-sockets-retry-wait-time": 1000},
        # the same server DUID at every start: the client's lease stays the server's
        "server-id": {"type": "EN", "enterprise-id": 2495, "identifier": SERVER_ID,
                      "persist": False},
        "lease-database": {"type": "memfile", "name": LEASE_FILE, "lfc-interval": 0},
        "renew-timer": life.renew, "rebind-timer": life.rebind,
        "preferred-lifetime": life.preferred, "valid-lifetime": life.valid,
        # expired leases reclaimed (and their routes taken) within seconds
        "expired-leases-processing": {"reclaim-timer-wait-time": 2},
        "hooks-libraries": [{
            "library": f"{KEA_HOOKS_DIR}/libdhcp_run_script.so",
            "parameters": {"name": ROUTE_HOOK, "sync": False}}],
        "subnet6": [{
            "id": 1, "subnet": str(net), "interface": isp.interface,
            "pools": [{"pool": f"{first}-{last}"}],
            "pd-pools": [{"prefix": str(isp.pool.network_address),
                          "prefix-len": isp.pool.prefixlen,
                          "delegated-len": isp.delegated_length}]}],
        "loggers": [{"name": "kea-dhcp6", "severity": "INFO",
                     "output_options": [{"output": "stdout"}]}],
    }
    return json.dumps({"Dhcp6": dhcp6}, indent=2) + "\n"


def radvd_config(isp: Isp6) -> str:
    """Router advertisements on the link: its /64 for SLAAC (A), the M flag
    (DHCPv6 for the rest), an advertisement every 3 to 10 s."""
    return (f"interface {isp.interface} {{\n"
            "    AdvSendAdvert on;\n"
            "    MinRtrAdvInterval 3;\n"
            "    MaxRtrAdvInterval 10;\n"
            "    AdvManagedFlag on;\n"
            "    AdvOtherConfigFlag off;\n"
            "    AdvDefaultLifetime 180;\n"
            f"    prefix {isp.link.network} {{\n"
            "        AdvOnLink on;\n"
            "        AdvAutonomous on;\n"
            "        AdvValidLifetime 600;\n"
            "        AdvPreferredLifetime 300;\n"
            "    };\n"
            "};\n")


def route_hook() -> str:
    """Kea's run_script hook: a route to each delegated prefix via the
    client's link-local address (the query's source) on the query's
    interface; a released, declined or expired prefix loses its route.
    Every event is logged to ROUTE_LOG."""
    return f"""#!/bin/sh
# keel lab (tests/lab/dhcpv6.py): Kea adds no routes; this adds one to each
# delegated prefix, as a provider's router has
at() {{ eval "echo \\"\\${{$1}}\\""; }}  # the value of the variable named $1
add() {{
    [ "$1" = IA_PD ] || return 0
    echo "$(date +%T) add $2/$3 via $QUERY6_REMOTE_ADDR dev $QUERY6_IFACE_NAME" >> {ROUTE_LOG}
    ip -6 route replace "$2/$3" via "$QUERY6_REMOTE_ADDR" dev "$QUERY6_IFACE_NAME" \\
        proto {ROUTE_PROTO} >> {ROUTE_LOG} 2>&1
}}
del() {{
    [ "$1" = IA_PD ] || return 0
    echo "$(date +%T) del $2/$3" >> {ROUTE_LOG}
    ip -6 route del "$2/$3" proto {ROUTE_PROTO} >> {ROUTE_LOG} 2>&1
}}
case "$1" in
leases6_committed)
    i=0
    while [ "$i" -lt "${{LEASES6_SIZE:-0}}" ]; do
        add "$(at LEASES6_AT${{i}}_TYPE)" "$(at LEASES6_AT${{i}}_ADDRESS)" \\
            "$(at LEASES6_AT${{i}}_PREFIX_LEN)"
        i=$((i + 1))
    done
    i=0
    while [ "$i" -lt "${{DELETED_LEASES6_SIZE:-0}}" ]; do
        del "$(at DELETED_LEASES6_AT${{i}}_TYPE)" "$(at DELETED_LEASES6_AT${{i}}_ADDRESS)" \\
            "$(at DELETED_LEASES6_AT${{i}}_PREFIX_LEN)"
        i=$((i + 1))
    done ;;
lease6_renew|lease6_rebind)
    add "$LEASE6_TYPE" "$LEASE6_ADDRESS" "$LEASE6_PREFIX_LEN" ;;
lease6_release|lease6_decline|lease6_expire)
    del "$LEASE6_TYPE" "$LEASE6_ADDRESS" "$LEASE6_PREFIX_LEN" ;;
esac
exit 0
"""


def files(isp: Isp6) -> tuple[tuple[str, str], ...]:
    """(path in the chroot, content) of each file the servers read."""
    return ((KEA_CONFIG, kea_config(isp)), (RADVD_CONFIG, radvd_config(isp)),
            (ROUTE_HOOK, route_hook()))


# --- shell commands, for the isp's console ---------------------------------

def _chroot(root: str | None) -> str:
    return f"chroot {shlex.quote(root)} " if root else ""


def _in(root: str | None, path: str) -> str:
    """`path` in the chroot, as the isp's shell names it."""
    return shlex.quote((root or "") + path)


def network_command(isp: Isp6) -> str:
    """The isp's address on the link, the link up, IPv6 forwarding on (a
    router: radvd also wants it)."""
    dev = shlex.quote(isp.interface)
    return (f"ip -6 addr replace {isp.link} dev {dev} nodad && ip link set {dev} up && "
            "sysctl -qw net.ipv6.conf.all.forwarding=1")


def prepare_command(root: str | None) -> str:
    """The servers' directories (tmpfs in the tools disk)."""
    return f"mkdir -p {_in(root, CONF_DIR)} {_in(root, KEA_RUN_DIR)} {_in(root, KEA_DATA_DIR)}"


def radvd_command(root: str | None) -> str:
    """radvd started (it goes to the background itself)."""
    return (f"{_chroot(root)}/usr/sbin/radvd -C {RADVD_CONFIG} -p {RADVD_PID} "
            f"-m logfile -l {RADVD_LOG}")


def kea_command(root: str | None) -> str:
    """kea-dhcp6 started in a session of its own, its log in KEA_LOG."""
    return (f"setsid -f {_chroot(root)}/usr/bin/env KEA_PIDFILE_DIR={KEA_RUN_DIR} "
            f"KEA_LOCKFILE_DIR={KEA_RUN_DIR} /usr/sbin/kea-dhcp6 -c {KEA_CONFIG} "
            f"> {_in(root, KEA_LOG)} 2>&1 < /dev/null")


def ready_command(root: str | None) -> str:
    """Succeeds once Kea has started and listens on the DHCPv6 port and
    radvd runs; else prints the ends of their logs."""
    log = _in(root, KEA_LOG)
    radvd = _in(root, RADVD_PID)
    return (f"grep -q DHCP6_STARTED {log} && ss -Hlun sport = :547 | grep -q . && "
            f"[ -s {radvd} ] && kill -0 $(cat {radvd}) || "
            f"{{ tail -n 5 {log} {_in(root, RADVD_LOG)}; false; }}")


def _stop(pidfile: str) -> str:
    """Ends the process in `pidfile` and waits (10 s at most) until it has."""
    return (f"if [ -s {pidfile} ]; then pid=$(cat {pidfile}); kill $pid 2>/dev/null; n=0; "
            f"while kill -0 $pid 2>/dev/null && [ $n -lt 50 ]; do sleep 0.2; n=$((n + 1)); "
            f"done; ! kill -0 $pid 2>/dev/null; fi")


def stop_kea_command(root: str | None) -> str:
    return _stop(_in(root, KEA_PID))


def stop_command(root: str | None) -> str:
    """Kea and radvd ended, the delegated prefixes' routes gone."""
    return (f"{stop_kea_command(root)} && {_stop(_in(root, RADVD_PID))} && "
            f"ip -6 route flush proto {ROUTE_PROTO}")


def drop_leases_command(root: str | None) -> str:
    """(Kea stopped) every lease forgotten, and every route the hook added:
    the old prefixes are not the provider's to route any more."""
    return (f"rm -f {_in(root, LEASE_FILE)} {_in(root, LEASE_FILE)}.* && "
            f"ip -6 route flush proto {ROUTE_PROTO}")


ROUTES_COMMAND = f"ip -j -6 route show proto {ROUTE_PROTO}"


# --- the isp's routes to the delegated prefixes -----------------------------

def parse_routes(text: str) -> dict[IPv6Network, tuple[str, str]]:
    """`ip -j -6 route show proto dhcp` -> {delegated prefix: (via, dev)}.
    Strict and bounded (it comes from a guest's console): a JSON list of
    at most MAX_ROUTES objects, each with dst an IPv6 prefix, gateway an
    IPv6 address and dev an interface name, no prefix twice; anything else
    raises Dhcpv6Error saying what and where."""
    if len(text) > MAX_ROUTES_TEXT:
        raise Dhcpv6Error(f"route listing: longer than {MAX_ROUTES_TEXT} characters")
    try:
        routes = json.loads(text) if text.strip() else []
    except (ValueError, RecursionError) as exc:
        raise Dhcpv6Error(f"route listing: not JSON ({type(exc).__name__})") from None
    if not isinstance(routes, list):
        raise Dhcpv6Error("route listing: not a JSON list")
    if len(routes) > MAX_ROUTES:
        raise Dhcpv6Error(f"route listing: more than {MAX_ROUTES} routes")
    out: dict[IPv6Network, tuple[str, str]] = {}
    for i, route in enumerate(routes):
        where = f"route listing [{i}]"
        if not isinstance(route, dict):
            raise Dhcpv6Error(f"{where}: not an object")
        dst, via, dev = route.get("dst"), route.get("gateway"), route.get("dev")
        if not isinstance(dst, str) or not isinstance(via, str) or not isinstance(dev, str):
            raise Dhcpv6Error(f"{where}: dst, gateway and dev are not all text")
        try:
            prefix = IPv6Network(dst)
            gateway = ipaddress.IPv6Address(via)
        except ValueError:
            raise Dhcpv6Error(f"{where}: dst {dst[:60]!r} or gateway {via[:60]!r} "
                              "is no IPv6 prefix or address") from None
        if not _IFNAME.fullmatch(dev):
            raise Dhcpv6Error(f"{where}: dev {dev[:60]!r} is no interface name")
        if prefix in out:
            raise Dhcpv6Error(f"{where}: {prefix} listed twice")
        out[prefix] = (str(gateway), dev)
    return out


# --- driving a guest --------------------------------------------------------

class Shell(Protocol):
    """What of tests.lab.guest.Guest these helpers use."""

    def check(self, cmd: str, timeout: float = 30) -> str: ...

    def until(self, cmd: str, timeout: float = 30, every: float = 0.5) -> str: ...

    def write_file(self, path: str, content: str) -> None: ...


def _write(shell: Shell, isp: Isp6, root: str | None) -> None:
    for path, content in files(isp):
        shell.write_file((root or "") + path, content)
    shell.check(f"chmod 755 {_in(root, ROUTE_HOOK)}")


def _start_kea(shell: Shell, root: str | None) -> None:
    shell.check(kea_command(root))
    shell.until(ready_command(root), 30)


def start(shell: Shell, isp: Isp6, root: str | None = labtools.ROOT,
          device: str = "/dev/vdb") -> None:
    """The isp's IPv6 side up: the tools disk mounted at `root` (from
    `device`; root None: the servers are the shell's own, no chroot), the
    link addressed, radvd and Kea running."""
    if root:
        shell.check(labtools.mount_command(device, root), 60)
    shell.check(network_command(isp))
    shell.check(prepare_command(root))
    _write(shell, isp, root)
    shell.check(radvd_command(root))
    _start_kea(shell, root)


def renumber(shell: Shell, isp: Isp6, pool: IPv6Network,
             root: str | None = labtools.ROOT) -> Isp6:
    """The provider renumbers: Kea again on `pool`, with every lease and
    route forgotten. The client's next renew gets the new prefix."""
    new = isp.renumbered(pool)
    shell.check(stop_kea_command(root), 20)
    shell.check(drop_leases_command(root))
    shell.write_file((root or "") + KEA_CONFIG, kea_config(new))
    _start_kea(shell, root)
    return new


def stop(shell: Shell, root: str | None = labtools.ROOT) -> None:
    shell.check(stop_command(root), 30)


def delegated_routes(shell: Shell) -> dict[IPv6Network, tuple[str, str]]:
    """The isp's routes to the prefixes it delegated: {prefix: (via, dev)}."""
    return parse_routes(shell.check(ROUTES_COMMAND))
