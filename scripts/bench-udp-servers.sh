#!/usr/bin/env bash
# Our `coaplab server` against libcoap's `coap-server-notls` under `coaplab bench` (closed loop,
# CON GET of a 10-byte resource on loopback) at 1, 20 and 100 clients, both in the same run;
# requests/s and each server's CPU time per request.
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
# Each server's CPU time (user + system, from /proc/PID/stat) over the point, per request served.
cpu_ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }
hz=$(getconf CLK_TCK)
for c in 1 20 100; do
  for s in "coaplab 5701/data/10 $ours" "libcoap 5702/small $lib"; do
    set -- $s
    printf '%s clients=%s: ' "$1" "$c"
    t0=$(cpu_ticks "$3")
    out=$("$b" bench "coap://127.0.0.1:$2" --clients "$c" --duration "$d" | tr '\n' ' ')
    t1=$(cpu_ticks "$3")
    n=$(echo "$out" | grep -o 'requests=[0-9]*' | cut -d= -f2)
    echo "$out server_cpu_us_per_request=$(awk -v t=$((t1 - t0)) -v hz="$hz" -v n="$n" 'BEGIN { printf "%.2f", t / hz * 1e6 / (n > 0 ? n : 1) }')"
  done
done
