//! The crate's integration tests as one binary: each file used to be a binary of its own, and
//! linking them was a good part of the suite's build (docs/BENCHMARKS.md, tenth pass).
//! `cargo test -p coaplab-cc --test it MODULE::` runs one file's tests.

mod properties;
mod spec_alternatives;
mod worked_examples;
