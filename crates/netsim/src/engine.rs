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

use std::cmp::Ordering;
use std::collections::BinaryHeap;

use coaplab_cc::time::Instant;

/// One scheduled event: its firing key and the payload.
#[derive(Debug)]
struct Entry<E> {
    /// `(time, seq)` packed into one integer so the heap compares a single `u128`: the time with
    /// its sign bit flipped in the high half (so negative instants still sort first), the
    /// insertion sequence number in the low half.
    key: u128,
    event: E,
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
fn pack(at: Instant, seq: u64) -> u128 {
    let time_bits = (at.as_nanos() as u64) ^ (1 << 63);
    (u128::from(time_bits) << 64) | u128::from(seq)
}

/// The instant stored in a packed key.
fn unpack_time(key: u128) -> Instant {
    Instant::from_nanos((((key >> 64) as u64) ^ (1 << 63)) as i64)
}

/// A deterministic agenda of events of type `E`.
///
/// Call order: [`EventQueue::schedule`] any number of times, then repeatedly
/// [`EventQueue::pop`] (or [`EventQueue::pop_due`]) until empty. Popping advances
/// [`EventQueue::now`]; time never goes backwards.
///
/// ```
/// use coaplab_cc::time::Instant;
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
pub struct EventQueue<E> {
    heap: BinaryHeap<Entry<E>>,
    next_seq: u64,
    now: Instant,
}

impl<E> Default for EventQueue<E> {
    fn default() -> Self {
        Self::new()
    }
}

impl<E> EventQueue<E> {
    /// An empty queue at time [`Instant::ZERO`].
    pub fn new() -> Self {
        Self::with_capacity(0)
    }

    /// An empty queue with room for `events` pending events before it reallocates.
    pub fn with_capacity(events: usize) -> Self {
        EventQueue {
            heap: BinaryHeap::with_capacity(events),
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
        let at = at.max(self.now);
        let key = pack(at, self.next_seq);
        self.next_seq += 1;
        self.heap.push(Entry { key, event });
    }

    /// The firing time of the earliest pending event.
    pub fn peek_time(&self) -> Option<Instant> {
        self.heap.peek().map(|e| unpack_time(e.key))
    }

    /// Removes the earliest pending event, advancing [`EventQueue::now`] to its time.
    pub fn pop(&mut self) -> Option<(Instant, E)> {
        let entry = self.heap.pop()?;
        self.now = unpack_time(entry.key);
        Some((self.now, entry.event))
    }

    /// Like [`EventQueue::pop`], but only if the earliest event is due at or before `now`.
    pub fn pop_due(&mut self, now: Instant) -> Option<(Instant, E)> {
        if self.peek_time()? <= now {
            self.pop()
        } else {
            None
        }
    }

    /// Number of pending events.
    pub fn len(&self) -> usize {
        self.heap.len()
    }

    /// Whether no event is pending.
    pub fn is_empty(&self) -> bool {
        self.heap.is_empty()
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
