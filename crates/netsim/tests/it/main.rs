//! The crate's integration tests as one binary: each file used to be a binary of its own, and
//! linking them was a good part of the suite's build (docs/BENCHMARKS.md, tenth pass).
//! `cargo test -p coaplab-netsim --test it MODULE::` runs one file's tests.

mod bench;
mod link;
mod link_trace;
mod send_tcp;
mod star;
mod tcp_bbr;
mod tcp_bulk;
mod tcp_close;
mod tcp_fast_open;
mod tcp_handshake;
mod tcp_loss;
mod tcp_modes;
mod tcp_quickack;
mod tcp_robust;
mod tcp_rto_backoff;
mod tcp_send_buffer;
mod tcp_star;
mod tcp_timer_wheel;
mod tcp_util;
