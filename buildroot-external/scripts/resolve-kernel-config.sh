#!/bin/bash
# The release kernel's configuration as Buildroot resolves it, without
# Buildroot and without building a kernel: on a Linux source tree of the
# pinned series, `make ARCH=x86_64 x86_64_defconfig`, then
# `scripts/kconfig/merge_config.sh -m` with the fragment(s), then
# `make olddefconfig` (Buildroot's pkg-kconfig steps for
# BR2_LINUX_KERNEL_USE_ARCH_DEFAULT_CONFIG + BR2_LINUX_KERNEL_CONFIG_FRAGMENT_FILES;
# its fixups after that only switch options on, or GCC_PLUGINS and the other
# kernel compressions off, so they cannot drop an option of the fragment).
# make check then proves every option of the fragment survived
# (check-kernel-config): kconfig drops an option whose dependencies are off,
# or that it does not know, without a word.
#
#   resolve-kernel-config.sh CACHE DEFCONFIG FRAGMENT...
#     CACHE      a directory of its own (make check: out/kernel-config)
#     DEFCONFIG  keel's Buildroot defconfig: the kernel series it pins
#                (BR2_LINUX_KERNEL_CUSTOM_VERSION_VALUE) must be the source's
#     prints the resolved .config's path (CACHE/resolved/.config)
#
# The source: KEEL_LINUX_SRC, a Linux tree or a .tar.xz of one; by default
# Debian's linux-source-<series> package (/usr/src/linux-source-6.12.tar.xz;
# board/keel/dev-image/host-deps.sh installs it). Its patch level may differ
# from the pin's: Kconfig dependencies hold within a stable series. Host
# tools: make, gcc, flex, bison (kconfig's conf is built from source).
#
# Cached: the files kconfig reads are extracted once per source tarball
# (about 40 MB of its 1.5 GB: Kconfig files, Makefiles, scripts/, arch/x86/),
# and the resolved .config is kept until the source, the fragments, this
# script or the host's compiler change. On 2 shared cores: cold 33-40 s
# (half decompressing the tarball, half kconfig), after a change of the
# fragment about 17 s, nothing changed well under a second.
set -euo pipefail

die() { printf 'resolve-kernel-config: %s\n' "$*" >&2; exit 1; }
log() { printf 'resolve-kernel-config: %s\n' "$*" >&2; }

[ $# -ge 3 ] || die "usage: resolve-kernel-config.sh CACHE DEFCONFIG FRAGMENT..."
CACHE=$(realpath -m "$1")
DEFCONFIG=$2
shift 2
FRAGMENTS=()
for fragment in "$@"; do
	[ -f "$fragment" ] || die "no kernel config fragment at $fragment"
	FRAGMENTS+=("$(realpath "$fragment")")
done
[ -f "$DEFCONFIG" ] || die "no Buildroot defconfig at $DEFCONFIG"
PIN=$(sed -n 's/^BR2_LINUX_KERNEL_CUSTOM_VERSION_VALUE="\([0-9]*\.[0-9]*\).*"$/\1/p' "$DEFCONFIG")
[ -n "$PIN" ] || die "$DEFCONFIG: no BR2_LINUX_KERNEL_CUSTOM_VERSION_VALUE=\"X.Y.Z\" (the kernel it pins)"
SRC=${KEEL_LINUX_SRC:-/usr/src/linux-source-$PIN.tar.xz}

missing=""
for tool in make gcc flex bison xz tar; do
	command -v "$tool" >/dev/null || missing="$missing $tool"
done
[ -e "$SRC" ] || missing="$missing linux-source-$PIN ($SRC)"
[ -z "$missing" ] || die "missing:$missing; run board/keel/dev-image/host-deps.sh as root" \
	"(or set KEEL_LINUX_SRC to a Linux $PIN tree or tarball)"

mkdir -p "$CACHE"
exec 9>"$CACHE/.lock"
flock 9 # one resolution at a time (make check beside the unit test)

# --- the source tree: in place, or the kconfig part of the tarball --------
if [ -d "$SRC" ]; then
	TREE=$(realpath "$SRC")
	source_id="tree $TREE"
else
	TREE=$CACHE/src
	source_id="tarball $(realpath "$SRC") $(stat -c '%s %Y' "$SRC")"
	if [ "$(cat "$TREE/.keel-source" 2>/dev/null)" != "$source_id" ]; then
		log "extracting the kconfig files of $SRC"
		rm -rf "$TREE" "$TREE.tmp"
		mkdir -p "$TREE.tmp"
		top=$(tar -tJf "$SRC" | head -n1) || true
		top=${top%%/*}
		[ -n "$top" ] || die "$SRC: not a tarball of a Linux tree"
		xz -dc "$SRC" | tar -x -C "$TREE.tmp" --strip-components=1 --wildcards \
			"$top/Makefile" "$top/Kconfig" "$top/scripts/*" "$top/arch/x86/*" '*/Kconfig*'
		echo "$source_id" > "$TREE.tmp/.keel-source"
		mv "$TREE.tmp" "$TREE"
		log "extracted in $SECONDS s"
	fi
fi
{ [ -f "$TREE/Makefile" ] && [ -f "$TREE/arch/x86/configs/x86_64_defconfig" ]; } ||
	die "$SRC: not a Linux source tree (no Makefile, arch/x86/configs/x86_64_defconfig)"
version=$(sed -n 's/^VERSION = //p;s/^PATCHLEVEL = //p' "$TREE/Makefile" | paste -sd.)
[ "$version" = "$PIN" ] || die "$SRC is Linux $version; $DEFCONFIG pins $PIN"

# --- the resolution, unless its inputs are those of the last one ----------
OUTDIR=$CACHE/resolved
inputs=$( {
	echo "$source_id"
	sha256sum "${FRAGMENTS[@]}" "$0"
	gcc --version | head -n1
} | sha256sum | cut -d' ' -f1)
if [ -f "$OUTDIR/.config" ] && [ "$(cat "$OUTDIR/.keel-inputs" 2>/dev/null)" = "$inputs" ]; then
	echo "$OUTDIR/.config"
	exit 0
fi
log "resolving x86_64_defconfig + ${FRAGMENTS[*]} on Linux $version"
SECONDS=0
rm -rf "$OUTDIR"
mkdir -p "$OUTDIR"
kmake() { make -s -C "$TREE" O="$OUTDIR" ARCH=x86_64 "$@" >>"$OUTDIR/log" 2>&1 ||
	die "make $* failed in $TREE: $(tail -n 20 "$OUTDIR/log")"; }
kmake x86_64_defconfig
(cd "$OUTDIR" && "$TREE/scripts/kconfig/merge_config.sh" -m -O "$OUTDIR" "$OUTDIR/.config" \
	"${FRAGMENTS[@]}" >>"$OUTDIR/log" 2>&1) || die "merge_config.sh failed: $(tail -n 20 "$OUTDIR/log")"
kmake olddefconfig
echo "$inputs" > "$OUTDIR/.keel-inputs"
log "resolved in $SECONDS s (kconfig built, defconfig, merge, olddefconfig)"
echo "$OUTDIR/.config"
