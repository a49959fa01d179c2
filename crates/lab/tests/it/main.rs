//! The crate's integration tests as one binary: each file used to be a binary of its own, and
//! linking them was a good part of the suite's build (docs/BENCHMARKS.md, tenth pass).
//! `cargo test -p coaplab-lab --test it MODULE::` runs one file's tests.

mod censored;
mod contiki_mac;
mod determinism;
mod http_vs_coap;
mod long_transfer_sizes;
mod mobility;
mod netem_loss;
mod off_mesh;
mod scenarios;

/// The repository's `scenarios/`.
fn scenarios_dir() -> std::path::PathBuf {
    std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../scenarios")
}
