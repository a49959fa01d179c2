//! The exchanges (one per outgoing CON/NON message: a client's request block, or a server's
//! separate CON response) and their life: token allocation, the NSTART gate (its counters and
//! FIFO queue on each [`crate::peers::Peers`] entry, RFC 7252 §4.7), each copy sent,
//! retransmission under the destination's RTO algorithm (`start` → `expired`* →
//! `completed` | `failed`), and the matching of ACKs, RSTs and responses (Message ID for
//! ACK/RST, token for responses, §4.2, §5.3.2; the copy a response names with FASOR+token or
//! Rexmit-Cnt). A component of the client (`crate::client`): it owns the table; the
//! endpoint's settings, peers and outputs, and the client's requests (for the request ids
//! its events carry) come in as arguments. What an exchange's end leaves for its request is
//! returned ([`Answered`], or the request to fail), so the client finishes it.
//!
//! The table is a slab: a freed slot is reused, keeping its buffers' capacity, and it derefs
//! to the slice of all slots (live or not).

use std::net::SocketAddr;
use std::ops::{Deref, DerefMut};

use coaplab_cc::time::Instant;
use coaplab_cc::{Admission, Completion, Expiry};
use coaplab_wire::{Message, MessageType, Token};

use crate::config::Config;
use crate::event::{
    AnswerKind, Event, ExchangeId, FailReason, IgnoreReason, RequestId, Transmit, TransmitMeta,
};
use crate::exchange::{Exch, Owner, XState};
use crate::marking::{self, RexmitPeer};
use crate::outputs::Outputs;
use crate::peers::Peers;
use crate::slots::Requests;

/// What the end of an exchange leaves for its request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Answered {
    /// Nothing (the answer was ignored, was an empty ACK, or the exchange served no request).
    Nothing,
    /// Request slot `.0` fails for this reason.
    Fail(usize, FailReason),
    /// Request slot `r` takes the response.
    Response(usize),
}

/// Every exchange slot, the free ones, and the exchange-id and token counters.
pub(crate) struct Exchanges {
    slots: Vec<Exch>,
    /// The free slot to reuse first; each free slot names the next ([`Exch::next_free`]),
    /// last freed first. A list in the slots rather than a `Vec` of its own: a client reusing
    /// its one slot touches no other line for it (issue 35).
    free: Option<usize>,
    next_id: u64,
    next_token: u64,
}

impl Exchanges {
    /// No exchanges; tokens count from `initial_token` ([`crate::Config::initial_token`]).
    pub(crate) fn new(initial_token: u64) -> Exchanges {
        Exchanges {
            slots: Vec::new(),
            free: None,
            next_id: 0,
            next_token: initial_token,
        }
    }

    /// A slot for a new exchange (a freed one first) and its id; the caller fills it in.
    pub(crate) fn take(&mut self) -> (usize, ExchangeId) {
        let slot = match self.free {
            Some(slot) => {
                self.free = self.slots[slot].next_free.take();
                slot
            }
            None => {
                self.slots.push(Exch::empty());
                self.slots.len() - 1
            }
        };
        let id = ExchangeId(self.next_id);
        self.next_id += 1;
        (slot, id)
    }

    /// A new live exchange for `owner` to peer `p`, with its Message ID and token, waiting
    /// for the NSTART gate ([`XState::Queued`]); its slot. Inline: once per exchange, where
    /// the call saved and restored registers for more than its stores (issue 35).
    #[inline(always)]
    pub(crate) fn start(
        &mut self,
        owner: Owner,
        peer: usize,
        message_id: u16,
        token: Token,
        confirmable: bool,
    ) -> usize {
        let (slot, id) = self.take();
        let x = &mut self.slots[slot];
        x.id = id;
        x.live = true;
        x.owner = owner;
        x.peer = peer;
        x.message_id = message_id;
        x.token = token;
        x.token_mode = false;
        x.rexmit = None;
        x.confirmable = confirmable;
        x.gated = false;
        x.holds_slot = false;
        x.bytes.clear();
        x.tx_times.clear();
        x.cc = coaplab_cc::Exchange::new();
        x.state = XState::Queued;
        x.deadline = None;
        slot
    }

    /// Frees an exchange slot for reuse (its buffers keep their capacity).
    pub(crate) fn free(&mut self, slot: usize) {
        let x = &mut self.slots[slot];
        debug_assert!(x.live, "exchange slot {slot} freed twice");
        x.live = false;
        x.deadline = None;
        x.state = XState::Done;
        x.next_free = self.free.replace(slot);
    }

    /// The token counter's next value.
    pub(crate) fn next_token(&self) -> u64 {
        self.next_token
    }

    /// A fresh token of `len` bytes, not used by any live exchange to peer `p`.
    #[inline]
    pub(crate) fn alloc_token(&mut self, p: usize, len: usize) -> Token {
        let modulus_bits = 8 * len as u32;
        for _ in 0..1024 {
            let v = self.next_token;
            self.next_token = v.wrapping_add(1);
            let v = if modulus_bits >= 64 {
                v
            } else {
                v & ((1u64 << modulus_bits) - 1)
            };
            let t = Token::from_u64(v, len);
            let clash = self
                .slots
                .iter()
                .any(|x| x.live && x.peer == p && x.token.as_bytes().starts_with(t.as_bytes()));
            if !clash || len == 0 {
                return t;
            }
        }
        Token::from_u64(self.next_token, len)
    }

    /// The token of request `id`'s live exchange.
    pub(crate) fn token_of(&self, requests: &Requests, id: RequestId) -> Option<Token> {
        self.slots.iter().find_map(|x| match x.owner {
            Owner::Request(r) if x.live && requests[r].id == id => Some(x.token),
            _ => None,
        })
    }

    /// The earliest deadline of a live exchange (the retransmission timer).
    #[inline]
    pub(crate) fn next_deadline(&self) -> Option<Instant> {
        self.slots
            .iter()
            .filter(|x| x.live)
            .filter_map(|x| x.deadline)
            .min()
    }

    /// The exchange slot whose deadline is earliest and due at `now`.
    pub(crate) fn next_due(&self, now: Instant) -> Option<usize> {
        self.slots
            .iter()
            .enumerate()
            .filter(|(_, x)| x.live && x.deadline.is_some_and(|d| d <= now))
            .min_by_key(|(_, x)| (x.deadline, x.id))
            .map(|(i, _)| i)
    }

    // ---- the exchanges' life: the NSTART gate, copies, timers, answers ----

    /// The gate admits the exchange: start the algorithm (CON) and send the original.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn admit(
        &mut self,
        config: &Config,
        peers: &mut Peers,
        out: &mut Outputs,
        requests: &Requests,
        now: Instant,
        slot: usize,
        dequeued: bool,
    ) {
        let p = self.slots[slot].peer;
        if self.slots[slot].gated {
            peers[p].in_flight += 1;
            self.slots[slot].holds_slot = true;
        }
        let in_flight = peers[p].in_flight.max(1);
        if self.slots[slot].confirmable {
            peers.ensure_controller(now, p);
            let ctl = peers[p].ctl.as_mut().expect("built above");
            let x = &mut self.slots[slot];
            let t0 = ctl.algorithm.start(
                now,
                Admission {
                    in_flight,
                    dequeued,
                },
                &mut x.cc,
                &mut *ctl.rng,
            );
            x.state = XState::AwaitAck;
            x.deadline = Some(now + t0);
        } else {
            let x = &mut self.slots[slot];
            x.state = XState::AwaitResponse;
            x.deadline = Some(now + config.response_timeout);
        }
        self.send_copy(config, peers, out, requests, now, slot);
    }

    /// Sends the next copy of an exchange: the original, or retransmission j with the
    /// token's last byte set to j in token mode. Inline into its two callers (issue 35: the
    /// call's register saves were ~20 instructions per copy).
    #[inline(always)]
    fn send_copy(
        &mut self,
        config: &Config,
        peers: &mut Peers,
        out: &mut Outputs,
        requests: &Requests,
        now: Instant,
        slot: usize,
    ) {
        let mut contents = out.buffer();
        let x = &mut self.slots[slot];
        let ordinal = x.tx_times.len() as u32;
        x.tx_times.push(now);
        match x.rexmit {
            Some(layout) => layout.write_copy(&x.bytes, ordinal, &mut contents),
            None => contents.extend_from_slice(&x.bytes),
        }
        let tkl = contents.first().map_or(0, |b| (b & 0x0f) as usize);
        if x.token_mode && ordinal > 0 && tkl > 0 && contents.len() >= 4 + tkl {
            contents[4 + tkl - 1] = ordinal.min(255) as u8;
        }
        let destination = peers[x.peer].addr;
        if config.emit_sent_events {
            out.events.push_back(Event::Sent {
                exchange: x.id,
                request: x.request_slot().map(|r| requests[r].id),
                destination,
                ordinal,
                bytes: contents.len(),
                at: now,
            });
        }
        out.transmits.push_back(Transmit {
            destination,
            contents,
            meta: TransmitMeta::Exchange {
                exchange: x.id,
                ordinal,
            },
        });
    }

    /// A deadline of exchange `slot` is due; returns the request (slot) to fail, and why,
    /// when the exchange ended unsuccessfully.
    pub(crate) fn on_deadline(
        &mut self,
        config: &Config,
        peers: &mut Peers,
        out: &mut Outputs,
        requests: &Requests,
        now: Instant,
        slot: usize,
    ) -> Option<(usize, FailReason)> {
        match self.slots[slot].state {
            XState::Delayed => self.admit(config, peers, out, requests, now, slot, false),
            XState::AwaitAck => return self.on_expiry(config, peers, out, requests, now, slot),
            XState::AwaitResponse => {
                let reason = FailReason::ResponseTimeout;
                let r = self.fail_exchange(config, peers, out, requests, now, slot, reason);
                return r.map(|r| (r, reason));
            }
            XState::Queued | XState::Done => self.slots[slot].deadline = None,
        }
        None
    }

    fn on_expiry(
        &mut self,
        config: &Config,
        peers: &mut Peers,
        out: &mut Outputs,
        requests: &Requests,
        now: Instant,
        slot: usize,
    ) -> Option<(usize, FailReason)> {
        let p = self.slots[slot].peer;
        let destination = peers[p].addr;
        let ctl = peers[p]
            .ctl
            .as_mut()
            .expect("a CON in flight has a controller");
        let x = &mut self.slots[slot];
        out.events.push_back(Event::TimerExpired {
            exchange: x.id,
            destination,
            ordinal: x.tx_times.len() as u32 - 1,
            armed: x.cc.timer,
            at: now,
        });
        match ctl.algorithm.expired(now, &mut x.cc, &mut *ctl.rng) {
            Expiry::Retransmit(t) => {
                x.deadline = Some(now + t);
                self.send_copy(config, peers, out, requests, now, slot);
                None
            }
            Expiry::GiveUp => {
                ctl.algorithm.failed(now, &mut x.cc);
                let reason = FailReason::GiveUp;
                let r = self.fail_exchange(config, peers, out, requests, now, slot, reason);
                r.map(|r| (r, reason))
            }
        }
    }

    /// Ends an exchange unsuccessfully; returns its request slot, which fails with it.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn fail_exchange(
        &mut self,
        config: &Config,
        peers: &mut Peers,
        out: &mut Outputs,
        requests: &Requests,
        now: Instant,
        slot: usize,
        reason: FailReason,
    ) -> Option<usize> {
        let x = &self.slots[slot];
        let destination = peers[x.peer].addr;
        let req = x.request_slot();
        out.events.push_back(Event::ExchangeFailed {
            exchange: x.id,
            request: req.map(|r| requests[r].id),
            destination,
            transmissions: x.tx_times.len() as u32,
            reason,
            at: now,
        });
        snapshot_event(config, peers, out, now, x.peer);
        self.release_slot(config, peers, out, requests, now, slot);
        self.free(slot);
        req
    }

    /// The exchange stops counting against NSTART; admit the next queued one. Inline up to
    /// the queue, which a client with one request at a time never uses: the admissions out
    /// of line (issue 35: ~30 instructions per exchange of register saves).
    #[inline]
    pub(crate) fn release_slot(
        &mut self,
        config: &Config,
        peers: &mut Peers,
        out: &mut Outputs,
        requests: &Requests,
        now: Instant,
        slot: usize,
    ) {
        let x = &mut self.slots[slot];
        if !x.holds_slot {
            return;
        }
        x.holds_slot = false;
        let p = x.peer;
        let peer = &mut peers[p];
        peer.in_flight -= 1;
        if !peer.queue.is_empty() {
            self.admit_queued(config, peers, out, requests, now, p);
        }
    }

    /// Admits peer `p`'s queued exchanges while NSTART allows.
    #[inline(never)]
    fn admit_queued(
        &mut self,
        config: &Config,
        peers: &mut Peers,
        out: &mut Outputs,
        requests: &Requests,
        now: Instant,
        p: usize,
    ) {
        while peers[p].in_flight < config.nstart {
            let Some(next) = peers[p].queue.pop_front() else {
                break;
            };
            self.admit(config, peers, out, requests, now, next, true);
        }
    }

    /// Reports the first answer of a CON exchange to the algorithm (docs/algorithms.md,
    /// 'Conventions' `completed`).
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn complete_exchange(
        &mut self,
        config: &Config,
        peers: &mut Peers,
        out: &mut Outputs,
        requests: &Requests,
        now: Instant,
        slot: usize,
        answered: Option<u32>,
        kind: AnswerKind,
    ) {
        let p = self.slots[slot].peer;
        let x = &mut self.slots[slot];
        if x.confirmable {
            if let Some(ctl) = peers[p].ctl.as_mut() {
                let c = Completion {
                    ack_time: now,
                    tx_times: &x.tx_times,
                    answered,
                    timer_in_force: x.cc.timer,
                };
                ctl.algorithm.completed(&c, &mut x.cc, &mut *ctl.rng);
            }
        }
        let request = x.request_slot().map(|r| requests[r].id);
        out.events.push_back(Event::ExchangeCompleted {
            exchange: x.id,
            request,
            destination: peers[p].addr,
            transmissions: x.tx_times.len() as u32,
            rtt: now - x.tx_times[0],
            answered,
            kind,
            at: now,
        });
        snapshot_event(config, peers, out, now, p);
        self.release_slot(config, peers, out, requests, now, slot);
    }

    /// The live exchange to `from` waiting for an ACK of Message ID `mid`.
    pub(crate) fn find_by_mid(&self, peers: &Peers, from: SocketAddr, mid: u16) -> Option<usize> {
        self.slots.iter().position(|x| {
            x.live
                && x.state == XState::AwaitAck
                && x.message_id == mid
                && peers[x.peer].addr == from
        })
    }

    /// An ACK or RST from `from` arrived: the exchange it answers (by Message ID, RFC 7252
    /// §4.2) learns of it; what is left for its request is returned.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn on_ack_or_rst(
        &mut self,
        config: &Config,
        peers: &mut Peers,
        out: &mut Outputs,
        requests: &Requests,
        now: Instant,
        from: SocketAddr,
        msg: &Message<'_>,
    ) -> Answered {
        let Some(slot) = self.find_by_mid(peers, from, msg.message_id) else {
            out.ignore(now, from, IgnoreReason::UnmatchedAck);
            return Answered::Nothing;
        };
        if msg.mtype == MessageType::Rst {
            let p = self.slots[slot].peer;
            if let Some(ctl) = peers[p].ctl.as_mut() {
                ctl.algorithm.failed(now, &mut self.slots[slot].cc);
            }
            let reason = FailReason::Reset;
            return match self.fail_exchange(config, peers, out, requests, now, slot, reason) {
                Some(r) => Answered::Fail(r, reason),
                None => Answered::Nothing,
            };
        }
        if msg.code.is_empty() {
            // §5.2.2: the response will follow separately; the exchange is no longer an
            // outstanding interaction, but its request waits for the response.
            let kind = AnswerKind::EmptyAck;
            self.complete_exchange(config, peers, out, requests, now, slot, None, kind);
            let x = &mut self.slots[slot];
            if x.request_slot().is_some() {
                x.state = XState::AwaitResponse;
                x.deadline = Some(now + config.response_timeout);
            } else {
                self.free(slot);
            }
            return Answered::Nothing;
        }
        if !msg.code.is_response() {
            out.ignore(now, from, IgnoreReason::UnmatchedAck);
            return Answered::Nothing;
        }
        let Some(mut answered) = self.slots[slot].match_token(msg.token) else {
            out.ignore(now, from, IgnoreReason::TokenMismatch);
            return Answered::Nothing;
        };
        if let Some(layout) = self.slots[slot].rexmit {
            // Globecom 2018; draft-ietf-core-fasor-02: the first piggybacked response decides
            // whether the peer echoes.
            let echo = marking::echo(msg, layout.option);
            let peer = &mut peers[self.slots[slot].peer];
            if peer.rexmit == RexmitPeer::Unknown {
                peer.rexmit = if echo.is_some() {
                    RexmitPeer::Enabled
                } else {
                    RexmitPeer::Disabled
                };
            }
            let sent = self.slots[slot].tx_times.len() as u32;
            answered = echo.and_then(|v| marking::answered(v, sent));
        }
        let kind = AnswerKind::Piggybacked;
        self.complete_exchange(config, peers, out, requests, now, slot, answered, kind);
        // §5.4.1: an unrecognised critical option in a piggybacked response rejects it (an
        // ACK is rejected by not using it, §4.2); the server has answered, so the request
        // fails now rather than retransmitting into the same answer.
        self.answer(slot, crate::blockwise::unknown_critical(msg))
    }

    /// The live exchange of a request to `from` that a separate (or NON) response with
    /// `token` answers (RFC 7252 §5.3.2).
    pub(crate) fn find_response(
        &self,
        peers: &Peers,
        from: SocketAddr,
        token: &[u8],
    ) -> Option<usize> {
        self.slots.iter().position(|x| {
            x.live
                && x.request_slot().is_some()
                && matches!(x.state, XState::AwaitAck | XState::AwaitResponse)
                && peers[x.peer].addr == from
                && x.token_matches(token)
        })
    }

    /// A separate (or NON) response answered exchange `slot` (found by
    /// [`Exchanges::find_response`]), carrying the unrecognised critical option `bad` if any;
    /// what is left for its request is returned.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn on_separate_response(
        &mut self,
        config: &Config,
        peers: &mut Peers,
        out: &mut Outputs,
        requests: &Requests,
        now: Instant,
        slot: usize,
        bad: Option<u16>,
    ) -> Answered {
        let x = &self.slots[slot];
        let kind = match (x.state, x.confirmable) {
            // The response overtook the ACK (or the ACK was lost): it acknowledges too.
            (XState::AwaitAck, _) => Some(AnswerKind::SeparateResponse),
            (_, false) => Some(AnswerKind::NonResponse),
            _ => None,
        };
        if let Some(kind) = kind {
            self.complete_exchange(config, peers, out, requests, now, slot, None, kind);
        }
        self.answer(slot, bad)
    }

    /// Exchange `slot` was answered by a response: it ends; its request fails when the
    /// response carries the unrecognised critical option `bad` (RFC 7252 §5.4.1), and takes
    /// the response otherwise.
    fn answer(&mut self, slot: usize, bad: Option<u16>) -> Answered {
        let req = self.slots[slot].request_slot();
        self.free(slot);
        match (req, bad) {
            (None, _) => Answered::Nothing,
            (Some(r), Some(number)) => {
                Answered::Fail(r, FailReason::UnknownCriticalOption { number })
            }
            (Some(r), None) => Answered::Response(r),
        }
    }

    /// Request slot `r` is cancelled: its exchange, if any, stops (a CON in flight is
    /// reported to the algorithm as failed) and leaves the NSTART gate.
    pub(crate) fn cancel(
        &mut self,
        config: &Config,
        peers: &mut Peers,
        out: &mut Outputs,
        requests: &Requests,
        now: Instant,
        r: usize,
    ) {
        let slot = self
            .slots
            .iter()
            .position(|x| x.live && x.request_slot() == Some(r));
        if let Some(slot) = slot {
            let p = self.slots[slot].peer;
            match self.slots[slot].state {
                XState::Queued => peers[p].queue.retain(|&q| q != slot),
                XState::AwaitAck => {
                    if let Some(ctl) = peers[p].ctl.as_mut() {
                        ctl.algorithm.failed(now, &mut self.slots[slot].cc);
                    }
                }
                _ => {}
            }
            self.release_slot(config, peers, out, requests, now, slot);
            self.free(slot);
        }
    }
}

impl Deref for Exchanges {
    type Target = [Exch];
    fn deref(&self) -> &[Exch] {
        &self.slots
    }
}

impl DerefMut for Exchanges {
    fn deref_mut(&mut self) -> &mut [Exch] {
        &mut self.slots
    }
}

/// A snapshot of peer `p`'s algorithm ([`Event::Snapshot`]), with [`Config::emit_snapshots`].
fn snapshot_event(config: &Config, peers: &mut Peers, out: &mut Outputs, now: Instant, p: usize) {
    if !config.emit_snapshots {
        return;
    }
    if let Some(ctl) = &peers[p].ctl {
        out.events.push_back(Event::Snapshot {
            destination: peers[p].addr,
            at: now,
            snapshot: ctl.algorithm.snapshot(),
        });
    }
}
