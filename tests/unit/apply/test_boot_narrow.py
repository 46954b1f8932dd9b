"""A boot fallback never widens access (keel.apply.narrow): the config
applied after a newer one failed gets no SSH key, peer, open port, forward or
WAN service the newer one does not also allow; and the console and the
record say what was cut."""

from __future__ import annotations

import base64

from hypothesis import given, settings
from hypothesis import strategies as st

from keel.apply import boot, narrow
from keel.config.load import parse_config
from keel.doctor.checks import WARN, check_boot
from tests.unit.apply.fake_router import fake_router
from tests.unit.apply.test_boot import DEFAULT, hostname_applied


def ssh_key(seed: int, comment: str) -> str:
    blob = b"\x00\x00\x00\x0bssh-ed25519\x00\x00\x00\x20" + bytes([seed]) * 32
    return f"ssh-ed25519 {base64.b64encode(blob).decode()} {comment}"


OLD_KEY, KEPT_KEY = ssh_key(1, "removed@laptop"), ssh_key(2, "kept@laptop")


def config(keys: list[str], *, ssh_on_wan: bool, tcp: list[int], host: str,
           extra: str = "") -> str:
    return (DEFAULT.replace('hostname = "edge"', f'hostname = "{host}"')
            + f"\n[firewall]\nssh_on_wan = {str(ssh_on_wan).lower()}\nopen_tcp = {tcp}\n"
            + "\n[access]\nssh_keys = [" + ", ".join(f'"{k}"' for k in keys) + "]\n"
            + extra)


OLDER = config([OLD_KEY, KEPT_KEY], ssh_on_wan=True, tcp=[443, 8443], host="older")
# what the user has now, with a key this keel does not know (a newer keel's)
NEWER = config([KEPT_KEY + " renamed"], ssh_on_wan=False, tcp=[443], host="newer",
               extra="\n[history]\nkeep_days = 30\n")


def test_a_fallback_to_an_older_revision_is_cut_to_what_the_newer_config_allows():
    with fake_router(DEFAULT) as router:
        router.revisions.record(OLDER, "an earlier apply")
        router.user.write_text(NEWER)
        assert router.boot() == 0
        assert hostname_applied(router) == "older"
        (line,) = [s for s in router.said if "access cut" in s]
        assert line == ("keel: revision 1: access cut to what the newer config allows: "
                        "SSH key removed@laptop, firewall.ssh_on_wan, firewall.open_tcp 8443")
        record = boot.read_record(router.run_dir)
        assert record is not None and record.applied == "revision 1"
        assert record.narrowed == ("SSH key removed@laptop", "firewall.ssh_on_wan",
                                   "firewall.open_tcp 8443")
        (check,) = check_boot(record)
        assert check.status == WARN and "access cut" in check.detail
        # what is in force, and recorded as the new revision, is the cut copy
        current = router.revisions.current()
        assert current is not None
        in_force = parse_config(current.path.read_text()).config
        assert in_force.access.ssh_keys == (KEPT_KEY,)
        assert not in_force.firewall.ssh_on_wan and in_force.firewall.open_tcp == (443,)


def test_the_revision_in_force_is_applied_as_it_is_when_no_newer_config_can_be_read():
    with fake_router(DEFAULT) as router:
        router.revisions.record(OLDER, "the last apply")
        router.user.write_text("[wan\n")  # not TOML: says nothing
        assert router.boot() == 0
        assert hostname_applied(router) == "older"
        record = boot.read_record(router.run_dir)
        assert record is not None and record.narrowed == ()


def test_an_older_revision_is_cut_to_nothing_when_no_newer_config_can_be_read():
    with fake_router(DEFAULT) as router:
        router.revisions.record(OLDER, "an earlier apply")
        router.revisions.record("[wan\n", "the last apply (broken since)")
        router.user.write_text("[wan\n")
        assert router.boot() == 0
        assert hostname_applied(router) == "older"
        record = boot.read_record(router.run_dir)
        assert record is not None
        assert {"firewall.ssh_on_wan", "firewall.open_tcp 443", "firewall.open_tcp 8443",
                "SSH key removed@laptop", "SSH key kept@laptop"} <= set(record.narrowed)


def test_the_first_config_applied_is_never_cut():
    with fake_router(DEFAULT) as router:
        router.user.write_text(OLDER)
        assert router.boot() == 0
        record = boot.read_record(router.run_dir)
        assert record is not None and record.narrowed == () and not record.failures


# --- the pure part, on any access two configs can hold ----------------------------
PORTS = st.lists(st.integers(1, 65535), max_size=4, unique=True)
KEYS = st.lists(st.sampled_from([ssh_key(i, f"k{i}@host") for i in range(1, 6)]),
                max_size=4, unique=True)


@settings(max_examples=60, deadline=None)
@given(KEYS, st.booleans(), PORTS, KEYS, st.booleans(), PORTS)
def test_narrowing_never_leaves_more_than_both_allow(keys_a, wan_a, tcp_a, keys_b, wan_b, tcp_b):
    older = parse_config(config(keys_a, ssh_on_wan=wan_a, tcp=tcp_a, host="a")).config
    newer_text = config(keys_b, ssh_on_wan=wan_b, tcp=tcp_b, host="b")
    ceiling = narrow.ceiling_of(newer_text)
    assert ceiling is not None
    cut, said = narrow.narrow(older, ceiling)
    assert set(cut.access.ssh_keys) == set(keys_a) & set(keys_b)
    assert cut.firewall.ssh_on_wan == (wan_a and wan_b)
    assert set(cut.firewall.open_tcp) == set(tcp_a) & set(tcp_b)
    assert len(said) == (len(set(keys_a) - set(keys_b)) + (wan_a and not wan_b)
                         + len(set(tcp_a) - set(tcp_b)))
    assert narrow.narrow(cut, ceiling) == (cut, ())  # once is enough
    for line in said:  # names, never key material
        assert "AAAA" not in line


@settings(max_examples=60, deadline=None)
@given(st.text(max_size=300))
def test_any_text_as_a_newer_config_is_read_or_says_nothing(text):
    ceiling = narrow.ceiling_of(text)
    assert ceiling is None or isinstance(ceiling, narrow.Ceiling)


def test_a_cut_peer_takes_the_routes_only_it_took():
    """The routes of a peer cut by the narrowing go with it, and are said: a
    prefix only it covered; `route = "all"` with no kept peer on 0.0.0.0/0."""
    from keel.config.schema import Peer, WireGuard

    kept = Peer(public_key="K" * 43 + "=", allowed_ips=("10.77.0.1/32", "172.31.1.0/24"))
    wg = WireGuard(enabled=True, address=("10.77.0.2/24",), route="prefixes",
                   prefixes=("172.31.1.0/24", "172.31.2.0/24"), peer=(kept,))
    cut: list[str] = []
    out = narrow.routes_of_kept_peers(wg, cut)
    assert (out.route, out.prefixes) == ("prefixes", ("172.31.1.0/24",))
    assert cut == ["WireGuard route 172.31.2.0/24 (no kept peer takes it)"]
    cut = []
    out = narrow.routes_of_kept_peers(
        WireGuard(enabled=True, address=("10.77.0.2/24",), route="all", peer=(kept,)), cut)
    assert out.route == "none" and cut == ["WireGuard route all (no kept peer takes it)"]
    everything = Peer(public_key=kept.public_key, allowed_ips=("0.0.0.0/0",))
    cut = []
    out = narrow.routes_of_kept_peers(
        WireGuard(enabled=True, address=("10.77.0.2/24",), route="all", peer=(everything,)), cut)
    assert out.route == "all" and cut == []
