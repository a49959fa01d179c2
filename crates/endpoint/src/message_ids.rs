//! An endpoint's Message IDs (RFC 7252 §4.4): issued in sequence, none reused within its
//! lifetime, and the requests that wait, in order, until one is usable. A component of
//! [`crate::Endpoint`] that owns its state (the endpoint asks; only this module changes it).

use std::collections::VecDeque;

use coaplab_cc::time::{Duration, Instant};

/// Message IDs per group whose last issue time is kept (with a lifetime).
pub(crate) const MID_GROUP: usize = 1024;
/// Groups: 65,536 IDs / [`MID_GROUP`].
const MID_GROUPS: usize = (1 << 16) / MID_GROUP;

/// Whether a request may take a Message ID now.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Gate {
    /// It may.
    Go,
    /// It waits until `until`; `first`: no request was waiting before it (the endpoint
    /// reports the stall once).
    Stall { until: Instant, first: bool },
}

/// The Message ID sequence of one endpoint.
#[derive(Debug, Clone)]
pub(crate) struct MessageIds {
    /// The next ID to issue.
    next: u16,
    /// IDs issued so far.
    issued: u64,
    /// No ID is reused within this long (`None`: no check).
    lifetime: Option<Duration>,
    /// Per group of [`MID_GROUP`] IDs, when one of them was last issued (empty until the
    /// first is issued with a lifetime).
    last_issued: Vec<Option<Instant>>,
    /// Requests (by slot) waiting for a usable ID, in order.
    stalled: VecDeque<usize>,
    /// When the next ID is usable, while requests wait.
    free_at: Option<Instant>,
}

impl MessageIds {
    /// A sequence starting at `first`, no ID reused within `lifetime`.
    pub(crate) fn new(first: u16, lifetime: Option<Duration>) -> MessageIds {
        MessageIds {
            next: first,
            issued: 0,
            lifetime,
            last_issued: Vec::new(),
            stalled: VecDeque::new(),
            free_at: None,
        }
    }

    /// The ID the next exchange will use.
    pub(crate) fn next(&self) -> u16 {
        self.next
    }

    /// IDs issued so far.
    pub(crate) fn issued(&self) -> u64 {
        self.issued
    }

    /// Issues the next ID at `now`. Inline (issue 35: the call cost more than the
    /// counting).
    #[inline]
    pub(crate) fn alloc(&mut self, now: Instant) -> u16 {
        let m = self.next;
        self.next = m.wrapping_add(1);
        self.issued += 1;
        if self.lifetime.is_some() {
            self.note_issued(m, now);
        }
        m
    }

    /// ID `m` was issued at `now`: its group's last use, for the lifetime.
    #[inline]
    fn note_issued(&mut self, m: u16, now: Instant) {
        if self.last_issued.is_empty() {
            self.last_issued = vec![None; MID_GROUPS];
        }
        self.last_issued[usize::from(m) / MID_GROUP] = Some(now);
    }

    /// When the next ID may be issued, if not now: it opens a group of [`MID_GROUP`] IDs (or
    /// is the first issued) whose last use is younger than the lifetime. IDs are issued in
    /// sequence, so every ID of a group was issued by the time of its group's last use;
    /// inside a group opened this round nothing needs checking.
    fn wait(&self, now: Instant) -> Option<Instant> {
        let lifetime = self.lifetime?;
        let m = usize::from(self.next);
        let opened = self.issued > 0 && m % MID_GROUP != 0;
        if opened {
            return None;
        }
        let last = self.last_issued.get(m / MID_GROUP).copied().flatten()?;
        let free = last + lifetime;
        (free > now).then_some(free)
    }

    /// Request slot `req` wants an ID at `now`: it goes, or waits behind those waiting.
    pub(crate) fn gate(&mut self, now: Instant, req: usize) -> Gate {
        let first = self.stalled.is_empty();
        let wait = if first { self.wait(now) } else { self.free_at };
        let Some(until) = wait else {
            return Gate::Go;
        };
        self.stalled.push_back(req);
        self.free_at = Some(until);
        Gate::Stall { until, first }
    }

    /// Requests wait for an ID.
    pub(crate) fn any_stalled(&self) -> bool {
        !self.stalled.is_empty()
    }

    /// When the waiting requests may go on (`None`: none waits).
    pub(crate) fn deadline(&self) -> Option<Instant> {
        (!self.stalled.is_empty()).then_some(self.free_at).flatten()
    }

    /// The waiting requests, in order, once an ID is usable at `now` (empty before).
    pub(crate) fn take_ready(&mut self, now: Instant) -> VecDeque<usize> {
        if !self.free_at.is_some_and(|t| t <= now) {
            return VecDeque::new();
        }
        self.free_at = None;
        std::mem::take(&mut self.stalled)
    }

    /// Request slot `req` is cancelled: its slot may be reused at once, so it leaves the line.
    pub(crate) fn forget(&mut self, req: usize) {
        self.stalled.retain(|&q| q != req);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(t: i64) -> Instant {
        Instant::from_secs(t)
    }

    #[test]
    fn ids_wrap_and_a_group_waits_for_its_last_use_to_age() {
        let lifetime = Duration::from_secs(247);
        let mut ids = MessageIds::new(65_535, Some(lifetime));
        assert_eq!(ids.alloc(s(0)), 65_535);
        assert_eq!(ids.next(), 0);
        // ID 0 opens group 0, never used: it goes.
        assert_eq!(ids.gate(s(1), 7), Gate::Go);
        for _ in 0..65_536 - 1 {
            ids.alloc(s(1));
        }
        // Back at 65,535's group... then at 0 again: group 0 was last used at 1 s.
        assert_eq!(ids.alloc(s(2)), 65_535);
        assert_eq!(ids.issued(), 65_537);
        assert_eq!(
            ids.gate(s(3), 4),
            Gate::Stall {
                until: s(1) + lifetime,
                first: true
            }
        );
        assert_eq!(
            ids.gate(s(4), 5),
            Gate::Stall {
                until: s(1) + lifetime,
                first: false
            }
        );
        assert_eq!(ids.deadline(), Some(s(1) + lifetime));
        ids.forget(4);
        assert!(ids.take_ready(s(100)).is_empty());
        assert_eq!(ids.take_ready(s(248)), VecDeque::from([5]));
        assert!(!ids.any_stalled() && ids.deadline().is_none());
    }

    #[test]
    fn without_a_lifetime_every_id_goes_at_once() {
        let mut ids = MessageIds::new(0, None);
        for _ in 0..70_000 {
            ids.alloc(s(0));
        }
        assert_eq!(ids.gate(s(0), 1), Gate::Go);
        assert_eq!(ids.deadline(), None);
    }
}
