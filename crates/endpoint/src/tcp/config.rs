//! [`SessionConfig`]: the settings of one RFC 8323 session.

use core::fmt;

use coaplab_wire::frame::frame_len;
use coaplab_wire::signal::DEFAULT_MAX_MESSAGE_SIZE;

/// Which end of the TCP connection this session is (RFC 8323 §5.3: both send a CSM as their
/// first message; the initiator may send requests right after it, and the acceptor sends its
/// CSM as soon as it accepts, independently of the initiator's).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    /// The connecting side (the client in the experiments).
    Initiator,
    /// The accepting side (the server in the experiments).
    Acceptor,
}

/// Settings of one session.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SessionConfig {
    /// Which end this is.
    pub role: Role,
    /// Max-Message-Size advertised in our CSM, in bytes of a whole frame; `None` sends a CSM
    /// without options. It is also the largest frame we accept: without it, RFC 8323 §5.3.1's
    /// default of 1,152 B.
    pub max_message_size: Option<u32>,
    /// Advertise Block-Wise-Transfer in our CSM (RFC 8323 §5.3.2), and, as a client, follow a
    /// response that comes block-wise (Block2, BERT included) to the whole body, keeping each
    /// request's options for the follow-ups. The session never splits a body it sends, and
    /// reassembles a Block1 upload whatever this says. Default off: the experiments' peers
    /// send every body as one message.
    pub block_wise_transfer: bool,
    /// Token length of our requests, 0–8 bytes (docs/experiments.md §5.1: 1 B for the long
    /// transfer, §5.2: 2 B for the short exchanges).
    pub token_len: usize,
    /// The first token value; later requests count up from it (skipping tokens still in use).
    /// Seed it from the run's random stream to mimic a real client.
    pub first_token: u64,
    /// Keep response bodies in [`crate::tcp::SessionEvent::RequestCompleted`] (off: only
    /// their length, so a 100-kB transfer allocates nothing per run: a response frame's
    /// payload is counted as it arrives, only its code, token and options are buffered, except
    /// a Block2 block's, whose bytes make up the body).
    pub keep_bodies: bool,
    /// Largest response body a request of ours accepts, in bytes: one message's payload, or
    /// the sum over the blocks of a block-wise (BERT) response, or a total announced by Size2
    /// (RFC 7959 §4). Beyond it the request fails with
    /// [`crate::tcp::SessionFailReason::BodyTooLarge`] and no further block is asked for; the
    /// session stays open. A single frame is bounded before that by
    /// [`SessionConfig::max_message_size`]. Default [`crate::MAX_BODY_BYTES`] (64 MiB).
    pub max_body_bytes: usize,
    /// The most bytes a session holds materialised for writing (see
    /// [`crate::tcp::Session::queued_bytes`]): a response that would go beyond it (or beyond
    /// the driver's [`crate::tcp::Session::set_queue_budget`]) is replaced by an empty 5.03
    /// Service Unavailable and reported as [`crate::tcp::SessionEvent::QueueFull`]. Bodies the
    /// server generates (`data/N`, fixed replies) are produced lazily while written and do not
    /// count; echoed payloads, signals and requests do. Default
    /// [`DEFAULT_MAX_QUEUED_BYTES`].
    pub max_queued_bytes: usize,
}

/// The default [`SessionConfig::max_queued_bytes`]: 4 MiB, room for a reassembled 1-MiB
/// upload's echo ([`crate::MAX_UPLOAD_BYTES`]) several times over.
pub const DEFAULT_MAX_QUEUED_BYTES: usize = 4 << 20;

/// Max-Message-Size of the experiments' client CSM (docs/experiments.md §5.1).
pub const EXPERIMENT_MAX_MESSAGE_SIZE: u32 = 131_072;

impl SessionConfig {
    /// The experiments' client (docs/experiments.md §5.1): initiator, CSM with
    /// Max-Message-Size 131,072 (6 B), 1-B tokens.
    pub fn client() -> Self {
        SessionConfig {
            role: Role::Initiator,
            max_message_size: Some(EXPERIMENT_MAX_MESSAGE_SIZE),
            block_wise_transfer: false,
            token_len: 1,
            first_token: 0,
            keep_bodies: false,
            max_body_bytes: crate::MAX_BODY_BYTES,
            max_queued_bytes: DEFAULT_MAX_QUEUED_BYTES,
        }
    }

    /// The experiments' server (docs/experiments.md §5.1): acceptor, CSM without options
    /// (2 B).
    pub fn server() -> Self {
        SessionConfig {
            role: Role::Acceptor,
            max_message_size: None,
            ..SessionConfig::client()
        }
    }

    /// These settings with Max-Message-Size raised, when needed, so that a response of
    /// `payload_bytes` without options arrives as one message (the serving side never splits
    /// a body: `serve.rs`): a frame of header, our token, marker and payload (RFC 8323 §3.2).
    /// A smaller limit is kept as it is (docs/experiments.md §5.1's 131,072 B for every object up
    /// to 131,064 B); a larger one is that frame's length. The peer answers a response over the
    /// limit with 5.00 instead ([`crate::tcp::SessionEvent::ResponseRefused`]).
    ///
    /// Fails when the frame is longer than a Max-Message-Size can say (4 bytes, RFC 8323
    /// §5.3.1: 4,294,967,295 B).
    pub fn admitting_response(mut self, payload_bytes: u64) -> Result<Self, SessionConfigError> {
        // The marker and the header (at most 14 B) must not overflow a 32-bit usize either.
        let frame = usize::try_from(payload_bytes)
            .ok()
            .filter(|&p| p <= u32::MAX as usize && p.checked_add(1 + 14).is_some())
            .map(|p| frame_len(self.token_len, p + 1))
            .and_then(|f| u32::try_from(f).ok())
            .ok_or(SessionConfigError::ResponseTooLarge(payload_bytes))?;
        let limit = self.max_message_size.unwrap_or(DEFAULT_MAX_MESSAGE_SIZE);
        if frame > limit {
            self.max_message_size = Some(frame);
        }
        Ok(self)
    }

    /// The largest frame we accept, in bytes.
    pub fn receive_limit(&self) -> usize {
        self.max_message_size.unwrap_or(DEFAULT_MAX_MESSAGE_SIZE) as usize
    }

    /// Checks the settings.
    pub fn validate(&self) -> Result<(), SessionConfigError> {
        if self.token_len > 8 {
            return Err(SessionConfigError::TokenLength(self.token_len));
        }
        Ok(())
    }
}

/// A [`SessionConfig`] that cannot work.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SessionConfigError {
    /// `token_len` above 8 (RFC 7252 §5.3.1, RFC 8323 §3.2).
    TokenLength(usize),
    /// A response payload of this many bytes does not fit any Max-Message-Size in one message
    /// ([`SessionConfig::admitting_response`]).
    ResponseTooLarge(u64),
}

impl fmt::Display for SessionConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SessionConfigError::TokenLength(n) => {
                write!(
                    f,
                    "token_len = {n}: a token has 0 to 8 bytes (RFC 8323 §3.2)"
                )
            }
            SessionConfigError::ResponseTooLarge(n) => write!(
                f,
                "a {n}-B response cannot come as one message: RFC 8323's Max-Message-Size \
                 (4 bytes) admits frames of at most {} B",
                u32::MAX
            ),
        }
    }
}

impl std::error::Error for SessionConfigError {}
