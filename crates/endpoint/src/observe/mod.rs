//! Observe (RFC 7641), the server side: the observers of the observable resources a
//! [`crate::Router`] serves ([`crate::Router::counter`]), keyed by (client, token), and the
//! notifications they are sent when the resource's state changes.
//!
//! - Registration is a GET with Observe 0; the response carries Observe (a 24-bit sequence
//!   number) and Max-Age (seconds until the next change). A GET with Observe 1, an RST
//!   answering a notification, or a CON notification that is never acknowledged removes the
//!   observer (§3.6, §4.2, §4.5).
//! - Congestion (§4.5.1): notifications are NON, paced by the resource's period; the first
//!   one and then at least one in [`CON_INTERVAL`] is CON, to learn that the client is (still)
//!   there (the first also bounds what a spoofed registration can reflect, §7). At most one CON
//!   notification per client (address) is outstanding, over all its observations: a newer
//!   state of the same observation replaces the pending one and is sent at its next
//!   retransmission (§4.5.2); another observation's due CON waits (sent as NON meanwhile).
//! - Timers come in through [`crate::Endpoint::poll_timeout`] and
//!   [`crate::Endpoint::handle_timeout`] (sans-IO). With no observers there is nothing to do
//!   and no cost per request.
//!
//! The client side is in `client.rs`.

pub mod client;

use std::net::SocketAddr;

use coaplab_cc::time::{earliest, Duration, Instant};
use coaplab_wire::option::number;
use coaplab_wire::{Code, MessageType, MessageWriter, Token};

use crate::event::{Event, Transmit, TransmitMeta};
use crate::message_ids::MessageIds;
use crate::outputs::Outputs;
use crate::peers::Peers;

/// The default [`crate::Router::max_observers`]: observers over all observable resources;
/// a registration beyond it is answered like a plain GET (no Observe option, RFC 7641 §4.1).
pub const MAX_OBSERVERS: usize = 256;

/// The longest time between two CON notifications to one observer (RFC 7641 §4.5.1: 24 h).
pub const CON_INTERVAL: Duration = Duration::from_secs(24 * 3600);

/// The first retransmission timeout of a CON notification (RFC 7252 ACK_TIMEOUT, no random
/// factor: notifications are not driven by the request's congestion controller).
const NOTIFY_ACK_TIMEOUT: Duration = Duration::from_secs(2);

/// Retransmissions of a CON notification before the observer is given up (MAX_RETRANSMIT).
const NOTIFY_MAX_RETRANSMIT: u32 = 4;

/// The 24-bit sequence number space of the Observe option (RFC 7641 §3.4).
pub const OBSERVE_SEQ_MODULUS: u32 = 1 << 24;

/// How a server sends notifications over UDP ([`crate::Router::notify_policy`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct NotifyPolicy {
    /// Every k-th notification to an observer is CON (its 1st, (k+1)-th, ...), the others
    /// NON; 0: only the first, then one at least every [`CON_INTERVAL`] (RFC 7641 §4.5.1's
    /// minimum). At most one CON per client is outstanding either way: a CON due while one is
    /// goes out as NON, and a newer state replaces the pending one (§4.5.2).
    pub con_every: u32,
    /// What times a CON notification's retransmissions.
    pub timer: NotifyTimer,
}

/// What times the retransmissions of a CON notification.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum NotifyTimer {
    /// RFC 7252's ACK_TIMEOUT of 2 s without a random factor, doubled up to MAX_RETRANSMIT 4
    /// (the real server's default: independent of any request's congestion control).
    #[default]
    Fixed,
    /// The server's RTO algorithm for the observer's address (the endpoint's controller
    /// factory: default, CoCoA, FASOR, ...), as for a CON request to it: `start` at the
    /// first transmission, `expired` at each timeout (it decides when to give up), and
    /// `completed` with the ACK, so its estimator learns from notifications (the simulator's
    /// `observe` workload, to study the algorithms on notifications).
    Controller,
}

/// A CON notification not yet acknowledged.
#[derive(Debug, Clone)]
struct Pending {
    /// Its Message ID (the latest copy's: a newer state gets a new one).
    message_id: u16,
    /// Message IDs of the states it replaced, still accepted as acknowledgements.
    older_message_id: Option<u16>,
    /// The bytes to (re)transmit: always the newest state.
    bytes: Vec<u8>,
    retransmits: u32,
    timeout: Duration,
    deadline: Instant,
    /// The Observe value of `bytes`.
    sequence: u32,
    /// [`NotifyTimer::Controller`]: the algorithm's per-exchange scratch and the send times
    /// of every transmission (the first state's original first).
    cc: Option<Box<(coaplab_cc::Exchange, Vec<Instant>)>>,
}

/// One registration: who, with which token, of which resource.
#[derive(Debug, Clone)]
pub(crate) struct Observer {
    pub(crate) peer: SocketAddr,
    pub(crate) token: Token,
    /// The resource: an index into the router's content list.
    pub(crate) resource: usize,
    /// When the last CON notification to it was acknowledged; `None` until the first is:
    /// the first notification is CON, so that a registration with a spoofed source address
    /// costs the victim at most that CON's retransmissions (RFC 7641 §7), not a day of NONs.
    last_con: Option<Instant>,
    /// Message ID of the last NON notification, so an RST to it deregisters (§3.6).
    last_non_mid: Option<u16>,
    pending: Option<Pending>,
    /// Notifications sent to it so far ([`NotifyPolicy::con_every`]).
    sent: u64,
}

/// A first CON notification's timeout and, with [`NotifyTimer::Controller`], its scratch.
type NotifyStart = (Duration, Option<Box<(coaplab_cc::Exchange, Vec<Instant>)>>);

/// Every observer, and the sequence counter they share.
#[derive(Debug, Default)]
pub(crate) struct Observers {
    pub(crate) list: Vec<Observer>,
    /// The next Observe value (24-bit, increasing with every change, §4.4).
    seq: u32,
    /// When the observed state changes next (`None` without observers).
    next_change: Option<Instant>,
}

/// Whether a CON notification is due given the last acknowledged one (`None`: never).
trait ConDue {
    fn is_none_or_due(&self, now: Instant) -> bool;
}

impl ConDue for Option<Instant> {
    fn is_none_or_due(&self, now: Instant) -> bool {
        !self.is_some_and(|t| t + CON_INTERVAL > now)
    }
}

/// When the counter of `period` changes next after `now` (the next multiple of the period).
pub(crate) fn next_tick(now: Instant, period: Duration) -> Instant {
    let p = period.as_nanos().max(1);
    let t = now.saturating_since(Instant::ZERO).as_nanos();
    Instant::ZERO + Duration::from_nanos((t / p + 1) * p)
}

/// Max-Age for a state that lasts until `next`: whole seconds, rounded up (§4.3).
pub(crate) fn max_age_s(now: Instant, next: Instant) -> u32 {
    let ns = next.saturating_since(now).as_nanos();
    u32::try_from((ns.max(0) + 999_999_999) / 1_000_000_000).unwrap_or(u32::MAX)
}

/// Encodes a notification: 2.05 with Observe, Content-Format, Max-Age and `body`.
#[allow(clippy::too_many_arguments)]
pub(crate) fn encode(
    out: &mut Vec<u8>,
    mtype: MessageType,
    mid: u16,
    token: Token,
    seq: Option<u32>,
    content_format: Option<u16>,
    max_age: u32,
    body: &[u8],
) {
    out.clear();
    out.resize(4 + 8 + 4 + 3 + 5 + 1 + body.len(), 0);
    let written = (|| {
        let mut w = MessageWriter::new(out, mtype, Code::CONTENT, mid, token)?;
        if let Some(s) = seq {
            w.option_uint(number::OBSERVE, s)?;
        }
        if let Some(f) = content_format {
            w.option_uint(number::CONTENT_FORMAT, u32::from(f))?;
        }
        w.option_uint(number::MAX_AGE, max_age)?;
        Ok::<usize, coaplab_wire::EncodeError>(w.finish())
    })();
    let mut len = written.unwrap_or(0);
    if !body.is_empty() && len > 0 {
        out[len] = 0xff;
        out[len + 1..len + 1 + body.len()].copy_from_slice(body);
        len += 1 + body.len();
    }
    out.truncate(len);
}

/// The observable state of resource `r` at `now` (`crate::Router`'s): Content-Format, body and
/// period; `None` when it is not observable.
pub(crate) type State<'a> = &'a dyn Fn(usize, Instant) -> Option<(Option<u16>, Vec<u8>, Duration)>;

impl Observers {
    /// Whether there is nothing to do (the hot path checks this first).
    pub(crate) fn is_empty(&self) -> bool {
        self.list.is_empty()
    }

    /// The earliest observe deadline: the next state change or a CON retransmission.
    pub(crate) fn next_deadline(&self) -> Option<Instant> {
        if self.is_empty() {
            return None;
        }
        let pending = self
            .list
            .iter()
            .filter_map(|o| o.pending.as_ref().map(|p| p.deadline))
            .min();
        earliest(self.next_change, pending)
    }

    /// The Observe value of the current state.
    fn seq(&self) -> u32 {
        self.seq
    }

    fn bump(&mut self) {
        self.seq = (self.seq + 1) % OBSERVE_SEQ_MODULUS;
    }

    /// Observers registered now.
    pub(crate) fn len(&self) -> usize {
        self.list.len()
    }

    /// Handles the Observe option of a GET of the observable content `resource` from
    /// `from` with `token` (§4.1): 0 registers (or re-registers), 1 deregisters. Returns the
    /// Observe value the response carries (`None`: a plain response). At most `limit`
    /// observers are kept ([`crate::Router::max_observers`]).
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn register(
        &mut self,
        out: &mut Outputs,
        limit: usize,
        now: Instant,
        from: SocketAddr,
        token: Token,
        resource: usize,
        observe: Option<u32>,
        period: Duration,
    ) -> Option<u32> {
        let existing = self
            .list
            .iter()
            .position(|o| o.peer == from && o.token == token);
        match observe {
            Some(0) => {}
            Some(1) => {
                if let Some(i) = existing {
                    self.list.swap_remove(i);
                    out.events.push_back(Event::ObserverRemoved {
                        peer: from,
                        reason: crate::event::ObserverGone::Deregistered,
                        at: now,
                    });
                }
                return None;
            }
            _ => return None,
        }
        match existing {
            Some(i) => self.list[i].resource = resource,
            None if self.list.len() >= limit => {
                out.events.push_back(Event::ObserverRefused {
                    peer: from,
                    at: now,
                });
                return None;
            }
            None => {
                self.list.push(Observer {
                    peer: from,
                    token,
                    resource,
                    last_con: None,
                    last_non_mid: None,
                    pending: None,
                    sent: 0,
                });
                out.events.push_back(Event::ObserverAdded {
                    peer: from,
                    at: now,
                });
            }
        }
        let tick = next_tick(now, period);
        // A change time left from observers since gone is stale: start from this one.
        self.next_change = Some(match self.next_change {
            Some(t) if t > now => t.min(tick),
            _ => tick,
        });
        Some(self.seq())
    }

    /// Sends the notifications and retransmissions due at `now`: the new states from `state`,
    /// sent under `policy`, with Message IDs from `ids` (and, with [`NotifyTimer::Controller`],
    /// the timeouts of `peers`' controllers).
    pub(crate) fn on_timeout(
        &mut self,
        now: Instant,
        state: State<'_>,
        policy: NotifyPolicy,
        peers: &mut Peers,
        ids: &mut MessageIds,
        out: &mut Outputs,
    ) {
        if self.is_empty() {
            self.next_change = None;
            return;
        }
        if self.next_change.is_some_and(|t| t <= now) {
            self.notify_all(now, state, policy, peers, ids, out);
        }
        let mut i = 0;
        while i < self.list.len() {
            let due = self.list[i]
                .pending
                .as_ref()
                .is_some_and(|p| p.deadline <= now);
            if !due {
                i += 1;
                continue;
            }
            let Some(timeout) = self.notify_expired(now, i, peers) else {
                // §4.5: a CON notification that times out ends the observation.
                let peer = self.list[i].peer;
                self.list.swap_remove(i);
                out.events.push_back(Event::ObserverRemoved {
                    peer,
                    reason: crate::event::ObserverGone::TimedOut,
                    at: now,
                });
                continue;
            };
            let o = &mut self.list[i];
            let p = o.pending.as_mut().expect("due");
            p.retransmits += 1;
            p.timeout = timeout;
            p.deadline = now + timeout;
            if let Some(cc) = p.cc.as_deref_mut() {
                cc.1.push(now);
            }
            let (dest, bytes, mid) = (o.peer, p.bytes.clone(), p.message_id);
            out.events.push_back(Event::NotificationRetransmitted {
                peer: dest,
                sequence: p.sequence,
                retransmission: p.retransmits,
                at: now,
            });
            push_notification(out, dest, bytes, mid);
            i += 1;
        }
    }

    /// The timer of observer `i`'s pending CON expired at `now`: the next timeout, or `None`
    /// to give up ([`NotifyTimer`]).
    fn notify_expired(&mut self, now: Instant, i: usize, peers: &mut Peers) -> Option<Duration> {
        let peer = self.list[i].peer;
        let p = self.list[i].pending.as_mut()?;
        let Some(cc) = p.cc.as_deref_mut() else {
            return (p.retransmits < NOTIFY_MAX_RETRANSMIT).then(|| p.timeout * 2);
        };
        let pi = peers.find(peer)?;
        let ctl = peers[pi].ctl.as_mut()?;
        match ctl.algorithm.expired(now, &mut cc.0, &mut *ctl.rng) {
            coaplab_cc::Expiry::Retransmit(t) => Some(t),
            coaplab_cc::Expiry::GiveUp => {
                ctl.algorithm.failed(now, &mut cc.0);
                None
            }
        }
    }

    /// The observed state changed: every observer is sent the new state (§4.2).
    fn notify_all(
        &mut self,
        now: Instant,
        state: State<'_>,
        policy: NotifyPolicy,
        peers: &mut Peers,
        ids: &mut MessageIds,
        out: &mut Outputs,
    ) {
        self.bump();
        let seq = self.seq();
        let mut next: Option<Instant> = None;
        for i in 0..self.list.len() {
            let (peer, token, resource) = {
                let o = &self.list[i];
                (o.peer, o.token, o.resource)
            };
            let Some((format, body, period)) = state(resource, now) else {
                continue;
            };
            let tick = next_tick(now, period);
            next = Some(next.map_or(tick, |t| t.min(tick)));
            let o = &self.list[i];
            // One CON outstanding per client (NSTART 1, §4.5.1): while another observation of
            // the same client waits for its ACK, a due CON goes out as NON and stays due.
            let client_busy = self
                .list
                .iter()
                .any(|x| x.peer == peer && x.token != token && x.pending.is_some());
            let k = u64::from(policy.con_every);
            let due = o.last_con.is_none_or_due(now) || (k > 0 && o.sent % k == 0);
            let con = o.pending.is_some() || (due && !client_busy);
            let fresh_con = con && o.pending.is_none();
            let start = if fresh_con {
                Some(notify_start(policy.timer, peers, now, peer))
            } else {
                None
            };
            let mid = ids.alloc(now);
            let mtype = if con {
                MessageType::Con
            } else {
                MessageType::Non
            };
            let mut bytes = out.buffer();
            encode(
                &mut bytes,
                mtype,
                mid,
                token,
                Some(seq),
                format,
                max_age_s(now, tick),
                &body,
            );
            out.events.push_back(Event::NotificationSent {
                peer,
                sequence: seq,
                confirmable: con,
                // The CON still waits for its ACK: this state rides on its next retransmission
                // (or never leaves if the ACK comes first), so it is not a datagram of its own.
                replaced: con && !fresh_con,
                at: now,
            });
            let o = &mut self.list[i];
            o.sent += 1;
            if !con {
                o.last_non_mid = Some(mid);
                push_notification(out, peer, bytes, mid);
                continue;
            }
            match o.pending.as_mut() {
                // §4.5.2: the newer state replaces the outstanding one; it goes out at the
                // pending notification's next retransmission, on the same timer.
                Some(p) => {
                    p.older_message_id = Some(p.message_id);
                    p.message_id = mid;
                    p.bytes = bytes;
                    p.sequence = seq;
                }
                None => {
                    let (timeout, cc) = start.unwrap_or((NOTIFY_ACK_TIMEOUT, None));
                    o.pending = Some(Pending {
                        message_id: mid,
                        older_message_id: None,
                        bytes: bytes.clone(),
                        retransmits: 0,
                        timeout,
                        deadline: now + timeout,
                        sequence: seq,
                        cc,
                    });
                    push_notification(out, peer, bytes, mid);
                }
            }
        }
        self.next_change = next;
    }

    /// An ACK or RST from `from` that may answer a notification; returns whether it did.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn on_ack_or_rst(
        &mut self,
        timer: NotifyTimer,
        peers: &mut Peers,
        out: &mut Outputs,
        now: Instant,
        from: SocketAddr,
        mid: u16,
        rst: bool,
    ) -> bool {
        let Some(i) = self.list.iter().position(|o| {
            o.peer == from
                && (o
                    .pending
                    .as_ref()
                    .is_some_and(|p| p.message_id == mid || p.older_message_id == Some(mid))
                    || (rst && o.last_non_mid == Some(mid)))
        }) else {
            return false;
        };
        if rst {
            // §3.6: an RST to a notification cancels the observation.
            self.list.swap_remove(i);
            out.events.push_back(Event::ObserverRemoved {
                peer: from,
                reason: crate::event::ObserverGone::Reset,
                at: now,
            });
            return true;
        }
        let o = &mut self.list[i];
        let mut p = o.pending.take().expect("matched");
        o.last_con = Some(now);
        if let Some(mut cc) = p.cc.take() {
            // The controller learns from the ACK as from a CON request's (no copy is marked).
            if let Some(ctl) = peers.controller_mut(from) {
                let c = coaplab_cc::Completion {
                    ack_time: now,
                    tx_times: &cc.1,
                    answered: None,
                    timer_in_force: cc.0.timer,
                };
                ctl.algorithm.completed(&c, &mut cc.0, &mut *ctl.rng);
            }
            if p.message_id != mid {
                // The ACK is for a replaced state: the newest goes out at once as a new CON.
                let (timeout, cc) = notify_start(timer, peers, now, from);
                let (bytes, newest_mid) = (p.bytes.clone(), p.message_id);
                let o = &mut self.list[i];
                o.pending = Some(Pending {
                    older_message_id: None,
                    retransmits: 0,
                    timeout,
                    deadline: now + timeout,
                    cc,
                    ..p
                });
                push_notification(out, from, bytes, newest_mid);
            } else {
                out.recycle(p.bytes);
            }
            return true;
        }
        if p.message_id != mid {
            // The ACK is for a replaced state; the newest still has to reach the client.
            let deadline = now;
            o.pending = Some(Pending {
                older_message_id: None,
                retransmits: 0,
                timeout: Duration::from_secs(1),
                deadline,
                ..p
            });
        } else {
            out.recycle(p.bytes);
        }
        true
    }
}

/// A first CON notification to `peer` goes out at `now`: its first timeout, and the
/// controller's scratch with [`NotifyTimer::Controller`] (from `peers`).
fn notify_start(
    timer: NotifyTimer,
    peers: &mut Peers,
    now: Instant,
    peer: SocketAddr,
) -> NotifyStart {
    if timer == NotifyTimer::Fixed {
        return (NOTIFY_ACK_TIMEOUT, None);
    }
    let pi = peers.slot(peer);
    let ctl = peers.ensure_controller(now, pi);
    let mut x = coaplab_cc::Exchange::new();
    let t0 = ctl
        .algorithm
        .start(now, coaplab_cc::Admission::ALONE, &mut x, &mut *ctl.rng);
    (t0, Some(Box::new((x, vec![now]))))
}

/// Queues a notification (or its retransmission) to `to`.
fn push_notification(out: &mut Outputs, to: SocketAddr, bytes: Vec<u8>, mid: u16) {
    out.transmits.push_back(Transmit {
        destination: to,
        contents: bytes,
        meta: TransmitMeta::Reply {
            message_id: mid,
            replayed: false,
        },
    });
}
