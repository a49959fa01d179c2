//! The receiving side of the client: matching ACKs, RSTs and responses to exchanges
//! (Message ID for ACK/RST, token for responses, RFC 7252 §4.2, §5.3.2), reading the copy a
//! response names (FASOR+token, Rexmit-Cnt), and handing responses to their requests.

use std::net::SocketAddr;

use coaplab_cc::time::Instant;
use coaplab_wire::option::OptionList;
use coaplab_wire::{Message, MessageType};

use crate::endpoint::Endpoint;
use crate::event::{AnswerKind, Event, FailReason, IgnoreReason};
use crate::exchange::{Exch, XState};
use crate::marking::{self, RexmitPeer};

impl Endpoint {
    /// The live exchange to `from` waiting for an ACK of Message ID `mid`.
    fn find_by_mid(&self, from: SocketAddr, mid: u16) -> Option<usize> {
        self.exchanges.iter().position(|x| {
            x.live
                && x.state == XState::AwaitAck
                && x.message_id == mid
                && self.peers[x.peer].addr == from
        })
    }

    /// An ACK or RST arrived.
    pub(crate) fn on_ack_or_rst(&mut self, now: Instant, from: SocketAddr, msg: &Message<'_>) {
        if !self.observers.is_empty()
            && msg.code.is_empty()
            && self.observers.on_ack_or_rst(
                self.router.notify.timer,
                &mut self.peers,
                &mut self.out,
                now,
                from,
                msg.message_id,
                msg.mtype == MessageType::Rst,
            )
        {
            return;
        }
        let Some(slot) = self.find_by_mid(from, msg.message_id) else {
            self.out.ignore(now, from, IgnoreReason::UnmatchedAck);
            return;
        };
        if msg.mtype == MessageType::Rst {
            let p = self.exchanges[slot].peer;
            if let Some(ctl) = self.peers[p].ctl.as_mut() {
                ctl.algorithm.failed(now, &mut self.exchanges[slot].cc);
            }
            self.fail_exchange(now, slot, FailReason::Reset);
            return;
        }
        if msg.code.is_empty() {
            // §5.2.2: the response will follow separately; the exchange is no longer an
            // outstanding interaction, but its request waits for the response.
            self.complete_exchange(now, slot, None, AnswerKind::EmptyAck);
            let x = &mut self.exchanges[slot];
            if x.request_slot().is_some() {
                x.state = XState::AwaitResponse;
                x.deadline = Some(now + self.config.response_timeout);
            } else {
                self.exchanges.free(slot);
            }
            return;
        }
        if !msg.code.is_response() {
            self.out.ignore(now, from, IgnoreReason::UnmatchedAck);
            return;
        }
        let Some(mut answered) = self.match_token(slot, msg.token) else {
            self.out.ignore(now, from, IgnoreReason::TokenMismatch);
            return;
        };
        if let Some(layout) = self.exchanges[slot].rexmit {
            // Globecom 2018; draft-ietf-core-fasor-02: the first piggybacked response decides
            // whether the peer echoes.
            let echo = marking::echo(msg, layout.option);
            let peer = &mut self.peers[self.exchanges[slot].peer];
            if peer.rexmit == RexmitPeer::Unknown {
                peer.rexmit = if echo.is_some() {
                    RexmitPeer::Enabled
                } else {
                    RexmitPeer::Disabled
                };
            }
            let sent = self.exchanges[slot].tx_times.len() as u32;
            answered = echo.and_then(|v| marking::answered(v, sent));
        }
        self.complete_exchange(now, slot, answered, AnswerKind::Piggybacked);
        // §5.4.1: an unrecognised critical option in a piggybacked response rejects it (an
        // ACK is rejected by not using it, §4.2); the server has answered, so the request
        // fails now rather than retransmitting into the same answer.
        if let Some(number) = crate::blockwise::unknown_critical(msg) {
            return self.refuse_response(now, slot, number);
        }
        self.deliver(now, slot, msg);
    }

    /// The response to exchange `slot` carries the unrecognised critical option `number`:
    /// the exchange ends and its request fails ([`FailReason::UnknownCriticalOption`]).
    fn refuse_response(&mut self, now: Instant, slot: usize, number: u16) {
        let req = self.exchanges[slot].request_slot();
        self.exchanges.free(slot);
        if let Some(r) = req {
            self.fail_request(now, r, FailReason::UnknownCriticalOption { number });
        }
    }

    /// Checks a piggybacked response's token; `Some(answered)` when it matches. In token mode
    /// the echoed last byte names the copy answered (Globecom 2018; draft-ietf-core-fasor-02).
    fn match_token(&self, slot: usize, token: &[u8]) -> Option<Option<u32>> {
        let x = &self.exchanges[slot];
        let ours = x.token.as_bytes();
        if !x.token_mode {
            return (token == ours).then_some(None);
        }
        let base = &ours[..ours.len() - 1];
        if token.len() != ours.len() || !token.starts_with(base) {
            return None;
        }
        let j = token[token.len() - 1] as u32;
        let sent = x.tx_times.len() as u32;
        (j < sent).then_some(Some(j))
    }

    /// A CON or NON response arrived outside an ACK (separate response, or the answer to a
    /// NON request).
    pub(crate) fn on_separate_response(
        &mut self,
        now: Instant,
        from: SocketAddr,
        msg: &Message<'_>,
    ) {
        // A duplicate response is answered by a cached empty ACK (4 B): never an amplifier.
        if self.replay_duplicate(now, from, msg, 0) {
            return;
        }
        let con = msg.mtype == MessageType::Con;
        let found = self.exchanges.iter().position(|x| {
            x.live
                && x.request_slot().is_some()
                && matches!(x.state, XState::AwaitAck | XState::AwaitResponse)
                && self.peers[x.peer].addr == from
                && token_matches(x, msg.token)
        });
        let Some(slot) = found else {
            if !self.observations.is_empty()
                && self
                    .observations
                    .on_notification(&mut self.out, &mut self.dedup, now, from, msg)
            {
                return;
            }
            if con {
                // §4.2: a CON we cannot process (an unexpected response) is rejected.
                self.out.reject(&mut self.dedup, now, from, msg.message_id);
            } else {
                self.dedup.remember_unanswered(now, from, msg.message_id);
                self.out.ignore(now, from, IgnoreReason::UnmatchedNon);
            }
            return;
        };
        let bad = crate::blockwise::unknown_critical(msg);
        match (con, bad) {
            // §5.4.1, §4.2: a CON response with an unrecognised critical option is rejected.
            (true, Some(_)) => self.out.reject(&mut self.dedup, now, from, msg.message_id),
            (true, None) => {
                self.out
                    .send_empty(&mut self.dedup, now, from, MessageType::Ack, msg.message_id)
            }
            (false, _) => self.dedup.remember_unanswered(now, from, msg.message_id),
        }
        let x = &self.exchanges[slot];
        match (x.state, x.confirmable) {
            // The response overtook the ACK (or the ACK was lost): it acknowledges too.
            (XState::AwaitAck, _) => {
                self.complete_exchange(now, slot, None, AnswerKind::SeparateResponse)
            }
            (_, false) => self.complete_exchange(now, slot, None, AnswerKind::NonResponse),
            _ => {}
        }
        if let Some(number) = bad {
            return self.refuse_response(now, slot, number);
        }
        self.deliver(now, slot, msg);
    }

    /// A response for exchange `slot` arrived: free the exchange and move its request on.
    fn deliver(&mut self, now: Instant, slot: usize, msg: &Message<'_>) {
        let req = self.exchanges[slot].request_slot();
        self.exchanges.free(slot);
        if let Some(r) = req {
            self.on_response(now, r, msg);
        }
    }

    /// Completes request `r` with `code`.
    pub(crate) fn complete_request(&mut self, now: Instant, r: usize, msg: &Message<'_>) {
        let code = msg.code;
        // An observation's registration answered (RFC 7641 §3.1): keep its number, or forget
        // it when the server did not register it; a re-registration's answer is a notification.
        let id = self.requests[r].id;
        if !self.observations.is_empty()
            && self.observations.on_response(&mut self.out, now, id, msg)
        {
            let req = &mut self.requests[r];
            req.live = false;
            req.body.clear();
            self.requests.release(r);
            return;
        }
        let req = &mut self.requests[r];
        req.live = false;
        let (body, options) = if self.config.keep_bodies {
            (std::mem::take(&mut req.body), msg.options.into())
        } else {
            (Vec::new(), OptionList::new())
        };
        self.out.events.push_back(Event::RequestCompleted {
            request: req.id,
            destination: self.peers[req.peer].addr,
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
}

/// Whether a separate response's token belongs to exchange `x` (token mode: any ordinal).
fn token_matches(x: &Exch, token: &[u8]) -> bool {
    let ours = x.token.as_bytes();
    if x.token_mode {
        token.len() == ours.len() && token.starts_with(&ours[..ours.len() - 1])
    } else {
        token == ours
    }
}
