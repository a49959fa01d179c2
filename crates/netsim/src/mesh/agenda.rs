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
//! every key is `(time, sequence)` with the time at or after the last popped instant and a
//! fresh, larger sequence number. Entries sit in bucket `b` = one more than the position of the
//! highest bit in which their *time* differs from the last popped time (bucket 0: the same
//! instant, where the sequence numbers order them). A push is one append. A pop takes the least
//! key from the lowest non-empty bucket (each bucket keeps its least) and redistributes that
//! bucket's other entries relative to it, each into a strictly lower bucket; an entry moves at
//! most once per bit of time, and in practice a few times, along plain vectors. The keys and
//! their order are exactly the engine's, so the pops are the same events in the same order (the
//! tests check this against [`crate::engine::EventQueue`]).

use coaplab_base::time::Instant;

/// Buckets: one per bit of the 64-bit time but the sign bit (every key's instant is at or
/// after [`Instant::ZERO`], so every key and `last` agree on it), and bucket 0 for the last
/// popped instant; so the non-empty buckets fit one `u64` mask.
const BUCKETS: usize = 64;

/// A key `(time, sequence)`: time in the high half, its sign bit flipped so that negative
/// instants order first (as the engine packs it).
type Key = u128;

fn pack(at: Instant, seq: u64) -> Key {
    let time_bits = (at.as_nanos() as u64) ^ (1 << 63);
    (Key::from(time_bits) << 64) | Key::from(seq)
}

fn unpack_time(key: Key) -> Instant {
    Instant::from_nanos((((key >> 64) as u64) ^ (1 << 63)) as i64)
}

/// The bucket of a key whose time half is `time_bits`, relative to the last popped key `last`
/// (the key is above it).
fn bucket(time_bits: u64, last: Key) -> usize {
    (u64::BITS - (time_bits ^ (last >> 64) as u64).leading_zeros()) as usize
}

/// One pending event. The key is stored as two halves so that an entry is 24 bytes for an
/// 8-byte event, not the 32 a `u128` field's alignment would make it.
#[derive(Debug)]
struct Entry<E> {
    time_bits: u64,
    seq: u64,
    event: E,
}

impl<E> Entry<E> {
    fn key(&self) -> Key {
        (Key::from(self.time_bits) << 64) | Key::from(self.seq)
    }
}

/// A deterministic agenda of events of type `E` (see the module doc), popped in the order of
/// [`crate::engine::EventQueue`] for the same calls.
#[derive(Debug)]
pub struct Agenda<E> {
    buckets: Vec<Vec<Entry<E>>>,
    /// Per bucket, its least key and that entry's index ([`Key::MAX`] when empty): an entry
    /// leaves a bucket only as its least (popped) or with all the others (redistributed), so
    /// the pushes alone keep this up to date, and finding the least key is O(1).
    mins: Vec<(Key, usize)>,
    /// Bit `b` set: bucket `b` is not empty.
    nonempty: u64,
    /// The last popped key ([`Instant::ZERO`]'s first key before the first pop); every
    /// pending key is greater.
    last: Key,
    next_seq: u64,
    now: Instant,
    len: usize,
}

impl<E> Default for Agenda<E> {
    fn default() -> Self {
        Agenda::new()
    }
}

impl<E> Agenda<E> {
    /// An empty agenda at [`Instant::ZERO`].
    pub fn new() -> Self {
        Agenda {
            buckets: (0..BUCKETS).map(|_| Vec::new()).collect(),
            mins: vec![(Key::MAX, 0); BUCKETS],
            nonempty: 0,
            last: pack(Instant::ZERO, 0),
            next_seq: 0,
            now: Instant::ZERO,
            len: 0,
        }
    }

    /// The time of the last popped event ([`Instant::ZERO`] before the first pop).
    pub fn now(&self) -> Instant {
        self.now
    }

    /// Schedules `event` at `at`; an instant before [`Agenda::now`] is clamped to it (the event
    /// fires next among those at `now`, after the ones already scheduled there).
    // Always inlined, as are `put` and `pop_from`: out of line, their register saves and
    // restores were a third of their instructions (callgrind, docs/BENCHMARKS.md).
    #[inline(always)]
    pub fn schedule(&mut self, at: Instant, event: E) {
        let key = pack(at.max(self.now), self.next_seq);
        self.next_seq += 1;
        self.len += 1;
        self.put(
            Entry {
                time_bits: (key >> 64) as u64,
                seq: key as u64,
                event,
            },
            key,
        );
    }

    /// Files `entry` (whose key is `key`, above `last`) in its bucket.
    #[inline(always)]
    fn put(&mut self, entry: Entry<E>, key: Key) {
        let b = bucket(entry.time_bits, self.last);
        let v = &mut self.buckets[b];
        v.push(entry);
        self.nonempty |= 1 << b;
        if key < self.mins[b].0 {
            self.mins[b] = (key, v.len() - 1);
        }
    }

    /// The lowest non-empty bucket, which holds the least key.
    fn lowest(&self) -> Option<usize> {
        (self.nonempty != 0).then(|| self.nonempty.trailing_zeros() as usize)
    }

    /// The firing time of the earliest pending event.
    pub fn peek_time(&self) -> Option<Instant> {
        self.lowest().map(|b| unpack_time(self.mins[b].0))
    }

    /// The earliest pending event and its time.
    pub fn peek(&self) -> Option<(Instant, &E)> {
        let b = self.lowest()?;
        let (key, i) = self.mins[b];
        Some((unpack_time(key), &self.buckets[b][i].event))
    }

    /// Removes the earliest pending event if it is due at or before `now`, advancing
    /// [`Agenda::now`] to its time.
    pub fn pop_due(&mut self, now: Instant) -> Option<(Instant, E)> {
        let b = self.lowest()?;
        if unpack_time(self.mins[b].0) > now {
            return None;
        }
        self.pop_from(b)
    }

    /// Removes the earliest pending event, advancing [`Agenda::now`] to its time.
    pub fn pop(&mut self) -> Option<(Instant, E)> {
        let b = self.lowest()?;
        self.pop_from(b)
    }

    /// Pops the least key, in bucket `b`, the lowest non-empty one (bucket order follows time
    /// order above `last`).
    #[inline(always)]
    fn pop_from(&mut self, b: usize) -> Option<(Instant, E)> {
        let (key, i) = self.mins[b];
        self.last = key;
        self.len -= 1;
        self.now = unpack_time(key);
        if b == 0 {
            // The same instant as before: the others stay; their least is looked for (few
            // events share an instant).
            let v = &mut self.buckets[0];
            let entry = v.swap_remove(i);
            self.mins[0] = v
                .iter()
                .enumerate()
                .map(|(i, e)| (e.key(), i))
                .min()
                .unwrap_or((Key::MAX, 0));
            if v.is_empty() {
                self.nonempty &= !1;
            }
            return Some((self.now, entry.event));
        }
        self.mins[b] = (Key::MAX, 0);
        self.nonempty &= !(1 << b);
        // The bucket's other entries go below, relative to the new last time: each differs
        // from it first in a lower bit than in the one that put it in `b` (bucket 0 was empty).
        // Split borrows instead of taking the bucket out and back: most popped buckets hold
        // one or two entries.
        let (lower, rest) = self.buckets.split_at_mut(b);
        let v = &mut rest[0];
        let entry = v.swap_remove(i);
        let last_time = (key >> 64) as u64;
        for e in v.drain(..) {
            let to = (u64::BITS - (e.time_bits ^ last_time).leading_zeros()) as usize;
            let k = e.key();
            let bucket = &mut lower[to];
            bucket.push(e);
            self.nonempty |= 1 << to;
            let min = &mut self.mins[to];
            if k < min.0 {
                *min = (k, bucket.len() - 1);
            }
        }
        Some((self.now, entry.event))
    }

    /// Number of pending events.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether no event is pending.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Events scheduled since creation.
    pub fn scheduled_total(&self) -> u64 {
        self.next_seq
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
