"""Which device is mounted where, from /proc/self/mountinfo (lines as the
kernel writes them): the upgrade's payload check reads the bundle's
dm-verity device raw."""

from __future__ import annotations

from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from keel.system.mounts import mount_source

MOUNTINFO = """\
22 1 254:3 / / ro,relatime shared:1 - squashfs /dev/vda3 ro,errors=continue
25 22 254:6 / /data rw,noatime shared:5 - ext4 /dev/vda6 rw
31 22 0:26 / /run rw,nosuid,nodev shared:9 - tmpfs tmpfs rw,mode=755
88 31 253:0 / /run/rauc/mnt/bundle ro,nodev,relatime shared:40 - squashfs /dev/dm-0 ro
90 22 254:6 /keel/access/shadow /etc/shadow rw,noatime shared:5 - ext4 /dev/vda6 rw
91 31 7:1 / /run/a\\040b ro,relatime - squashfs /dev/loop1 ro
"""


def test_the_device_under_a_mount_point(tmp_path):
    info = tmp_path / "mountinfo"
    info.write_text(MOUNTINFO)
    assert mount_source(tmp_path.parent / "run/rauc/mnt/bundle", info) is None
    assert mount_source(Path("/run/rauc/mnt/bundle"), info) == Path("/dev/dm-0")
    assert mount_source(Path("/data"), info) == Path("/dev/vda6")
    assert mount_source(Path("/run/a b"), info) == Path("/dev/loop1")  # \040 undone
    assert mount_source(Path("/run"), info) is None  # tmpfs: no device
    assert mount_source(Path("/nowhere"), info) is None


def test_an_unreadable_mountinfo_is_no_device(tmp_path):
    assert mount_source(Path("/data"), tmp_path / "missing") is None


@given(st.text(max_size=400))
def test_any_mountinfo_text_gives_a_device_path_or_none(tmp_path_factory, text):
    info = tmp_path_factory.mktemp("m") / "mountinfo"
    info.write_bytes(text.encode("utf-8", "surrogatepass"))
    got = mount_source(Path("/x"), info)
    assert got is None or str(got).startswith("/dev/")
