#!/bin/sh
# List the shell scripts make check runs shellcheck on: every *.sh, every
# init script, and every file starting with a sh/bash #! line, under DIR...
#   shell-scripts.sh DIR...
set -eu
for dir in "$@"; do
	[ -d "$dir" ] || continue
	find "$dir" -type f ! -path '*/__pycache__/*' | sort | while read -r f; do
		case $f in
		*.sh | */etc/init.d/*) echo "$f" ;;
		*) head -n1 "$f" 2>/dev/null | grep -Eq '^#! ?(/usr)?/bin/((env|busybox) )?(ba|da)?sh' &&
			echo "$f" ;;
		esac
	done
done
