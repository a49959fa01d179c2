//! Real time: tokio socket drivers for `coaplab-endpoint`, and (later) the TUN/network-namespace
//! link emulator that runs `coaplab-netsim`'s link model against the wall clock.
//!
//! Protocol logic never lives here: the drivers only move bytes and time. A tour:
//!
//! - [`udp`]: [`UdpDriver`], one endpoint (client, server or both) on one UDP socket; endpoint
//!   time is the wall-clock time since the driver started, in integer nanoseconds.
//!
//! Not yet: the RFC 8323 (CoAP over TCP) driver and the link emulator.

pub mod udp;

pub use udp::{DriverStats, UdpDriver, MAX_DATAGRAM_BYTES};
