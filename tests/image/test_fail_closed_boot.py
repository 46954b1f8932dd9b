"""What the boot does before keel apply, read from the files both image
builders share (overlay/, board/keel/x86_64/post-build.sh): a default-deny
ruleset before any NIC driver or interface, forwarding off until keel's
ruleset is in, root locked on the read-only root. The lab
(tests/vm/test_boot.py) checks the same on a booted guest."""

from __future__ import annotations

import re
import shutil
import subprocess
import threading
from pathlib import Path

import pytest

TOP = Path(__file__).resolve().parents[2]
INIT = TOP / "overlay/etc/init.d"
BOOT_NFT = TOP / "overlay/etc/keel/boot.nft"


def scripts() -> list[str]:
    return sorted(p.name for p in INIT.glob("S??*"))


def test_the_boot_ruleset_loads_before_any_driver_interface_or_apply() -> None:
    order = scripts()
    fw = order.index("S02firewall")
    for later in ("S05modules", "S10network", "S40keel", "S45dropbear"):
        assert order.index(later) > fw, later
    assert "nft -f /etc/keel/boot.nft" in (INIT / "S02firewall").read_text()


def test_the_boot_ruleset_denies_by_default() -> None:
    text = BOOT_NFT.read_text()
    lines = [line.strip() for line in text.splitlines()
             if line.strip() and not line.startswith("#")]
    assert lines[0] == "flush ruleset"  # keel's own ruleset replaces it the same way
    assert "table inet keel {" in lines
    for hook in ("input", "forward"):
        assert re.search(rf"type filter hook {hook} priority filter; policy drop;", text), hook
    forward = text.split("chain forward {")[1].split("}")[0]
    assert "accept" not in forward
    accepts = [line for line in lines if line.endswith("accept")]
    # loopback, replies, DHCP(v6) replies and neighbour discovery: nothing a stranger opens
    assert not any("dport 22" in a or "iifname" in a for a in accepts)


@pytest.mark.skipif(shutil.which("nft") is None, reason="nft not installed on this host")
def test_nft_takes_the_boot_ruleset() -> None:
    proc = subprocess.run(["nft", "-c", "-f", str(BOOT_NFT)], capture_output=True, text=True)
    if "Operation not permitted" in proc.stderr:
        pytest.skip("nft -c needs CAP_NET_ADMIN")
    assert proc.returncode == 0, proc.stderr


def test_forwarding_is_off_until_keel_apply() -> None:
    conf = "".join(p.read_text() for p in sorted((TOP / "overlay/etc/sysctl.d").glob("*.conf")))
    assert re.search(r"^net\.ipv4\.ip_forward = 0$", conf, re.M)
    assert re.search(r"^net\.ipv6\.conf\.all\.forwarding = 0$", conf, re.M)


def test_post_build_locks_root(tmp_path: Path) -> None:
    (tmp_path / "etc/init.d").mkdir(parents=True)
    (tmp_path / "etc/init.d/S01x").write_text("#!/bin/sh\n")
    (tmp_path / "etc/shadow").write_text("root::19000:0:99999:7:::\ndaemon:*:19000::::::\n")
    subprocess.run([str(TOP / "board/keel/x86_64/post-build.sh"), str(tmp_path)], check=True)
    shadow = (tmp_path / "etc/shadow").read_text()
    assert shadow.startswith("root:*:19000:")
    assert "daemon:*:19000" in shadow


def test_no_builder_empties_roots_password() -> None:
    for path in [TOP / "board/keel/dev-image/build.sh", *TOP.glob("board/keel/x86_64/*.sh")]:
        assert not re.search(r"root::", path.read_text()), path


def test_access_opens_root_only_on_a_mounted_data() -> None:
    text = (INIT / "S04access").read_text()
    # the empty password is made only in the branch where /data is a mountpoint
    locked_first = text.index('if ! mountpoint -q /data; then')
    assert text.index("open_shadow ||") > locked_first
    assert 'locked "/data is not mounted' in text


def run_access(tmp: Path, *, mounted: bool = True, ls_fails: str = "",
               files: dict[str, str] | None = None) -> tuple[list[str], str]:
    """S04access itself, run by sh in a sandbox (its paths under `tmp`,
    mountpoint, mount and ls stubbed): the bind mounts it made, and why root
    is locked ("" when it is not)."""
    text = (INIT / "S04access").read_text()
    for real in ("/data", "/run/keel", "/etc/shadow"):
        text = text.replace(real, f"{tmp}{real}")
    (tmp / "S04access").write_text(text)
    (tmp / "etc").mkdir()
    (tmp / "etc/shadow").write_text("root:*:19000:0:99999:7:::\n")
    (tmp / "data/keel").mkdir(parents=True)
    for name, content in (files or {}).items():
        (tmp / "data/keel" / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp / "data/keel" / name).write_text(content)
    bin_ = tmp / "bin"
    bin_.mkdir()
    stubs = {
        "mountpoint": f"exit {0 if mounted else 1}",
        "mount": f'echo "$*" >>{tmp}/mounts',
        "ls": (f'for a; do [ "$a" = "{ls_fails}" ] && '
               '{ echo "ls: $a: Input/output error" >&2; exit 2; }; done; '
               f'exec {shutil.which("ls")} "$@"'),
    }
    for name, body in stubs.items():
        (bin_ / name).write_text(f"#!/bin/sh\n{body}\n")
        (bin_ / name).chmod(0o755)
    env = {"PATH": f"{bin_}:/usr/bin:/bin"}
    subprocess.run(["sh", str(tmp / "S04access"), "start"], env=env, check=True,
                   capture_output=True, text=True)
    mounts = (tmp / "mounts").read_text().splitlines() if (tmp / "mounts").exists() else []
    locked = tmp / "run/keel/access-locked"
    return mounts, locked.read_text().strip() if locked.exists() else ""


def test_access_opens_root_on_first_boot_only(tmp_path: Path) -> None:
    mounts, locked = run_access(tmp_path)
    assert locked == "" and len(mounts) == 1 and "shadow.open" in mounts[0]
    assert "root::" in (tmp_path / "run/keel/shadow.open").read_text()


@pytest.mark.parametrize("case", ["not mounted", "access unreadable", "data unreadable",
                                  "state without password"])
def test_access_stays_locked_when_data_cannot_be_read(tmp_path: Path, case: str) -> None:
    kw: dict = {
        "not mounted": {"mounted": False},
        # an I/O error listing the access state is not "no state yet"
        "access unreadable": {"ls_fails": f"{tmp_path}/data/keel/access",
                              "files": {"access/x": ""}},
        "data unreadable": {"ls_fails": f"{tmp_path}/data/keel"},
        "state without password": {"files": {"access/other": ""}},
    }[case]
    mounts, locked = run_access(tmp_path, **kw)
    assert mounts == [] and locked, case
    assert not (tmp_path / "run/keel/shadow.open").exists()


@pytest.mark.parametrize("nft_rc,listing,expected", [
    (0, "chain input { type filter hook input priority filter; policy drop; }", "in, forwarding 0"),
    (1, "", "FAILED: nft -f"),
    (0, "", "FAILED: the boot ruleset's input chain"),
])
def test_the_boot_firewall_says_what_the_kernel_holds_and_a_failure_keeps_nics_down(
        tmp_path: Path, nft_rc: int, listing: str, expected: str) -> None:
    """S02firewall itself with nft stubbed: what it writes for the lab and the
    console; S05modules loads no driver unless the ruleset is in."""
    text = (INIT / "S02firewall").read_text()
    for real in ("/run/keel", "/proc/sys/net/ipv4/ip_forward"):
        text = text.replace(real, f"{tmp_path}{real}")
    (tmp_path / "proc/sys/net/ipv4").mkdir(parents=True)
    (tmp_path / "proc/sys/net/ipv4/ip_forward").write_text("0\n")
    (tmp_path / "S02firewall").write_text(text)
    bin_ = tmp_path / "bin"
    bin_.mkdir()
    (bin_ / "nft").write_text(
        f'#!/bin/sh\n[ "$1" = -f ] && {{ echo "Error: no such module" >&2; exit {nft_rc}; }}\n'
        f'echo "{listing}"\n')
    (bin_ / "nft").chmod(0o755)
    out = subprocess.run(["sh", str(tmp_path / "S02firewall"), "start"], check=True,
                         env={"PATH": f"{bin_}:/usr/bin:/bin"}, capture_output=True, text=True)
    state = (tmp_path / "run/keel/boot-firewall").read_text()
    assert state.startswith(expected)
    assert ("no network drivers" in out.stdout) == expected.startswith("FAILED")
    guard = (INIT / "S05modules").read_text()
    assert guard.index("/run/keel/boot-firewall") < guard.index("modprobe")


def test_a_hanging_apply_does_not_hold_the_boot_past_the_gates_limit(tmp_path: Path) -> None:
    """S40keel itself, with a `keel` that never ends and the uptime past its
    deadline: the boot goes on (so S47upgrade's gate can judge a slot on
    trial), and the deadline leaves the gate time before UPGRADE_SEEN_S."""
    from keel.thresholds import UPGRADE_SEEN_S

    text = (INIT / "S40keel").read_text()
    deadline = int(re.search(r"^DEADLINE=(\d+)$", text, re.M).group(1))
    assert deadline + 10 <= UPGRADE_SEEN_S
    for real in ("/run/keel", "/proc/uptime"):
        text = text.replace(real, f"{tmp_path}{real}")
    (tmp_path / "S40keel").write_text(text)
    (tmp_path / "proc").mkdir()
    # the boot's S40keel starts before the deadline; the uptime then passes it
    uptime = tmp_path / "proc/uptime"
    uptime.write_text(f"{deadline - 1}.25 3.00\n")
    threading.Timer(1.0, lambda: uptime.write_text(f"{deadline + 5}.25 3.00\n")).start()
    bin_ = tmp_path / "bin"
    bin_.mkdir()
    (bin_ / "keel").write_text("#!/bin/sh\nexec sleep 600 >/dev/null 2>&1\n")
    (bin_ / "keel").chmod(0o755)
    proc = subprocess.run(["sh", str(tmp_path / "S40keel"), "start"], timeout=20,
                          env={"PATH": f"{bin_}:/usr/bin:/bin"}, capture_output=True, text=True)
    assert "the boot goes on without it" in proc.stdout
    subprocess.run(["pkill", "-f", "sleep 600"], check=False)


def test_an_apply_started_early_still_gets_the_word_after_the_deadline(tmp_path: Path) -> None:
    """S01preload's apply, still in Python's imports when S40keel gives up
    waiting (a throttled CPU): the boot goes on, and the word stays, so the
    apply goes on and applies when it gets there (removing it left the
    upgrade lab's edge unconfigured for good, its apply waiting for ever)."""
    text = (INIT / "S40keel").read_text()
    deadline = int(re.search(r"^DEADLINE=(\d+)$", text, re.M).group(1))
    for real in ("/run/keel", "/proc/uptime"):
        text = text.replace(real, f"{tmp_path}{real}")
    (tmp_path / "S40keel").write_text(text)
    (tmp_path / "proc").mkdir()
    run = tmp_path / "run/keel"
    run.mkdir(parents=True)
    # the boot's S40keel starts before the deadline; the uptime then passes it
    uptime = tmp_path / "proc/uptime"
    uptime.write_text(f"{deadline - 1}.25 3.00\n")
    early = subprocess.Popen(["sleep", "600"])  # the apply, not at the word yet
    try:
        threading.Timer(1.0, lambda: uptime.write_text(f"{deadline + 5}.25 3.00\n")).start()
        (run / "boot-apply.pid").write_text(f"{early.pid}\n")
        proc = subprocess.run(["sh", str(tmp_path / "S40keel"), "start"], timeout=20,
                              env={"PATH": "/usr/bin:/bin"}, capture_output=True, text=True)
        assert "the boot goes on without it" in proc.stdout
        assert (run / "boot.go").exists() and (run / "boot-apply.pid").exists()
    finally:
        early.kill()
        early.wait()
    # once it has ended, a run by hand cleans up as before
    proc = subprocess.run(["sh", str(tmp_path / "S40keel"), "start"], timeout=20,
                          env={"PATH": f"{tmp_path}/nobin:/usr/bin:/bin"},
                          capture_output=True, text=True)
    assert not (run / "boot.go").exists()
