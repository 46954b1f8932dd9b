#!/bin/bash
# Post-image script, shared by both image builders: Buildroot runs it as
# BR2_ROOTFS_POST_IMAGE_SCRIPT, the dev image's build.sh at its end.
#   $1 = BINARIES_DIR, holding: bzImage, rootfs.squashfs, boot.img and grub.img
#        (GRUB i386-pc), efi-part/EFI/BOOT/bootx64.efi (GRUB x86_64-efi), and
#        for the dev image initrd.img.
#   --xz (the release image: BR2_ROOTFS_POST_IMAGE_SCRIPT_ARGS) also writes
#        keel-x86_64.img.xz and keel-x86_64.img.xz.sha256 (compress-image.sh).
# Writes BINARIES_DIR/keel-x86_64.img (GPT, boots by BIOS and UEFI) and .qcow2,
# and leaves boot.vfat and rootfs.squashfs, a slot's two images, for bundles.
set -euo pipefail
BOARD=$(cd "$(dirname "$0")" && pwd)
BIN=$(realpath "${1:?usage: post-image.sh BINARIES_DIR [--xz]}")
CFG=$BOARD/genimage.cfg
XZ=no
for arg in "${@:2}"; do
	case $arg in
	--xz) XZ=yes ;;
	*) echo "post-image.sh: unknown argument $arg (usage: post-image.sh BINARIES_DIR [--xz])" >&2; exit 1 ;;
	esac
done

for f in bzImage rootfs.squashfs boot.img grub.img efi-part/EFI/BOOT/bootx64.efi; do
	[ -f "$BIN/$f" ] || { echo "post-image.sh: missing $BIN/$f" >&2; exit 1; }
done

# A slot's kernel partition (boot.vfat): the kernel (+ initrd).
rm -rf "$BIN/slot-boot" "$BIN/efi-part/EFI/keel"
mkdir -p "$BIN/slot-boot/keel" "$BIN/efi-part/EFI/BOOT"
cp "$BIN/bzImage" "$BIN/slot-boot/keel/bzImage"
initrd=""
if [ -f "$BIN/initrd.img" ]; then
	cp "$BIN/initrd.img" "$BIN/slot-boot/keel/initrd.img"
	# shellcheck disable=SC2016 # GRUB's variable, expanded by GRUB
	initrd='	initrd $keel_boot/keel/initrd.img'
fi

# The slot's version, for bundles (make-bundle.sh): what post-build.sh wrote.
# Buildroot exports TARGET_DIR; the dev image's build.sh passes it too.
sed -n 's/^version=//p' "${TARGET_DIR:?TARGET_DIR: the target root}/etc/keel/release" > "$BIN/version"
[ -s "$BIN/version" ] || { echo "post-image.sh: no version in $TARGET_DIR/etc/keel/release" >&2; exit 1; }

# The partition numbers of the slots' kernel partitions, from genimage.cfg
# (the one place that holds the layout): partitions in the table, in order.
part_number() { # part_number NAME
	awk -v want="$1" '
		$1 == "partition" { name = $2; inside = 1; intable = 1; next }
		inside && $1 == "in-partition-table" && $3 == "false" { intable = 0 }
		inside && $1 == "}" { inside = 0; if (intable) { n++; if (name == want) { print n; exit } } }
	' "$CFG"
}
boot_a=$(part_number keel-boot-a)
boot_b=$(part_number keel-boot-b)
root_a=$(part_number keel-root-a)
root_b=$(part_number keel-root-b)
if [ -z "$boot_a" ] || [ -z "$boot_b" ] || [ -z "$root_a" ] || [ -z "$root_b" ]; then
	echo "post-image.sh: no keel-boot-a/-b or keel-root-a/-b partition in $CFG" >&2
	exit 1
fi

# The ESP: both GRUBs read one grub.cfg and one grubenv.
cmdline=$(tr -d '\n' < "$BOARD/cmdline.txt")
sed -e "s|@CMDLINE@|$cmdline|" -e "s|@INITRD@|$initrd|" \
	-e "s|@BOOT_A@|$boot_a|" -e "s|@BOOT_B@|$boot_b|" \
	-e "s|@ROOT_A@|$root_a|" -e "s|@ROOT_B@|$root_b|" \
	"$BOARD/grub.cfg.in" > "$BIN/efi-part/EFI/BOOT/grub.cfg"
# grubenv as grub-editenv writes it: a 1024-byte block, padded with '#'.
# As flashed: slot A good, slot B empty.
{
	printf '# GRUB Environment Block\n'
	printf '%s\n' 'ORDER=A B' A_OK=1 A_TRY=0 B_OK=0 B_TRY=0
} > "$BIN/grubenv.head"
head -c 1024 < <(cat "$BIN/grubenv.head" /dev/zero | tr '\0' '#') > "$BIN/efi-part/EFI/BOOT/grubenv"
rm -f "$BIN/grubenv.head"

# GRUB i386-pc: boot.img loads the core image from the BIOS boot partition.
# Its sector comes from genimage.cfg (the one place that holds the layout).
size_bytes() {
	case "$1" in
	*K) echo $(("${1%K}" * 1024)) ;;
	*M) echo $(("${1%M}" * 1024 * 1024)) ;;
	*) echo "$1" ;;
	esac
}
field() { # field PARTITION KEY
	awk -v part="$1" -v key="$2" '
		$1 == "partition" && $2 == part { inside = 1 }
		inside && $1 == key { print $3; exit }
		inside && $1 == "}" { inside = 0 }' "$CFG"
}
core_lba=$(($(size_bytes "$(field bios-boot offset)") / 512))
core_max=$(size_bytes "$(field bios-boot size)")
[ "$core_lba" -gt 0 ] || { echo "post-image.sh: no bios-boot offset in $CFG" >&2; exit 1; }
core_size=$(stat -c %s "$BIN/grub.img")
[ "$core_size" -le "$core_max" ] ||
	{ echo "post-image.sh: grub.img ($core_size B) exceeds bios-boot ($core_max B)" >&2; exit 1; }

put_le64() { # put_le64 FILE OFFSET VALUE
	local hex
	hex=$(printf '%016x' "$3")
	# shellcheck disable=SC2059 # the format is the bytes, built from hex digits
	printf "\\x${hex:14:2}\\x${hex:12:2}\\x${hex:10:2}\\x${hex:8:2}\\x${hex:6:2}\\x${hex:4:2}\\x${hex:2:2}\\x${hex:0:2}" |
		dd of="$1" bs=1 seek="$2" conv=notrunc status=none
}
put_le64 "$BIN/boot.img" $((0x5c)) "$core_lba"          # boot.img: kernel_sector
put_le64 "$BIN/grub.img" $((0x1f4)) $((core_lba + 1))   # diskboot: first blocklist

# genimage
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/root"
rm -f "$BIN/keel-x86_64.img" "$BIN/keel-x86_64.img.xz" "$BIN/keel-x86_64.img.xz.sha256" \
	"$BIN/esp.vfat" "$BIN/boot.vfat" "$BIN/data.ext4"
genimage --config "$CFG" --rootpath "$tmp/root" --tmppath "$tmp/genimage" \
	--inputpath "$BIN" --outputpath "$BIN"

if command -v qemu-img >/dev/null; then
	qemu-img convert -O qcow2 "$BIN/keel-x86_64.img" "$BIN/keel-x86_64.qcow2"
else
	echo "post-image.sh: qemu-img not found, no qcow2 written" >&2
fi

# What a rescue system streams onto a VPS's disk (docs/install.md): the release
# image only; the dev image's build skips it (xz on every dev build is time
# the tests wait for).
if [ "$XZ" = yes ]; then
	"$BOARD/compress-image.sh" "$BIN/keel-x86_64.img"
fi
