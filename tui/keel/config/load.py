"""Loading keel.toml: TOML syntax, then every key against the schema, then the
rules that tie keys together. All problems are collected, each with its key
path; nothing is applied from an invalid file. Values are never echoed in a
reason (a mistyped key could be a private key)."""

from __future__ import annotations

import dataclasses
import difflib
import ipaddress
import tomllib
import types
import typing
from pathlib import Path
from typing import Any

from keel.config.errors import ConfigError, Problem
from keel.config.schema import Config

_BAD = object()
_TYPE_NAMES = {str: "a string", int: "an integer", bool: "true or false", dict: "a table",
               list: "an array", float: "a number"}


def _what(value: Any) -> str:
    if isinstance(value, bool):
        return "true or false"
    for kind, name in _TYPE_NAMES.items():
        if isinstance(value, kind):
            return name
    return type(value).__name__


def _join(path: str, name: str) -> str:
    return f"{path}.{name}" if path else name


def _unwrap(tp: Any) -> tuple[Any, ...]:
    """The allowed types of an annotation, without None."""
    if isinstance(tp, types.UnionType) or typing.get_origin(tp) is typing.Union:
        return tuple(t for t in typing.get_args(tp) if t is not type(None))
    return (tp,)


def _scalar_ok(kind: Any, value: Any) -> bool:
    if kind is bool:
        return isinstance(value, bool)
    if kind is int:
        return isinstance(value, int) and not isinstance(value, bool)
    if kind is str:
        return isinstance(value, str)
    return False


def _convert(tp: Any, value: Any, path: str, meta: dict, problems: list[Problem]) -> Any:
    kinds = _unwrap(tp)
    kind = kinds[0]
    if dataclasses.is_dataclass(kind):
        return _build(kind, value, path, problems)
    if typing.get_origin(kind) is tuple:
        item = typing.get_args(kind)[0]
        if not isinstance(value, list):
            problems.append(Problem(path, f"must be an array, not {_what(value)}"))
            return _BAD
        out = []
        for i, element in enumerate(value):
            p = f"{path}[{i}]"
            if dataclasses.is_dataclass(item):
                built = _build(item, element, p, problems)
            elif not _scalar_ok(item, element):
                problems.append(Problem(p, f"must be {_TYPE_NAMES[item]}, not {_what(element)}"))
                built = _BAD
            else:
                reason = meta.get("item_check") and meta["item_check"](element)
                if reason:
                    problems.append(Problem(p, reason))
                built = element if not reason else _BAD
            out.append(built)
        return tuple(out) if _BAD not in out and None not in out else _BAD
    if not any(_scalar_ok(k, value) for k in kinds):
        wanted = " or ".join(_TYPE_NAMES[k] for k in kinds)
        problems.append(Problem(path, f"must be {wanted}, not {_what(value)}"))
        return _BAD
    reason = meta.get("check") and meta["check"](value)
    if reason:
        problems.append(Problem(path, reason))
        return _BAD
    return value


def _build(cls: type, data: Any, path: str, problems: list[Problem]) -> Any:
    if not isinstance(data, dict):
        problems.append(Problem(path, f"must be a table, not {_what(data)}"))
        return None
    hints = typing.get_type_hints(cls)
    fields = {f.name: f for f in dataclasses.fields(cls)}
    for name in data:
        if name not in fields:
            close = difflib.get_close_matches(name, list(fields), 1)
            hint = f" (did you mean '{close[0]}'?)" if close else ""
            problems.append(Problem(_join(path, name), f"unknown key{hint}"))
    kwargs = {}
    missing = False
    for name, f in fields.items():
        p = _join(path, name)
        if name not in data:
            if f.metadata.get("required"):
                problems.append(Problem(p, "missing (required)"))
                missing = True
            continue
        value = _convert(hints[name], data[name], p, dict(f.metadata), problems)
        if value is _BAD or value is None:
            missing = missing or bool(f.metadata.get("required"))
            continue
        kwargs[name] = value
    if missing:
        return None
    return cls(**kwargs)


def _cross_checks(cfg: Config) -> list[Problem]:
    out: list[Problem] = []
    wan, lan, wg = cfg.wan, cfg.lan, cfg.wireguard
    if wan.mode == "static" and not wan.address:
        out.append(Problem("wan.address", "missing: mode is static"))
    if wan.mode == "dhcp" and (wan.address or wan.gateway):
        out.append(Problem("wan.address" if wan.address else "wan.gateway",
                           "only for mode = static (mode is dhcp)"))
    if wan.gateway and wan.address:
        net = ipaddress.ip_interface(wan.address).network
        if ipaddress.ip_address(wan.gateway) not in net:
            out.append(Problem("wan.gateway", f"not inside {net}"))
    names = {"wan.interface": wan.interface}
    if lan is not None:
        names["lan.interface"] = lan.interface
        net = ipaddress.ip_interface(lan.address).network
        ends = [(k, v) for k, v in (("dhcp_start", lan.dhcp_start), ("dhcp_end", lan.dhcp_end))
                if v is not None]
        for k, v in ends:
            if ipaddress.ip_address(v) not in net:
                out.append(Problem(f"lan.{k}", f"not inside the LAN {net}"))
        if (lan.dhcp_start is None) != (lan.dhcp_end is None):
            out.append(Problem("lan.dhcp_end", "give both dhcp_start and dhcp_end, or neither"))
        elif (len(ends) == 2 and all(ipaddress.ip_address(v) in net for _, v in ends)
              and ipaddress.ip_address(lan.dhcp_start) > ipaddress.ip_address(lan.dhcp_end)):
            out.append(Problem("lan.dhcp_end", "comes before dhcp_start"))
    if wg.enabled:
        names["wireguard.interface"] = wg.interface
        if not wg.address:
            out.append(Problem("wireguard.address", "missing: the tunnel needs an address"))
        if wg.route == "prefixes" and not wg.prefixes:
            out.append(Problem("wireguard.prefixes", "missing: route = prefixes"))
        seen_keys: dict[str, int] = {}
        seen_nets: list[tuple[int, ipaddress.IPv4Network | ipaddress.IPv6Network]] = []
        for i, peer in enumerate(wg.peer):
            if peer.public_key in seen_keys:
                out.append(Problem(f"wireguard.peer[{i}].public_key",
                                   f"duplicate of wireguard.peer[{seen_keys[peer.public_key]}]"))
            seen_keys.setdefault(peer.public_key, i)
            for j, allowed in enumerate(peer.allowed_ips):
                net = ipaddress.ip_network(allowed)
                for other, onet in seen_nets:
                    if other != i and net.version == onet.version and net.overlaps(onet):
                        out.append(Problem(f"wireguard.peer[{i}].allowed_ips[{j}]",
                                           f"overlaps {onet} of wireguard.peer[{other}]"))
                seen_nets.append((i, net))
    else:
        if wan.shaping.attach == "tunnel":
            out.append(Problem("wan.shaping.attach", "tunnel, but wireguard is not enabled"))
        if cfg.selftest.iperf3_server:
            out.append(Problem("selftest.iperf3_server", "needs wireguard enabled"))
    by_name: dict[str, str] = {}
    for path, name in names.items():
        if name in by_name:
            out.append(Problem(path, f"same interface as {by_name[name]}"))
        by_name.setdefault(name, path)
    return out


def load_text(text: str, source: str = "keel.toml") -> Config:
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as err:
        raise ConfigError(source, [Problem("", f"TOML syntax error: {err}")]) from None
    problems: list[Problem] = []
    config = _build(Config, data, "", problems)
    if config is not None and not problems:
        problems += _cross_checks(config)
    if problems or config is None:
        raise ConfigError(source, problems or [Problem("", "invalid")])
    return config


def load_file(path: Path) -> Config:
    try:
        text = path.read_text()
    except OSError as err:
        raise ConfigError(str(path), [Problem("", f"cannot read: {err.strerror}")]) from None
    except UnicodeDecodeError:
        raise ConfigError(str(path), [Problem("", "not UTF-8 text")]) from None
    return load_text(text, str(path))
