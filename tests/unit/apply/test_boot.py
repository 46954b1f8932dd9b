"""`keel apply --boot` survives anything: a failure at any stage (reading,
decoding, parsing, validating, rendering, checking, applying) of one config
moves on to the next (the user's, the last recorded revision, the earlier
revisions newest first, the shipped default), says which file failed and why
in one line, and leaves a record that `keel doctor` shows."""

from __future__ import annotations

import json

import pytest

from keel.apply import boot, engine
from keel.config import paths
from keel.doctor.checks import FAIL, OK, WARN, check_boot
from keel.state.revisions import RevisionStore
from keel.system.commands import CommandTimeout
from tests.unit.apply.fake_router import FAKE_PRIVATE_KEY, FakeRouter, fake_router

DEFAULT = (paths.example_text("edge").split("[wireguard]")[0]
           .replace('attach = "tunnel"', 'attach = "wan"'))  # no tunnel
GOOD = DEFAULT.replace('hostname = "edge"', 'hostname = "good"')
USER = DEFAULT.replace('hostname = "edge"', 'hostname = "mine"')


def hostname_applied(router: FakeRouter) -> str:
    """The host name keel gave the DHCP client: which config is in force."""
    (argv,) = router.ran("udhcpc")[-1:]
    return next(a for a in argv if a.startswith("hostname:")).removeprefix("hostname:")


def with_revision(router: FakeRouter, text: str = GOOD) -> None:
    router.revisions.record(text, "an earlier apply")


def failure_lines(router: FakeRouter) -> list[str]:
    return [line for line in router.said if " failed: " in line]


# --- each stage fails: the next candidate is applied ------------------------------
def _not_a_file(router: FakeRouter) -> None:
    router.user.mkdir()


def _latin1(router: FakeRouter) -> None:
    router.user.write_bytes(b"[system]\nhostname = 'caf\xe9'\n")


STAGES = [
    ("read", _not_a_file, "cannot read: Is a directory"),
    ("decode", _latin1, "not UTF-8 text: byte 0xe9 at line 2, column 16 (byte offset 24)"),
    ("size", lambda r: r.user.write_bytes(b"#" * (2 << 20)), "larger than 1 MiB"),
    ("toml", lambda r: r.user.write_text("[wan\n"), "TOML syntax error at line 1"),
    ("nesting", lambda r: r.user.write_text("a = " + "[" * 500 + "]" * 500),
     "line 1: nested deeper than 32 levels"),
    ("integer", lambda r: r.user.write_text("[wan.shaping]\nupload_kbit = " + "7" * 5000),
     "line 2: an integer of 5000 digits (at most 20)"),
    ("schema", lambda r: r.user.write_text("[wan]\nmode = 'pppoe'\n[lan]\nbogus = 1\n"),
     "wan.mode: must be one of: dhcp, static (and 1 more problem)"),
]


@pytest.mark.parametrize(("stage", "break_it", "reason"), STAGES, ids=[s[0] for s in STAGES])
def test_a_bad_user_config_falls_back_to_the_last_revision(stage, break_it, reason):
    with fake_router(DEFAULT) as router:
        with_revision(router)
        break_it(router)
        assert router.boot() == 0
        assert hostname_applied(router) == "good"
        (line,) = failure_lines(router)
        assert line.startswith(f"keel: {router.user} failed: {reason}"), line
        assert line.endswith("; trying revision 1")
        assert router.said[-1] == "keel: applied revision 1 (fallback; `keel doctor` says why)"
        assert not any("Traceback" in s or "\n" in s for s in router.said)
        record = boot.read_record(router.run_dir)
        assert record is not None and record.applied == "revision 1"
        assert [f.source for f in record.failures] == [str(router.user)]
        assert record.failures[0].reason.startswith(reason)


def test_an_unexpected_exception_while_rendering_falls_back(monkeypatch):
    real_plan = engine.plan

    def plan(model, probe, private_key):
        if model.system.hostname == "mine":
            raise RuntimeError("the renderer tripped\nover two lines")
        return real_plan(model, probe, private_key)

    with fake_router(DEFAULT) as router:
        monkeypatch.setattr(engine, "plan", plan)
        with_revision(router)
        router.user.write_text(USER)
        assert router.boot() == 0
        assert hostname_applied(router) == "good"
        assert failure_lines(router) == [
            f"keel: {router.user} failed: RuntimeError: the renderer tripped over two lines; "
            "trying revision 1"]


def test_a_command_the_system_refuses_falls_back():
    # the user's config asks for CAKE, which this "kernel" refuses
    user = USER.replace("upload_kbit = 4500", "upload_kbit = 4600")
    with fake_router(DEFAULT, fails=lambda argv: "4600kbit" in argv) as router:
        with_revision(router)
        router.user.write_text(user)
        assert router.boot() == 0
        assert hostname_applied(router) == "good"
        (line,) = failure_lines(router)
        assert line.startswith(f"keel: {router.user} failed: error: `tc qdisc replace dev eth0 "
                               "root cake bandwidth 4600kbit")
        assert "refused (by the test); trying revision 1" in line


def test_nft_refusing_the_ruleset_falls_back():
    checks = []

    def fails(argv: list[str]) -> bool:  # the first check fails, the next pass
        if argv[:2] == ["nft", "-c"]:
            checks.append(argv)
            return len(checks) == 1
        return False

    with fake_router(DEFAULT, fails) as router:
        with_revision(router)
        router.user.write_text(USER)
        assert router.boot() == 0
        (line,) = failure_lines(router)
        assert line == (f"keel: {router.user} failed: firewall: nft -c refused the ruleset, "
                        "nothing changed: refused (by the test); trying revision 1")


def _timing_out(times: int):
    """A runner's `fails` that makes `nft -c` time out its first `times` calls."""
    calls = []

    def fails(argv: list[str]) -> bool:
        if argv[:2] == ["nft", "-c"]:
            calls.append(argv)
            if len(calls) <= times:
                raise CommandTimeout(argv, 30)
        return False
    return fails


def test_a_command_that_times_out_is_tried_again_not_taken_for_a_bad_config():
    # a starved VPS at boot: `nft -c` ran past its 30 s once (seen in the lab at a
    # load average of 20); the user's config is still the one applied
    with fake_router(DEFAULT, _timing_out(boot.TIMEOUT_TRIES - 1)) as router:
        with_revision(router)
        router.user.write_text(USER)
        assert router.boot() == 0
        assert hostname_applied(router) == "mine"
        assert failure_lines(router) == []
        again = [line for line in router.said if "trying it again" in line]
        assert len(again) == boot.TIMEOUT_TRIES - 1
        assert again[0] == (f"keel: {router.user}: `nft -c -f {router.run_dir}/ruleset.check.nft`"
                            " took more than 30 s: this machine is slow, not the config "
                            "wrong; trying it again")


def test_a_command_that_always_times_out_falls_back_after_the_last_try():
    with fake_router(DEFAULT, _timing_out(boot.TIMEOUT_TRIES)) as router:
        with_revision(router)
        router.user.write_text(USER)
        assert router.boot() == 0
        assert hostname_applied(router) == "good"
        (line,) = failure_lines(router)
        assert line.startswith(f"keel: {router.user} failed: ")
        assert "took more than 30 s" in line and line.endswith("trying revision 1")


def test_the_shipped_default_comes_last():
    with fake_router(DEFAULT) as router:
        with_revision(router, "[wan]\nmode = 1\n")
        router.user.write_text("[wan\n")
        assert router.boot() == 0
        assert hostname_applied(router) == "edge"
        assert [line.split(" failed: ")[0] for line in failure_lines(router)] == [
            f"keel: {router.user}", "keel: revision 1"]
        assert failure_lines(router)[1].endswith(f"; trying {router.default}")
        record = boot.read_record(router.run_dir)
        assert record is not None and record.applied == str(router.default)
        (check,) = check_boot(record)
        assert check.status == WARN
        assert check.detail == (
            f"booted on {router.default} because {router.user}: TOML syntax error at line 1, "
            "column 5: expected ']' at the end of a table declaration; revision 1: wan.mode: "
            "must be a string, not an integer")


def test_when_nothing_can_be_applied_it_says_so_and_the_doctor_fails():
    with fake_router("[wan]\nmode = 1\n") as router:
        router.user.write_bytes(b"\xff")
        assert router.boot() == 1
        assert router.said[-1] == "keel: no config could be applied: the router is NOT configured"
        assert failure_lines(router)[-1].endswith("; nothing left to try")
        (check,) = check_boot(boot.read_record(router.run_dir))
        assert check.status == FAIL and check.detail.startswith(
            "no config could be applied at boot: ")


def test_a_plain_boot_is_recorded_as_such():
    with fake_router(DEFAULT) as router:
        router.user.write_text(USER)
        assert router.boot() == 0
        assert hostname_applied(router) == "mine"
        assert router.said[-1] == f"keel: applied {router.user}"
        assert failure_lines(router) == []
        (check,) = check_boot(boot.read_record(router.run_dir))
        assert (check.status, check.detail) == (OK, f"booted on {router.user}")
        assert router.revisions.current().text() == USER


def test_no_user_config_and_no_revision_boots_the_default():
    with fake_router(DEFAULT) as router:
        assert router.boot() == 0
        assert router.said[-1] == f"keel: applied {router.default}"


def test_a_broken_revision_store_does_not_stop_the_boot(monkeypatch):
    def broken(self):
        raise PermissionError(13, "Permission denied")

    with fake_router(DEFAULT) as router:
        monkeypatch.setattr(RevisionStore, "current", broken)
        router.user.write_text("[wan\n")
        assert router.boot() == 0
        assert router.said[-1] == f"keel: applied {router.default} (fallback; `keel doctor` " \
                                  "says why)"
        record = boot.read_record(router.run_dir)
        assert [f.source for f in record.failures] == [str(router.user),
                                                       "the last recorded revision"]
        assert failure_lines(router)[1] == (
            "keel: the last recorded revision failed: PermissionError: [Errno 13] Permission "
            f"denied; trying {router.default}")


def test_the_store_is_not_read_when_the_users_config_applies(monkeypatch):
    def broken(self):
        raise PermissionError(13, "Permission denied")

    with fake_router(DEFAULT) as router:
        monkeypatch.setattr(RevisionStore, "list", broken)
        monkeypatch.setattr(RevisionStore, "current", broken)
        monkeypatch.setattr(RevisionStore, "record", broken)
        router.user.write_text(USER)
        assert router.boot() == 0
        assert router.said[-1] == f"keel: applied {router.user}"
        assert boot.read_record(router.run_dir).failures == ()


def test_a_broken_key_file_stops_only_configs_with_a_tunnel():
    tunnel = paths.example_text("edge")
    with fake_router(DEFAULT) as router:
        router.user.write_text(tunnel)
        router.key_path.write_text("not a key\n")
        router.key_path.chmod(0o600)
        assert router.boot() == 0
        (line,) = failure_lines(router)
        assert line.startswith(f"keel: {router.user} failed: wireguard: ")
        assert "not a WireGuard private key" in line
        assert hostname_applied(router) == "edge"
        assert router.said[-1].startswith(f"keel: applied {router.default}")


def test_the_boot_never_shows_a_secret():
    secret = "Q2hhbmdlVGhpc1NlY3JldEtleUZvclRoZVRlc3RzIQ="
    with fake_router(DEFAULT) as router:
        router.user.write_text(f"[wireguard]\nprivate_key = '{secret}'\n'{secret}' = 1\n")
        assert router.boot() == 0
        said = "\n".join(router.said) + (router.run_dir / boot.RECORD_NAME).read_text()
        assert secret not in said and secret[:20] not in said
        assert FAKE_PRIVATE_KEY not in said
        assert all(FAKE_PRIVATE_KEY not in " ".join(argv) for argv in router.runner.ran)


def test_a_removed_key_boots_the_users_config_with_a_warning():
    old = USER.replace("wash_ingress = true", "wash_ingress = true\necn_ingress = true")
    with fake_router(DEFAULT) as router:
        router.user.write_text(old)
        assert router.boot() == 0
        assert hostname_applied(router) == "mine"
        assert (f"warning: {router.user}: wan.shaping.ecn_ingress: removed in this version "
                "(CAKE has no ECN switch), ignored") in router.said
        assert router.said[-1] == f"keel: applied {router.user}"


def test_the_record_is_read_back_only_when_it_makes_sense(tmp_path):
    assert boot.read_record(tmp_path) is None
    (tmp_path / boot.RECORD_NAME).write_text("{not json")
    assert boot.read_record(tmp_path) is None
    (tmp_path / boot.RECORD_NAME).write_text(json.dumps({"applied": "x", "failures": [1]}))
    assert boot.read_record(tmp_path) is None
    assert check_boot(None) == []


# --- after a rollback to an older keel: the earlier revisions ---------------------
# keys a newer keel wrote, that this one does not know
NEWER = DEFAULT.replace("[system]\n", '[system]\nzone = "Europe/Paris"\n')
NEWEST = NEWER.replace('hostname = "edge"', 'hostname = "newest"')


def named(text: str, hostname: str) -> str:
    return text.replace('hostname = "edge"', f'hostname = "{hostname}"')


def chain_said(router: FakeRouter) -> list[tuple[str, str]]:
    """The failure lines on the console: (what failed, what came next)."""
    return [(line.removeprefix("keel: ").split(" failed: ")[0], line.rsplit("; ", 1)[1])
            for line in failure_lines(router)]


def test_the_newest_older_revision_this_version_reads_is_applied():
    with fake_router(DEFAULT) as router:
        for text in (named(DEFAULT, "first"), GOOD, named(NEWER, "three"), NEWEST):
            router.revisions.record(text, "an apply")
        router.user.write_text(named(NEWER, "user"))
        assert router.boot() == 0
        assert hostname_applied(router) == "good"
        assert chain_said(router) == [(str(router.user), "trying revision 4"),
                                      ("revision 4", "trying revision 3"),
                                      ("revision 3", "trying revision 2")]
        assert all(line.endswith("system.zone: unknown key; trying revision " + n)
                   for line, n in zip(failure_lines(router), "432", strict=True))
        assert router.said[-1] == "keel: applied revision 2 (fallback; `keel doctor` says why)"
        record = boot.read_record(router.run_dir)
        assert record.applied == "revision 2"
        assert [f.source for f in record.failures] == [str(router.user), "revision 4",
                                                       "revision 3"]
        # recorded as the revision in force, as a rollback is: nothing rewritten,
        # the user's config (the newer keel's) left as it is
        current = router.revisions.current()
        assert (current.number, current.note) == (5, "boot: fell back to revision 2")
        assert current.text() == GOOD
        assert [r.text() for r in router.revisions.list()[:4]] == [
            named(DEFAULT, "first"), GOOD, named(NEWER, "three"), NEWEST]
        assert router.user.read_text() == named(NEWER, "user")


def test_the_next_boot_starts_from_the_revision_the_last_one_fell_back_to():
    with fake_router(DEFAULT) as router:
        for text in (GOOD, NEWEST):
            router.revisions.record(text, "an apply")
        router.user.write_text(NEWEST)
        assert router.boot() == 0
        router.said.clear()
        assert router.boot() == 0
        assert chain_said(router) == [(str(router.user), "trying revision 3")]
        assert router.said[-1] == "keel: applied revision 3 (fallback; `keel doctor` says why)"
        assert len(router.revisions.list()) == 3  # nothing recorded again


def test_a_text_already_tried_is_not_tried_again():
    # a valid text the system refuses (CAKE at 4600 kbit/s): the user's, and
    # revisions 2, 4 and 5; revision 3 is broken, and so is 6, the same text
    refused = USER.replace("upload_kbit = 4500", "upload_kbit = 4600")
    with fake_router(DEFAULT, fails=lambda argv: "4600kbit" in argv) as router:
        for text in (GOOD, refused, "[wan\n", refused, refused, "[wan\n"):
            router.revisions.record(text, "an apply")
        router.revisions.set_current(6)
        router.user.write_text(refused)
        assert router.boot() == 0
        assert chain_said(router) == [(str(router.user), "trying revision 6"),
                                      ("revision 6", "trying revision 1")]
        assert router.said[-1] == "keel: applied revision 1 (fallback; `keel doctor` says why)"
        assert len([argv for argv in router.ran("tc") if "4600kbit" in argv]) == 1
        assert hostname_applied(router) == "good"


def test_revisions_after_the_current_one_are_not_tried():
    with fake_router(DEFAULT) as router:
        for text in (NEWEST, GOOD, named(DEFAULT, "later")):
            router.revisions.record(text, "an apply")
        router.revisions.set_current(1)
        router.user.write_text("[wan\n")
        assert router.boot() == 0
        assert chain_said(router) == [(str(router.user), "trying revision 1"),
                                      ("revision 1", f"trying {router.default}")]
        assert hostname_applied(router) == "edge"


def test_without_a_current_revision_the_newest_is_tried_first():
    with fake_router(DEFAULT) as router:
        for text in (GOOD, NEWEST):
            router.revisions.record(text, "an apply")
        (router.revisions.root / "current").unlink()
        router.user.write_text("[wan\n")
        assert router.boot() == 0
        assert chain_said(router) == [(str(router.user), "trying revision 2"),
                                      ("revision 2", "trying revision 1")]
        assert hostname_applied(router) == "good"


def test_at_most_max_revisions_are_tried():
    with fake_router(DEFAULT) as router:
        router.revisions.record(GOOD, "an apply")  # readable, but too old
        broken = [named(NEWER, f"n{n}") for n in range(boot.MAX_REVISIONS + 2)]
        for text in broken:
            router.revisions.record(text, "an apply")
        router.user.write_text("[wan\n")
        assert router.boot() == 0
        newest = len(broken) + 1
        tried = [f"revision {n}" for n in range(newest, newest - boot.MAX_REVISIONS, -1)]
        assert [name for name, _ in chain_said(router)] == [str(router.user), *tried]
        assert chain_said(router)[-1][1] == f"trying {router.default}"
        assert hostname_applied(router) == "edge"
        assert boot.read_record(router.run_dir).applied == str(router.default)


def test_an_unreadable_revision_is_one_failure_line():
    with fake_router(DEFAULT) as router:
        for text in (GOOD, NEWEST, NEWEST + "# again\n"):
            router.revisions.record(text, "an apply")
        path = router.revisions.get(2).path
        path.unlink()
        path.mkdir()
        router.user.write_text("[wan\n")
        assert router.boot() == 0
        assert chain_said(router) == [(str(router.user), "trying revision 3"),
                                      ("revision 3", "trying revision 2"),
                                      ("revision 2", "trying revision 1")]
        assert failure_lines(router)[2].startswith("keel: revision 2 failed: cannot read: ")
        assert hostname_applied(router) == "good"


@pytest.mark.parametrize("current_works", [False, True])
def test_a_store_whose_list_fails_still_reaches_the_default(monkeypatch, current_works):
    with fake_router(DEFAULT) as router:
        for text in (GOOD, NEWEST):
            router.revisions.record(text, "an apply")
        current = router.revisions.current()

        def broken(self):
            raise OSError(5, "Input/output error")

        monkeypatch.setattr(RevisionStore, "list", broken)
        if current_works:
            monkeypatch.setattr(RevisionStore, "current", lambda self: current)
        router.user.write_text("[wan\n")
        assert router.boot() == 0
        assert hostname_applied(router) == "edge"
        store = ("the earlier revisions" if current_works else "the last recorded revision")
        expected = [str(router.user), *(["revision 2"] if current_works else []), store]
        assert [name for name, _ in chain_said(router)] == expected
        assert [then for _, then in chain_said(router)] == [
            f"trying {name}" for name in expected[1:]] + [f"trying {router.default}"]
        assert failure_lines(router)[-1] == (
            f"keel: {store} failed: OSError: [Errno 5] Input/output error; "
            f"trying {router.default}")
        record = boot.read_record(router.run_dir)
        assert [f.source for f in record.failures] == expected
        assert record.applied == str(router.default)
