//! The client: its requests, their exchanges (one per outgoing CON/NON message), the Message
//! IDs they take and its observations; each request's life from its first exchange to its
//! completion or failure (RFC 7252 §4–5), block by block ([`crate::blockwise`] decides what a
//! response does to it). The exchanges' own life (the NSTART gate, retransmission, matching
//! answers) is `crate::exchanges`'s; what an exchange's end leaves for its request comes back
//! here. The exchanges table also carries the server's separate CON responses, retransmitted
//! like requests.
//!
//! A component of [`crate::Endpoint`]: it owns its fields; the endpoint's settings, peers,
//! outputs and duplicate cache come in as arguments.

use std::net::SocketAddr;

use coaplab_cc::time::{Duration, Instant};
use coaplab_wire::option::OptionList;
use coaplab_wire::{Message, MessageType, Token};

use crate::blockwise::{self, Step};
use crate::config::Config;
use crate::controller::Marking;
use crate::dedup::DedupCache;
use crate::event::{Event, FailReason, IgnoreReason, RequestId};
use crate::exchange::{Owner, XState};
use crate::exchanges::{Answered, Exchanges};
use crate::marking::{RexmitLayout, RexmitPeer};
use crate::message_ids::{Gate, MessageIds};
use crate::observe::client::Observations;
use crate::outputs::Outputs;
use crate::peers::Peers;
use crate::request::Request;
use crate::slots::Requests;

/// The client's state.
pub(crate) struct Client {
    /// The exchanges, their free slots, and the exchange-id and token counters.
    exchanges: Exchanges,
    /// The requests, their free slots, and the request-id counter.
    requests: Requests,
    /// The Message ID sequence and the requests waiting for a usable ID.
    message_ids: MessageIds,
    /// Observations held (RFC 7641, client side).
    observations: Observations,
    /// The request slot holding what the last [`crate::Endpoint::request`] (or
    /// [`crate::Endpoint::request_again`]) asked, for `request_again` (`None`: nothing, or
    /// the slot was reused by another request since).
    repeatable: Option<usize>,
}

impl Client {
    /// No requests yet; Message IDs and tokens from `config`.
    pub(crate) fn new(config: &Config) -> Client {
        Client {
            exchanges: Exchanges::new(config.initial_token),
            requests: Requests::default(),
            message_ids: MessageIds::new(config.initial_message_id, config.message_id_lifetime),
            observations: Observations::default(),
            repeatable: None,
        }
    }

    /// The Message ID sequence (the server's replies and notifications take theirs from it too).
    #[inline]
    pub(crate) fn message_ids(&mut self) -> &mut MessageIds {
        &mut self.message_ids
    }

    /// The Message ID the next exchange will use.
    pub(crate) fn next_message_id(&self) -> u16 {
        self.message_ids.next()
    }

    /// Message IDs handed out so far.
    pub(crate) fn message_ids_issued(&self) -> u64 {
        self.message_ids.issued()
    }

    /// The token counter's next value.
    pub(crate) fn next_token(&self) -> u64 {
        self.exchanges.next_token()
    }

    /// Requests not yet completed or failed.
    pub(crate) fn open_requests(&self) -> usize {
        self.requests.open()
    }

    /// Observations held.
    pub(crate) fn observations(&self) -> &Observations {
        &self.observations
    }

    /// The exchanges' earliest deadline (retransmission, give-up, a delayed response).
    #[inline]
    pub(crate) fn retransmission_deadline(&self) -> Option<Instant> {
        self.exchanges.next_deadline()
    }

    /// When requests stalled for a Message ID may go on.
    #[inline]
    pub(crate) fn stalled_deadline(&self) -> Option<Instant> {
        self.message_ids.deadline()
    }

    /// When the next observation is re-registered.
    #[inline]
    pub(crate) fn reregistration_deadline(&self) -> Option<Instant> {
        self.observations.next_reregistration()
    }

    /// Serves the retransmission timer at `now`: deadlines in order; each expiry arms a
    /// later deadline or ends the exchange, and MAX_RETRANSMIT bounds the retransmissions,
    /// so this terminates.
    #[inline]
    pub(crate) fn on_retransmission_timer(
        &mut self,
        config: &Config,
        peers: &mut Peers,
        out: &mut Outputs,
        now: Instant,
    ) {
        while let Some(slot) = self.exchanges.next_due(now) {
            let requests = &self.requests;
            let ended = self
                .exchanges
                .on_deadline(config, peers, out, requests, now, slot);
            if let Some((r, reason)) = ended {
                self.fail_request(peers, out, now, r, reason);
            }
        }
    }

    /// Whether a timer of the client's other than the exchanges' may be armed: requests
    /// stalled for a Message ID, or observations (their re-registration).
    #[inline]
    pub(crate) fn other_timers(&self) -> bool {
        self.message_ids.any_stalled() || !self.observations.is_empty()
    }

    /// Requests wait for a Message ID (the endpoint asks before [`Client::resume_stalled`]).
    #[inline]
    pub(crate) fn any_stalled(&self) -> bool {
        self.message_ids.any_stalled()
    }

    /// Observations are held (the endpoint asks before [`Client::reregister_stale`]).
    #[inline]
    pub(crate) fn any_observations(&self) -> bool {
        !self.observations.is_empty()
    }

    /// Requests stalled for a Message ID go on once one is usable.
    pub(crate) fn resume_stalled(
        &mut self,
        config: &Config,
        peers: &mut Peers,
        out: &mut Outputs,
        now: Instant,
    ) {
        for r in self.message_ids.take_ready(now) {
            if self.requests[r].live {
                self.next_exchange(config, peers, out, now, r);
            }
        }
    }

    /// Registers as an observer of `request`'s resource at `destination` (RFC 7641 §3.1).
    pub(crate) fn observe(
        &mut self,
        config: &Config,
        peers: &mut Peers,
        out: &mut Outputs,
        now: Instant,
        destination: SocketAddr,
        request: &Request,
    ) -> Option<RequestId> {
        if self.observations.full() {
            return None;
        }
        let request = crate::observe::client::with_observe(request, 0);
        let (_, id) = self.start_request(config, peers, out, now, destination, &request, None);
        let token = self.exchanges.token_of(&self.requests, id)?;
        self.observations.add(id, destination, token, request);
        Some(id)
    }

    /// Ends the observation started as `request` with `get` and Observe 1 (RFC 7641 §3.6).
    pub(crate) fn cancel_observation(
        &mut self,
        config: &Config,
        peers: &mut Peers,
        out: &mut Outputs,
        now: Instant,
        request: RequestId,
        get: &Request,
    ) -> Option<RequestId> {
        let (peer, token, get) = self.observations.cancel(request, get)?;
        let (_, id) = self.start_request(config, peers, out, now, peer, &get, Some(token));
        Some(id)
    }

    /// Records the Observe value of a registration's response ([`crate::Endpoint::observation_answered`]).
    pub(crate) fn observation_answered(
        &mut self,
        now: Instant,
        request: RequestId,
        observe: Option<u32>,
    ) {
        self.observations.answered(now, request, observe);
    }

    /// Registers again for every observation whose representation went stale by `now`
    /// (RFC 7641 §3.3.1).
    pub(crate) fn reregister_stale(
        &mut self,
        config: &Config,
        peers: &mut Peers,
        out: &mut Outputs,
        now: Instant,
    ) {
        for i in 0..self.observations.len() {
            if let Some((peer, token, get)) = self.observations.stale(i, now) {
                let (_, id) = self.start_request(config, peers, out, now, peer, &get, Some(token));
                self.observations.reregistering(i, id);
            }
        }
    }

    /// The server's separate CON response `bytes` to `to` (RFC 7252 §5.2.2), with Message ID
    /// `mid` and `token`, goes out after `delay` and is retransmitted like a request (not
    /// through the NSTART gate); returns the buffer it replaces, for reuse.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn delay_response(
        &mut self,
        peers: &mut Peers,
        now: Instant,
        to: SocketAddr,
        mid: u16,
        token: Token,
        bytes: Vec<u8>,
        delay: Duration,
    ) -> Vec<u8> {
        let p = peers.slot(to);
        let slot = self.exchanges.start(Owner::Separate, p, mid, token, true);
        let old = std::mem::replace(&mut self.exchanges[slot].bytes, bytes);
        let x = &mut self.exchanges[slot];
        x.state = XState::Delayed;
        x.deadline = Some(now + delay);
        old
    }

    /// Starts `request` to `destination` ([`crate::Endpoint::request`]); it can be repeated
    /// with [`Client::request_again`].
    pub(crate) fn request(
        &mut self,
        config: &Config,
        peers: &mut Peers,
        out: &mut Outputs,
        now: Instant,
        destination: SocketAddr,
        request: &Request,
    ) -> RequestId {
        let (slot, id) = self.start_request(config, peers, out, now, destination, request, None);
        self.repeatable = Some(slot);
        id
    }

    /// Starts the request [`Client::request`] started last again, to `destination`, from
    /// the copy its slot keeps ([`crate::Endpoint::request_again`]); `None` when there is
    /// none.
    pub(crate) fn request_again(
        &mut self,
        config: &Config,
        peers: &mut Peers,
        out: &mut Outputs,
        now: Instant,
        destination: SocketAddr,
    ) -> Option<RequestId> {
        let last = self.repeatable?;
        let p = peers.slot(destination);
        let (slot, id) = self.requests.take();
        if slot != last {
            // The last one is still open (its slot is not the free one): copy it over.
            let (from, to) = if last < slot {
                let (a, b) = self.requests.split_at_mut(slot);
                (&a[last], &mut b[0])
            } else {
                let (a, b) = self.requests.split_at_mut(last);
                (&b[0], &mut a[slot])
            };
            to.take_request_of(from);
        }
        self.repeatable = Some(slot);
        self.begin(config, peers, out, now, p, slot, id, None);
        Some(id)
    }

    /// Starts `request` (an observation's registration or end, [`crate::Endpoint::request`])
    /// to `destination`, every exchange with `fixed_token` when given; the request's slot and
    /// id.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn start_request(
        &mut self,
        config: &Config,
        peers: &mut Peers,
        out: &mut Outputs,
        now: Instant,
        destination: SocketAddr,
        request: &Request,
        fixed_token: Option<coaplab_wire::Token>,
    ) -> (usize, RequestId) {
        let p = peers.slot(destination);
        let (slot, id) = self.requests.take();
        if self.repeatable == Some(slot) {
            self.repeatable = None;
        }
        self.requests[slot].take_request(request);
        self.begin(config, peers, out, now, p, slot, id, fixed_token);
        (slot, id)
    }

    /// Request slot `slot`, holding what to ask, starts as request `id` to peer `p`: its
    /// first exchange.
    #[allow(clippy::too_many_arguments)]
    fn begin(
        &mut self,
        config: &Config,
        peers: &mut Peers,
        out: &mut Outputs,
        now: Instant,
        p: usize,
        slot: usize,
        id: RequestId,
        fixed_token: Option<coaplab_wire::Token>,
    ) {
        let block = config.block_size_bytes;
        let r = &mut self.requests[slot];
        r.id = id;
        r.live = true;
        r.peer = p;
        r.started = now;
        r.exchanges = 0;
        r.uploading = r.payload.len() > block;
        r.b1_offset = 0;
        r.b1_size = block;
        r.b2_next = None;
        r.body.clear();
        r.body_len = 0;
        r.echo.clear();
        r.echo_retries = 0;
        r.fixed_token = fixed_token;
        if let Some(size) = config.request_block2_size_bytes {
            r.b2_next = coaplab_wire::Block::with_size(0, false, size);
        }
        self.next_exchange(config, peers, out, now, slot);
    }

    /// Creates the request's next exchange (its first message or next block) and passes it
    /// to the NSTART gate.
    pub(crate) fn next_exchange(
        &mut self,
        config: &Config,
        peers: &mut Peers,
        out: &mut Outputs,
        now: Instant,
        req: usize,
    ) {
        // RFC 7252 §4.4: no Message ID is reused within its lifetime; wait for one, in order.
        if let Gate::Stall { until, first } = self.message_ids.gate(now, req) {
            if first {
                out.events
                    .push_back(Event::MessageIdsExhausted { until, at: now });
            }
            return;
        }
        let p = self.requests[req].peer;
        let confirmable = self.requests[req].confirmable;
        let marking = if confirmable {
            peers.ensure_controller(now, p).marking
        } else {
            Marking::Off
        };
        let token_mode = marking == Marking::Token;
        let len = config.token_len_bytes as usize;
        let token = if let Some(t) = self.requests[req].fixed_token {
            t
        } else if token_mode {
            // FASOR+token (Globecom 2018; draft-ietf-core-fasor-02): the last token byte is the
            // ordinal.
            let base = self.exchanges.alloc_token(p, len.max(1) - 1);
            base.with_suffix(0).unwrap_or(base)
        } else {
            self.exchanges.alloc_token(p, len)
        };
        let mid = self.message_ids.alloc(now);
        let slot = self
            .exchanges
            .start(Owner::Request(req), p, mid, token, confirmable);
        self.exchanges[slot].token_mode = token_mode;
        self.exchanges[slot].gated = true;
        self.requests[req].exchanges += 1;
        let mut bytes = std::mem::take(&mut self.exchanges[slot].bytes);
        crate::blockwise::encode_request_reusing(&mut self.requests[req], mid, token, &mut bytes);
        let unencodable = bytes.is_empty();
        if let Marking::RexmitCnt { option } = marking {
            let probe = match peers[p].rexmit {
                RexmitPeer::Unknown => Some(true),
                RexmitPeer::Enabled => Some(false),
                RexmitPeer::Disabled => None,
            };
            self.exchanges[slot].rexmit =
                probe.and_then(|probe| RexmitLayout::of(&bytes, option, probe));
        }
        self.exchanges[slot].bytes = bytes;
        if unencodable {
            self.exchanges.free(slot);
            self.fail_request(peers, out, now, req, FailReason::Unencodable);
            return;
        }
        let peer = &mut peers[p];
        if peer.in_flight < config.nstart {
            let requests = &self.requests;
            self.exchanges
                .admit(config, peers, out, requests, now, slot, false);
        } else {
            self.exchanges[slot].state = XState::Queued;
            peer.queue.push_back(slot);
        }
    }

    pub(crate) fn cancel_request(
        &mut self,
        config: &Config,
        peers: &mut Peers,
        out: &mut Outputs,
        now: Instant,
        request: RequestId,
    ) -> bool {
        let Some(r) = self.requests.iter().position(|q| q.live && q.id == request) else {
            return false;
        };
        // Its slot may be reused at once: it must not stay in line for a Message ID.
        self.message_ids.forget(r);
        let requests = &self.requests;
        self.exchanges.cancel(config, peers, out, requests, now, r);
        self.fail_request(peers, out, now, r, FailReason::Cancelled);
        true
    }

    pub(crate) fn fail_request(
        &mut self,
        peers: &mut Peers,
        out: &mut Outputs,
        now: Instant,
        r: usize,
        reason: FailReason,
    ) {
        let req = &mut self.requests[r];
        if !req.live {
            return;
        }
        req.live = false;
        let mut id = req.id;
        if !self.observations.is_empty() {
            id = self.observations.failed(id).unwrap_or(id);
        }
        let req = &mut self.requests[r];
        out.events.push_back(Event::RequestFailed {
            request: id,
            destination: peers[req.peer].addr,
            reason,
            at: now,
        });
        self.requests.release(r);
    }

    /// An ACK or RST arrived.
    #[inline]
    pub(crate) fn on_ack_or_rst(
        &mut self,
        config: &Config,
        peers: &mut Peers,
        out: &mut Outputs,
        now: Instant,
        from: SocketAddr,
        msg: &Message<'_>,
    ) {
        let requests = &self.requests;
        let answered = self
            .exchanges
            .on_ack_or_rst(config, peers, out, requests, now, from, msg);
        self.finish(config, peers, out, now, answered, msg);
    }

    /// The end of an exchange left `answered` for its request: it fails, or takes `msg`.
    #[inline]
    fn finish(
        &mut self,
        config: &Config,
        peers: &mut Peers,
        out: &mut Outputs,
        now: Instant,
        answered: Answered,
        msg: &Message<'_>,
    ) {
        match answered {
            Answered::Nothing => {}
            Answered::Fail(r, reason) => self.fail_request(peers, out, now, r, reason),
            Answered::Response(r) => self.on_response(config, peers, out, now, r, msg),
        }
    }

    /// A CON or NON response arrived outside an ACK (separate response, or the answer to a
    /// NON request).
    /// Duplicates were answered from `dedup` before; replies to this one are cached there.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn on_separate_response(
        &mut self,
        config: &Config,
        peers: &mut Peers,
        out: &mut Outputs,
        dedup: &mut DedupCache,
        now: Instant,
        from: SocketAddr,
        msg: &Message<'_>,
    ) {
        let con = msg.mtype == MessageType::Con;
        let found = self.exchanges.find_response(peers, from, msg.token);
        let Some(slot) = found else {
            if !self.observations.is_empty()
                && self
                    .observations
                    .on_notification(out, dedup, now, from, msg)
            {
                return;
            }
            if con {
                // §4.2: a CON we cannot process (an unexpected response) is rejected.
                out.reject(dedup, now, from, msg.message_id);
            } else {
                dedup.remember_unanswered(now, from, msg.message_id);
                out.ignore(now, from, IgnoreReason::UnmatchedNon);
            }
            return;
        };
        let bad = crate::blockwise::unknown_critical(msg);
        match (con, bad) {
            // §5.4.1, §4.2: a CON response with an unrecognised critical option is rejected.
            (true, Some(_)) => out.reject(dedup, now, from, msg.message_id),
            (true, None) => out.send_empty(dedup, now, from, MessageType::Ack, msg.message_id),
            (false, _) => dedup.remember_unanswered(now, from, msg.message_id),
        }
        let requests = &self.requests;
        let answered = self
            .exchanges
            .on_separate_response(config, peers, out, requests, now, slot, bad);
        self.finish(config, peers, out, now, answered, msg);
    }

    /// Completes request `r` with `code`.
    pub(crate) fn complete_request(
        &mut self,
        config: &Config,
        peers: &mut Peers,
        out: &mut Outputs,
        now: Instant,
        r: usize,
        msg: &Message<'_>,
    ) {
        let code = msg.code;
        // An observation's registration answered (RFC 7641 §3.1): keep its number, or forget
        // it when the server did not register it; a re-registration's answer is a notification.
        let id = self.requests[r].id;
        if !self.observations.is_empty() && self.observations.on_response(out, now, id, msg) {
            let req = &mut self.requests[r];
            req.live = false;
            req.body.clear();
            self.requests.release(r);
            return;
        }
        let req = &mut self.requests[r];
        req.live = false;
        let (body, options) = if config.keep_bodies {
            (std::mem::take(&mut req.body), msg.options.into())
        } else {
            (Vec::new(), OptionList::new())
        };
        out.events.push_back(Event::RequestCompleted {
            request: req.id,
            destination: peers[req.peer].addr,
            code,
            body_len: req.body_len,
            body,
            options,
            exchanges: req.exchanges,
            started: req.started,
            at: now,
        });
        self.requests.release(r);
    }

    /// The response to request `r`'s current exchange arrived (block-wise: [`blockwise::advance`]).
    fn on_response(
        &mut self,
        config: &Config,
        peers: &mut Peers,
        out: &mut Outputs,
        now: Instant,
        r: usize,
        msg: &Message<'_>,
    ) {
        let req = &mut self.requests[r];
        match blockwise::advance(req, msg, config.max_body_bytes, config.keep_bodies) {
            Step::Next => self.next_exchange(config, peers, out, now, r),
            Step::Complete => self.complete_request(config, peers, out, now, r, msg),
            Step::Fail(reason) => self.fail_request(peers, out, now, r, reason),
            Step::BadOption => {
                let from = peers[req.peer].addr;
                out.ignore(now, from, IgnoreReason::BadOption);
                self.fail_request(peers, out, now, r, FailReason::BlockMismatch);
            }
        }
    }
}
