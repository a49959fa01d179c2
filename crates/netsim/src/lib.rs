//! The discrete-event simulator.
//!
//! Filled by the simulator issue: an integer-time event engine with seeded random streams, the
//! single link model (byte-limited queue -> serializer -> propagation delay -> loss), topologies,
//! and the TCP model used for CoAP over TCP. The link model here is the only one in coaplab: the
//! emulator in `coaplab-emu` drives this same code with real packets and the wall clock.
