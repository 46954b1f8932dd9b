#!/bin/sh
# Post-build script, shared by both image builders: Buildroot runs it as
# BR2_ROOTFS_POST_BUILD_SCRIPT, the dev image's build.sh after the overlay.
#   $1 = the target root filesystem
set -eu
TARGET=${1:?usage: post-build.sh TARGET_DIR}
BOARD=$(cd "$(dirname "$0")" && pwd)
TOP=$(cd "$BOARD/../../.." && pwd)

# Mount points of the read-only root.
for d in data dev proc sys run tmp; do
	mkdir -p "$TARGET/$d"
done
chmod 1777 "$TARGET/tmp"

# Root is locked on the read-only root: S04access opens it (an empty password)
# only on a mounted /data that holds no access state yet, or the choice of none.
if [ -f "$TARGET/etc/shadow" ]; then
	sed -i 's/^root:[^:]*:/root:*:/' "$TARGET/etc/shadow"
fi

# Files that change at run time live on tmpfs (/run) or /data.
ln -sfn ../run/resolv.conf "$TARGET/etc/resolv.conf"
ln -sfn ../proc/self/mounts "$TARGET/etc/mtab"

# Init scripts are executable whatever the checkout's file modes.
chmod 0755 "$TARGET"/etc/init.d/*

# What this image is: the package's version and the git commit it was built
# from (KEEL_VERSION, when set, says it instead). keel --version, os-release
# and the bundle (make-bundle.sh) all say this one.
version=${KEEL_VERSION:-}
if [ -z "$version" ]; then
	version=$(sed -n 's/^__version__ = "\(.*\)"$/\1/p' "$TOP/tui/keel/__init__.py")
	commit=$(git -C "$TOP" describe --always --dirty --abbrev=7 2>/dev/null | sed 's/-dirty$/.dirty/')
	[ -n "$commit" ] && version="$version+g$commit"
fi
mkdir -p "$TARGET/etc/keel"
{
	echo "version=$version"
	echo "cmdline=$(cat "$BOARD/cmdline.txt")"
} > "$TARGET/etc/keel/release"
rm -f "$TARGET/etc/os-release"
cat > "$TARGET/etc/os-release" <<OS
NAME=keel
ID=keel
PRETTY_NAME="keel $version"
VERSION="$version"
VERSION_ID=$version
OS
