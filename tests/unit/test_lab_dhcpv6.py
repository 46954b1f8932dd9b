"""The lab's IPv6 internet side, without running it: tests/lab/dhcpv6.py's
configs, commands and route parser, tests/lab/labtools.py's recipe
(tests/unit/test_dhcpv6_pd_netns.py runs them for real)."""

from __future__ import annotations

import ipaddress
import json
import shutil
import subprocess
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tests.lab import dhcpv6, labtools
from tests.lab.paths import LabError

Net = ipaddress.IPv6Network


# --- the address plan ---------------------------------------------------------

def test_the_pools_are_in_the_delegation_space_apart_from_the_hubs_prefix():
    hub = Net("2001:db8:100::/48")  # the model's example routed prefix is 2001:db8:100::/56
    for pool in (dhcpv6.POOL_FIRST, dhcpv6.POOL_SECOND):
        assert pool.subnet_of(dhcpv6.PD_SPACE)
        assert not pool.overlaps(hub)
        assert not pool.overlaps(dhcpv6.ISP_UP6.network)
    assert not dhcpv6.POOL_FIRST.overlaps(dhcpv6.POOL_SECOND)


# --- settings that cannot work are refused ------------------------------------

@pytest.mark.parametrize(("kwargs", "message"), [
    ({"interface": "eth 0"}, "interface: 'eth 0' is no interface name"),
    ({"interface": "x" * 16}, "is no interface name"),
    ({"interface": ""}, "is no interface name"),
    ({"link": ipaddress.IPv6Interface("2001:db8:0:1::1/60")}, "not in a /64"),
    ({"delegated_length": 48}, "does not cut 2001:db8:110::/48"),
    ({"delegated_length": 65}, "prefixes of at most /64"),
    ({"pool": Net("2001:db8::/32")}, "overlaps the link's 2001:db8:0:1::/64"),
])
def test_an_isp_that_cannot_work_is_refused(kwargs, message):
    with pytest.raises(dhcpv6.Dhcpv6Error, match=message.replace("(", r"\(")):
        dhcpv6.Isp6(**{"interface": "eth0", **kwargs})


@pytest.mark.parametrize("times", [(0, 20, 30, 60), (20, 20, 30, 60), (10, 40, 30, 60),
                                   (10, 20, 70, 60)])
def test_lifetimes_out_of_order_are_refused(times):
    with pytest.raises(dhcpv6.Dhcpv6Error, match="renew < rebind <= preferred <= valid"):
        dhcpv6.Lifetimes(*times)


# --- what the servers read ----------------------------------------------------

def test_kea_config_delegates_56s_of_the_pool_with_a_short_renew_timer():
    conf = json.loads(dhcpv6.kea_config(dhcpv6.Isp6("eth1")))["Dhcp6"]
    assert conf["interfaces-config"]["interfaces"] == ["eth1"]
    assert (conf["renew-timer"], conf["rebind-timer"], conf["preferred-lifetime"],
            conf["valid-lifetime"]) == (10, 20, 1200, 2400)
    # a LAN host's address stays preferred from one advertisement to the next
    assert conf["preferred-lifetime"] > dhcpv6.LAN_RA_INTERVAL
    (subnet,) = conf["subnet6"]
    assert subnet["subnet"] == "2001:db8:0:1::/64" and subnet["interface"] == "eth1"
    assert subnet["pd-pools"] == [{"prefix": "2001:db8:110::", "prefix-len": 48,
                                   "delegated-len": 56}]
    assert subnet["pools"] == [{"pool": "2001:db8:0:1::1000-2001:db8:0:1::1fff"}]
    # Kea 2.6.3 takes a lease file in its data directory only, hooks in its own
    assert conf["lease-database"]["name"] == "/var/lib/kea/kea-leases6.csv"
    (hook,) = conf["hooks-libraries"]
    assert hook["library"].startswith(dhcpv6.KEA_HOOKS_DIR + "/")
    assert hook["parameters"]["name"] == dhcpv6.ROUTE_HOOK
    assert conf["server-id"]["persist"] is False


def test_renumbered_changes_the_pool_alone():
    isp = dhcpv6.Isp6("eth1")
    new = isp.renumbered(dhcpv6.POOL_SECOND)
    assert new.pool == dhcpv6.POOL_SECOND and new.interface == "eth1"
    pd = json.loads(dhcpv6.kea_config(new))["Dhcp6"]["subnet6"][0]["pd-pools"]
    assert pd[0]["prefix"] == "2001:db8:120::"


def test_radvd_config_sets_m_and_a_flags_on_the_links_prefix():
    conf = dhcpv6.radvd_config(dhcpv6.Isp6("eth1"))
    assert conf.startswith("interface eth1 {")
    assert "AdvManagedFlag on;" in conf and "AdvAutonomous on;" in conf
    assert "prefix 2001:db8:0:1::/64 {" in conf
    assert conf.count("{") == conf.count("}")


def test_the_route_hook_is_posix_shell():
    script = dhcpv6.route_hook()
    assert script.startswith("#!/bin/sh\n")
    assert subprocess.run(["sh", "-n"], input=script, text=True, check=False).returncode == 0
    if shutil.which("shellcheck"):
        proc = subprocess.run(["shellcheck", "-s", "sh", "-"], input=script, text=True,
                              capture_output=True, check=False)
        assert proc.returncode == 0, proc.stdout


def hook_calls(tmp_path: Path, event: str, env: dict[str, str]) -> list[str]:
    """The ip commands the hook runs for `event` (a stand-in ip on PATH)."""
    bindir = tmp_path / "bin"
    bindir.mkdir(exist_ok=True)
    calls = tmp_path / "calls"
    fake = bindir / "ip"
    fake.write_text(f'#!/bin/sh\necho "$*" >> {calls}\n')
    fake.chmod(0o755)
    script = dhcpv6.route_hook().replace(dhcpv6.ROUTE_LOG, str(tmp_path / "log"))
    subprocess.run(["sh", "-c", script, "pd-route", event], check=True,
                   env={"PATH": f"{bindir}:/usr/bin:/bin", **env})
    return calls.read_text().splitlines() if calls.exists() else []


def test_the_route_hook_routes_delegated_prefixes_only(tmp_path):
    committed = {"QUERY6_REMOTE_ADDR": "fe80::1", "QUERY6_IFACE_NAME": "eth1",
                 "LEASES6_SIZE": "2", "LEASES6_AT0_TYPE": "IA_NA",
                 "LEASES6_AT0_ADDRESS": "2001:db8:0:1::1000", "LEASES6_AT0_PREFIX_LEN": "128",
                 "LEASES6_AT1_TYPE": "IA_PD", "LEASES6_AT1_ADDRESS": "2001:db8:110::",
                 "LEASES6_AT1_PREFIX_LEN": "56", "DELETED_LEASES6_SIZE": "1",
                 "DELETED_LEASES6_AT0_TYPE": "IA_PD",
                 "DELETED_LEASES6_AT0_ADDRESS": "2001:db8:110:100::",
                 "DELETED_LEASES6_AT0_PREFIX_LEN": "56"}
    assert hook_calls(tmp_path, "leases6_committed", committed) == [
        "-6 route replace 2001:db8:110::/56 via fe80::1 dev eth1 proto dhcp",
        "-6 route del 2001:db8:110:100::/56 proto dhcp"]


@pytest.mark.parametrize(("event", "verb"), [
    ("lease6_renew", "replace"), ("lease6_rebind", "replace"), ("lease6_expire", "del"),
    ("lease6_release", "del"), ("lease6_decline", "del")])
def test_the_route_hook_follows_each_lease_event(tmp_path, event, verb):
    lease = {"LEASE6_TYPE": "IA_PD", "LEASE6_ADDRESS": "2001:db8:110::",
             "LEASE6_PREFIX_LEN": "56", "QUERY6_REMOTE_ADDR": "fe80::1",
             "QUERY6_IFACE_NAME": "eth1"}
    (call,) = hook_calls(tmp_path, event, lease)
    assert call.startswith(f"-6 route {verb} 2001:db8:110::/56 ")
    address = tmp_path / "ia_na"
    address.mkdir()
    assert hook_calls(address, event, {**lease, "LEASE6_TYPE": "IA_NA"}) == []


def test_the_route_hook_ignores_other_events(tmp_path):
    assert hook_calls(tmp_path, "addr6_register", {"LEASE6_TYPE": "IA_PD"}) == []


# --- commands -------------------------------------------------------------------

def test_commands_name_the_paths_in_the_chroot_and_outside():
    root = "/run/labtools"
    assert dhcpv6.radvd_command(root).startswith("chroot /run/labtools /usr/sbin/radvd -C "
                                                 "/run/keel-lab/radvd.conf")
    assert dhcpv6.radvd_command(None).startswith("/usr/sbin/radvd -C /run/keel-lab/")
    kea = dhcpv6.kea_command(root)
    assert kea.startswith("setsid -f chroot /run/labtools /usr/bin/env KEA_PIDFILE_DIR=/run/kea")
    assert kea.endswith("> /run/labtools/run/keel-lab/kea-dhcp6.log 2>&1 < /dev/null")
    assert "/run/labtools/run/kea/kea-dhcp6.kea-dhcp6.pid" in dhcpv6.stop_kea_command(root)
    drop = dhcpv6.drop_leases_command(root)
    assert "rm -f /run/labtools/var/lib/kea/kea-leases6.csv " in drop
    assert drop.endswith("ip -6 route flush proto dhcp")
    for cmd in (dhcpv6.prepare_command(root), dhcpv6.ready_command(root),
                dhcpv6.stop_command(root), dhcpv6.network_command(dhcpv6.Isp6("eth1"))):
        assert subprocess.run(["sh", "-n", "-c", cmd], check=False).returncode == 0, cmd


def test_stop_waits_for_the_process_to_end(tmp_path):
    # a daemon, as Kea runs: not this process's child (its parent reaps it)
    pid = int(subprocess.run(["sh", "-c", "sleep 30 >/dev/null 2>&1 & echo $!"], check=True,
                             capture_output=True, text=True).stdout)
    pidfile = tmp_path / "kea.pid"
    pidfile.write_text(f"{pid}\n")
    cmd = dhcpv6.stop_kea_command(None).replace(dhcpv6.KEA_PID, str(pidfile))
    assert subprocess.run(["sh", "-c", cmd], check=False).returncode == 0
    assert not Path(f"/proc/{pid}").exists()
    # no pid file: nothing to stop
    pidfile.unlink()
    assert subprocess.run(["sh", "-c", cmd], check=False).returncode == 0


class FakeGuest:
    def __init__(self) -> None:
        self.log: list[tuple[str, str]] = []

    def check(self, cmd: str, timeout: float = 30) -> str:
        self.log.append(("check", cmd))
        return ""

    def until(self, cmd: str, timeout: float = 30, every: float = 0.5) -> str:
        self.log.append(("until", cmd))
        return ""

    def write_file(self, path: str, content: str) -> None:
        self.log.append(("write", path))


def test_start_mounts_the_disk_then_writes_then_starts_radvd_and_kea():
    guest = FakeGuest()
    dhcpv6.start(guest, dhcpv6.Isp6("eth1"))
    steps = [(kind, cmd.split()[0] if kind != "write" else cmd) for kind, cmd in guest.log]
    assert steps == [
        ("check", "if"), ("check", "ip"), ("check", "mkdir"),
        ("write", "/run/labtools/run/keel-lab/kea-dhcp6.conf"),
        ("write", "/run/labtools/run/keel-lab/radvd.conf"),
        ("write", "/run/labtools/run/keel-lab/pd-route"), ("check", "chmod"),
        ("check", "chroot"), ("check", "setsid"), ("until", "grep")]
    assert guest.log[0][1] == labtools.mount_command()


def test_renumber_stops_kea_drops_leases_and_starts_it_on_the_new_pool():
    guest = FakeGuest()
    new = dhcpv6.renumber(guest, dhcpv6.Isp6("eth1"), dhcpv6.POOL_SECOND)
    assert new.pool == dhcpv6.POOL_SECOND
    cmds = [cmd for _, cmd in guest.log]
    assert cmds[0] == dhcpv6.stop_kea_command(labtools.ROOT)
    assert cmds[1] == dhcpv6.drop_leases_command(labtools.ROOT)
    assert cmds[2] == "/run/labtools/run/keel-lab/kea-dhcp6.conf"
    assert cmds[-2] == dhcpv6.kea_command(labtools.ROOT)
    assert len(cmds) == 5  # radvd goes on as it was


# --- the isp's routes -----------------------------------------------------------

# `ip -j -6 route show proto dhcp` on this host (iproute2 6.1), one delegation
CAPTURED = ('[{"dst":"2001:db8:110::/56","gateway":"fe80::a0b2:92ff:fe8e:92d","dev":"isp0",'
            '"protocol":"dhcp","metric":1024,"flags":[],"pref":"medium"}]\n')


def test_routes_parse_as_ip_lists_them():
    assert dhcpv6.parse_routes(CAPTURED) == {
        Net("2001:db8:110::/56"): ("fe80::a0b2:92ff:fe8e:92d", "isp0")}
    assert dhcpv6.parse_routes("") == {}
    assert dhcpv6.parse_routes("[]") == {}


@pytest.mark.parametrize(("text", "message"), [
    ("{", "not JSON"),
    ("{}", "not a JSON list"),
    ("[1]", r"\[0\]: not an object"),
    ('[{"dst": "2001:db8::/56", "dev": "x"}]', "not all text"),
    ('[{"dst": "10.0.0.0/8", "gateway": "fe80::1", "dev": "x"}]', "no IPv6 prefix"),
    ('[{"dst": "2001:db8::1/56", "gateway": "fe80::1", "dev": "x"}]', "no IPv6 prefix"),
    ('[{"dst": "2001:db8::/56", "gateway": "fe80::1", "dev": "a b"}]', "no interface name"),
    ('[{"dst": "2001:db8::/56", "gateway": "fe80::1", "dev": "x"},'
     ' {"dst": "2001:db8::/56", "gateway": "fe80::2", "dev": "x"}]',
     r"\[1\]: 2001:db8::/56 listed"),
    ("[" * 100_000, "not JSON"),
    (" " * (dhcpv6.MAX_ROUTES_TEXT + 1), "longer than"),
    (json.dumps([{}] * (dhcpv6.MAX_ROUTES + 1)), "more than 1024 routes"),
])
def test_a_listing_that_is_not_routes_is_refused(text, message):
    with pytest.raises(dhcpv6.Dhcpv6Error, match=message):
        dhcpv6.parse_routes(text)


JSONISH = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(
        st.sampled_from(["dst", "gateway", "dev", "x"]), inner, max_size=4),
    max_leaves=12)


@given(st.one_of(st.text(max_size=300), JSONISH.map(json.dumps)))
def test_any_text_parses_or_raises_its_own_error(text):
    try:
        routes = dhcpv6.parse_routes(text)
    except dhcpv6.Dhcpv6Error:
        return
    assert all(isinstance(k, Net) for k in routes)


# --- the tools disk ------------------------------------------------------------

def test_the_tools_disk_takes_the_dev_images_suite_and_mirror():
    suite, mirror = labtools.build_sh_settings(labtools.BUILD_SH.read_text())
    assert suite == "trixie" and mirror.startswith("http")
    with pytest.raises(LabError, match="SUITE"):
        labtools.build_sh_settings("SUITE=\n")


def test_the_tools_disk_is_keyed_by_its_packages():
    key = labtools.cache_key("trixie")
    assert key == labtools.cache_key("trixie", tuple(reversed(labtools.PACKAGES)))
    assert key != labtools.cache_key("trixie", (*labtools.PACKAGES, "tcpdump"))
    assert key != labtools.cache_key("forky")
    assert labtools.disk_path("trixie").name == f"labtools-trixie-{key}.squashfs"


def test_the_mount_command_mounts_once_and_checks_the_disk():
    cmd = labtools.mount_command("/dev/vdc", "/mnt/t")
    assert cmd.startswith("if ! mountpoint -q /mnt/t; then mkdir -p /mnt/t && "
                          "mount -t squashfs -o ro /dev/vdc /mnt/t && ")
    for d in labtools.WRITABLE:
        assert f"mount -t tmpfs -o mode=0755 labtools /mnt/t{d}" in cmd
    assert cmd.endswith(f"fi && test -f /mnt/t{labtools.MARKER}")
    assert subprocess.run(["sh", "-n", "-c", cmd], check=False).returncode == 0
    # the servers' writable directories are tmpfs there
    for path in (dhcpv6.CONF_DIR, dhcpv6.KEA_RUN_DIR, dhcpv6.LEASE_FILE):
        assert any(path.startswith(d + "/") for d in labtools.WRITABLE), path
