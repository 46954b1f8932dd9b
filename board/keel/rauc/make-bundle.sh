#!/bin/bash
# A signed RAUC bundle (verity format) of one slot's two images:
#   board/keel/rauc/make-bundle.sh BINARIES_DIR CERT KEY OUTPUT.raucb
# BINARIES_DIR holds what post-image.sh left: boot.vfat (the slot's kernel
# partition), rootfs.squashfs and version. The compatible is the image's own
# (overlay/etc/rauc/system.conf): a router takes only bundles made for it.
set -euo pipefail
TOP=$(cd "$(dirname "$0")/../../.." && pwd)
BIN=$(realpath "${1:?usage: make-bundle.sh BINARIES_DIR CERT KEY OUTPUT.raucb}")
CERT=$(realpath "${2:?}")
KEY=$(realpath "${3:?}")
OUTPUT=$(realpath -m "${4:?}")
command -v rauc >/dev/null || { echo "make-bundle: rauc is missing (make host-deps)" >&2; exit 1; }
for f in boot.vfat rootfs.squashfs version; do
	[ -f "$BIN/$f" ] || { echo "make-bundle: missing $BIN/$f (build the image first)" >&2; exit 1; }
done
compatible=$(sed -n 's/^compatible=//p' "$TOP/overlay/etc/rauc/system.conf")
version=$(cat "$BIN/version")
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir "$tmp/bundle"
ln "$BIN/rootfs.squashfs" "$tmp/bundle/rootfs.squashfs" 2>/dev/null ||
	cp "$BIN/rootfs.squashfs" "$tmp/bundle/rootfs.squashfs"
cp "$BIN/boot.vfat" "$tmp/bundle/boot.vfat"
cat > "$tmp/bundle/manifest.raucm" <<MANIFEST
[update]
compatible=$compatible
version=$version
description=keel $version

[bundle]
format=verity

[image.rootfs]
filename=rootfs.squashfs

[image.boot]
filename=boot.vfat
MANIFEST
rm -f "$OUTPUT"
mkdir -p "$(dirname "$OUTPUT")"
rauc bundle --cert="$CERT" --key="$KEY" --keyring="$CERT" "$tmp/bundle" "$OUTPUT" >/dev/null 2>"$tmp/log" ||
	{ cat "$tmp/log" >&2; exit 1; }
echo "make-bundle: $OUTPUT (keel $version for $compatible, $(du -h "$OUTPUT" | cut -f1))"
