//! The deadlines of a run loop's owners (the CoAP loop's clients and servers, the TCP loop's
//! flows): one deadline per owner in a tournament tree ([`OwnerDeadlines`]), so that a re-arm
//! replaces the owner's deadline in place and the loop only ever wakes for a live deadline.
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
//! surfacing, and a sift from the root cost more than one from the entry's place. What is
//! deferred is a pop's replay, to the popped owner's re-arm that follows it.)
//!
//! The tree holds 2 x 16 bytes per owner rounded up to a power of two (16 KiB at 400 owners,
//! the heap it replaced 8 KiB): at 400 UDP flows 0.05 more simulated 1-MiB-L2 misses per link
//! packet (6.455 -> 6.509) and 1.0 fewer L1D misses, for 84 fewer instructions (issue 35).

use coaplab_cc::time::Instant;

/// An owner's deadline and the owner packed into one integer that orders as (instant, owner),
/// so that each match on the hot path is one 128-bit compare; an unarmed
/// owner's key ([`unarmed`]) orders after every armed one.
type Key = u128;

/// The instant bits of an unarmed owner's key. (The instant `i64::MAX` nanoseconds, 292 years,
/// has the same bits and counts as not armed; no run reaches it.)
const UNARMED: u64 = u64::MAX;

/// No owner popped and not yet re-armed ([`OwnerDeadlines::popped`]).
const NO_POP: u32 = u32::MAX;

/// The instant bits of a key: the nanoseconds with the sign bit flipped, so that negative
/// instants order before positive ones.
fn nanos_key(at: Instant) -> u64 {
    (at.as_nanos() as u64) ^ (1 << 63)
}

fn key(at: Option<Instant>, who: u32) -> Key {
    (Key::from(at.map_or(UNARMED, nanos_key)) << 32) | Key::from(who)
}

fn unarmed(who: u32) -> Key {
    key(None, who)
}

fn instant_of(k: Key) -> Option<Instant> {
    let nanos = (k >> 32) as u64;
    (nanos != UNARMED).then(|| Instant::from_nanos((nanos ^ (1 << 63)) as i64))
}

fn owner_of(k: Key) -> u32 {
    k as u32
}

/// One armed deadline per owner `0..owners`; ties pop in owner order.
///
/// A tournament tree over the owners: each node holds the least [`Key`] of its subtree, so a
/// re-arm replays the matches on the owner's path from its leaf, up to the first node it
/// leaves as it was. The indexed binary heap this replaced sifted its last entry down from the
/// root on every pop, about 300 instructions at 400 owners (issue 35).
///
/// A pop leaves the popped owner's leaf in place until the next call: the loop re-arms the
/// owner it popped before anything else, and that one replay of the path replaces the pop's.
#[derive(Debug)]
pub(super) struct OwnerDeadlines {
    /// The tree: node `i`'s children are `2i` and `2i + 1`, node 1 is the root, and the
    /// leaves `leaves..2 * leaves` are the owners in order (padded with unarmed ones).
    nodes: Vec<Key>,
    /// The number of leaves (a power of two, at least 2).
    leaves: usize,
    /// The owner popped last, whose leaf still holds its deadline although it is not armed;
    /// [`NO_POP`] when none.
    popped: u32,
    /// The latest displaced deadline at or before `horizon`.
    latest_displaced: Option<Instant>,
    horizon: Instant,
}

impl OwnerDeadlines {
    /// No deadline armed for any of `owners` owners; `horizon`: the run's end, past which the
    /// loop never wakes. Of the displaced deadlines only the latest is kept.
    pub(super) fn new(owners: usize, horizon: Instant) -> Self {
        assert!(owners < NO_POP as usize, "{owners} owners");
        let leaves = owners.next_power_of_two().max(2);
        let mut nodes = vec![0; 2 * leaves];
        for (w, node) in nodes[leaves..].iter_mut().enumerate() {
            *node = unarmed(w as u32);
        }
        for i in (1..leaves).rev() {
            nodes[i] = nodes[2 * i].min(nodes[2 * i + 1]);
        }
        OwnerDeadlines {
            nodes,
            leaves,
            popped: NO_POP,
            latest_displaced: None,
            horizon,
        }
    }

    /// Arms owner `who` at `at` (`None` disarms). Arming the deadline already armed is free;
    /// any other re-arm displaces the armed one.
    #[inline]
    pub(super) fn arm(&mut self, who: u32, at: Option<Instant>) {
        let new = key(at, who);
        // Inline, the owner just popped (its re-arm after its timer fired) and the re-arm
        // that changes nothing (a server's, or a client whose deadline did not move): no call.
        if self.popped == who {
            // Not armed since the pop: nothing is displaced.
            self.popped = NO_POP;
            self.replay::<true>(who, new);
            return;
        }
        if self.popped == NO_POP && self.nodes[self.leaves + who as usize] == new {
            return;
        }
        self.rearm(who, new);
    }

    /// [`OwnerDeadlines::arm`] with the new key, when it may change something and `who` is
    /// not the owner popped last.
    #[inline(never)]
    fn rearm(&mut self, who: u32, new: Key) {
        self.settle_pop();
        let old = self.nodes[self.leaves + who as usize];
        if old == new {
            return;
        }
        if let Some(o) = instant_of(old) {
            if o <= self.horizon {
                self.latest_displaced = Some(self.latest_displaced.map_or(o, |l| l.max(o)));
            }
        }
        self.replay::<false>(who, new);
    }

    /// The earliest armed deadline.
    #[inline]
    pub(super) fn next_at(&self) -> Option<Instant> {
        if self.popped != NO_POP {
            return self.next_after_pop();
        }
        instant_of(self.nodes[1])
    }

    /// [`OwnerDeadlines::next_at`] between a pop and the popped owner's re-arm (rare): it
    /// holds the root, so the least of the others is among its path's siblings.
    #[cold]
    fn next_after_pop(&self) -> Option<Instant> {
        let mut i = self.leaves + self.popped as usize;
        let mut least = unarmed(self.popped);
        while i > 1 {
            least = least.min(self.nodes[i ^ 1]);
            i /= 2;
        }
        instant_of(least)
    }

    /// Pops the owner whose deadline is next, if due at or before `now` (it is disarmed).
    #[inline]
    pub(super) fn pop_due(&mut self, now: Instant) -> Option<u32> {
        self.settle_pop();
        let k = self.nodes[1];
        let at = (k >> 32) as u64;
        if at == UNARMED || at > nanos_key(now) {
            return None;
        }
        self.popped = owner_of(k);
        Some(self.popped)
    }

    /// The latest displaced deadline at or before the horizon, if after `now`: where a lazy
    /// heap's loop that ran out of events before the horizon stopped its clock.
    pub(super) fn latest_displaced_by(&self, now: Instant) -> Instant {
        self.latest_displaced.map_or(now, |l| l.max(now))
    }

    /// Disarms the owner popped last if it was not armed again since.
    #[inline]
    fn settle_pop(&mut self) {
        if self.popped != NO_POP {
            self.disarm_popped();
        }
    }

    /// [`OwnerDeadlines::settle_pop`]'s replay, out of line: the CoAP loop re-arms every
    /// owner it pops, so it never gets here.
    #[cold]
    fn disarm_popped(&mut self) {
        let p = std::mem::replace(&mut self.popped, NO_POP);
        self.replay::<true>(p, unarmed(p));
    }

    /// Sets owner `who`'s leaf to `k` and replays the matches above it. `TO_ROOT`: every one,
    /// without testing each node for no change, for the owner just popped, whose old key was
    /// the least of every node on the way, so each one changes (the test cost ~9 instructions
    /// per level, 9 levels at 400 owners, once per timer that fires: issue 35). Otherwise up to
    /// the first node whose least key stays the same (the nodes above it do too): other
    /// owners' re-arms often stop early (replaying them to the root cost more at 100 UDP
    /// flows: 218 instead of 176 instructions per re-arm).
    #[inline]
    fn replay<const TO_ROOT: bool>(&mut self, who: u32, k: Key) {
        debug_assert!((who as usize) < self.leaves, "owner {who}");
        let nodes = &mut self.nodes[..];
        // Every index masked with the length less one (a power of two, not zero): the
        // compiler then knows each is in bounds, one `and` instead of a compare and a branch.
        let mask = nodes.len().wrapping_sub(1);
        if nodes.is_empty() {
            return;
        }
        let mut i = (self.leaves + who as usize) & mask;
        nodes[i] = k;
        let mut least = k;
        while i > 1 {
            least = least.min(nodes[(i ^ 1) & mask]);
            i /= 2;
            let parent = &mut nodes[i & mask];
            if !TO_ROOT && *parent == least {
                return;
            }
            *parent = least;
        }
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
            let owners = 1 + (seed % 37) as usize;
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
            let owners = 1 + (seed % 37) as usize;
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
    fn a_popped_owner_is_unarmed_until_it_is_armed_again() {
        let mut d = OwnerDeadlines::new(5, Instant::from_secs(100));
        for (who, s) in [(3, 1), (1, 4), (4, 2), (0, 3)] {
            d.arm(who, Some(Instant::from_secs(s)));
        }
        assert_eq!(d.pop_due(Instant::from_secs(1)), Some(3));
        // Before the popped owner is armed again: the next deadline is another's.
        assert_eq!(d.next_at(), Some(Instant::from_secs(2)));
        // Another owner's re-arm first: the popped one stays unarmed.
        d.arm(4, Some(Instant::from_secs(5)));
        assert_eq!(d.next_at(), Some(Instant::from_secs(3)));
        assert_eq!(d.pop_due(Instant::from_secs(3)), Some(0));
        // The popped owner armed again: no displaced deadline recorded for it.
        d.arm(0, Some(Instant::from_secs(1)));
        assert_eq!(d.pop_due(Instant::from_secs(1)), Some(0));
        assert_eq!(d.pop_due(Instant::from_secs(9)), Some(1));
        assert_eq!(d.pop_due(Instant::from_secs(9)), Some(4));
        assert_eq!(d.pop_due(Instant::from_secs(9)), None);
        assert_eq!(d.next_at(), None);
        // Displaced: owner 4's 2 s only.
        assert_eq!(d.latest_displaced_by(Instant::ZERO), Instant::from_secs(2));
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
        let armed = d.nodes[d.leaves..]
            .iter()
            .filter(|&&k| instant_of(k).is_some());
        assert_eq!(armed.count(), 2);
        assert_eq!(
            instant_of(key(Some(Instant::from_nanos(-5)), 7)),
            Some(Instant::from_nanos(-5))
        );
        assert!(key(Some(Instant::from_nanos(-5)), 9) < key(Some(Instant::ZERO), 0));
        assert!(key(Some(Instant::from_secs(1 << 30)), 0) < unarmed(0));
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
