//! The serving side of a session: a request is routed to a [`crate::Resource`] of the same
//! [`crate::Router`] the UDP server uses and answered at once, as one frame however large
//! (no block-wise: docs/experiments.md §5.1 sends the 102,400-B object as one 102,408-B
//! message). A body given as bytes (an echo, fixed content) is copied into the frame; a
//! generated one is never materialised apart (below). A Block1 upload (BERT included) is
//! reassembled first.
//!
//! Limits are checked before a body is produced: a frame larger than the peer's
//! Max-Message-Size becomes an empty 5.00, one that would hold more in the write queue than
//! [`crate::tcp::SessionConfig::max_queued_bytes`] allows an empty 5.03. A generated body
//! (`data/N`, fixed replies) is queued as a description and produced while it is written
//! ([`crate::tcp::Session::poll_write_chunk`]).

use std::collections::VecDeque;

use coaplab_cc::time::Instant;
use coaplab_wire::frame::Frame;
use coaplab_wire::option::number;
use coaplab_wire::{Block, Code, ReadOptions};

use crate::media;
use crate::request_options;
use crate::resource::{Action, Body, Router};
use crate::tcp::event::{SessionEvent, WriteKind};
use crate::tcp::observe::Observers;
use crate::tcp::response::{encode_response, Extra, Refusal, Response};
use crate::tcp::writes::{Queued, Sink};
use crate::uploads::MAX_UPLOAD_BYTES;

/// Request options this server understands (RFC 7252 §5.4.1). Block1 is reassembled
/// (`Server::upload`); Block2 is not among them (every answer is one message), so a request
/// carrying it gets 4.02. Accept, Proxy-Uri and Proxy-Scheme are handled by the check shared
/// with the UDP server (`crate::request_options`).
fn known_critical(n: u16) -> bool {
    matches!(
        n,
        number::BLOCK1
            | number::URI_HOST
            | number::URI_PORT
            | number::URI_PATH
            | number::URI_QUERY
            | number::IF_MATCH
            | number::IF_NONE_MATCH
    )
}

/// A Block1 upload being reassembled: the request's method, Uri-Path and Uri-Query options
/// (its key) and the body so far.
#[derive(Debug, Clone)]
struct Upload {
    key: Vec<u8>,
    body: Vec<u8>,
}

/// Block1 uploads reassembled at once per session.
const MAX_UPLOADS: usize = 4;

/// The serving side of a session.
#[derive(Debug)]
pub(crate) struct Server {
    /// The resources served.
    router: Router,
    /// Block1 uploads being reassembled (at most [`MAX_UPLOADS`], oldest dropped first).
    uploads: Vec<Upload>,
    /// Observers of the observable resources (RFC 8323 §7).
    observers: Observers,
}

impl Server {
    /// Serving `router`'s resources.
    pub(crate) fn new(router: Router) -> Server {
        Server {
            router,
            uploads: Vec::new(),
            observers: Observers::default(),
        }
    }

    /// The resources served.
    pub(crate) fn router_mut(&mut self) -> &mut Router {
        &mut self.router
    }

    /// No Block1 upload is being reassembled.
    pub(crate) fn no_uploads(&self) -> bool {
        self.uploads.is_empty()
    }

    /// The observers.
    pub(crate) fn observers(&self) -> &Observers {
        &self.observers
    }

    /// Time passed to `now`: observed resources that changed are notified into `sink`.
    pub(crate) fn on_timeout(&mut self, now: Instant, sink: Sink<'_>) {
        let router = &self.router;
        let state = |r, at| router.observable_state(r, at);
        self.observers.on_timeout(now, &state, sink);
    }

    /// The session ended: every observer is gone.
    pub(crate) fn end(&mut self, events: &mut VecDeque<SessionEvent>, now: Instant) {
        self.observers.end(events, now);
    }

    /// A request of `len` bytes arrived; its response goes to `sink`.
    pub(crate) fn serve(&mut self, sink: Sink<'_>, now: Instant, frame: &Frame<'_>, len: usize) {
        let Sink {
            writes,
            events,
            max_frame_bytes,
            max_queued_bytes,
        } = sink;
        let token = frame.token();
        let mut out = Response {
            bytes: writes.buffer(),
            tail: None,
            max_frame_bytes,
            room: writes.room(max_queued_bytes),
            refused: None,
        };
        let block1 = frame
            .options
            .iter()
            .find(|(n, _)| *n == number::BLOCK1)
            .map(|(_, v)| v);
        let mut code = match block1 {
            Some(v) => self.upload(events, now, frame, v, &mut out),
            None => self.respond(events, now, frame, frame.payload, None, &mut out),
        };
        if out.refused.is_some() {
            // A registration whose answer cannot be sent is not kept.
            self.observers.forget(events, now, token);
        }
        match out.refused {
            None => {}
            Some(Refusal::TooLarge { len }) => {
                // RFC 8323 §5.3.1: never send more than the peer's Max-Message-Size.
                code = Code::INTERNAL_SERVER_ERROR;
                events.push_back(SessionEvent::ResponseRefused {
                    token,
                    len,
                    max: max_frame_bytes as u32,
                    at: now,
                });
            }
            Some(Refusal::QueueFull { len, room }) => {
                code = Code::SERVICE_UNAVAILABLE;
                events.push_back(SessionEvent::QueueFull {
                    token,
                    len,
                    room,
                    at: now,
                });
            }
        }
        let q = Queued {
            bytes: out.bytes,
            tail: out.tail,
            kind: WriteKind::Response(code),
            notification: None,
        };
        events.push_back(SessionEvent::Served {
            token,
            method: frame.code,
            code,
            request_bytes: len,
            response_bytes: q.len(),
            at: now,
        });
        writes.push(q);
    }

    /// One block of a Block1 upload (RFC 7959 §2.5; BERT, RFC 8323 §6): 2.31 Continue until
    /// the last block, then the resource runs on the whole body and its answer carries the
    /// last Block1. A block out of sequence gets 4.08, a body beyond [`MAX_UPLOAD_BYTES`]
    /// 4.13.
    fn upload(
        &mut self,
        events: &mut VecDeque<SessionEvent>,
        now: Instant,
        frame: &Frame<'_>,
        value: &[u8],
        out: &mut Response,
    ) -> Code {
        let token = frame.token();
        let bare = |out: &mut Response, code| {
            encode_response(out, code, token, Extra::default(), Body::Zeros(0));
            code
        };
        let Ok(block) = Block::decode(value) else {
            return bare(out, Code::BAD_OPTION);
        };
        let mut key = vec![frame.code.0];
        for (n, v) in frame.options.iter() {
            if n == number::URI_PATH || n == number::URI_QUERY {
                key.push(n as u8);
                key.push(v.len() as u8);
                key.extend_from_slice(v);
            }
        }
        let at = self.uploads.iter().position(|u| u.key == key);
        if block.num == 0 {
            if let Some(i) = at {
                self.uploads.remove(i);
            }
            if self.uploads.len() >= MAX_UPLOADS {
                self.uploads.remove(0);
            }
            self.uploads.push(Upload {
                key,
                body: Vec::new(),
            });
        }
        let i = if block.num == 0 {
            self.uploads.len() - 1
        } else {
            match at {
                Some(i) if self.uploads[i].body.len() == block.offset_bytes() => i,
                _ => return bare(out, Code::REQUEST_ENTITY_INCOMPLETE),
            }
        };
        if self.uploads[i].body.len() + frame.payload.len() > MAX_UPLOAD_BYTES {
            self.uploads.remove(i);
            return bare(out, Code::REQUEST_ENTITY_TOO_LARGE);
        }
        self.uploads[i].body.extend_from_slice(frame.payload);
        if block.more {
            let code = Code::CONTINUE;
            let extra = Extra {
                block1: Some(block),
                ..Extra::default()
            };
            encode_response(out, code, token, extra, Body::Zeros(0));
            return code;
        }
        let body = self.uploads.remove(i).body;
        self.respond(events, now, frame, &body, Some(block), out)
    }

    /// Runs the resource on `payload` and encodes the response into `out`, with `block1`
    /// when it ends an upload; returns its code.
    fn respond(
        &mut self,
        events: &mut VecDeque<SessionEvent>,
        now: Instant,
        frame: &Frame<'_>,
        payload: &[u8],
        block1: Option<Block>,
        out: &mut Response,
    ) -> Code {
        let token = frame.token();
        let (code, body) = 'answer: {
            let accept = match request_options::check(frame, known_critical) {
                Ok(accept) => accept,
                Err(code) => break 'answer (code, Body::Zeros(0)),
            };
            let path = frame
                .options
                .iter()
                .filter(|(n, _)| *n == number::URI_PATH)
                .map(|(_, v)| v);
            if let Some((index, content)) = self.router.find_content(path.clone()) {
                let period = content.observe_period();
                let (code, format, body) = content.answer(
                    frame.code,
                    now,
                    self.router.links(),
                    frame
                        .options
                        .iter()
                        .filter(|(n, _)| *n == number::URI_QUERY)
                        .map(|(_, v)| v),
                );
                if code.class() == 2 && !request_options::acceptable(accept, format) {
                    break 'answer (Code::NOT_ACCEPTABLE, Body::Zeros(0));
                }
                // RFC 7641 §4.1 (RFC 8323 §7): a GET with Observe of an observable resource
                // (un)registers; the answer says with Observe whether it is registered.
                let (observe, max_age) = match period {
                    Some(period) if frame.code == Code::GET => {
                        let observe = frame.observe().ok().flatten();
                        let limit = self.router.observer_limit();
                        let seq = self
                            .observers
                            .register(events, limit, now, token, index, observe, period);
                        let next = crate::observe::next_tick(now, period);
                        (seq, Some(crate::observe::max_age_s(now, next)))
                    }
                    _ => (None, None),
                };
                let extra = Extra {
                    content_format: format,
                    observe,
                    max_age,
                    block1,
                };
                encode_response(out, code, token, extra, Body::Bytes(&body));
                return code;
            }
            let Some(resource) = self.router.find(path) else {
                break 'answer (Code::NOT_FOUND, Body::Zeros(0));
            };
            let action = resource.action(frame.code);
            // As over UDP (`crate::media`): an echo has the request's Content-Format, 4.15
            // when /echo does not take it, 4.12 when a precondition is false (/echo keeps no
            // representation here: If-Match fails, If-None-Match holds).
            let format = if matches!(action, Action::Echo) {
                match media::echo_content_format(frame) {
                    Ok(f) => f,
                    Err(code) => break 'answer (code, Body::Zeros(0)),
                }
            } else {
                None
            };
            if !matches!(action, Action::NotAllowed) && !request_options::acceptable(accept, format)
            {
                break 'answer (Code::NOT_ACCEPTABLE, Body::Zeros(0));
            }
            if matches!(action, Action::Echo) && !media::preconditions_hold(frame, None) {
                break 'answer (Code::PRECONDITION_FAILED, Body::Zeros(0));
            }
            match action {
                Action::NotAllowed => (Code::METHOD_NOT_ALLOWED, Body::Zeros(0)),
                Action::Data { len_bytes } => (Code::CONTENT, Body::Pattern(len_bytes)),
                Action::Fixed { code, len_bytes } => (code, Body::Zeros(len_bytes)),
                Action::Echo => {
                    let code = media::echo_code(frame.code);
                    let extra = Extra {
                        content_format: format,
                        block1,
                        ..Extra::default()
                    };
                    encode_response(out, code, token, extra, Body::Bytes(payload));
                    return code;
                }
            }
        };
        let extra = Extra {
            block1,
            ..Extra::default()
        };
        encode_response(out, code, token, extra, body);
        code
    }
}
