#!/bin/sh
# Fail at once, before any build step, when URL cannot be reached.
#   online.sh URL
set -u
url=$1
if command -v curl >/dev/null; then
	curl -fsSIL --connect-timeout 5 --max-time 15 -o /dev/null "$url" 2>/dev/null
elif command -v wget >/dev/null; then
	wget -q --spider -T 10 -t 1 "$url" 2>/dev/null
else
	echo "image: neither curl nor wget is installed" >&2
	exit 1
fi && exit 0

cat >&2 <<MSG
image: cannot reach $url
image: make image downloads Buildroot and then every package's source, so it
image: needs the network. Without it, point BUILDROOT_SRC at a Buildroot
image: 2026.02.x tree whose download cache (BR2_DL_DIR) is complete:
image:     make image BUILDROOT_SRC=/path/to/buildroot
MSG
exit 1
