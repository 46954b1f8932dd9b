"""A boot fallback never widens access: when `keel apply --boot` falls back
from the config that failed (the user's, or the revision in force) to an
earlier one, what that earlier config lets in is cut down to what the newer
ones allow.

Access and exposure, and how two are narrowed (the newer config is the
ceiling):
- `access.ssh_keys`: the keys in both (by key type and data; comments aside);
- `wireguard.peer`: the peers in both (by public key): an unpaired edge does
  not come back; what was routed to a peer cut out goes with it (a prefix no
  kept peer's allowed_ips cover; `route = "all"` with no kept peer taking
  0.0.0.0/0 or ::/0: the route becomes "none"), so the rest still applies;
- `firewall.ssh_on_wan`, `ping_on_wan`, `forward_tunnel_to_wan`,
  `forward_between_peers`, `selftest.iperf3_server`, `metrics.enabled`,
  `metrics.on_wan`: on only if on in both (the metrics cut off take on_wan
  with them);
- `firewall.open_tcp`, `open_udp`: the ports in both;
- `[[forward]]`: the forwards in both, the same in every key.
Root's password lives on /data, outside the revisions: a fallback does not
change it.

A newer config is read as bare TOML, not against this keel's schema: after a
rollback to an older keel it may carry keys this version does not know, and
it is still the user's latest word on who may get in. A newer config that is
not even TOML says nothing: when none of them can be read, the revision that
was in force is applied as it is (it let in no more than at the last boot),
and any older config is cut to nothing (no keys, peers, forwards or open
ports), failing closed.

Pure: texts in, a Config and the lines that say what was cut out."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from keel.config.errors import ConfigError
from keel.config.netsets import NetSet, network
from keel.config.schema import Config, Forward, WireGuard
from keel.config.toml_syntax import parse_toml
from keel.config.wireguard_relations import allowed_networks

FLAGS = (("firewall", "ssh_on_wan", False), ("firewall", "ping_on_wan", True),
         ("firewall", "forward_tunnel_to_wan", False),
         ("firewall", "forward_between_peers", False), ("selftest", "iperf3_server", False),
         ("metrics", "enabled", False), ("metrics", "on_wan", False))
PORTS = (("firewall", "open_tcp"), ("firewall", "open_udp"))


@dataclass(frozen=True)
class Ceiling:
    """What a newer config allows (None in a set: it could not be read)."""

    ssh_keys: frozenset[str] = frozenset()
    peers: frozenset[str] = frozenset()
    flags: frozenset[str] = frozenset()  # "firewall.ssh_on_wan", ... that are on
    ports: frozenset[str] = frozenset()  # "firewall.open_tcp:443", ...
    forwards: frozenset[str] = frozenset()

    def __and__(self, other: Ceiling) -> Ceiling:
        return Ceiling(self.ssh_keys & other.ssh_keys, self.peers & other.peers,
                       self.flags & other.flags, self.ports & other.ports,
                       self.forwards & other.forwards)


CLOSED = Ceiling()


def key_identity(line: str) -> str:
    """An authorized_keys line's key: its type and data, not its comment."""
    fields = line.split()
    for i, field in enumerate(fields):
        if field.startswith(("ssh-", "ecdsa-", "sk-")) and i + 1 < len(fields):
            return f"{field} {fields[i + 1]}"
    return " ".join(fields)


def forward_identity(table: dict[str, Any]) -> str:
    defaults = {f.name: f.default for f in dataclasses.fields(Forward)
                if f.default is not dataclasses.MISSING}
    whole = {**defaults, **table}
    whole["port"] = str(whole.get("port"))
    return json.dumps(whole, sort_keys=True, default=str)


def _table(data: Any, name: str) -> dict[str, Any]:
    value = data.get(name) if isinstance(data, dict) else None
    return value if isinstance(value, dict) else {}


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _tables(value: Any) -> list[dict[str, Any]]:
    return [t for t in value if isinstance(t, dict)] if isinstance(value, list) else []


def ceiling_of(text: str) -> Ceiling | None:
    """What a config text allows, read as bare TOML (with the loader's limits
    on size, nesting and integers); None if it is not TOML within them."""
    try:
        data = parse_toml(text, "a newer config")
    except ConfigError:
        return None
    keys = _table(data, "access").get("ssh_keys")
    ssh_keys = frozenset(key_identity(k) for k in keys if isinstance(k, str)) \
        if isinstance(keys, list) else frozenset()
    peers = frozenset(p["public_key"] for p in _tables(_table(data, "wireguard").get("peer"))
                      if isinstance(p.get("public_key"), str))
    flags = frozenset(f"{section}.{name}" for section, name, default in FLAGS
                      if _table(data, section).get(name, default) is True)
    ports = frozenset(f"{section}.{name}:{port}" for section, name in PORTS
                      for port in _list(_table(data, section).get(name))
                      if isinstance(port, int) and not isinstance(port, bool))
    forwards = frozenset(forward_identity(t) for t in _tables(data.get("forward")))
    return Ceiling(ssh_keys, peers, flags, ports, forwards)


def ceiling_over(newer: Iterable[str]) -> Ceiling | None:
    """The narrowest of what the newer configs allow (those that are TOML);
    None when none of them is."""
    found = [c for c in (ceiling_of(text) for text in newer) if c is not None]
    if not found:
        return None
    out = found[0]
    for other in found[1:]:
        out = out & other
    return out


def narrow(config: Config, ceiling: Ceiling) -> tuple[Config, tuple[str, ...]]:
    """`config` with no more access than `ceiling`; and what was cut, one
    short line each (no key material: a key is named by its comment or type)."""
    cut: list[str] = []
    keys = []
    for line in config.access.ssh_keys:
        if key_identity(line) in ceiling.ssh_keys:
            keys.append(line)
        else:
            fields = line.split()
            cut.append(f"SSH key {fields[-1] if len(fields) > 2 else fields[0]}")
    peers = []
    for peer in config.wireguard.peer:
        if peer.public_key in ceiling.peers:
            peers.append(peer)
        else:
            cut.append(f"WireGuard peer {peer.name or peer.public_key[:8]}")
    wireguard = dataclasses.replace(config.wireguard, peer=tuple(peers))
    if len(peers) < len(config.wireguard.peer):
        wireguard = routes_of_kept_peers(wireguard, cut)
    sections: dict[str, dict[str, Any]] = {"firewall": {}, "selftest": {}, "metrics": {}}
    for section, name, _ in FLAGS:
        if getattr(getattr(config, section), name) and f"{section}.{name}" not in ceiling.flags:
            sections[section][name] = False
            cut.append(f"{section}.{name}")
    if "enabled" in sections["metrics"]:  # on_wan is only with enabled
        sections["metrics"]["on_wan"] = False
    for section, name in PORTS:
        ports = getattr(getattr(config, section), name)
        kept = tuple(p for p in ports if f"{section}.{name}:{p}" in ceiling.ports)
        if kept != ports:
            sections[section][name] = kept
            cut += [f"{section}.{name} {p}" for p in ports if p not in kept]
    forwards = []
    for fwd in config.forward:
        if forward_identity(dataclasses.asdict(fwd)) in ceiling.forwards:
            forwards.append(fwd)
        else:
            cut.append(f"forward {fwd.name}")
    if not cut:
        return config, ()
    narrowed = dataclasses.replace(
        config,
        access=dataclasses.replace(config.access, ssh_keys=tuple(keys)),
        wireguard=wireguard,
        firewall=dataclasses.replace(config.firewall, **sections["firewall"]),
        selftest=dataclasses.replace(config.selftest, **sections["selftest"]),
        metrics=dataclasses.replace(config.metrics, **sections["metrics"]),
        forward=tuple(forwards))
    return narrowed, tuple(cut)


def routes_of_kept_peers(wg: WireGuard, cut: list[str]) -> WireGuard:
    """`wg` (its peers already cut down) routing only to its kept peers: the
    prefixes none of their allowed_ips cover, and `route = "all"` when none
    of them takes a default route, go (each a line in `cut`); a route of
    prefixes with none left becomes "none"."""
    nets = [net for _, _, net in allowed_networks(wg)]
    if wg.route == "all" and not any(net.prefixlen == 0 for net in nets):
        cut.append("WireGuard route all (no kept peer takes it)")
        return dataclasses.replace(wg, route="none")
    if wg.route != "prefixes":
        return wg
    covering = NetSet(nets)
    kept = tuple(p for p in wg.prefixes if covering.container(network(p)) is not None)
    cut += [f"WireGuard route {p} (no kept peer takes it)" for p in wg.prefixes if p not in kept]
    return dataclasses.replace(wg, prefixes=kept, route="prefixes" if kept else "none")
