"""The release kernel's configuration as Buildroot resolves it
(buildroot-external/scripts/resolve-kernel-config.sh: x86_64_defconfig + the
fragment, make olddefconfig, on a source of the pinned series) holds every
entry of keel.kernel_features at its value: kconfig drops an option whose
dependencies are off, or whose name it does not know, without a word.

Needs the Linux source and kconfig's host tools (make, gcc, flex, bison) that
board/keel/dev-image/host-deps.sh installs: without them it fails, saying what
is missing (it never skips). Shares its cache with make check
(KEEL_OUT/kernel-config): 33-40 s the first time, then under a second."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from keel import kernel_features as kf

TOP = Path(__file__).resolve().parents[2]
FRAGMENT = TOP / "board/keel/x86_64/linux.fragment"
DEFCONFIG = TOP / "buildroot-external/configs/keel_x86_64_defconfig"
RESOLVE = TOP / "buildroot-external/scripts/resolve-kernel-config.sh"
CACHE = Path(os.environ.get("KEEL_OUT", TOP / "out")).resolve() / "kernel-config"


def resolve(cache: Path, fragment: Path, env: dict[str, str] | None = None
            ) -> subprocess.CompletedProcess:
    return subprocess.run([str(RESOLVE), str(cache), str(DEFCONFIG), str(fragment)],
                          capture_output=True, text=True, timeout=600,
                          env={**os.environ, **(env or {})})


@pytest.fixture(scope="module")
def release_config() -> dict[str, str]:
    proc = resolve(CACHE, FRAGMENT)
    if proc.returncode != 0:
        pytest.fail(f"the release kernel's configuration could not be resolved "
                    f"(this test never skips):\n{proc.stderr}")
    return kf.parse_kconfig(Path(proc.stdout.strip()).read_text())


def test_every_feature_survives_olddefconfig(release_config):
    lost = [f"CONFIG_{f.symbol}={f.value} ({f.why}): resolved to "
            f"{release_config.get(f.symbol, 'absent')}"
            for f in kf.FEATURES if release_config.get(f.symbol) != f.value]
    assert lost == []


def test_the_console_survives_the_kms_drivers_built_in(release_config):
    """x86_64_defconfig builds in i915 and virtio-gpu (they remove the firmware
    framebuffer): fbdev emulation keeps a console on them."""
    assert release_config["DRM_I915"] == "y"
    assert release_config["DRM_FBDEV_EMULATION"] == "y"
    assert release_config["FRAMEBUFFER_CONSOLE"] == "y"


def test_a_dropped_dependency_and_a_misspelt_name_are_caught(tmp_path, release_config):
    """Without HYPERV, kconfig drops HYPERV_NET and the other Hyper-V drivers;
    a misspelt option does not exist: the check names both."""
    broken = tmp_path / "broken.fragment"
    text = FRAGMENT.read_text()
    assert "CONFIG_HYPERV=y\n" in text
    broken.write_text(text.replace("CONFIG_HYPERV=y\n", "") + "CONFIG_VIRTIO_NETT=y\n")
    # the tree make check extracted (a directory source is used in place)
    src = CACHE / "src"
    proc = resolve(tmp_path / "cache", broken,
                   {"KEEL_LINUX_SRC": str(src)} if src.is_dir() else None)
    assert proc.returncode == 0, proc.stderr
    problems = kf.check_final_config(broken.read_text(), Path(proc.stdout.strip()).read_text())
    assert any("CONFIG_HYPERV_NET=y asked" in p for p in problems)
    assert any("CONFIG_HYPERV_STORAGE=y asked" in p for p in problems)
    assert any("CONFIG_VIRTIO_NETT=y asked" in p and "does not know" in p for p in problems)


def test_a_missing_source_is_named(tmp_path):
    proc = resolve(tmp_path, FRAGMENT, {"KEEL_LINUX_SRC": str(tmp_path / "nowhere.tar.xz")})
    assert proc.returncode == 1
    assert "linux-source-6.12" in proc.stderr and "host-deps.sh" in proc.stderr


def test_a_source_of_another_series_is_refused(tmp_path):
    tree = tmp_path / "linux"
    (tree / "arch/x86/configs").mkdir(parents=True)
    (tree / "arch/x86/configs/x86_64_defconfig").write_text("")
    (tree / "Makefile").write_text("VERSION = 6\nPATCHLEVEL = 1\nSUBLEVEL = 5\n")
    proc = resolve(tmp_path / "cache", FRAGMENT, {"KEEL_LINUX_SRC": str(tree)})
    assert proc.returncode == 1
    assert "is Linux 6.1" in proc.stderr and "pins 6.12" in proc.stderr
