#!/bin/sh
# Make the pinned Buildroot release tree available in the cache:
# download the tarball (once), verify its sha256, extract it.
#   buildroot-src.sh VERSION SHA256 URL CACHE_DIR
# Prints nothing on success but progress; the tree is CACHE_DIR/buildroot-VERSION.
set -eu
version=$1 sha256=$2 url=$3 cache=$4
tarball=$cache/buildroot-$version.tar.xz
tree=$cache/buildroot-$version

[ -f "$tree/Makefile" ] && exit 0
mkdir -p "$cache"

if [ ! -f "$tarball" ]; then
	echo "== image: downloading $url"
	rm -f "$tarball.part"
	if command -v curl >/dev/null; then
		curl -fL --connect-timeout 10 --retry 2 -o "$tarball.part" "$url"
	else
		wget -T 10 -t 2 -O "$tarball.part" "$url"
	fi
	mv "$tarball.part" "$tarball"
fi

echo "== image: verifying buildroot-$version.tar.xz (sha256 $sha256)"
if ! echo "$sha256  $tarball" | sha256sum -c --status; then
	echo "image: $tarball does not match the pinned sha256 $sha256;" >&2
	echo "image: removed it, run make image again to download it anew" >&2
	rm -f "$tarball"
	exit 1
fi

echo "== image: extracting into $tree"
tmp=$(mktemp -d "$cache/.extract.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
tar -xJf "$tarball" -C "$tmp"
rm -rf "$tree"
mv "$tmp/buildroot-$version" "$tree"
