#!/usr/bin/env bash
# A profile-guided (PGO) release build of coaplab, for long sweeps: the simulator's hot path is
# small, branchy functions across five crates, and LLVM laying them out by the profile of real
# runs took about a fifth off the simulation CPU per packet (docs/BENCHMARKS.md, tenth pass).
# Same code, same results: the runs are byte-identical to the plain release build's
# (`./scripts/test.sh --long` checks it with scripts/check-identical.sh). About ten minutes on
# two cores, in four steps:
#   1. an instrumented release build (target/pgo-gen);
#   2. the training runs: one replication of every scenario in scenarios/ (the repository's
#      experiments, not the ns3-speed benchmark's workloads);
#   3. their profiles merged by llvm-profdata (rustup's llvm-tools component, added if missing);
#   4. the release build that uses them: target/pgo/release/coaplab.
#
#   ./scripts/build-pgo.sh
#   target/pgo/release/coaplab run scenarios/fasor-globecom18.toml --out results/fasor
set -euo pipefail
cd "$(dirname "$0")/.."

base="${CARGO_TARGET_DIR:-$PWD/target}"
gen="$base/pgo-gen"
out="$base/pgo"
profiles="$gen/profiles"

host="$(rustc -vV | sed -n 's/^host: //p')"
profdata="$(rustc --print sysroot)/lib/rustlib/$host/bin/llvm-profdata"
if [ ! -x "$profdata" ]; then
  if ! command -v rustup >/dev/null; then
    echo "build-pgo.sh: no llvm-profdata for this rustc at $profdata (rustup's llvm-tools component)" >&2
    exit 1
  fi
  rustup component add llvm-tools
fi

echo "==> 1/4 instrumented build ($gen)"
rm -rf "$profiles"
RUSTFLAGS="${RUSTFLAGS:-} -Cprofile-generate=$profiles" CARGO_TARGET_DIR="$gen" \
  cargo build --release --locked -p coaplab

echo "==> 2/4 training runs: one replication of each scenarios/*.toml"
runs="$(mktemp -d)"
trap 'rm -rf "$runs"' EXIT
for scenario in scenarios/*.toml; do
  "$gen/release/coaplab" run "$scenario" --out "$runs/$(basename "$scenario" .toml)" \
    --reps 1 --jobs 1 -q >/dev/null
done

echo "==> 3/4 merging the profiles"
"$profdata" merge -o "$gen/coaplab.profdata" "$profiles"

echo "==> 4/4 the optimised build ($out)"
RUSTFLAGS="${RUSTFLAGS:-} -Cprofile-use=$gen/coaplab.profdata" CARGO_TARGET_DIR="$out" \
  cargo build --release --locked -p coaplab
echo "build-pgo.sh: built $out/release/coaplab"
