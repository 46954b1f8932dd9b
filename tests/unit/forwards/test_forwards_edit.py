"""Adding and removing a forward (keel.forwards.edit): the new config as keel
writes it, checked by the loader itself; a refusal is the loader's message,
naming the key, and the config given is left as it was."""

from __future__ import annotations

import pytest

from keel.config.load import parse_config
from keel.forwards import edit
from keel.forwards.edit import ForwardEditError
from tests.unit.forwards.forwards_configs import HUB_TEXT, HUB_WITH_WEB
from tests.unit.test_layering import TOUCHES_THE_SYSTEM, offenders, within


def hub(text: str = HUB_WITH_WEB):
    return parse_config(text, "hub").config


def test_add_a_range_for_both_protocols_behind_the_edge():
    config = hub()
    change = edit.add_forward(config, "game", "27015-27020", "192.168.77.60", "both", "edge1")
    assert change.said == "added forward game: both 27015-27020 -> 192.168.77.60 via edge1"
    assert change.lines() == ["+[[forward]]", '+name = "game"', '+port = "27015-27020"',
                              '+to = "192.168.77.60"', '+protocol = "both"', '+via = "edge1"',
                              "+snat = false"]
    assert [f.name for f in change.config.forward] == ["web", "game"]
    assert parse_config(change.new_text, "x").config == change.config  # what is written loads
    assert [f.name for f in config.forward] == ["web"]  # the one given is unchanged


def test_a_single_port_is_an_integer_and_the_defaults_are_the_schema_s():
    change = edit.add_forward(hub(HUB_TEXT), "ssh2", " 2222 ", "192.168.77.50:22", via="edge1",
                              snat=True)
    (added,) = change.config.forward
    assert (added.port, added.protocol, added.snat) == (2222, "tcp", True)
    assert change.said == "added forward ssh2: tcp 2222 -> 192.168.77.50:22 via edge1 (snat)"


@pytest.mark.parametrize(("args", "line"), [
    (("x", "70000", "192.168.77.5"), "forward[1].port: outside 1-65535"),
    (("x", "080", "192.168.77.5", "tcp", "edge1"), "forward[1].port: a port is written "
                                                     "without leading zeros"),
    (("x", "8081", "10.0.0.1", "tcp", "edge1"), "forward[1].to: not in a LAN that edge1 routes"),
    (("x", "22", "192.168.77.5", "tcp", "edge1"), "forward[1].port: tcp 22 is keel's own: SSH"),
    (("x", "8081", "192.168.77.5", "sctp", "edge1"), "forward[1].protocol: "),
    (("x", "8081", "192.168.77.5", "tcp", "nobody"), "forward[1].via: names neither this "
                                                       "router"),
    (("bad name", "8081", "192.168.77.5"), "forward[1].name: not a host name"),
    (("web", "9090", "192.168.77.51"), "forward[1].name: duplicate of forward[0] (remove "
                                       "web first, or choose another name)"),
])
def test_what_the_loader_refuses_names_the_key(args, line):
    config = hub()
    with pytest.raises(ForwardEditError) as err:
        edit.add_forward(config, *args)
    assert err.value.lines[0].startswith(line), err.value.lines
    assert [f.name for f in config.forward] == ["web"]


def test_remove_one_and_an_unknown_name():
    change = edit.remove_forward(hub(), "web")
    assert change.config.forward == ()
    assert change.said == "removed forward web: tcp 8080 -> 192.168.77.50:80 via edge1"
    assert change.lines()[:2] == ["-[[forward]]", '-name = "web"']
    with pytest.raises(ForwardEditError, match=r"no forward named ga\\x1bme \(there are: "
                                               r"web\)"):
        edit.remove_forward(hub(), "ga\x1bme")


def test_what_is_shown_of_a_change_is_escaped():
    with pytest.raises(ForwardEditError) as err:
        edit.add_forward(hub(), "x", "8081", "192.168.77.5\x1b[2J")
    assert "\x1b" not in str(err.value)


def test_the_edits_touch_no_system():
    """Pure: the CLI and the console both run them; only the loader judges."""
    assert offenders(lambda mod: not within(mod, "keel.forwards.edit"),
                     TOUCHES_THE_SYSTEM) == []
