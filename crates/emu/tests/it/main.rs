//! The crate's integration tests as one binary: each file used to be a binary of its own, and
//! linking them was a good part of the suite's build (docs/BENCHMARKS.md, tenth pass).
//! `cargo test -p coaplab-emu --test it MODULE::` runs one file's tests.

mod dedup_alloc;
mod dtls_flood;
mod emulator;
mod emulator_trace;
mod hostile;
mod http_limits;
mod tcp_server;
