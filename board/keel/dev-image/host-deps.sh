#!/bin/bash
# What this machine needs to build the dev image, boot the lab and run the
# tests: the one list, used by `make demo`, `make test` and .ci/run.
#   host-deps.sh           install what is missing (root, Debian 12 or later)
#   host-deps.sh --check   only say what is missing (exit 1 if anything is)
# QEMU comes from bookworm-backports on Debian 12 (QEMU 10: under bookworm's
# 7.2, guests with 2 vCPUs die at random; see docs/lab.md), and so does
# dhcpcd (10.1, as the image's trixie has; bookworm's is 9.4).
# make check resolves the release kernel's configuration on Debian's source
# package of the series the Buildroot defconfig pins (linux-source-6.12: in
# trixie, and in bookworm-security), with kconfig built by make, gcc, flex
# and bison (buildroot-external/scripts/resolve-kernel-config.sh).
# The IPv6 internet side's servers (Kea's DHCPv6, radvd) and dhcpcd are for
# tests/unit/test_dhcpv6_pd_netns.py, in network namespaces: Kea's service
# is not left running on this machine after it is installed here.
# tesseract reads the lab's screens back as text (QEMU's screendump of a
# guest's VGA: tests/lab/screen_text.py), where the serial line cannot show them.
set -euo pipefail
TOP=$(cd "$(dirname "$0")/../../.." && pwd)
KERNEL_SERIES=$(sed -n 's/^BR2_LINUX_KERNEL_CUSTOM_VERSION_VALUE="\([0-9]*\.[0-9]*\).*"$/\1/p' \
	"$TOP/buildroot-external/configs/keel_x86_64_defconfig")
[ -n "$KERNEL_SERIES" ] || { echo "host-deps: no BR2_LINUX_KERNEL_CUSTOM_VERSION_VALUE" \
	"in buildroot-external/configs/keel_x86_64_defconfig" >&2; exit 1; }
PACKAGES="ovmf mmdebstrap genimage grub-pc-bin grub-efi-amd64-bin grub-common mtools
	linux-source-$KERNEL_SERIES make gcc libc6-dev flex bison
	dosfstools e2fsprogs squashfs-tools cpio xz-utils gzip shellcheck tmux python3-pip rauc openssl
	kea-dhcp6-server radvd iputils-ping dnsmasq-base nftables tesseract-ocr"
# a command each package gives (to tell what is missing without dpkg's view)
TOOLS="qemu-system-x86_64 qemu-img mmdebstrap genimage grub-mkimage mcopy mkfs.vfat
	mkfs.ext4 mksquashfs cpio xz gzip shellcheck tmux ruff rauc openssl
	kea-dhcp6 radvd ping nsenter setsid dnsmasq nft make gcc flex bison tesseract"

missing_tools() {
	for tool in $TOOLS; do command -v "$tool" >/dev/null || echo "$tool"; done
	[ -e "/usr/src/linux-source-$KERNEL_SERIES.tar.xz" ] || echo "linux-source-$KERNEL_SERIES"
	[ -e /usr/share/OVMF/OVMF_CODE.fd ] || [ -e /usr/share/OVMF/OVMF_CODE_4M.fd ] ||
		echo "ovmf"
	qemu-system-x86_64 --version 2>/dev/null | grep -Eq 'version (9|[1-9][0-9])\.' ||
		echo "qemu-10"
	dhcpcd --version 2>/dev/null | grep -Eq '^dhcpcd [1-9][0-9]\.' || echo "dhcpcd-10"
}

missing_python() {
	python3 - "$TOP/tests/requirements.txt" <<'PY' || echo "python-packages"
import importlib.util, sys
for module in ("pytest", "pexpect", "hypothesis", "pyte", "textual", "syrupy", "spake2",
               "cryptography", "xdist", "prometheus_client"):
    if importlib.util.find_spec(module) is None:
        sys.exit(1)
PY
}

missing=$( (missing_tools; missing_python) | tr '\n' ' ')
if [ -z "$missing" ]; then
	exit 0
fi
if [ "${1:-}" = "--check" ]; then
	echo "missing: $missing (run board/keel/dev-image/host-deps.sh as root)" >&2
	exit 1
fi
if [ "$(id -u)" -ne 0 ]; then
	echo "missing: $missing; run as root: $0" >&2
	exit 1
fi
echo "== host-deps: installing what is missing: $missing"
export DEBIAN_FRONTEND=noninteractive
if grep -q bookworm /etc/os-release && ! grep -rqs bookworm-backports \
	/etc/apt/sources.list /etc/apt/sources.list.d/; then
	cat >/etc/apt/sources.list.d/keel-backports.sources <<'SRC'
Types: deb
URIs: http://deb.debian.org/debian
Suites: bookworm-backports
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
SRC
fi
apt-get update -q
had_kea=$(command -v kea-dhcp6 || true)
if grep -q bookworm /etc/os-release; then
	apt-get install -y -q -t bookworm-backports qemu-system-x86 qemu-utils dhcpcd-base
else
	apt-get install -y -q qemu-system-x86 qemu-utils dhcpcd-base
fi
# shellcheck disable=SC2086 # one word per package
apt-get install -y -q $PACKAGES
if [ -z "$had_kea" ] && [ -d /run/systemd/system ]; then
	systemctl disable --now kea-dhcp6-server.service || true
fi
qemu-system-x86_64 --version | head -1
python3 -m pip install -q --disable-pip-version-check --root-user-action=ignore \
	-r "$TOP/tests/requirements.txt"
