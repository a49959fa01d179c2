//! The duplicate cache's entries, stored compactly: a simulated server remembers a reply per
//! exchange for the whole run, so this map is the largest thing a simulation touches at
//! random, and its size is cache misses and page faults per packet (issue 17: 80-B slots
//! became 32-B ones, 5–7 % of the simulator's CPU per packet at 100–400 flows).
//!
//! An IPv4 peer's key is one word (address, port and Message ID fill 64 bits exactly), which
//! is every peer of the simulator; IPv6 keys live in a second map, whole.

use std::collections::HashMap;
use std::hash::BuildHasher;
use std::net::{Ipv4Addr, SocketAddr, SocketAddrV4, SocketAddrV6};
use std::ops::Range;

use coaplab_cc::time::Instant;
use hashbrown::hash_table::{Entry, HashTable};
use rustc_hash::FxBuildHasher;

/// (peer, Message ID).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Key {
    pub(super) peer: SocketAddr,
    pub(super) mid: u16,
}

/// Where a cached reply lies in the arena, in one word: its start in the low 40 bits (an
/// arena of up to 1 TiB) and its length in the high 24; a length of all ones is "no reply".
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Span(u64);

const START_BITS: u32 = 40;
const START_MASK: u64 = (1 << START_BITS) - 1;
const NO_REPLY_LEN: u64 = (1 << (64 - START_BITS)) - 1;

impl Span {
    /// Nothing to replay (a NON, whose duplicates are dropped).
    pub(super) const NONE: Span = Span(NO_REPLY_LEN << START_BITS);

    /// `len` bytes at `start`, or `None` when either does not fit its bits (a reply of 16 MiB
    /// or more, which no datagram is, or an arena past 1 TiB).
    pub(super) fn new(start: usize, len: usize) -> Option<Span> {
        let (start, len) = (start as u64, len as u64);
        (start <= START_MASK && len < NO_REPLY_LEN).then_some(Span(len << START_BITS | start))
    }

    /// The reply's bytes in the arena, `None` for no reply.
    pub(super) fn range(self) -> Option<Range<usize>> {
        let len = self.0 >> START_BITS;
        let start = (self.0 & START_MASK) as usize;
        (len != NO_REPLY_LEN).then(|| start..start + len as usize)
    }

    /// The reply's length (0 for no reply).
    pub(super) fn len(self) -> usize {
        self.range().map_or(0, |r| r.len())
    }

    /// The same reply moved to `start` (which fits: the arena only shrinks when compacted).
    pub(super) fn moved_to(self, start: usize) -> Span {
        Span(self.0 & !START_MASK | start as u64 & START_MASK)
    }
}

/// The remembered outcome of one received message.
#[derive(Debug, Clone, Copy)]
pub(super) struct Slot {
    /// The reply sent ([`Span::NONE`]: none to replay).
    pub(super) reply: Span,
    pub(super) at: Instant,
    /// The insertion number of the FIFO slot that removes this entry: the first insertion of
    /// its key at `at` (a re-insertion at the same instant leaves that slot first in line).
    pub(super) seq: u64,
}

/// The map from [`Key`] to [`Slot`]. rustc's FxHash (a multiply per word, not SipHash, which
/// would dominate the server's per-datagram cost).
///
/// The IPv4 keys are in a hashbrown [`HashTable`] (the table behind std's `HashMap`, the same
/// hash, sizes and growth) so that a key the last lookup missed is inserted without being
/// searched for again: a server looks every request up, and a fresh one is inserted once it
/// is answered (issue 35: one search per fresh request, not two).
#[derive(Debug, Default)]
pub(super) struct Entries {
    v4: HashTable<(u64, Slot)>,
    v6: HashMap<(SocketAddrV6, u16), Slot, FxBuildHasher>,
    /// The IPv4 key [`Entries::lookup`] last found absent, while it still is (every insert
    /// clears it): its insert skips the search.
    vacant: Option<u64>,
}

/// Bytes of one IPv4 map entry (key word and slot), without its control byte.
pub(super) const V4_SLOT_BYTES: usize = std::mem::size_of::<(u64, Slot)>();
/// Bytes of one IPv6 map entry.
pub(super) const V6_SLOT_BYTES: usize = std::mem::size_of::<((SocketAddrV6, u16), Slot)>();

/// An IPv4 key as one word.
fn word(peer: SocketAddrV4, mid: u16) -> u64 {
    u64::from(peer.ip().to_bits()) << 32 | u64::from(peer.port()) << 16 | u64::from(mid)
}

/// A word's hash: what std's `HashMap<u64, _, FxBuildHasher>` computes.
#[inline]
fn hash(word: u64) -> u64 {
    FxBuildHasher.hash_one(word)
}

/// The hash of an IPv4 table entry, for the table's growth.
fn entry_hash(entry: &(u64, Slot)) -> u64 {
    hash(entry.0)
}

/// The key of a word made by [`word`].
fn key_of(word: u64) -> Key {
    let ip = Ipv4Addr::from_bits((word >> 32) as u32);
    Key {
        peer: SocketAddr::V4(SocketAddrV4::new(ip, (word >> 16) as u16)),
        mid: word as u16,
    }
}

impl Entries {
    /// Room for `entries` IPv4 keys (the simulator's peers) without rehashing.
    pub(super) fn with_capacity(entries: usize) -> Entries {
        Entries {
            v4: HashTable::with_capacity(entries),
            v6: HashMap::default(),
            vacant: None,
        }
    }

    #[inline]
    pub(super) fn get(&self, key: Key) -> Option<&Slot> {
        match key.peer {
            SocketAddr::V4(v4) => {
                let w = word(v4, key.mid);
                self.v4.find(hash(w), |e| e.0 == w).map(|e| &e.1)
            }
            SocketAddr::V6(v6) => self.v6.get(&(v6, key.mid)),
        }
    }

    /// [`Entries::get`], remembering an absent IPv4 key for the insert that may follow.
    #[inline]
    pub(super) fn lookup(&mut self, key: Key) -> Option<&Slot> {
        match key.peer {
            SocketAddr::V4(v4) => {
                let w = word(v4, key.mid);
                let found = self.v4.find(hash(w), |e| e.0 == w);
                if found.is_none() {
                    self.vacant = Some(w);
                }
                found.map(|e| &e.1)
            }
            SocketAddr::V6(v6) => self.v6.get(&(v6, key.mid)),
        }
    }

    pub(super) fn get_mut(&mut self, key: Key) -> Option<&mut Slot> {
        match key.peer {
            SocketAddr::V4(v4) => {
                let w = word(v4, key.mid);
                self.v4.find_mut(hash(w), |e| e.0 == w).map(|e| &mut e.1)
            }
            SocketAddr::V6(v6) => self.v6.get_mut(&(v6, key.mid)),
        }
    }

    /// Stores `slot` under `key`, returning the one it replaces.
    #[inline]
    pub(super) fn insert(&mut self, key: Key, slot: Slot) -> Option<Slot> {
        match key.peer {
            SocketAddr::V4(v4) => {
                let w = word(v4, key.mid);
                let h = hash(w);
                if self.vacant.take() == Some(w) {
                    // Absent since the lookup that missed it: no search.
                    self.v4.insert_unique(h, (w, slot), entry_hash);
                    return None;
                }
                match self.v4.entry(h, |e| e.0 == w, entry_hash) {
                    Entry::Occupied(mut e) => Some(std::mem::replace(&mut e.get_mut().1, slot)),
                    Entry::Vacant(e) => {
                        e.insert((w, slot));
                        None
                    }
                }
            }
            SocketAddr::V6(v6) => self.v6.insert((v6, key.mid), slot),
        }
    }

    pub(super) fn remove(&mut self, key: Key) -> Option<Slot> {
        match key.peer {
            SocketAddr::V4(v4) => {
                let w = word(v4, key.mid);
                match self.v4.find_entry(hash(w), |e| e.0 == w) {
                    Ok(e) => Some(e.remove().0 .1),
                    Err(_) => None,
                }
            }
            SocketAddr::V6(v6) => self.v6.remove(&(v6, key.mid)),
        }
    }

    pub(super) fn len(&self) -> usize {
        self.v4.len() + self.v6.len()
    }

    pub(super) fn is_empty(&self) -> bool {
        self.v4.is_empty() && self.v6.is_empty()
    }

    /// Gives back the memory of the maps (after a burst has expired).
    pub(super) fn shrink_to_fit(&mut self) {
        self.v4.shrink_to_fit(entry_hash);
        self.v6.shrink_to_fit();
    }

    /// The two maps' capacities (entries each holds without growing): IPv4, IPv6.
    pub(super) fn capacities(&self) -> (usize, usize) {
        (self.v4.capacity(), self.v6.capacity())
    }

    /// Every entry, in no particular order.
    pub(super) fn iter(&self) -> impl Iterator<Item = (Key, &Slot)> {
        let v4 = self.v4.iter().map(|(w, s)| (key_of(*w), s));
        let v6 = self.v6.iter().map(|(&(peer, mid), s)| {
            let key = Key {
                peer: SocketAddr::V6(peer),
                mid,
            };
            (key, s)
        });
        v4.chain(v6)
    }

    /// Every entry's slot, in no particular order.
    pub(super) fn slots_mut(&mut self) -> impl Iterator<Item = &mut Slot> {
        let v4 = self.v4.iter_mut().map(|(_, s)| s);
        v4.chain(self.v6.values_mut())
    }

    /// Entries the IPv4 map holds without rehashing, for the reserve test.
    #[cfg(test)]
    pub(super) fn capacity(&self) -> usize {
        self.v4.capacity()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_span_packs_start_and_length_and_refuses_what_does_not_fit() {
        let s = Span::new(123_456, 789).unwrap();
        assert_eq!(s.range(), Some(123_456..124_245));
        assert_eq!(s.len(), 789);
        assert_eq!(s.moved_to(7).range(), Some(7..796));
        let top = Span::new((1 << 40) - 1, (1 << 24) - 2).unwrap();
        assert_eq!(top.range(), Some((1 << 40) - 1..(1 << 40) + (1 << 24) - 3));
        assert_eq!(Span::new(0, 0).unwrap().range(), Some(0..0));
        assert_eq!(Span::new(0, (1 << 24) - 1), None);
        assert_eq!(Span::new(1 << 40, 1), None);
        assert_eq!(Span::NONE.range(), None);
        assert_eq!(Span::NONE.len(), 0);
    }

    #[test]
    fn a_key_a_lookup_missed_is_inserted_once_and_replaced_after() {
        let key = |port, mid| Key {
            peer: SocketAddr::from(([198, 18, 0, 1], port)),
            mid,
        };
        let slot = |seq| Slot {
            reply: Span::NONE,
            at: Instant::ZERO,
            seq,
        };
        let seq = |e: &Entries, k| e.get(k).map(|s| s.seq);
        let mut e = Entries::with_capacity(4);
        // Missed, then inserted without a search; its next insert replaces it.
        assert!(e.lookup(key(1, 1)).is_none());
        assert!(e.insert(key(1, 1), slot(1)).is_none());
        assert_eq!(e.insert(key(1, 1), slot(2)).map(|s| s.seq), Some(1));
        assert_eq!((e.len(), seq(&e, key(1, 1))), (1, Some(2)));
        // Missed, another key inserted meanwhile (the hint is gone), then the first.
        assert!(e.lookup(key(2, 1)).is_none());
        assert!(e.insert(key(3, 1), slot(3)).is_none());
        assert!(e.insert(key(2, 1), slot(4)).is_none());
        assert_eq!(e.insert(key(3, 1), slot(5)).map(|s| s.seq), Some(3));
        // Missed, a removal meanwhile, then inserted; growth past the reserve keeps all.
        assert!(e.lookup(key(4, 1)).is_none());
        assert_eq!(e.remove(key(2, 1)).map(|s| s.seq), Some(4));
        assert!(e.insert(key(4, 1), slot(6)).is_none());
        for mid in 0..100 {
            assert!(e.lookup(key(9, mid)).is_none());
            assert!(e.insert(key(9, mid), slot(100 + u64::from(mid))).is_none());
        }
        assert_eq!(e.len(), 103);
        assert_eq!(seq(&e, key(9, 57)), Some(157));
        assert_eq!(seq(&e, key(2, 1)), None);
        assert_eq!((seq(&e, key(3, 1)), seq(&e, key(4, 1))), (Some(5), Some(6)));
    }

    #[test]
    fn an_ipv4_key_survives_its_word() {
        for (ip, port, mid) in [([0, 0, 0, 0], 0, 0), ([198, 18, 0, 7], 10_003, 65_535)] {
            let key = Key {
                peer: SocketAddr::from((ip, port)),
                mid,
            };
            let SocketAddr::V4(v4) = key.peer else {
                unreachable!()
            };
            assert_eq!(key_of(word(v4, mid)), key);
        }
        let mut e = Entries::default();
        let v4 = Key {
            peer: SocketAddr::from(([198, 18, 0, 1], 5683)),
            mid: 1,
        };
        let v6 = Key {
            peer: SocketAddr::from(([0xfe80, 0, 0, 0, 0, 0, 0, 1], 5683)),
            mid: 1,
        };
        let slot = |seq| Slot {
            reply: Span::NONE,
            at: Instant::ZERO,
            seq,
        };
        assert!(e.insert(v4, slot(1)).is_none());
        assert!(e.insert(v6, slot(2)).is_none());
        assert_eq!(e.len(), 2);
        let mut seen: Vec<(Key, u64)> = e.iter().map(|(k, s)| (k, s.seq)).collect();
        seen.sort_by_key(|&(_, seq)| seq);
        assert_eq!(seen, [(v4, 1), (v6, 2)]);
        assert_eq!(e.remove(v6).map(|s| s.seq), Some(2));
        assert!(e.get(v6).is_none() && e.get(v4).is_some());
    }
}
