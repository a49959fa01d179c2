//! The deadlines of a run loop's owners (the CoAP loop's clients and servers, the TCP loop's
//! flows): one entry per owner in an indexed binary min-heap, so that a re-arm moves the
//! owner's entry in place and the loop only ever wakes for a live deadline.
//!
//! The CoAP loop used to keep a lazy heap (`super::deadlines`, now the tests' reference): every re-arm
//! pushed an entry and left the displaced one in the heap, to surface later as a stale
//! wake-up. A completed exchange displaces its retransmission deadline, so a congested
//! 400-flow run woke 20,000 times (of 150,000 events) for nothing. `runs.csv`'s `events`
//! counted those wake-ups until results format 3 (docs/scenarios.md, "Results format
//! versions"); it now counts the events the loop processes. The live firings are the lazy
//! heap's, in the same order. What is kept of the displaced deadlines is the latest one not
//! after the run's horizon ([`OwnerDeadlines::latest_displaced_by`]): where the lazy loop's
//! clock stopped when it ran out of events, which `sim_time_s` still reports.
//!
//! (Deferring a re-arm to a later instant until the entry surfaces, as the TCP loop once did,
//! executes more here, not less: nearly every displaced deadline is reached, one re-arm per
//! surfacing, and a sift from the root costs more than one from the entry's place.)

use coaplab_cc::time::Instant;

/// No heap position (the owner has no deadline).
const NONE: u32 = u32::MAX;

/// A heap entry: (instant, owner) packed into one integer that orders the same way, so that
/// each comparison on the hot path is one branch-free 128-bit compare.
type Key = u128;

fn key(at: Instant, who: u32) -> Key {
    // The sign bit flipped: negative instants order before positive ones.
    let nanos = (at.as_nanos() as u64) ^ (1 << 63);
    (Key::from(nanos) << 32) | Key::from(who)
}

fn instant_of(k: Key) -> Instant {
    Instant::from_nanos(((k >> 32) as u64 ^ (1 << 63)) as i64)
}

fn owner_of(k: Key) -> u32 {
    k as u32
}

/// One armed deadline per owner `0..owners`; ties pop in owner order.
#[derive(Debug)]
pub(super) struct OwnerDeadlines {
    /// A binary min-heap of [`Key`]s.
    heap: Vec<Key>,
    /// Per owner, its index in `heap` or [`NONE`].
    pos: Vec<u32>,
    /// The latest displaced deadline at or before `horizon`.
    latest_displaced: Option<Instant>,
    horizon: Instant,
}

impl OwnerDeadlines {
    /// No deadline armed for any of `owners` owners; `horizon`: the run's end, past which the
    /// loop never wakes. Of the displaced deadlines only the latest is kept.
    pub(super) fn new(owners: usize, horizon: Instant) -> Self {
        OwnerDeadlines {
            heap: Vec::with_capacity(owners),
            pos: vec![NONE; owners],
            latest_displaced: None,
            horizon,
        }
    }

    /// Arms owner `who` at `at` (`None` disarms). Arming the deadline already armed is free;
    /// any other re-arm displaces the armed one.
    pub(super) fn arm(&mut self, who: u32, at: Option<Instant>) {
        let p = self.pos[who as usize];
        let old = (p != NONE).then(|| instant_of(self.heap[p as usize]));
        if old == at {
            return;
        }
        if let Some(o) = old {
            if o <= self.horizon {
                self.latest_displaced = Some(self.latest_displaced.map_or(o, |l| l.max(o)));
            }
        }
        match (old, at) {
            (Some(o), Some(t)) if t < o => self.sift_up(p as usize, key(t, who)),
            // Later: down to the bottom along the smaller children, then up (few steps).
            (Some(_), Some(t)) => self.sift_down_from(p as usize, key(t, who)),
            (Some(_), None) => self.remove(p as usize),
            (None, Some(t)) => {
                self.heap.push(0);
                self.sift_up(self.heap.len() - 1, key(t, who));
            }
            (None, None) => {}
        }
    }

    /// The earliest armed deadline.
    pub(super) fn next_at(&self) -> Option<Instant> {
        self.heap.first().map(|&k| instant_of(k))
    }

    /// Pops the owner whose deadline is next, if due at or before `now` (it is disarmed).
    pub(super) fn pop_due(&mut self, now: Instant) -> Option<u32> {
        let &k = self.heap.first()?;
        if instant_of(k) > now {
            return None;
        }
        self.remove(0);
        Some(owner_of(k))
    }

    /// The latest displaced deadline at or before the horizon, if after `now`: where a lazy
    /// heap's loop that ran out of events before the horizon stopped its clock.
    pub(super) fn latest_displaced_by(&self, now: Instant) -> Instant {
        self.latest_displaced.map_or(now, |l| l.max(now))
    }

    /// Removes the entry at `i`: the last entry takes its place.
    fn remove(&mut self, i: usize) {
        self.pos[owner_of(self.heap[i]) as usize] = NONE;
        let Some(last) = self.heap.pop() else { return };
        if i < self.heap.len() {
            self.sift_down_from(i, last);
        }
    }

    /// Puts `entry` at the hole `i` or above it.
    fn sift_up(&mut self, mut i: usize, entry: Key) {
        while i > 0 {
            let parent = (i - 1) / 2;
            if self.heap[parent] <= entry {
                break;
            }
            self.place(i, self.heap[parent]);
            i = parent;
        }
        self.place(i, entry);
    }

    /// Puts `entry` at the hole `i` or below it: the hole goes down to a leaf along the
    /// smaller children, then `entry` goes up from there (the standard library's binary heap
    /// does the same: an entry that belongs near the bottom costs one compare per level).
    fn sift_down_from(&mut self, mut i: usize, entry: Key) {
        let n = self.heap.len();
        let mut child = 2 * i + 1;
        while child + 1 < n {
            child += usize::from(self.heap[child + 1] < self.heap[child]);
            self.place(i, self.heap[child]);
            i = child;
            child = 2 * i + 1;
        }
        if child + 1 == n {
            self.place(i, self.heap[child]);
            i = child;
        }
        self.sift_up(i, entry);
    }

    fn place(&mut self, i: usize, entry: Key) {
        self.heap[i] = entry;
        self.pos[owner_of(entry) as usize] = i as u32;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::deadlines::Deadlines;
    use coaplab_cc::time::Duration;

    /// What a loop saw: live firings (instant, owner) in order, and its event count.
    #[derive(Debug, Default, PartialEq)]
    struct Seen {
        fired: Vec<(Instant, u32)>,
        events: u64,
        stopped_at: Instant,
    }

    fn xorshift(seed: u64) -> impl FnMut() -> u64 {
        let mut rng = seed | 1;
        move || {
            rng ^= rng << 13;
            rng ^= rng >> 7;
            rng ^= rng << 17;
            rng
        }
    }

    /// A random arm for `now`: mostly later (an RTO restart), sometimes earlier or now,
    /// sometimes disarmed.
    fn random_arm(r: u64, now: Instant, owners: usize) -> (u32, Option<Instant>) {
        let who = (r % owners as u64) as u32;
        let at = match (r >> 8) % 8 {
            0 => None,
            1 => Some(now),
            _ => Some(now + Duration::from_millis((r >> 16) as i64 % 300)),
        };
        (who, at)
    }

    /// A loop's random stream after its first arms, and those arms (one per owner, at 0).
    fn start(seed: u64, owners: usize) -> (impl FnMut() -> u64, Vec<(u32, Option<Instant>)>) {
        let mut next = xorshift(seed);
        let arms = (0..owners)
            .map(|_| random_arm(next(), Instant::ZERO, owners))
            .collect();
        (next, arms)
    }

    /// The CoAP loop with the lazy heap: it wakes at every entry, stale or live, and counts
    /// each live pop (results format 3 on); a firing re-arms at random. It stops past `horizon` or out of entries
    /// (clock at its last wake), or after the first live wake at or after `done` (all flows
    /// done).
    fn lazy_loop(seed: u64, owners: usize, horizon: Instant, done: Instant) -> Seen {
        let mut d = Deadlines::new(owners);
        let (mut next, arms) = start(seed, owners);
        arms.into_iter().for_each(|(w, at)| d.arm(w, at));
        let mut now = Instant::ZERO;
        let mut seen = Seen::default();
        while let Some(t) = d.next_at().filter(|&t| t <= horizon) {
            now = t;
            let mut live_here = false;
            while let Some((w, live)) = d.pop_due(now) {
                if live {
                    seen.events += 1;
                    live_here = true;
                    seen.fired.push((now, w));
                    for _ in 0..(next() % 4) {
                        let (w, at) = random_arm(next(), now, owners);
                        d.arm(w, at);
                    }
                }
            }
            if live_here && now >= done {
                break;
            }
        }
        seen.stopped_at = now;
        seen
    }

    /// The same loop on [`OwnerDeadlines`]: it wakes only for live deadlines, as `Sim::run`
    /// does. Also: whether no deadline was left.
    fn owner_loop(seed: u64, owners: usize, horizon: Instant, done: Instant) -> (Seen, bool) {
        let mut d = OwnerDeadlines::new(owners, horizon);
        let (mut next, arms) = start(seed, owners);
        arms.into_iter().for_each(|(w, at)| d.arm(w, at));
        let mut now = Instant::ZERO;
        let mut seen = Seen::default();
        let ran_out = loop {
            let Some(t) = d.next_at().filter(|&t| t <= horizon) else {
                break true;
            };
            now = t;
            while let Some(w) = d.pop_due(now) {
                seen.events += 1;
                seen.fired.push((now, w));
                for _ in 0..(next() % 4) {
                    let (w, at) = random_arm(next(), now, owners);
                    d.arm(w, at);
                }
            }
            if now >= done {
                break false;
            }
        };
        seen.stopped_at = if ran_out {
            d.latest_displaced_by(now)
        } else {
            now
        };
        (seen, d.next_at().is_none())
    }

    #[test]
    fn fires_and_counts_as_the_lazy_heap_did_when_out_of_events() {
        let horizon = Instant::from_millis(1_000);
        let never = Instant::from_secs(1 << 30);
        let mut exhausted = 0;
        for seed in 1..300u64 {
            let owners = 1 + (seed % 9) as usize;
            let lazy = lazy_loop(seed, owners, horizon, never);
            let (owner, out) = owner_loop(seed, owners, horizon, never);
            assert_eq!(lazy, owner, "seed {seed}");
            exhausted += usize::from(out);
        }
        // Both ends occur: out of entries before the horizon, and cut by it.
        assert!((10..290).contains(&exhausted), "{exhausted} runs ran out");
    }

    #[test]
    fn fires_and_counts_as_the_lazy_heap_did_when_flows_finish() {
        let horizon = Instant::from_secs(1 << 30);
        let mut checked = 0;
        for seed in 1..300u64 {
            let owners = 1 + (seed % 9) as usize;
            // End at a live wake-up in the middle of the run.
            let whole = lazy_loop(seed, owners, horizon, horizon);
            let Some(&(done, _)) = whole.fired.get(whole.fired.len() / 2) else {
                continue;
            };
            let lazy = lazy_loop(seed, owners, horizon, done);
            assert_eq!(
                lazy,
                owner_loop(seed, owners, horizon, done).0,
                "seed {seed}"
            );
            checked += 1;
        }
        assert!(checked > 250);
    }

    #[test]
    fn rearming_moves_the_entry_and_records_the_displaced_deadline() {
        let mut d = OwnerDeadlines::new(3, Instant::from_secs(100));
        d.arm(1, Some(Instant::from_secs(2)));
        d.arm(0, Some(Instant::from_secs(2)));
        d.arm(1, Some(Instant::from_secs(1)));
        d.arm(2, Some(Instant::from_secs(5)));
        d.arm(2, None);
        d.arm(0, Some(Instant::from_secs(2)));
        assert_eq!(d.heap.len(), 2);
        assert_eq!(
            instant_of(key(Instant::from_nanos(-5), 7)),
            Instant::from_nanos(-5)
        );
        assert!(key(Instant::from_nanos(-5), 9) < key(Instant::ZERO, 0));
        assert_eq!(d.next_at(), Some(Instant::from_secs(1)));
        assert_eq!(d.pop_due(Instant::ZERO), None);
        assert_eq!(d.pop_due(Instant::from_secs(2)), Some(1));
        assert_eq!(d.pop_due(Instant::from_secs(2)), Some(0));
        assert_eq!(d.pop_due(Instant::from_secs(2)), None);
        // Displaced: owner 1's 2 s, owner 2's 5 s.
        assert_eq!(
            d.latest_displaced_by(Instant::from_secs(3)),
            Instant::from_secs(5)
        );
    }
}
