//! The duplicate cache's entries, stored compactly: a simulated server remembers a reply per
//! exchange for the whole run, so this map is the largest thing a simulation touches at
//! random, and its size is cache misses and page faults per packet (issue 17: 80-B slots
//! became 32-B ones, 5–7 % of the simulator's CPU per packet at 100–400 flows).
//!
//! An IPv4 peer's key is one word (address, port and Message ID fill 64 bits exactly), which
//! is every peer of the simulator; IPv6 keys live in a second map, whole.

use std::collections::HashMap;
use std::net::{Ipv4Addr, SocketAddr, SocketAddrV4, SocketAddrV6};
use std::ops::Range;

use coaplab_cc::time::Instant;
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
#[derive(Debug, Default)]
pub(super) struct Entries {
    v4: HashMap<u64, Slot, FxBuildHasher>,
    v6: HashMap<(SocketAddrV6, u16), Slot, FxBuildHasher>,
}

/// Bytes of one IPv4 map entry (key word and slot), without its control byte.
pub(super) const V4_SLOT_BYTES: usize = std::mem::size_of::<(u64, Slot)>();
/// Bytes of one IPv6 map entry.
pub(super) const V6_SLOT_BYTES: usize = std::mem::size_of::<((SocketAddrV6, u16), Slot)>();

/// An IPv4 key as one word.
fn word(peer: SocketAddrV4, mid: u16) -> u64 {
    u64::from(peer.ip().to_bits()) << 32 | u64::from(peer.port()) << 16 | u64::from(mid)
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
            v4: HashMap::with_capacity_and_hasher(entries, FxBuildHasher),
            v6: HashMap::default(),
        }
    }

    pub(super) fn get(&self, key: Key) -> Option<&Slot> {
        match key.peer {
            SocketAddr::V4(v4) => self.v4.get(&word(v4, key.mid)),
            SocketAddr::V6(v6) => self.v6.get(&(v6, key.mid)),
        }
    }

    pub(super) fn get_mut(&mut self, key: Key) -> Option<&mut Slot> {
        match key.peer {
            SocketAddr::V4(v4) => self.v4.get_mut(&word(v4, key.mid)),
            SocketAddr::V6(v6) => self.v6.get_mut(&(v6, key.mid)),
        }
    }

    /// Stores `slot` under `key`, returning the one it replaces.
    pub(super) fn insert(&mut self, key: Key, slot: Slot) -> Option<Slot> {
        match key.peer {
            SocketAddr::V4(v4) => self.v4.insert(word(v4, key.mid), slot),
            SocketAddr::V6(v6) => self.v6.insert((v6, key.mid), slot),
        }
    }

    pub(super) fn remove(&mut self, key: Key) -> Option<Slot> {
        match key.peer {
            SocketAddr::V4(v4) => self.v4.remove(&word(v4, key.mid)),
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
        self.v4.shrink_to_fit();
        self.v6.shrink_to_fit();
    }

    /// The two maps' capacities (entries each holds without growing): IPv4, IPv6.
    pub(super) fn capacities(&self) -> (usize, usize) {
        (self.v4.capacity(), self.v6.capacity())
    }

    /// Every entry, in no particular order.
    pub(super) fn iter(&self) -> impl Iterator<Item = (Key, &Slot)> {
        let v4 = self.v4.iter().map(|(&w, s)| (key_of(w), s));
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
        self.v4.values_mut().chain(self.v6.values_mut())
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
