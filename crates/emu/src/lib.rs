//! Real time: tokio socket drivers for `coaplab-endpoint`, and the TUN/network-namespace
//! link emulator that runs `coaplab-netsim`'s link model against the wall clock.
//!
//! Protocol logic never lives here: the drivers only move bytes and time. A tour:
//!
//! - [`udp`]: [`UdpDriver`], one endpoint (client, server or both) on one UDP socket; endpoint
//!   time is the wall-clock time since the driver started, in integer nanoseconds.
//! - [`udp_blocking`]: [`BlockingUdpDriver`], the same for plain UDP on a blocking socket
//!   without an async runtime (two system calls per request; `coaplab server`'s UDP-only mode).
//! - [`dtls`]: [`dtls::DtlsLayer`], DTLS 1.2 (OpenSSL) between a [`UdpDriver`]'s endpoint and
//!   its socket, for `coaps://`: the endpoint sees plaintext datagrams either way.
//! - [`tcp`]: [`TcpDriver`], one RFC 8323 session on one TCP connection (`TCP_NODELAY`).
//! - [`tcp_server`]: [`serve_tcp`], an accept loop with one session per connection, within
//!   [`TcpServerLimits`] (connections in all and per source, timeouts, queued bytes).
//! - [`emulator`]: the TUN/network-namespace link emulator: two namespaces joined by netsim's
//!   link model running against the wall clock (docs/experiments.md §1.3).
//! - [`http`]: HTTP/1.1 and h2c server and client (hyper), with TCP Fast Open, for the
//!   CoAP-versus-HTTP comparison (docs/experiments.md §8e).
//! - [`pcap`]: capture files of IP packets, written by the emulator and by the simulator's
//!   traces (`coaplab run --trace`).
//!
//! Everything but [`pcap`] is behind the default feature `runtime` (tokio, hyper, OpenSSL):
//! `coaplab-lab` without its `emulated` feature (the Python package) takes only [`pcap`].

pub mod pcap;

#[cfg(feature = "runtime")]
pub mod datagram;
#[cfg(feature = "runtime")]
pub mod dtls;
#[cfg(feature = "runtime")]
pub mod emulator;
#[cfg(feature = "runtime")]
pub mod http;
#[cfg(feature = "runtime")]
pub mod queue_budget;
#[cfg(feature = "runtime")]
pub mod tcp;
#[cfg(feature = "runtime")]
pub mod tcp_server;
#[cfg(feature = "runtime")]
pub mod udp;
#[cfg(feature = "runtime")]
pub mod udp_blocking;

#[cfg(feature = "runtime")]
pub use datagram::{is_unreachable, DriverStats, MAX_DATAGRAM_BYTES};
#[cfg(feature = "runtime")]
pub use queue_budget::QueueBudget;
#[cfg(feature = "runtime")]
pub use tcp::{RefuseReason, TcpDriver, TcpEvent, TcpStats};
#[cfg(feature = "runtime")]
pub use tcp_server::{serve_tcp, TcpEventSink, TcpServerLimits};
#[cfg(feature = "runtime")]
pub use udp::UdpDriver;
#[cfg(feature = "runtime")]
pub use udp_blocking::BlockingUdpDriver;
