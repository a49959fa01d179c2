//! What a [`super::Connection`] refuses: a segment that does not fit ([`SegmentError`], counted
//! by the caller, never a panic) and a write to a failed connection ([`ConnectionFailed`]).

use crate::tcp::state::TcpState;

/// A segment the connection refused (counted, never a panic).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SegmentError {
    /// The ACK covers data never sent.
    AckBeyondSent {
        /// The segment's ACK.
        ack: u64,
        /// Next new sequence number of this side.
        snd_nxt: u64,
    },
    /// The segment does not fit the handshake state (e.g. data to a listener, a SYN-ACK for
    /// another SYN).
    Unexpected(TcpState),
    /// The segment's sequence range runs past the 64-bit sequence space.
    SeqOverflow(u64),
}

impl core::fmt::Display for SegmentError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            SegmentError::AckBeyondSent { ack, snd_nxt } => {
                write!(f, "ack {ack} beyond snd_nxt {snd_nxt}")
            }
            SegmentError::Unexpected(s) => write!(f, "unexpected segment in state {s:?}"),
            SegmentError::SeqOverflow(seq) => write!(f, "sequence range from {seq} overflows"),
        }
    }
}

impl std::error::Error for SegmentError {}

/// The application wrote to a connection that failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ConnectionFailed;

impl core::fmt::Display for ConnectionFailed {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str("the connection failed")
    }
}

impl std::error::Error for ConnectionFailed {}
