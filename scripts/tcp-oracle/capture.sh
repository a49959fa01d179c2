#!/usr/bin/env bash
# Captures what the kernel's TCP sends and receives in an emulated run (docs/calibration.md,
# "The kernel as TCP oracle"): runs CMD (a `coaplab run ... --mode emulated`) and records the
# TUN device of each of the two namespaces the run creates, into PREFIX-c.pcap (client side:
# the clients' segments before the link, the server's after it) and PREFIX-s.pcap (server side).
# A segment in one file and not in the other was lost on the emulated link. Root; one run.
#
#   scripts/tcp-oracle/capture.sh PREFIX CMD...
set -euo pipefail
prefix=$1
shift
"$@" &
pid=$!
started=0
for _ in $(seq 1 400); do
    for ns in $(ip netns list | awk '{print $1}' | grep "^cl-$pid-" || true); do
        side=${ns##*-}
        [ -f "$prefix-$side.started" ] && continue
        dev=$(ip netns exec "$ns" ip -br link 2>/dev/null | awk '$1 ~ /^cl/ {print $1}')
        [ -n "$dev" ] || continue
        ip netns exec "$ns" dumpcap -q -i "$dev" -w "$prefix-$side.pcap" >/dev/null 2>&1 &
        touch "$prefix-$side.started"
        started=$((started + 1))
    done
    [ "$started" -ge 2 ] && break
    sleep 0.02
done
rm -f "$prefix"-?.started
wait "$pid"
