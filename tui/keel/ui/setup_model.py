"""The first-boot setup wizard's model (no Textual): the answers as typed,
the steps they make (a hub has no LAN step), the config they build on top of
the config in force, and the loader's own check of it, each problem under the
answer it names (key path: reason), as on the settings screens
(keel.ui.settings_model, whose value parsing and check this reuses).

The screen (keel.ui.screens.setup) only renders this and forwards keys; the
end of the wizard is the settings' review and apply with confirm
(keel.ui.dialogs)."""

from __future__ import annotations

import copy
import dataclasses
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from keel.config.schema import Config
from keel.parse.nic_first_seen import FirstSeen
from keel.parse.nic_identity import Port
from keel.ui import settings_model as model
from keel.ui import setup_ports

# --- the choices ------------------------------------------------------------------

ROLES = {"edge": "edge: a WAN and a LAN (a home or office box)",
         "hub": "hub: one NIC, the tunnel's far end (a VPS)"}
WAN_MODES = {"dhcp": "DHCP: the address comes from the ISP's box or the provider",
             "static": "static: an address with its prefix, and a gateway"}
TUNNELS = {"pair": "pair with the hub (keel pair: a one-time code)",
           "manual": "enter the peer by hand",
           "none": "no tunnel for now"}
HUB_TUNNELS = {"pair": "pair with the edge: show a one-time code after setup",
               "manual": "enter the edge's public key by hand",
               "none": "no peer yet (add one later)"}
# "adaptive" measures too, then [a] takes adaptive CAKE around the rates
# measured (keel.apply.rates.adaptive_bounds: base the rate recommended, max
# what the line carried, min half the base); only where the daemon has a peer
# to probe (can_adapt). Listed first so that the others keep their places.
SHAPING = {"adaptive": "measure, then adaptive: CAKE follows the line (min half, max "
                       "the line)",
           "selftest": "measure: the throughput self-test after setup, then [a] takes "
                       "its rates",
           "manual": "enter the rates (kbit/s)",
           "off": "leave shaping off for now"}
MEASURED = ("adaptive", "selftest")  # the shaping answers that run the self-test

PAIRING_NOTE = "pairing: run `keel pair` on the hub"
PAIRING_EDGE = (PAIRING_NOTE + " (or choose pairing in its setup), then type its address "
                "and the code it shows: they pair once this setup is applied")
PAIRING_HUB = ("pairing: once this setup is applied, the hub shows a one-time code and "
               "waits 10 min for the edge (keel pair HUB CODE there, or its setup)")
LAN_DEFAULTS = ("192.168.77.1/24", "192.168.77.100", "192.168.77.199")
TUNNEL_ADDRESS = {"edge": "10.77.0.2/24", "hub": "10.77.0.1/24"}
PEER_ALLOWED = {"edge": "10.77.0.1/32", "hub": "10.77.0.2/32"}  # the other end's address
LISTEN_PORT = "51820"
EDGE_KEEPALIVE = 25  # keeps the home NAT's mapping open
# what a hub sets besides the answers (as in the hub example)
HUB_EXTRAS = {"firewall.forward_tunnel_to_wan": True, "selftest.iperf3_server": True,
              "firewall.ssh_on_wan": True, "nat.masquerade_wan": True}
HUB_NOTE = ("a hub also opens SSH on the WAN (keys only: [p] adds one), lets its peers "
            "reach the internet through it, and serves the self-test (iperf3 on the tunnel "
            "address only)")


@dataclass
class Answers:
    """What the user chose or typed, as text (the loader judges it)."""

    role: str = "edge"
    wan_interface: str = ""
    lan_interface: str = ""
    wan_mode: str = "dhcp"
    wan_address: str = ""
    wan_gateway: str = ""
    lan_address: str = LAN_DEFAULTS[0]
    dhcp_start: str = LAN_DEFAULTS[1]
    dhcp_end: str = LAN_DEFAULTS[2]
    tunnel: str = "none"
    tunnel_address: str = TUNNEL_ADDRESS["edge"]
    listen_port: str = LISTEN_PORT
    peer_public_key: str = ""
    peer_endpoint: str = ""
    peer_allowed_ips: str = PEER_ALLOWED["edge"]
    hub_address: str = ""  # pairing (edge): where `keel pair` waits, HUB or HUB:PORT
    pair_code: str = ""  # pairing (edge): the code the hub shows
    shaping: str = "off"
    upload_kbit: str = ""
    download_kbit: str = ""


# --- the steps and what each asks -----------------------------------------------------

@dataclass(frozen=True)
class Ask:
    """One answer on one step: `path` is the config key it sets (what the
    loader's problems name)."""

    name: str  # the Answers attribute
    step: str
    label: str
    path: str
    kind: str  # "choice" (a RadioSet), "nic" (the NIC table), "text" (an Input)
    help: str = ""


PEER = "wireguard.peer[0]"
ASKS = (
    Ask("role", "role", "role", "", "choice"),
    Ask("wan_interface", "nics", "WAN", "wan.interface", "nic"),
    Ask("lan_interface", "nics", "LAN", "lan.interface", "nic"),
    Ask("wan_mode", "wan", "WAN address", "wan.mode", "choice"),
    Ask("wan_address", "wan", "address", "wan.address", "text",
        "with its prefix: 203.0.113.7/24; a VPS's /32 with the gateway outside it works"),
    Ask("wan_gateway", "wan", "gateway", "wan.gateway", "text", "the default gateway"),
    Ask("lan_address", "lan", "LAN address", "lan.address", "text",
        "the router's address on the LAN, with its prefix"),
    Ask("dhcp_start", "lan", "DHCP from", "lan.dhcp_start", "text",
        "the first address handed out"),
    Ask("dhcp_end", "lan", "DHCP to", "lan.dhcp_end", "text", "the last address handed out"),
    Ask("tunnel", "tunnel", "tunnel", "", "choice"),
    Ask("tunnel_address", "tunnel", "tunnel address", "wireguard.address", "text",
        "this router's address in the tunnel, with its prefix"),
    Ask("listen_port", "tunnel", "listen port", "wireguard.listen_port", "text",
        "UDP, opened on the WAN"),
    Ask("hub_address", "tunnel", "hub's address", "", "text",
        "HUB or HUB:PORT: the hub's public address, where keel pair waits"),
    Ask("pair_code", "tunnel", "code", "", "text", "the 8 digits the hub shows (1234-5678)"),
    Ask("peer_public_key", "tunnel", "peer's key", f"{PEER}.public_key", "text",
        "the other router's `keel show pubkey` (44 characters)"),
    Ask("peer_endpoint", "tunnel", "endpoint", f"{PEER}.endpoint", "text",
        "host:port where the other router listens"),
    Ask("peer_allowed_ips", "tunnel", "allowed IPs", f"{PEER}.allowed_ips", "text",
        "comma-separated: what the peer may send from (its tunnel address /32, ...)"),
    Ask("shaping", "shaping", "shaping", "", "choice"),
    Ask("upload_kbit", "shaping", "upload", "wan.shaping.upload_kbit", "text",
        "kbit/s to the internet (about 90 % of the line's)"),
    Ask("download_kbit", "shaping", "download", "wan.shaping.download_kbit", "text",
        "kbit/s from the internet (about 90 % of the line's)"),
)
BY_NAME = {a.name: a for a in ASKS}

STEPS = ("role", "nics", "wan", "lan", "tunnel", "shaping", "done")
TITLES = {"role": "What is this router?", "nics": "Which NIC is which?",
          "wan": "How does the WAN get its address?", "lan": "The LAN",
          "tunnel": "The WireGuard tunnel", "shaping": "Shaping (CAKE)",
          "done": "Review and apply"}


def steps(a: Answers) -> list[str]:
    return [s for s in STEPS if not (s == "lan" and a.role != "edge")]


def has_tunnel(a: Answers) -> bool:
    """A configured tunnel peer (what the self-test runs against)."""
    return a.tunnel in ("pair", "manual")


def measures(a: Answers) -> bool:
    """The throughput self-test runs after the setup (its rates taken by [a])."""
    return a.shaping in MEASURED


def adaptive_refusal(a: Answers) -> str | None:
    """Why adaptive CAKE is not offered with these answers (None: it is):
    its daemon probes the tunnel's peer, so the peer needs an endpoint this
    router reaches (the loader's own condition); a hub's edges have none."""
    if not has_tunnel(a):
        return "no tunnel: adaptive CAKE probes the tunnel's peer"
    if a.role == "hub":
        return "it runs on the edge (the edge probes the hub)"
    if a.tunnel == "manual" and not a.peer_endpoint.strip():
        return "the peer has no endpoint to probe (adaptive CAKE probes it)"
    return None


def choices(name: str, a: Answers) -> dict[str, str]:
    """The choices of a choice ask, as offered now."""
    if name == "role":
        return ROLES
    if name == "wan_mode":
        return WAN_MODES
    if name == "tunnel":
        return HUB_TUNNELS if a.role == "hub" else TUNNELS
    if name == "shaping":
        left_out = {"adaptive"} if adaptive_refusal(a) else set()
        if not has_tunnel(a):
            left_out.add("selftest")
        return {k: v for k, v in SHAPING.items() if k not in left_out}
    raise KeyError(name)


def visible(name: str, a: Answers) -> bool:
    """Whether this answer is asked, given the others."""
    if name == "lan_interface" or BY_NAME[name].step == "lan":
        return a.role == "edge"
    if name in ("wan_address", "wan_gateway"):
        return a.wan_mode == "static"
    if name == "tunnel_address":  # a paired edge gets its address from the hub
        return a.role == "hub" or a.tunnel == "manual"
    if name == "listen_port":
        return a.role == "hub"
    if name in ("hub_address", "pair_code"):
        return a.role == "edge" and a.tunnel == "pair"
    if name.startswith("peer_"):
        return a.tunnel == "manual"
    if name in ("upload_kbit", "download_kbit"):
        return a.shaping == "manual"
    return True


def asks(step: str, a: Answers) -> list[Ask]:
    return [x for x in ASKS if x.step == step and visible(x.name, a)]


def set_answer(a: Answers, name: str, value: str) -> Answers:
    """A copy with one answer changed, and what follows from it: a role's
    own tunnel defaults, no self-test without a tunnel."""
    out = dataclasses.replace(a, **{name: value})
    if name == "role" and value != a.role:
        if a.tunnel_address == TUNNEL_ADDRESS[a.role]:
            out.tunnel_address = TUNNEL_ADDRESS[value]
        if a.peer_allowed_ips == PEER_ALLOWED[a.role]:
            out.peer_allowed_ips = PEER_ALLOWED[value]
        if value == "hub":
            out.lan_interface = ""
    offered = choices("shaping", out)
    if out.shaping not in offered:  # adaptive no longer offered: still measured
        out.shaping = "selftest" if out.shaping in MEASURED and "selftest" in offered else "off"
    return out


# --- the ports (keel.ui.setup_ports decides) ------------------------------------------

def default_nics(a: Answers, ports: Sequence[Port], kept: Sequence[str] = ()) -> Answers:
    """The WAN and the LAN on these ports, each named by what it is
    (setup_ports.with_defaults)."""
    wan, lan = setup_ports.with_defaults(a.wan_interface, a.lan_interface, a.role, ports, kept)
    return dataclasses.replace(a, wan_interface=wan, lan_interface=lan)


def pick_nic(a: Answers, which: str, port: Port, ports: Sequence[Port]) -> Answers:
    """This port as the WAN ("wan") or the LAN ("lan"); taking the other's
    port swaps them. A hub has no LAN."""
    if which == "lan" and a.role != "edge":
        return a
    wan, lan = setup_ports.pick(a.wan_interface, a.lan_interface, which, port, ports)
    return dataclasses.replace(a, wan_interface=wan, lan_interface=lan)


def nic_use(a: Answers, port: Port, ports: Sequence[Port]) -> str:
    return setup_ports.use(a.wan_interface, a.lan_interface, a.role, port, ports)


def kept_specs(config: Config, first_boot: bool) -> tuple[str, ...]:
    """The WAN and LAN the config in force names, taken as the user's
    choice though on no port here (a bridge as the LAN); none on first
    boot: the shipped default's names are no one's choice."""
    if first_boot:
        return ()
    return (config.wan.interface,) + ((config.lan.interface,) if config.lan else ())


# --- the config -------------------------------------------------------------------

def _put(data: dict[str, Any], path: str, value: Any) -> None:
    *tables, name = path.split(".")
    for part in tables:
        data = data.setdefault(part, {})
    data[name] = value


def _list(text: str) -> list[str]:
    return [part.strip() for part in text.split(",") if part.strip()]


def _peer(a: Answers, old: Mapping[str, Any] | None) -> dict[str, Any]:
    peer: dict[str, Any] = {"public_key": a.peer_public_key.strip(),
                            "allowed_ips": _list(a.peer_allowed_ips)}
    if a.peer_endpoint.strip():
        peer["endpoint"] = a.peer_endpoint.strip()
    keepalive = (old or {}).get("keepalive", EDGE_KEEPALIVE if a.role == "edge" else 0)
    if keepalive:
        peer["keepalive"] = keepalive
    return peer


def build(a: Answers, base: dict[str, Any]) -> dict[str, Any]:
    """The config the answers make, as a TOML-ready dict: the config in
    force (`base`, settings_model.as_dict) with what the wizard asks
    replaced; its other keys (tuning, SSH keys, ...) stay as they are."""
    data = copy.deepcopy(base)

    def put(path: str, text: str) -> None:
        nonlocal data
        data = model.with_value(data, path, text)

    put("wan.interface", a.wan_interface)
    put("wan.mode", a.wan_mode)
    static = a.wan_mode == "static"
    put("wan.address", a.wan_address if static else "")
    put("wan.gateway", a.wan_gateway if static else "")

    if a.role == "edge":
        data["lan"] = dict(data.get("lan") or {})
        put("lan.interface", a.lan_interface)
        put("lan.address", a.lan_address)
        put("lan.dhcp_start", a.dhcp_start)
        put("lan.dhcp_end", a.dhcp_end)
    else:
        data.pop("lan", None)

    # an edge that pairs turns its tunnel on when it pairs (keel pair)
    tunnel = a.role == "hub" or a.tunnel == "manual"
    _put(data, "wireguard.enabled", tunnel)
    if tunnel:
        put("wireguard.address", a.tunnel_address)
    if a.role == "hub":
        put("wireguard.listen_port", a.listen_port)
    peers = list(data.get("wireguard", {}).get("peer") or [])
    if a.tunnel == "manual":
        peers[:1] = [_peer(a, peers[0] if peers else None)]
    elif a.role == "hub" and a.tunnel == "none":
        peers = peers[1:]  # no peer yet: the first one (the one the wizard shows) goes
    if peers:
        data["wireguard"]["peer"] = peers
    else:
        data.get("wireguard", {}).pop("peer", None)

    manual = a.shaping == "manual"
    put("wan.shaping.upload_kbit", a.upload_kbit if manual else "0")
    put("wan.shaping.download_kbit", a.download_kbit if manual else "0")
    if not manual:  # no rates until measured: nothing to adapt yet ([a] sets it)
        _put(data, "wan.shaping.adaptive", False)
        for way in ("upload", "download"):
            for end in ("min", "max"):
                _put(data, f"wan.shaping.{way}_{end}_kbit", 0)
    if not tunnel:
        if data["wan"]["shaping"].get("attach") == "tunnel":
            _put(data, "wan.shaping.attach", "wan")
        for path in ("selftest.iperf3_server", "firewall.forward_tunnel_to_wan"):
            _put(data, path, False)
    if a.role == "hub":
        for path, value in HUB_EXTRAS.items():
            _put(data, path, value)
    # the shipped name says nothing, and pairing names each peer after its
    # host name: a router still called "keel" is named after its role
    if (data.get("system") or {}).get("hostname", "keel") == "keel":
        _put(data, "system.hostname", a.role)
    return data


@dataclass(frozen=True)
class Verdict:
    """The loader's problems with the config the answers make: under the
    answer they name (only answers asked now), the rest on their own."""

    errors: dict[str, list[str]]  # answer name -> "key.path: reason" lines
    general: list[str]

    def of(self, names: Sequence[str]) -> list[str]:
        return [line for n in names for line in self.errors.get(n, [])]

    @property
    def count(self) -> int:
        return sum(len(v) for v in self.errors.values()) + len(self.general)


def check(a: Answers, base: dict[str, Any], ports: Sequence[Port] | None = None,
          kept: Sequence[str] = ()) -> Verdict:
    """The loader's problems, and with `ports` (the ports found) what keeps
    the port step from going on (setup_ports.problems)."""
    found, more = model.problems(build(a, base))
    owners = {x.path: x.name for x in ASKS if x.path and visible(x.name, a)}
    errors: dict[str, list[str]] = {}
    general = []
    for problem in found:
        path = model.owner(problem.path, owners)
        if path is None:
            general.append(str(problem))
        else:
            errors.setdefault(owners[path], []).append(str(problem))
    if more:
        general.append(f"and {more} more problem{'' if more == 1 else 's'}")
    for name, line in pairing_problems(a).items():
        errors.setdefault(name, []).append(line)
    if ports is not None:
        for name, line in setup_ports.problems(a.wan_interface, a.lan_interface, a.role,
                                               ports, kept).items():
            errors[name] = [line]  # the loader's "empty" says less
    return Verdict(errors, general)


def pairing_problems(a: Answers) -> dict[str, str]:
    """What is wrong with the hub's address and the code as typed (keel
    pair's own messages); they are not config keys."""
    if not (visible("hub_address", a)):
        return {}
    from keel.pair.code import normalize
    from keel.pair.errors import PairError

    out = {}
    hub = a.hub_address.strip()
    if not hub:
        out["hub_address"] = "hub's address: empty: where keel pair waits (HUB or HUB:PORT)"
    elif any(c.isspace() for c in hub) or "/" in hub:
        out["hub_address"] = f"hub's address: not an address or a host name: {hub!r}"
    try:
        normalize(a.pair_code)
    except PairError as err:
        out["pair_code"] = f"code: {err}"
    return out


def step_problems(step: str, a: Answers, verdict: Verdict) -> list[str]:
    """What keeps this step from going on: the problems of its answers
    (on the last step: every problem left)."""
    if step == "done":
        return [line for lines in verdict.errors.values() for line in lines] + verdict.general
    return verdict.of([x.name for x in asks(step, a)])


def proposed_text(a: Answers, base: dict[str, Any]) -> str:
    """The config as keel writes it (raises ConfigError when invalid)."""
    return model.proposed_text(build(a, base))


# --- from the config in force -----------------------------------------------------

def from_config(config: Config, ports: Sequence[Port] | None = None,
                first_boot: bool = False,
                first_seen: Mapping[str, FirstSeen] | None = None) -> Answers:
    """The answers that make (about) this config: the wizard opened again
    starts where the router is; the shipped default gives the defaults. With
    the ports found: the WAN and LAN on them (default_nics; on first boot
    the shipped default's LAN is no one's choice), each where keel first
    found it (`first_seen`, keel.system.nic_record), a one-port machine a hub."""
    wan, lan, wg = config.wan, config.lan, config.wireguard
    role = "edge" if lan is not None else "hub"
    if ports is not None:
        role = setup_ports.default_role(role, ports)
    peer = wg.peer[0] if wg.peer else None
    tunnel = "manual" if wg.enabled and peer is not None else "none"
    rates = wan.shaping.upload_kbit or wan.shaping.download_kbit
    a = Answers(
        role=role, wan_interface=wan.interface,
        lan_interface=lan.interface if lan and role == "edge" and not first_boot else "",
        wan_mode=wan.mode, wan_address=wan.address or "", wan_gateway=wan.gateway or "",
        lan_address=lan.address if lan else LAN_DEFAULTS[0],
        dhcp_start=(lan.dhcp_start or "") if lan else LAN_DEFAULTS[1],
        dhcp_end=(lan.dhcp_end or "") if lan else LAN_DEFAULTS[2],
        tunnel=tunnel,
        tunnel_address=", ".join(wg.address) if wg.address else TUNNEL_ADDRESS[role],
        listen_port=str(wg.listen_port),
        peer_public_key=peer.public_key if peer else "",
        peer_endpoint=(peer.endpoint or "") if peer else "",
        peer_allowed_ips=", ".join(peer.allowed_ips) if peer else PEER_ALLOWED[role],
        shaping="manual" if rates else "selftest" if tunnel != "none" else "off",
        upload_kbit=str(wan.shaping.upload_kbit) if rates else "",
        download_kbit=str(wan.shaping.download_kbit) if rates else "")
    if ports is None:
        return a
    seen = first_seen or {}
    a.wan_interface = setup_ports.first_found(a.wan_interface, "wan.interface", seen, ports)
    a.lan_interface = setup_ports.first_found(a.lan_interface, "lan.interface", seen, ports)
    return default_nics(a, ports, kept_specs(config, first_boot))


# --- the last step's summary --------------------------------------------------------

def summary(a: Answers, ports: Sequence[Port] = ()) -> list[str]:
    """The review's lines: each port as the config names it, and the
    kernel name it is today."""
    lines = [f"role       {a.role}",
             f"WAN        {setup_ports.today(a.wan_interface, ports)}",
             "           by DHCP" if a.wan_mode == "dhcp" else
             f"           static {a.wan_address or '?'} via {a.wan_gateway or '?'}"]
    if a.role == "edge":
        lines.append(f"LAN        {setup_ports.today(a.lan_interface, ports)}")
        lines.append(f"           {a.lan_address}, DHCP {a.dhcp_start or '-'} .. "
                     f"{a.dhcp_end or '-'}")
    if a.role == "hub" or a.tunnel == "manual":
        port = f", port {a.listen_port}" if a.role == "hub" else ""
        lines.append(f"tunnel     {a.tunnel_address}{port}")
    if a.tunnel == "pair":
        lines.append(f"pairing    with the hub at {a.hub_address or '?'}, once this is applied"
                     if a.role == "edge" else
                     "pairing    shows a code for the edge once this is applied")
    elif has_tunnel(a):
        key = a.peer_public_key[:10] + "..." if len(a.peer_public_key) > 13 else \
            a.peer_public_key or "?"
        to = f" at {a.peer_endpoint}" if a.peer_endpoint else ""
        lines.append(f"peer       {key}{to}, allowed {a.peer_allowed_ips}")
    elif a.role == "edge":
        lines.append("tunnel     none")
    else:
        lines.append("peer       none yet")
    lines.append({"adaptive": "shaping    adaptive, once the self-test after setup measures "
                              "the line",
                  "selftest": "shaping    off until the self-test after setup measures the "
                              "line",
                  "manual": f"shaping    CAKE {a.upload_kbit or 0} kbit/s up, "
                            f"{a.download_kbit or 0} kbit/s down",
                  "off": "shaping    off"}[a.shaping])
    return lines
