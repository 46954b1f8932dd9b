#!/bin/sh
# The release image's RAUC keyring: the certificate bundles must be signed
# with, the user's own (BR2_PACKAGE_KEEL_RAUC_KEYRING; keel_x86_64_defconfig
# takes it from make image KEEL_RAUC_CERT=...). Checked by make image's
# preflight and again by the keel package when it installs it (every build's
# target-finalize). Refused: no file (an image that trusts nothing can never
# be upgraded), no PEM certificate, a private key (it would ship in the image),
# the dev image's certificate (its key lies unprotected in out/keys).
#   rauc-keyring.sh CERT         check only
#   rauc-keyring.sh CERT DEST    check, then install as DEST (mode 0644)
set -eu
cert=${1-}
dest=${2-}

fail() {
	echo "rauc keyring: $*" >&2
	exit 1
}

[ -n "$cert" ] || fail "no certificate given: the release image must trust your bundle
rauc keyring: signing certificate, and only it (the repository holds no key):
rauc keyring:     make image KEEL_RAUC_CERT=/path/to/cert.pem
rauc keyring: (BR2_PACKAGE_KEEL_RAUC_KEYRING; openssl req -x509 makes a pair)"
if [ ! -f "$cert" ] || [ ! -r "$cert" ]; then
	fail "$cert: no such readable file"
fi
grep -q -e '-----BEGIN CERTIFICATE-----' "$cert" ||
	fail "$cert holds no PEM certificate (-----BEGIN CERTIFICATE-----)"
if grep -q -e 'PRIVATE KEY-----' "$cert"; then
	fail "$cert holds a private key: give the certificate alone (the key signs bundles and never goes into an image)"
fi
if command -v openssl >/dev/null 2>&1; then
	subject=$(openssl x509 -in "$cert" -noout -subject -nameopt RFC2253 2>/dev/null) ||
		fail "$cert: openssl cannot read its certificate"
	case $subject in
	*"O=keel dev image"*) fail "$cert is the dev image's certificate (board/keel/rauc/dev-keys.sh), not a release one" ;;
	esac
fi

if [ -n "$dest" ]; then
	mkdir -p "$(dirname "$dest")"
	cp "$cert" "$dest.tmp"
	chmod 0644 "$dest.tmp"
	mv "$dest.tmp" "$dest"
fi
