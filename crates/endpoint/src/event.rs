//! What an endpoint hands out: datagrams to send ([`Transmit`]) and typed events ([`Event`]):
//! application results (a request completed or failed) and the metric taps of
//! docs/experiments.md §7 (every copy sent, every timer expiry with its armed value, every
//! exchange's outcome). The endpoint keeps no metric counters itself; sinks count events.

use std::net::SocketAddr;

use coaplab_cc::time::{Duration, Instant};
use coaplab_cc::Snapshot;
use coaplab_wire::{Code, DecodeError};

/// One message-layer exchange: a CON or NON message this endpoint sent and its copies
/// (a request, one block of a block-wise transfer, or a separate response).
/// Numbered 0, 1, 2, … per endpoint in creation order, with no gaps (usable as an index).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ExchangeId(pub u64);

/// One application request, possibly spanning several exchanges (block-wise).
/// Numbered 0, 1, 2, … per endpoint in creation order, with no gaps (usable as an index).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct RequestId(pub u64);

/// A datagram to put on the wire.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Transmit {
    /// Where it goes.
    pub destination: SocketAddr,
    /// The encoded CoAP message (no IP/UDP headers).
    pub contents: Vec<u8>,
    /// What it is, for packet tags and ground truth.
    pub meta: TransmitMeta,
}

/// What a [`Transmit`] carries.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TransmitMeta {
    /// Copy `ordinal` (0 = original) of a CON or NON message this endpoint originated: a
    /// request or a separate response.
    Exchange {
        /// The exchange.
        exchange: ExchangeId,
        /// 0 for the original, j for the j-th retransmission.
        ordinal: u32,
    },
    /// An answer to a received message: a piggybacked or empty ACK, a NON response, or an RST.
    /// Every reply is queued while the datagram it answers is handled, so a driver that polls
    /// right after [`crate::Endpoint::handle_datagram`] knows which packet it answers.
    Reply {
        /// Message ID of the reply.
        message_id: u16,
        /// True when the reply was replayed from the duplicate cache (the request was a
        /// retransmission the server had already answered).
        replayed: bool,
    },
}

/// How an exchange's first answer arrived.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AnswerKind {
    /// An ACK carrying the response (RFC 7252 §5.2.1).
    Piggybacked,
    /// An empty ACK; the response follows separately (§5.2.2). The sample point is the empty
    /// ACK (docs/algorithms.md, ambiguity #35).
    EmptyAck,
    /// A separate CON response that arrived before any ACK (it acknowledges the request too).
    SeparateResponse,
    /// A response to a NON request.
    NonResponse,
}

/// Why an exchange or a request failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FailReason {
    /// The timer after the MAX_RETRANSMIT-th retransmission expired.
    GiveUp,
    /// The peer answered with RST (RFC 7252 §4.2).
    Reset,
    /// No separate response / NON response within `response_timeout`.
    ResponseTimeout,
    /// A block-wise transfer broke (the server's blocks do not fit together).
    BlockMismatch,
    /// [`crate::Endpoint::cancel`] was called.
    Cancelled,
    /// The request cannot be encoded (an option value longer than RFC 7252 §3.1 allows).
    Unencodable,
    /// The response body would exceed [`crate::Config::max_body_bytes`] (its blocks so far
    /// plus this one, or the total its Size2 announces); no further block is asked for.
    BodyTooLarge,
    /// The response carried a critical option this client does not recognise (RFC 7252
    /// §5.4.1): it is rejected (a CON response with RST, §4.2; a piggybacked or NON one is
    /// not used) and the request fails, as a 4.02 Bad Option would.
    UnknownCriticalOption {
        /// The option number.
        number: u16,
    },
}

/// Why a received datagram was dropped without effect.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IgnoreReason {
    /// An ACK or RST that matches no outstanding CON: a late or duplicate answer
    /// (docs/experiments.md §4.3: counted and ignored).
    UnmatchedAck,
    /// A piggybacked response whose token does not match the request.
    TokenMismatch,
    /// A NON response matching no request.
    UnmatchedNon,
    /// A duplicate NON (deduplicated, no reply).
    DuplicateNon,
    /// A response with an unreadable option (e.g. a Block2 of 4 bytes).
    BadOption,
    /// A NON carrying something we reject (RFC 7252 §4.3 allows silence).
    RejectedNon,
}

/// Everything observable, in order. Hot-path variants allocate nothing.
#[derive(Debug, Clone, PartialEq)]
pub enum Event {
    /// Copy `ordinal` of an exchange left at `at` (metric tap: transmissions).
    Sent {
        /// The exchange.
        exchange: ExchangeId,
        /// The request it belongs to (`None` for a separate response).
        request: Option<RequestId>,
        /// Its destination.
        destination: SocketAddr,
        /// 0 = original.
        ordinal: u32,
        /// CoAP message bytes.
        bytes: usize,
        /// Send time.
        at: Instant,
    },
    /// The retransmission timer of copy `ordinal` fired (metric tap: expired RTO values).
    TimerExpired {
        /// The exchange.
        exchange: ExchangeId,
        /// Its destination.
        destination: SocketAddr,
        /// The copy the timer was timing (0 = original).
        ordinal: u32,
        /// The armed duration that just expired (after dithering, backoff and caps).
        armed: Duration,
        /// Expiry time.
        at: Instant,
    },
    /// An exchange got its first answer (metric tap: transmissions per exchange, CoAP RTT).
    ExchangeCompleted {
        /// The exchange.
        exchange: ExchangeId,
        /// The request (`None` for a separate response).
        request: Option<RequestId>,
        /// The peer.
        destination: SocketAddr,
        /// Copies sent (1 = no retransmission).
        transmissions: u32,
        /// From the original's send time to the first answer.
        rtt: Duration,
        /// Which copy the answer names (FASOR+token), if known.
        answered: Option<u32>,
        /// How the answer came.
        kind: AnswerKind,
        /// Arrival time of the answer.
        at: Instant,
    },
    /// An exchange failed.
    ExchangeFailed {
        /// The exchange.
        exchange: ExchangeId,
        /// The request (`None` for a separate response).
        request: Option<RequestId>,
        /// The peer.
        destination: SocketAddr,
        /// Copies sent.
        transmissions: u32,
        /// Why.
        reason: FailReason,
        /// When.
        at: Instant,
    },
    /// The algorithm's estimator after an exchange to `destination` ended
    /// (only with [`crate::Config::emit_snapshots`]).
    Snapshot {
        /// The peer.
        destination: SocketAddr,
        /// When.
        at: Instant,
        /// The algorithm's view.
        snapshot: Snapshot,
    },
    /// A whole request finished: its last block's response arrived (metric tap: FCT).
    RequestCompleted {
        /// The request.
        request: RequestId,
        /// The peer.
        destination: SocketAddr,
        /// The final response code.
        code: Code,
        /// Body length in bytes over all blocks.
        body_len: usize,
        /// The body (empty unless [`crate::Config::keep_bodies`]).
        body: Vec<u8>,
        /// The last response's options (empty unless [`crate::Config::keep_bodies`]), e.g.
        /// for a client that prints them.
        options: coaplab_wire::option::OptionList,
        /// Exchanges it took (blocks).
        exchanges: u32,
        /// When [`crate::Endpoint::request`] was called.
        started: Instant,
        /// When the last response arrived.
        at: Instant,
    },
    /// A request failed; no response will be delivered.
    RequestFailed {
        /// The request.
        request: RequestId,
        /// The peer.
        destination: SocketAddr,
        /// Why.
        reason: FailReason,
        /// When.
        at: Instant,
    },
    /// The server ran a resource handler for a new request.
    Served {
        /// The client.
        from: SocketAddr,
        /// The request's Message ID.
        message_id: u16,
        /// The response code.
        code: Code,
        /// When.
        at: Instant,
    },
    /// A duplicate CON was answered again: from the cache, without running the handler, or
    /// ([`crate::ServerDuplicates::Reprocess`]) by the handler anew, a `Served` following.
    DuplicateRequest {
        /// The sender.
        from: SocketAddr,
        /// Its Message ID.
        message_id: u16,
        /// When.
        at: Instant,
    },
    /// An RST was sent to reject a message (RFC 7252 §4.2–4.3).
    Rejected {
        /// The sender of the rejected message.
        from: SocketAddr,
        /// Its Message ID.
        message_id: u16,
        /// When.
        at: Instant,
    },
    /// A datagram was dropped without effect.
    Ignored {
        /// The sender.
        from: SocketAddr,
        /// Why.
        reason: IgnoreReason,
        /// When.
        at: Instant,
    },
    /// Bytes that are not a CoAP message (count by [`DecodeError::label`]).
    Malformed {
        /// The sender.
        from: SocketAddr,
        /// The broken rule.
        error: DecodeError,
        /// When.
        at: Instant,
    },
    /// A partial Block1 upload was forgotten: no block arrived within
    /// [`crate::Config::upload_lifetime`] of its last one. `at` is when it was dropped: the
    /// deadline itself when [`crate::Endpoint::handle_timeout`] is called on time, else the
    /// arrival of the datagram that found it stale.
    UploadExpired {
        /// The uploading client.
        from: SocketAddr,
        /// Bytes reassembled so far, now dropped.
        received_bytes: usize,
        /// When.
        at: Instant,
    },
    /// A response larger than [`crate::Amplification::factor`] times its request, to a
    /// source not yet verified, was replaced by 4.01 Unauthorized with an Echo option
    /// (RFC 9175 §2.4); [`Event::Served`] follows with code 4.01.
    EchoChallenged {
        /// The unverified source.
        from: SocketAddr,
        /// Bytes received for the request (all blocks, when it completes a Block1 upload).
        request_bytes: usize,
        /// Bytes of the response withheld.
        response_bytes: usize,
        /// When.
        at: Instant,
    },
    /// The first block of a new Block1 upload was answered 5.03: already
    /// [`crate::Config::max_pending_uploads`] partial uploads were being reassembled, or
    /// [`crate::Config::max_pending_uploads_per_source`] from the client's IP address.
    UploadRefused {
        /// The client.
        from: SocketAddr,
        /// When.
        at: Instant,
    },
    /// Client: every Message ID is in use: the next one was issued less than
    /// [`crate::Config::message_id_lifetime`] ago (RFC 7252 §4.4), so new requests and
    /// further blocks wait until `until` (sent then, in order). Emitted when the wait begins.
    MessageIdsExhausted {
        /// When the next Message ID becomes usable.
        until: Instant,
        /// When.
        at: Instant,
    },
    /// A partial Block1 upload was dropped to make room for a new one from a source holding
    /// fewer: the upload table ([`crate::Config::max_pending_uploads`]) was full, and its
    /// source held the most partial uploads. Its next block gets 4.08.
    UploadEvicted {
        /// The client whose upload was dropped.
        from: SocketAddr,
        /// Body bytes it had received.
        received_bytes: usize,
        /// When.
        at: Instant,
    },
    /// Server: a client registered as an observer (RFC 7641 §4.1).
    ObserverAdded {
        /// The client.
        peer: SocketAddr,
        /// When.
        at: Instant,
    },
    /// Server: a registration was answered without Observe, because
    /// [`crate::Router::max_observers`] observers are registered.
    ObserverRefused {
        /// The client.
        peer: SocketAddr,
        /// When.
        at: Instant,
    },
    /// Server: an observer is no longer notified.
    ObserverRemoved {
        /// The client.
        peer: SocketAddr,
        /// Why.
        reason: ObserverGone,
        /// When.
        at: Instant,
    },
    /// Server: a notification was queued (a CON replacing an outstanding one is sent at that
    /// one's next retransmission).
    NotificationSent {
        /// The observer.
        peer: SocketAddr,
        /// Its Observe value.
        sequence: u32,
        /// CON (true) or NON.
        confirmable: bool,
        /// It replaced the state of a CON notification still waiting for its ACK (RFC 7641
        /// §4.5.2): no datagram of its own; it goes out at that CON's next retransmission, or
        /// not at all if the ACK arrives first.
        replaced: bool,
        /// When.
        at: Instant,
    },
    /// Server: a CON notification's timer expired and it was sent again (its newest state).
    NotificationRetransmitted {
        /// The observer.
        peer: SocketAddr,
        /// The Observe value sent.
        sequence: u32,
        /// Retransmissions of this CON so far, this one included.
        retransmission: u32,
        /// When.
        at: Instant,
    },
    /// Client: a notification of an observation ([`crate::Endpoint::observe`]) was accepted
    /// (newer than the last by RFC 7641 §3.4).
    Notification {
        /// The observation's request.
        request: RequestId,
        /// The server.
        destination: SocketAddr,
        /// The response code (2.05 while the observation lasts).
        code: Code,
        /// Its Observe value (`None`: the observation ended, §3.2).
        sequence: Option<u32>,
        /// The payload.
        body: Vec<u8>,
        /// When it arrived.
        at: Instant,
    },
}

/// Why a server stopped notifying an observer (RFC 7641).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ObserverGone {
    /// A GET with Observe 1 (§3.6).
    Deregistered,
    /// An RST answered a notification (§3.6).
    Reset,
    /// A CON notification was never acknowledged (§4.5).
    TimedOut,
    /// The connection carrying the observation closed or was aborted (CoAP over TCP,
    /// RFC 8323 §7: an observation lives only as long as its connection).
    Closed,
}
