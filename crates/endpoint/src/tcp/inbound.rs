//! Received frames: the CSM rules of RFC 8323 §5.3, the other signals (§5.4–5.6) and
//! responses matched by token (followed block by block when the peer sends Block2 and
//! `block_wise_transfer` is on). Requests go to `serve.rs`.

use coaplab_cc::time::Instant;
use coaplab_wire::frame::{Frame, FrameBuf};
use coaplab_wire::option::{number, OptionList};
use coaplab_wire::signal::{Signal, SignalError, SignalMessage};
use coaplab_wire::{Block, Code, DecodeError, ReadOptions};

use crate::tcp::event::{SessionEvent, SessionFailReason, Side, StreamIgnoreReason};
use crate::tcp::session::{Session, State};

impl Session {
    /// One complete frame of `len` bytes whose payload is `payload_len` bytes: `frame.payload`'s
    /// length, or more for a response whose payload was counted, not kept
    /// ([`crate::tcp::SessionConfig::keep_bodies`] off), and handed in empty.
    pub(crate) fn on_frame(
        &mut self,
        now: Instant,
        frame: &Frame<'_>,
        len: usize,
        payload_len: usize,
    ) {
        if !self.csm_received && frame.code != Code::CSM {
            // RFC 8323 §5.3: "Missing or invalid CSMs result in the connection being aborted."
            return self.abort(now, None, "the first message must be a CSM");
        }
        let code = frame.code;
        if code.is_signal() {
            return self.on_signal(now, frame);
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
            return self.on_response(now, frame, len, payload_len);
        }
        self.ignore(now, StreamIgnoreReason::ReservedCode);
    }

    fn on_response(&mut self, now: Instant, frame: &Frame<'_>, len: usize, payload_len: usize) {
        let token = frame.token();
        let Some(i) = self.outstanding.iter().position(|o| o.token == token) else {
            let keep = self.config.keep_bodies;
            if self
                .watches
                .on_notification(&mut self.events, keep, now, frame, len, payload_len)
            {
                return;
            }
            return self.ignore(now, StreamIgnoreReason::UnmatchedToken);
        };
        if self.outstanding[i].deregistration && frame.has(number::OBSERVE) {
            // A notification sent before the server saw our deregistration (RFC 7641 §3.6).
            return self.ignore(now, StreamIgnoreReason::AfterDeregistration);
        }
        // RFC 7252 §5.4.1: a response with an unrecognised critical option is rejected.
        if let Some(number) = crate::blockwise::unknown_critical(frame) {
            let o = self.outstanding.remove(i);
            self.events.push_back(SessionEvent::RequestFailed {
                request: o.request,
                reason: SessionFailReason::UnknownCriticalOption { number },
                at: now,
            });
            return;
        }
        // RFC 7959 §4: Size2 announces the whole body; refuse it before asking for more.
        let announced = crate::blockwise::announced_size2(frame);
        let so_far = self.outstanding[i]
            .follow
            .as_ref()
            .map_or(0, |f| f.body.len());
        let limit = self.config.max_body_bytes;
        if announced > limit as u64 || so_far + payload_len > limit {
            let o = self.outstanding.remove(i);
            self.events.push_back(SessionEvent::RequestFailed {
                request: o.request,
                reason: SessionFailReason::BodyTooLarge,
                at: now,
            });
            return;
        }
        let block2 = frame
            .options
            .iter()
            .find(|(n, _)| *n == number::BLOCK2)
            .map(|(_, v)| v);
        if let (Some(v), true) = (block2, frame.code.class() == 2) {
            if self.outstanding[i].follow.is_some() {
                return self.on_block2(now, frame, len, i, v);
            }
        }
        let o = self.outstanding.remove(i);
        self.watches.registration_answered(o.request, frame);
        let (body, options) = if self.config.keep_bodies {
            (frame.payload.to_vec(), frame.options.into())
        } else {
            (Vec::new(), OptionList::new())
        };
        self.events.push_back(SessionEvent::RequestCompleted {
            request: o.request,
            code: frame.code,
            body_len: payload_len,
            body,
            options,
            bytes: len,
            started: o.started,
            at: now,
        });
    }

    /// One block of a block-wise response (RFC 7959 §2.4; BERT, RFC 8323 §6): appended to
    /// the body, then the next block is asked for with the request's options and the same
    /// token, or the request completes with the whole body.
    fn on_block2(&mut self, now: Instant, frame: &Frame<'_>, len: usize, i: usize, value: &[u8]) {
        let o = &mut self.outstanding[i];
        let Some(f) = o.follow.as_mut() else {
            return;
        };
        let block = match Block::decode(value) {
            Ok(b) if b.offset_bytes() == f.body.len() => b,
            // A block we did not ask for: the body cannot be put together.
            _ => return self.abort(now, None, "Block2 out of sequence"),
        };
        f.body.extend_from_slice(frame.payload);
        f.frame_bytes += len;
        if block.more {
            let next = Block {
                num: (f.body.len() / block.size_bytes()) as u32,
                more: false,
                szx: block.szx,
            };
            let mut req = FrameBuf::new(f.method, o.token);
            req.options = f.options.clone();
            req.options.push_block(number::BLOCK2, next);
            let (request, token) = (o.request, o.token);
            let Ok(bytes) = req.to_bytes() else {
                return self.abort(now, None, "Block2 follow-up unencodable");
            };
            self.queue_request(now, request, token, bytes);
            return;
        }
        let o = self.outstanding.remove(i);
        let Some(f) = o.follow else {
            return;
        };
        let body_len = f.body.len();
        let (body, options) = if self.config.keep_bodies {
            (f.body, frame.options.into())
        } else {
            (Vec::new(), OptionList::new())
        };
        self.events.push_back(SessionEvent::RequestCompleted {
            request: o.request,
            code: frame.code,
            body_len,
            body,
            options,
            bytes: f.frame_bytes,
            started: o.started,
            at: now,
        });
    }

    fn on_signal(&mut self, now: Instant, frame: &Frame<'_>) {
        let msg = match SignalMessage::from_frame(frame) {
            Ok(m) => m,
            Err(SignalError::UnknownSignal(_)) => {
                return self.ignore(now, StreamIgnoreReason::UnknownSignal)
            }
            Err(SignalError::BadOption { number, .. }) if frame.code == Code::CSM => {
                return self.abort(now, Some(number), "bad CSM option value");
            }
            Err(SignalError::BadOption { .. }) if frame.code == Code::ABORT => {
                // An Abort ends the session whatever its options say.
                return self.peer_abort(now, None, frame.payload);
            }
            Err(SignalError::BadOption { .. }) => {
                return self.abort(now, None, "bad signalling option value");
            }
        };
        if let (Some(n), Signal::Csm { .. }) = (msg.unknown_critical, &msg.signal) {
            // RFC 8323 §5.3: an unknown critical CSM option aborts, naming it.
            return self.abort(now, Some(n), "unknown critical CSM option");
        }
        if msg.unknown_critical.is_some() && !matches!(msg.signal, Signal::Abort { .. }) {
            return self.abort(now, None, "unknown critical signalling option");
        }
        match msg.signal {
            Signal::Csm {
                max_message_size,
                block_wise_transfer,
            } => {
                self.csm_received = true;
                if let Some(m) = max_message_size {
                    self.peer_max_message_size = m;
                }
                self.events.push_back(SessionEvent::CsmReceived {
                    max_message_size: self.peer_max_message_size,
                    block_wise_transfer,
                    at: now,
                });
            }
            Signal::Ping { custody } => {
                // §5.4: the Pong echoes the token (and Custody); everything before the Ping
                // is already processed, since handling takes no time.
                let mut pong = SignalMessage::new(Signal::Pong { custody });
                pong.token = msg.token;
                self.queue_signal(&pong);
                self.events.push_back(SessionEvent::PingAnswered {
                    token: msg.token,
                    custody,
                    at: now,
                });
            }
            Signal::Pong { custody } => {
                let Some(i) = self.pings.iter().position(|(t, _)| *t == msg.token) else {
                    return self.ignore(now, StreamIgnoreReason::UnmatchedPong);
                };
                let (token, sent) = self.pings.remove(i);
                self.events.push_back(SessionEvent::PongReceived {
                    token,
                    custody,
                    rtt: now - sent,
                    at: now,
                });
            }
            Signal::Release {
                alternative_addresses,
                hold_off_s,
            } => {
                self.peer_released = true;
                self.events.push_back(SessionEvent::ReleaseReceived {
                    alternative_addresses,
                    hold_off_s,
                    at: now,
                });
            }
            Signal::Abort { bad_csm_option } => self.peer_abort(now, bad_csm_option, frame.payload),
        }
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
    pub(crate) fn abort(&mut self, now: Instant, bad_csm_option: Option<u16>, diagnostic: &str) {
        let mut msg = SignalMessage::new(Signal::Abort { bad_csm_option });
        msg.diagnostic = diagnostic.as_bytes().to_vec();
        self.queue_signal(&msg);
        self.end(now, SessionFailReason::Aborted(Side::Local));
        self.events.push_back(SessionEvent::Aborted {
            by: Side::Local,
            bad_csm_option,
            diagnostic: diagnostic.to_owned(),
            at: now,
        });
    }

    /// Bytes that cannot be a frame: the stream cannot be resynchronised, so abort.
    pub(crate) fn malformed(&mut self, now: Instant, error: DecodeError) {
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
