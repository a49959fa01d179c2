//! Real time: tokio socket drivers for `coaplab-endpoint`, and the TUN/network-namespace link
//! emulator that runs `coaplab-netsim`'s link model against the wall clock.
//!
//! Filled by the real-sockets and emulator issues. Protocol logic never lives here: the drivers
//! only move bytes and time.
