"""The firewall as keel loaded it, compared with the live one: `keel apply`
loads the ruleset again when it drifted (a rule added or removed by hand, a
leftover pairing rule, another table), not only when the config changed;
`keel doctor` names the drift. A pairing port waiting while the ruleset is
loaded again keeps what remains of its timeout. With nft on the host and a
network namespace to spare, the same on a real nftables."""

from __future__ import annotations

import json
import subprocess
import textwrap
from pathlib import Path

import pytest

from keel.apply import engine
from keel.doctor import checks
from keel.parse import nftlist
from keel.render import nft
from keel.system.commands import Runner
from tests.unit.netns import needs_nft, run_in_netns
from tests.unit.render.test_render import EDGE, LISTING, SteadyProbe

# what `nft -j list set inet keel pairing` printed on nftables 1.0.6 with one
# element added with a timeout, and one added by hand without
PAIRING_JSON = json.dumps({"nftables": [
    {"metainfo": {"version": "1.0.6", "json_schema_version": 1}},
    {"set": {"family": "inet", "name": "pairing", "table": "keel", "type": "inet_service",
             "handle": 2, "flags": ["timeout"],
             "elem": [{"elem": {"val": 51820, "timeout": 615, "expires": 412}}, 8080]}}]})


class PairingRunner(Runner):
    def __init__(self, listing: str, pairing: str) -> None:
        super().__init__()
        self.listing, self.pairing = listing, pairing

    def run(self, argv, **kwargs):
        self.ran.append(list(argv))
        out = {nft.LIST_STATELESS: self.listing, nft.LIST_PAIRING: self.pairing}.get(
            tuple(argv), "")
        return subprocess.CompletedProcess(list(argv), 0, out, "")


def loaded(tmp_path: Path) -> SteadyProbe:
    """A probe after keel loaded EDGE's ruleset and noted it."""
    probe = SteadyProbe(tmp_path)
    for step in engine.plan_firewall(EDGE, probe):
        if step.action is not None:
            assert step.action() == []
        for path, value in step.stamps:
            Path(path).parent.mkdir(parents=True, exist_ok=True)
            Path(path).write_text(value)
    assert engine.plan_firewall(EDGE, probe) == []
    return probe


def test_a_rule_added_by_hand_is_seen_and_the_ruleset_loaded_again(tmp_path):
    probe = loaded(tmp_path)
    probe.runner.listing = LISTING.replace(  # type: ignore[attr-defined]
        "\t\tiifname \"eth0\" tcp dport @pairing accept\n",
        "\t\tiifname \"eth0\" tcp dport @pairing accept\n"
        "\t\tiifname \"eth0\" tcp dport 51820 accept comment \"keel pair: open\"\n")
    load, note = engine.plan_firewall(EDGE, probe)
    assert "drifted from what keel loaded" in load.why
    assert "added in table inet keel, chain input: iifname \"eth0\" tcp dport 51820" in load.why
    assert load.commands == (("nft", "-f", str(tmp_path / "ruleset.nft")),)
    assert load.files[0][1] == nft.render_ruleset(EDGE)
    assert note.action is not None and note.commands == ()


@pytest.mark.parametrize("change, said", [
    (lambda t: t.replace("\t\tiifname \"eth0\" tcp dport @pairing accept\n", ""),
     "gone from table inet keel, chain input: iifname \"eth0\" tcp dport @pairing accept"),
    (lambda t: t + "table ip nat {\n\tchain pre {\n\t}\n}\n",
     "added in table ip nat: table ip nat {"),
    (lambda t: "", "gone from table inet keel"),  # the early boot ruleset, or none
])
def test_a_rule_or_table_gone_or_added_is_drift(tmp_path, change, said):
    probe = loaded(tmp_path)
    probe.runner.listing = change(LISTING)  # type: ignore[attr-defined]
    load, _ = engine.plan_firewall(EDGE, probe)
    assert said in load.why


def test_no_record_of_the_load_means_load_again(tmp_path):
    probe = loaded(tmp_path)
    (tmp_path / "state" / engine.LIVE_STAMP).unlink()
    load, _ = engine.plan_firewall(EDGE, probe)
    assert "none recorded as loaded by keel" in load.why


def test_a_waiting_pairing_port_is_carried_over_with_what_remains_of_its_timeout(tmp_path):
    probe = SteadyProbe(tmp_path)
    probe.runner = PairingRunner(LISTING, PAIRING_JSON)
    load, _ = engine.plan_firewall(EDGE, probe)
    assert "the pairing port waiting keeps its 412 s" in load.why
    text = load.files[0][1]
    # the element added by hand without a timeout is not carried over
    assert "\t\telements = { 51820 timeout 412s }\n" in text and "8080" not in text


def test_the_listing_is_noted_right_after_the_load_and_dropped_when_unreadable(tmp_path):
    runner = PairingRunner(LISTING + "\n\n", "")
    assert engine.record_live_ruleset(runner, tmp_path) == []
    assert (tmp_path / "state" / engine.LIVE_STAMP).read_text() == \
        nftlist.normalized(LISTING) + "\n"
    runner.listing = ""
    assert "could not list the ruleset back" in engine.record_live_ruleset(runner, tmp_path)[0]
    assert not (tmp_path / "state" / engine.LIVE_STAMP).exists()


def test_set_elements_and_drift_in_words():
    assert nftlist.set_elements(PAIRING_JSON) == [nftlist.Element(51820, 615, 412),
                                                  nftlist.Element(8080, None, None)]
    assert nftlist.set_elements("[[[[") == [] and nftlist.set_elements("[1]") == []
    assert nftlist.drift(LISTING, LISTING + "\n") == []
    swapped = LISTING.replace("\t\ttype inet_service\n\t\tflags timeout\n",
                              "\t\tflags timeout\n\t\ttype inet_service\n")
    assert nftlist.drift(LISTING, swapped) == ["the same rules in another order"]
    hostile = LISTING.replace("accept\n", "accept comment \"\x1b[2J\"\n")
    assert "\x1b" not in " ".join(nftlist.drift(LISTING, hostile))


def _state(**kw) -> checks.RulesetState:
    base = {"rendered_sha": "a", "loaded_sha": "a", "recorded": LISTING, "live": LISTING}
    return checks.RulesetState(**{**base, **kw})


def test_doctor_names_the_drift_and_a_pairing_port_without_a_timeout():
    (ok,) = checks.check_firewall(_state())
    assert ok.status == checks.OK
    (bad,) = checks.check_firewall(_state(live=LISTING.replace(
        "@pairing accept", "@pairing accept\n\t\ttcp dport 8080 accept")))
    assert bad.status == checks.FAIL and bad.detail.startswith(
        "drift from what keel loaded: added in table inet keel, chain input: "
        "tcp dport 8080 accept")
    assert checks.check_firewall(_state(loaded_sha="b"))[0].detail.startswith(
        "the ruleset loaded is not this config's")
    assert "has not loaded its ruleset" in checks.check_firewall(_state(recorded=None))[0].detail
    _, waiting, forever = checks.check_firewall(
        _state(pairing=tuple(nftlist.set_elements(PAIRING_JSON))))
    assert (waiting.status, forever.status) == (checks.INFO, checks.FAIL)
    assert "closes by itself in 412 s" in waiting.detail and "no timeout" in forever.detail


# --- on a real nftables, in a network namespace of its own -------------------------
REAL = textwrap.dedent("""
    import json, subprocess, sys
    sys.path.insert(0, sys.argv[1])
    from pathlib import Path
    from keel.apply import engine
    from keel.parse import nftlist
    from keel.pair.port import PairingPort
    from keel.render import nft
    from keel.system.commands import Runner
    from tests.unit.render.test_render import EDGE
    run_dir, runner, out = Path(sys.argv[2]), Runner(), {}
    subprocess.run(["ip", "link", "add", "eth0", "type", "dummy"], check=False)
    path = run_dir / "ruleset.nft"
    path.write_text(nft.render_ruleset(EDGE))
    runner.run(["nft", "-c", "-f", str(path)])
    runner.run(["nft", "-f", str(path)])
    engine.record_live_ruleset(runner, run_dir)
    probe = engine.Probe(runner, run_dir)
    port = PairingPort(51820, 600, runner)
    port.open()
    out["waiting"] = probe.pairing_waiting()
    out["drift_while_waiting"] = nftlist.drift(probe.stamp(engine.LIVE_STAMP),
                                               probe.nft_listing())
    path.write_text(nft.render_ruleset(EDGE, probe.pairing_waiting()))
    runner.run(["nft", "-f", str(path)])  # keel apply loads it again meanwhile
    out["after_reload"] = probe.pairing_waiting()
    runner.run(["nft", "add", "element", "inet", "keel", "pairing", "{ 8080 }"])
    out["strays"] = [nftlist.stray(e, nft.PAIRING_LONGEST_S)
                     for e in engine.pairing_elements(runner)]
    runner.run(["nft", "delete", "element", "inet", "keel", "pairing", "{ 8080 }"])
    out["closed"] = port.close()
    out["after_close"] = probe.pairing_waiting()
    port.is_open = True  # as if it had expired: nothing to delete, still "closed"
    out["close_again"] = port.close()
    runner.run(["nft", "add", "rule", "inet", "keel", "input", "tcp", "dport", "8080", "accept"])
    out["drift"] = nftlist.drift(probe.stamp(engine.LIVE_STAMP), probe.nft_listing())
    print(json.dumps(out))
""")


@needs_nft
def test_on_a_real_nftables(tmp_path):
    out = run_in_netns(REAL, tmp_path)
    (port, left), = out["waiting"]
    assert port == 51820 and 600 < left <= 615
    assert out["drift_while_waiting"] == []  # an element is not drift
    (port, left), = out["after_reload"]
    assert port == 51820 and 590 < left <= 615
    # an element added by hand, as the kernel lists it: not keel's; the waiting one is
    assert sorted(out["strays"], key=str) == [None, "TCP 8080 with no timeout"]
    assert out["closed"] == out["close_again"] == "TCP 51820 closed"
    assert out["after_close"] == []
    assert out["drift"] == ["added in table inet keel, chain input: tcp dport 8080 accept"]


# --- the pairing set's contents: `nft -s -t` leaves them out, so they are read apart ----
def _pairing(*elems) -> str:
    return json.dumps({"nftables": [{"set": {"family": "inet", "name": "pairing",
                                             "table": "keel", "elem": list(elems)}}]})


WAITING = {"elem": {"val": 51820, "timeout": 615, "expires": 412}}


def test_a_pairing_element_without_a_timeout_is_drift_and_apply_removes_it(tmp_path):
    """Was []: the listing matched, the port stayed open forever while
    keel doctor failed on it (issue 25)."""
    probe = loaded(tmp_path)
    probe.runner = PairingRunner(LISTING, PAIRING_JSON)  # 8080 with no timeout
    load, note = engine.plan_firewall(EDGE, probe)
    assert load.why.startswith("load the nftables ruleset again: the pairing set holds what "
                               "keel pair did not add (TCP 8080 with no timeout)")
    assert "the pairing port waiting keeps its 412 s" in load.why
    text = load.files[0][1]  # keel's element carried over, the stray not
    assert "\t\telements = { 51820 timeout 412s }\n" in text and "8080" not in text
    assert load.commands == (("nft", "-f", str(tmp_path / "ruleset.nft")),)
    assert note.action is not None


@pytest.mark.parametrize("elem, why", [
    ({"elem": {"val": 8080, "timeout": 86400, "expires": 86000}},
     "TCP 8080 with a timeout of 86400 s (keel pair sets 615 s at most)"),
    ({"elem": {"val": 51820, "timeout": 616, "expires": 600}},
     "TCP 51820 with a timeout of 616 s"),
    ({"elem": {"val": 51820, "expires": 600}}, "TCP 51820 with no timeout"),
    (22, "TCP 22 with no timeout"),
    ({"elem": {"val": "ssh"}}, 'an element that is not a port ({"elem": {"val": "ssh"}})'),
])
def test_any_element_keel_pair_did_not_add_is_drift(tmp_path, elem, why):
    probe = loaded(tmp_path)
    probe.runner = PairingRunner(LISTING, _pairing(elem))
    (load, _) = engine.plan_firewall(EDGE, probe)
    assert why in load.why and "elements =" not in load.files[0][1]


def test_a_waiting_pairing_port_alone_is_not_drift(tmp_path):
    probe = loaded(tmp_path)
    probe.runner = PairingRunner(LISTING, _pairing(WAITING))
    assert engine.plan_firewall(EDGE, probe) == []
    probe.runner = PairingRunner(LISTING, "")  # nft could not list the set: as before
    assert engine.plan_firewall(EDGE, probe) == []


@pytest.mark.parametrize("elems", [
    (), (WAITING,), (8080,), (WAITING, 8080),
    ({"elem": {"val": 8080, "timeout": 3600, "expires": 3000}},),
    ({"elem": {"val": 51820, "timeout": 615, "expires": 1}},),
    ({"elem": {"val": [1, 2]}},),
])
def test_doctor_and_apply_agree_on_the_pairing_set(tmp_path, elems):
    """What keel doctor fails on in the pairing set, keel apply removes;
    what it lets be, apply leaves alone."""
    probe = loaded(tmp_path)
    probe.runner = PairingRunner(LISTING, _pairing(*elems))
    plan = engine.plan_firewall(EDGE, probe)
    found = checks.check_firewall(_state(pairing=tuple(
        nftlist.set_elements(_pairing(*elems)))))
    failed = [c for c in found if c.status == checks.FAIL]
    assert bool(plan) == bool(failed)
    assert all("\n" not in c.detail and "keel apply removes it" in c.detail for c in failed)


def test_keel_pair_never_sets_a_timeout_apply_would_take_for_a_stray():
    from keel.pair import port, run

    assert nft.PAIRING_LONGEST_S == run.WAIT_S + port.MARGIN_S
    assert port.PairingPort(51820, run.WAIT_S).timeout_s == nft.PAIRING_LONGEST_S
    assert port.PairingPort(51820, 10 * run.WAIT_S).timeout_s == nft.PAIRING_LONGEST_S
    assert port.PairingPort(51820, 20).timeout_s == 35
