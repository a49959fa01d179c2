//! The deadlines of many owners (client endpoints, flows, the server) in one lazy min-heap.
//!
//! Re-arming an owner leaves its old entry in the heap; a stale entry is recognised when it
//! surfaces. Arming costs O(log n) and nothing is ever scanned, which keeps the event loop
//! independent of the number of flows. Two ways to re-arm:
//!
//! - **eager** ([`Deadlines::new`]): every re-arm pushes an entry, and every stale entry
//!   surfaces at its own instant. The CoAP loop counts each surfacing as an event of
//!   `runs.csv`, so its results depend on them.
//! - **deferred** ([`Deadlines::deferred`]): re-arming to a later instant than an entry the
//!   owner already has in the heap pushes nothing; when that earlier entry surfaces, it is
//!   pushed again at the owner's deadline of then. A TCP flow's deadline moves later on
//!   almost every acknowledgement (the RTO restarts), so most of its re-arms cost nothing and
//!   most stale wake-ups never happen. Live deadlines fire at the same instants and in the same
//!   order as in the eager heap; what differs is only the stale surfacings, which the TCP loop
//!   does not count, and the latest instant the loop woke at, which
//!   [`Deadlines::latest_displaced_by`] restores.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use coaplab_cc::time::Instant;

/// One armed deadline per owner `0..owners`; ties pop in owner order.
#[derive(Debug)]
pub(super) struct Deadlines {
    heap: BinaryHeap<Reverse<(Instant, u32)>>,
    armed: Vec<Option<Instant>>,
    /// `None` in eager mode.
    deferred: Option<Deferred>,
}

/// What the deferred mode keeps beyond the eager heap.
#[derive(Debug)]
struct Deferred {
    /// Per owner, the instant of an entry it has in the heap, if known.
    queued: Vec<Option<Instant>>,
    /// The latest deadline displaced by a re-arm (the instant of a stale entry of the eager
    /// heap), over the deadlines at or before `horizon`.
    latest_displaced: Option<Instant>,
    horizon: Instant,
}

impl Deadlines {
    /// No deadline armed for any of `owners` owners; every re-arm pushes (eager).
    pub(super) fn new(owners: usize) -> Self {
        Deadlines {
            heap: BinaryHeap::new(),
            armed: vec![None; owners],
            deferred: None,
        }
    }

    /// Like [`Deadlines::new`], re-arming to a later instant deferred (see the module docs);
    /// `horizon`: the run's end, past which displaced deadlines are not recorded.
    pub(super) fn deferred(owners: usize, horizon: Instant) -> Self {
        Deadlines {
            deferred: Some(Deferred {
                queued: vec![None; owners],
                latest_displaced: None,
                horizon,
            }),
            ..Deadlines::new(owners)
        }
    }

    /// Arms owner `who` at `at` (`None` disarms). Arming the deadline already armed is free.
    pub(super) fn arm(&mut self, who: u32, at: Option<Instant>) {
        let slot = &mut self.armed[who as usize];
        if *slot == at {
            return;
        }
        let old = std::mem::replace(slot, at);
        let Some(d) = &mut self.deferred else {
            if let Some(t) = at {
                self.heap.push(Reverse((t, who)));
            }
            return;
        };
        if let Some(old) = old.filter(|&t| t <= d.horizon) {
            d.latest_displaced = Some(d.latest_displaced.map_or(old, |l| l.max(old)));
        }
        let Some(t) = at else { return };
        let q = &mut d.queued[who as usize];
        if q.map_or(true, |q| t < q) {
            *q = Some(t);
            self.heap.push(Reverse((t, who)));
        }
    }

    /// The earliest entry's instant. It may be stale: waking then finds nothing live.
    pub(super) fn next_at(&self) -> Option<Instant> {
        self.heap.peek().map(|Reverse((t, _))| *t)
    }

    /// Pops the next entry due at or before `now`: the owner, and whether the entry is still
    /// that owner's armed deadline (it is then disarmed) or a stale one. In deferred mode a
    /// stale entry of an owner armed later is pushed again at that deadline.
    pub(super) fn pop_due(&mut self, now: Instant) -> Option<(u32, bool)> {
        let &Reverse((t, who)) = self.heap.peek()?;
        if t > now {
            return None;
        }
        self.heap.pop();
        let slot = &mut self.armed[who as usize];
        let live = *slot == Some(t);
        if live {
            *slot = None;
        }
        if let Some(d) = &mut self.deferred {
            let q = &mut d.queued[who as usize];
            if *q == Some(t) {
                *q = None;
            }
            if let Some(later) = slot.filter(|&a| q.map_or(true, |q| a < q)) {
                *q = Some(later);
                self.heap.push(Reverse((later, who)));
            }
        }
        Some((who, live))
    }

    /// The latest deadline displaced by a re-arm at or before the horizon, if it is after
    /// `now`. An eager heap would have woken its loop then (a stale entry), so a loop that
    /// ran to its horizon ends at that instant: the deferred loop's clock is moved there.
    pub(super) fn latest_displaced_by(&self, now: Instant) -> Instant {
        let latest = self.deferred.as_ref().and_then(|d| d.latest_displaced);
        latest.map_or(now, |l| l.max(now))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rearming_leaves_a_stale_entry_that_pops_as_such() {
        let mut d = Deadlines::new(2);
        d.arm(1, Some(Instant::from_secs(2)));
        d.arm(0, Some(Instant::from_secs(2)));
        d.arm(1, Some(Instant::from_secs(1)));
        d.arm(0, Some(Instant::from_secs(2)));
        assert_eq!(d.next_at(), Some(Instant::from_secs(1)));
        assert_eq!(d.pop_due(Instant::ZERO), None);
        let now = Instant::from_secs(2);
        // Owner 1 at 1 s (live), then the 2 s ties in owner order: 0 live, 1 stale.
        assert_eq!(d.pop_due(now), Some((1, true)));
        assert_eq!(d.pop_due(now), Some((0, true)));
        assert_eq!(d.pop_due(now), Some((1, false)));
        assert_eq!(d.pop_due(now), None);
        d.arm(0, None);
        assert_eq!(d.next_at(), None);
    }

    /// The live deadlines that fired: (instant, owner), in firing order.
    type Firings = Vec<(Instant, u32)>;

    /// Drives an eager and a deferred heap through the same random arms and pops, waking the
    /// way the loops do (at the earliest entry), and returns the live firings of each.
    fn live_firings(seed: u64) -> (Firings, Firings) {
        let owners = 7;
        let horizon = Instant::from_millis(5_000);
        let mut eager = Deadlines::new(owners);
        let mut deferred = Deadlines::deferred(owners, horizon);
        let mut rng = seed | 1;
        let mut next = move || {
            rng ^= rng << 13;
            rng ^= rng >> 7;
            rng ^= rng << 17;
            rng
        };
        let mut fired = (Vec::new(), Vec::new());
        let mut now = Instant::ZERO;
        for _ in 0..2_000 {
            let r = next();
            let who = (r % owners as u64) as u32;
            // Mostly later (an RTO restart), sometimes earlier, sometimes disarmed.
            let at = match (r >> 8) % 8 {
                0 => None,
                1 => Some(now),
                _ => Some(now + coaplab_cc::time::Duration::from_millis((r >> 16) as i64 % 300)),
            };
            eager.arm(who, at);
            deferred.arm(who, at);
            if (r >> 40) % 3 == 0 {
                // The loop wakes at the earliest live deadline (stale wake-ups change nothing).
                let Some(t) = eager.armed.iter().flatten().min().copied() else {
                    continue;
                };
                now = t;
                while let Some((w, live)) = eager.pop_due(now) {
                    if live {
                        fired.0.push((now, w));
                    }
                }
                while let Some((w, live)) = deferred.pop_due(now) {
                    if live {
                        fired.1.push((now, w));
                    }
                }
                assert_eq!(eager.armed, deferred.armed);
            }
        }
        (fired.0, fired.1)
    }

    #[test]
    fn deferred_rearming_fires_the_same_deadlines_in_the_same_order() {
        for seed in [1, 2, 3, 0x9e37_79b9_7f4a_7c15] {
            let (eager, deferred) = live_firings(seed);
            assert!(
                eager.len() > 100,
                "the test fires deadlines: {}",
                eager.len()
            );
            assert_eq!(eager, deferred);
        }
    }

    #[test]
    fn deferred_rearming_to_a_later_instant_pushes_nothing() {
        let mut d = Deadlines::deferred(1, Instant::from_secs(100));
        d.arm(0, Some(Instant::from_secs(1)));
        d.arm(0, Some(Instant::from_secs(2)));
        d.arm(0, Some(Instant::from_secs(3)));
        assert_eq!(d.heap.len(), 1);
        // The 1 s entry surfaces stale and goes back in at 3 s, where it fires.
        assert_eq!(d.pop_due(Instant::from_secs(1)), Some((0, false)));
        assert_eq!(d.next_at(), Some(Instant::from_secs(3)));
        assert_eq!(d.pop_due(Instant::from_secs(3)), Some((0, true)));
        assert_eq!(d.next_at(), None);
        // Earlier than the queued entry: pushed at once.
        d.arm(0, Some(Instant::from_secs(9)));
        d.arm(0, Some(Instant::from_secs(5)));
        assert_eq!(d.next_at(), Some(Instant::from_secs(5)));
        // The displaced deadlines (1, 2 s, then 9 s) as an eager heap's stale wake-ups.
        assert_eq!(
            d.latest_displaced_by(Instant::from_secs(4)),
            Instant::from_secs(9)
        );
    }
}
