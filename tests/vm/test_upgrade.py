"""Upgrades that cannot brick (RAUC, two slots, keel's health gate), on the
real thing: an edge configured with a tunnel to its hub, an SSH key added, and
a second disk of bundles made by tests/lab/bundles.py from the built image
(`make bundle`'s way: the dev signing key, a new version).

One lab for the module; the tests run in file order and each starts where the
one before left the edge (slot A at first). Reboots are counted: an upgrade
and its trial boot, a rollback, two trials rolled back by the gate (two boots
each: the apply fails; the tunnel never comes back), a kernel that panics 3
times and the fallback, a watchdog's reset, a power cut. The console UI
runs on tty1 as shipped until the first upgrade is kept; then the user's
choice of a login there (console_ui_off_for_good)."""

from __future__ import annotations

import json
import re

import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from keel.thresholds import UPGRADE_SLOWEST_START_S
from keel.upgrade.system import GRUBENV  # the boot state GRUB and RAUC share
from tests.lab import bundles, labs
from tests.lab import topology as topo
from tests.lab.configs import configure_with_keel
from tests.lab.guest import BOOT_TIMEOUT, Guest
from tests.lab.history import written_up_to

MOUNT = "mkdir -p /tmp/b && (mountpoint -q /tmp/b || mount -o ro /dev/vdb /tmp/b)"
# /data as the user's state: config, key, shadow, SSH keys, revisions (what
# RAUC and keel's upgrade records keep about the upgrade itself changes, and
# the history, which its daemon writes all along: kept_history checks it)
DATA_HASH = ("cd /data && find . -type f ! -path './rauc/*' ! -path './keel/upgrade/*' "
             "! -path './keel/history.db*' ! -path './lost+found/*' "
             "| LC_ALL=C sort | xargs sha256sum")
# slot B's kernel partition whole, and its root's first 64 MiB: RAUC writes an
# image from the partition's start, so a write of any of it shows there
SLOT_B_HASH = ("(cat /dev/disk/by-partlabel/keel-boot-b; "
               "head -c 64M /dev/disk/by-partlabel/keel-root-b) | sha256sum")
# the side lane: its own pytest process beside the rest of the suite
# (tests/lab/lanes.py): one guest busy at a time, mostly reboots and the gate's waits
pytestmark = pytest.mark.lab("upgrade")
INSTALL_TIMEOUT = 150  # seconds at KVM speed: verify + write 2 images of ~170 MB
GATE_TIMEOUT = 200  # the gate: UI, stall meter, the hub's handshake (within 180 s)
# the trial whose tunnel never comes back: `keel upgrade --tunnel-wait`, the
# shortest it takes (keel.thresholds.UPGRADE_HANDSHAKE_WAIT_RANGE_S)
TUNNEL_WAIT_S = 30


@pytest.fixture(scope="module")
def lab(make_module_lab, tmp_path_factory):
    made = bundles.make(tmp_path_factory.mktemp("bundles"))
    started = labs.UPGRADE.build(make_module_lab, disks={"bundles": made.disk})
    rl = labs.router_lab(started.lab, started.guests)
    edge = rl.edge
    rl.hub_pub = configure_with_keel(rl)
    key = Ed25519PrivateKey.generate().public_key().public_bytes(
        serialization.Encoding.OpenSSH, serialization.PublicFormat.OpenSSH).decode()
    # no root password on purpose (the serial login after each reboot), and
    # an SSH key: both must come through every upgrade
    edge.check("keel access no-password")
    edge.check(f"keel access keys add '{key} upgrade-lab'")
    edge.check("keel apply", 60)  # which writes the key for SSH (/data/keel/ssh)
    edge.check(MOUNT)
    return rl, made


def status(edge: Guest) -> dict:
    """keel upgrade status --json; less the gate's own lines (a trial's
    outcome, an install cut by the last boot), which it writes to the console
    (this serial line) when it decides, maybe amid the output."""
    out = edge.check("keel upgrade status --json", 60)
    return json.loads("\n".join(x for x in out.splitlines()
                                if not x.startswith(("keel: upgrade to ", "keel: install of "))))


def slot_and_version(edge: Guest, version: bool = True) -> tuple[str, str]:
    cmdline = edge.check("cat /proc/cmdline")
    slot = re.search(r"rauc\.slot=(\S+)", cmdline).group(1)
    return slot, edge.check("keel --version").removeprefix("keel ") if version else ""


def upgrade(edge: Guest, name: str, *options: str) -> str:
    """`keel upgrade` with no tty on stdin: installs, does not ask, no reboot."""
    edge.check(MOUNT)
    return edge.check(" ".join(["keel upgrade", *options, f"/tmp/b/{name} </dev/null"]),
                      INSTALL_TIMEOUT)


def settled(edge: Guest) -> dict:
    """The gate's outcome on this boot (once logged in: its apply ended): no
    trial pending any more, and the booted slot no longer "trying" (GRUB
    counted this boot; the gate marks it good). Both polled in the shell, on
    the gate's record and on grubenv (a `keel` command every few seconds
    would take the guest's CPU from the gate it waits for), then read once
    by `keel upgrade status`."""
    # the gate decides by UPGRADE_SLOWEST_START_S of uptime at the latest
    # (a boot slow all through waits that long for the UI): waited for in the
    # guest's own time, then a gate that never decided fails here
    decided = UPGRADE_SLOWEST_START_S + 60
    edge.until(f"test ! -e /data/keel/upgrade/pending.json || "
               f"[ $(cut -d. -f1 /proc/uptime) -gt {decided} ]", decided, every=2)
    edge.check("test ! -e /data/keel/upgrade/pending.json")
    slot, _ = slot_and_version(edge, version=False)
    edge.until(f"grep -qax '{slot}_TRY=0' {GRUBENV}", GATE_TIMEOUT, every=2)
    st = status(edge)
    booted = next(s for s in st["slots"] if s["booted"])
    assert st["pending"] is None and booted["state"] != "trying", st
    return st


def boot_again(edge: Guest, *, expect: str | None = None, timeout: float = BOOT_TIMEOUT) -> None:
    """Reboot, then (expect: a line the console must show first, e.g. the
    gate's, before the boot that follows) log in again."""
    console = edge.console
    console.child.sendline("reboot")
    console.expect(r"Restarting system|reboot: ", 30)
    edge._ifnames.clear()
    if expect:
        console.expect(expect, timeout * 3)
    edge.wait_for_login(timeout * 3)
    edge.check(MOUNT)


def test_refused_bundles_change_nothing(lab):
    rl, _ = lab
    edge = rl.edge
    before = edge.check(SLOT_B_HASH, 120)
    for name, says in (("bad-signature.raucb", r"not signed by a key this router trusts"),
                       ("other-compatible.raucb", r"bundle is for other-x86_64"),
                       ("truncated.raucb", r"bundle|size|signature"),
                       ("corrupt.raucb", r"corrupt")):
        result = edge.run(f"keel upgrade /tmp/b/{name} </dev/null", INSTALL_TIMEOUT)
        lines = [x for x in result.output.splitlines() if x.startswith("keel upgrade:")]
        assert result.rc == 1, (name, result.output)
        assert len(lines) == 1 and re.search(says, lines[0], re.I), (name, result.output)
    # plain http: refused before anything is fetched
    result = edge.run("keel upgrade http://192.0.2.1/keel.raucb </dev/null", 60)
    assert result.rc == 1 and "plain http:// is refused" in result.output, result.output
    assert edge.check(SLOT_B_HASH, 120) == before
    assert [s["state"] for s in status(edge)["slots"]] == ["good", "empty"]


def test_an_upgrade_keeps_data_and_tunnel_and_is_kept(lab):
    rl, made = lab
    edge = rl.edge
    data = edge.check(DATA_HASH)
    assert slot_and_version(edge) == ("A", made.old_version)
    out = upgrade(edge, "good.raucb")
    assert f"installing keel {made.new_version} into slot B" in out
    assert "100%" in out
    st = status(edge)
    assert st["pending"] == {"to_slot": "B", "to_version": made.new_version}
    boot_again(edge)
    assert slot_and_version(edge) == ("B", made.new_version)
    st = settled(edge)
    assert st["last"]["result"] == "kept", st
    assert [(s["name"], s["state"], s["booted"]) for s in st["slots"]] == [
        ("A", "good", False), ("B", "good", True)]
    assert edge.check(DATA_HASH) == data  # /data byte for byte
    edge.check(f"ping -n -c 1 -w 10 {topo.HUB_TUNNEL}", 30)  # the tunnel is back
    assert json.loads(edge.check("keel doctor --json", 60))  # the new version runs
    kept_history(edge, "kept")


def kept_history(edge: Guest, result: str) -> None:
    """The history came through the slot change: the upgrade's outcome is
    among its events, after the boots of both slots."""
    written_up_to(edge, float(edge.check("date +%s")))
    events = edge.json("keel history events --since 1d --json", 120)
    upgrades = [e for e in events if e["kind"] == "upgrade"]
    assert upgrades and upgrades[-1]["data"]["result"] == result, events
    versions = {e["data"]["version"] for e in events if e["kind"] == "boot"}
    assert len(versions) >= 2, events  # boots of the old and of the new slot


def console_ui_off_for_good(edge: Guest) -> None:
    """The user's choice of a login on tty1 (docs/console.md: `touch
    /data/keel/tty1-off`), which the gate takes as the console UI's part
    done. The keep above had the UI start on its trial boot; from here on
    each boot spares the half minute of emulated CPU the UI's start takes
    (8 boots), which the tests below (their verdicts: other causes) do not
    read."""
    edge.check("touch /data/keel/tty1-off; pkill -f 'keel tui --console'; true")


def test_rollback_boots_the_old_slot_again(lab):
    rl, made = lab
    edge = rl.edge
    console_ui_off_for_good(edge)
    data = edge.check(DATA_HASH)
    assert f"the next boot starts slot A ({made.old_version})" in edge.check(
        "keel upgrade rollback </dev/null", 60)
    boot_again(edge)
    assert slot_and_version(edge) == ("A", made.old_version)
    st = settled(edge)
    assert st["last"]["result"] == "rollback"
    assert edge.check(DATA_HASH) == data
    edge.check(f"ping -n -c 1 -w 10 {topo.HUB_TUNNEL}", 30)
    kept_history(edge, "rollback")


def test_a_root_whose_apply_fails_is_rolled_back_by_itself(lab):
    rl, made = lab
    edge = rl.edge
    upgrade(edge, "apply-fails.raucb")
    # B boots, its apply falls back (wg broken), the gate marks B bad and
    # reboots into A on its own; the console says why
    boot_again(edge, expect=r"keel: upgrade to \S+\.nowg rolled back: keel apply --boot fell back")
    assert slot_and_version(edge) == ("A", made.old_version)
    st = settled(edge)
    assert st["last"]["result"] == "rolled back"
    assert "fell back" in st["last"]["reason"], st["last"]
    assert "wg: broken on purpose" in st["last"]["reason"], st["last"]
    assert [s["state"] for s in st["slots"]] == ["good", "bad"]


def test_a_slot_whose_tunnel_never_comes_back_is_rolled_back_by_itself(lab):
    """A good bundle, but the hub drops the edge's WireGuard packets while B is
    on trial (its path, as a new version that cannot reach the hub would
    see it): no handshake within the install's --tunnel-wait (TUNNEL_WAIT_S:
    the default, UPGRADE_HANDSHAKE_WAIT_S, runs the same code with 180 s and
    would add two and a half minutes of waiting), so the gate rolls B back.
    The hub's `keel apply` repairs the drift (the drop rule) while the edge
    goes back to A, and A's tunnel comes back."""
    rl, made = lab
    edge, hub = rl.edge, rl.hub
    # a session with the hub now: the gate waits only for the peers that had
    # one at the install (a handshake in the last HANDSHAKE_STALE_S). After
    # the test before, nothing had crossed the tunnel for minutes on a loaded
    # host: the install named no peer, and B was kept with the hub's drop
    edge.until(f"ping -n -c 1 -w 2 {topo.HUB_TUNNEL}", 60)
    out = upgrade(edge, "good.raucb", f"--tunnel-wait {TUNNEL_WAIT_S}")
    assert f"to come back within {TUNNEL_WAIT_S} s" in out, out  # the hub, named
    hub.check("nft insert rule inet keel input udp dport 51820 drop")
    boot_again(edge, expect=rf"keel: upgrade to \S+ rolled back: no handshake with \S+ "
                            rf"in {TUNNEL_WAIT_S} s",
               timeout=GATE_TIMEOUT / 3)
    hub.check("keel apply", 60)
    assert "51820 drop" not in hub.check("nft list chain inet keel input")
    assert slot_and_version(edge) == ("A", made.old_version)
    st = settled(edge)
    assert st["last"]["result"] == "rolled back"
    assert "no handshake with" in st["last"]["reason"], st["last"]
    assert [s["state"] for s in st["slots"]] == ["good", "bad"]
    edge.until(f"ping -n -c 1 -w 2 {topo.HUB_TUNNEL}", 60)


def test_a_kernel_that_panics_comes_back_through_the_boot_counter(lab):
    rl, made = lab
    edge = rl.edge
    upgrade(edge, "panics.raucb")
    edge.console.child.sendline("reboot")
    for _ in range(3):  # GRUB tries slot B 3 times
        edge.console.expect(r"this initramfs panics on purpose", BOOT_TIMEOUT * 2)
        edge.console.expect(r"Kernel panic", 60)
    edge._ifnames.clear()
    edge.wait_for_login(BOOT_TIMEOUT * 3)
    assert slot_and_version(edge) == ("A", made.old_version)
    st = settled(edge)
    assert st["last"]["result"] == "rolled back"
    assert "did not come up" in st["last"]["reason"], st["last"]
    edge.check(f"ping -n -c 1 -w 10 {topo.HUB_TUNNEL}", 30)


def test_a_machine_whose_watchdog_is_no_longer_fed_resets_by_itself(lab):
    """What a hung kernel looks like to the hardware watchdog: nobody feeds it.
    The daemon stopped (SIGSTOP), the machine resets within its 30 s and boots
    again through GRUB (where a slot on trial is counted), with no command."""
    rl, made = lab
    edge = rl.edge
    said = edge.check("cat /run/keel/watchdog")
    assert said.startswith("watchdog: ") and "30 s" in said and "none" not in said, said
    boot_id = edge.check("cat /proc/sys/kernel/random/boot_id")
    edge.console.child.sendline("kill -STOP $(pidof watchdog)")
    edge.console.expect(r"Booting `keel \(slot A\)'", 45)  # (scaled)
    edge._ifnames.clear()
    edge.wait_for_login(BOOT_TIMEOUT * 3)
    assert edge.check("cat /proc/sys/kernel/random/boot_id") != boot_id  # a new boot
    assert slot_and_version(edge) == ("A", made.old_version)
    assert settled(edge)["slots"][0]["state"] == "good"
    edge.check(f"ping -n -c 1 -w 10 {topo.HUB_TUNNEL}", 30)


def test_a_power_cut_during_an_install_leaves_the_old_slot_and_data(lab):
    rl, made = lab
    edge = rl.edge
    edge.check(MOUNT)
    data = edge.check(DATA_HASH)
    edge.console.child.sendline("keel upgrade /tmp/b/good.raucb </dev/null")
    edge.console.expect(r"Copying image to rootfs\.1", INSTALL_TIMEOUT)
    edge.power_cut()
    edge.wait_for_login(BOOT_TIMEOUT * 3)
    edge.check(MOUNT)
    assert slot_and_version(edge) == ("A", made.old_version)
    assert edge.check(DATA_HASH) == data
    assert status(edge)["slots"][1]["state"] in ("bad", "empty")
    out = upgrade(edge, "good.raucb")  # and a new install works
    assert "installed." in out
    assert status(edge)["slots"][1]["state"] == "new"
