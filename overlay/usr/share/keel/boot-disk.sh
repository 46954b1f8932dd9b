# shellcheck shell=dash
# One disk: root, /data, the ESP and both slots come from the disk that holds
# the booted root, even with another keel disk in the machine (a stick and the
# NVMe it was installed onto). Sourced by S01mount (the /dev/disk/by-partlabel
# names that S03data, S47upgrade and RAUC's system.conf use: the boot disk's
# only) and by the dev image's initramfs (root=PARTUUID=, which GRUB sets to
# the root partition of the disk it booted from). BusyBox sh; every function
# takes the roots it reads (SYS: /sys, DEV: /dev) so tests run it on a
# made-up tree without privileges (tests/unit/test_boot_disk.py).

# keel_root_disk SYS MOUNTINFO: the disk (sda, nvme0n1) of the partition
# mounted on /, from its major:minor in mountinfo; nothing when / is not on a
# partition (a tmpfs, a test host's overlay).
keel_root_disk() {
	_sys=$1
	# mountinfo: ID PARENT MAJ:MIN ROOT MOUNTPOINT ...; the last / mount wins
	_majmin=""
	while read -r _id _parent _mm _root _point _rest; do
		[ "$_point" = / ] && _majmin=$_mm
	done <"$2"
	[ -n "$_majmin" ] || return 0
	_part=$(readlink -f "$_sys/dev/block/$_majmin" 2>/dev/null) || return 0
	[ -f "$_part/partition" ] || return 0
	_part=${_part%/*}
	echo "${_part##*/}"
}

# keel_disk_of SYS NAME: the disk a partition NAME is on (sda5 -> sda);
# nothing for a disk or what sysfs does not have.
keel_disk_of() {
	_p=$(readlink -f "$1/class/block/$2" 2>/dev/null) || return 0
	[ -f "$_p/partition" ] || return 0
	_p=${_p%/*}
	echo "${_p##*/}"
}

# keel_partlabels SYS LINKDIR DISK: a LINKDIR/NAME -> ../../DEV link for each
# GPT partition of DISK (udev's /dev/disk/by-partlabel, of one disk). A keel
# partition (keel-*, esp) on another disk is ignored, and said once on
# stdout: "keel: another keel disk, sdb (keel-data keel-root-a ...), ignored:
# root, /data and the slots are on sda". With no DISK (not known), every
# disk's partitions, as before (a later one wins).
keel_partlabels() {
	_sys=$1 _links=$2 _disk=$3
	_others="" _seen=""
	mkdir -p "$_links"
	for _uevent in "$_sys"/class/block/*/uevent; do
		[ -f "$_uevent" ] || continue
		_name='' _dev=''
		while IFS='=' read -r _key _value; do
			case "$_key" in
			PARTNAME) _name=$_value ;;
			DEVNAME) _dev=$_value ;;
			esac
		done <"$_uevent"
		if [ -z "$_name" ] || [ -z "$_dev" ]; then continue; fi
		if [ -n "$_disk" ]; then
			_on=$(keel_disk_of "$_sys" "$_dev")
			if [ "$_on" != "$_disk" ]; then
				case "$_name" in
				keel-* | esp)
					case " $_seen " in *" $_on "*) ;; *) _seen="$_seen $_on" ;; esac
					_others="$_others $_on:$_name"
					;;
				esac
				continue
			fi
		fi
		ln -sfn "../../$_dev" "$_links/$_name"
	done
	for _on in $_seen; do
		_names=""
		for _o in $_others; do
			[ "${_o%%:*}" = "$_on" ] && _names="$_names ${_o#*:}"
		done
		echo "keel: another keel disk, $_on ($_names ), ignored: root, /data and the slots" \
			"are on $_disk, the disk booted"
	done
}

# keel_gpt_partuuid SYS DEV NAME: the GPT unique partition GUID of the
# partition NAME (sda5), read from its disk's partition table (sysfs gives
# no PARTUUID; GRUB's `probe --part-uuid` and the kernel's root=PARTUUID=
# read the same bytes), in lower case; nothing when it cannot be read.
keel_gpt_partuuid() {
	_sys=$1 _devdir=$2 _name=$3
	_disk=$(keel_disk_of "$_sys" "$_name")
	[ -n "$_disk" ] || return 0
	read -r _n <"$_sys/class/block/$_name/partition" || return 0
	_ss=512
	[ -r "$_sys/block/$_disk/queue/logical_block_size" ] &&
		read -r _ss <"$_sys/block/$_disk/queue/logical_block_size"
	# the header at LBA 1: "EFI PART", the entries' LBA (offset 72, 8 bytes)
	# and the size of one entry (offset 84, 4 bytes), little-endian
	_hdr=$(dd if="$_devdir/$_disk" bs="$_ss" skip=1 count=1 2>/dev/null | od -An -v -tx1 |
		tr -d ' \n')
	[ "${_hdr%"${_hdr#????????????????}"}" = 4546492050415254 ] || return 0
	_le() { # _le HEX: a little-endian number of hex digit pairs
		_h=$1 _r=""
		while [ -n "$_h" ]; do
			_r="${_h%"${_h#??}"}$_r"
			_h=${_h#??}
		done
		echo $((0x$_r))
	}
	_lba=$(_le "$(echo "$_hdr" | cut -c145-160)")
	_esize=$(_le "$(echo "$_hdr" | cut -c169-176)")
	[ "$_esize" -ge 128 ] 2>/dev/null || return 0
	_off=$((_lba * _ss + (_n - 1) * _esize + 16))
	_g=$(dd if="$_devdir/$_disk" bs=1 skip="$_off" count=16 2>/dev/null | od -An -v -tx1 |
		tr -d ' \n')
	[ ${#_g} -eq 32 ] || return 0
	# mixed-endian: the first three fields little-endian
	_b() { echo "$_g" | cut -c "$1-$(($1 + 1))"; }
	echo "$(_b 7)$(_b 5)$(_b 3)$(_b 1)-$(_b 11)$(_b 9)-$(_b 15)$(_b 13)-$(echo "$_g" |
		cut -c17-20)-$(echo "$_g" | cut -c21-32)"
}
