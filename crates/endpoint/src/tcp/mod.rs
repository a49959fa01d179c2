//! RFC 8323 sessions: CoAP over one reliable byte stream (a TCP connection), sans-IO.
//! The TCP itself is not here (netsim models it; emu uses the kernel's): bytes come in
//! through [`Session::handle_stream_bytes`] and go out as [`Write`]s.
//!
//! - `session` ([`Session`]): the one `impl Session`: the components it holds, the public
//!   call surface, and the dispatch of each received frame (signals to `inbound`, requests
//!   to `serve`, responses to `client`). Each method delegates to the component that owns
//!   the state, passing the others it needs (split borrows, as [`crate::Endpoint`] does).
//! - `inbound` (private): the receive path: the stream reader that parses frames in place
//!   with [`coaplab_wire::frame::Frame::decode_stream`] (a response's payload counted, not
//!   kept, without [`SessionConfig::keep_bodies`]), the CSM rules (§5.3: the first message
//!   must be a CSM; a bad one aborts with Bad-CSM-Option), Ping/Pong (§5.4), Release (§5.5)
//!   and Abort (§5.6).
//! - `client` (private): the client side: requests and their tokens, responses matched by
//!   token and followed block by block (Block2, RFC 7959 §2.4; BERT, §6), our Pings, the
//!   observations we hold.
//! - `serve` (private): requests answered by the UDP server's [`crate::Router`] resources, as
//!   one frame each, however large; a generated body is produced only while it is written
//!   ([`Session::poll_write_chunk`]), so memory stays bounded whatever its size.
//! - `observe` (private): Observe over the session (RFC 8323 §7), both sides: registration,
//!   notifications at each change (at most one queued per observer, a newer state replacing
//!   it), deregistration by Observe 1, observers gone with the connection.
//! - [`config`]: [`SessionConfig`], with the experiments' client and server
//!   (docs/experiments.md §5.1–5.2).
//! - [`event`]: [`Write`] and [`SessionEvent`].
//!
//! Choices where RFC 8323 leaves room: every message is its own write (the experiments run
//! with `TCP_NODELAY`, so the client's CSM and GET are two segments); Max-Message-Size counts
//! the whole frame; a request too large for the peer is refused with
//! [`RequestError::TooLarge`], a response too large is replaced by an empty 5.00 (decided
//! before any of its body is produced), one that would overfill the write queue
//! ([`SessionConfig::max_queued_bytes`]) by an empty 5.03; unknown
//! signal codes are ignored, an unknown critical option in a CSM or any other signal
//! aborts; an empty (0.00) message is ignored.

pub mod config;
pub mod event;

mod client;
mod inbound;
mod observe;
mod response;
mod serve;
mod session;
mod writes;

#[cfg(test)]
mod tests;

pub use config::{
    Role, SessionConfig, SessionConfigError, DEFAULT_MAX_QUEUED_BYTES, EXPERIMENT_MAX_MESSAGE_SIZE,
};
pub use event::{
    GeneratedBody, RequestError, SessionEvent, SessionFailReason, Side, StreamIgnoreReason, Write,
    WriteChunk, WriteKind,
};
pub use session::Session;
pub use writes::QUEUED_MESSAGE_BYTES;
