//! The [`Session`] type: state, the public call surface and the stream reader.

use std::collections::VecDeque;

use coaplab_cc::time::Instant;
use coaplab_wire::frame::{Decoded, Frame, FrameBuf};
use coaplab_wire::option::{number, ReadOptions};
use coaplab_wire::signal::{Signal, SignalMessage, DEFAULT_MAX_MESSAGE_SIZE};
use coaplab_wire::Token;

use crate::event::RequestId;
use crate::observe::client::with_observe;
use crate::request::Request;
use crate::resource::{segments, Router};
use crate::tcp::config::{SessionConfig, SessionConfigError};
use crate::tcp::event::{
    GeneratedBody, RequestError, SessionEvent, SessionFailReason, Side, Write, WriteChunk,
    WriteKind,
};
use crate::tcp::observe::Watches;
use crate::tcp::serve::Server;
use crate::tcp::writes::{Queued, Sink, Writes};

/// Where the session is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum State {
    /// Requests may go out.
    Open,
    /// We sent Release: no new requests; the peer's responses are still read.
    Released,
    /// Closed gracefully or aborted: input is ignored, the connection should be closed.
    Ended,
}

/// A request waiting for its response.
#[derive(Debug, Clone)]
pub(crate) struct Outstanding {
    pub(crate) token: Token,
    pub(crate) request: RequestId,
    pub(crate) started: Instant,
    /// What a Block2 follow-up needs (only with [`SessionConfig::block_wise_transfer`]).
    pub(crate) follow: Option<Box<Follow>>,
    /// A deregistration (GET with Observe 1, RFC 7641 §3.6) on the token of an observation:
    /// a response still carrying Observe is a late notification, not its answer.
    pub(crate) deregistration: bool,
}

/// A request whose response may come block-wise (RFC 7959 §2.4, BERT: RFC 8323 §6): its
/// method and options, for the next block's request, and the body so far.
#[derive(Debug, Clone)]
pub(crate) struct Follow {
    pub(crate) method: coaplab_wire::Code,
    pub(crate) options: coaplab_wire::OptionList,
    pub(crate) body: Vec<u8>,
    /// Frame bytes of the responses so far.
    pub(crate) frame_bytes: usize,
}

/// A sans-IO RFC 8323 session: CoAP over one reliable byte stream (one TCP connection),
/// client and server at once. No message IDs, no ACKs, no retransmission: the stream is
/// reliable, and any number of requests may be outstanding, matched by token.
///
/// # Call order
///
/// The driver owns the TCP connection:
///
/// 1. Create the session when the connection is set up ([`Session::new`] queues our CSM,
///    RFC 8323 §5.3: the initiator at connect, the acceptor as soon as it accepts).
/// 2. Feed inputs: [`Session::handle_stream_bytes`] with every chunk the stream delivers (any
///    split), [`Session::handle_stream_end`] on the peer's FIN, and commands
///    ([`Session::request`], [`Session::ping`], [`Session::release`], [`Session::close`]).
/// 3. After every input drain [`Session::poll_write`] (one TCP write each, in order; or
///    [`Session::poll_write_chunk`], which produces a large generated body piece by piece) and
///    [`Session::poll_event`]. When [`Session::should_close`] turns true, write what is
///    queued and close the connection.
///
/// A stream never retransmits at this layer; the session's one timer is Observe's, the next
/// change of an observed resource ([`Session::poll_timeout`], [`Session::handle_timeout`];
/// none without observers). A driver that times out idle connections asks
/// [`Session::idle_since`] and keeps the clock itself.
///
/// # Time
///
/// `now` must never decrease; it only stamps events.
///
/// # Example
///
/// The experiments' long transfer (docs/experiments.md §5.1), byte sizes included:
///
/// ```
/// use coaplab_cc::time::Instant;
/// use coaplab_endpoint::tcp::{Session, SessionConfig, SessionEvent};
/// use coaplab_endpoint::{Request, Resource, Router};
///
/// let mut router = Router::new();
/// router.route("f", Resource::data(102_400));
/// let mut client = Session::new(SessionConfig::client(), Router::new()).unwrap();
/// let mut server = Session::new(SessionConfig::server(), router).unwrap();
/// client.request(Instant::ZERO, &Request::get("f")).unwrap();
/// let writes: Vec<_> = std::iter::from_fn(|| client.poll_write()).collect();
/// assert_eq!(writes.iter().map(|w| w.bytes.len()).collect::<Vec<_>>(), [6, 5]);
/// for w in &writes {
///     server.handle_stream_bytes(Instant::from_millis(1), &w.bytes);
/// }
/// let writes: Vec<_> = std::iter::from_fn(|| server.poll_write()).collect();
/// assert_eq!(writes.iter().map(|w| w.bytes.len()).collect::<Vec<_>>(), [2, 102_408]);
/// for w in &writes {
///     client.handle_stream_bytes(Instant::from_millis(2), &w.bytes);
/// }
/// let done = std::iter::from_fn(|| client.poll_event()).find_map(|e| match e {
///     SessionEvent::RequestCompleted { body_len, at, .. } => Some((body_len, at)),
///     _ => None,
/// });
/// assert_eq!(done, Some((102_400, Instant::from_millis(2))));
/// ```
#[derive(Debug)]
pub struct Session {
    pub(crate) config: SessionConfig,
    /// The serving side: resources, Block1 uploads, observers.
    pub(crate) server: Server,
    pub(crate) state: State,
    /// The peer's CSM arrived (RFC 8323 §5.3: it must be the first message).
    pub(crate) csm_received: bool,
    /// The peer's Max-Message-Size in force for what we send.
    pub(crate) peer_max_message_size: u32,
    /// The peer sent Release.
    pub(crate) peer_released: bool,
    /// The front of a frame not yet complete. Holds at most one frame: bytes are appended
    /// only as far as the frame needs, and complete frames are parsed in place from the
    /// caller's slice, so no frame is copied twice.
    pub(crate) rx: Vec<u8>,
    /// The frame in `rx` is a response whose payload is counted, not kept (no
    /// [`SessionConfig::keep_bodies`]): `rx` holds its front up to the payload marker.
    pub(crate) elided: Option<Elided>,
    /// The write queue and its buffer pool.
    pub(crate) writes: Writes,
    pub(crate) events: VecDeque<SessionEvent>,
    pub(crate) outstanding: Vec<Outstanding>,
    /// Our Pings awaiting a Pong: token and send time.
    pub(crate) pings: Vec<(Token, Instant)>,
    pub(crate) next_token: u64,
    pub(crate) next_request_id: u64,
    /// When the last bytes from the peer arrived.
    pub(crate) heard_at: Option<Instant>,
    /// Observations we hold (client side).
    pub(crate) watches: Watches,
}

/// A response frame whose payload is being skipped ([`Session::elided`]).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Elided {
    /// The whole frame's length.
    total: usize,
    /// Its payload's length.
    payload_len: usize,
    /// Payload bytes still to arrive.
    left: usize,
}

/// What becomes of an incomplete frame's payload ([`Session::payload_fate`]).
enum Payload {
    /// Kept: the frame is buffered whole, at its exact length.
    Keep,
    /// Counted, not kept: the front up to the payload marker (this many bytes) is kept.
    Skip(usize, Elided),
    /// Not known until more of the frame's front arrives: buffered as it comes.
    Unknown,
}

/// The largest buffer of a partial frame kept for the next one once its frame is complete.
const RX_KEEP_BYTES: usize = 4 * 1024;

impl Session {
    /// A session on a freshly set-up connection; our CSM is queued as the first write.
    pub fn new(config: SessionConfig, router: Router) -> Result<Session, SessionConfigError> {
        config.validate()?;
        let mut s = Session {
            next_token: config.first_token,
            config,
            server: Server::new(router),
            state: State::Open,
            csm_received: false,
            peer_max_message_size: DEFAULT_MAX_MESSAGE_SIZE,
            peer_released: false,
            rx: Vec::new(),
            elided: None,
            writes: Writes::default(),
            events: VecDeque::new(),
            outstanding: Vec::new(),
            pings: Vec::new(),
            next_request_id: 0,
            heard_at: None,
            watches: Watches::default(),
        };
        let csm = SignalMessage::new(Signal::Csm {
            max_message_size: s.config.max_message_size,
            block_wise_transfer: s.config.block_wise_transfer,
        });
        s.queue_signal(&csm);
        Ok(s)
    }

    /// The settings.
    pub fn config(&self) -> &SessionConfig {
        &self.config
    }

    /// The server's resources, to add routes.
    pub fn router_mut(&mut self) -> &mut Router {
        self.server.router_mut()
    }

    /// The peer's Max-Message-Size applied to what we send (1,152 B until its CSM).
    pub fn peer_max_message_size(&self) -> u32 {
        self.peer_max_message_size
    }

    /// True once the peer's CSM arrived.
    pub fn csm_received(&self) -> bool {
        self.csm_received
    }

    /// Requests waiting for a response.
    pub fn outstanding(&self) -> usize {
        self.outstanding.len()
    }

    /// Bytes of an incomplete frame held in the receive buffer.
    pub fn buffered_bytes(&self) -> usize {
        self.rx.len()
    }

    /// Bytes the write queue holds in memory: every queued message's encoded bytes, plus
    /// [`crate::tcp::QUEUED_MESSAGE_BYTES`] each; a generated body still to be produced
    /// ([`Session::poll_write_chunk`]) costs nothing. Serving stays within
    /// [`SessionConfig::max_queued_bytes`] and [`Session::set_queue_budget`].
    pub fn queued_bytes(&self) -> usize {
        self.writes.queued_bytes()
    }

    /// Bytes still to be written: every queued message, generated bodies included, less what
    /// [`Session::poll_write_chunk`] already handed out.
    pub fn pending_write_bytes(&self) -> u64 {
        self.writes.pending_bytes()
    }

    /// Limits what responses may add to the write queue to `bytes` in all
    /// ([`Session::queued_bytes`], with [`SessionConfig::max_queued_bytes`] still in force): a
    /// driver sharing one budget among many sessions sets each one's share before handing it
    /// input. `usize::MAX` (the default): no limit but the configured one.
    pub fn set_queue_budget(&mut self, bytes: usize) {
        self.writes.set_budget(bytes);
    }

    /// True when nothing is pending: no outstanding request or Ping, no partial frame, no
    /// queued write, no observer of ours and no observation held (an observed connection is
    /// in use however quiet). After [`Session::release`], the moment to [`Session::close`].
    pub fn is_idle(&self) -> bool {
        self.server.observers().is_empty()
            && self.watches.is_empty()
            && self.outstanding.is_empty()
            && self.pings.is_empty()
            && self.rx.is_empty()
            && self.writes.is_empty()
    }

    /// Since when the session has been idle, for an idle timeout: the time the peer's last
    /// bytes arrived (`opened`, the connection's set-up time, when none has), or `None` while
    /// the session is busy or closing: a request of ours or a Ping awaits its answer, the
    /// peer's request is in progress (a frame partly received, or a Block1 upload not yet
    /// complete), a write is queued, or we already sent Release or ended the session.
    ///
    /// A driver closing idle connections (RFC 8323 §5.5) calls [`Session::release`] then
    /// [`Session::close`] once `idle_since + timeout` has passed with no input in between.
    pub fn idle_since(&self, opened: Instant) -> Option<Instant> {
        if self.state != State::Open || !self.is_idle() || !self.server.no_uploads() {
            return None;
        }
        Some(self.heard_at.unwrap_or(opened))
    }

    /// Since when the peer owes us bytes, for a short handshake timeout that an idle timeout
    /// does not give: `opened` (the connection's set-up time) until the peer's CSM has
    /// arrived whole (RFC 8323 §5.3), then the time of the peer's last bytes while a frame is
    /// partly received; `None` otherwise, and once the session ended.
    ///
    /// A driver aborts the session ([`Session::abort_with`]) once `stalled_since + timeout`
    /// has passed with no input in between: a peer that connects and stays silent, or sends a
    /// CSM and one byte of a frame, then no more, holds no connection slot for long.
    pub fn stalled_since(&self, opened: Instant) -> Option<Instant> {
        if self.state == State::Ended {
            return None;
        }
        if !self.csm_received {
            return Some(opened);
        }
        if self.rx.is_empty() {
            return None;
        }
        Some(self.heard_at.unwrap_or(opened))
    }

    /// Sends Abort (RFC 8323 §5.6) with `diagnostic` and ends the session: outstanding
    /// requests fail, [`SessionEvent::Aborted`] follows. For a driver's own reasons (a
    /// timeout, a limit); the session aborts by itself on protocol errors. No effect once the
    /// session ended.
    pub fn abort_with(&mut self, now: Instant, diagnostic: &str) {
        if self.state != State::Ended {
            self.abort(now, None, diagnostic);
        }
    }

    /// True when the driver should close the connection once the queued writes are out
    /// (after an Abort either way, [`Session::close`] or the peer's FIN).
    pub fn should_close(&self) -> bool {
        self.state == State::Ended
    }

    /// Sends a request now (Uri-Path and Uri-Query options, and the payload); there is no
    /// limit on outstanding requests (pipelining). `request.confirmable` has no meaning over a
    /// reliable stream and is ignored.
    pub fn request(&mut self, now: Instant, request: &Request) -> Result<RequestId, RequestError> {
        self.send_request(now, request, None)
    }

    /// [`Session::request`] with a fresh token, or with `deregister`'s: an observation's,
    /// for its deregistration (`crate::tcp::observe`).
    pub(crate) fn send_request(
        &mut self,
        now: Instant,
        request: &Request,
        deregister: Option<Token>,
    ) -> Result<RequestId, RequestError> {
        if self.state != State::Open || self.peer_released {
            return Err(RequestError::NotOpen);
        }
        let token = match deregister {
            Some(t) => t,
            None => self.alloc_token()?,
        };
        let mut frame = FrameBuf::new(request.method, token);
        for seg in segments(&request.path) {
            if seg.len() > 255 {
                return Err(RequestError::Unencodable);
            }
            frame.options.push(number::URI_PATH, seg.as_bytes());
        }
        for arg in &request.query {
            if arg.len() > 255 {
                return Err(RequestError::Unencodable);
            }
            frame.options.push(number::URI_QUERY, arg.as_bytes());
        }
        for (n, v) in request.options.iter() {
            frame.options.push(n, v);
        }
        frame.payload.clone_from(&request.payload);
        let len = frame.encoded_len();
        if len > self.peer_max_message_size as usize {
            return Err(RequestError::TooLarge {
                len,
                max: self.peer_max_message_size,
            });
        }
        let mut bytes = self.writes.buffer();
        // Room for the frame plus the encoder's header slack (Len/TKL, 4-B length, code).
        bytes.resize(len + 6, 0);
        let n = frame
            .encode(&mut bytes)
            .map_err(|_| RequestError::Unencodable)?;
        bytes.truncate(n);
        let request_method = request.method;
        let request = RequestId(self.next_request_id);
        self.next_request_id += 1;
        if deregister.is_none() {
            self.next_token = self.next_token.wrapping_add(1);
        }
        let follow = self.config.block_wise_transfer.then(|| {
            Box::new(Follow {
                method: request_method,
                options: frame.options.clone(),
                body: Vec::new(),
                frame_bytes: 0,
            })
        });
        self.outstanding.push(Outstanding {
            token,
            request,
            started: now,
            follow,
            deregistration: deregister.is_some(),
        });
        self.queue_request(now, request, token, bytes);
        Ok(request)
    }

    /// Sends a Ping (RFC 8323 §5.4) with a fresh token; the Pong echoes it. Returns the
    /// token, or `None` when the session has ended or every token is in use.
    pub fn ping(&mut self, now: Instant, custody: bool) -> Option<Token> {
        if self.state == State::Ended {
            return None;
        }
        let token = self.alloc_token().ok()?;
        self.next_token = self.next_token.wrapping_add(1);
        self.pings.push((token, now));
        let mut ping = SignalMessage::new(Signal::Ping { custody });
        ping.token = token;
        self.queue_signal(&ping);
        Some(token)
    }

    /// Sends Release (RFC 8323 §5.5): we want to close gracefully. No new requests go out;
    /// responses to outstanding ones are still read.
    pub fn release(&mut self, _now: Instant, hold_off_s: Option<u32>) {
        if self.state != State::Open {
            return;
        }
        self.state = State::Released;
        self.queue_signal(&SignalMessage::new(Signal::Release {
            alternative_addresses: Vec::new(),
            hold_off_s,
        }));
    }

    /// Ends the session with a plain FIN (docs/experiments.md §5.1: no Release);
    /// outstanding requests fail.
    pub fn close(&mut self, now: Instant) {
        self.end(now, SessionFailReason::Closed(Side::Local));
    }

    /// The peer closed its side of the stream (FIN): outstanding requests fail, and bytes of
    /// an incomplete frame are dropped.
    pub fn handle_stream_end(&mut self, now: Instant) {
        self.end(now, SessionFailReason::Closed(Side::Peer));
    }

    /// Bytes the stream delivered, in order, split anywhere.
    pub fn handle_stream_bytes(&mut self, now: Instant, mut bytes: &[u8]) {
        if !bytes.is_empty() {
            self.heard_at = Some(now);
        }
        // Complete the frame begun by an earlier call, taking only the bytes it needs.
        while !self.rx.is_empty() && !bytes.is_empty() && self.state != State::Ended {
            if let Some(e) = self.elided.as_mut() {
                let take = e.left.min(bytes.len());
                e.left -= take;
                bytes = &bytes[take..];
                if e.left == 0 {
                    self.finish_elided(now);
                }
                continue;
            }
            let limit = self.config.receive_limit();
            let need = match Frame::decode_stream(&self.rx, limit) {
                Ok(Decoded::NeedMore(n)) => n,
                Ok(Decoded::Frame { .. }) => 0,
                Err(e) => return self.malformed(now, e),
            };
            let take = need.min(bytes.len());
            // Exactly the frame's length once its header is known: a large frame is held
            // once, without a doubling vector's slack (unless its payload may be skipped,
            // which is known only once its options are in).
            if self.config.keep_bodies {
                self.rx.reserve_exact(need);
            }
            self.rx.extend_from_slice(&bytes[..take]);
            bytes = &bytes[take..];
            let rx = std::mem::take(&mut self.rx);
            let done = match Frame::decode_stream(&rx, limit) {
                Ok(Decoded::Frame { frame, consumed }) => {
                    self.on_frame(now, &frame, consumed, frame.payload.len());
                    true
                }
                Ok(Decoded::NeedMore(more)) => {
                    self.rx = rx;
                    // Room for the whole frame: it is kept, decided already.
                    if self.rx.capacity() < self.rx.len() + more {
                        match self.payload_fate(&self.rx) {
                            Payload::Skip(head_len, e) => {
                                self.rx.truncate(head_len);
                                self.rx.shrink_to(RX_KEEP_BYTES);
                                self.elided = Some(e);
                            }
                            Payload::Keep => self.rx.reserve_exact(more),
                            Payload::Unknown => {}
                        }
                    }
                    continue;
                }
                Err(e) => {
                    self.rx = rx;
                    return self.malformed(now, e);
                }
            };
            self.rx = rx;
            if done {
                self.rx.clear();
                if self.rx.capacity() > RX_KEEP_BYTES {
                    // A large frame's buffer is not kept for the session's lifetime.
                    self.rx = Vec::new();
                }
            }
        }
        // Whole frames straight from the caller's bytes; a partial tail is kept.
        while !bytes.is_empty() && self.state != State::Ended {
            match Frame::decode_stream(bytes, self.config.receive_limit()) {
                Ok(Decoded::Frame { frame, consumed }) => {
                    self.on_frame(now, &frame, consumed, frame.payload.len());
                    bytes = &bytes[consumed..];
                }
                Ok(Decoded::NeedMore(more)) => {
                    match self.payload_fate(bytes) {
                        Payload::Skip(head_len, e) => {
                            self.rx.extend_from_slice(&bytes[..head_len]);
                            self.elided = Some(e);
                        }
                        Payload::Keep => {
                            self.rx.reserve_exact(bytes.len() + more);
                            self.rx.extend_from_slice(bytes);
                        }
                        Payload::Unknown => self.rx.extend_from_slice(bytes),
                    }
                    return;
                }
                Err(e) => return self.malformed(now, e),
            }
        }
    }

    /// For the front of an incomplete frame: whether its payload is to be kept or can be
    /// counted instead. Only a response's can, when bodies are not kept, and not a Block2
    /// block's (whose bytes make up the body the next block is asked for by): its payload is
    /// only ever measured.
    fn payload_fate(&self, front: &[u8]) -> Payload {
        if self.config.keep_bodies {
            return Payload::Keep;
        }
        let Some(start) = Frame::decode_start(front, self.config.receive_limit()) else {
            // Not all of code, token and options yet (or a frame without payload, whose
            // length the header bounds).
            return Payload::Unknown;
        };
        if !start.frame.code.is_response() || start.frame.has(number::BLOCK2) {
            return Payload::Keep;
        }
        Payload::Skip(
            start.head_len,
            Elided {
                total: start.total,
                payload_len: start.payload_len(),
                left: start.total - front.len(),
            },
        )
    }

    /// The last byte of an elided frame arrived: handles it with an empty payload and that
    /// payload's length.
    fn finish_elided(&mut self, now: Instant) {
        let Some(e) = self.elided.take() else {
            return;
        };
        let rx = std::mem::take(&mut self.rx);
        let start = Frame::decode_start(&rx, self.config.receive_limit());
        // `rx` is the front `payload_fate` accepted, so it reads the same again.
        debug_assert!(start.is_some(), "an elided frame's front no longer decodes");
        if let Some(start) = start {
            let frame = Frame {
                payload: &[],
                ..start.frame
            };
            self.on_frame(now, &frame, e.total, e.payload_len);
        }
        self.rx = rx;
        self.rx.clear();
    }

    /// The next write for the connection, in order: one whole message (what is left of it
    /// after [`Session::poll_write_chunk`]). A generated body is produced here in full, so a
    /// driver that must bound its memory uses [`Session::poll_write_chunk`] instead.
    #[must_use]
    pub fn poll_write(&mut self) -> Option<Write> {
        let mut bytes = Vec::new();
        let kind = self.poll_write_into(&mut bytes)?;
        Some(Write { bytes, kind })
    }

    /// The next write, into `buf` (its previous contents are discarded), like
    /// [`Session::poll_write`]: buffers are swapped rather than copied and the session keeps
    /// the old one for reuse, so a driver passing the same `buf` every time allocates nothing
    /// per message.
    #[must_use]
    pub fn poll_write_into(&mut self, buf: &mut Vec<u8>) -> Option<WriteKind> {
        match self.writes.whole(buf)? {
            Ok(kind) => Some(kind),
            Err(len) => self.writes.chunk(buf, len).map(|c| c.kind),
        }
    }

    /// The next write like [`Session::poll_write_into`] (`head` replaced), except that a
    /// generated body is not produced: it comes back as a [`GeneratedBody`] for a transport
    /// that produces the bytes as it sends them, after the frame's `head` (one write).
    #[must_use]
    pub fn poll_write_parts(
        &mut self,
        head: &mut Vec<u8>,
    ) -> Option<(WriteKind, Option<GeneratedBody>)> {
        match self.writes.parts(head)? {
            Some((kind, tail)) => Some((kind, tail.map(GeneratedBody))),
            None => self.poll_write_into(head).map(|kind| (kind, None)),
        }
    }

    /// The next at most `max_bytes` (at least 1) of the front message, into `buf` (its previous
    /// contents are discarded); a generated body is produced only as far as asked. A driver
    /// writing every chunk before asking for the next holds at most `max_bytes` of any body
    /// in its own buffer, however large the message.
    #[must_use]
    pub fn poll_write_chunk(&mut self, buf: &mut Vec<u8>, max_bytes: usize) -> Option<WriteChunk> {
        self.writes.chunk(buf, max_bytes)
    }

    /// Drops every queued write without producing it: for a driver whose connection can no
    /// longer be written (a reset, a write timeout), so a large generated body is not made
    /// only to be thrown away.
    pub fn discard_writes(&mut self) {
        self.writes.discard();
    }

    /// Observers registered on this session (server side).
    pub fn observers(&self) -> usize {
        self.server.observers().len()
    }

    /// Observations held on this session (client side).
    pub fn observations(&self) -> usize {
        self.watches.len()
    }

    /// When [`Session::handle_timeout`] is due next: the next change of an observed
    /// resource. `None` without observers (the session has no other timer).
    pub fn poll_timeout(&self) -> Option<Instant> {
        if self.state == State::Ended {
            return None;
        }
        self.server.observers().next_change()
    }

    /// Time passed to `now`: when an observed resource changed, every observer is sent (or
    /// has its queued notification replaced by) the new state.
    pub fn handle_timeout(&mut self, now: Instant) {
        let (server, sink) = self.server();
        server.on_timeout(now, sink);
    }

    /// Registers as an observer of `request`'s resource (RFC 7641 §3.1): `request` (a GET)
    /// is sent with Observe 0. The answer completes the returned request
    /// ([`SessionEvent::RequestCompleted`]); later ones are
    /// [`SessionEvent::Notification`]s. Errors as [`Session::request`].
    pub fn observe(&mut self, now: Instant, request: &Request) -> Result<RequestId, RequestError> {
        let id = self.send_request(now, &with_observe(request, 0), None)?;
        let Some(token) = self.outstanding.last().map(|o| o.token) else {
            return Err(RequestError::NotOpen);
        };
        self.watches.add(token, id);
        Ok(id)
    }

    /// Ends the observation started as `request` with a GET carrying Observe 1 and its token
    /// (RFC 7641 §3.6; there is no RST over TCP), `get` being the registration's request.
    /// Returns the deregistration's request; its answer completes it, and notifications
    /// still arriving before that answer are ignored. `Err(RequestError::NotOpen)` also when
    /// `request` is no observation held.
    pub fn cancel_observation(
        &mut self,
        now: Instant,
        request: RequestId,
        get: &Request,
    ) -> Result<RequestId, RequestError> {
        let token = self.watches.cancel(request).ok_or(RequestError::NotOpen)?;
        self.send_request(now, &with_observe(get, 1), Some(token))
    }

    /// The serving side, and where its responses go (split borrows of the session).
    pub(crate) fn server(&mut self) -> (&mut Server, Sink<'_>) {
        let sink = Sink {
            writes: &mut self.writes,
            events: &mut self.events,
            max_frame_bytes: self.peer_max_message_size as usize,
            max_queued_bytes: self.config.max_queued_bytes,
        };
        (&mut self.server, sink)
    }

    /// The next event.
    #[must_use]
    pub fn poll_event(&mut self) -> Option<SessionEvent> {
        self.events.pop_front()
    }

    /// A token of the configured length not used by an outstanding request or Ping.
    fn alloc_token(&mut self) -> Result<Token, RequestError> {
        let len = self.config.token_len;
        let space = if len >= 8 {
            u64::MAX
        } else {
            1u64 << (8 * len)
        };
        let in_use = self.outstanding.len() + self.pings.len() + self.watches.len();
        if in_use as u64 >= space {
            return Err(RequestError::TokensExhausted);
        }
        // At most `in_use` of any `in_use + 1` consecutive values are busy.
        loop {
            let t = Token::from_u64(self.next_token, len);
            let busy = self.outstanding.iter().any(|o| o.token == t)
                || self.pings.iter().any(|(p, _)| *p == t)
                || self.watches.uses(t);
            if !busy {
                return Ok(t);
            }
            self.next_token = self.next_token.wrapping_add(1);
        }
    }

    /// Queues a signalling message as one write.
    /// Queues the encoded request `bytes` for writing and reports it sent.
    pub(crate) fn queue_request(
        &mut self,
        now: Instant,
        request: RequestId,
        token: Token,
        bytes: Vec<u8>,
    ) {
        self.events.push_back(SessionEvent::RequestSent {
            request,
            token,
            bytes: bytes.len(),
            at: now,
        });
        self.writes.push(Queued {
            bytes,
            tail: None,
            kind: WriteKind::Request(request),
            notification: None,
        });
    }

    pub(crate) fn queue_signal(&mut self, msg: &SignalMessage) {
        // Our own signals always encode: options and diagnostics are bounded.
        let bytes = msg.to_frame().to_bytes().unwrap_or_default();
        self.writes.push(Queued {
            bytes,
            tail: None,
            kind: WriteKind::Signal(msg.code()),
            notification: None,
        });
    }

    /// Ends the session, failing every outstanding request.
    pub(crate) fn end(&mut self, now: Instant, reason: SessionFailReason) {
        if self.state == State::Ended {
            return;
        }
        self.state = State::Ended;
        self.rx.clear();
        self.elided = None;
        self.pings.clear();
        self.server.end(&mut self.events, now);
        self.watches.clear();
        for o in std::mem::take(&mut self.outstanding) {
            self.events.push_back(SessionEvent::RequestFailed {
                request: o.request,
                reason,
                at: now,
            });
        }
        if let SessionFailReason::Closed(by) = reason {
            self.events.push_back(SessionEvent::Closed { by, at: now });
        }
    }
}
