#!/usr/bin/env bash
# Our `coaplab server` against libcoap's `coap-server-notls` under `coaplab bench` (closed loop,
# CON GET of a 10-byte resource on loopback) at 1, 20 and 100 clients, both in the same run.
#
#   ./scripts/bench-udp-servers.sh [DURATION]     (default 10s per point; needs libcoap3-bin)
set -euo pipefail
cd "$(dirname "$0")/.."
d=${1:-10s}
cargo build --release --locked -p coaplab
b=${CARGO_TARGET_DIR:-target}/release/coaplab
"$b" server --bind 127.0.0.1:5701 2>/dev/null & ours=$!
coap-server-notls -A 127.0.0.1 -p 5702 -d 10 >/dev/null 2>&1 & lib=$!
trap 'kill -INT $ours; kill $lib; wait' EXIT
sleep 0.5
"$b" put coap://127.0.0.1:5702/small --payload 0123456789 >/dev/null  # a 10-B resource
for c in 1 20 100; do
  for s in "coaplab 5701/data/10" "libcoap 5702/small"; do
    set -- $s
    printf '%s clients=%s: ' "$1" "$c"
    "$b" bench "coap://127.0.0.1:$2" --clients "$c" --duration "$d" | tr '\n' ' '
    echo
  done
done
