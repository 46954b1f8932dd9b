#!/bin/bash
# Build the keel dev image from Debian 13 (trixie) packages.
#
#   board/keel/dev-image/build.sh [OUT]     (make dev-image)
#
# Same disk as the Buildroot release image: the same overlay, post-build.sh,
# GRUB early config and module lists, kernel command line, genimage config and
# post-image.sh from board/keel/x86_64/. What differs is listed in docs/release-image.md.
#
# Caches under OUT/cache: the Debian base root (keyed by the package list), the
# downloaded .debs, and the pinned Python wheels (keyed by the lock file). A
# rebuild after a change in tui/ or overlay/ starts from the cached base.
set -euo pipefail

TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/../../.." && pwd)
OUT=$(realpath -m "${1:-$TOP/out}")
HERE=$TOP/board/keel/dev-image
BOARD=$TOP/board/keel/x86_64
SUITE=trixie
MIRROR=${KEEL_DEBIAN_MIRROR:-http://deb.debian.org/debian}
PYVER=3.13
CACHE=$OUT/cache
WORK=$OUT/dev
ROOT=$WORK/rootfs
BIN=$WORK/images
IMAGES=$OUT/images
NAME=keel-x86_64-dev

step() { printf '[dev-image %4ss] %s\n' "$SECONDS" "$*"; }
die() { printf 'dev-image: error: %s\n' "$*" >&2; exit 1; }

[ "$(id -u)" = 0 ] || die "needs root (chroot, device nodes in the root filesystem)"
for tool in mmdebstrap genimage grub-mkimage mksquashfs mkfs.vfat mcopy mke2fs qemu-img cpio xz; do
	command -v "$tool" >/dev/null || die "missing host tool '$tool' (.ci/run lists the Debian packages)"
done

# --- skip when nothing changed -------------------------------------------
# (the bundle signing certificate the image trusts is an input too)
"$TOP/board/keel/rauc/dev-keys.sh" "$OUT"
inputs_hash() {
	(
		cd "$TOP"
		find overlay tui board/keel -type f \
			! -path '*/__pycache__/*' ! -path '*.egg-info/*' ! -path 'tui/build/*' -print0 |
			sort -z | xargs -0 sha256sum
		sha256sum "$OUT/keys/dev.cert.pem"
	) | sha256sum | cut -d' ' -f1
}
HASH=$(inputs_hash)
if [ -z "${KEEL_FORCE:-}" ] && [ -f "$IMAGES/$NAME.img" ] && [ -f "$IMAGES/$NAME.qcow2" ] &&
	[ "$(cat "$WORK/inputs.sha256" 2>/dev/null)" = "$HASH" ]; then
	step "up to date: $IMAGES/$NAME.img (KEEL_FORCE=1 rebuilds)"
	exit 0
fi
mkdir -p "$CACHE/debs" "$WORK" "$IMAGES"
rm -f "$WORK/inputs.sha256"

# --- 1. Debian base root (cached) -----------------------------------------
PACKAGES=$(grep -v '^#' "$HERE/packages.txt" | xargs | tr ' ' ',')
MMOPTS=(--variant=minbase --include="$PACKAGES"
	--dpkgopt='path-exclude=/usr/share/man/*'
	--dpkgopt='path-exclude=/usr/share/doc/*'
	--dpkgopt='path-include=/usr/share/doc/*/copyright'
	--dpkgopt='path-exclude=/usr/share/locale/*'
	--dpkgopt='path-exclude=/usr/share/info/*')
BASE_KEY=$(printf '%s\n' "$SUITE" "${MMOPTS[@]}" | sha256sum | cut -c1-16)
BASE=$CACHE/debian-$SUITE-$BASE_KEY.tar
if [ ! -f "$BASE" ]; then
	step "mmdebstrap $SUITE ($(echo "$PACKAGES" | tr ',' ' ' | wc -w) packages) -> $BASE"
	# shellcheck disable=SC2016 # "$1" is expanded by mmdebstrap's hook shell
	mmdebstrap "${MMOPTS[@]}" \
		--format=tar --skip=download/empty --skip=essential/unlink \
		--setup-hook='mkdir -p "$1"/var/cache/apt/archives/' \
		--setup-hook="sync-in $CACHE/debs /var/cache/apt/archives/" \
		--customize-hook="sync-out /var/cache/apt/archives $CACHE/debs" \
		--customize-hook='rm -f "$1"/var/cache/apt/archives/*.deb' \
		"$SUITE" "$BASE.tmp" "$MIRROR"
	mv "$BASE.tmp" "$BASE"
else
	step "cached Debian base: $BASE"
fi

# --- 2. Python wheels pinned in tui/requirements.lock (cached) ------------
LOCK=$TOP/tui/requirements.lock
# pure-Python wheels, and the binary ones (cryptography, cffi) for the
# image's glibc (Debian 13: 2.41) on x86_64
WHEEL_PLATFORMS="--platform any --platform manylinux_2_34_x86_64 --platform manylinux_2_28_x86_64
	--platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64"
WHEELS=$CACHE/wheels-$(sha256sum "$LOCK" | cut -c1-16)
if [ ! -d "$WHEELS" ]; then
	step "downloading pinned wheels for Python $PYVER"
	# shellcheck disable=SC2086 # one word per option
	python3 -m pip download --quiet --no-deps --only-binary=:all: \
		--python-version "$PYVER" $WHEEL_PLATFORMS -d "$WHEELS.tmp" -r "$LOCK"
	mv "$WHEELS.tmp" "$WHEELS"
fi
step "building the keel wheel from tui/"
rm -rf "$WORK/keel-wheel" "$TOP/tui/build"
python3 -m pip wheel --quiet --no-deps --no-build-isolation -w "$WORK/keel-wheel" "$TOP/tui"
rm -rf "$TOP/tui/build" "$TOP"/tui/*.egg-info

# --- 3. the root filesystem -----------------------------------------------
step "assembling the root filesystem"
rm -rf "$ROOT" "$BIN"
mkdir -p "$ROOT" "$BIN"
tar -xf "$BASE" -C "$ROOT" --numeric-owner

KVER=$(basename "$(ls -d "$ROOT"/usr/lib/modules/*)")
cp "$ROOT/boot/vmlinuz-$KVER" "$BIN/bzImage"
rm -rf "${ROOT:?}"/boot/* "$ROOT"/vmlinuz* "$ROOT"/initrd.img*

# BusyBox is init, getty and login, as in the Buildroot image.
for applet in usr/sbin/init usr/sbin/getty usr/bin/login; do
	ln -sf /usr/bin/busybox "$ROOT/$applet"
done
# Its other applets fill in what Debian's minimal root lacks (reboot, mdev, ...).
chroot "$ROOT" /usr/bin/busybox --list-full | while read -r applet; do
	name=$(basename "$applet")
	if [ ! -e "$ROOT/usr/bin/$name" ] && [ ! -L "$ROOT/usr/bin/$name" ] &&
		[ ! -e "$ROOT/usr/sbin/$name" ] && [ ! -L "$ROOT/usr/sbin/$name" ]; then
		case "$applet" in
		*sbin/*) ln -s /usr/bin/busybox "$ROOT/usr/sbin/$name" ;;
		*) ln -s /usr/bin/busybox "$ROOT/usr/bin/$name" ;;
		esac
	fi
done

# Drop kernel modules a router never loads, and apt's state. Kept: every NIC
# and storage driver, and drivers/hid (a USB keyboard's driver). Without
# drivers/gpu no KMS driver ever takes the firmware's framebuffer or VGA text
# console away, so the console needs none.
for d in drivers/gpu drivers/media drivers/infiniband drivers/staging drivers/net/wireless \
	drivers/bluetooth drivers/iio drivers/input/touchscreen sound net/bluetooth net/wireless; do
	rm -rf "$ROOT/usr/lib/modules/$KVER/kernel/$d"
done
# Modules uncompressed (the squashfs compresses them anyway): decompressing
# xz at every load was most of a module's load time under emulation.
find "$ROOT/usr/lib/modules/$KVER" -name '*.ko.xz' -exec xz -d {} +
chroot "$ROOT" depmod -a "$KVER"
# Every module keel.kernel_features names is in the image, built in or as a
# file (the image boots and finds its NICs wherever the release image does),
# but for what it lacks on purpose: the DRM modules (drivers/gpu, above) and
# IKCONFIG's configs (Debian's kernel has no /proc/config.gz).
LACKS_ON_PURPOSE=" drm simpledrm configs "
LISTED=$("$TOP/buildroot-external/scripts/check-kernel-config" --modules)
missing=""
for mod in $LISTED; do
	case "$LACKS_ON_PURPOSE" in *" $mod "*) continue ;; esac
	chroot "$ROOT" modprobe -S "$KVER" --show-depends "$mod" >/dev/null 2>&1 ||
		missing="$missing $mod"
done
[ -z "$missing" ] || die "the $KVER kernel lacks modules keel.kernel_features names:$missing"
rm -rf "$ROOT"/var/lib/apt/lists/* "$ROOT"/var/cache/apt/* "$ROOT"/var/log/*
# grub-common is here for grub-editenv alone (RAUC's GRUB backend): the rest
# of it (grub-mkrescue, the fonts, the modules) boots nothing here
find "$ROOT/usr/bin" "$ROOT/usr/sbin" -name 'grub-*' ! -name grub-editenv -delete
rm -rf "$ROOT"/usr/lib/grub "$ROOT"/usr/share/grub "$ROOT"/etc/grub.d

step "installing the keel package and its pinned dependencies"
SITE=$ROOT/usr/lib/python3/dist-packages
# for the image's Python and platform, not this host's (cffi is a cp313 wheel)
# shellcheck disable=SC2086 # one word per option
python3 -m pip install --quiet --root-user-action=ignore --no-deps --no-index --no-compile --find-links "$WHEELS" \
	--only-binary=:all: --python-version "$PYVER" $WHEEL_PLATFORMS \
	--target "$SITE" -r "$LOCK" "$WORK"/keel-wheel/*.whl
rm -rf "${SITE:?}/bin"
cat > "$ROOT/usr/bin/keel" <<'PY'
#!/usr/bin/python3
import sys

from keel.cli import main

sys.exit(main())
PY
chmod 755 "$ROOT/usr/bin/keel"
chroot "$ROOT" python3 -m compileall -q -j 2 /usr/lib/python3/dist-packages >/dev/null

step "overlay/ and post-build.sh"
cp -a "$TOP/overlay/." "$ROOT/"
# the one certificate bundles must be signed with (out/keys, made on first use)
cp "$OUT/keys/dev.cert.pem" "$ROOT/etc/rauc/keyring.pem"
mkdir -p "$ROOT/etc/keel"
printf 'builder=dev-image\nkernel=%s\nbase=debian-%s\n' "$KVER" "$SUITE" > "$ROOT/etc/keel/builder"
"$BOARD/post-build.sh" "$ROOT"

# --- 4. initramfs (the Debian kernel has storage and squashfs as modules) --
step "initramfs"
INITRD=$WORK/initramfs
rm -rf "$INITRD"
mkdir -p "$INITRD"/{bin,dev,proc,sys,newroot,lib/modules}
cp "$ROOT/usr/bin/busybox" "$INITRD/bin/busybox"
cp "$HERE/initramfs-init" "$INITRD/init"
# the boot disk's functions (root=PARTUUID=: a partition's GUID from its GPT)
cp "$TOP/overlay/usr/share/keel/boot-disk.sh" "$INITRD/lib/boot-disk.sh"
: > "$INITRD/lib/modules/load-order"
# one line per line of initramfs-modules.txt: its modules with their
# dependencies, each file once, in load order
grep -v '^#' "$HERE/initramfs-modules.txt" | while read -r mods; do
	line=""
	for mod in $mods; do
		deps=$(chroot "$ROOT" modprobe -S "$KVER" --show-depends "$mod") ||
			die "initramfs-modules.txt: no module $mod in the $KVER kernel"
		# "insmod FILE" per module to load, "builtin NAME" for the rest
		while read -r how ko _; do
			[ "$how" = insmod ] || continue
			name=$(basename "$ko" .xz)
			[ -e "$INITRD/lib/modules/$name" ] && continue
			case "$ko" in
			*.xz) xz -dc "$ROOT$ko" > "$INITRD/lib/modules/$name" ;;
			*) cp "$ROOT$ko" "$INITRD/lib/modules/$name" ;;
			esac
			line="$line $name"
		done <<<"$deps"
	done
	echo "${line# }" >> "$INITRD/lib/modules/load-order"
done
(cd "$INITRD" && find . | LC_ALL=C sort | cpio --quiet -o -H newc --owner 0:0) | gzip -9 > "$BIN/initrd.img"

# --- 5. GRUB, squashfs, disk -----------------------------------------------
step "GRUB images (i386-pc core + x86_64-efi)"
cp /usr/lib/grub/i386-pc/boot.img "$BIN/boot.img"
# shellcheck disable=SC2046 # the module lists are word lists
grub-mkimage -O i386-pc -o "$BIN/grub.img" -p /EFI/BOOT -c "$BOARD/grub-early.cfg" \
	$(cat "$BOARD/grub-modules-pc.txt")
mkdir -p "$BIN/efi-part/EFI/BOOT"
# shellcheck disable=SC2046
grub-mkimage -O x86_64-efi -o "$BIN/efi-part/EFI/BOOT/bootx64.efi" -p /EFI/BOOT \
	-c "$BOARD/grub-early.cfg" $(cat "$BOARD/grub-modules-efi.txt")

step "squashfs root (zstd)"
progress=(-no-progress)
[ -t 1 ] && progress=()
mksquashfs "$ROOT" "$BIN/rootfs.squashfs" -comp zstd -noappend -quiet "${progress[@]}"

step "post-image.sh: genimage; the slot's images for bundles"
TARGET_DIR=$ROOT "$BOARD/post-image.sh" "$BIN"
mv "$BIN/keel-x86_64.img" "$IMAGES/$NAME.img"
mv "$BIN/keel-x86_64.qcow2" "$IMAGES/$NAME.qcow2"
echo "$HASH" > "$WORK/inputs.sha256"
step "done: $IMAGES/$NAME.img ($(du -h --apparent-size "$IMAGES/$NAME.img" | cut -f1)), $IMAGES/$NAME.qcow2"
