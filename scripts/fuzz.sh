#!/usr/bin/env bash
# Runs each fuzz target (wire decoders, RFC 8323 session, DTLS ClientHello front, HTTP server) for SECONDS (default 300) with cargo-fuzz (nightly).
#   ./scripts/fuzz.sh [SECONDS]
# Crashes land in fuzz/artifacts/<target>/; keep each as a regression test in
# crates/wire/tests/it/malformed.rs (dtls_hello: crates/emu/src/dtls/hello.rs tests; http_request:
# crates/emu/tests/it/http_limits.rs) before fixing it.
set -euo pipefail
cd "$(dirname "$0")/.."
secs="${1:-300}"
command -v cargo-fuzz >/dev/null || cargo install cargo-fuzz --locked
rustup toolchain list | grep -q nightly || rustup toolchain install nightly --profile minimal
for target in decode_udp decode_stream tcp_session dtls_hello http_request; do
  echo "==> fuzz $target for ${secs}s"
  cargo +nightly fuzz run "$target" -- -max_total_time="$secs" -max_len=4096 2>&1 | tail -n 5
done
