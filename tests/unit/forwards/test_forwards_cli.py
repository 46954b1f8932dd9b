"""`keel forwards`: the list (a table as `keel peers` prints, or JSON), and
add/remove through the loader first and then `keel apply` on a router that
touches nothing (tests.unit.apply.fake_router): bad input is the loader's
message, exit 2, and nothing is run or written."""

from __future__ import annotations

import json

import pytest

from keel import cli
from keel.forwards import collect, probe
from keel.forwards.cli import table
from keel.forwards.collect import ForwardRow
from tests.unit.apply.fake_router import fake_router
from tests.unit.forwards.forwards_configs import HUB_TEXT, HUB_WITH_WEB

ROWS = (ForwardRow("web", "tcp", "8080", "192.168.77.50:80", "edge1", "outer", 3, "answers"),
        ForwardRow("game", "both", "27015-27020", "192.168.77.60", "edge1", "outer", None,
                   "no answer"),
        ForwardRow("dns", "udp", "5353", "192.168.77.53:53", None, "local", 0, "not checked"))


def test_the_table_in_columns():
    assert table(ROWS) == [
        "name  proto  public       target            via    role   hits  target status",
        "web   tcp    8080         192.168.77.50:80  edge1  outer  3     answers",
        "game  both   27015-27020  192.168.77.60     edge1  outer  -     no answer",
        "dns   udp    5353         192.168.77.53:53  -      local  0     not checked"]


def test_a_cell_is_escaped():
    odd = ForwardRow("w\x1b[2J", "tcp", "1", "10.0.0.1", "e\u202e", "local", None, "answers")
    assert table((odd,))[1].startswith("w\\x1b[2J  tcp    1       10.0.0.1  e\\u202e")


@pytest.fixture
def hub_router(monkeypatch):
    """The hub with forward web in force; its counters as a real nft lists them, its
    targets answering."""
    real = collect.collect_in_force

    def snapshot():
        return real(read=lambda: ({"fwd-web": (3, 180)}, ""), check=lambda a, p: probe.ANSWERS)

    monkeypatch.setattr(collect, "collect_in_force", snapshot)
    with fake_router(HUB_WITH_WEB) as router:
        yield router


def test_the_list_of_the_config_in_force(hub_router, capsys):
    assert cli.main(["forwards"]) == 0
    assert capsys.readouterr().out.splitlines() == [
        "name  proto  public  target            via    role   hits  target status",
        "web   tcp    8080    192.168.77.50:80  edge1  outer  3     answers"]
    assert cli.main(["forwards", "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == [
        {"name": "web", "protocol": "tcp", "public": "8080", "target": "192.168.77.50:80",
         "via": "edge1", "role": "outer", "hits": 3, "status": "answers"}]


def test_no_forwards_and_an_invalid_config(capsys, monkeypatch):
    monkeypatch.setattr(collect, "collect_in_force", lambda: collect.ForwardsSnapshot(hub=True))
    assert cli.main(["forwards"]) == 0
    assert capsys.readouterr().out.startswith("no forwards (keel forwards add NAME")
    monkeypatch.undo()
    with fake_router("[wan]\ninterface = 7\n"):
        assert cli.main(["forwards"]) == 2
    assert capsys.readouterr().err.startswith("keel forwards: the config in force is invalid: "
                                              "wan.interface: must be a string")


def test_add_checks_applies_and_writes_the_user_s_config(capsys):
    with fake_router(HUB_TEXT) as router:
        rc = cli.main(["forwards", "add", "web", "--port", "8080", "--to", "192.168.77.50:80",
                       "--via", "edge1"])
        out = capsys.readouterr().out
        assert rc == 0, out
        assert out.startswith("added forward web: tcp 8080 -> 192.168.77.50:80 via edge1\n"
                              "  +[[forward]]\n  +name = \"web\"\n")
        assert "the same [[forward]] goes on the edge edge1 too (keel forwards add there)" in out
        assert "recorded revision 1" in out
        written = router.user.read_text()
        assert '[[forward]]\nname = "web"\nport = 8080\nto = "192.168.77.50:80"' in written
        assert router.revisions.current().note == "forwards: add web"
        assert router.ran("nft", "-f")  # the ruleset was loaded
        assert (router.run_dir / "forwards.toml").read_text() == written


def test_remove_applies_the_config_without_it(capsys):
    with fake_router(HUB_WITH_WEB) as router:
        assert cli.main(["forwards", "remove", "web"]) == 0
        out = capsys.readouterr().out
        assert out.startswith("removed forward web: tcp 8080 -> 192.168.77.50:80 via edge1\n")
        assert "[[forward]]" not in router.user.read_text()


@pytest.mark.parametrize(("argv", "said"), [
    (["add", "x", "--port", "70000", "--to", "192.168.77.5"],
     "keel forwards add: forward[1].port: outside 1-65535"),
    (["add", "x", "--port", "8081", "--to", "10.1.1.1", "--via", "edge1"],
     "keel forwards add: forward[1].to: not in a LAN that edge1 routes"),
    (["add", "web", "--port", "8081", "--to", "192.168.77.5", "--via", "edge1"],
     "keel forwards add: forward[1].name: duplicate of forward[0]"),
    (["add", "x", "--port", "8081", "--to", "192.168.77.5", "--protocol", "sctp"],
     "keel forwards add: forward[1].protocol: "),
    (["remove", "nope"], "keel forwards remove: no forward named nope (there are: web)"),
])
def test_bad_input_is_exit_2_and_nothing_changes(capsys, argv, said):
    with fake_router(HUB_WITH_WEB) as router:
        assert cli.main(["forwards", *argv]) == 2
        assert router.runner.ran == []
        assert not router.user.exists() and not router.run_dir.exists()
    err = capsys.readouterr().err.splitlines()
    assert err[0].startswith(said), err
    assert err[-1].endswith(": nothing changed")


def test_confirm_and_dry_run_go_to_keel_apply(capsys, monkeypatch):
    from keel.apply import command

    armed: list[tuple[int, object]] = []
    monkeypatch.setattr(command, "_arm_rollback", lambda s, prev: armed.append((s, prev)))
    with fake_router(HUB_WITH_WEB) as router:
        assert cli.main(["forwards", "add", "game", "--port", "27015-27020", "--to",
                         "192.168.77.60", "--protocol", "both", "--via", "edge1",
                         "--confirm", "60"]) == 0
        assert 'name = "game"' in router.user.read_text()
        loads = len(router.ran("nft", "-f"))
        assert cli.main(["forwards", "remove", "game", "--dry-run"]) == 0
        assert 'name = "game"' in router.user.read_text()  # the dry run changed nothing
        assert len(router.ran("nft", "-f")) == loads
    assert armed == [(60, None)]
