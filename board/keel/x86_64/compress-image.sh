#!/bin/bash
# The image as a rescue system streams it onto a disk: writes IMAGE.xz beside
# IMAGE and IMAGE.xz.sha256 (sha256sum's format, the file's name without a
# directory: `sha256sum -c keel-x86_64.img.xz.sha256` beside it checks it).
#   compress-image.sh IMAGE
# post-image.sh runs it for the release image (post-image.sh --xz, from the
# defconfig); there xz is Buildroot's host-xz (external.mk), first on PATH.
# Why xz and not zstd (BusyBox's rescue consoles decompress xz, not zstd):
# docs/install.md.
set -euo pipefail
img=${1:?usage: compress-image.sh IMAGE}
[ -f "$img" ] || { echo "compress-image.sh: no image at $img" >&2; exit 1; }
dir=$(dirname "$img")
name=$(basename "$img")
rm -f "$img.xz" "$img.xz.sha256"

# -T0: xz's multi-threaded mode, whose output does not depend on the number of
# threads. --check=crc32: the check BusyBox's unxz (XZ Embedded) verifies; it
# skips a CRC64, xz's default. -6 (8 MiB dictionary): little memory to
# decompress on a small rescue system; the image's content (a zstd squashfs,
# a compressed kernel) is compressed already, a higher preset gains nothing.
xz -T0 -6 --check=crc32 --stdout "$img" > "$img.xz.part"
mv "$img.xz.part" "$img.xz"
(cd "$dir" && sha256sum "$name.xz") > "$img.xz.sha256.part"
mv "$img.xz.sha256.part" "$img.xz.sha256"
