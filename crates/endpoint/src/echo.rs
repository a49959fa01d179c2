//! The Echo option against amplification (RFC 9175 §2.4, RFC 7252 §11.3): a server that would
//! send an unverified source more than [`crate::Amplification::factor`] times the bytes it
//! received answers 4.01 Unauthorized with an Echo value instead; a request repeating a
//! fresh value proves that its sender receives at its address, which is then remembered.
//!
//! Values are stateless: a 4-byte time bucket and an 8-byte keyed SipHash-2-4 of (key, client
//! address, bucket). A value is fresh in the bucket it was made and the next one, i.e. for
//! [`ECHO_BUCKET`] to twice that. The key is injected (sans-IO: no global RNG here).

use std::collections::{HashMap, HashSet, VecDeque};
use std::hash::Hasher;
use std::net::{IpAddr, SocketAddr};

use coaplab_cc::time::{Duration, Instant};

/// Most verified source addresses remembered; the oldest is forgotten first (it is then
/// challenged again once, at the cost of one round trip).
pub const VERIFIED_SOURCES_MAX: usize = 4096;

/// The default [`crate::Amplification::unverified_con_bytes_per_s`]: 256 KiB/s (2 Mbit/s),
/// enough for a few block-wise transfers from a client without Echo support, small as a
/// reflected flood.
pub const UNVERIFIED_CON_BYTES_PER_S: u64 = 256 << 10;

/// Depth of that allowance's token bucket, in seconds of its rate.
pub const UNVERIFIED_CON_BURST_S: u64 = 4;

/// The default [`crate::Amplification::unverified_replay_bytes`]: 16 KiB per source address
/// per [`REPLAY_WINDOW`] of replayed answers above the amplification factor (a client that
/// lost a few 1-KiB answers gets them again; a reflector gets about 270 B/s per victim).
pub const UNVERIFIED_REPLAY_BYTES: u64 = 16 << 10;

/// The window over which [`crate::Amplification::unverified_replay_bytes`] refills.
pub const REPLAY_WINDOW: Duration = Duration::from_secs(60);

/// Most source addresses whose replay budget is remembered; the oldest is forgotten first
/// (its budget is full again when it comes back). 4096 × ~64 B.
pub const REPLAY_SOURCES_MAX: usize = 4096;

/// Width of the time bucket an Echo value names: a value stays fresh 60–120 s, long enough
/// for any client's immediate retry and short enough that a captured value soon expires.
pub(crate) const ECHO_BUCKET: Duration = Duration::from_secs(60);

/// Bytes of an Echo value: bucket (4) + keyed hash (8). RFC 9175 §2.2.1 allows 1–40.
pub(crate) const ECHO_LEN_BYTES: usize = 12;

/// The bucket of `now`.
fn bucket(now: Instant) -> u32 {
    let ns = now.saturating_since(Instant::ZERO).as_nanos();
    (ns / ECHO_BUCKET.as_nanos()) as u32
}

/// The keyed hash of `from` in `bucket`.
fn mac(key: &[u8; 16], from: SocketAddr, bucket: u32) -> [u8; 8] {
    let k0 = u64::from_le_bytes(key[..8].try_into().expect("8 bytes"));
    let k1 = u64::from_le_bytes(key[8..].try_into().expect("8 bytes"));
    // std's SipHasher is SipHash-2-4 with explicit keys: a PRF, which is what a MAC of a
    // short input needs; deprecated only in favour of the randomly keyed DefaultHasher.
    #[allow(deprecated)]
    let mut h = std::hash::SipHasher::new_with_keys(k0, k1);
    match from {
        SocketAddr::V4(a) => h.write(&a.ip().octets()),
        SocketAddr::V6(a) => h.write(&a.ip().octets()),
    }
    h.write(&from.port().to_be_bytes());
    h.write(&bucket.to_be_bytes());
    h.finish().to_be_bytes()
}

/// The Echo value for `from` at `now`.
pub(crate) fn value(key: &[u8; 16], from: SocketAddr, now: Instant) -> [u8; ECHO_LEN_BYTES] {
    let b = bucket(now);
    let mut v = [0u8; ECHO_LEN_BYTES];
    v[..4].copy_from_slice(&b.to_be_bytes());
    v[4..].copy_from_slice(&mac(key, from, b));
    v
}

/// Whether `echo` is a value this server made for `from` and is still fresh at `now`.
pub(crate) fn is_fresh(key: &[u8; 16], from: SocketAddr, now: Instant, echo: &[u8]) -> bool {
    let Ok(v) = <[u8; ECHO_LEN_BYTES]>::try_from(echo) else {
        return false;
    };
    let b = u32::from_be_bytes([v[0], v[1], v[2], v[3]]);
    let age = bucket(now).wrapping_sub(b);
    age <= 1 && v[4..] == mac(key, from, b)
}

/// The token bucket of over-the-factor bytes CON requests from unverified sources may draw.
#[derive(Debug, Default)]
pub(crate) struct Allowance {
    /// Bytes available at `at`.
    bytes: u64,
    at: Option<Instant>,
}

impl Allowance {
    /// Takes `bytes` at `now` from a bucket filled at `rate` bytes/s (full at the first
    /// call); false, taking nothing, when not enough is left.
    pub(crate) fn take(&mut self, now: Instant, rate: u64, bytes: usize) -> bool {
        let depth = rate.saturating_mul(UNVERIFIED_CON_BURST_S);
        self.bytes = match self.at {
            None => depth,
            Some(t) => {
                let ns = now.saturating_since(t).as_nanos().max(0) as u128;
                let added = (ns * u128::from(rate) / 1_000_000_000) as u64;
                self.bytes.saturating_add(added).min(depth)
            }
        };
        // Fractions of a byte per refill are dropped: under a byte per call at any rate
        // that matters.
        self.at = Some(now);
        let bytes = bytes as u64;
        if self.bytes >= bytes {
            self.bytes -= bytes;
            true
        } else {
            false
        }
    }
}

/// Per source IP address, the bytes of replayed answers above the amplification factor it
/// may still be sent: a token bucket `depth` deep, refilled by `depth` per
/// [`REPLAY_WINDOW`], for the [`REPLAY_SOURCES_MAX`] most recently charged addresses.
#[derive(Debug, Default)]
pub(crate) struct ReplayBudget {
    /// Per address: bytes left at the instant.
    left: HashMap<IpAddr, (u64, Instant), rustc_hash::FxBuildHasher>,
    /// Addresses in the order they were first charged (the oldest is forgotten first).
    order: VecDeque<IpAddr>,
}

impl ReplayBudget {
    /// Takes `bytes` from `ip`'s budget at `now` (full at its first use); false, taking
    /// nothing, when not enough is left.
    pub(crate) fn take(&mut self, now: Instant, ip: IpAddr, depth: u64, bytes: usize) -> bool {
        let bytes = bytes as u64;
        let window = REPLAY_WINDOW.as_nanos().max(1) as u128;
        let left = match self.left.get(&ip) {
            None => depth,
            Some(&(left, at)) => {
                let ns = now.saturating_since(at).as_nanos().max(0) as u128;
                let added = (ns * u128::from(depth) / window).min(u128::from(depth)) as u64;
                left.saturating_add(added).min(depth)
            }
        };
        let (ok, left) = if left >= bytes {
            (true, left - bytes)
        } else {
            (false, left)
        };
        if self.left.insert(ip, (left, now)).is_none() {
            self.order.push_back(ip);
            while self.order.len() > REPLAY_SOURCES_MAX {
                if let Some(old) = self.order.pop_front() {
                    self.left.remove(&old);
                }
            }
        }
        ok
    }

    /// Addresses remembered.
    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.left.len()
    }
}

/// Source addresses verified by an Echo value, the most recent [`VERIFIED_SOURCES_MAX`].
#[derive(Debug, Default)]
pub(crate) struct Verified {
    set: HashSet<SocketAddr, rustc_hash::FxBuildHasher>,
    order: VecDeque<SocketAddr>,
}

impl Verified {
    pub(crate) fn contains(&self, from: SocketAddr) -> bool {
        self.set.contains(&from)
    }

    pub(crate) fn insert(&mut self, from: SocketAddr) {
        if self.set.insert(from) {
            self.order.push_back(from);
            while self.order.len() > VERIFIED_SOURCES_MAX {
                if let Some(old) = self.order.pop_front() {
                    self.set.remove(&old);
                }
            }
        }
    }

    pub(crate) fn len(&self) -> usize {
        self.set.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const KEY: [u8; 16] = *b"0123456789abcdef";

    fn peer(port: u16) -> SocketAddr {
        SocketAddr::from(([198, 18, 0, 1], port))
    }

    #[test]
    fn a_value_is_fresh_for_its_address_in_its_bucket_and_the_next() {
        let t = Instant::from_secs(130);
        let v = value(&KEY, peer(1), t);
        assert_eq!(v[..4], 2u32.to_be_bytes());
        assert!(is_fresh(&KEY, peer(1), t, &v));
        assert!(is_fresh(&KEY, peer(1), Instant::from_secs(239), &v));
        assert!(!is_fresh(&KEY, peer(1), Instant::from_secs(240), &v));
        assert!(!is_fresh(&KEY, peer(2), t, &v));
        assert!(!is_fresh(b"fedcba9876543210", peer(1), t, &v));
        assert!(!is_fresh(&KEY, peer(1), t, &v[..11]));
        let mut forged = v;
        forged[11] ^= 1;
        assert!(!is_fresh(&KEY, peer(1), t, &forged));
    }

    #[test]
    fn the_con_allowance_is_a_token_bucket() {
        let mut a = Allowance::default();
        let t = Instant::from_secs(1);
        // Full at first use: 4 s of 100 B/s.
        assert!(a.take(t, 100, 400));
        assert!(!a.take(t, 100, 1));
        assert!(a.take(Instant::from_millis(1_500), 100, 50));
        assert!(!a.take(Instant::from_millis(1_500), 100, 1));
        assert!(!a.take(t + Duration::from_secs(100), 0, 1));
    }

    #[test]
    fn the_replay_budget_is_per_address_refills_per_window_and_is_bounded() {
        let mut b = ReplayBudget::default();
        let ip = |n: u32| IpAddr::from(std::net::Ipv4Addr::from_bits(n));
        let t = Instant::from_secs(10);
        assert!(b.take(t, ip(1), 3_000, 1_038));
        assert!(b.take(t, ip(1), 3_000, 1_038));
        assert!(!b.take(t, ip(1), 3_000, 1_038), "924 B left");
        assert!(
            b.take(t, ip(2), 3_000, 1_038),
            "another address has its own"
        );
        // A third of the window refills a third of the depth.
        assert!(b.take(t + Duration::from_secs(20), ip(1), 3_000, 1_038));
        assert!(!b.take(t + Duration::from_secs(20), ip(1), 3_000, 1_038));
        assert!(!b.take(t, ip(3), 0, 1), "0: nothing at all");
        for n in 0..2 * REPLAY_SOURCES_MAX as u32 {
            b.take(t, ip(100 + n), 3_000, 1);
        }
        assert_eq!(b.len(), REPLAY_SOURCES_MAX);
    }

    #[test]
    fn the_verified_table_keeps_the_most_recent() {
        let mut v = Verified::default();
        for port in 0..=VERIFIED_SOURCES_MAX as u16 {
            v.insert(peer(port));
        }
        v.insert(peer(5));
        assert_eq!(v.len(), VERIFIED_SOURCES_MAX);
        assert!(!v.contains(peer(0)));
        assert!(v.contains(peer(1)) && v.contains(peer(VERIFIED_SOURCES_MAX as u16)));
    }
}
