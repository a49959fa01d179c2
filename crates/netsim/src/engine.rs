//! The discrete-event queue: integer time, ties broken by insertion order.
//!
//! Every simulated run is a loop "pop the earliest event, handle it, schedule its consequences".
//! [`EventQueue`] is that loop's agenda. Two events at the same [`Instant`] come out in the order
//! they were scheduled (FIFO), so a run is a pure function of its inputs: no hash order, no float
//! time, no dependence on the heap's internal layout.
//!
//! The queue is generic over the event type and does no allocation per event once its heap has
//! grown to the run's peak size. Cancellation is left to the caller (a generation counter in the
//! event, checked when it fires), which keeps the hot path a plain binary heap.
//!
//! A caller that knows a stream of its events is scheduled in time order (the arrivals of one
//! FIFO link with a constant delay) can schedule them in a *lane*
//! ([`EventQueue::schedule_in_lane`]): a queue in which appending and taking the first entry are
//! O(1), where the heap costs O(log n) for both. The order of popping is the same as with the
//! heap alone, by construction: every entry has the one `(time, sequence)` key, a lane holds
//! keys in increasing order (an event that would break it goes to the heap instead), and a pop
//! takes the least key among the heap's top and the lanes' heads.

use std::cmp::Ordering;
use std::collections::{BinaryHeap, VecDeque};

use coaplab_base::time::Instant;

/// One scheduled event: its firing key and the payload.
#[derive(Debug)]
struct Entry<E> {
    key: Key,
    event: E,
}

/// `(time, seq)`, ordered as one integer would be: the time with its sign bit flipped (so
/// negative instants still sort first), then the insertion sequence number. Two words rather
/// than one `u128`, whose 16-B alignment padded an entry of the star's 8-B events to 32 B:
/// at 24 B a lane holds a third more entries per cache line, and a packet's arrival entry,
/// scheduled one queueing delay earlier, is out of the cache when it is popped (issue 35).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Key {
    time_bits: u64,
    seq: u64,
}

impl Key {
    /// The one integer the key orders as (compared in two branch-free instructions, where
    /// the fields compared in turn cost the TCP loop 9 instructions per packet).
    fn wide(self) -> u128 {
        (u128::from(self.time_bits) << 64) | u128::from(self.seq)
    }
}

impl PartialOrd for Key {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }

    fn lt(&self, other: &Self) -> bool {
        self.wide() < other.wide()
    }
}

impl Ord for Key {
    fn cmp(&self, other: &Self) -> Ordering {
        self.wide().cmp(&other.wide())
    }
}

impl<E> PartialEq for Entry<E> {
    fn eq(&self, other: &Self) -> bool {
        self.key == other.key
    }
}

impl<E> Eq for Entry<E> {}

impl<E> PartialOrd for Entry<E> {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl<E> Ord for Entry<E> {
    fn cmp(&self, other: &Self) -> Ordering {
        // `BinaryHeap` is a max-heap: reverse so the earliest key is on top.
        other.key.cmp(&self.key)
    }
}

/// Packs an instant and a sequence number into one totally ordered key.
fn pack(at: Instant, seq: u64) -> Key {
    Key {
        time_bits: (at.as_nanos() as u64) ^ (1 << 63),
        seq,
    }
}

/// The instant stored in a packed key.
fn unpack_time(key: Key) -> Instant {
    Instant::from_nanos((key.time_bits ^ (1 << 63)) as i64)
}

/// A deterministic agenda of events of type `E`, with `LANES` lanes for streams scheduled in
/// time order (none by default).
///
/// Call order: [`EventQueue::schedule`] any number of times, then repeatedly
/// [`EventQueue::pop`] (or [`EventQueue::pop_due`]) until empty. Popping advances
/// [`EventQueue::now`]; time never goes backwards.
///
/// ```
/// use coaplab_base::time::Instant;
/// use coaplab_netsim::engine::EventQueue;
///
/// let mut q = EventQueue::new();
/// q.schedule(Instant::from_millis(5), "b");
/// q.schedule(Instant::from_millis(1), "a");
/// q.schedule(Instant::from_millis(5), "c"); // same instant as "b": fires after it
/// assert_eq!(q.pop(), Some((Instant::from_millis(1), "a")));
/// assert_eq!(q.pop(), Some((Instant::from_millis(5), "b")));
/// assert_eq!(q.pop(), Some((Instant::from_millis(5), "c")));
/// assert_eq!(q.pop(), None);
/// ```
#[derive(Debug)]
pub struct EventQueue<E, const LANES: usize = 0> {
    heap: BinaryHeap<Entry<E>>,
    /// Entries known to be scheduled in key order, each lane increasing.
    lanes: [VecDeque<Entry<E>>; LANES],
    /// The least pending key and where it is, kept up to date by every schedule and pop: a
    /// run loop asks for it two or three times per event (when next, whether due, pop), each
    /// of which would otherwise look at the heap's top and every lane's head again.
    head: Option<(Key, Source)>,
    next_seq: u64,
    now: Instant,
}

/// Where the least pending key is.
#[derive(Debug, Clone, Copy)]
enum Source {
    Heap,
    Lane(usize),
}

impl<E, const LANES: usize> Default for EventQueue<E, LANES> {
    fn default() -> Self {
        Self::with_lanes(0)
    }
}

impl<E> EventQueue<E> {
    /// An empty queue (no lanes) at time [`Instant::ZERO`].
    pub fn new() -> Self {
        Self::with_capacity(0)
    }

    /// An empty queue (no lanes) with room for `events` pending events before it reallocates.
    pub fn with_capacity(events: usize) -> Self {
        Self::with_lanes(events)
    }
}

impl<E, const LANES: usize> EventQueue<E, LANES> {
    /// An empty queue with `LANES` lanes and room for `events` pending events in its heap
    /// before it reallocates.
    pub fn with_lanes(events: usize) -> Self {
        EventQueue {
            heap: BinaryHeap::with_capacity(events),
            lanes: std::array::from_fn(|_| VecDeque::new()),
            head: None,
            next_seq: 0,
            now: Instant::ZERO,
        }
    }

    /// The time of the last popped event ([`Instant::ZERO`] before the first pop).
    pub fn now(&self) -> Instant {
        self.now
    }

    /// Schedules `event` at `at`. An instant earlier than [`EventQueue::now`] is clamped to
    /// `now` (it fires next among the events at `now`, after those already scheduled there), so
    /// time stays monotonic whatever the caller computes.
    pub fn schedule(&mut self, at: Instant, event: E) {
        let key = self.next_key(at);
        self.heap.push(Entry { key, event });
        self.offer_head(key, Source::Heap);
    }

    /// Like [`EventQueue::schedule`] (same instant, same order of popping), for a stream of
    /// events the caller expects in time order: `lane` (below `LANES`) keeps them in a FIFO
    /// queue. An event earlier than the lane's last one goes to the heap instead, so a lane is
    /// only ever a shortcut, never a change of order.
    pub fn schedule_in_lane(&mut self, lane: usize, at: Instant, event: E) {
        let key = self.next_key(at);
        let queue = &mut self.lanes[lane];
        if queue.back().map_or(true, |last| last.key < key) {
            queue.push_back(Entry { key, event });
            self.offer_head(key, Source::Lane(lane));
        } else {
            self.heap.push(Entry { key, event });
            self.offer_head(key, Source::Heap);
        }
    }

    /// A key just scheduled becomes the head if it is less (keys are unique).
    fn offer_head(&mut self, key: Key, source: Source) {
        if self.head.map_or(true, |(least, _)| key < least) {
            self.head = Some((key, source));
        }
    }

    /// The key of an event scheduled now at `at` (clamped to `now`).
    fn next_key(&mut self, at: Instant) -> Key {
        let key = pack(at.max(self.now), self.next_seq);
        self.next_seq += 1;
        key
    }

    /// The least pending key and where it is, looked for.
    fn find_least(&self) -> Option<(Key, Source)> {
        let mut best = self.heap.peek().map(|e| (e.key, Source::Heap));
        for (i, lane) in self.lanes.iter().enumerate() {
            if let Some(e) = lane.front() {
                if best.map_or(true, |(key, _)| e.key < key) {
                    best = Some((e.key, Source::Lane(i)));
                }
            }
        }
        best
    }

    /// The firing time of the earliest pending event.
    pub fn peek_time(&self) -> Option<Instant> {
        self.head.map(|(key, _)| unpack_time(key))
    }

    /// Removes the earliest pending event, advancing [`EventQueue::now`] to its time.
    pub fn pop(&mut self) -> Option<(Instant, E)> {
        let (_, source) = self.head?;
        self.take(source)
    }

    /// Like [`EventQueue::pop`], but only if the earliest event is due at or before `now`.
    pub fn pop_due(&mut self, now: Instant) -> Option<(Instant, E)> {
        let (key, source) = self.head?;
        if unpack_time(key) <= now {
            self.take(source)
        } else {
            None
        }
    }

    fn take(&mut self, source: Source) -> Option<(Instant, E)> {
        let entry = match source {
            Source::Heap => self.heap.pop(),
            Source::Lane(i) => self.lanes[i].pop_front(),
        }?;
        self.head = self.find_least();
        self.now = unpack_time(entry.key);
        Some((self.now, entry.event))
    }

    /// Number of pending events.
    pub fn len(&self) -> usize {
        self.heap.len() + self.lanes.iter().map(VecDeque::len).sum::<usize>()
    }

    /// Whether no event is pending.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Events scheduled since creation (the next insertion sequence number).
    pub fn scheduled_total(&self) -> u64 {
        self.next_seq
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ties_fire_in_insertion_order_even_across_heap_reshuffles() {
        let mut q = EventQueue::new();
        for i in 0..100u32 {
            // Interleave three instants so the heap reorders entries internally.
            q.schedule(Instant::from_nanos(i64::from(i % 3)), i);
        }
        let mut order = Vec::new();
        while let Some((t, i)) = q.pop() {
            order.push((t.as_nanos(), i));
        }
        let mut expected: Vec<(i64, u32)> = (0..100u32).map(|i| (i64::from(i % 3), i)).collect();
        expected.sort();
        assert_eq!(order, expected);
    }

    #[test]
    fn lanes_pop_in_the_same_order_as_the_heap_alone() {
        // Two queues fed the same schedule, one all heap, one with two lanes whose streams are
        // mostly but not always in order (out-of-order events fall back to the heap), with ties
        // across lanes and heap: the pops are identical.
        let mut heap = EventQueue::new();
        let mut laned = EventQueue::<u32, 2>::with_lanes(0);
        let mut rng = 0x2545_f491_4f6c_dd1du64;
        let mut next = || {
            rng ^= rng << 13;
            rng ^= rng >> 7;
            rng ^= rng << 17;
            rng
        };
        let mut popped = (Vec::new(), Vec::new());
        let mut lane_at = [0i64; 2];
        let mut lane_peak = [0usize; 2];
        for i in 0..5_000u32 {
            let r = next();
            let now = heap.now().as_nanos();
            match r % 4 {
                0 => {
                    let at = Instant::from_nanos(now + (r >> 8) as i64 % 50);
                    heap.schedule(at, i);
                    laned.schedule(at, i);
                }
                1 | 2 => {
                    let lane = (r % 4 - 1) as usize;
                    // In order, with ties; one in eight goes back in time.
                    let step = (r >> 8) as i64 % 7 - i64::from((r >> 20) % 8 == 0) * 20;
                    lane_at[lane] = (lane_at[lane] + step).max(now - 3);
                    let at = Instant::from_nanos(lane_at[lane]);
                    heap.schedule(at, i);
                    laned.schedule_in_lane(lane, at, i);
                }
                _ => {
                    let due = Instant::from_nanos(now + (r >> 8) as i64 % 10);
                    for (peak, lane) in lane_peak.iter_mut().zip(&laned.lanes) {
                        *peak = (*peak).max(lane.len());
                    }
                    assert_eq!(heap.peek_time(), laned.peek_time());
                    assert_eq!(heap.len(), laned.len());
                    while let Some(e) = heap.pop_due(due) {
                        popped.0.push(e);
                    }
                    while let Some(e) = laned.pop_due(due) {
                        popped.1.push(e);
                    }
                }
            }
        }
        while let Some(e) = heap.pop() {
            popped.0.push(e);
        }
        while let Some(e) = laned.pop() {
            popped.1.push(e);
        }
        assert_eq!(popped.0.len() as u64, heap.scheduled_total());
        assert_eq!(popped.0, popped.1);
        assert!(laned.is_empty());
        assert!(
            lane_peak.iter().all(|&n| n >= 5),
            "the lanes were used: {lane_peak:?}"
        );
    }

    /// Keys order as `(time, seq)` did packed into one `u128`, and an 8-B event's entry takes
    /// 24 B (no 16-B alignment padding it to 32).
    #[test]
    fn keys_order_by_time_then_sequence_in_24_byte_entries() {
        let times = [i64::MIN, -5, 0, 3, i64::MAX];
        let mut keys = Vec::new();
        for &t in &times {
            for seq in [0, 1, u64::MAX] {
                keys.push((pack(Instant::from_nanos(t), seq), (t, seq)));
            }
        }
        for (a, ta) in &keys {
            for (b, tb) in &keys {
                assert_eq!(a.cmp(b), ta.cmp(tb), "{ta:?} vs {tb:?}");
                assert_eq!(a < b, ta < tb);
            }
            assert_eq!(unpack_time(*a), Instant::from_nanos(ta.0));
        }
        assert_eq!(std::mem::size_of::<Entry<(u32, u32)>>(), 24);
    }

    #[test]
    fn negative_and_large_instants_sort_correctly() {
        let mut q = EventQueue::new();
        q.schedule(Instant::from_nanos(i64::MAX), 'z');
        q.schedule(Instant::from_nanos(7), 'b');
        q.schedule(Instant::from_nanos(0), 'a');
        assert_eq!(q.pop(), Some((Instant::from_nanos(0), 'a')));
        assert_eq!(q.pop(), Some((Instant::from_nanos(7), 'b')));
        assert_eq!(q.pop(), Some((Instant::from_nanos(i64::MAX), 'z')));
        assert!(pack(Instant::from_nanos(-1), 0) < pack(Instant::ZERO, 0));
    }

    #[test]
    fn past_events_are_clamped_to_now_and_pop_due_respects_the_horizon() {
        let mut q = EventQueue::new();
        q.schedule(Instant::from_millis(10), 1);
        assert_eq!(q.pop(), Some((Instant::from_millis(10), 1)));
        q.schedule(Instant::from_millis(3), 2); // in the past: fires at 10 ms
        q.schedule(Instant::from_millis(20), 3);
        assert_eq!(q.peek_time(), Some(Instant::from_millis(10)));
        assert_eq!(
            q.pop_due(Instant::from_millis(15)),
            Some((Instant::from_millis(10), 2))
        );
        assert_eq!(q.pop_due(Instant::from_millis(15)), None);
        assert_eq!(q.len(), 1);
        assert_eq!(q.now(), Instant::from_millis(10));
        assert_eq!(q.scheduled_total(), 3);
    }
}
