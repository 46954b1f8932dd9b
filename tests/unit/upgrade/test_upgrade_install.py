"""`keel upgrade FILE|URL` end to end over a fake RAUC command line
(tests/unit/upgrade/fake_rauc.py) (issue 37): a corrupt payload refused
before anything is written; an install that fails or is cut said as such
by status, rollback, doctor and the console; a URL fetched once, https
only, bounded, and an older keel refused unless allowed; the bar following
bytes; an untrusted signer said in words."""

from __future__ import annotations

import errno
import io
import pathlib
from pathlib import Path

import pytest

from keel import version
from keel.doctor.checks import WARN, check_upgrade
from keel.system.blocks import bytes_written
from keel.ui.screens.upgrade import StatusView, status_lines
from keel.upgrade import fetch, flow, record, slots, system
from keel.upgrade.grubenv import BootEnv, SlotBoot
from keel.upgrade.record import INSTALL_CUT, INSTALL_FAILED, Installing, Outcome, Records
from keel.upgrade.slots import SlotView, UpgradeStatus
from tests.unit.upgrade.fake_rauc import FakeRauc

RUNNING = "0.1.0+g1a2b3c4"
IMAGES = {"rootfs.squashfs": b"r" * 300_000, "boot.vfat": b"b" * 100_000}


def booted_a() -> UpgradeStatus:
    return UpgradeStatus("A", (SlotView("A", RUNNING, True, "good", True),
                               SlotView("B", "", False, "empty", False)), None, None)


@pytest.fixture
def records(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Records:
    monkeypatch.setattr(record.Records.__init__, "__defaults__", (tmp_path / "records",))
    monkeypatch.setattr(system, "read_status", lambda records=None: booted_a())
    monkeypatch.setattr(system, "compatible", lambda: "keel-x86_64")
    monkeypatch.setattr(system, "sessions", lambda: ())
    monkeypatch.setattr(system, "slot_devices", lambda name: ())
    monkeypatch.setattr(system, "boot_id", lambda: "this-boot")
    monkeypatch.setattr(version, "image_version", lambda: RUNNING)
    monkeypatch.setattr(fetch, "DOWNLOAD", tmp_path / "data" / "download.raucb")
    return Records(tmp_path / "records")


@pytest.fixture
def bundle(tmp_path: Path) -> str:
    path = tmp_path / "keel-0.2.0.raucb"
    path.write_bytes(b"a bundle")
    return str(path)


def refused(target: str, **kwargs) -> str:
    with pytest.raises(system.UpgradeError) as err:
        flow.install_bundle(target, lambda p, w: None, **kwargs)
    return str(err.value)


# --- item 2: a corrupt payload is refused before anything is written ----------------

def test_a_payload_that_fails_dm_verity_is_refused_before_the_install(
        fake_rauc: FakeRauc, records: Records, bundle: str,
        monkeypatch: pytest.MonkeyPatch) -> None:
    fake_rauc.payload(IMAGES)
    real_open = pathlib.Path.open

    def eio(self, *args, **kwargs):  # dm-verity's answer to a changed block
        if self.name == "rootfs.squashfs":
            raise OSError(errno.EIO, "Input/output error")
        return real_open(self, *args, **kwargs)

    monkeypatch.setattr(pathlib.Path, "open", eio)
    message = refused(bundle)
    assert message == ("the bundle is corrupt (its contents do not match its signature): "
                       "refused, nothing written")
    assert fake_rauc.installs() == []
    assert f"umount {fake_rauc.mount}" in fake_rauc.calls()  # mounted, then let go
    assert records.last() is None and records.installing() is None


@pytest.mark.parametrize("case", ["sha256", "size"])
def test_an_image_unlike_its_manifest_is_refused_as_corrupt(
        fake_rauc: FakeRauc, records: Records, bundle: str, case: str) -> None:
    if case == "sha256":
        fake_rauc.payload(IMAGES, digests={"boot.vfat": "0" * 64})
    else:
        fake_rauc.payload(IMAGES, sizes={"rootfs.squashfs": 1})
    assert "the bundle is corrupt" in refused(bundle)
    assert fake_rauc.installs() == []


def test_the_whole_payload_is_read_before_the_install(
        fake_rauc: FakeRauc, records: Records, bundle: str) -> None:
    total = fake_rauc.payload(IMAGES)
    seen: list[tuple[int, str]] = []
    flow.install_bundle(bundle, lambda p, w: seen.append((p, w)))
    checks = [p for p, w in seen if w.startswith("checking ")]
    assert checks and checks[-1] == flow.CHECK_SHARE  # every byte: the bar's first half
    calls = fake_rauc.calls()
    assert [c.split()[1] for c in calls if c.startswith("rauc ")] == ["info", "mount", "install"]
    assert calls.index(f"umount {fake_rauc.mount}") < calls.index(f"rauc install {bundle}")
    assert total == sum(len(d) for d in IMAGES.values())


@pytest.mark.parametrize(("said", "where"), [
    ("Mounted bundle at /run/rauc/mnt/bundle. Use 'umount /run/rauc/mnt/bundle' to unmount.",
     "/run/rauc/mnt/bundle"),  # RAUC 1.13 (Debian), seen in the upgrade lab
    ("Mounted bundle at /mnt/rauc/bundle", "/mnt/rauc/bundle"),  # RAUC's own tests
    ("rauc-Message: x\nMounted bundle at /run/rauc/mnt/bundle.\n", "/run/rauc/mnt/bundle"),
])
def test_the_mount_point_rauc_prints_is_found(said: str, where: str) -> None:
    match = system.MOUNTED.search(said)
    assert match is not None and match.group(1) == where


@pytest.mark.parametrize("text", ["[image.rootfs]\nfilename=../../etc/shadow\n",
                                  "[image.rootfs]\nfilename=x\nsize=-1\n",
                                  "[image.rootfs]\nfilename=x\nsha256=zz\n",
                                  "[update]\nversion=1\n", "not ini", "x" * 70_000])
def test_an_odd_manifest_is_refused(text: str) -> None:
    with pytest.raises(system.UpgradeError):
        system.manifest_images(text)


# --- item 6: untrusted signer in words; the bar follows bytes -----------------------

def test_a_signer_the_keyring_does_not_hold_is_said_in_words(
        fake_rauc: FakeRauc, records: Records, bundle: str) -> None:
    fake_rauc.set(info_error="signature verification failed: Verify error: "
                             "self-signed certificate")
    message = refused(bundle)
    assert message.startswith("the bundle is not signed by a key this router trusts")
    assert "self-signed" not in message and fake_rauc.installs() == []


def test_the_install_bar_follows_the_bytes_written_not_raucs_steps(
        fake_rauc: FakeRauc) -> None:
    # RAUC 1.13 jumps to 40 % before a byte is written, and gives each image a
    # share of the bar whatever its size
    fake_rauc.set(install_lines=["  0% Installing", " 20% Checking bundle",
                                 " 40% Checking slot rootfs.1", " 45% Copying image to boot.1",
                                 " 70% Copying image to rootfs.1", "100% Installing done."])
    seen: list[tuple[int, str]] = []
    written = iter([0] * 3 + [0, 0, 0, 0])
    system.install("/b.raucb", lambda p, w: seen.append((p, w)), lambda: next(written, 0),
                   1000)
    assert seen[-1][0] == 100
    assert all(p == 0 for p, _ in seen[:-1]), seen  # nothing written: the bar stays
    assert any(w == "Copying image to rootfs.1" for _, w in seen)  # RAUC's step is said


def test_the_install_bar_moves_with_the_bytes(fake_rauc: FakeRauc) -> None:
    fake_rauc.set(install_lines=["  0% Installing", " 40% Checking slot rootfs.1",
                                 " 45% Copying image to rootfs.1", "100% Installing done."])
    seen: list[int] = []
    counter = iter([5000, 5000, 5250, 5500, 5750, 6000])
    system.install("/b.raucb", lambda p, w: seen.append(p), lambda: next(counter, 6000), 1000)
    assert seen == sorted(seen) and seen[-1] == 100
    assert set(seen) <= {0, 25, 50, 75, 99, 100}


def test_bytes_written_reads_the_slot_devices_stat(tmp_path: Path) -> None:
    for name, sectors in (("vda4", 8), ("vda5", 2)):
        (tmp_path / name).mkdir()
        (tmp_path / name / "stat").write_text(
            f"  100 0 800 10 7 0 {sectors} 3 0 20 30 0 0 0 0 0 0\n")
    assert bytes_written(tuple(tmp_path / n for n in ("vda4", "vda5")), tmp_path) == 5120
    assert bytes_written((tmp_path / "nothing",), tmp_path) is None


def test_slot_devices_come_from_system_conf() -> None:
    conf = Path(__file__).resolve().parents[3] / "overlay" / "etc" / "rauc" / "system.conf"
    assert system.mount_prefix(conf) == Path("/run/rauc/mnt")
    assert system.slot_devices("B", conf) == (Path("/dev/disk/by-partlabel/keel-root-b"),
                                              Path("/dev/disk/by-partlabel/keel-boot-b"))


# --- item 3: a failed or cut install is said as such --------------------------------

def test_a_failed_install_is_recorded_and_said_everywhere(
        fake_rauc: FakeRauc, records: Records, bundle: str) -> None:
    fake_rauc.payload(IMAGES)
    fake_rauc.set(install_lines=[" 45% Copying image to rootfs.1",
                                 "Error reading from file: Input/output error"], install_rc=1)
    records.set_last(Outcome("kept", "A", "0.0.9", at=1.0))  # an earlier success
    assert "Input/output error" in refused(bundle)
    last = records.last()
    assert last is not None and last.result == INSTALL_FAILED and last.slot == "B"
    assert records.installing() is None  # no longer under way
    st = slots.build("A", env(), {"B": "0.0.9"}, RUNNING, None, last)
    assert_said(st, "failed")


def test_an_install_under_way_is_recorded_before_rauc_starts(
        fake_rauc: FakeRauc, records: Records, bundle: str,
        monkeypatch: pytest.MonkeyPatch) -> None:
    fake_rauc.payload(IMAGES)
    seen = []
    real = system.install

    def install(*args, **kwargs):
        seen.append(records.installing())
        return real(*args, **kwargs)

    monkeypatch.setattr(system, "install", install)
    flow.install_bundle(bundle, lambda p, w: None)
    assert seen[0] is not None and (seen[0].to_slot, seen[0].to_version) == ("B", "0.2.0")
    assert records.installing() is None and records.pending() is not None


def env() -> BootEnv:
    """grubenv after RAUC marked slot B bad for its write (A boots)."""
    return BootEnv(("A", "B"), {"A": SlotBoot("A", True, 0), "B": SlotBoot("B", False, 0)})


def assert_said(st: UpgradeStatus, how: str) -> None:
    b = st.slots[1]
    assert (b.version, b.state) == ("", "empty")  # not the version it held before
    assert st.last is not None and how in st.last.line() and "UTC" in st.last.line()
    assert "slot B holds no usable keel" in st.last.line()
    why = flow.rollback_refusal(st)
    assert how in why and "rolled back as unhealthy" not in why
    checks = {c.name: c for c in check_upgrade(st)}
    assert checks["last upgrade"].status == WARN and how in checks["last upgrade"].detail
    assert checks["slots"].status == WARN
    lines = [str(x) for x in status_lines(StatusView(st), 200)]
    assert any(how in x for x in lines)


def test_a_cut_install_reads_as_cut(records: Records) -> None:
    records.set_last(Outcome("kept", "A", "0.0.9", at=1.0))
    records.set_installing(Installing("A", "B", "0.2.0", "an-earlier-boot", 4242, at=2.0))
    cut = system.record_cut(records)
    assert cut is not None and cut.result == INSTALL_CUT
    assert records.last() == cut and records.installing() is None
    assert "restarted" in cut.reason
    assert_said(slots.build("A", env(), {"B": "0.0.9"}, RUNNING, None, cut), "was cut")


def test_an_install_running_now_is_not_cut(records: Records,
                                           monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(system, "alive", lambda pid: True)
    live = Installing("A", "B", "0.2.0", "this-boot", 4242)
    records.set_installing(live)
    assert system.record_cut(records) is None and records.installing() == live
    st = slots.build("A", env(), {}, RUNNING, None, None, installing=live)
    assert st.slots[1].state == "writing" and "being written" in flow.rollback_refusal(st)
    assert st.as_dict()["installing"]["to_version"] == "0.2.0"


def test_a_killed_keel_upgrade_reads_as_cut(records: Records,
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(system, "alive", lambda pid: False)
    records.set_installing(Installing("A", "B", "0.2.0", "this-boot", 4242))
    cut = system.record_cut(records)
    assert cut is not None and "keel upgrade stopped" in cut.reason


# --- item 4: fetched once, https only, bounded; no older keel unless allowed ---------

def test_a_url_is_fetched_once_and_every_step_works_on_that_file(
        fake_rauc: FakeRauc, records: Records, monkeypatch: pytest.MonkeyPatch) -> None:
    fake_rauc.payload(IMAGES)
    fetched = []

    def fake_fetch(url, dest, progress=None):
        fetched.append(url)
        dest.parent.mkdir(parents=True, exist_ok=True)
        dest.write_bytes(b"the bundle")
        return dest

    monkeypatch.setattr(fetch, "fetch", fake_fetch)
    pending = flow.install_bundle("https://updates.example/keel.raucb", lambda p, w: None)
    assert fetched == ["https://updates.example/keel.raucb"]
    local = str(fetch.DOWNLOAD)
    rauc_calls = [c for c in fake_rauc.calls() if c.startswith("rauc ")]
    assert rauc_calls and all(c.endswith(local) for c in rauc_calls), rauc_calls
    assert all("updates.example" not in c for c in fake_rauc.calls())
    assert pending.to_version == "0.2.0" and not fetch.DOWNLOAD.exists()  # removed after


@pytest.mark.parametrize("older", ["0.0.9", "0.1.0-rc1", "0.0.1+g9"])
def test_an_older_keel_is_refused_unless_allowed(
        fake_rauc: FakeRauc, records: Records, bundle: str, older: str) -> None:
    fake_rauc.payload(IMAGES)
    fake_rauc.set(version=older)
    message = refused(bundle)
    assert f"the bundle holds keel {older}, older than the running {RUNNING}" in message
    assert "--allow-downgrade" in message and fake_rauc.installs() == []
    asked = []
    assert "older than" in refused(bundle, allow_downgrade=lambda q: asked.append(q) or False)
    assert asked and asked[0].startswith("install an older keel?")
    assert fake_rauc.installs() == []
    flow.install_bundle(bundle, lambda p, w: None, allow_downgrade=lambda q: True)
    flow.install_bundle(bundle, lambda p, w: None, allow_downgrade=True)
    assert len(fake_rauc.installs()) == 2


@pytest.mark.parametrize("newer", ["0.1.0+g1a2b3c4.next", "0.1.0", "0.1.1", "0.10.0"])
def test_the_same_or_a_newer_keel_is_installed(
        fake_rauc: FakeRauc, records: Records, bundle: str, newer: str) -> None:
    fake_rauc.payload(IMAGES)
    fake_rauc.set(version=newer)
    assert flow.install_bundle(bundle, lambda p, w: None).to_version == newer


def test_a_version_that_cannot_be_ordered_is_refused_unless_allowed(
        fake_rauc: FakeRauc, records: Records, bundle: str) -> None:
    fake_rauc.payload(IMAGES)
    fake_rauc.set(version="nightly")
    assert "cannot tell whether keel nightly is older" in refused(bundle)


@pytest.mark.parametrize(("a", "b", "older"), [
    ("0.1.0", "0.2.0", True), ("0.2.0", "0.1.0", False), ("0.9.0", "0.10.0", True),
    ("0.1.0-rc1", "0.1.0", True), ("0.1.0-rc.9", "0.1.0-rc.10", True),
    ("0.1.0-alpha", "0.1.0-1", False), ("0.1.0+gaaa", "0.1.0+gbbb.next", False),
    ("1.0", "0.1.0", None), ("0.1.0", "x", None), ("0.1.0\n", "0.1.0", None)])
def test_versions_are_ordered_as_keel_writes_them(a: str, b: str, older: bool | None) -> None:
    assert version.is_older(a, b) is older


class Answer(io.BytesIO):
    def __init__(self, data: bytes, length: str | None) -> None:
        super().__init__(data)
        self.headers = {} if length is None else {"Content-Length": length}


def opener(data: bytes, length: str | None = "auto"):
    def open_(url, ctx):
        return Answer(data, str(len(data)) if length == "auto" else length)
    return open_


def ca_file() -> Path:
    path = Path("/etc/ssl/certs/ca-certificates.crt")
    if not path.is_file():
        pytest.skip("no system CA bundle on this host")
    return path


def test_fetch_writes_the_bundle_once_with_progress(tmp_path: Path) -> None:
    dest = tmp_path / "download.raucb"
    seen = []
    fetch.fetch("https://u.example/k.raucb", dest, lambda p, w: seen.append(p),
                ca_file=ca_file(), opener=opener(b"x" * (3 << 20)), free=lambda p: 1 << 40)
    assert dest.read_bytes() == b"x" * (3 << 20) and seen[-1] == 100


@pytest.mark.parametrize(("data", "length", "limit", "room", "says"), [
    (b"x" * 100, "auto", 50, 1 << 40, "more than a bundle"),
    (b"x" * 100, None, 50, 1 << 40, "passed"),  # no length said: stopped at the bound
    (b"x" * 100, "20", 1000, 1 << 40, "more than the 20 bytes it said"),
    (b"x" * 100, "200", 1000, 1 << 40, "ended at 100 of 200"),
    (b"x" * 100, "auto", 1000, fetch.FREE_MARGIN + 10, "/data has room for"),
    (b"x" * 100, "1e9", 1000, 1 << 40, "is not a size"),
])
def test_fetch_is_bounded_and_leaves_nothing_when_refused(
        tmp_path: Path, data: bytes, length: str | None, limit: int, room: int,
        says: str) -> None:
    dest = tmp_path / "download.raucb"
    with pytest.raises(system.UpgradeError) as err:
        fetch.fetch("https://u.example/k.raucb", dest, None, ca_file=ca_file(),
                    opener=opener(data, length), limit=limit, free=lambda p: room)
    assert says in str(err.value)
    assert list(tmp_path.iterdir()) == []


def test_fetch_takes_https_only_and_redirects_to_https_only(tmp_path: Path) -> None:
    with pytest.raises(system.UpgradeError, match="not https"):
        fetch.fetch("http://u.example/k.raucb", tmp_path / "d.raucb", opener=opener(b"x"))
    handler = fetch._HttpsOnly()
    with pytest.raises(system.UpgradeError, match="redirected to http://evil"):
        handler.redirect_request(None, None, 302, "Found", {}, "http://evil.example/k.raucb")


def test_fetch_needs_the_ca_bundle(tmp_path: Path) -> None:
    with pytest.raises(system.UpgradeError, match="no CA bundle"):
        fetch.fetch("https://u.example/k.raucb", tmp_path / "d.raucb",
                    ca_file=tmp_path / "none.crt", opener=opener(b"x"))


def test_the_dev_image_carries_a_ca_bundle_and_the_release_image_selects_one() -> None:
    top = Path(__file__).resolve().parents[3]
    packages = (top / "board" / "keel" / "dev-image" / "packages.txt").read_text().split()
    assert "ca-certificates" in packages
    # the keel package selects them (so savedefconfig leaves them out of the
    # defconfig, and every config with keel has them)
    config_in = (top / "buildroot-external" / "package" / "keel" / "Config.in").read_text()
    selects = {line.split()[1] for line in config_in.splitlines()
               if line.strip().startswith("select ")}
    assert {"BR2_PACKAGE_CA_CERTIFICATES", "BR2_PACKAGE_PYTHON3_SSL"} <= selects
    defconfig = (top / "buildroot-external" / "configs" / "keel_x86_64_defconfig").read_text()
    assert "BR2_PACKAGE_KEEL=y" in defconfig


def test_records_say_when_in_utc() -> None:
    assert record.when(0) == "1970-01-01 00:00:00 UTC"


def test_the_bar_is_redrawn_only_when_it_changes_and_what_follows_starts_a_line(
        monkeypatch, capsys):
    """On a terminal (the serial console: a slow line) the bar is drawn once
    per change, and a refusal after it starts a line of its own, so it reads
    as `keel upgrade: ...` (it was appended to the bar's line)."""
    from keel.upgrade import cli

    monkeypatch.setattr(cli.sys.stdout, "isatty", lambda: True)
    bar = cli._ProgressPrinter()
    for percent in (0, 0, 0, 1, 1, 2):
        bar(percent, "checking rootfs.squashfs")
    bar.close()
    print("keel upgrade: the bundle is corrupt")
    out = capsys.readouterr().out
    assert out.count("\r[") == 3
    assert out.splitlines()[-1] == "keel upgrade: the bundle is corrupt"
