//! Observe (RFC 7641), the client side: [`crate::Endpoint::observe`] registers with a GET carrying
//! Observe 0; the first response completes the request as usual
//! ([`crate::Event::RequestCompleted`]), and every later response with the same token from
//! the same server is a notification ([`crate::Event::Notification`]). A CON notification is
//! acknowledged; one older than the freshest seen (the 24-bit serial rule of §3.4, unless
//! more than 128 s passed) is acknowledged but not delivered. [`crate::Endpoint::cancel_observation`]
//! ends it: actively by a GET with Observe 1 (§3.6), and any notification still arriving is
//! answered by RST.
//!
//! Freshness (§3.3.1): when Max-Age (plus [`REREGISTER_SLACK`]) passes after the last
//! notification without a new one, the client registers again with the same token; the
//! answer is delivered as a notification, and if the re-registration fails the observation
//! ends with [`crate::Event::RequestFailed`] for the observation's request.

use std::net::SocketAddr;

use coaplab_cc::time::{Duration, Instant};
use coaplab_wire::option::number;
use coaplab_wire::{Message, MessageType, ReadOptions, Token};

use crate::dedup::DedupCache;
use crate::event::{Event, RequestId};
use crate::outputs::Outputs;
use crate::request::Request;

/// The most observations one endpoint holds at once; [`crate::Endpoint::observe`] beyond it
/// returns `None`.
pub const MAX_OBSERVATIONS: usize = 64;

/// After this long, a notification is taken as newer whatever its number (RFC 7641 §3.4).
pub const REORDER_WINDOW: Duration = Duration::from_secs(128);

/// Time allowed beyond Max-Age for the next notification to arrive before re-registering
/// (the notification's own transmission; RFC 7641 §3.3.1 leaves it to the client).
pub const REREGISTER_SLACK: Duration = Duration::from_secs(2);

/// One observation held.
#[derive(Debug, Clone)]
pub(crate) struct Observation {
    request: RequestId,
    peer: SocketAddr,
    token: Token,
    /// The freshest Observe value accepted and when it arrived.
    last: Option<(u32, Instant)>,
    /// The registration, to repeat when the representation goes stale.
    get: Request,
    /// When to re-register (Max-Age + slack after the last answer); `None` before the
    /// registration's answer and while a re-registration is under way.
    stale_at: Option<Instant>,
    /// The re-registration in flight, if any.
    reregistration: Option<RequestId>,
}

/// The observations an endpoint holds as a client.
#[derive(Debug, Default)]
pub(crate) struct Observations {
    list: Vec<Observation>,
}

impl Observations {
    /// Whether there are none (the hot path checks this first).
    pub(crate) fn is_empty(&self) -> bool {
        self.list.is_empty()
    }

    /// The earliest re-registration deadline: a representation going stale (§3.3.1).
    pub(crate) fn next_reregistration(&self) -> Option<Instant> {
        self.list
            .iter()
            .filter(|o| o.reregistration.is_none())
            .filter_map(|o| o.stale_at)
            .min()
    }
}

/// Whether a notification numbered `v2` arriving at `t2` is newer than the one numbered
/// `v1` that arrived at `t1` (RFC 7641 §3.4).
pub fn is_newer(v1: u32, t1: Instant, v2: u32, t2: Instant) -> bool {
    const HALF: u32 = 1 << 23;
    (v1 < v2 && v2 - v1 < HALF)
        || (v1 > v2 && v1 - v2 > HALF)
        || t2.saturating_since(t1) > REORDER_WINDOW
}

impl Observations {
    /// Observations held.
    pub(crate) fn len(&self) -> usize {
        self.list.len()
    }

    /// Holds [`MAX_OBSERVATIONS`]: a new one is refused.
    pub(crate) fn full(&self) -> bool {
        self.list.len() >= MAX_OBSERVATIONS
    }

    /// A new observation: `registration` (with Observe 0, [`with_observe`]) was started to
    /// `peer` as `request`, with `token`.
    pub(crate) fn add(
        &mut self,
        request: RequestId,
        peer: SocketAddr,
        token: Token,
        registration: Request,
    ) {
        self.list.push(Observation {
            request,
            peer,
            token,
            last: None,
            get: registration,
            stale_at: None,
            reregistration: None,
        });
    }

    /// Ends the observation started as `request`: its peer and token, and `get` turned into
    /// the deregistration (Observe 1, §3.6) to send with that token. `None` when `request`
    /// is not an observation.
    pub(crate) fn cancel(
        &mut self,
        request: RequestId,
        get: &Request,
    ) -> Option<(SocketAddr, Token, Request)> {
        let i = self.list.iter().position(|o| o.request == request)?;
        let o = self.list.swap_remove(i);
        Some((o.peer, o.token, with_observe(get, 1)))
    }

    /// A response that matched no exchange: a notification of an observation held?
    /// Returns whether it was one (then it was acknowledged, or remembered in `dedup` when
    /// NON, and, when fresh, delivered to `out`).
    pub(crate) fn on_notification(
        &mut self,
        out: &mut Outputs,
        dedup: &mut DedupCache,
        now: Instant,
        from: SocketAddr,
        msg: &Message<'_>,
    ) -> bool {
        let token = msg.token();
        let Some(i) = self
            .list
            .iter()
            .position(|o| o.peer == from && o.token == token)
        else {
            return false;
        };
        if msg.mtype == MessageType::Con {
            out.send_empty(dedup, now, from, MessageType::Ack, msg.message_id);
        } else {
            dedup.remember_unanswered(now, from, msg.message_id);
        }
        let sequence = msg.observe().ok().flatten();
        let o = &mut self.list[i];
        let fresh = match (o.last, sequence) {
            (Some((v1, t1)), Some(v2)) => is_newer(v1, t1, v2, now),
            _ => true,
        };
        if !fresh {
            return true;
        }
        if let Some(v) = sequence {
            o.last = Some((v, now));
        }
        o.stale_at = Some(now + max_age(msg) + REREGISTER_SLACK);
        let request = o.request;
        // §3.2: a response without Observe (or an error) ends the observation.
        if sequence.is_none() || msg.code.class() != 2 {
            self.list.swap_remove(i);
        }
        out.events.push_back(Event::Notification {
            request,
            destination: from,
            code: msg.code,
            sequence,
            body: msg.payload.to_vec(),
            at: now,
        });
        true
    }

    /// Records the Observe value of the registration's response (so that older
    /// notifications are recognised); ends the observation when it has none (the server did
    /// not register it, §3.1, or answered an error).
    pub(crate) fn answered(&mut self, now: Instant, request: RequestId, observe: Option<u32>) {
        let Some(i) = self.list.iter().position(|o| o.request == request) else {
            return;
        };
        match observe {
            Some(v) => self.list[i].last = Some((v, now)),
            None => {
                self.list.swap_remove(i);
            }
        }
    }

    /// A response to request `id` completed it: a registration's or re-registration's
    /// answer? Returns true when it was a re-registration, reported to `out` as a
    /// notification instead of a completed request.
    pub(crate) fn on_response(
        &mut self,
        out: &mut Outputs,
        now: Instant,
        id: RequestId,
        msg: &Message<'_>,
    ) -> bool {
        let observe = msg
            .observe()
            .ok()
            .flatten()
            .filter(|_| msg.code.class() == 2);
        if let Some(i) = self.list.iter().position(|o| o.reregistration == Some(id)) {
            let o = &mut self.list[i];
            o.reregistration = None;
            o.stale_at = Some(now + max_age(msg) + REREGISTER_SLACK);
            if let Some(v) = observe {
                o.last = Some((v, now));
            }
            let (request, from) = (o.request, o.peer);
            if observe.is_none() {
                self.list.swap_remove(i);
            }
            out.events.push_back(Event::Notification {
                request,
                destination: from,
                code: msg.code,
                sequence: observe,
                body: msg.payload.to_vec(),
                at: now,
            });
            return true;
        }
        if let Some(o) = self.list.iter_mut().find(|o| o.request == id) {
            o.stale_at = Some(now + max_age(msg) + REREGISTER_SLACK);
        }
        self.answered(now, id, observe);
        false
    }

    /// A request failed: when it was a registration or re-registration, the observation
    /// ends and the failure is reported under the observation's request id (returned).
    pub(crate) fn failed(&mut self, id: RequestId) -> Option<RequestId> {
        let i = self
            .list
            .iter()
            .position(|o| o.request == id || o.reregistration == Some(id))?;
        let o = self.list.swap_remove(i);
        Some(o.request)
    }

    /// Observation `i`'s registration to repeat, when its representation went stale by
    /// `now` and no re-registration is under way (§3.3.1): peer, token and request.
    pub(crate) fn stale(&self, i: usize, now: Instant) -> Option<(SocketAddr, Token, Request)> {
        let o = &self.list[i];
        if o.reregistration.is_some() || !o.stale_at.is_some_and(|t| t <= now) {
            return None;
        }
        Some((o.peer, o.token, o.get.clone()))
    }

    /// Observation `i` is re-registered as request `id`.
    pub(crate) fn reregistering(&mut self, i: usize, id: RequestId) {
        let o = &mut self.list[i];
        o.reregistration = Some(id);
        o.stale_at = None;
    }
}

/// `request` with Observe `observe` (any earlier one removed): 0 makes it an observation's
/// registration (§3.1), 1 its deregistration (§3.6). Over UDP and TCP alike.
pub(crate) fn with_observe(request: &Request, observe: u32) -> Request {
    let mut request = request.clone();
    request.options.remove(number::OBSERVE);
    request.options.push_uint(number::OBSERVE, observe);
    request
}

/// Max-Age of `msg` (60 s when absent, RFC 7252 §5.10.5).
fn max_age(msg: &Message<'_>) -> Duration {
    Duration::from_secs(i64::from(msg.max_age_s().unwrap_or(60)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn serial_rule_of_rfc_7641_3_4() {
        let t = Instant::ZERO;
        assert!(is_newer(1, t, 2, t));
        assert!(!is_newer(2, t, 1, t));
        assert!(!is_newer(5, t, 5, t));
        // Wrap-around of the 24-bit space.
        assert!(is_newer((1 << 24) - 1, t, 0, t));
        assert!(!is_newer(0, t, (1 << 24) - 1, t));
        // More than 128 s later: newer whatever the number.
        assert!(is_newer(9, t, 1, t + Duration::from_secs(129)));
        assert!(!is_newer(9, t, 1, t + Duration::from_secs(128)));
    }
}
