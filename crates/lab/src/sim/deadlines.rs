//! The lazy min-heap of deadlines the run loops used before [`super::owner_deadlines`], kept
//! as the reference its tests compare against (built for tests only).
//!
//! Every re-arm pushes an entry and leaves the displaced one in the heap; a stale entry is
//! recognised when it surfaces, at its own instant. The CoAP loop counted each surfacing as an
//! event of `runs.csv` until results format 3.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use coaplab_cc::time::Instant;

/// One armed deadline per owner `0..owners`; ties pop in owner order.
#[derive(Debug)]
pub(super) struct Deadlines {
    heap: BinaryHeap<Reverse<(Instant, u32)>>,
    armed: Vec<Option<Instant>>,
}

impl Deadlines {
    /// No deadline armed for any of `owners` owners.
    pub(super) fn new(owners: usize) -> Self {
        Deadlines {
            heap: BinaryHeap::new(),
            armed: vec![None; owners],
        }
    }

    /// Arms owner `who` at `at` (`None` disarms). Arming the deadline already armed is free.
    pub(super) fn arm(&mut self, who: u32, at: Option<Instant>) {
        let slot = &mut self.armed[who as usize];
        if *slot == at {
            return;
        }
        *slot = at;
        if let Some(t) = at {
            self.heap.push(Reverse((t, who)));
        }
    }

    /// The earliest entry's instant. It may be stale: waking then finds nothing live.
    pub(super) fn next_at(&self) -> Option<Instant> {
        self.heap.peek().map(|Reverse((t, _))| *t)
    }

    /// Pops the next entry due at or before `now`: the owner, and whether the entry is still
    /// that owner's armed deadline (it is then disarmed) or a stale one.
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
        Some((who, live))
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
}
