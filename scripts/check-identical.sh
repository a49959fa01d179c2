#!/usr/bin/env bash
# Simulator results byte-identical between two coaplab binaries (issue 17: optimisations must
# not change a single result). Runs every scenarios/*.toml and scripts/identical/*.toml at one
# replication with each binary and compares flows.csv, summary.csv and runs.csv (without its
# measured wall_s column) with cmp.
# --ignore-events also leaves runs.csv's `events` column out: for a BEFORE_BIN of an older
# results format whose `events` counted otherwise (format 3 dropped the stale timer wake-ups of
# CoAP-over-UDP runs, docs/scenarios.md "Results format versions"); every other column must match.
#
#   scripts/check-identical.sh [--ignore-events] BEFORE_BIN [AFTER_BIN]     # AFTER_BIN: target/release/coaplab
#   e.g. git worktree add /tmp/base main && (cd /tmp/base && cargo build --release -p coaplab)
#        scripts/check-identical.sh /tmp/base/target/release/coaplab
#
# Exit status 0 when every scenario matches; the first differing file is named otherwise.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
IGNORE=wall_s
if [ "${1:-}" = --ignore-events ]; then
  IGNORE=wall_s,events
  shift
fi
BEFORE="${1:?usage: $0 [--ignore-events] BEFORE_BIN [AFTER_BIN]}"
AFTER="${2:-$ROOT/target/release/coaplab}"
OUT="$(mktemp -d /tmp/check-identical.XXXXXX)"
trap 'rm -rf "$OUT"' EXIT
fail=0
# scripts/identical/ adds runs the published scenarios leave out (coverage only, e.g. HTTP on
# the mesh, TCP exchanges beside UDP flows, short-lived TCP clients on a lossy link).
for scn in "$ROOT"/scenarios/*.toml "$ROOT"/scripts/identical/*.toml; do
  name="$(basename "$scn" .toml)"
  for side in before after; do
    bin="$BEFORE"; [ "$side" = after ] && bin="$AFTER"
    if ! /usr/bin/time -f "%U %S" -o "$OUT/$name-$side.time" \
      "$bin" run "$scn" --reps 1 --jobs 2 -q --out "$OUT/$name-$side" >/dev/null 2>"$OUT/$name-$side.log"; then
      # A scenario written for features BEFORE lacks (a key it does not know, a run it refuses
      # as not available yet) cannot be compared; anything else failing is an error.
      if [ "$side" = before ] && grep -q "unknown key\|unknown value\|not one of\|not available yet" "$OUT/$name-$side.log"; then
        printf '%-40s %s\n' "$name" "skipped: BEFORE cannot read it ($(grep -o "unknown key '[^']*'\|not available yet: [^(]*" "$OUT/$name-$side.log" | head -1))"
        continue 2
      fi
      echo "$name: $bin failed:"; cat "$OUT/$name-$side.log"; exit 1
    fi
    # runs.csv: every column but the measured wall time (wall_s), and `events` if asked.
    awk -F, -v ignore="$IGNORE" 'BEGIN{n=split(ignore, names, ","); for(k=1;k<=n;k++) skip[names[k]]=1}
      NR==1{for(i=1;i<=NF;i++) if($i in skip) drop[i]=1}
      {out=""; sep=""; for(i=1;i<=NF;i++) if(!(i in drop)) {out=out sep $i; sep=","} print out}' \
      "$OUT/$name-$side/runs.csv" > "$OUT/$name-$side/runs-nowall.csv"
  done
  status=identical
  for f in flows.csv summary.csv runs-nowall.csv; do
    if ! cmp -s "$OUT/$name-before/$f" "$OUT/$name-after/$f"; then
      status="DIFFERENT ($f)"; fail=1; break
    fi
  done
  printf '%-40s %-28s cpu before %s s, after %s s (user sys)\n' "$name" "$status" \
    "$(cat "$OUT/$name-before.time" | tr '\n' ' ')" "$(cat "$OUT/$name-after.time" | tr '\n' ' ')"
done
exit $fail
