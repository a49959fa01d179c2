//! The mesh's event agenda: [`crate::engine::EventQueue`]'s contract (integer time, ties in
//! insertion order, an instant before the last popped one clamped to it) as a *radix heap*.
//!
//! Why not the engine's binary heap: a Ch. 6 grid run with ACKs pops 1.5 M events (seven per data
//! frame: backoff, CCA, start, end, ACK start and end, ACK wait) from a heap of about 1,500
//! entries (RPL timers minutes ahead, retransmission backoffs up to a second ahead, the MAC
//! steps microseconds ahead). Each pop walked ten levels of 32-byte entries, one dependent load
//! and one unpredictable branch per level: about a third of the run's time (docs/BENCHMARKS.md,
//! "Issue 35, part 3").
//!
//! A radix heap needs keys that never go below the last one popped, which the clamping gives:
//! every event's time is at or after the last popped instant. Entries sit in bucket `b` = one
//! more than the position of the highest bit in which their time differs from the last popped
//! time (bucket 0: the same instant). A push is one append. A pop takes the earliest entry of
//! the lowest non-empty bucket (each bucket keeps its least) and redistributes that bucket's
//! other entries relative to it, each into a strictly lower bucket; an entry moves at most once
//! per bit of time, and in practice a few times, along plain vectors.
//!
//! Ties need no sequence number: events of one instant always share a bucket (the bucket is a
//! function of the time), a push appends, and a redistribution moves a bucket's entries in
//! their order into buckets that hold no event of their instants; so within every bucket the
//! events of one instant stand in insertion order, the least of a bucket is the *first* entry of
//! its earliest instant, and bucket 0 (the last popped instant) is a FIFO. An entry is its time
//! and the event: 16 bytes for an 8-byte event, not the 24 with a sequence number. The order is
//! exactly the engine's `(time, sequence)` order, so the pops are the same events in the same
//! order (the tests check this against [`crate::engine::EventQueue`]).

use coaplab_base::time::Instant;

/// Buckets: one per bit of the 64-bit time but the sign bit (every event's instant is at or
/// after [`Instant::ZERO`], so every time and `last` agree on it), and bucket 0 for the last
/// popped instant; so the non-empty buckets fit one `u64` mask. The arrays have one more
/// (never used): every index [`bucket`] and `trailing_zeros` can give is then in bounds,
/// and the compiler drops the bounds checks.
const BUCKETS: usize = 64;
const SLOTS: usize = BUCKETS + 1;

/// An instant as the radix heap's key: its nanoseconds with the sign bit flipped, so that
/// negative instants order first (as the engine packs it).
fn time_bits(at: Instant) -> u64 {
    (at.as_nanos() as u64) ^ (1 << 63)
}

fn unpack_time(bits: u64) -> Instant {
    Instant::from_nanos((bits ^ (1 << 63)) as i64)
}

/// The bucket of an event at `bits`, relative to the last popped time `last` (not above it).
fn bucket(bits: u64, last: u64) -> usize {
    (u64::BITS - (bits ^ last).leading_zeros()) as usize
}

/// One pending event.
#[derive(Debug, Clone, Copy)]
struct Entry<E> {
    time_bits: u64,
    event: E,
}

/// A bucket's earliest entry: its time and index ([`NO_MIN`] when the bucket is empty).
#[derive(Debug, Clone, Copy)]
struct Least {
    time_bits: u64,
    index: u32,
}

const NO_MIN: Least = Least {
    time_bits: u64::MAX,
    index: 0,
};

/// A deterministic agenda of events of type `E` (see the module doc), popped in the order of
/// [`crate::engine::EventQueue`] for the same calls.
#[derive(Debug)]
pub struct Agenda<E> {
    buckets: [Vec<Entry<E>>; SLOTS],
    /// Bucket 0's entries before this index are popped (it is a FIFO of the last popped
    /// instant, cleared when it runs empty).
    head: usize,
    /// Per bucket but 0, its earliest entry: an entry leaves a bucket only as its least
    /// (popped) or with all the others (redistributed), so the pushes alone keep this up to
    /// date, and finding the least is O(1).
    mins: [Least; SLOTS],
    /// Bit `b` set: bucket `b` is not empty.
    nonempty: u64,
    /// The last popped time ([`Instant::ZERO`] before the first pop); no pending event is
    /// earlier.
    last: u64,
    scheduled: u64,
}

impl<E: Copy> Default for Agenda<E> {
    fn default() -> Self {
        Agenda::new()
    }
}

impl<E: Copy> Agenda<E> {
    /// An empty agenda at [`Instant::ZERO`].
    pub fn new() -> Self {
        Agenda {
            buckets: std::array::from_fn(|_| Vec::new()),
            head: 0,
            mins: [NO_MIN; SLOTS],
            nonempty: 0,
            last: time_bits(Instant::ZERO),
            scheduled: 0,
        }
    }

    /// The time of the last popped event ([`Instant::ZERO`] before the first pop).
    pub fn now(&self) -> Instant {
        unpack_time(self.last)
    }

    /// Schedules `event` at `at`; an instant before [`Agenda::now`] is clamped to it (the event
    /// fires next among those at `now`, after the ones already scheduled there).
    // Always inlined, as are `put` and `pop_from`: out of line, their register saves and
    // restores were a third of their instructions (callgrind, docs/BENCHMARKS.md).
    #[inline(always)]
    pub fn schedule(&mut self, at: Instant, event: E) {
        self.scheduled += 1;
        let bits = time_bits(at).max(self.last);
        self.put(
            Entry {
                time_bits: bits,
                event,
            },
            bucket(bits, self.last),
        );
    }

    /// Appends `entry` to bucket `b` (its bucket relative to `last`).
    #[inline(always)]
    fn put(&mut self, entry: Entry<E>, b: usize) {
        let v = &mut self.buckets[b];
        v.push(entry);
        self.nonempty |= 1 << b;
        // Strictly earlier only: on a tie the entry pushed first stays the least.
        if entry.time_bits < self.mins[b].time_bits {
            self.mins[b] = Least {
                time_bits: entry.time_bits,
                index: (v.len() - 1) as u32,
            };
        }
    }

    /// The lowest non-empty bucket, which holds the earliest event.
    fn lowest(&self) -> Option<usize> {
        (self.nonempty != 0).then(|| self.nonempty.trailing_zeros() as usize)
    }

    /// The earliest entry's index in bucket `b` (not empty).
    fn least(&self, b: usize) -> usize {
        if b == 0 {
            self.head
        } else {
            self.mins[b].index as usize
        }
    }

    /// The firing time of the earliest pending event.
    pub fn peek_time(&self) -> Option<Instant> {
        self.peek().map(|(at, _)| at)
    }

    /// The earliest pending event and its time.
    pub fn peek(&self) -> Option<(Instant, &E)> {
        let b = self.lowest()?;
        let e = &self.buckets[b][self.least(b)];
        Some((unpack_time(e.time_bits), &e.event))
    }

    /// Removes the earliest pending event if it is due at or before `now`, advancing
    /// [`Agenda::now`] to its time.
    pub fn pop_due(&mut self, now: Instant) -> Option<(Instant, E)> {
        self.pop_due_if(now, |_| true)
    }

    /// Removes the earliest pending event if it is due at or before `now` and `take` accepts
    /// it, advancing [`Agenda::now`] to its time: [`Agenda::peek`] and [`Agenda::pop`] in one
    /// look-up.
    #[inline(always)]
    pub fn pop_due_if(
        &mut self,
        now: Instant,
        take: impl FnOnce(&E) -> bool,
    ) -> Option<(Instant, E)> {
        let b = self.lowest()?;
        let e = &self.buckets[b][self.least(b)];
        if e.time_bits > time_bits(now) || !take(&e.event) {
            return None;
        }
        Some(self.pop_from(b))
    }

    /// Removes the earliest pending event, advancing [`Agenda::now`] to its time.
    pub fn pop(&mut self) -> Option<(Instant, E)> {
        let b = self.lowest()?;
        Some(self.pop_from(b))
    }

    /// Pops the earliest event, in bucket `b`, the lowest non-empty one (bucket order follows
    /// time order above `last`).
    #[inline(always)]
    fn pop_from(&mut self, b: usize) -> (Instant, E) {
        if b == 0 {
            // The same instant as before: first in, first out.
            let v = &mut self.buckets[0];
            let entry = v[self.head];
            self.head += 1;
            if self.head == v.len() {
                v.clear();
                self.head = 0;
                self.nonempty &= !1;
            }
            return (unpack_time(entry.time_bits), entry.event);
        }
        let i = self.mins[b].index as usize;
        self.mins[b] = NO_MIN;
        self.nonempty &= !(1 << b);
        // The bucket's other entries go below, relative to the new last time, in their order:
        // each differs from it first in a lower bit than in the one that put it in `b`, and
        // those of the popped instant (all after it) join the empty bucket 0. Split borrows
        // instead of taking the bucket out and back: most popped buckets hold one or two
        // entries.
        let (lower, rest) = self.buckets.split_at_mut(b);
        let v = &mut rest[0];
        let entry = v[i];
        let last = entry.time_bits;
        self.last = last;
        let (mins, nonempty) = (&mut self.mins, &mut self.nonempty);
        let mut place = |e: Entry<E>| {
            let to = bucket(e.time_bits, last);
            let bucket = &mut lower[to];
            bucket.push(e);
            *nonempty |= 1 << to;
            let min = &mut mins[to];
            if e.time_bits < min.time_bits {
                *min = Least {
                    time_bits: e.time_bits,
                    index: (bucket.len() - 1) as u32,
                };
            }
        };
        // Two plain loops around the popped entry (a chained iterator tests which half it is
        // in at every step).
        v[..i].iter().for_each(|&e| place(e));
        v[i + 1..].iter().for_each(|&e| place(e));
        v.clear();
        (unpack_time(last), entry.event)
    }

    /// Number of pending events: counted when asked (the tests do), not kept up to date by
    /// every push and pop.
    pub fn len(&self) -> usize {
        self.buckets.iter().map(Vec::len).sum::<usize>() - self.head
    }

    /// Whether no event is pending.
    pub fn is_empty(&self) -> bool {
        self.nonempty == 0
    }

    /// Events scheduled since creation.
    pub fn scheduled_total(&self) -> u64 {
        self.scheduled
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::EventQueue;

    #[test]
    fn ties_fire_in_insertion_order_and_early_instants_are_clamped() {
        let mut q = Agenda::new();
        q.schedule(Instant::from_millis(5), "b");
        q.schedule(Instant::from_millis(1), "a");
        q.schedule(Instant::from_millis(5), "c");
        assert_eq!(q.peek(), Some((Instant::from_millis(1), &"a")));
        assert_eq!(q.pop(), Some((Instant::from_millis(1), "a")));
        // Before `now` (1 ms): clamped to 1 ms, so it fires before the 5-ms events.
        q.schedule(Instant::ZERO, "z");
        assert_eq!(q.pop(), Some((Instant::from_millis(1), "z")));
        assert_eq!(q.pop_due(Instant::from_millis(4)), None);
        assert_eq!(
            q.pop_due(Instant::from_millis(5)),
            Some((Instant::from_millis(5), "b"))
        );
        assert_eq!(q.pop(), Some((Instant::from_millis(5), "c")));
        assert_eq!((q.pop(), q.len(), q.scheduled_total()), (None, 0, 4));
    }

    #[test]
    fn pops_the_engines_order_under_a_mesh_like_mix_of_horizons() {
        // Same calls into both queues: events from nanoseconds to minutes ahead, many ties,
        // interleaved pops, peeks and pop_due with horizons; every result must be equal.
        let mut engine = EventQueue::new();
        let mut agenda = Agenda::new();
        let mut rng = 0x2545_f491_4f6c_dd1du64;
        let mut next = || {
            rng ^= rng << 13;
            rng ^= rng >> 7;
            rng ^= rng << 17;
            rng
        };
        let mut popped = 0;
        for i in 0..200_000u32 {
            let r = next();
            let now = engine.now().as_nanos();
            match r % 8 {
                0..=3 => {
                    let ahead = match (r >> 8) % 6 {
                        0 => 0,
                        1 => (r >> 16) as i64 % 1_000,
                        2 => (r >> 16) as i64 % 200_000,
                        3 => (r >> 16) as i64 % 1_000_000_000,
                        4 => (r >> 16) as i64 % 600_000_000_000,
                        // Behind `now`: clamped by both.
                        _ => -((r >> 16) as i64 % 5_000),
                    };
                    let at = Instant::from_nanos(now + ahead);
                    engine.schedule(at, i);
                    agenda.schedule(at, i);
                }
                4 | 5 => {
                    assert_eq!(agenda.peek().map(|(t, &e)| (t, e)), {
                        let t = engine.peek_time();
                        let e = engine.pop();
                        if let Some((at, ev)) = e {
                            engine.schedule(at, ev); // put back: a later sequence number
                            agenda.pop();
                            agenda.schedule(at, ev);
                        }
                        t.zip(e.map(|(_, ev)| ev))
                    });
                }
                _ => {
                    let due = Instant::from_nanos(now + (r >> 8) as i64 % 300_000);
                    loop {
                        let (a, b) = (engine.pop_due(due), agenda.pop_due(due));
                        assert_eq!(a, b);
                        if a.is_none() {
                            break;
                        }
                        popped += 1;
                    }
                }
            }
            assert_eq!(agenda.len(), engine.len());
            assert_eq!(agenda.now(), engine.now());
        }
        while let Some(e) = engine.pop() {
            assert_eq!(agenda.pop(), Some(e));
            popped += 1;
        }
        assert_eq!(agenda.pop(), None);
        assert_eq!(agenda.scheduled_total(), engine.scheduled_total());
        assert!(popped > 50_000, "{popped}");
    }
}
