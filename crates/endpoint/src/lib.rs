//! Sans-IO CoAP endpoints.
//!
//! Filled by the simulator issue: the RFC 7252 message layer (CON/NON/ACK/RST, message IDs,
//! duplicate detection, the NSTART queue) driven by a [`coaplab_cc`] algorithm, request/response
//! matching, block-wise transfers (RFC 7959) and RFC 8323 sessions, all built on
//! [`coaplab_wire`]. Endpoints take time and bytes as arguments and are polled for output, in the
//! style of quinn-proto's `Connection`.
