#!/usr/bin/env bash
# CoAP over TCP (RFC 8323): our `coaplab server --tcp` against libcoap's `coap-server-notls`
# (which listens on TCP too) under `coaplab bench coap+tcp://` (closed loop, one connection per
# client, stop-and-wait GET of a 10-byte resource on loopback) at 1, 20 and 100 clients, both in
# the same run.
#
#   ./scripts/bench-tcp-servers.sh [DURATION]     (default 10s per point; needs libcoap3-bin)
set -euo pipefail
cd "$(dirname "$0")/.."
d=${1:-10s}
cargo build --release --locked -p coaplab
b=${CARGO_TARGET_DIR:-target}/release/coaplab
"$b" server --bind 127.0.0.1:5711 --tcp 2>/dev/null & ours=$!
coap-server-notls -A 127.0.0.1 -p 5712 -d 10 >/dev/null 2>&1 & lib=$!
trap 'kill -INT $ours; kill $lib; wait' EXIT
sleep 0.5
"$b" put coap+tcp://127.0.0.1:5712/small --payload 0123456789 >/dev/null  # a 10-B resource
for c in 1 20 100; do
  for s in "coaplab 5711/data/10" "libcoap 5712/small"; do
    set -- $s
    printf '%s clients=%s: ' "$1" "$c"
    "$b" bench "coap+tcp://127.0.0.1:$2" --clients "$c" --duration "$d" | tr '\n' ' '
    echo
  done
done
