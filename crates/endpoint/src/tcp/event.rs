//! What a session hands out: writes for the TCP connection ([`Write`]) and typed events
//! ([`SessionEvent`]): application results and the metric taps (request sent, response
//! complete with its time and bytes), like the UDP endpoint's [`crate::Event`].

use core::fmt;

use coaplab_cc::time::{Duration, Instant};
use coaplab_wire::{Code, DecodeError, OptionList, Token};

use crate::event::{ObserverGone, RequestId};

/// Bytes for one `write()` on the TCP connection. Every message is its own write, so a CSM
/// followed by a request is two writes (docs/experiments.md §5.1, `TCP_NODELAY`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Write {
    /// One encoded RFC 8323 frame.
    pub bytes: Vec<u8>,
    /// What it carries.
    pub kind: WriteKind,
}

/// A response body the session generates rather than holds (a resource's pattern or zeros),
/// handed out by [`crate::tcp::Session::poll_write_parts`] so that the transport produces its
/// bytes only as it sends them: a 100-kB object is then never in memory whole.
#[derive(Debug, Clone, Copy)]
pub struct GeneratedBody(pub(crate) crate::resource::Body<'static>);

impl GeneratedBody {
    /// Bytes in the body.
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// Whether the body is empty.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Writes bytes `offset .. offset + out.len()` of the body into `out`.
    pub fn write(&self, offset: usize, out: &mut [u8]) {
        self.0.write(offset, out);
    }
}

/// A piece of the front message from [`crate::tcp::Session::poll_write_chunk`]: the bytes
/// are in the caller's buffer; messages come whole and in order, split at any byte.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WriteChunk {
    /// What the message carries.
    pub kind: WriteKind,
    /// The whole message's frame length, in bytes.
    pub message_bytes: usize,
    /// This chunk ends the message.
    pub last: bool,
}

/// What a [`Write`] carries.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WriteKind {
    /// A signalling message (CSM, Ping, Pong, Release, Abort).
    Signal(Code),
    /// One of our requests.
    Request(RequestId),
    /// A response to a request of the peer.
    Response(Code),
}

/// Which end did something.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Side {
    /// This session.
    Local,
    /// The peer.
    Peer,
}

/// Why a request could not be sent ([`crate::tcp::Session::request`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RequestError {
    /// The session is closing, closed or aborted, or the peer sent a Release.
    NotOpen,
    /// The frame is larger than the peer's Max-Message-Size (RFC 8323 §5.3.1; 1,152 B until
    /// its CSM arrives).
    TooLarge {
        /// Encoded frame length.
        len: usize,
        /// The peer's limit.
        max: u32,
    },
    /// Every token of the configured length is in use by an outstanding request.
    TokensExhausted,
    /// An option value longer than RFC 7252 §3.1 allows.
    Unencodable,
}

impl fmt::Display for RequestError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RequestError::NotOpen => write!(f, "the session does not accept new requests"),
            RequestError::TooLarge { len, max } => write!(
                f,
                "a {len}-B message exceeds the peer's Max-Message-Size of {max} B (RFC 8323 §5.3.1)"
            ),
            RequestError::TokensExhausted => write!(f, "every token is in use"),
            RequestError::Unencodable => write!(f, "the request cannot be encoded"),
        }
    }
}

impl std::error::Error for RequestError {}

/// Why an outstanding request ended without a response.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SessionFailReason {
    /// The session was aborted (by either side).
    Aborted(Side),
    /// The connection was closed (by either side) before the response arrived.
    Closed(Side),
    /// The response body would exceed [`crate::tcp::SessionConfig::max_body_bytes`]; no
    /// further block was asked for and the session stays open.
    BodyTooLarge,
    /// The response carried a critical option this client does not recognise (RFC 7252
    /// §5.4.1, which RFC 8323 keeps): the response is rejected and the request fails; the
    /// session stays open (over a reliable transport there is no Reset to send).
    UnknownCriticalOption {
        /// The option's number.
        number: u16,
    },
}

/// Why a received frame had no effect.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StreamIgnoreReason {
    /// A response whose token matches no outstanding request.
    UnmatchedToken,
    /// A Pong whose token matches no Ping of ours.
    UnmatchedPong,
    /// A 7.xx code that is not one of RFC 8323's five signals.
    UnknownSignal,
    /// A code of a class reserved in RFC 7252 §12.1 (1, 3, 6).
    ReservedCode,
    /// A notification that arrived after we sent its observation's deregistration (RFC 7641
    /// §3.6): the server had not yet seen it.
    AfterDeregistration,
    /// A frame after the session was released by us (a request) or ended.
    AfterEnd,
}

/// Everything observable, in order.
#[derive(Debug, Clone, PartialEq)]
pub enum SessionEvent {
    /// The peer's CSM was accepted; its values now apply to what we send.
    CsmReceived {
        /// The peer's Max-Message-Size now in force.
        max_message_size: u32,
        /// The peer supports block-wise transfers.
        block_wise_transfer: bool,
        /// When.
        at: Instant,
    },
    /// A request was queued for writing (metric tap: transmissions).
    RequestSent {
        /// The request.
        request: RequestId,
        /// Its token.
        token: Token,
        /// Frame bytes.
        bytes: usize,
        /// When [`crate::tcp::Session::request`] was called.
        at: Instant,
    },
    /// A response arrived (metric tap: FCT).
    RequestCompleted {
        /// The request.
        request: RequestId,
        /// The response code.
        code: Code,
        /// Payload length.
        body_len: usize,
        /// The payload (empty unless [`crate::tcp::SessionConfig::keep_bodies`]).
        body: Vec<u8>,
        /// The (last) response's options (empty unless
        /// [`crate::tcp::SessionConfig::keep_bodies`]), e.g. for a client that prints them.
        options: coaplab_wire::option::OptionList,
        /// Frame bytes of the response.
        bytes: usize,
        /// When the request was sent.
        started: Instant,
        /// When the response's last byte arrived.
        at: Instant,
    },
    /// An outstanding request will get no response.
    RequestFailed {
        /// The request.
        request: RequestId,
        /// Why.
        reason: SessionFailReason,
        /// When.
        at: Instant,
    },
    /// A request of the peer was answered (zero processing time).
    Served {
        /// The request's token.
        token: Token,
        /// The request's method.
        method: Code,
        /// The response code.
        code: Code,
        /// Frame bytes of the request.
        request_bytes: usize,
        /// Frame bytes of the response.
        response_bytes: usize,
        /// When.
        at: Instant,
    },
    /// A response did not fit the peer's Max-Message-Size; 5.00 was sent instead.
    ResponseRefused {
        /// The request's token.
        token: Token,
        /// Length the response would have had.
        len: usize,
        /// The peer's limit.
        max: u32,
        /// When.
        at: Instant,
    },
    /// A response would have held more bytes in the write queue than allowed
    /// ([`crate::tcp::SessionConfig::max_queued_bytes`] or the driver's
    /// [`crate::tcp::Session::set_queue_budget`]); an empty 5.03 was sent instead.
    QueueFull {
        /// The request's token.
        token: Token,
        /// Bytes the response would have added to the queue.
        len: usize,
        /// Bytes the queue could still take.
        room: usize,
        /// When.
        at: Instant,
    },
    /// A Ping arrived and was answered with a Pong echoing its token.
    PingAnswered {
        /// The token.
        token: Token,
        /// Custody requested (and echoed).
        custody: bool,
        /// When.
        at: Instant,
    },
    /// A Pong answered one of our Pings.
    PongReceived {
        /// The token.
        token: Token,
        /// Custody echoed.
        custody: bool,
        /// From our Ping to this Pong.
        rtt: Duration,
        /// When.
        at: Instant,
    },
    /// The peer sent Release (RFC 8323 §5.5): no new requests go out on this session.
    ReleaseReceived {
        /// Where to reconnect.
        alternative_addresses: Vec<String>,
        /// Seconds to wait before reconnecting.
        hold_off_s: Option<u32>,
        /// When.
        at: Instant,
    },
    /// Server: a GET with Observe 0 registered an observer (RFC 7641 §4.1, RFC 8323 §7).
    ObserverAdded {
        /// The registration's token.
        token: Token,
        /// When.
        at: Instant,
    },
    /// Server: a registration was answered without Observe, because
    /// [`crate::Router::max_observers`] observers are registered on this session; or (after
    /// its [`SessionEvent::ObserverAdded`]) its answer was refused (5.00, 5.03), so it was
    /// not kept.
    ObserverRefused {
        /// The registration's token.
        token: Token,
        /// When.
        at: Instant,
    },
    /// Server: an observer is no longer notified (deregistered, or the session ended).
    ObserverRemoved {
        /// The registration's token.
        token: Token,
        /// Why: [`ObserverGone::Deregistered`] or [`ObserverGone::Closed`].
        reason: ObserverGone,
        /// When.
        at: Instant,
    },
    /// Server: a notification was queued, or replaced the one of the same observer still
    /// waiting in the write queue (a slow reader gets the newest state, not a backlog).
    NotificationSent {
        /// The observer's token.
        token: Token,
        /// Its Observe value.
        sequence: u32,
        /// Frame bytes.
        bytes: usize,
        /// It replaced a queued, unwritten notification (that state is never sent).
        replaced: bool,
        /// When.
        at: Instant,
    },
    /// Server: a notification did not fit the write queue's limits and was dropped; the
    /// observer gets the next state.
    NotificationDropped {
        /// The observer's token.
        token: Token,
        /// Its Observe value.
        sequence: u32,
        /// When.
        at: Instant,
    },
    /// Client: a notification of an observation ([`crate::tcp::Session::observe`]) arrived.
    /// The stream is ordered, so every one is passed on (RFC 8323 §7.1).
    Notification {
        /// The observation's request.
        request: RequestId,
        /// The response code (2.05 while the observation lasts).
        code: Code,
        /// Its Observe value (`None`: the observation ended, RFC 7641 §3.2).
        sequence: Option<u32>,
        /// Payload length.
        body_len: usize,
        /// The payload (empty unless [`crate::tcp::SessionConfig::keep_bodies`]).
        body: Vec<u8>,
        /// Its options (empty unless [`crate::tcp::SessionConfig::keep_bodies`]).
        options: OptionList,
        /// Frame bytes.
        bytes: usize,
        /// When it arrived.
        at: Instant,
    },
    /// The session was aborted (RFC 8323 §5.6); the connection must be closed.
    Aborted {
        /// Who sent the Abort.
        by: Side,
        /// The Bad-CSM-Option carried.
        bad_csm_option: Option<u16>,
        /// The diagnostic payload.
        diagnostic: String,
        /// When.
        at: Instant,
    },
    /// The session ended gracefully: [`crate::tcp::Session::close`] or the peer's FIN.
    Closed {
        /// Who closed.
        by: Side,
        /// When.
        at: Instant,
    },
    /// A frame had no effect.
    Ignored {
        /// Why.
        reason: StreamIgnoreReason,
        /// When.
        at: Instant,
    },
    /// Bytes that are not a frame; the session aborts right after (a stream cannot resync).
    Malformed {
        /// The broken rule.
        error: DecodeError,
        /// When.
        at: Instant,
    },
}
