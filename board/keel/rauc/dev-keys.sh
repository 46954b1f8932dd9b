#!/bin/bash
# The dev image's bundle signing key and certificate, made on first use:
#   board/keel/rauc/dev-keys.sh OUT    -> OUT/keys/dev.key.pem, dev.cert.pem
# Never committed (out/ is ignored). The dev image trusts only this
# certificate (its /etc/rauc/keyring.pem); a fresh out/ makes a new pair, and
# images built with the old one refuse bundles signed with the new one.
set -euo pipefail
OUT=$(realpath -m "${1:?usage: dev-keys.sh OUT}")
KEYS=$OUT/keys
[ -f "$KEYS/dev.key.pem" ] && [ -f "$KEYS/dev.cert.pem" ] && exit 0
mkdir -p "$KEYS"
umask 077
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes \
	-keyout "$KEYS/dev.key.pem.tmp" -out "$KEYS/dev.cert.pem.tmp" -days 3650 \
	-subj "/O=keel dev image/CN=keel dev bundle signing $(hostname)" \
	-addext "basicConstraints=critical,CA:true" \
	-addext "keyUsage=critical,digitalSignature,keyCertSign" 2>/dev/null
mv "$KEYS/dev.key.pem.tmp" "$KEYS/dev.key.pem"
mv "$KEYS/dev.cert.pem.tmp" "$KEYS/dev.cert.pem"
chmod 644 "$KEYS/dev.cert.pem"
echo "dev-keys: made $KEYS/dev.cert.pem (signing key beside it, never committed)"
