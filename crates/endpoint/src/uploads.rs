//! The server's partial Block1 uploads (RFC 7959 §2.5): the bodies being reassembled, keyed
//! by client, path and Request-Tag, with the limits that bound them — a lifetime after the
//! last block, a table size, and each source IP address's share of it.

use std::collections::{HashMap, VecDeque};
use std::net::{IpAddr, SocketAddr};

use coaplab_cc::time::{Duration, Instant};

use crate::event::Event;

/// The default [`crate::Config::max_pending_uploads`]: Block1 uploads being reassembled at
/// once, over all clients; one more is refused with 5.03 (bounds the server's memory under a
/// flood of first blocks: at most 64 × [`MAX_UPLOAD_BYTES`] = 64 MiB).
pub const MAX_PENDING_UPLOADS: usize = 64;

/// The default [`crate::Config::max_pending_uploads_per_source`]: partial Block1 uploads one
/// source IP address may hold at once, so that 64 first blocks from one host cannot take the
/// whole table of [`MAX_PENDING_UPLOADS`] from everyone else.
pub const MAX_PENDING_UPLOADS_PER_SOURCE: usize = 8;

/// The largest body a Block1 upload may reach; beyond it the server answers 4.13 Request
/// Entity Too Large (RFC 7959 §2.9.3) and forgets the upload.
pub const MAX_UPLOAD_BYTES: usize = 1 << 20;

/// What a partial Block1 upload is reassembled under: the client's address, the request's
/// path, and its Request-Tag values (RFC 9175 §3: blocks with different Request-Tags, or one
/// with and one without, belong to different operations; `None` without the option), so
/// two uploads from one client to one path no longer mix when they are told apart. The
/// token is not part of it: RFC 7959 lets a client change it from block to block (ours and
/// libcoap's do).
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub(crate) struct UploadKey {
    pub(crate) from: SocketAddr,
    pub(crate) path: Vec<u8>,
    pub(crate) tag: Option<Vec<u8>>,
}

/// A partial Block1 upload: the body so far and when its last block arrived.
#[derive(Debug, Default)]
pub(crate) struct Upload {
    pub(crate) body: Vec<u8>,
    pub(crate) last: Instant,
}

/// The partial uploads and their limits (from [`crate::Config`]).
#[derive(Debug)]
pub(crate) struct Uploads {
    map: HashMap<UploadKey, Upload>,
    /// [`crate::Config::upload_lifetime`].
    lifetime: Option<Duration>,
    /// [`crate::Config::max_pending_uploads`].
    max: usize,
    /// [`crate::Config::max_pending_uploads_per_source`].
    per_source: usize,
}

impl Uploads {
    /// An empty table with these limits.
    pub(crate) fn new(lifetime: Option<Duration>, max: usize, per_source: usize) -> Uploads {
        Uploads {
            map: HashMap::new(),
            lifetime,
            max,
            per_source,
        }
    }

    /// Partial uploads held.
    pub(crate) fn len(&self) -> usize {
        self.map.len()
    }

    pub(crate) fn contains(&self, k: &UploadKey) -> bool {
        self.map.contains_key(k)
    }

    pub(crate) fn get_mut(&mut self, k: &UploadKey) -> Option<&mut Upload> {
        self.map.get_mut(k)
    }

    /// `k`'s upload, started empty when there is none.
    pub(crate) fn start(&mut self, k: &UploadKey) -> &mut Upload {
        self.map.entry(k.clone()).or_default()
    }

    pub(crate) fn remove(&mut self, k: &UploadKey) -> Option<Upload> {
        self.map.remove(k)
    }

    /// When the earliest partial upload expires (`None` without a lifetime or uploads).
    pub(crate) fn next_expiry(&self) -> Option<Instant> {
        if self.map.is_empty() {
            return None;
        }
        let lifetime = self.lifetime?;
        self.map
            .values()
            .map(|u| u.last)
            .min()
            .map(|t| t + lifetime)
    }

    /// Whether `k`'s upload is past its lifetime at `now`.
    pub(crate) fn expired(&self, now: Instant, k: &UploadKey) -> bool {
        self.map
            .get(k)
            .zip(self.lifetime)
            .is_some_and(|(u, l)| u.last + l <= now)
    }

    /// Forgets every partial upload whose lifetime ended at or before `now`, in deadline order.
    /// Inline, the search out of line: asked at every timer expiry of every endpoint, which
    /// nearly always holds no upload (the call cost ~23 instructions for that, issue 35).
    #[inline]
    pub(crate) fn expire_all(&mut self, now: Instant, events: &mut VecDeque<Event>) {
        if let Some(lifetime) = self.lifetime.filter(|_| !self.map.is_empty()) {
            self.expire_due(now, lifetime, events);
        }
    }

    /// [`Uploads::expire_all`] of a table holding uploads, their lifetime `lifetime`.
    #[inline(never)]
    fn expire_due(&mut self, now: Instant, lifetime: Duration, events: &mut VecDeque<Event>) {
        let mut due: Vec<_> = self
            .map
            .iter()
            .filter(|(_, u)| u.last + lifetime <= now)
            .map(|(k, u)| (u.last, k.clone()))
            .collect();
        due.sort();
        for (_, k) in due {
            self.expire(now, &k, events);
        }
    }

    /// Forgets `k`'s upload ([`Event::UploadExpired`]).
    pub(crate) fn expire(&mut self, now: Instant, k: &UploadKey, events: &mut VecDeque<Event>) {
        if let Some(u) = self.map.remove(k) {
            events.push_back(Event::UploadExpired {
                from: k.from,
                received_bytes: u.body.len(),
                at: now,
            });
        }
    }

    /// Partial uploads held by `ip` (all its ports).
    fn of(&self, ip: IpAddr) -> usize {
        self.map.keys().filter(|k| k.from.ip() == ip).count()
    }

    /// Whether a new partial upload from `from` finds no slot: the table is full, or `from`'s
    /// IP address already holds its share.
    pub(crate) fn full(&self, from: SocketAddr) -> bool {
        self.map.len() >= self.max
            || (self.per_source < self.max && self.of(from.ip()) >= self.per_source)
    }

    /// Makes room in a full upload table for one more from `from`, when `from` is within its
    /// per-source share and another source address holds more than `from` will: that
    /// source's oldest partial upload is dropped ([`Event::UploadEvicted`]). So however few
    /// sources fill the table (8 sources × 8), a new source gets a slot; only a table of
    /// sources each holding no more than it would is refused. True when a slot was made.
    pub(crate) fn evict_for(
        &mut self,
        now: Instant,
        from: SocketAddr,
        events: &mut VecDeque<Event>,
    ) -> bool {
        let mine = self.of(from.ip());
        if mine >= self.per_source {
            return false;
        }
        let mut counts: HashMap<IpAddr, usize> = HashMap::new();
        for k in self.map.keys() {
            *counts.entry(k.from.ip()).or_default() += 1;
        }
        let Some((heaviest, n)) = counts
            .into_iter()
            .max_by_key(|&(ip, n)| (n, std::cmp::Reverse(ip)))
        else {
            return false;
        };
        if n <= mine + 1 {
            return false;
        }
        let Some(victim) = self
            .map
            .iter()
            .filter(|(k, _)| k.from.ip() == heaviest)
            .min_by_key(|(k, u)| (u.last, (*k).clone()))
            .map(|(k, _)| k.clone())
        else {
            return false;
        };
        if let Some(u) = self.map.remove(&victim) {
            events.push_back(Event::UploadEvicted {
                from: victim.from,
                received_bytes: u.body.len(),
                at: now,
            });
        }
        true
    }
}
