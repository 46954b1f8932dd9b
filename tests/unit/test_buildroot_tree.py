"""The BR2_EXTERNAL tree, checked on the host without Buildroot."""

from __future__ import annotations

import hashlib
import re
import shutil
import subprocess
from pathlib import Path

import pytest

TOP = Path(__file__).resolve().parents[2]
EXT = TOP / "buildroot-external"
BOARD = TOP / "board/keel/x86_64"
DEFCONFIG = EXT / "configs/keel_x86_64_defconfig"
EXT_VAR = "$(BR2_EXTERNAL_KEEL_PATH)"
# String options that name the user's file, not one of the tree's: the release
# image's RAUC keyring is the user's certificate (make image KEEL_RAUC_CERT=...)
USER_FILES = {"BR2_PACKAGE_KEEL_RAUC_KEYRING": "$(KEEL_RAUC_CERT)"}


def defconfig() -> dict[str, str]:
    values = {}
    for line in DEFCONFIG.read_text().splitlines():
        if m := re.match(r"^(BR2_\w+)=(.*)$", line):
            values[m.group(1)] = m.group(2)
        elif m := re.match(r"^# (BR2_\w+) is not set$", line):
            values[m.group(1)] = "n"
    return values


def unquote(value: str) -> str:
    assert value.startswith('"') and value.endswith('"'), value
    return value[1:-1]


def path_values() -> dict[str, str]:
    """Every string option of the defconfig that names a file or directory."""
    return {k: unquote(v) for k, v in defconfig().items()
            if v.startswith('"') and ("/" in v or "$(" in v) and k not in USER_FILES}


def resolve(value: str) -> list[Path]:
    return [Path(p.replace(EXT_VAR, str(EXT))) for p in value.split()]


def test_external_desc_names_keel():
    desc = (EXT / "external.desc").read_text()
    assert re.search(r"^name: KEEL$", desc, re.M)
    assert (EXT / "external.mk").is_file()
    assert 'source "$BR2_EXTERNAL_KEEL_PATH/package/keel/Config.in"' in \
        (EXT / "Config.in").read_text()


def test_every_path_goes_through_the_external_path():
    paths = path_values()
    assert paths, "the defconfig names no file?"
    for key, value in paths.items():
        for word in value.split():
            assert word.startswith(EXT_VAR + "/"), f"{key}={value}: not via {EXT_VAR}"


def test_every_file_the_defconfig_names_exists():
    for key, value in path_values().items():
        for path in resolve(value):
            assert path.exists(), f"{key}: {path} does not exist"


def test_shared_board_files_used():
    cfg = defconfig()
    base = f"{EXT_VAR}/../board/keel/x86_64"
    assert unquote(cfg["BR2_ROOTFS_OVERLAY"]) == f"{EXT_VAR}/../overlay"
    assert unquote(cfg["BR2_ROOTFS_POST_BUILD_SCRIPT"]) == f"{base}/post-build.sh"
    assert unquote(cfg["BR2_ROOTFS_POST_IMAGE_SCRIPT"]) == f"{base}/post-image.sh"
    assert unquote(cfg["BR2_LINUX_KERNEL_CONFIG_FRAGMENT_FILES"]) == f"{base}/linux.fragment"
    assert unquote(cfg["BR2_PACKAGE_BUSYBOX_CONFIG_FRAGMENT_FILES"]) == f"{base}/busybox.fragment"
    assert unquote(cfg["BR2_TARGET_GRUB2_BUILTIN_CONFIG_PC"]) == f"{base}/grub-early.cfg"
    assert unquote(cfg["BR2_TARGET_GRUB2_BUILTIN_CONFIG_EFI"]) == f"{base}/grub-early.cfg"
    assert unquote(cfg["BR2_TARGET_GRUB2_BOOT_PARTITION"]) == "hd0,gpt2"
    assert unquote(cfg["BR2_GLOBAL_PATCH_DIR"]) == f"{EXT_VAR}/patches"


@pytest.mark.parametrize(("key", "listing"), [
    ("BR2_TARGET_GRUB2_BUILTIN_MODULES_PC", "grub-modules-pc.txt"),
    ("BR2_TARGET_GRUB2_BUILTIN_MODULES_EFI", "grub-modules-efi.txt"),
])
def test_grub_module_lists_match_the_board(key, listing):
    assert unquote(defconfig()[key]) == (BOARD / listing).read_text().strip()


def test_force_check_hashes():
    assert "BR2_DOWNLOAD_FORCE_CHECK_HASHES=y" in DEFCONFIG.read_text().splitlines()


def test_linux_hash_holds_the_pinned_kernel():
    version = unquote(defconfig()["BR2_LINUX_KERNEL_CUSTOM_VERSION_VALUE"])
    assert re.fullmatch(r"6\.12\.\d+", version), "the 6.12 LTS line"
    lines = [line.split() for line in (EXT / "patches/linux/linux.hash").read_text().splitlines()
             if line.strip() and not line.startswith("#")]
    matching = [fields for fields in lines if fields[2] == f"linux-{version}.tar.xz"]
    assert len(matching) == 1
    algo, digest, _ = matching[0]
    assert algo == "sha256" and re.fullmatch(r"[0-9a-f]{64}", digest)


def test_router_packages_and_boot_choices():
    cfg = defconfig()
    for sym in ("BR2_PACKAGE_IPROUTE2", "BR2_PACKAGE_WIREGUARD_TOOLS", "BR2_PACKAGE_NFTABLES",
                "BR2_PACKAGE_IPERF3", "BR2_PACKAGE_PYTHON3", "BR2_PACKAGE_DNSMASQ",
                "BR2_PACKAGE_DROPBEAR", "BR2_PACKAGE_CHRONY", "BR2_PACKAGE_ETHTOOL",
                "BR2_PACKAGE_KMOD", "BR2_PACKAGE_KEEL", "BR2_TARGET_GRUB2",
                "BR2_TARGET_GRUB2_I386_PC", "BR2_TARGET_GRUB2_X86_64_EFI",
                "BR2_TARGET_ROOTFS_SQUASHFS", "BR2_TARGET_ROOTFS_SQUASHFS4_ZSTD",
                "BR2_LINUX_KERNEL", "BR2_LINUX_KERNEL_USE_ARCH_DEFAULT_CONFIG"):
        assert cfg.get(sym) == "y", sym
    # BusyBox init is Buildroot's default: the defconfig must not pick another
    assert not any(k.startswith("BR2_INIT_") for k in cfg if k != "BR2_INIT_BUSYBOX")


def test_keel_package_builds_tui_and_selects_textual():
    mk = (EXT / "package/keel/keel.mk").read_text()
    assert re.search(r"^KEEL_SITE = \$\(BR2_EXTERNAL_KEEL_PATH\)/\.\./tui$", mk, re.M)
    assert re.search(r"^KEEL_SITE_METHOD = local$", mk, re.M)
    assert "$(eval $(python-package))" in mk
    backend = re.search(r'build-backend = "([^"]+)"', (TOP / "tui/pyproject.toml").read_text())
    setup_type = re.search(r"^KEEL_SETUP_TYPE = (\w+)$", mk, re.M).group(1)
    assert (backend.group(1), setup_type) == ("setuptools.build_meta", "setuptools")
    config_in = (EXT / "package/keel/Config.in").read_text()
    assert "depends on BR2_PACKAGE_PYTHON3" in config_in


def test_every_runtime_dependency_is_selected_and_pinned():
    """pyproject's dependencies are the one list: each is selected by the
    keel package in Buildroot and pinned in requirements.lock (what the dev
    image installs)."""
    text = (TOP / "tui/pyproject.toml").read_text()
    deps = re.findall(r'"([a-z0-9_-]+)"', re.search(r"^dependencies = \[(.*)\]$", text,
                                                     re.M).group(1))
    assert {"textual", "rich", "spake2"} <= set(deps)
    config_in = (EXT / "package/keel/Config.in").read_text()
    lock = (TOP / "tui/requirements.lock").read_text()
    for dep in deps:
        symbol = "BR2_PACKAGE_PYTHON_" + dep.upper().replace("-", "_")
        assert f"select {symbol}" in config_in, dep
        assert re.search(rf"^{dep}==\S+$", lock, re.M), dep


def test_boot_img_reaches_the_images_directory():
    """post-image.sh needs images/boot.img; Buildroot's grub2 leaves it in its build tree."""
    mk = (EXT / "external.mk").read_text()
    assert "GRUB2_POST_INSTALL_IMAGES_HOOKS += KEEL_GRUB2_INSTALL_BOOT_IMG" in mk
    assert "build-i386-pc/grub-core/boot.img" in mk
    assert "LINUX_POST_BUILD_HOOKS += KEEL_LINUX_CHECK_CONFIG" in mk


def test_kernel_host_libraries_come_from_buildroot():
    """x86_64_defconfig (6.12) sets SYSTEM_TRUSTED_KEYRING (extract-cert needs OpenSSL)
    and UNWINDER_ORC/OBJTOOL (objtool needs libelf); with a custom kernel version
    Buildroot builds them for the kernel only when asked."""
    cfg = defconfig()
    assert cfg.get("BR2_LINUX_KERNEL_NEEDS_HOST_OPENSSL") == "y"
    assert cfg.get("BR2_LINUX_KERNEL_NEEDS_HOST_LIBELF") == "y"


# --- upgrades: RAUC as the dev image has it (Debian's rauc + rauc-service)

SYSTEM_CONF = TOP / "overlay/etc/rauc/system.conf"
KEYRING_SCRIPT = EXT / "scripts/rauc-keyring.sh"


def test_rauc_as_the_dev_image_has_it():
    """RAUC's D-Bus service (S47upgrade starts the bus; `rauc install` and `rauc
    status` go through the service), http(s) URLs streamed, JSON output (keel reads
    rauc info/status as JSON), grub-editenv for RAUC's grub backend, host rauc for
    release bundles. Symbols as in Buildroot 2026.02.3's package/rauc/Config.in,
    Config.in.host and boot/grub2/Config.in."""
    cfg = defconfig()
    for sym in ("BR2_PACKAGE_RAUC", "BR2_PACKAGE_RAUC_DBUS", "BR2_PACKAGE_RAUC_NETWORK",
                "BR2_PACKAGE_RAUC_STREAMING", "BR2_PACKAGE_RAUC_JSON",
                "BR2_TARGET_GRUB2_INSTALL_TOOLS", "BR2_PACKAGE_HOST_RAUC"):
        assert cfg.get(sym) == "y", sym
    # dbus and OpenSSL come by RAUC's selects (RAUC_DBUS -> DBUS, RAUC -> OPENSSL):
    # savedefconfig would drop them from the defconfig, so they are not in it
    assert "BR2_PACKAGE_DBUS" not in cfg and "BR2_PACKAGE_OPENSSL" not in cfg
    conf = SYSTEM_CONF.read_text()
    assert re.search(r"^bootloader=grub$", conf, re.M)  # hence grub-editenv on the target


def test_keyring_is_the_users_certificate():
    """The release image trusts only the user's certificate: the defconfig names no
    file of the tree (nor any committed one), the keel package installs it where
    system.conf looks, and the build stops without it."""
    cfg = defconfig()
    assert cfg["BR2_PACKAGE_KEEL_RAUC_KEYRING"] == '"$(KEEL_RAUC_CERT)"'
    config_in = (EXT / "package/keel/Config.in").read_text()
    assert re.search(r'^config BR2_PACKAGE_KEEL_RAUC_KEYRING\n\tstring "', config_in, re.M)
    keyring = re.search(r"^\[keyring\]\npath=(\S+)$", SYSTEM_CONF.read_text(), re.M).group(1)
    assert keyring == "/etc/rauc/keyring.pem"
    mk = (EXT / "package/keel/keel.mk").read_text()
    assert f"$(TARGET_DIR){keyring}" in mk
    assert "$(BR2_EXTERNAL_KEEL_PATH)/scripts/rauc-keyring.sh" in mk
    assert "TARGET_FINALIZE_HOOKS += KEEL_INSTALL_RAUC_KEYRING" in mk
    assert re.search(r"^\$\(error BR2_PACKAGE_KEEL_RAUC_KEYRING is empty", mk, re.M)
    # no certificate or key in the tree for an image to trust by mistake
    for top in ("overlay", "board", "buildroot-external", "tui"):
        assert not [p for p in (TOP / top).rglob("*.pem")], top


def make_cert(tmp_path: Path, name: str, subject: str) -> tuple[Path, Path]:
    key, cert = tmp_path / f"{name}.key.pem", tmp_path / f"{name}.cert.pem"
    subprocess.run(["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt",
                    "ec_paramgen_curve:prime256v1", "-nodes", "-keyout", str(key),
                    "-out", str(cert), "-days", "1", "-subj", subject],
                   check=True, capture_output=True, timeout=60)
    return cert, key


def keyring(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(KEYRING_SCRIPT), *args], capture_output=True, text=True,
                          timeout=30)


@pytest.mark.skipif(not shutil.which("openssl"), reason="openssl makes the test certificates")
def test_keyring_script_installs_a_certificate_and_refuses_the_rest(tmp_path):
    cert, key = make_cert(tmp_path, "release", "/O=someone/CN=release signing")
    dev_subject = re.search(r'-subj "([^"$]+)', (TOP / "board/keel/rauc/dev-keys.sh")
                            .read_text()).group(1)
    dev_cert, _ = make_cert(tmp_path, "dev", dev_subject + "host")
    both = tmp_path / "both.pem"
    both.write_text(cert.read_text() + key.read_text())
    dest = tmp_path / "target/etc/rauc/keyring.pem"

    ok = keyring(str(cert), str(dest))
    assert (ok.returncode, ok.stderr) == (0, "")
    assert dest.read_text() == cert.read_text()
    assert dest.stat().st_mode & 0o777 == 0o644

    for bad, said in [("", "make image KEEL_RAUC_CERT="),
                      (str(tmp_path / "missing.pem"), "no such readable file"),
                      (str(key), "holds no PEM certificate"),
                      (str(both), "holds a private key"),
                      (str(dev_cert), "the dev image's certificate")]:
        result = keyring(bad, str(tmp_path / "other/keyring.pem"))
        assert result.returncode == 1, bad
        assert said in result.stderr, (bad, result.stderr)
        assert not (tmp_path / "other").exists()


# --- make image's preflight: buildroot-external/scripts/host-tools.sh

HOST_TOOLS = EXT / "scripts/host-tools.sh"
# What Buildroot 2026.02.3's support/dependencies/dependencies.sh requires on PATH
# for keel_x86_64_defconfig (gzip and bzcat: DL_TOOLS, the extractors its sources need)
BUILDROOT_TOOLS = ["which", "sed", "make", "gcc", "g++", "bash", "perl", "tar", "wget",
                   "cpio", "unzip", "rsync", "bc", "cmp", "find", "xargs", "awk",
                   "install", "patch", "gzip", "bzcat"]
# every tool the preflight looks for on PATH (with --download)
PREFLIGHT_TOOLS = [*BUILDROOT_TOOLS, "ar", "qemu-img", "sha256sum", "xz"]


def run_preflight(tmp_path: Path, lacking: set[str], *args: str):
    """Run the preflight with a PATH of only the tools not in `lacking`.

    Each kept tool is a stub that succeeds (the real one may be missing on this
    host, and a stub perl has every module), so the result does not depend on
    what the host has installed. The script uses shell builtins only."""
    bindir = tmp_path / "bin"
    bindir.mkdir()
    for tool in PREFLIGHT_TOOLS:
        if tool not in lacking:
            stub = bindir / tool
            stub.write_text("#!/bin/sh\nexit 0\n")
            stub.chmod(0o755)
    return subprocess.run([str(HOST_TOOLS), *args], env={"PATH": str(bindir)},
                          capture_output=True, text=True, timeout=30)


def named_tools(message: str) -> set[str]:
    return set(re.findall(r"^image:   (\S+) \(Debian: ", message, re.M))


def test_preflight_passes_with_every_tool(tmp_path):
    result = run_preflight(tmp_path, set(), "--download")
    if Path("/usr/bin/file").exists():
        assert (result.returncode, result.stderr) == (0, "")
    else:  # the one absolute path the preflight checks: Buildroot insists on it
        assert named_tools(result.stderr) == {"/usr/bin/file"}


@pytest.mark.parametrize("lacking", [
    {"rsync"},
    {"rsync", "bc", "g++", "qemu-img", "bzcat", "cmp", "perl"},
    {"xz", "sha256sum", "wget", "patch"},
])
def test_preflight_names_every_missing_tool_in_one_message(tmp_path, lacking):
    result = run_preflight(tmp_path, lacking, "--download")
    assert result.returncode == 1 and result.stdout == ""
    named = named_tools(result.stderr) - {"/usr/bin/file"}
    assert named == lacking
    # one message: one header line, then the tools, then one install line
    lines = result.stderr.splitlines()
    assert len([line for line in lines if "nothing was downloaded" in line]) == 1
    install = [line for line in lines if "apt-get install" in line]
    assert len(install) == 1
    packages = set(install[0].split("apt-get install ", 1)[1].split())
    debian = {"rsync": "rsync", "bc": "bc", "g++": "g++", "qemu-img": "qemu-utils",
              "bzcat": "bzip2", "cmp": "diffutils", "perl": "perl", "xz": "xz-utils",
              "sha256sum": "coreutils", "wget": "wget", "patch": "patch"}
    assert {debian[tool] for tool in lacking} <= packages


def test_preflight_without_download_skips_the_tarball_tools(tmp_path):
    result = run_preflight(tmp_path, {"xz", "sha256sum"})
    assert named_tools(result.stderr) <= {"/usr/bin/file"}


def test_preflight_names_all_of_buildroots_list_at_once(tmp_path):
    """A bare host: every tool dependencies.sh would ask for, one at a time, named at once."""
    result = run_preflight(tmp_path, set(PREFLIGHT_TOOLS), "--download")
    assert result.returncode == 1
    assert named_tools(result.stderr) - {"/usr/bin/file"} == set(PREFLIGHT_TOOLS)


# --- the image a rescue system streams onto a disk (docs/install.md)

POST_IMAGE = BOARD / "post-image.sh"
COMPRESS = BOARD / "compress-image.sh"


def test_release_image_is_also_written_as_xz_with_its_sha256():
    """make image leaves keel-x86_64.img.xz and its .sha256 beside the raw disk:
    the defconfig asks post-image.sh for them (--xz), post-image.sh hands the
    raw disk to compress-image.sh, whose xz is Buildroot's host-xz (no
    BR2_PACKAGE_HOST_XZ in 2026.02.3: external.mk lists it among PACKAGES),
    and the Makefile copies both out. The dev image's build does not ask."""
    assert unquote(defconfig()["BR2_ROOTFS_POST_IMAGE_SCRIPT_ARGS"]) == "--xz"
    post = POST_IMAGE.read_text()
    assert re.search(r"^\s*--xz\) XZ=yes ;;$", post, re.M)
    assert '"$BOARD/compress-image.sh" "$BIN/keel-x86_64.img"' in post
    compress = COMPRESS.read_text()
    assert '"$img.xz"' in compress and '"$img.xz.sha256"' in compress
    assert re.search(r"^xz -T0 -6 --check=crc32 ", compress, re.M)
    mk = (EXT / "external.mk").read_text()
    assert re.search(r"^PACKAGES \+= \$\(filter-out \$\(PACKAGES\),host-xz\)$", mk, re.M)
    assert "BR2_PACKAGE_HOST_XZ" not in DEFCONFIG.read_text()
    released = re.search(r"^RELEASE_IMAGES := ((?:.*\\\n)*.*)$", (TOP / "Makefile").read_text(),
                         re.M).group(1).replace("\\\n", " ").split()
    assert released == ["keel-x86_64.img", "keel-x86_64.qcow2", "keel-x86_64.img.xz",
                        "keel-x86_64.img.xz.sha256"]
    build = (TOP / "board/keel/dev-image/build.sh").read_text()
    assert re.search(r'"\$BOARD/post-image\.sh" "\$BIN"$', build, re.M)


@pytest.mark.skipif(not shutil.which("xz") or not shutil.which("sha256sum"),
                    reason="compress-image.sh runs xz and sha256sum")
def test_compress_image_writes_what_a_rescue_system_streams(tmp_path):
    """The .xz decompresses to the image bit for bit, with CRC32 checks (what
    BusyBox's xz verifies), and `sha256sum -c` beside it checks it."""
    img = tmp_path / "keel-x86_64.img"
    raw = bytes(range(256)) * 4096 + b"\0" * (3 << 20) + b"keel" * 1024
    img.write_bytes(raw)
    (tmp_path / "keel-x86_64.img.xz").write_bytes(b"stale")
    for _ in range(2):  # a second run replaces the first's files
        result = subprocess.run([str(COMPRESS), str(img)], capture_output=True, text=True,
                                timeout=120)
        assert (result.returncode, result.stderr) == (0, "")
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "keel-x86_64.img", "keel-x86_64.img.xz", "keel-x86_64.img.xz.sha256"]
    xz = tmp_path / "keel-x86_64.img.xz"
    out = subprocess.run(["xz", "-dc", str(xz)], capture_output=True, check=True, timeout=60)
    assert out.stdout == raw
    listing = subprocess.run(["xz", "--robot", "--list", str(xz)], capture_output=True,
                             text=True, check=True, timeout=60).stdout
    assert re.search(r"^file\t.*\tCRC32\t", listing, re.M), listing
    digest = hashlib.sha256(xz.read_bytes()).hexdigest()
    assert (tmp_path / "keel-x86_64.img.xz.sha256").read_text() == \
        f"{digest}  keel-x86_64.img.xz\n"
    check = subprocess.run(["sha256sum", "-c", "keel-x86_64.img.xz.sha256"], cwd=tmp_path,
                           capture_output=True, text=True, timeout=30)
    assert check.returncode == 0 and "keel-x86_64.img.xz: OK" in check.stdout


def test_compress_image_without_an_image_fails(tmp_path):
    result = subprocess.run([str(COMPRESS), str(tmp_path / "missing.img")],
                            capture_output=True, text=True, timeout=30)
    assert result.returncode == 1 and "no image at" in result.stderr
    assert list(tmp_path.iterdir()) == []


def test_post_image_refuses_an_unknown_argument(tmp_path):
    """Before it touches anything: a misspelt BR2_ROOTFS_POST_IMAGE_SCRIPT_ARGS
    would otherwise build an image without its .xz."""
    result = subprocess.run([str(POST_IMAGE), str(tmp_path), "--zx"], capture_output=True,
                            text=True, timeout=30)
    assert result.returncode == 1
    assert "unknown argument --zx" in result.stderr
    assert list(tmp_path.iterdir()) == []
