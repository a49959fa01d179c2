//! A sans-IO TCP model for CoAP over TCP in simulation (docs/experiments.md §5): Linux `reno`
//! semantics without SACK, timestamps, F-RTO, TLP or RACK.
//!
//! A tour, one concern per file, leaves first (no two sibling modules import each other:
//! `scripts/check-cycles.py`):
//!
//! * [`segment`]: segments with real sizes — `ip_len` = 40 + payload (IPv4 20 + TCP 20, no
//!   options), MSS = MTU − 40; 64-bit absolute sequence numbers, ISN 0.
//! * [`state`]: the states by name — [`Role`], [`TcpState`] (RFC 9293), [`CaState`] (Linux
//!   `icsk_ca_state`) — a leaf that BBR, the connection and the drivers all read.
//! * [`config`]: every parameter of docs/experiments.md §5.3 by name, with its default; `cc`
//!   holds its congestion-control choice ([`CongestionControl`]: `newreno | bbr`).
//! * [`handshake`]: SYN / SYN-ACK retransmission with exponential backoff.
//! * [`rtt`]: Linux `tcp_rtt_estimator`, RTO bounds, Karn's backoff; [`timer_wheel`]: when
//!   the kernel's wheel fires a retransmission or delayed-ACK timer (`timer_wheel_hz`, HZ 250
//!   by default; 0 = exact).
//! * [`newreno`]: the Reno window (slow start, congestion avoidance with `cwnd_cnt`) and PRR
//!   (RFC 6937) as arithmetic.
//! * [`bbr`]: BBR v1 as in Linux `tcp_bbr.c`, fed by [`rate`] (delivery-rate samples,
//!   `tcp_rate.c`) and paced by [`pacing`] (earliest departure times).
//! * [`sender`] / [`receiver`]: retransmission queue and scoreboard; reassembly and delayed ACK.
//!   [`send_buffer`]: the written bytes, released once acknowledged, and generated bodies
//!   produced only as segments carry them. [`stats`]: the counters.
//! * [`connection`]: the [`Connection`] that ties them together — `handle_segment`,
//!   `poll_transmit`, `poll_timeout`, `handle_timeout`, `write`, `read` — in one `impl` in
//!   `connection/mod.rs`, with components that own their fields, each in its own file:
//!   `recovery` (congestion state, Reno window, PRR: `tcp_fastretrans_alert`, the window half
//!   of an RTO), `cc_state` (rate sampling, pacing clock, BBR at Linux's hook points),
//!   `rto_timer` (the retransmission timer), `cwnd_validation` (`tcp_cwnd_validate`),
//!   `fast_open` (TFO cookies and SYN data), `close` (the closing states), `timer` (every
//!   deadline by name, and the one `next_deadline`), `error` (what it refuses).
//!
//! Closing: [`Connection::close`] queues a FIN after the data (a segment of its own); the
//! states follow RFC 9293, TIME-WAIT without its 2MSL timer.
//!
//! Not modelled yet: RFC 2861 cwnd validation when application-limited, jiffies rounding
//! of the RTO value itself (the timer wheel's rounding of the expiry is `timer_wheel_hz`).
//! (The dupthresh is raised by Reno's reordering detection,
//! `tcp_check_reno_reordering`, in `sender`.)

pub mod bbr;
mod cc;
pub mod config;
pub mod connection;
pub mod handshake;
pub mod newreno;
pub mod pacing;
pub mod rate;
pub mod receiver;
pub mod rtt;
pub mod segment;
pub mod send_buffer;
pub mod sender;
pub mod state;
pub mod stats;
pub mod timer_wheel;

pub use bbr::{BbrConfig, Mode as BbrMode, BBR_PARAMS};
pub use cc::CongestionControl;
pub use config::{RecoveryMode, RtoBackoffReset, TcpConfig, TcpConfigError, TCP_PARAMS};
pub use connection::{Connection, ConnectionFailed, SegmentError};
pub use segment::{
    Segment, HEADER_BYTES, IPV4_HEADER_BYTES, MAX_TCP_OPTION_SPACE, TCP_HEADER_BYTES,
    TFO_OPTION_BYTES, TFO_REQUEST_OPTION_BYTES,
};
pub use send_buffer::Generate;
pub use state::{CaState, Role, TcpState};
pub use stats::TcpStats;
