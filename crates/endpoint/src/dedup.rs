//! Duplicate detection (RFC 7252 §4.5): every CON and NON received is remembered by
//! (source endpoint, Message ID) together with the reply sent, so a duplicate CON is answered
//! with the very same bytes (ACK, piggybacked response or RST) without running the handler
//! again. With FASOR+token this replays the earlier copy's token echo, the conservative sample
//! spec/algorithms.md §7.6 asks the server model to reproduce. With
//! [`crate::ServerDuplicates::Reprocess`] a duplicate CON is looked up here only to be
//! counted, and answered by the handler anew (its reply then replaces the cached one).
//!
//! Bounded three ways, all configurable: entries older than the lifetime (EXCHANGE_LIFETIME by
//! default; "whole run" in the experiments) are forgotten, and the oldest are forgotten first
//! when the entry count or the bytes held would exceed their caps. RFC 7252 §4.5 lets a
//! server forget early ("MAY ... drop the oldest"): a duplicate of a forgotten message is
//! processed again as new, which for the resources served here (GET, idempotent PUT/POST
//! echo) gives the same answer. Each entry costs its stored reply bytes plus
//! [`ENTRY_OVERHEAD_BYTES`] (map slot, FIFO slot, allocation header), so the byte cap bounds
//! memory however small or large the replies are. Insertion order is expiry order, so a FIFO
//! of keys does all three in O(1) amortised, and [`DedupCache::next_expiry`] is its front.

use std::collections::{HashMap, VecDeque};
use std::hash::{BuildHasherDefault, Hasher};
use std::net::SocketAddr;

use coaplab_cc::time::{Duration, Instant};

/// (peer, Message ID).
type Key = (SocketAddr, u16);

/// The remembered outcome of one received message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Entry {
    /// The reply sent; `None` when nothing is replayed (a NON, whose duplicates are dropped).
    pub(crate) reply: Option<Vec<u8>>,
}

/// What one entry costs beyond its reply bytes, counted against the byte cap: the hash-map
/// slot (key, entry, instant: 72 B, up to twice that at the map's load factor), the FIFO slot
/// (48 B, likewise) and the reply's allocation header, rounded up.
pub const ENTRY_OVERHEAD_BYTES: usize = 256;

impl Entry {
    /// What the entry counts against the byte cap.
    fn cost_bytes(&self) -> usize {
        ENTRY_OVERHEAD_BYTES + self.reply.as_ref().map_or(0, Vec::len)
    }
}

/// The cache.
#[derive(Debug)]
pub(crate) struct DedupCache {
    map: HashMap<Key, (Entry, Instant), BuildHasherDefault<FxHasher>>,
    order: VecDeque<(Key, Instant)>,
    lifetime: Option<Duration>,
    capacity: usize,
    capacity_bytes: usize,
    /// Sum of [`Entry::cost_bytes`] over the live entries.
    held_bytes: usize,
}

impl DedupCache {
    pub(crate) fn new(lifetime: Option<Duration>, capacity: usize, capacity_bytes: usize) -> Self {
        DedupCache {
            map: HashMap::default(),
            order: VecDeque::new(),
            lifetime,
            capacity: capacity.max(1),
            capacity_bytes,
            held_bytes: 0,
        }
    }

    /// When the oldest entry expires (`None` when empty or kept for the whole run). Early:
    /// the front may be a stale slot of a re-inserted key, which costs one idle wake-up.
    pub(crate) fn next_expiry(&self) -> Option<Instant> {
        let lifetime = self.lifetime?;
        self.order.front().map(|&(_, t)| t + lifetime)
    }

    /// Forgets every entry whose lifetime ended at or before `now` (the timer purge).
    pub(crate) fn purge(&mut self, now: Instant) {
        self.expire(now);
        if self.map.is_empty() {
            // Give the memory of a burst back once it has all expired.
            self.map.shrink_to_fit();
            self.order.shrink_to_fit();
        }
    }

    /// Bytes counted against the cap (stored replies plus per-entry overhead).
    pub(crate) fn held_bytes(&self) -> usize {
        self.held_bytes
    }

    /// The entry for `key` if it is still remembered at `now`.
    pub(crate) fn get(&mut self, now: Instant, from: SocketAddr, mid: u16) -> Option<&Entry> {
        self.expire(now);
        self.map.get(&(from, mid)).map(|(e, _)| e)
    }

    /// Remembers `entry`, replacing an older one with the same key.
    pub(crate) fn insert(&mut self, now: Instant, from: SocketAddr, mid: u16, entry: Entry) {
        self.expire(now);
        let key = (from, mid);
        // A re-inserted key's old FIFO slot finds a newer timestamp and is skipped.
        self.held_bytes += entry.cost_bytes();
        if let Some((old, _)) = self.map.insert(key, (entry, now)) {
            self.held_bytes -= old.cost_bytes();
        }
        self.order.push_back((key, now));
        while self.map.len() > self.capacity
            || (self.held_bytes > self.capacity_bytes && !self.map.is_empty())
        {
            self.pop_oldest();
        }
        // Stale slots (re-inserted keys) must not grow the FIFO without bound.
        if self.order.len() > 2 * self.map.len() + 64 {
            let map = &self.map;
            self.order
                .retain(|(k, t)| map.get(k).is_some_and(|(_, at)| at == t));
        }
    }

    /// Entries remembered.
    pub(crate) fn len(&self) -> usize {
        self.map.len()
    }

    fn expire(&mut self, now: Instant) {
        let Some(lifetime) = self.lifetime else {
            return;
        };
        while let Some(&(key, t)) = self.order.front() {
            if now - t < lifetime {
                break;
            }
            self.order.pop_front();
            self.remove_if_current(key, t);
        }
    }

    fn pop_oldest(&mut self) {
        while let Some((key, t)) = self.order.pop_front() {
            if self.remove_if_current(key, t) {
                return;
            }
        }
    }

    /// Removes `key` if its live insertion is the one made at `t` (a re-inserted key leaves a
    /// stale FIFO slot behind, which must not remove the newer entry).
    fn remove_if_current(&mut self, key: Key, t: Instant) -> bool {
        if self.map.get(&key).is_some_and(|(_, at)| *at == t) {
            if let Some((old, _)) = self.map.remove(&key) {
                self.held_bytes -= old.cost_bytes();
            }
            true
        } else {
            false
        }
    }
}

/// A small multiplicative hasher (rustc's FxHash): the keys are not attacker-chosen in the
/// simulator, and SipHash would dominate the server's per-datagram cost.
#[derive(Default, Clone, Copy)]
pub(crate) struct FxHasher {
    hash: u64,
}

const SEED: u64 = 0x51_7c_c1_b7_27_22_0a_95;

impl Hasher for FxHasher {
    fn write(&mut self, bytes: &[u8]) {
        for chunk in bytes.chunks(8) {
            let mut b = [0u8; 8];
            b[..chunk.len()].copy_from_slice(chunk);
            self.write_u64(u64::from_le_bytes(b));
        }
    }
    fn write_u8(&mut self, i: u8) {
        self.write_u64(i as u64);
    }
    fn write_u16(&mut self, i: u16) {
        self.write_u64(i as u64);
    }
    fn write_u32(&mut self, i: u32) {
        self.write_u64(i as u64);
    }
    fn write_u64(&mut self, i: u64) {
        self.hash = (self.hash.rotate_left(5) ^ i).wrapping_mul(SEED);
    }
    fn write_usize(&mut self, i: usize) {
        self.write_u64(i as u64);
    }
    fn finish(&self) -> u64 {
        self.hash
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn peer(port: u16) -> SocketAddr {
        SocketAddr::from(([198, 18, 0, 1], port))
    }

    fn entry(b: u8) -> Entry {
        Entry {
            reply: Some(vec![b]),
        }
    }

    #[test]
    fn entries_expire_after_the_lifetime() {
        let mut c = DedupCache::new(Some(Duration::from_secs(247)), 100, usize::MAX);
        c.insert(Instant::ZERO, peer(1), 7, entry(1));
        assert!(c.get(Instant::from_secs(246), peer(1), 7).is_some());
        assert!(c.get(Instant::from_secs(246), peer(2), 7).is_none());
        assert!(c.get(Instant::from_secs(247), peer(1), 7).is_none());
        assert_eq!(c.len(), 0);
    }

    #[test]
    fn capacity_forgets_the_oldest_and_whole_run_keeps_all() {
        let mut c = DedupCache::new(None, 2, usize::MAX);
        c.insert(Instant::ZERO, peer(1), 1, entry(1));
        c.insert(Instant::from_secs(1), peer(1), 2, entry(2));
        c.insert(Instant::from_secs(2), peer(1), 3, entry(3));
        assert_eq!(c.len(), 2);
        assert!(c.get(Instant::from_secs(1_000_000), peer(1), 1).is_none());
        assert_eq!(
            c.get(Instant::from_secs(1_000_000), peer(1), 2),
            Some(&entry(2))
        );
    }

    #[test]
    fn reinsertion_keeps_the_newer_entry() {
        let mut c = DedupCache::new(Some(Duration::from_secs(10)), 10, usize::MAX);
        c.insert(Instant::ZERO, peer(1), 1, entry(1));
        c.insert(Instant::from_secs(5), peer(1), 1, entry(2));
        assert_eq!(c.get(Instant::from_secs(12), peer(1), 1), Some(&entry(2)));
        assert!(c.get(Instant::from_secs(15), peer(1), 1).is_none());
    }

    #[test]
    fn the_byte_cap_forgets_the_oldest_first() {
        // Room for two 1,000-B replies with their overhead, not three.
        let cap = 2 * (1_000 + ENTRY_OVERHEAD_BYTES) + 10;
        let mut c = DedupCache::new(None, 100, cap);
        let big = |b| Entry {
            reply: Some(vec![b; 1_000]),
        };
        for mid in 1..=3 {
            c.insert(Instant::from_secs(mid as i64), peer(1), mid, big(mid as u8));
            assert!(c.held_bytes() <= cap);
        }
        assert_eq!(c.len(), 2);
        assert_eq!(c.held_bytes(), 2 * (1_000 + ENTRY_OVERHEAD_BYTES));
        assert!(c.get(Instant::from_secs(4), peer(1), 1).is_none());
        assert_eq!(c.get(Instant::from_secs(4), peer(1), 3), Some(&big(3)));
        // Replacing a key's entry replaces its cost.
        c.insert(Instant::from_secs(5), peer(1), 3, entry(9));
        assert_eq!(c.held_bytes(), 1_000 + 1 + 2 * ENTRY_OVERHEAD_BYTES);
    }

    #[test]
    fn purge_releases_expired_entries_without_traffic() {
        let mut c = DedupCache::new(Some(Duration::from_secs(10)), 100, usize::MAX);
        c.insert(Instant::ZERO, peer(1), 1, entry(1));
        c.insert(Instant::from_secs(4), peer(1), 2, entry(2));
        assert_eq!(c.next_expiry(), Some(Instant::from_secs(10)));
        c.purge(Instant::from_secs(10));
        assert_eq!(
            (c.len(), c.next_expiry()),
            (1, Some(Instant::from_secs(14)))
        );
        c.purge(Instant::from_secs(14));
        assert_eq!((c.len(), c.held_bytes(), c.next_expiry()), (0, 0, None));
        assert_eq!(DedupCache::new(None, 1, 1).next_expiry(), None);
    }
}
