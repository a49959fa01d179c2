//! The client half of a session: requests we sent and their tokens, Block2 follow-ups
//! (RFC 7959 §2.4; BERT, RFC 8323 §6), our Pings (§5.4) and the observations we hold. The
//! session checks its state first and passes the write queue and event queue in.

use std::collections::VecDeque;

use coaplab_cc::time::Instant;
use coaplab_wire::frame::{Frame, FrameBuf};
use coaplab_wire::option::{number, OptionList, ReadOptions};
use coaplab_wire::signal::{Signal, SignalMessage};
use coaplab_wire::{Block, Token};

use crate::event::RequestId;
use crate::request::Request;
use crate::resource::segments;
use crate::tcp::config::SessionConfig;
use crate::tcp::event::{
    RequestError, SessionEvent, SessionFailReason, StreamIgnoreReason, WriteKind,
};
use crate::tcp::observe::Watches;
use crate::tcp::writes::{Queued, Sink, Writes};

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
    pub(crate) options: OptionList,
    pub(crate) body: Vec<u8>,
    /// Frame bytes of the responses so far.
    pub(crate) frame_bytes: usize,
}

/// The client side of a session: what we asked and still wait for.
#[derive(Debug)]
pub(crate) struct Client {
    outstanding: Vec<Outstanding>,
    /// Our Pings awaiting a Pong: token and send time.
    pings: Vec<(Token, Instant)>,
    next_token: u64,
    next_request_id: u64,
    /// Observations we hold.
    watches: Watches,
}

impl Client {
    /// No request yet; tokens start at `first_token` ([`SessionConfig::first_token`]).
    pub(crate) fn new(first_token: u64) -> Client {
        Client {
            outstanding: Vec::new(),
            pings: Vec::new(),
            next_token: first_token,
            next_request_id: 0,
            watches: Watches::default(),
        }
    }

    /// Requests waiting for a response.
    pub(crate) fn outstanding(&self) -> usize {
        self.outstanding.len()
    }

    /// Observations held.
    pub(crate) fn observations(&self) -> usize {
        self.watches.len()
    }

    /// No request or Ping awaits its answer and no observation is held.
    pub(crate) fn is_idle(&self) -> bool {
        self.watches.is_empty() && self.outstanding.is_empty() && self.pings.is_empty()
    }

    /// A request with a fresh token, or with `deregister`'s: an observation's, for its
    /// deregistration. The frame must fit the peer's `max_frame_bytes`.
    pub(crate) fn send_request(
        &mut self,
        now: Instant,
        request: &Request,
        deregister: Option<Token>,
        config: &SessionConfig,
        sink: Sink<'_>,
    ) -> Result<RequestId, RequestError> {
        let token = match deregister {
            Some(t) => t,
            None => self.alloc_token(config.token_len)?,
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
        if len > sink.max_frame_bytes {
            return Err(RequestError::TooLarge {
                len,
                // The peer's Max-Message-Size, a u32 (RFC 8323 §5.3.1).
                max: sink.max_frame_bytes as u32,
            });
        }
        let mut bytes = sink.writes.buffer();
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
        let follow = config.block_wise_transfer.then(|| {
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
        queue_request(sink, now, request, token, bytes);
        Ok(request)
    }

    /// The request just sent, `id` (a GET with Observe 0, RFC 7641 §3.1), registers an
    /// observation on its token.
    pub(crate) fn watch_last(&mut self, id: RequestId) -> Result<RequestId, RequestError> {
        let Some(token) = self.outstanding.last().map(|o| o.token) else {
            return Err(RequestError::NotOpen);
        };
        self.watches.add(token, id);
        Ok(id)
    }

    /// Forgets the observation started as `request`: its token, for the deregistration
    /// (RFC 7641 §3.6), or `None` when it is no observation held.
    pub(crate) fn unwatch(&mut self, request: RequestId) -> Option<Token> {
        self.watches.cancel(request)
    }

    /// Queues a Ping (RFC 8323 §5.4) with a fresh token; `None` when every token is in use.
    pub(crate) fn ping(
        &mut self,
        now: Instant,
        custody: bool,
        token_len: usize,
        writes: &mut Writes,
    ) -> Option<Token> {
        let token = self.alloc_token(token_len).ok()?;
        self.next_token = self.next_token.wrapping_add(1);
        self.pings.push((token, now));
        let mut ping = SignalMessage::new(Signal::Ping { custody });
        ping.token = token;
        writes.push_signal(&ping);
        Some(token)
    }

    /// A Pong: reported with the round trip of its Ping, or ignored when it answers none.
    pub(crate) fn on_pong(
        &mut self,
        events: &mut VecDeque<SessionEvent>,
        now: Instant,
        token: Token,
        custody: bool,
    ) {
        let Some(i) = self.pings.iter().position(|(t, _)| *t == token) else {
            return ignore(events, now, StreamIgnoreReason::UnmatchedPong);
        };
        let (token, sent) = self.pings.remove(i);
        events.push_back(SessionEvent::PongReceived {
            token,
            custody,
            rtt: now - sent,
            at: now,
        });
    }

    /// A response frame of `len` bytes whose payload is `payload_len` bytes (more than
    /// `frame.payload` when it was counted, not kept), matched by token to a request or an
    /// observation. `Err` names why the session must abort.
    pub(crate) fn on_response(
        &mut self,
        now: Instant,
        frame: &Frame<'_>,
        len: usize,
        payload_len: usize,
        config: &SessionConfig,
        sink: Sink<'_>,
    ) -> Result<(), &'static str> {
        let token = frame.token();
        let Some(i) = self.outstanding.iter().position(|o| o.token == token) else {
            let keep = config.keep_bodies;
            if self
                .watches
                .on_notification(sink.events, keep, now, frame, len, payload_len)
            {
                return Ok(());
            }
            ignore(sink.events, now, StreamIgnoreReason::UnmatchedToken);
            return Ok(());
        };
        if self.outstanding[i].deregistration && frame.has(number::OBSERVE) {
            // A notification sent before the server saw our deregistration (RFC 7641 §3.6).
            ignore(sink.events, now, StreamIgnoreReason::AfterDeregistration);
            return Ok(());
        }
        // RFC 7252 §5.4.1: a response with an unrecognised critical option is rejected.
        if let Some(number) = crate::blockwise::unknown_critical(frame) {
            let o = self.outstanding.remove(i);
            sink.events.push_back(SessionEvent::RequestFailed {
                request: o.request,
                reason: SessionFailReason::UnknownCriticalOption { number },
                at: now,
            });
            return Ok(());
        }
        // RFC 7959 §4: Size2 announces the whole body; refuse it before asking for more.
        let announced = crate::blockwise::announced_size2(frame);
        let so_far = self.outstanding[i]
            .follow
            .as_ref()
            .map_or(0, |f| f.body.len());
        let limit = config.max_body_bytes;
        if announced > limit as u64 || so_far + payload_len > limit {
            let o = self.outstanding.remove(i);
            sink.events.push_back(SessionEvent::RequestFailed {
                request: o.request,
                reason: SessionFailReason::BodyTooLarge,
                at: now,
            });
            return Ok(());
        }
        let block2 = frame
            .options
            .iter()
            .find(|(n, _)| *n == number::BLOCK2)
            .map(|(_, v)| v);
        if let (Some(v), true) = (block2, frame.code.class() == 2) {
            if self.outstanding[i].follow.is_some() {
                return self.on_block2(now, frame, len, i, v, config, sink);
            }
        }
        let o = self.outstanding.remove(i);
        self.watches.registration_answered(o.request, frame);
        let (body, options) = if config.keep_bodies {
            (frame.payload.to_vec(), frame.options.into())
        } else {
            (Vec::new(), OptionList::new())
        };
        sink.events.push_back(SessionEvent::RequestCompleted {
            request: o.request,
            code: frame.code,
            body_len: payload_len,
            body,
            options,
            bytes: len,
            started: o.started,
            at: now,
        });
        Ok(())
    }

    /// One block of a block-wise response (RFC 7959 §2.4; BERT, RFC 8323 §6): appended to
    /// the body, then the next block is asked for with the request's options and the same
    /// token, or the request completes with the whole body.
    #[allow(clippy::too_many_arguments)] // the frame's parts and the session's, split
    fn on_block2(
        &mut self,
        now: Instant,
        frame: &Frame<'_>,
        len: usize,
        i: usize,
        value: &[u8],
        config: &SessionConfig,
        sink: Sink<'_>,
    ) -> Result<(), &'static str> {
        let o = &mut self.outstanding[i];
        let Some(f) = o.follow.as_mut() else {
            return Ok(());
        };
        let block = match Block::decode(value) {
            Ok(b) if b.offset_bytes() == f.body.len() => b,
            // A block we did not ask for: the body cannot be put together.
            _ => return Err("Block2 out of sequence"),
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
                return Err("Block2 follow-up unencodable");
            };
            queue_request(sink, now, request, token, bytes);
            return Ok(());
        }
        let o = self.outstanding.remove(i);
        let Some(f) = o.follow else {
            return Ok(());
        };
        let body_len = f.body.len();
        let (body, options) = if config.keep_bodies {
            (f.body, frame.options.into())
        } else {
            (Vec::new(), OptionList::new())
        };
        sink.events.push_back(SessionEvent::RequestCompleted {
            request: o.request,
            code: frame.code,
            body_len,
            body,
            options,
            bytes: f.frame_bytes,
            started: o.started,
            at: now,
        });
        Ok(())
    }

    /// The session ended: Pings and observations are forgotten, every outstanding request
    /// fails with `reason`.
    pub(crate) fn end(
        &mut self,
        events: &mut VecDeque<SessionEvent>,
        now: Instant,
        reason: SessionFailReason,
    ) {
        self.pings.clear();
        self.watches.clear();
        for o in self.outstanding.drain(..) {
            events.push_back(SessionEvent::RequestFailed {
                request: o.request,
                reason,
                at: now,
            });
        }
    }

    /// A token of `len` bytes not used by an outstanding request, a Ping or an observation.
    fn alloc_token(&mut self, len: usize) -> Result<Token, RequestError> {
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
}

/// Queues the encoded request `bytes` for writing and reports it sent.
fn queue_request(sink: Sink<'_>, now: Instant, request: RequestId, token: Token, bytes: Vec<u8>) {
    sink.events.push_back(SessionEvent::RequestSent {
        request,
        token,
        bytes: bytes.len(),
        at: now,
    });
    sink.writes.push(Queued {
        bytes,
        tail: None,
        kind: WriteKind::Request(request),
        notification: None,
    });
}

fn ignore(events: &mut VecDeque<SessionEvent>, now: Instant, reason: StreamIgnoreReason) {
    events.push_back(SessionEvent::Ignored { reason, at: now });
}
