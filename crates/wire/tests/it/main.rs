//! The crate's integration tests as one binary: each file used to be a binary of its own, and
//! linking them was a good part of the suite's build (docs/BENCHMARKS.md, tenth pass).
//! `cargo test -p coaplab-wire --test it MODULE::` runs one file's tests.

mod malformed;
mod roundtrip;
mod vectors;
