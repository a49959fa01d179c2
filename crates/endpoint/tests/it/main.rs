//! The crate's integration tests as one binary: each file used to be a binary of its own, and
//! linking them was a good part of the suite's build (docs/BENCHMARKS.md, tenth pass).
//! `cargo test -p coaplab-endpoint --test it MODULE::` runs one file's tests.

mod amplification;
mod blockwise;
mod body_limit;
mod common;
mod data_limit;
mod dedup_memory;
mod message_ids;
mod message_layer;
mod methods_and_formats;
mod observe;
mod repeated_requests;
mod request_options;
mod responses;
mod retransmission;
mod server_duplicates;
mod stress;
mod throughput;
mod timeout_changed;
mod upload_expiry;
mod upload_limits;
mod uri_query;
