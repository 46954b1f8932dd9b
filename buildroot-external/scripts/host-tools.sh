#!/bin/sh
# make image's preflight: check every host tool the release build needs
# before anything is downloaded, and name all missing ones in one message
# with the Debian package that provides each. Exits 1 if any is missing.
#   host-tools.sh [--download]
# --download: also what buildroot-src.sh needs to verify and unpack the
# Buildroot tarball (sha256sum, xz).
#
# The list is what Buildroot 2026.02.3's support/dependencies/dependencies.sh
# requires (it stops at the first missing one, and only after keel has
# downloaded Buildroot), plus g++ and binutils from its manual's mandatory
# list, the extractors the defconfig's sources need (DL_TOOLS: gzip, bzcat;
# a missing xzcat Buildroot builds itself), and keel's own qemu-img.
# Uses shell builtins only, so any PATH can be checked.
set -u

# TOOL:DEBIAN-PACKAGE
tools="which:debianutils sed:sed make:make gcc:gcc g++:g++ ar:binutils
bash:bash patch:patch perl:perl tar:tar wget:wget cpio:cpio unzip:unzip
rsync:rsync bc:bc cmp:diffutils find:findutils xargs:findutils awk:gawk
install:coreutils gzip:gzip bzcat:bzip2 qemu-img:qemu-utils"
if [ "${1:-}" = --download ]; then
	tools="$tools sha256sum:coreutils xz:xz-utils"
fi
# Perl modules dependencies.sh requires ("open" because the defconfig
# selects libxcrypt). Debian's perl-base lacks most of them; perl has all.
perl_modules="Data::Dumper English ExtUtils::MakeMaker Thread::Queue FindBin IPC::Cmd open"

lines="" packages=""
missing() { # missing WHAT PACKAGE
	lines="$lines
image:   $1 (Debian: $2)"
	case " $packages " in
	*" $2 "*) ;;
	*) packages="${packages:+$packages }$2" ;;
	esac
}

for entry in $tools; do
	command -v "${entry%%:*}" >/dev/null 2>&1 || missing "${entry%%:*}" "${entry#*:}"
done
# libtool breaks with any other 'file': Buildroot wants exactly this path.
[ -x /usr/bin/file ] || missing /usr/bin/file file
if command -v perl >/dev/null 2>&1; then
	absent=""
	for module in $perl_modules; do
		if [ "$module" = open ]; then
			perl -e "use open ':std'" >/dev/null 2>&1 || absent="$absent $module"
		else
			perl -e "require $module" >/dev/null 2>&1 || absent="$absent $module"
		fi
	done
	[ -z "$absent" ] || missing "Perl modules$absent" perl
fi

# Buildroot refuses a PATH with the current directory or blanks in it.
case ":$PATH:" in
*::* | *:.:*) lines="$lines
image:   PATH holds the current directory (an empty or '.' entry): remove it" ;;
*" "* | *"	"*) lines="$lines
image:   PATH holds blanks: Buildroot refuses that" ;;
esac

[ -z "$lines" ] && exit 0
{
	echo "image: the host lacks what the Buildroot build needs (nothing was downloaded):$lines"
	[ -z "$packages" ] || echo "image: on Debian or Ubuntu: apt-get install $packages"
} >&2
exit 1
