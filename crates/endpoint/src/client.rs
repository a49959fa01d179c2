//! The sending side: requests, their exchanges, the NSTART gate, retransmission under the
//! destination's RTO algorithm, and the matching of ACKs, RSTs and responses
//! (RFC 7252 §4–5). Block-wise continuation lives in [`crate::blockwise`].

use std::net::SocketAddr;

use coaplab_cc::time::Instant;
use coaplab_cc::{Admission, Completion, Expiry};
use coaplab_wire::Token;

use crate::controller::Marking;
use crate::endpoint::Endpoint;
use crate::event::{AnswerKind, Event, FailReason, RequestId, Transmit, TransmitMeta};
use crate::exchange::{Owner, XState};
use crate::marking::{RexmitLayout, RexmitPeer};
use crate::message_ids::Gate;
use crate::request::Request;

impl Endpoint {
    pub(crate) fn start_request(
        &mut self,
        now: Instant,
        destination: SocketAddr,
        request: &Request,
        fixed_token: Option<coaplab_wire::Token>,
    ) -> RequestId {
        let p = self.peers.slot(destination);
        let (slot, id) = self.requests.take();
        let block = self.config.block_size_bytes;
        let r = &mut self.requests[slot];
        r.id = id;
        r.live = true;
        r.peer = p;
        r.take_request(request);
        r.confirmable = request.confirmable;
        r.started = now;
        r.exchanges = 0;
        r.uploading = request.payload.len() > block;
        r.b1_offset = 0;
        r.b1_size = block;
        r.b2_next = None;
        r.body.clear();
        r.body_len = 0;
        r.echo.clear();
        r.echo_retries = 0;
        r.fixed_token = fixed_token;
        if let Some(size) = self.config.request_block2_size_bytes {
            r.b2_next = coaplab_wire::Block::with_size(0, false, size);
        }
        self.next_exchange(now, slot);
        id
    }

    /// Creates the request's next exchange (its first message or next block) and passes it
    /// to the NSTART gate.
    pub(crate) fn next_exchange(&mut self, now: Instant, req: usize) {
        // RFC 7252 §4.4: no Message ID is reused within its lifetime; wait for one, in order.
        if let Gate::Stall { until, first } = self.message_ids.gate(now, req) {
            if first {
                self.out
                    .events
                    .push_back(Event::MessageIdsExhausted { until, at: now });
            }
            return;
        }
        let p = self.requests[req].peer;
        let confirmable = self.requests[req].confirmable;
        let marking = if confirmable {
            self.peers.ensure_controller(now, p).marking
        } else {
            Marking::Off
        };
        let token_mode = marking == Marking::Token;
        let len = self.config.token_len_bytes as usize;
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
        let mid = self.alloc_message_id(now);
        let slot = self.alloc_exchange(Owner::Request(req), p, mid, token, confirmable);
        self.exchanges[slot].token_mode = token_mode;
        self.exchanges[slot].gated = true;
        self.requests[req].exchanges += 1;
        let mut bytes = std::mem::take(&mut self.exchanges[slot].bytes);
        crate::blockwise::encode_request_reusing(&mut self.requests[req], mid, token, &mut bytes);
        let unencodable = bytes.is_empty();
        if let Marking::RexmitCnt { option } = marking {
            let probe = match self.peers[p].rexmit {
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
            self.fail_request(now, req, FailReason::Unencodable);
            return;
        }
        let peer = &mut self.peers[p];
        if peer.in_flight < self.config.nstart {
            self.admit(now, slot, false);
        } else {
            self.exchanges[slot].state = XState::Queued;
            peer.queue.push_back(slot);
        }
    }

    pub(crate) fn alloc_exchange(
        &mut self,
        owner: Owner,
        peer: usize,
        message_id: u16,
        token: Token,
        confirmable: bool,
    ) -> usize {
        let (slot, id) = self.exchanges.take();
        let x = &mut self.exchanges[slot];
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

    /// The gate admits the exchange: start the algorithm (CON) and send the original.
    pub(crate) fn admit(&mut self, now: Instant, slot: usize, dequeued: bool) {
        let p = self.exchanges[slot].peer;
        if self.exchanges[slot].gated {
            self.peers[p].in_flight += 1;
            self.exchanges[slot].holds_slot = true;
        }
        let in_flight = self.peers[p].in_flight.max(1);
        if self.exchanges[slot].confirmable {
            self.peers.ensure_controller(now, p);
            let ctl = self.peers[p].ctl.as_mut().expect("built above");
            let x = &mut self.exchanges[slot];
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
            let x = &mut self.exchanges[slot];
            x.state = XState::AwaitResponse;
            x.deadline = Some(now + self.config.response_timeout);
        }
        self.send_copy(now, slot);
    }

    /// Sends the next copy of an exchange: the original, or retransmission j with the
    /// token's last byte set to j in token mode.
    fn send_copy(&mut self, now: Instant, slot: usize) {
        let mut contents = self.out.buffer();
        let x = &mut self.exchanges[slot];
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
        let destination = self.peers[x.peer].addr;
        let request = x.request_slot().map(|r| self.requests[r].id);
        self.out.events.push_back(Event::Sent {
            exchange: x.id,
            request,
            destination,
            ordinal,
            bytes: contents.len(),
            at: now,
        });
        self.out.transmits.push_back(Transmit {
            destination,
            contents,
            meta: TransmitMeta::Exchange {
                exchange: x.id,
                ordinal,
            },
        });
    }

    /// A deadline of exchange `slot` is due.
    pub(crate) fn on_deadline(&mut self, now: Instant, slot: usize) {
        match self.exchanges[slot].state {
            XState::Delayed => self.admit(now, slot, false),
            XState::AwaitAck => self.on_expiry(now, slot),
            XState::AwaitResponse => self.fail_exchange(now, slot, FailReason::ResponseTimeout),
            XState::Queued | XState::Done => self.exchanges[slot].deadline = None,
        }
    }

    fn on_expiry(&mut self, now: Instant, slot: usize) {
        let p = self.exchanges[slot].peer;
        let destination = self.peers[p].addr;
        let ctl = self.peers[p]
            .ctl
            .as_mut()
            .expect("a CON in flight has a controller");
        let x = &mut self.exchanges[slot];
        self.out.events.push_back(Event::TimerExpired {
            exchange: x.id,
            destination,
            ordinal: x.tx_times.len() as u32 - 1,
            armed: x.cc.timer,
            at: now,
        });
        match ctl.algorithm.expired(now, &mut x.cc, &mut *ctl.rng) {
            Expiry::Retransmit(t) => {
                x.deadline = Some(now + t);
                self.send_copy(now, slot);
            }
            Expiry::GiveUp => {
                ctl.algorithm.failed(now, &mut x.cc);
                self.fail_exchange(now, slot, FailReason::GiveUp);
            }
        }
    }

    pub(crate) fn cancel_request(&mut self, now: Instant, request: RequestId) -> bool {
        let Some(r) = self.requests.iter().position(|q| q.live && q.id == request) else {
            return false;
        };
        // Its slot may be reused at once: it must not stay in line for a Message ID.
        self.message_ids.forget(r);
        let slot = self
            .exchanges
            .iter()
            .position(|x| x.live && x.request_slot() == Some(r));
        if let Some(slot) = slot {
            let p = self.exchanges[slot].peer;
            match self.exchanges[slot].state {
                XState::Queued => self.peers[p].queue.retain(|&q| q != slot),
                XState::AwaitAck => {
                    if let Some(ctl) = self.peers[p].ctl.as_mut() {
                        ctl.algorithm.failed(now, &mut self.exchanges[slot].cc);
                    }
                }
                _ => {}
            }
            self.release_slot(now, slot);
            self.exchanges.free(slot);
        }
        self.fail_request(now, r, FailReason::Cancelled);
        true
    }

    /// Ends an exchange unsuccessfully, and its request with it.
    pub(crate) fn fail_exchange(&mut self, now: Instant, slot: usize, reason: FailReason) {
        let x = &self.exchanges[slot];
        let destination = self.peers[x.peer].addr;
        let req = x.request_slot();
        self.out.events.push_back(Event::ExchangeFailed {
            exchange: x.id,
            request: req.map(|r| self.requests[r].id),
            destination,
            transmissions: x.tx_times.len() as u32,
            reason,
            at: now,
        });
        self.snapshot_event(now, x.peer);
        self.release_slot(now, slot);
        self.exchanges.free(slot);
        if let Some(r) = req {
            self.fail_request(now, r, reason);
        }
    }

    pub(crate) fn fail_request(&mut self, now: Instant, r: usize, reason: FailReason) {
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
        self.out.events.push_back(Event::RequestFailed {
            request: id,
            destination: self.peers[req.peer].addr,
            reason,
            at: now,
        });
        self.requests.release(r);
    }

    /// The exchange stops counting against NSTART; admit the next queued one.
    pub(crate) fn release_slot(&mut self, now: Instant, slot: usize) {
        let x = &mut self.exchanges[slot];
        if !x.holds_slot {
            return;
        }
        x.holds_slot = false;
        let p = x.peer;
        self.peers[p].in_flight -= 1;
        while self.peers[p].in_flight < self.config.nstart {
            let Some(next) = self.peers[p].queue.pop_front() else {
                break;
            };
            self.admit(now, next, true);
        }
    }

    fn snapshot_event(&mut self, now: Instant, p: usize) {
        if !self.config.emit_snapshots {
            return;
        }
        if let Some(ctl) = &self.peers[p].ctl {
            self.out.events.push_back(Event::Snapshot {
                destination: self.peers[p].addr,
                at: now,
                snapshot: ctl.algorithm.snapshot(),
            });
        }
    }

    /// Reports the first answer of a CON exchange to the algorithm (docs/algorithms.md,
    /// 'Conventions' `completed`).
    pub(crate) fn complete_exchange(
        &mut self,
        now: Instant,
        slot: usize,
        answered: Option<u32>,
        kind: AnswerKind,
    ) {
        let p = self.exchanges[slot].peer;
        let x = &mut self.exchanges[slot];
        if x.confirmable {
            if let Some(ctl) = self.peers[p].ctl.as_mut() {
                let c = Completion {
                    ack_time: now,
                    tx_times: &x.tx_times,
                    answered,
                    timer_in_force: x.cc.timer,
                };
                ctl.algorithm.completed(&c, &mut x.cc, &mut *ctl.rng);
            }
        }
        let request = x.request_slot().map(|r| self.requests[r].id);
        self.out.events.push_back(Event::ExchangeCompleted {
            exchange: x.id,
            request,
            destination: self.peers[p].addr,
            transmissions: x.tx_times.len() as u32,
            rtt: now - x.tx_times[0],
            answered,
            kind,
            at: now,
        });
        self.snapshot_event(now, p);
        self.release_slot(now, slot);
    }
}
