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
//!   [`crate::tcp::Session::set_queue_budget`]) is dropped
//!   ([`SessionEvent::NotificationDropped`]); the next change tries again. So the queue holds
//!   at most [`crate::Router::max_observers`] notifications of one small frame each.
//!
//! Client side: [`crate::tcp::Session::observe`] sends the GET with Observe 0; the first response
//! completes the request as usual ([`SessionEvent::RequestCompleted`], with its Observe
//! option among `options`); every later response with the token is a
//! [`SessionEvent::Notification`]. One without Observe or with an error code ends the
//! observation (RFC 7641 §3.2). [`crate::tcp::Session::cancel_observation`] deregisters.
//!
//! The session has one timer for this, the next change of an observed resource
//! ([`crate::tcp::Session::poll_timeout`], [`crate::tcp::Session::handle_timeout`]); with no observers it has none.
//!
//! Two components of [`crate::tcp::Session`], each owning its state: [`Observers`] (server
//! side) and [`Watches`] (client side); the session's write queue and events come in as
//! arguments.

use std::collections::VecDeque;

use coaplab_cc::time::{Duration, Instant};
use coaplab_wire::frame::Frame;
use coaplab_wire::option::number;
use coaplab_wire::{Code, ReadOptions, Token};

use crate::event::{ObserverGone, RequestId};
use crate::observe::{max_age_s, next_tick, State, OBSERVE_SEQ_MODULUS};
use crate::resource::Body;
use crate::tcp::event::{SessionEvent, WriteKind};
use crate::tcp::response::{encode_response, Extra, Response};
use crate::tcp::writes::{Queued, Sink};

/// One registration on this session (server side).
#[derive(Debug, Clone)]
struct Observer {
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

impl Observers {
    /// Observers registered.
    pub(crate) fn len(&self) -> usize {
        self.list.len()
    }

    /// Whether there are none.
    pub(crate) fn is_empty(&self) -> bool {
        self.list.is_empty()
    }

    /// When an observed resource changes next (`None` without observers).
    pub(crate) fn next_change(&self) -> Option<Instant> {
        if self.list.is_empty() {
            return None;
        }
        self.next_change
    }

    /// A GET of the observable content `resource` carrying Observe `observe` with `token`
    /// (RFC 7641 §4.1): 0 registers (or re-registers; at most `limit` observers,
    /// [`crate::Router::max_observers`]), 1 deregisters. Returns the Observe value the
    /// response carries (`None`: a plain response).
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn register(
        &mut self,
        events: &mut VecDeque<SessionEvent>,
        limit: usize,
        now: Instant,
        token: Token,
        resource: usize,
        observe: Option<u32>,
        period: Duration,
    ) -> Option<u32> {
        let existing = self.list.iter().position(|o| o.token == token);
        match (observe, existing) {
            (Some(0), Some(i)) => self.list[i].resource = resource,
            (Some(0), None) if self.list.len() >= limit => {
                events.push_back(SessionEvent::ObserverRefused { token, at: now });
                return None;
            }
            (Some(0), None) => {
                self.list.push(Observer { token, resource });
                events.push_back(SessionEvent::ObserverAdded { token, at: now });
            }
            (Some(1), Some(i)) => {
                self.list.swap_remove(i);
                events.push_back(SessionEvent::ObserverRemoved {
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
        self.next_change = Some(match self.next_change {
            Some(t) if t > now => t.min(tick),
            _ => tick,
        });
        Some(self.seq)
    }

    /// The registration of `token` could not be answered (5.00, 5.03): it is not kept.
    pub(crate) fn forget(
        &mut self,
        events: &mut VecDeque<SessionEvent>,
        now: Instant,
        token: Token,
    ) {
        if let Some(i) = self.list.iter().position(|o| o.token == token) {
            self.list.swap_remove(i);
            events.push_back(SessionEvent::ObserverRefused { token, at: now });
        }
    }

    /// Time passed to `now`: when an observed resource changed (its new state from `state`),
    /// every observer is sent (or has its queued notification replaced by) the new state.
    pub(crate) fn on_timeout(&mut self, now: Instant, state: State<'_>, sink: Sink<'_>) {
        if self.next_change.is_some_and(|t| t <= now) {
            self.notify_all(now, state, sink);
        }
    }

    /// Every observed resource's new state to every observer.
    fn notify_all(&mut self, now: Instant, state: State<'_>, mut sink: Sink<'_>) {
        self.seq = (self.seq + 1) % OBSERVE_SEQ_MODULUS;
        let seq = self.seq;
        let mut next: Option<Instant> = None;
        for i in 0..self.list.len() {
            let Observer { token, resource } = self.list[i].clone();
            let Some((format, body, period)) = state(resource, now) else {
                continue;
            };
            let tick = next_tick(now, period);
            next = Some(next.map_or(tick, |t| t.min(tick)));
            queue_notification(
                &mut sink,
                now,
                token,
                seq,
                format,
                max_age_s(now, tick),
                &body,
            );
        }
        self.next_change = next;
    }

    /// The session ended: every observer is gone.
    pub(crate) fn end(&mut self, events: &mut VecDeque<SessionEvent>, now: Instant) {
        for o in std::mem::take(&mut self.list) {
            events.push_back(SessionEvent::ObserverRemoved {
                token: o.token,
                reason: ObserverGone::Closed,
                at: now,
            });
        }
        self.next_change = None;
    }
}

/// Queues one notification, replacing the one still queued for `token` if any; drops it
/// when it does not fit the queue limits.
fn queue_notification(
    sink: &mut Sink<'_>,
    now: Instant,
    token: Token,
    sequence: u32,
    content_format: Option<u16>,
    max_age: u32,
    body: &[u8],
) {
    // A queued notification of this observer whose writing has not begun.
    let stale = sink.writes.waiting_notification(token);
    let freed = stale.map_or(0, |(_, cost)| cost);
    let mut out = Response {
        bytes: sink.writes.buffer(),
        tail: None,
        max_frame_bytes: sink.max_frame_bytes,
        room: sink.writes.room(sink.max_queued_bytes) + freed,
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
        sink.writes.recycle(out.bytes);
        sink.events.push_back(SessionEvent::NotificationDropped {
            token,
            sequence,
            at: now,
        });
        return;
    }
    let bytes = out.bytes.len();
    match stale {
        Some((i, _)) => sink.writes.replace(i, freed, out.bytes),
        None => sink.writes.push(Queued {
            bytes: out.bytes,
            tail: None,
            kind: WriteKind::Response(Code::CONTENT),
            notification: Some(token),
        }),
    }
    sink.events.push_back(SessionEvent::NotificationSent {
        token,
        sequence,
        bytes,
        replaced: stale.is_some(),
        at: now,
    });
}

/// One observation held (client side).
#[derive(Debug, Clone)]
struct Watch {
    token: Token,
    request: RequestId,
}

/// The observations this session holds (client side).
#[derive(Debug, Default)]
pub(crate) struct Watches {
    list: Vec<Watch>,
}

impl Watches {
    /// Observations held.
    pub(crate) fn len(&self) -> usize {
        self.list.len()
    }

    /// Whether there are none.
    pub(crate) fn is_empty(&self) -> bool {
        self.list.is_empty()
    }

    /// Whether an observation uses `token`.
    pub(crate) fn uses(&self, token: Token) -> bool {
        self.list.iter().any(|w| w.token == token)
    }

    /// The observation started as `request` with `token`.
    pub(crate) fn add(&mut self, token: Token, request: RequestId) {
        self.list.push(Watch { token, request });
    }

    /// Ends the observation started as `request`: its token, to deregister with.
    pub(crate) fn cancel(&mut self, request: RequestId) -> Option<Token> {
        let i = self.list.iter().position(|w| w.request == request)?;
        Some(self.list.swap_remove(i).token)
    }

    /// The registration `request` was answered by `frame`: without Observe or with an error
    /// the server did not register it (RFC 7641 §3.1), and the observation ends.
    pub(crate) fn registration_answered(&mut self, request: RequestId, frame: &Frame<'_>) {
        let registered = frame.code.class() == 2 && frame.has(number::OBSERVE);
        if !registered {
            self.list.retain(|w| w.request != request);
        }
    }

    /// A response of `len` bytes (payload `payload_len`) that matched no outstanding request:
    /// a notification of an observation held? Returns whether it was one (then it was
    /// reported to `events`, its body kept with `keep_bodies`).
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn on_notification(
        &mut self,
        events: &mut VecDeque<SessionEvent>,
        keep_bodies: bool,
        now: Instant,
        frame: &Frame<'_>,
        len: usize,
        payload_len: usize,
    ) -> bool {
        let token = frame.token();
        let Some(i) = self.list.iter().position(|w| w.token == token) else {
            return false;
        };
        let request = self.list[i].request;
        let sequence = frame.observe().ok().flatten();
        // RFC 7641 §3.2: a notification without Observe, or an error, ends the observation.
        if sequence.is_none() || frame.code.class() != 2 {
            self.list.swap_remove(i);
        }
        let (body, options) = if keep_bodies {
            (frame.payload.to_vec(), frame.options.into())
        } else {
            (Vec::new(), coaplab_wire::OptionList::new())
        };
        events.push_back(SessionEvent::Notification {
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

    /// The session ended: every observation with it.
    pub(crate) fn clear(&mut self) {
        self.list.clear();
    }
}
