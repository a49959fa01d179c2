//! Duplicate detection (RFC 7252 §4.5): every CON and NON received is remembered by
//! (source endpoint, Message ID) together with the reply sent, so a duplicate CON is answered
//! with the very same bytes (ACK, piggybacked response or RST) without running the handler
//! again. With FASOR+token this replays the earlier copy's token echo, the conservative sample
//! Globecom 2018; draft-ietf-core-fasor-02 asks the server model to reproduce. With
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
//! Without a lifetime (the simulator's "whole run") nothing reads that FIFO until a cap is
//! first reached, so it is not kept until then (or until a key is re-inserted at the instant
//! of its previous insertion, whose second slot could match again): it is built from the
//! entries' insertion numbers then, the order the FIFO would have had, which saves its 48 B
//! per entry and the page faults of growing it (issue 17: a 400-flow simulated run touched
//! about 9 MB for this cache).
//!
//! The replies live back to back in one byte arena, not one allocation each: a server that
//! answers every request caches one reply per exchange, and an allocation (and later a free)
//! per reply was a tenth of the simulator's per-packet cost. Forgotten replies leave dead
//! bytes behind; the arena is compacted (live replies copied to a fresh one) once it holds
//! more than twice the live reply bytes plus [`ARENA_SLACK_BYTES`], so it stays within that
//! bound and compaction costs O(1) amortised per byte cached.

mod entries;

use std::collections::VecDeque;
use std::net::SocketAddr;

use coaplab_cc::time::{Duration, Instant};

use self::entries::{Entries, Key, Slot, Span};

/// What one entry is reckoned to cost beyond its reply bytes when a full cache decides how
/// many entries to forget: the hash-map slot (key, span, instant, insertion number: 33 B
/// with its control byte for an IPv4 peer, 57 B for IPv6, up to 2.3 times that at the map's
/// load factor and power-of-two sizes) and the FIFO slot (48 B, up to twice that), rounded
/// up. The cap itself is held against the real allocation ([`DedupCache::held_bytes`]).
pub const ENTRY_OVERHEAD_BYTES: usize = 256;

/// Bytes a hash map with `capacity` (as `HashMap::capacity` reports it) of `slot`-byte
/// entries has allocated: hashbrown's buckets (a power of two holding 7/8 of them, or
/// capacity + 1 below 8), each the slot and a control byte, plus one group of control bytes.
fn map_bytes(capacity: usize, slot: usize) -> usize {
    if capacity == 0 {
        return 0;
    }
    let buckets = if capacity < 8 {
        (capacity + 1).next_power_of_two()
    } else {
        (capacity * 8 / 7).next_power_of_two()
    };
    buckets * (slot + 1) + 16
}

/// Dead bytes the reply arena may hold beyond the live reply bytes before it is compacted.
pub(crate) const ARENA_SLACK_BYTES: usize = 64 * 1024;

/// What an entry is reckoned to cost (see [`ENTRY_OVERHEAD_BYTES`]).
fn cost_bytes(reply: Span) -> usize {
    ENTRY_OVERHEAD_BYTES + reply.len()
}

/// One FIFO slot.
const ORDER_SLOT_BYTES: usize = std::mem::size_of::<(Key, Instant)>();

/// The cache.
#[derive(Debug)]
pub(crate) struct DedupCache {
    map: Entries,
    order: VecDeque<(Key, Instant)>,
    /// Every cached reply, back to back (plus dead bytes of forgotten ones).
    arena: Vec<u8>,
    /// Sum of the live replies' lengths.
    live_reply_bytes: usize,
    lifetime: Option<Duration>,
    capacity: usize,
    capacity_bytes: usize,
    /// Sum of [`cost_bytes`] over the live entries.
    held_bytes: usize,
    /// Whether `order` is kept (from the start with a lifetime, else from the first eviction).
    ordered: bool,
    /// The next insertion number.
    next_seq: u64,
}

impl DedupCache {
    /// `reserve`: entries to make room for now (a hint, at most `capacity`).
    pub(crate) fn new(
        lifetime: Option<Duration>,
        capacity: usize,
        capacity_bytes: usize,
        reserve: usize,
    ) -> Self {
        DedupCache {
            map: Entries::with_capacity(reserve.min(capacity)),
            order: VecDeque::new(),
            arena: Vec::new(),
            live_reply_bytes: 0,
            lifetime,
            capacity: capacity.max(1),
            capacity_bytes,
            held_bytes: 0,
            ordered: lifetime.is_some(),
            next_seq: 0,
        }
    }

    /// The cache with room for `bytes` of replies (at most its byte cap) in its arena, which
    /// otherwise doubles as it fills: each doubling copies it into fresh memory.
    pub(crate) fn with_reply_room(mut self, bytes: usize) -> Self {
        self.arena.reserve_exact(bytes.min(self.capacity_bytes));
        self
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
            self.arena = Vec::new();
        }
    }

    /// Bytes the cache has allocated, as its structures' capacities say: the reply arena
    /// (live, dead and spare bytes), both hash maps' tables and the FIFO. This, not the
    /// replies' bytes, is what [`crate::Config::dedup_capacity_bytes`] bounds.
    pub(crate) fn held_bytes(&self) -> usize {
        let (v4, v6) = self.map.capacities();
        self.arena.capacity()
            + map_bytes(v4, entries::V4_SLOT_BYTES)
            + map_bytes(v6, entries::V6_SLOT_BYTES)
            + self.order.capacity() * ORDER_SLOT_BYTES
    }

    /// Whether the cap is one that evicts (the simulator's `usize::MAX` never does, and keeps
    /// the cheaper bookkeeping of the module docs).
    fn bounded(&self) -> bool {
        self.capacity_bytes != usize::MAX
    }

    /// What [`DedupCache::held_bytes`] would become if an entry with a `reply_len`-byte
    /// reply were added now (a new key when `new_key`), the arena growing to `arena_cap`.
    fn projected_bytes(&self, reply_len: usize, new_key: bool) -> (usize, usize) {
        let (v4, v6) = self.map.capacities();
        let len = self.map.len();
        let grow_map = new_key && len + 1 > v4 + v6;
        let (v4_bytes, v6_bytes) = (
            map_bytes(v4, entries::V4_SLOT_BYTES),
            map_bytes(v6, entries::V6_SLOT_BYTES),
        );
        // A full table doubles (which one is unknown here: the larger of the two, reckoned).
        let map = v4_bytes
            + v6_bytes
            + if grow_map {
                v4_bytes.max(v6_bytes).max(64 * 4)
            } else {
                0
            };
        let order = if self.ordered && self.order.len() == self.order.capacity() {
            (self.order.capacity() * 2).max(4) * ORDER_SLOT_BYTES
        } else {
            self.order.capacity() * ORDER_SLOT_BYTES
        };
        let fixed = map + order;
        let needed = self.arena.len() + reply_len;
        let arena = if needed <= self.arena.capacity() {
            self.arena.capacity()
        } else {
            // Double when that fits, else take what the cap leaves (at least what is needed).
            let doubled = (self.arena.capacity() * 2).max(needed).max(4096);
            let room = self.capacity_bytes.saturating_sub(fixed);
            if doubled <= room {
                doubled
            } else {
                room.max(needed)
            }
        };
        (fixed + arena, arena)
    }

    /// Makes room under the cap for an entry with a `reply_len`-byte reply: compacts the
    /// arena in place, and if that is not enough forgets the oldest entries until the rest
    /// is reckoned at half the cap, then gives the spare capacity back. Each such shed frees
    /// about half the cap, so its O(entries) cost is O(1) per entry inserted.
    fn shed(&mut self, reply_len: usize) {
        self.compact_in_place();
        if self.projected_bytes(reply_len, true).0 <= self.capacity_bytes {
            return;
        }
        let target = self.capacity_bytes / 2;
        while !self.map.is_empty()
            && self.live_reply_bytes + reply_len + (self.map.len() + 1) * ENTRY_OVERHEAD_BYTES
                > target
        {
            self.pop_oldest();
        }
        self.compact_in_place();
        let map = &self.map;
        self.order
            .retain(|&(k, t)| map.get(k).is_some_and(|s| s.at == t));
        self.order.shrink_to_fit();
        self.map.shrink_to_fit();
        self.arena.shrink_to(self.arena.len() + reply_len);
    }

    /// Moves the live replies to the front of the arena, in arena order, without allocating
    /// more than a list of them (16 B per entry); the arena keeps its capacity.
    fn compact_in_place(&mut self) {
        if self.arena.len() == self.live_reply_bytes {
            return;
        }
        let mut live: Vec<(usize, &mut Slot)> = self
            .map
            .slots_mut()
            .filter_map(|s| s.reply.range().map(|r| (r.start, s)))
            .collect();
        live.sort_unstable_by_key(|&(start, _)| start);
        let mut to = 0;
        for (start, slot) in live {
            let len = slot.reply.len();
            self.arena.copy_within(start..start + len, to);
            slot.reply = slot.reply.moved_to(to);
            to += len;
        }
        self.arena.truncate(to);
    }

    /// The entry for (`from`, `mid`) if it is still remembered at `now`: `Some(reply)`, the
    /// reply to replay being `None` for a message that had none. Inlined: every request
    /// looks itself up (issue 35: a call with its prologue cost about 20 instructions).
    #[inline(always)]
    pub(crate) fn get(
        &mut self,
        now: Instant,
        from: SocketAddr,
        mid: u16,
    ) -> Option<Option<&[u8]>> {
        self.expire(now);
        let slot = self.map.lookup(Key { peer: from, mid })?;
        Some(slot.reply.range().map(|r| &self.arena[r]))
    }

    /// Remembers Message ID `mid` of `from` as seen, with no reply to replay: a duplicate
    /// of a NON is dropped, not answered again (RFC 7252 §4.5).
    pub(crate) fn remember_unanswered(&mut self, now: Instant, from: SocketAddr, mid: u16) {
        self.insert(now, from, mid, None);
    }

    /// Remembers `reply` (`None`: nothing to replay) for (`from`, `mid`), replacing an older
    /// entry with the same key.
    pub(crate) fn insert(
        &mut self,
        now: Instant,
        from: SocketAddr,
        mid: u16,
        reply: Option<&[u8]>,
    ) {
        self.expire(now);
        let key = Key { peer: from, mid };
        if self.bounded() {
            let reply_len = reply.map_or(0, <[u8]>::len);
            let new_key = self.map.get(key).is_none();
            if self.projected_bytes(reply_len, new_key).0 > self.capacity_bytes {
                self.keep_order();
                self.shed(reply_len);
            }
            let (projected, arena) = self.projected_bytes(reply_len, self.map.get(key).is_none());
            if projected > self.capacity_bytes {
                // Larger than the cap allows even alone: not remembered, so a duplicate is
                // processed anew, as after any forgetting.
                if let Some(old) = self.map.remove(key) {
                    self.forget(old);
                }
                return;
            }
            if arena > self.arena.capacity() {
                self.arena.reserve_exact(arena - self.arena.len());
            }
        }
        let span = match reply {
            None => Span::NONE,
            Some(r) => {
                let Some(span) = Span::new(self.arena.len(), r.len()) else {
                    // Too long to place (16 MiB or more, which no datagram is): not
                    // remembered, so a duplicate is processed anew, as after any forgetting.
                    if let Some(old) = self.map.remove(key) {
                        self.forget(old);
                    }
                    return;
                };
                self.arena.extend_from_slice(r);
                self.live_reply_bytes += r.len();
                span
            }
        };
        // A re-inserted key's old FIFO slot finds a newer timestamp and is skipped.
        self.held_bytes += cost_bytes(span);
        let mut seq = self.next_seq;
        self.next_seq += 1;
        if let Some(old) = self.map.insert(
            key,
            Slot {
                reply: span,
                at: now,
                seq,
            },
        ) {
            if old.at == now {
                // Its first FIFO slot at this instant still matches and comes first; and the
                // second slot (pushed below) may match a later re-insertion at this instant,
                // after an eviction, so from here on the FIFO is kept as is.
                seq = old.seq;
                if let Some(slot) = self.map.get_mut(key) {
                    slot.seq = seq;
                }
                self.keep_order();
            }
            self.forget(old);
        }
        if self.ordered {
            self.order.push_back((key, now));
        }
        while self.map.len() > self.capacity
            || (!self.bounded() && self.held_bytes > self.capacity_bytes && !self.map.is_empty())
        {
            self.pop_oldest();
        }
        // Stale slots (re-inserted keys) must not grow the FIFO without bound.
        if self.order.len() > 2 * self.map.len() + 64 {
            let map = &self.map;
            self.order
                .retain(|&(k, t)| map.get(k).is_some_and(|s| s.at == t));
        }
        if self.arena.len() > 2 * self.live_reply_bytes + ARENA_SLACK_BYTES {
            if self.bounded() {
                self.compact_in_place();
            } else {
                self.compact();
            }
        }
        // A hash table can grow on its own (tombstones of forgotten keys): shed after the
        // fact, so the cap holds once this call returns.
        if self.bounded() && self.held_bytes() > self.capacity_bytes {
            self.shed(0);
        }
    }

    /// Entries remembered.
    pub(crate) fn len(&self) -> usize {
        self.map.len()
    }

    /// Bytes the reply arena holds (live and dead), for the bound tests.
    #[cfg(test)]
    fn arena_bytes(&self) -> usize {
        self.arena.len()
    }

    /// Forgets the entries whose lifetime ended at or before `now` (nothing to do without a
    /// lifetime: the check inlined into every lookup and insert, not a call; issue 35).
    #[inline]
    fn expire(&mut self, now: Instant) {
        if let Some(lifetime) = self.lifetime {
            self.expire_by(now, lifetime);
        }
    }

    fn expire_by(&mut self, now: Instant, lifetime: Duration) {
        while let Some(&(key, t)) = self.order.front() {
            if now - t < lifetime {
                break;
            }
            self.order.pop_front();
            self.remove_if_current(key, t);
        }
    }

    /// Starts keeping the FIFO, built as it would be now: every entry at the insertion number
    /// of its first slot. The slots it lacks are those of keys re-inserted at an earlier
    /// instant, which can never match an entry again (time only moves on), so every eviction
    /// and expiry from here on is the one the FIFO kept from the start would make.
    fn keep_order(&mut self) {
        if self.ordered {
            return;
        }
        let mut slots: Vec<(u64, Key, Instant)> =
            self.map.iter().map(|(k, s)| (s.seq, k, s.at)).collect();
        slots.sort_unstable_by_key(|&(seq, _, _)| seq);
        self.order = slots.into_iter().map(|(_, k, t)| (k, t)).collect();
        self.ordered = true;
    }

    fn pop_oldest(&mut self) {
        self.keep_order();
        while let Some((key, t)) = self.order.pop_front() {
            if self.remove_if_current(key, t) {
                return;
            }
        }
    }

    /// Removes `key` if its live insertion is the one made at `t` (a re-inserted key leaves a
    /// stale FIFO slot behind, which must not remove the newer entry).
    fn remove_if_current(&mut self, key: Key, t: Instant) -> bool {
        if self.map.get(key).is_some_and(|s| s.at == t) {
            if let Some(old) = self.map.remove(key) {
                self.forget(old);
            }
            true
        } else {
            false
        }
    }

    /// Accounts for an entry gone from the map (its reply bytes become dead).
    fn forget(&mut self, old: Slot) {
        self.held_bytes -= cost_bytes(old.reply);
        self.live_reply_bytes -= old.reply.len();
        if self.map.is_empty() {
            // Nothing live: the whole arena is dead.
            self.arena.clear();
        }
    }

    /// Copies the live replies into a fresh arena, dropping the dead bytes.
    fn compact(&mut self) {
        let mut arena = Vec::with_capacity(self.live_reply_bytes);
        for slot in self.map.slots_mut() {
            if let Some(r) = slot.reply.range() {
                let start = arena.len();
                arena.extend_from_slice(&self.arena[r]);
                slot.reply = slot.reply.moved_to(start);
            }
        }
        self.arena = arena;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn peer(port: u16) -> SocketAddr {
        SocketAddr::from(([198, 18, 0, 1], port))
    }

    /// A one-byte reply (a static slice, so tests compare `Some(Some(&[b][..]))`).
    fn entry(b: u8) -> Option<&'static [u8]> {
        Some(&[1u8, 2, 3, 4, 5, 6, 7, 8, 9][b as usize - 1..b as usize])
    }

    #[test]
    fn a_reserve_sizes_the_cache_once_within_its_capacity() {
        let mut c = DedupCache::new(None, 1_000, usize::MAX, 500);
        let room = c.map.capacity();
        assert!(room >= 500, "{room}");
        for mid in 0..500 {
            c.insert(Instant::ZERO, peer(1), mid, entry(1));
        }
        assert_eq!(
            c.map.capacity(),
            room,
            "not rehashed while filling the reserve"
        );
        // Never more than the entry cap.
        assert!(DedupCache::new(None, 10, usize::MAX, 5_000).map.capacity() < 100);
    }

    #[test]
    fn reserved_reply_room_is_filled_in_place_within_the_byte_cap() {
        let mut c = DedupCache::new(None, 1_000, usize::MAX, 0).with_reply_room(4_000);
        let start = c.arena.as_ptr();
        for mid in 0..400 {
            c.insert(Instant::ZERO, peer(1), mid, Some(&[7; 10]));
        }
        assert_eq!(c.arena_bytes(), 4_000);
        assert_eq!(c.arena.as_ptr(), start, "the arena never moved");
        assert_eq!(c.get(Instant::ZERO, peer(1), 399), Some(Some(&[7; 10][..])));
        // Never more than the byte cap.
        let c = DedupCache::new(None, 1_000, 3_000, 0).with_reply_room(1 << 30);
        assert!(c.arena.capacity() < 4_000);
    }

    #[test]
    fn entries_expire_after_the_lifetime() {
        let mut c = DedupCache::new(Some(Duration::from_secs(247)), 100, usize::MAX, 0);
        c.insert(Instant::ZERO, peer(1), 7, entry(1));
        assert!(c.get(Instant::from_secs(246), peer(1), 7).is_some());
        assert!(c.get(Instant::from_secs(246), peer(2), 7).is_none());
        assert!(c.get(Instant::from_secs(247), peer(1), 7).is_none());
        assert_eq!(c.len(), 0);
    }

    #[test]
    fn capacity_forgets_the_oldest_and_whole_run_keeps_all() {
        let mut c = DedupCache::new(None, 2, usize::MAX, 0);
        c.insert(Instant::ZERO, peer(1), 1, entry(1));
        c.insert(Instant::from_secs(1), peer(1), 2, entry(2));
        c.insert(Instant::from_secs(2), peer(1), 3, entry(3));
        assert_eq!(c.len(), 2);
        assert!(c.get(Instant::from_secs(1_000_000), peer(1), 1).is_none());
        assert_eq!(
            c.get(Instant::from_secs(1_000_000), peer(1), 2),
            Some(entry(2))
        );
    }

    #[test]
    fn reinsertion_keeps_the_newer_entry() {
        let mut c = DedupCache::new(Some(Duration::from_secs(10)), 10, usize::MAX, 0);
        c.insert(Instant::ZERO, peer(1), 1, entry(1));
        c.insert(Instant::from_secs(5), peer(1), 1, entry(2));
        assert_eq!(c.get(Instant::from_secs(12), peer(1), 1), Some(entry(2)));
        assert!(c.get(Instant::from_secs(15), peer(1), 1).is_none());
    }

    #[test]
    fn the_byte_cap_forgets_the_oldest_first() {
        // Room for a few 1,000-B replies and their tables, not for ten.
        let cap = 8 * 1024;
        let mut c = DedupCache::new(None, 100, cap, 0);
        let big = |b| vec![b; 1_000];
        for mid in 1..=10 {
            let reply = big(mid as u8);
            c.insert(Instant::from_secs(mid as i64), peer(1), mid, Some(&reply));
            assert!(c.held_bytes() <= cap, "{} > {cap}", c.held_bytes());
            // The newest is always there.
            assert_eq!(
                c.get(Instant::from_secs(mid as i64), peer(1), mid),
                Some(Some(&big(mid as u8)[..]))
            );
        }
        assert!((2..10).contains(&c.len()), "{}", c.len());
        assert!(c.get(Instant::from_secs(11), peer(1), 1).is_none());
    }

    /// Issue 32 #2: under any mix of reply sizes, re-inserted keys and IPv4/IPv6 peers, the
    /// structures' capacities stay within the cap after every insert, and the cache keeps a
    /// useful share of what the cap allows. (What they really allocate is measured with a
    /// counting allocator in `coaplab-emu`'s tests, `dedup_alloc`: this crate forbids the
    /// unsafe code an allocator needs.)
    #[test]
    fn the_cap_bounds_the_structures_capacities() {
        for cap in [64 << 10, 1 << 20, 4 << 20] {
            let mut c = DedupCache::new(Some(Duration::from_secs(247)), 1 << 20, cap, 0);
            let mut rng = 0x2545_f491_4f6c_dd1du64;
            let mut now = Instant::ZERO;
            let mut max_len = 0;
            for i in 0..60_000u32 {
                rng ^= rng << 13;
                rng ^= rng >> 7;
                rng ^= rng << 17;
                now += Duration::from_micros(100);
                let port = (rng >> 8) as u16 % 512;
                let from = if rng % 16 == 0 {
                    SocketAddr::from(([0x2001, 0xdb8, 0, 0, 0, 0, 0, 1], port))
                } else {
                    peer(port)
                };
                // Mostly new Message IDs, a few re-inserted (reprocessed duplicates).
                let mid = if rng % 8 == 0 {
                    (i / 2) as u16
                } else {
                    i as u16
                };
                let len = match (rng >> 20) % 4 {
                    0 => 4,
                    1 => 1_038,
                    _ => (rng >> 32) as usize % 1_100,
                };
                let reply = vec![i as u8; len];
                let reply = (rng % 32 != 0).then_some(&reply[..]);
                c.insert(now, from, mid, reply);
                let held = c.held_bytes();
                assert!(held <= cap, "cap {cap}, insert {i}: held {held}");
                if let Some(r) = reply {
                    assert_eq!(c.get(now, from, mid), Some(Some(r)), "the newest is kept");
                }
                max_len = max_len.max(c.len());
            }
            assert!(
                max_len * (1_100 + ENTRY_OVERHEAD_BYTES) >= cap / 2,
                "cap {cap}: {max_len}"
            );
        }
    }

    #[test]
    fn purge_releases_expired_entries_without_traffic() {
        let mut c = DedupCache::new(Some(Duration::from_secs(10)), 100, usize::MAX, 0);
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
        assert_eq!(DedupCache::new(None, 1, 1, 0).next_expiry(), None);
    }

    #[test]
    fn a_reply_too_long_to_place_is_not_remembered() {
        let mut c = DedupCache::new(None, 10, usize::MAX, 0);
        c.insert(Instant::ZERO, peer(1), 7, entry(1));
        c.insert(Instant::ZERO, peer(1), 8, entry(2));
        let long = vec![0u8; (1 << 24) - 1];
        c.insert(Instant::from_secs(1), peer(1), 7, Some(&long));
        assert_eq!(c.get(Instant::from_secs(2), peer(1), 7), None);
        assert_eq!(c.get(Instant::from_secs(2), peer(1), 8), Some(entry(2)));
        assert_eq!(c.len(), 1);
    }

    #[test]
    fn an_unanswered_message_is_remembered_without_a_reply() {
        let mut c = DedupCache::new(None, 10, usize::MAX, 0);
        c.insert(Instant::ZERO, peer(1), 1, None);
        assert_eq!(c.get(Instant::ZERO, peer(1), 1), Some(None));
        assert_eq!(c.len(), 1);
    }

    #[test]
    fn ipv6_peers_and_message_ids_are_told_apart() {
        let v6 = |port| SocketAddr::from(([0x2001, 0xdb8, 0, 0, 0, 0, 0, 1], port));
        let mut c = DedupCache::new(None, 10, usize::MAX, 0);
        c.insert(Instant::ZERO, v6(1), 1, entry(1));
        c.insert(Instant::ZERO, v6(1), 2, entry(2));
        c.insert(Instant::ZERO, peer(1), 1, entry(3));
        assert_eq!(c.get(Instant::ZERO, v6(1), 1), Some(entry(1)));
        assert_eq!(c.get(Instant::ZERO, v6(1), 2), Some(entry(2)));
        assert_eq!(c.get(Instant::ZERO, peer(1), 1), Some(entry(3)));
        assert_eq!(c.get(Instant::ZERO, v6(2), 1), None);
    }

    #[test]
    fn the_reply_arena_stays_within_twice_the_live_bytes_plus_slack() {
        // One key re-inserted forever (a duplicate reprocessed again and again) beside one
        // old entry that never leaves: the replaced replies must not pile up.
        let mut c = DedupCache::new(None, 10, usize::MAX, 0);
        let old = vec![7u8; 100];
        c.insert(Instant::ZERO, peer(1), 1, Some(&old));
        for i in 0..10_000u32 {
            let reply = vec![i as u8; 100];
            c.insert(Instant::from_millis(i64::from(i)), peer(2), 9, Some(&reply));
            assert!(c.arena_bytes() <= 2 * 200 + ARENA_SLACK_BYTES + 100);
        }
        assert_eq!(c.len(), 2);
        assert_eq!(c.get(Instant::ZERO, peer(1), 1), Some(Some(&old[..])));
        assert_eq!(
            c.get(Instant::ZERO, peer(2), 9),
            Some(Some(&[(9_999u32 as u8); 100][..]))
        );
    }

    #[test]
    fn without_a_lifetime_the_first_eviction_rebuilds_the_fifo_it_would_have_kept() {
        // Many short runs of the same random inserts (few keys, so that re-insertions at the
        // same instant and at later ones are frequent before the first eviction; mixed reply
        // sizes) into a cache that keeps its FIFO from the start and one that builds it at the
        // first eviction: after every insert, every key's lookup agrees.
        let mut rng = 0x9e37_79b9_7f4a_7c15u64;
        let mut rebuilt = 0;
        for trial in 0..3_000u32 {
            // (A byte cap evicts by what each cache has allocated, which a kept FIFO makes
            // differ: only entry caps here.)
            let (capacity, capacity_bytes) = match trial % 3 {
                0 => (4, usize::MAX),
                1 => (6, usize::MAX),
                _ => (3, usize::MAX),
            };
            let mut kept = DedupCache::new(None, capacity, capacity_bytes, 0);
            kept.ordered = true;
            let mut lazy = DedupCache::new(None, capacity, capacity_bytes, 0);
            let mut now = Instant::ZERO;
            for i in 0..24u32 {
                rng ^= rng << 13;
                rng ^= rng >> 7;
                rng ^= rng << 17;
                if rng % 4 == 0 {
                    now += Duration::from_millis(1);
                }
                let (port, mid) = (1 + (rng >> 16) as u16 % 2, (rng >> 24) as u16 % 4);
                let reply = vec![i as u8; (rng >> 32) as usize % 200];
                kept.insert(now, peer(port), mid, Some(&reply));
                lazy.insert(now, peer(port), mid, Some(&reply));
                assert_eq!(kept.len(), lazy.len());
                for (p, m) in (1..=2).flat_map(|p| (0..4).map(move |m| (p, m))) {
                    let (a, b) = (kept.get(now, peer(p), m), lazy.get(now, peer(p), m));
                    assert_eq!(a, b, "trial {trial}, insert {i}");
                }
            }
            rebuilt += u32::from(lazy.ordered);
        }
        assert!(rebuilt > 2_000, "the caps were reached: {rebuilt}");
    }
}
