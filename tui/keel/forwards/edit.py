"""Adding and removing a [[forward]] in a config, as pure functions: the new
config is written as keel writes a config (keel.config.dump, every key
spelled out) and checked by the loader itself before anyone writes or
applies it; a refusal is ForwardEditError, whose lines are the loader's
own ("forward[1].port: ..."), naming the key. `keel forwards add|remove`
and the console's tunnel screen both go through here."""

from __future__ import annotations

import dataclasses
import difflib
import re
from dataclasses import dataclass

from keel.config.dump import to_toml
from keel.config.errors import ConfigError
from keel.config.load import parse_config
from keel.config.schema import Config, Forward
from keel.shown import shown

SOURCE = "the config with this change"  # what the loader's messages name as the file
PROTOCOLS: tuple[str, ...] = next(
    f.metadata["rule"].choices for f in dataclasses.fields(Forward) if f.name == "protocol")
_PLAIN_PORT = re.compile(r"[1-9][0-9]{0,4}")


class ForwardEditError(ValueError):
    """The change is refused; `lines` say why, one problem a line."""

    def __init__(self, lines: list[str]) -> None:
        self.lines = list(lines) or ["refused"]
        super().__init__("\n".join(self.lines))


@dataclass(frozen=True)
class Change:
    """A validated change: the config before and after (as keel writes them)
    and what changed, in words."""

    old_text: str
    new_text: str
    config: Config  # the new config, as the loader read new_text
    said: str  # "added forward web: tcp 8080 -> 192.168.77.50:80 via edge-a"
    forward: Forward  # the one added or removed

    def lines(self) -> list[str]:
        """The changed lines of the config, "-" old and "+" new."""
        return changed_lines(self.old_text, self.new_text)


def port_value(text: str) -> int | str:
    """A port typed as text as the TOML value: 8080 as an integer; anything
    else ("8000-8010", "080", "x") as the string, for the loader to judge."""
    text = text.strip()
    return int(text) if _PLAIN_PORT.fullmatch(text) else text


def describe(forward: Forward) -> str:
    """"web: tcp 8080 -> 192.168.77.50:80 via edge-a (snat)", escaped."""
    via = f" via {shown(forward.via, 64)}" if forward.via else ""
    snat = " (snat)" if forward.snat else ""
    return (f"{shown(forward.name, 64)}: {shown(forward.protocol, 8)} "
            f"{shown(forward.port, 16)} -> {shown(forward.to, 64)}{via}{snat}")


def changed_lines(old_text: str, new_text: str) -> list[str]:
    out = []
    for line in difflib.unified_diff(old_text.splitlines(), new_text.splitlines(),
                                     lineterm="", n=0):
        if line.startswith(("---", "+++", "@@")) or not line[1:].strip():
            continue
        out.append(shown(line, 200))
    return out


def _validated(new: Config) -> tuple[str, Config]:
    text = to_toml(new)
    try:
        return text, parse_config(text, SOURCE).config
    except ConfigError as err:
        lines = [str(p) for p in err.problems]
        if err.more:
            lines.append(f"and {err.more} more problem{'' if err.more == 1 else 's'}")
        raise ForwardEditError(lines) from None


def find(config: Config, name: str) -> Forward | None:
    return next((f for f in config.forward if f.name == name), None)


def add_forward(config: Config, name: str, port: str | int, to: str,
                protocol: str = "tcp", via: str | None = None, snat: bool = False) -> Change:
    """`config` with one more forward, checked by the loader (raises
    ForwardEditError: the loader's problems, or a name taken already)."""
    name = name.strip()
    taken = next((i for i, f in enumerate(config.forward) if f.name == name), None)
    if taken is not None:
        raise ForwardEditError([f"forward[{len(config.forward)}].name: duplicate of "
                                f"forward[{taken}] (remove {shown(name, 64)} first, or "
                                "choose another name)"])
    forward = Forward(name=name, port=port_value(port) if isinstance(port, str) else port,
                      to=to.strip(), protocol=protocol.strip(),
                      via=(via.strip() or None) if via is not None else None, snat=snat)
    text, loaded = _validated(dataclasses.replace(config, forward=(*config.forward, forward)))
    return Change(to_toml(config), text, loaded, f"added forward {describe(forward)}", forward)


def remove_forward(config: Config, name: str) -> Change:
    """`config` without the forward `name` (raises ForwardEditError when
    there is none of that name)."""
    forward = find(config, name)
    if forward is None:
        known = ", ".join(shown(f.name, 64) for f in config.forward) or "none"
        raise ForwardEditError([f"no forward named {shown(name, 64)} (there are: {known})"])
    rest = tuple(f for f in config.forward if f is not forward)
    text, loaded = _validated(dataclasses.replace(config, forward=rest))
    return Change(to_toml(config), text, loaded, f"removed forward {describe(forward)}",
                  forward)
