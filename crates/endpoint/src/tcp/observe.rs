//! Observe (RFC 7641) on a session: CoAP over TCP (RFC 8323 §7).
//!
//! Server side: a GET with Observe 0 of an observable resource ([`crate::Router::counter`])
//! registers the token; every change of the resource queues a 2.05 notification with the
//! token, Observe, Content-Format and Max-Age. What differs from UDP (`crate::observe`):
//!
//! - The stream is reliable and ordered (§7.1): there is no CON/NON, no acknowledgement and no
//!   retransmission, and a notification can never overtake another. The Observe value still
//!   counts up (24 bits, one per change, as over UDP; §7.1 allows it to be empty), and the
//!   client passes every notification on in order, ignoring it for ordering, as §7.1 says.
//! - Cancellation is a GET with Observe 1 and the token (RFC 7641 §3.6); there is no RST.
//!   When the connection closes or is aborted, every observation on it ends (§7: it lives
//!   only as long as its connection): the session reports
//!   [`crate::ObserverGone::Closed`] for each of its observers.
//! - Backpressure: a slow observer must not make the server buffer without bound. At most one
//!   notification per observer waits in the write queue: a newer state *replaces* the queued
//!   one (its bytes are swapped in place; RFC 7641 §4.5.2 lets a server skip states, the
//!   client wants the newest), unless its writing has begun. A notification that does not fit
//!   the queue limits ([`crate::tcp::SessionConfig::max_queued_bytes`] and the driver's
//!   [`Session::set_queue_budget`]) is dropped
//!   ([`SessionEvent::NotificationDropped`]); the next change tries again. So the queue holds
//!   at most [`crate::Router::max_observers`] notifications of one small frame each.
//!
//! Client side: [`Session::observe`] sends the GET with Observe 0; the first response
//! completes the request as usual ([`SessionEvent::RequestCompleted`], with its Observe
//! option among `options`); every later response with the token is a
//! [`SessionEvent::Notification`]. One without Observe or with an error code ends the
//! observation (RFC 7641 §3.2). [`Session::cancel_observation`] deregisters.
//!
//! The session has one timer for this, the next change of an observed resource
//! ([`Session::poll_timeout`], [`Session::handle_timeout`]); with no observers it has none.

use coaplab_cc::time::Instant;
use coaplab_wire::frame::Frame;
use coaplab_wire::option::number;
use coaplab_wire::{Code, ReadOptions, Token};

use crate::event::{ObserverGone, RequestId};
use crate::observe::{max_age_s, next_tick, OBSERVE_SEQ_MODULUS};
use crate::request::Request;
use crate::resource::Body;
use crate::tcp::event::{RequestError, SessionEvent, WriteKind};
use crate::tcp::serve::{encode_response, Extra, Response};
use crate::tcp::session::{Queued, Session, State};

/// One registration on this session (server side).
#[derive(Debug, Clone)]
pub(crate) struct Observer {
    token: Token,
    /// An index into the router's content list.
    resource: usize,
}

/// The observers of this session and the sequence they share (server side).
#[derive(Debug, Default)]
pub(crate) struct Observers {
    list: Vec<Observer>,
    /// The Observe value of the current state (24-bit).
    seq: u32,
    /// When an observed resource changes next (`None` without observers).
    next_change: Option<Instant>,
}

/// One observation held (client side).
#[derive(Debug, Clone)]
pub(crate) struct Watch {
    pub(crate) token: Token,
    request: RequestId,
}

impl Observers {
    /// Whether there are none.
    pub(crate) fn list_is_empty(&self) -> bool {
        self.list.is_empty()
    }
}

impl Session {
    /// Observers registered on this session (server side).
    pub fn observers(&self) -> usize {
        self.observers.list.len()
    }

    /// Observations held on this session (client side).
    pub fn observations(&self) -> usize {
        self.watches.len()
    }

    /// When [`Session::handle_timeout`] is due next: the next change of an observed
    /// resource. `None` without observers (the session has no other timer).
    pub fn poll_timeout(&self) -> Option<Instant> {
        if self.observers.list.is_empty() || self.state == State::Ended {
            return None;
        }
        self.observers.next_change
    }

    /// Time passed to `now`: when an observed resource changed, every observer is sent (or
    /// has its queued notification replaced by) the new state.
    pub fn handle_timeout(&mut self, now: Instant) {
        if self.observers.next_change.is_some_and(|t| t <= now) {
            self.notify_all(now);
        }
    }

    /// A GET of the observable content `resource` carrying Observe `observe` with `token`
    /// (RFC 7641 §4.1): 0 registers (or re-registers), 1 deregisters. Returns the Observe
    /// value the response carries (`None`: a plain response).
    pub(crate) fn observe_request(
        &mut self,
        now: Instant,
        token: Token,
        resource: usize,
        observe: Option<u32>,
        period: coaplab_cc::time::Duration,
    ) -> Option<u32> {
        let existing = self.observers.list.iter().position(|o| o.token == token);
        match (observe, existing) {
            (Some(0), Some(i)) => self.observers.list[i].resource = resource,
            (Some(0), None) if self.observers.list.len() >= self.router.observer_limit() => {
                self.events
                    .push_back(SessionEvent::ObserverRefused { token, at: now });
                return None;
            }
            (Some(0), None) => {
                self.observers.list.push(Observer { token, resource });
                self.events
                    .push_back(SessionEvent::ObserverAdded { token, at: now });
            }
            (Some(1), Some(i)) => {
                self.observers.list.swap_remove(i);
                self.events.push_back(SessionEvent::ObserverRemoved {
                    token,
                    reason: ObserverGone::Deregistered,
                    at: now,
                });
                return None;
            }
            _ => return None,
        }
        let tick = next_tick(now, period);
        // A change time left from observers since gone is stale: start from this one.
        self.observers.next_change = Some(match self.observers.next_change {
            Some(t) if t > now => t.min(tick),
            _ => tick,
        });
        Some(self.observers.seq)
    }

    /// The registration of `token` could not be answered (5.00, 5.03): it is not kept.
    pub(crate) fn forget_observer(&mut self, now: Instant, token: Token) {
        if let Some(i) = self.observers.list.iter().position(|o| o.token == token) {
            self.observers.list.swap_remove(i);
            self.events
                .push_back(SessionEvent::ObserverRefused { token, at: now });
        }
    }

    /// Every observed resource's new state to every observer.
    fn notify_all(&mut self, now: Instant) {
        self.observers.seq = (self.observers.seq + 1) % OBSERVE_SEQ_MODULUS;
        let seq = self.observers.seq;
        let mut next: Option<Instant> = None;
        for i in 0..self.observers.list.len() {
            let Observer { token, resource } = self.observers.list[i].clone();
            let Some((format, body, period)) = self.router.observable_state(resource, now) else {
                continue;
            };
            let tick = next_tick(now, period);
            next = Some(next.map_or(tick, |t| t.min(tick)));
            self.queue_notification(now, token, seq, format, max_age_s(now, tick), &body);
        }
        self.observers.next_change = next;
    }

    /// Queues one notification, replacing the one still queued for `token` if any; drops it
    /// when it does not fit the queue limits.
    fn queue_notification(
        &mut self,
        now: Instant,
        token: Token,
        sequence: u32,
        content_format: Option<u16>,
        max_age: u32,
        body: &[u8],
    ) {
        // A queued notification of this observer whose writing has not begun.
        let stale =
            self.writes.iter().enumerate().position(|(i, q)| {
                q.notification == Some(token) && !(i == 0 && self.front_sent > 0)
            });
        let freed = stale.map_or(0, |i| self.writes[i].cost());
        let mut out = Response {
            bytes: self.buffer(),
            tail: None,
            max_frame_bytes: self.peer_max_message_size as usize,
            room: self.queue_room() + freed,
            refused: None,
        };
        let extra = Extra {
            content_format,
            observe: Some(sequence),
            max_age: Some(max_age),
            block1: None,
        };
        encode_response(&mut out, Code::CONTENT, token, extra, Body::Bytes(body));
        if out.refused.is_some() {
            self.recycle(out.bytes);
            self.events.push_back(SessionEvent::NotificationDropped {
                token,
                sequence,
                at: now,
            });
            return;
        }
        let bytes = out.bytes.len();
        match stale {
            Some(i) => {
                self.queued_bytes = self.queued_bytes - freed + bytes + super::QUEUED_MESSAGE_BYTES;
                let old = std::mem::replace(&mut self.writes[i].bytes, out.bytes);
                self.recycle(old);
            }
            None => self.queue(Queued {
                bytes: out.bytes,
                tail: None,
                kind: WriteKind::Response(Code::CONTENT),
                notification: Some(token),
            }),
        }
        self.events.push_back(SessionEvent::NotificationSent {
            token,
            sequence,
            bytes,
            replaced: stale.is_some(),
            at: now,
        });
    }

    /// The session ended: every observer is gone, every observation too.
    pub(crate) fn end_observations(&mut self, now: Instant) {
        for o in std::mem::take(&mut self.observers.list) {
            self.events.push_back(SessionEvent::ObserverRemoved {
                token: o.token,
                reason: ObserverGone::Closed,
                at: now,
            });
        }
        self.observers.next_change = None;
        self.watches.clear();
    }

    /// Registers as an observer of `request`'s resource (RFC 7641 §3.1): `request` (a GET)
    /// is sent with Observe 0. The answer completes the returned request
    /// ([`SessionEvent::RequestCompleted`]); later ones are
    /// [`SessionEvent::Notification`]s. Errors as [`Session::request`].
    pub fn observe(&mut self, now: Instant, request: &Request) -> Result<RequestId, RequestError> {
        let mut request = request.clone();
        request.options.remove(number::OBSERVE);
        request.options.push_uint(number::OBSERVE, 0);
        let id = self.send_request(now, &request, None)?;
        let Some(token) = self.outstanding.last().map(|o| o.token) else {
            return Err(RequestError::NotOpen);
        };
        self.watches.push(Watch { token, request: id });
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
        let i = self
            .watches
            .iter()
            .position(|w| w.request == request)
            .ok_or(RequestError::NotOpen)?;
        let token = self.watches[i].token;
        let mut get = get.clone();
        get.options.remove(number::OBSERVE);
        get.options.push_uint(number::OBSERVE, 1);
        self.watches.swap_remove(i);
        self.send_request(now, &get, Some(token))
    }

    /// The registration `request` was answered by `frame`: without Observe or with an error
    /// the server did not register it (RFC 7641 §3.1), and the observation ends.
    pub(crate) fn registration_answered(&mut self, request: RequestId, frame: &Frame<'_>) {
        let registered = frame.code.class() == 2 && frame.has(number::OBSERVE);
        if !registered {
            self.watches.retain(|w| w.request != request);
        }
    }

    /// A response that matched no outstanding request: a notification of an observation
    /// held? Returns whether it was one (then it was reported).
    pub(crate) fn on_notification(
        &mut self,
        now: Instant,
        frame: &Frame<'_>,
        len: usize,
        payload_len: usize,
    ) -> bool {
        let token = frame.token();
        let Some(i) = self.watches.iter().position(|w| w.token == token) else {
            return false;
        };
        let request = self.watches[i].request;
        let sequence = frame.observe().ok().flatten();
        // RFC 7641 §3.2: a notification without Observe, or an error, ends the observation.
        if sequence.is_none() || frame.code.class() != 2 {
            self.watches.swap_remove(i);
        }
        let (body, options) = if self.config.keep_bodies {
            (frame.payload.to_vec(), frame.options.into())
        } else {
            (Vec::new(), coaplab_wire::OptionList::new())
        };
        self.events.push_back(SessionEvent::Notification {
            request,
            code: frame.code,
            sequence,
            body_len: payload_len,
            body,
            options,
            bytes: len,
            at: now,
        });
        true
    }
}
