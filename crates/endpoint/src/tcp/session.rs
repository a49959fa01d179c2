//! The [`Session`] type and its one `impl`: the components it holds (`inbound.rs`,
//! `client.rs`, `serve.rs`, `writes.rs`), the public call surface, and the dispatch of each
//! received frame. Each method delegates to the component that owns the state, passing the
//! others it needs (split borrows); aborting and ending, which touch them all, stay here.

use std::collections::VecDeque;

use coaplab_cc::time::Instant;
use coaplab_wire::frame::Frame;
use coaplab_wire::signal::{Signal, SignalMessage};
use coaplab_wire::{Code, DecodeError, Token};

use crate::event::RequestId;
use crate::observe::client::with_observe;
use crate::request::Request;
use crate::resource::Router;
use crate::tcp::client::Client;
use crate::tcp::config::{SessionConfig, SessionConfigError};
use crate::tcp::event::{
    GeneratedBody, RequestError, SessionEvent, SessionFailReason, Side, StreamIgnoreReason, Write,
    WriteChunk, WriteKind,
};
use crate::tcp::inbound::{Inbound, Verdict};
use crate::tcp::serve::Server;
use crate::tcp::writes::{Sink, Writes};

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
    pub(crate) state: State,
    /// The receive path: the peer's CSM, Release, and the frame being read.
    pub(crate) inbound: Inbound,
    /// The client side: requests and Pings awaiting answers, observations held.
    pub(crate) client: Client,
    /// The serving side: resources, Block1 uploads, observers.
    pub(crate) server: Server,
    /// The write queue and its buffer pool.
    pub(crate) writes: Writes,
    pub(crate) events: VecDeque<SessionEvent>,
}

impl Session {
    /// A session on a freshly set-up connection; our CSM is queued as the first write.
    pub fn new(config: SessionConfig, router: Router) -> Result<Session, SessionConfigError> {
        config.validate()?;
        let mut s = Session {
            client: Client::new(config.first_token),
            config,
            state: State::Open,
            inbound: Inbound::new(),
            server: Server::new(router),
            writes: Writes::default(),
            events: VecDeque::new(),
        };
        let csm = SignalMessage::new(Signal::Csm {
            max_message_size: s.config.max_message_size,
            block_wise_transfer: s.config.block_wise_transfer,
        });
        s.writes.push_signal(&csm);
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
        self.inbound.peer_max_message_size
    }

    /// True once the peer's CSM arrived.
    pub fn csm_received(&self) -> bool {
        self.inbound.csm_received
    }

    /// Requests waiting for a response.
    pub fn outstanding(&self) -> usize {
        self.client.outstanding()
    }

    /// Bytes of an incomplete frame held in the receive buffer.
    pub fn buffered_bytes(&self) -> usize {
        self.inbound.framing.rx.len()
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
            && self.client.is_idle()
            && self.inbound.framing.rx.is_empty()
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
        Some(self.inbound.heard_at.unwrap_or(opened))
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
        if !self.inbound.csm_received {
            return Some(opened);
        }
        if self.inbound.framing.rx.is_empty() {
            return None;
        }
        Some(self.inbound.heard_at.unwrap_or(opened))
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
    /// for its deregistration.
    fn send_request(
        &mut self,
        now: Instant,
        request: &Request,
        deregister: Option<Token>,
    ) -> Result<RequestId, RequestError> {
        if !self.may_request() {
            return Err(RequestError::NotOpen);
        }
        let (client, config, sink) = self.client();
        client.send_request(now, request, deregister, config, sink)
    }

    /// New requests may go out: we did not send Release, nor did the peer, and the session
    /// has not ended.
    fn may_request(&self) -> bool {
        self.state == State::Open && !self.inbound.peer_released
    }

    /// Sends a Ping (RFC 8323 §5.4) with a fresh token; the Pong echoes it. Returns the
    /// token, or `None` when the session has ended or every token is in use.
    pub fn ping(&mut self, now: Instant, custody: bool) -> Option<Token> {
        if self.state == State::Ended {
            return None;
        }
        self.client
            .ping(now, custody, self.config.token_len, &mut self.writes)
    }

    /// Sends Release (RFC 8323 §5.5): we want to close gracefully. No new requests go out;
    /// responses to outstanding ones are still read.
    pub fn release(&mut self, _now: Instant, hold_off_s: Option<u32>) {
        if self.state != State::Open {
            return;
        }
        self.state = State::Released;
        self.writes
            .push_signal(&SignalMessage::new(Signal::Release {
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
    pub fn handle_stream_bytes(&mut self, now: Instant, bytes: &[u8]) {
        if !bytes.is_empty() {
            self.inbound.heard_at = Some(now);
        }
        if self.state == State::Ended {
            return;
        }
        let (limit, keep_bodies) = (self.config.receive_limit(), self.config.keep_bodies);
        // The reader is taken out so each frame can be handled by the whole session; one
        // that ends the session stops it with the reader already empty.
        let mut framing = std::mem::take(&mut self.inbound.framing);
        let read = framing.read(bytes, limit, keep_bodies, &mut |frame, len, payload_len| {
            self.on_frame(now, frame, len, payload_len);
            self.state != State::Ended
        });
        self.inbound.framing = framing;
        if let Err(e) = read {
            self.malformed(now, e);
        }
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
        self.client.observations()
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
        self.client.watch_last(id)
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
        let token = self.client.unwatch(request).ok_or(RequestError::NotOpen)?;
        self.send_request(now, &with_observe(get, 1), Some(token))
    }

    /// The serving side, and where its responses go (split borrows of the session).
    pub(crate) fn server(&mut self) -> (&mut Server, Sink<'_>) {
        let sink = Sink {
            writes: &mut self.writes,
            events: &mut self.events,
            max_frame_bytes: self.inbound.peer_max_message_size as usize,
            max_queued_bytes: self.config.max_queued_bytes,
        };
        (&mut self.server, sink)
    }

    /// The client side, the settings, and where its requests go (split borrows).
    fn client(&mut self) -> (&mut Client, &SessionConfig, Sink<'_>) {
        let sink = Sink {
            writes: &mut self.writes,
            events: &mut self.events,
            max_frame_bytes: self.inbound.peer_max_message_size as usize,
            max_queued_bytes: self.config.max_queued_bytes,
        };
        (&mut self.client, &self.config, sink)
    }

    /// The next event.
    #[must_use]
    pub fn poll_event(&mut self) -> Option<SessionEvent> {
        self.events.pop_front()
    }

    /// Ends the session, failing every outstanding request.
    pub(crate) fn end(&mut self, now: Instant, reason: SessionFailReason) {
        if self.state == State::Ended {
            return;
        }
        self.state = State::Ended;
        self.inbound.framing.clear();
        self.server.end(&mut self.events, now);
        self.client.end(&mut self.events, now, reason);
        if let SessionFailReason::Closed(by) = reason {
            self.events.push_back(SessionEvent::Closed { by, at: now });
        }
    }

    /// One complete frame of `len` bytes whose payload is `payload_len` bytes: `frame.payload`'s
    /// length, or more for a response whose payload was counted, not kept
    /// ([`SessionConfig::keep_bodies`] off), and handed in empty. Signals go to the receive
    /// path, requests to the server, responses to the client.
    fn on_frame(&mut self, now: Instant, frame: &Frame<'_>, len: usize, payload_len: usize) {
        if !self.inbound.csm_received && frame.code != Code::CSM {
            // RFC 8323 §5.3: "Missing or invalid CSMs result in the connection being aborted."
            return self.abort(now, None, "the first message must be a CSM");
        }
        let code = frame.code;
        if code.is_signal() {
            let verdict = self.inbound.on_signal(
                now,
                frame,
                &mut self.client,
                &mut self.writes,
                &mut self.events,
            );
            return match verdict {
                Verdict::Done => {}
                Verdict::Abort {
                    bad_csm_option,
                    diagnostic,
                } => self.abort(now, bad_csm_option, diagnostic),
                Verdict::PeerAbort {
                    bad_csm_option,
                    diagnostic,
                } => self.peer_abort(now, bad_csm_option, diagnostic),
            };
        }
        if code.is_empty() {
            // RFC 8323 §3.3: an empty message (a keepalive) is ignored.
            return;
        }
        if code.is_request() {
            if self.state != State::Open && self.state != State::Released {
                return self.ignore(now, StreamIgnoreReason::AfterEnd);
            }
            let (server, sink) = self.server();
            return server.serve(sink, now, frame, len);
        }
        if code.is_response() {
            let (client, config, sink) = self.client();
            if let Err(diagnostic) = client.on_response(now, frame, len, payload_len, config, sink)
            {
                self.abort(now, None, diagnostic);
            }
            return;
        }
        self.ignore(now, StreamIgnoreReason::ReservedCode);
    }

    fn peer_abort(&mut self, now: Instant, bad_csm_option: Option<u16>, diagnostic: &[u8]) {
        self.end(now, SessionFailReason::Aborted(Side::Peer));
        self.events.push_back(SessionEvent::Aborted {
            by: Side::Peer,
            bad_csm_option,
            diagnostic: String::from_utf8_lossy(diagnostic).into_owned(),
            at: now,
        });
    }

    /// Sends Abort (RFC 8323 §5.6) and ends the session.
    fn abort(&mut self, now: Instant, bad_csm_option: Option<u16>, diagnostic: &str) {
        let mut msg = SignalMessage::new(Signal::Abort { bad_csm_option });
        msg.diagnostic = diagnostic.as_bytes().to_vec();
        self.writes.push_signal(&msg);
        self.end(now, SessionFailReason::Aborted(Side::Local));
        self.events.push_back(SessionEvent::Aborted {
            by: Side::Local,
            bad_csm_option,
            diagnostic: diagnostic.to_owned(),
            at: now,
        });
    }

    /// Bytes that cannot be a frame: the stream cannot be resynchronised, so abort.
    fn malformed(&mut self, now: Instant, error: DecodeError) {
        self.events
            .push_back(SessionEvent::Malformed { error, at: now });
        let diagnostic = match error {
            // RFC 8323 §5.3.1: the peer ignored the Max-Message-Size of our CSM.
            DecodeError::FrameTooLarge { .. } => "message larger than our Max-Message-Size",
            _ => "malformed frame",
        };
        self.abort(now, None, diagnostic);
    }

    fn ignore(&mut self, now: Instant, reason: StreamIgnoreReason) {
        self.events
            .push_back(SessionEvent::Ignored { reason, at: now });
    }
}
