//! Real time: tokio socket drivers for `coaplab-endpoint`, and (later) the TUN/network-namespace
//! link emulator that runs `coaplab-netsim`'s link model against the wall clock.
//!
//! Protocol logic never lives here: the drivers only move bytes and time. A tour:
//!
//! - [`udp`]: [`UdpDriver`], one endpoint (client, server or both) on one UDP socket; endpoint
//!   time is the wall-clock time since the driver started, in integer nanoseconds.
//! - [`tcp`]: [`TcpDriver`], one RFC 8323 session on one TCP connection (`TCP_NODELAY`), and
//!   [`serve_tcp`], an accept loop with one session per connection.
//!
//! Not yet: the link emulator.

pub mod tcp;
pub mod udp;

pub use tcp::{serve_tcp, TcpDriver, TcpEvent, TcpEventSink, TcpStats};
pub use udp::{DriverStats, UdpDriver, MAX_DATAGRAM_BYTES};
