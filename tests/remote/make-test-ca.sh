#!/usr/bin/env bash
# Makes a throwaway CA and a server certificate for 127.0.0.1 / localhost signed by it, for TLS
# tests and local trials (docs/remote.md#tls):
#   make-test-ca.sh DIR   ->  DIR/ca.pem (trust this: ConnectOptions::CAFile), DIR/server.pem,
#                             DIR/server.key (optimium-remote-server --tls-cert/--tls-key),
#                             DIR/other-ca.pem (a CA that did not sign it: verification fails)
set -euo pipefail
dir=${1:?usage: make-test-ca.sh DIR}
mkdir -p "$dir"
cd "$dir"
openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj "/CN=Optimium test CA" \
  -keyout ca.key -out ca.pem 2>/dev/null
openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj "/CN=Other test CA" \
  -keyout other-ca.key -out other-ca.pem 2>/dev/null
openssl req -newkey rsa:2048 -nodes -subj "/CN=localhost" -keyout server.key -out server.csr 2>/dev/null
printf 'subjectAltName=DNS:localhost,IP:127.0.0.1\nbasicConstraints=CA:FALSE\nkeyUsage=digitalSignature,keyEncipherment\nextendedKeyUsage=serverAuth\n' > server.ext
openssl x509 -req -in server.csr -CA ca.pem -CAkey ca.key -CAcreateserial -days 2 \
  -extfile server.ext -out server.pem 2>/dev/null
