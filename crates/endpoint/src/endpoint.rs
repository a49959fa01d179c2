//! The [`Endpoint`] type and its one `impl`: the components it holds, the public call
//! surface, the timers served by name (`timer.rs`), and the dispatch of received datagrams to
//! the client (`client.rs`) and server (`server.rs`) components. Each method delegates to the
//! component that owns the state, passing the others it needs (split borrows).

use std::net::SocketAddr;

use coaplab_cc::time::Instant;
use coaplab_wire::{Message, MessageType};

use crate::client::Client;
use crate::config::{Config, ConfigError};
use crate::controller::{Controller, ControllerFactory};
use crate::dedup::DedupCache;
use crate::event::{Event, IgnoreReason, RequestId, Transmit, TransmitMeta};
use crate::outputs::Outputs;
use crate::peers::Peers;
pub use crate::request::Request;
use crate::resource::Router;
use crate::server::Server;
use crate::timer::{next_deadline, Timer};

/// A sans-IO CoAP-over-UDP endpoint (RFC 7252 message layer, RFC 7959 block-wise), client and
/// server at once, with one congestion-control [`Controller`] per destination.
///
/// # Call order
///
/// The driver (simulator or socket loop) owns the clock and the sockets:
///
/// 1. Feed inputs: [`Endpoint::handle_datagram`] for each received datagram,
///    [`Endpoint::handle_timeout`] when the instant from [`Endpoint::poll_timeout`] is reached,
///    and commands ([`Endpoint::request`], [`Endpoint::reset_destination`]).
/// 2. After every input, drain [`Endpoint::poll_transmit`] and [`Endpoint::poll_event`] until
///    `None`, then ask [`Endpoint::poll_timeout`] for the next wake-up.
///
/// # Time
///
/// `now` must never decrease from one call to the next. A transmission's send time is the
/// `now` of the input that produced it, so poll transmits at that same instant.
/// `handle_timeout` before the deadline is a harmless no-op; late calls distort the timeline.
/// When a datagram and a timer fall on the same instant, hand in the datagram first: an ACK
/// is processed before a timer expiry of the same exchange (docs/algorithms.md, 'Conventions').
///
/// # Replies
///
/// Every reply to a received datagram (ACK, piggybacked or NON response, RST) is queued while
/// `handle_datagram` runs, so the driver can tag it with the packet it answers.
///
/// # Example
///
/// A client and a server, 100 ms apart, one piggybacked exchange:
///
/// ```
/// use coaplab_cc::{time::{Duration, Instant}, Settings};
/// use coaplab_endpoint::{registry_factory, Config, Endpoint, Event, Request, Router};
///
/// let settings = Settings::new();
/// let new = |seed| {
///     let factory = registry_factory("default", &settings, seed).unwrap();
///     Endpoint::new(Config::default(), factory, Router::new()).unwrap()
/// };
/// let (mut client, mut server) = (new(1), new(2));
/// let (c, s) = ("198.18.0.1:40000".parse().unwrap(), "198.18.1.1:5683".parse().unwrap());
/// let d = Duration::from_millis(100);
///
/// client.request(Instant::ZERO, s, &Request::get("data/10"));
/// let req = client.poll_transmit(Instant::ZERO).unwrap();
/// assert_eq!(req.contents.len(), 4 + 2 + 5 + 3); // header, token, "data", "10"
/// server.handle_datagram(Instant::ZERO + d, c, &req.contents);
/// let ack = server.poll_transmit(Instant::ZERO + d).unwrap();
/// client.handle_datagram(Instant::ZERO + d + d, s, &ack.contents);
/// let done = std::iter::from_fn(|| client.poll_event()).find_map(|e| match e {
///     Event::RequestCompleted { body, at, .. } => Some((body, at)),
///     _ => None,
/// });
/// assert_eq!(done, Some(((0..10).collect(), Instant::from_millis(200))));
/// assert_eq!(client.poll_timeout(), None);
/// ```
///
/// # Layout
///
/// `repr(C)`, in the order of the fields: what a client reads on every datagram and timer
/// (the hot ends of `peers` and `config` around `out`, `server_busy` and `client`) is one
/// run of about 490 bytes, and what only a server uses (its state, the duplicate cache) is
/// at the end, never touched by a client: a simulated client touches about 8 cache lines of
/// its endpoint per event instead of 13-14 (issue 35, 400 UDP flows on one core, where each
/// line is a cache miss).
#[repr(C)]
pub struct Endpoint {
    /// The destinations, their controllers and the factory that builds them (its hot half
    /// last, next to `out`).
    pub(crate) peers: Peers,
    /// Datagrams and events for the driver, and the buffer pool.
    pub(crate) out: Outputs,
    /// Whether `server` holds observers or partial uploads, the only server state with
    /// timers or with a say in an ACK's dispatch: when it does not, `server` is not read per
    /// datagram or timer. Set after every call that may change them ([`Endpoint::server_did`]).
    server_busy: bool,
    /// Whether the last input may have changed what [`Endpoint::poll_timeout`] returns
    /// ([`Endpoint::timeout_may_have_changed`]): set by every input, cleared only where the
    /// input provably left every deadline's owner as it was.
    timeout_touched: bool,
    /// Requests, their exchanges, Message IDs and observations.
    pub(crate) client: Client,
    /// The settings (their hot fields first).
    pub(crate) config: Config,
    pub(crate) dedup: DedupCache,
    /// Resources, uploads, the echo resource's state, the Echo guard and the observers.
    pub(crate) server: Server,
}

/// Where a datagram written by [`Endpoint::poll_transmit_into`] goes, and what it is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TransmitHeader {
    /// Where it goes.
    pub destination: SocketAddr,
    /// What it is.
    pub meta: TransmitMeta,
}

impl core::fmt::Debug for Endpoint {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("Endpoint")
            .field("config", &self.config)
            .field("peers", &self.peers.len())
            .field("dedup_entries", &self.dedup.len())
            .finish_non_exhaustive()
    }
}

impl Endpoint {
    /// An endpoint with `config`, building each destination's controller with `factory`, and
    /// serving `router`'s resources.
    pub fn new(
        config: Config,
        factory: ControllerFactory,
        router: Router,
    ) -> Result<Endpoint, ConfigError> {
        config.validate()?;
        Ok(Endpoint {
            client: Client::new(&config),
            dedup: DedupCache::new(
                config.dedup_lifetime,
                config.dedup_capacity,
                config.dedup_capacity_bytes,
                config.dedup_reserve_entries,
            )
            .with_reply_room(config.dedup_reserve_reply_bytes),
            server: Server::new(&config, router),
            server_busy: false,
            timeout_touched: true,
            config,
            peers: Peers::new(factory),
            out: Outputs::default(),
        })
    }

    // ---- getters ----

    /// The settings.
    pub fn config(&self) -> &Config {
        &self.config
    }

    /// The resources served.
    pub fn router_mut(&mut self) -> &mut Router {
        self.timeout_touched = true;
        self.server.router_mut()
    }

    /// The controller of `destination`, once an exchange to it has started.
    pub fn controller(&self, destination: SocketAddr) -> Option<&Controller> {
        self.peers.controller(destination)
    }

    /// Outstanding interactions with `destination` (counted against NSTART).
    pub fn in_flight(&self, destination: SocketAddr) -> u32 {
        self.peers
            .find(destination)
            .map_or(0, |p| self.peers[p].in_flight)
    }

    /// Exchanges waiting in `destination`'s NSTART queue.
    pub fn queued(&self, destination: SocketAddr) -> usize {
        self.peers
            .find(destination)
            .map_or(0, |p| self.peers[p].queue.len())
    }

    /// Requests not yet completed or failed.
    pub fn open_requests(&self) -> usize {
        self.client.open_requests()
    }

    /// Observers registered now (server side).
    pub fn observers(&self) -> usize {
        self.server.observers()
    }

    /// Observations held (client side).
    pub fn observations(&self) -> usize {
        self.client.observations().len()
    }

    /// Entries in the duplicate cache.
    pub fn dedup_entries(&self) -> usize {
        self.dedup.len()
    }

    /// Source addresses verified by an Echo value (RFC 9175 §2.4), at most
    /// [`crate::VERIFIED_SOURCES_MAX`].
    pub fn verified_sources(&self) -> usize {
        self.server.verified_sources()
    }

    /// Bytes the duplicate cache counts against [`Config::dedup_capacity_bytes`].
    pub fn dedup_bytes(&self) -> usize {
        self.dedup.held_bytes()
    }

    /// Partial Block1 uploads being reassembled (server side).
    pub fn pending_uploads(&self) -> usize {
        self.server.pending_uploads()
    }

    /// The Message ID the next exchange will use; a successor endpoint (a short-lived
    /// client on a new port) continues the sequence by starting there
    /// (docs/experiments.md §10 #21).
    pub fn next_message_id(&self) -> u16 {
        self.client.next_message_id()
    }

    /// How many Message IDs this endpoint has handed out since it was built: one per
    /// exchange it originated (a request, each further block of a block-wise transfer, a
    /// separate or NON response, a notification); retransmissions and replies (ACK, RST,
    /// piggybacked response) use none. The 16-bit Message ID repeats after 65,536 of them,
    /// so a client that must not reuse one within EXCHANGE_LIFETIME (RFC 7252 §4.4) moves to
    /// a new port before this reaches 65,536 (`coaplab bench`).
    pub fn message_ids_issued(&self) -> u64 {
        self.client.message_ids_issued()
    }

    /// The token counter's next value, to continue the sequence likewise.
    pub fn next_token(&self) -> u64 {
        self.client.next_token()
    }

    // ---- commands ----

    /// Starts `request` to `destination` at `now`. Its first exchange is sent at once, or
    /// waits in the destination's NSTART queue.
    pub fn request(
        &mut self,
        now: Instant,
        destination: SocketAddr,
        request: &Request,
    ) -> RequestId {
        self.timeout_touched = true;
        self.out.rewind();
        let (peers, out) = (&mut self.peers, &mut self.out);
        self.client
            .request(&self.config, peers, out, now, destination, request)
    }

    /// Starts the request the last [`Endpoint::request`] started again, to `destination`:
    /// [`Endpoint::request`] with the same [`Request`], for a client that asks the same thing
    /// over and over (a load generator, a simulated flow). The endpoint starts it from the
    /// copy it keeps, without reading the caller's request to compare it with its copy
    /// (two cache lines per request when many endpoints share a core, issue 35). `None`
    /// (nothing started) when there is nothing to repeat: no [`Endpoint::request`] yet, or
    /// an observation was started or ended since (its request may have taken the copy's
    /// place); the caller then calls [`Endpoint::request`].
    pub fn request_again(&mut self, now: Instant, destination: SocketAddr) -> Option<RequestId> {
        self.timeout_touched = true;
        self.out.rewind();
        let (peers, out) = (&mut self.peers, &mut self.out);
        self.client
            .request_again(&self.config, peers, out, now, destination)
    }

    /// Forgets everything the algorithm learned about `destination`, as a freshly booted
    /// device would (the "random" workload between short-lived clients, docs/experiments.md §6.1).
    /// Message IDs and tokens continue (docs/experiments.md §10 #21).
    pub fn reset_destination(&mut self, now: Instant, destination: SocketAddr) {
        self.timeout_touched = true;
        if let Some(p) = self.peers.find(destination) {
            if let Some(ctl) = self.peers[p].ctl.as_mut() {
                ctl.algorithm.reset(now);
            }
        }
    }

    /// Abandons a request: its current exchange stops (a CON in flight is reported to the
    /// algorithm as failed, docs/algorithms.md, 'Conventions'), its queue place is freed, and
    /// [`Event::RequestFailed`] with [`crate::FailReason::Cancelled`] follows. Returns false
    /// when the request is not open.
    pub fn cancel(&mut self, now: Instant, request: RequestId) -> bool {
        self.timeout_touched = true;
        self.client
            .cancel_request(&self.config, &mut self.peers, &mut self.out, now, request)
    }

    /// Registers as an observer of `request`'s resource at `destination` (RFC 7641 §3.1):
    /// `request` (a GET) is sent with Observe 0. Returns `None` when
    /// [`crate::observe::client::MAX_OBSERVATIONS`] are held.
    pub fn observe(
        &mut self,
        now: Instant,
        destination: SocketAddr,
        request: &Request,
    ) -> Option<RequestId> {
        self.timeout_touched = true;
        self.client.observe(
            &self.config,
            &mut self.peers,
            &mut self.out,
            now,
            destination,
            request,
        )
    }

    /// Ends the observation started as `request`: a GET with Observe 1 and the same token
    /// is sent (RFC 7641 §3.6) and returned; notifications still arriving get an RST. `None`
    /// when `request` is not an observation.
    pub fn cancel_observation(
        &mut self,
        now: Instant,
        request: RequestId,
        get: &Request,
    ) -> Option<RequestId> {
        self.timeout_touched = true;
        self.client.cancel_observation(
            &self.config,
            &mut self.peers,
            &mut self.out,
            now,
            request,
            get,
        )
    }

    /// Records the Observe value of the registration's response (so that older
    /// notifications are recognised); ends the observation when it has none (the server did
    /// not register it, RFC 7641 §3.1, or answered an error). The endpoint calls it itself
    /// when the registration completes or fails; a driver need not.
    pub fn observation_answered(&mut self, now: Instant, request: RequestId, observe: Option<u32>) {
        self.timeout_touched = true;
        self.client.observation_answered(now, request, observe);
    }

    // ---- inputs ----

    /// A datagram from `from` arrived at `now`.
    pub fn handle_datagram(&mut self, now: Instant, from: SocketAddr, bytes: &[u8]) {
        self.out.rewind();
        self.timeout_touched = true;
        let msg = match Message::decode(bytes) {
            Ok(m) => m,
            Err(error) => {
                self.out.events.push_back(Event::Malformed {
                    from,
                    error,
                    at: now,
                });
                // RFC 7252 §4.2: a CON with a format error is rejected with RST, when its
                // header (and so its Message ID) is readable.
                if bytes.len() >= 4 && bytes[0] >> 6 == 1 && (bytes[0] >> 4) & 3 == 0 {
                    let mid = u16::from_be_bytes([bytes[2], bytes[3]]);
                    self.out.reject(&mut self.dedup, now, from, mid);
                }
                return;
            }
        };
        match msg.mtype {
            MessageType::Ack | MessageType::Rst => {
                let rst = msg.mtype == MessageType::Rst;
                let notification = self.server_busy
                    && self.server.any_observers()
                    && msg.code.is_empty()
                    && self.server.on_notification_answer(
                        &mut self.peers,
                        &mut self.out,
                        now,
                        from,
                        msg.message_id,
                        rst,
                    );
                if notification {
                    self.server_did();
                }
                if !notification {
                    let (peers, out) = (&mut self.peers, &mut self.out);
                    self.client
                        .on_ack_or_rst(&self.config, peers, out, now, from, &msg);
                }
            }
            MessageType::Con | MessageType::Non => {
                let con = msg.mtype == MessageType::Con;
                if msg.code.is_request() {
                    let was_busy = self.server_busy;
                    let used_client = self.server.on_request(
                        &self.config,
                        &mut self.client,
                        &mut self.peers,
                        &mut self.out,
                        &mut self.dedup,
                        now,
                        from,
                        &msg,
                        bytes.len(),
                    );
                    self.server_did();
                    // The server's deadlines are read only while it is busy, the duplicate
                    // cache's only with its purge timer, the client's only if it was used:
                    // a request that touched none of them left `poll_timeout` as it was.
                    self.timeout_touched = used_client
                        || was_busy
                        || self.server_busy
                        || self.config.dedup_purge_timer;
                } else if msg.code.is_response() {
                    // A duplicate response is answered by a cached empty ACK (4 B): never an
                    // amplifier.
                    let (out, dedup) = (&mut self.out, &mut self.dedup);
                    if !self
                        .server
                        .replay_duplicate(&self.config, out, dedup, now, from, &msg, 0)
                    {
                        self.client.on_separate_response(
                            &self.config,
                            &mut self.peers,
                            &mut self.out,
                            &mut self.dedup,
                            now,
                            from,
                            &msg,
                        );
                    }
                } else if con {
                    // An empty CON ("CoAP ping", §4.3) or a reserved class (§4.2).
                    self.out.reject(&mut self.dedup, now, from, msg.message_id);
                } else {
                    self.out.ignore(now, from, IgnoreReason::RejectedNon);
                }
            }
        }
    }

    /// The timer deadline was reached: retransmit, give up, send a delayed response, or
    /// forget partial Block1 uploads and duplicate-cache entries whose lifetime ended.
    /// Calling it early does nothing.
    pub fn handle_timeout(&mut self, now: Instant) {
        self.timeout_touched = true;
        self.out.rewind();
        // Written out, each `on_timer` inlined with a constant timer (its one arm), in
        // `Timer::ALL`'s order: the loop kept the array in memory and matched on every
        // element (-33 instructions per link packet at 400 UDP flows, issue 35).
        let [a, b, c, d, e, f] = Timer::ALL;
        self.on_timer(now, a);
        self.on_timer(now, b);
        self.on_timer(now, c);
        self.on_timer(now, d);
        self.on_timer(now, e);
        self.on_timer(now, f);
    }

    // ---- outputs ----

    /// The next datagram to send, as an owned [`Transmit`].
    #[must_use]
    pub fn poll_transmit(&mut self, now: Instant) -> Option<Transmit> {
        let _ = now;
        self.out.transmits.pop_front()
    }

    /// The next datagram to send, written into `buf` (its previous contents are discarded).
    /// Buffers are swapped rather than copied and the endpoint keeps the old one for reuse,
    /// so a driver that passes the same `buf` every time allocates nothing per datagram.
    #[must_use]
    pub fn poll_transmit_into(
        &mut self,
        now: Instant,
        buf: &mut Vec<u8>,
    ) -> Option<TransmitHeader> {
        self.poll_transmit_with(now, |header, contents| {
            std::mem::swap(buf, contents);
            header
        })
    }

    /// The next datagram to send, handed to `send` in place: its header and its buffer, which
    /// `send` may read or swap with one of its own (the endpoint keeps whatever buffer is
    /// left there for reuse). `None` when nothing is queued; otherwise what `send` returned.
    /// For a driver that keeps datagrams in buffers of its own (the simulator's network): one
    /// swap per datagram instead of [`Endpoint::poll_transmit_into`]'s swap and then its own.
    pub fn poll_transmit_with<R>(
        &mut self,
        now: Instant,
        send: impl FnOnce(TransmitHeader, &mut Vec<u8>) -> R,
    ) -> Option<R> {
        let _ = now;
        // Taken off the queue first: one move of the datagram's parts, not a look at the
        // front and a move out of it afterwards (the two drains: -7 instructions per link
        // packet at 400 UDP flows, issue 35).
        let Transmit {
            destination,
            mut contents,
            meta,
        } = self.out.transmits.pop_front()?;
        let sent = send(TransmitHeader { destination, meta }, &mut contents);
        self.out.recycle(contents);
        Some(sent)
    }

    /// When [`Endpoint::handle_timeout`] should be called next (a soft deadline).
    #[must_use]
    #[inline]
    pub fn poll_timeout(&self) -> Option<Instant> {
        // A plain client's case (and a server's without observers, uploads or a purge timer):
        // only the exchanges can have a deadline, and three flags say so. Inline, with the
        // other timers out of line: the earliest of all six was a call the compiler left
        // branchy, ~58 instructions after every datagram and timer of a client (issue 35).
        if !self.server_busy && !self.config.dedup_purge_timer && !self.client.other_timers() {
            let at = self.client.retransmission_deadline();
            // The three flags restate which timers can be armed; every debug build (the
            // suite) checks them against the general minimum, so a timer added to `deadline`
            // without a flag here fails the tests instead of firing late.
            debug_assert_eq!(at, self.earliest_timer());
            return at;
        }
        self.earliest_timer()
    }

    /// The earliest deadline of all the timers ([`Endpoint::poll_timeout`]'s general case).
    #[inline(never)]
    fn earliest_timer(&self) -> Option<Instant> {
        next_deadline(|timer| self.deadline(timer))
    }

    /// Whether the last input ([`Endpoint::handle_datagram`], [`Endpoint::handle_timeout`] or
    /// a command) may have changed what [`Endpoint::poll_timeout`] returns. `false` only when
    /// that input provably left every deadline as it was: a request answered at once
    /// (piggybacked, or replayed from the duplicate cache) by a server that holds no
    /// observers and no partial uploads, uses no Message ID of its own for the answer and
    /// runs no duplicate-cache purge timer. A driver that armed its timer with the previous
    /// `poll_timeout` may then keep it without asking again. Polling outputs
    /// ([`Endpoint::poll_transmit`], [`Endpoint::poll_event`]) changes neither this nor the
    /// deadline. (Issue 35: a simulated server asked `poll_timeout` and re-armed its timer
    /// after every request, about 70 instructions per request for an unchanged `None`.)
    #[must_use]
    pub fn timeout_may_have_changed(&self) -> bool {
        self.timeout_touched
    }

    /// The next event.
    #[must_use]
    pub fn poll_event(&mut self) -> Option<Event> {
        self.out.events.pop_front()
    }

    /// Whether a datagram or an event is waiting: whether [`Endpoint::poll_transmit`] (or
    /// `poll_transmit_with`) or [`Endpoint::poll_event`] would return something now. A driver
    /// that polls until both are empty asks this instead of polling once more for nothing.
    #[must_use]
    pub fn has_output(&self) -> bool {
        self.out.any()
    }

    // ---- shared internals ----

    /// The server ran: whether it holds observers or partial uploads now (`server_busy`).
    #[inline]
    fn server_did(&mut self) {
        self.server_busy = self.server.any_observers() || self.server.pending_uploads() > 0;
    }

    /// When `timer` is due next, asked of the component that owns it.
    #[inline]
    fn deadline(&self, timer: Timer) -> Option<Instant> {
        match timer {
            Timer::UploadExpiry => self
                .server_busy
                .then(|| self.server.upload_deadline())
                .flatten(),
            Timer::StalledMessageIds => self.client.stalled_deadline(),
            Timer::ObserveNotification => self
                .server_busy
                .then(|| self.server.observe_deadline())
                .flatten(),
            Timer::Reregistration => self.client.reregistration_deadline(),
            // The flag first: without the purge timer (a client's case) the cache's lines are
            // not read at all, and a client's endpoint reads this after every datagram
            // (issue 17).
            Timer::DedupPurge => self
                .config
                .dedup_purge_timer
                .then(|| self.dedup.next_expiry())
                .flatten(),
            Timer::Retransmission => self.client.retransmission_deadline(),
        }
    }

    /// Serves `timer` at `now` (nothing when it is not due).
    #[inline(always)]
    fn on_timer(&mut self, now: Instant, timer: Timer) {
        match timer {
            Timer::UploadExpiry => {
                if self.server_busy {
                    self.server.expire_uploads(&mut self.out, now);
                    self.server_did();
                }
            }
            Timer::StalledMessageIds => {
                if self.client.any_stalled() {
                    let (peers, out) = (&mut self.peers, &mut self.out);
                    self.client.resume_stalled(&self.config, peers, out, now);
                }
            }
            Timer::ObserveNotification => {
                if self.server_busy && self.server.any_observers() {
                    let ids = self.client.message_ids();
                    self.server
                        .on_observe_timer(&mut self.peers, ids, &mut self.out, now);
                    self.server_did();
                }
            }
            Timer::Reregistration => {
                if self.client.any_observations() {
                    let (peers, out) = (&mut self.peers, &mut self.out);
                    self.client.reregister_stale(&self.config, peers, out, now);
                }
            }
            Timer::DedupPurge => {
                if self.config.dedup_purge_timer {
                    self.dedup.purge(now);
                }
            }
            Timer::Retransmission => {
                let (peers, out) = (&mut self.peers, &mut self.out);
                self.client
                    .on_retransmission_timer(&self.config, peers, out, now);
            }
        }
    }
}
