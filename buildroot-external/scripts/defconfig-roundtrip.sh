#!/bin/bash
# Configure the defconfig with Buildroot, run savedefconfig, and fail if the
# saved defconfig drops any symbol the defconfig sets: a dropped symbol is one
# Buildroot could not set (wrong name, unmet dependency) or a default value.
#   defconfig-roundtrip.sh BUILDROOT_SRC EXTERNAL_DIR DEFCONFIG_NAME OUT_DIR
set -euo pipefail
src=$1 external=$2 name=$3 out=$4
defconfig=$external/configs/$name
saved=$out/saved_defconfig

make -s -C "$src" BR2_EXTERNAL="$external" O="$out" "$name" >/dev/null
make -s -C "$src" O="$out" savedefconfig BR2_DEFCONFIG="$saved" >/dev/null

settings() { grep -E '^(BR2_[A-Za-z0-9_]+=|# BR2_[A-Za-z0-9_]+ is not set$)' "$1" | sort; }
dropped=$(comm -23 <(settings "$defconfig") <(settings "$saved"))
if [ -n "$dropped" ]; then
	echo "check: savedefconfig dropped what $name sets:" >&2
	while read -r line; do echo "check:   $line" >&2; done <<<"$dropped"
	echo "check: (the saved defconfig is $saved)" >&2
	exit 1
fi
echo "check: savedefconfig keeps all $(settings "$defconfig" | wc -l) settings of $name"
