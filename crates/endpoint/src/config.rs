//! Endpoint settings: the RFC 7252 §4.8 transmission parameters the message layer owns (the
//! RTO algorithm owns the timers), deduplication bounds, block sizes and metric switches.

use coaplab_cc::time::Duration;

/// RFC 7252 §4.8.2 EXCHANGE_LIFETIME with the default parameters: 247 s.
pub const EXCHANGE_LIFETIME: Duration = Duration::from_secs(247);

/// Default [`Config::max_body_bytes`]: 64 MiB, far above the experiments' largest transfer
/// (1.41 MB) and small enough that a client following an endless Block2 stops in seconds.
pub const MAX_BODY_BYTES: usize = 64 * 1024 * 1024;

/// Settings of one endpoint. Every field has the RFC's default or the experiments'
/// (docs/experiments.md) ([`Config::default`]); scenario files override them.
///
/// The fields an endpoint reads on every datagram and timer come first, and `repr(C)` keeps
/// them in that order: they fill the struct's first 56 bytes, one cache line, where the
/// compiler's own layout spread them over all four of its lines (issue 35: a simulated
/// client's state is a cold line per field touched when 400 flows share a core).
#[derive(Debug, Clone, PartialEq)]
#[repr(C)]
pub struct Config {
    /// NSTART: outstanding interactions per destination (RFC 7252 §4.7). Further requests
    /// wait in a FIFO queue. At least 1.
    pub nstart: u32,
    /// Token length on the wire in bytes, 0–8 (docs/experiments.md §4: 2). In FASOR+token mode
    /// the last of these bytes carries the transmission ordinal, so sizes do not change.
    pub token_len_bytes: u8,
    /// Include the duplicate cache's next expiry in [`crate::Endpoint::poll_timeout`], so
    /// that an idle endpoint forgets expired entries (and frees their memory) on a timer, not
    /// only when new traffic arrives. Expired entries are never used either way, so this
    /// changes memory, not behaviour. Off by default: the simulator and scripted tests take
    /// an endpoint without deadlines as idle, and a purge would keep them running for a
    /// lifetime more; a long-running server (`coaplab server`) turns it on.
    pub dedup_purge_timer: bool,
    /// Keep response bodies and hand them out in [`crate::Event::RequestCompleted`]. Off in
    /// large simulations, where only lengths matter.
    pub keep_bodies: bool,
    /// Emit [`crate::Event::Snapshot`] with the algorithm's estimator after every completed
    /// or failed exchange (allocates; off unless a sink wants it).
    pub emit_snapshots: bool,
    /// Emit [`crate::Event::Sent`] for every copy of an exchange sent (on by default). A driver
    /// that accounts each copy as it sends it, from its [`crate::TransmitMeta::Exchange`]
    /// (which names the same exchange and copy, sent at the same instant), turns it off: the
    /// event is otherwise moved into the queue and read again for every copy (the simulator's
    /// clients outside traced runs, issue 35).
    pub emit_sent_events: bool,
    /// Block size in bytes (16, 32, …, 1024): the server's Block2 size and the client's
    /// Block1 size for uploads (RFC 7959 §2.2).
    pub block_size_bytes: usize,
    /// Ask for this Block2 size in the first request (early negotiation, RFC 7959 §2.4).
    /// `None` (docs/experiments.md §4.1): the first GET carries no Block2.
    pub request_block2_size_bytes: Option<usize>,
    /// How long a client waits for a separate response after an empty ACK, or for the
    /// response to a NON request, before the request fails.
    pub response_timeout: Duration,
    /// Largest response body a request accepts, in bytes over all its Block2 blocks. A
    /// response whose body would grow past it, or whose Size2 (RFC 7959 §4) announces more,
    /// fails the request with [`crate::FailReason::BodyTooLarge`] and no further block is
    /// asked for: a server sending an endless Block2 (M=1 forever) cannot make the client
    /// grow without bound. Counted whether or not [`Config::keep_bodies`] keeps the bytes.
    /// Default [`MAX_BODY_BYTES`] (64 MiB).
    pub max_body_bytes: usize,
    /// The first Message ID this endpoint allocates (RFC 7252 §4.4 asks for a random start;
    /// the simulator draws it from the run seed).
    pub initial_message_id: u16,
    /// The first token value (big-endian counter of `token_len_bytes` bytes).
    pub initial_token: u64,
    /// How long a received CON/NON is remembered for duplicate detection. RFC 7252: the
    /// EXCHANGE_LIFETIME (247 s); `None` keeps entries for the whole run (docs/experiments.md
    /// §4.3).
    pub dedup_lifetime: Option<Duration>,
    /// Most entries the duplicate cache holds; the oldest is forgotten first.
    pub dedup_capacity: usize,
    /// Most bytes the duplicate cache allocates: its reply arena's capacity, its hash
    /// tables' buckets (key, slot and control byte each) and its FIFO's capacity, as
    /// [`crate::Endpoint::dedup_bytes`] reports them after every call (issue 32 #2: the cap
    /// used to count the replies plus 256 B per entry, which let the structures allocate
    /// about four times it). When an entry would take it past the cap, the arena is compacted
    /// in place and, if that is not enough, the oldest entries are forgotten until the rest is
    /// reckoned at half the cap ([`crate::DEDUP_ENTRY_OVERHEAD_BYTES`] per entry plus its
    /// reply) and the spare capacity is given back (RFC 7252 §4.5 allows forgetting; a
    /// duplicate of a forgotten request is processed again). Within one call a structure
    /// being moved to a larger allocation may briefly hold up to twice the cap. Default
    /// [`DEDUP_CAPACITY_BYTES`] (32 MiB); `usize::MAX` in the simulator (no eviction by
    /// bytes, the cheaper bookkeeping of issue 17).
    pub dedup_capacity_bytes: usize,
    /// Entries the duplicate cache makes room for when the endpoint is built (at most
    /// `dedup_capacity`): a hint, it still grows past them. 0 (the default): it grows as
    /// entries come. The simulator sets it to the run's exchange count, so that the cache
    /// is not rehashed as it fills (issue 17: growing it from empty cost 6 % of a 100-flow
    /// run's CPU time). Over-estimating costs memory: each reserved entry ~80 B, touched
    /// only when used.
    pub dedup_reserve_entries: usize,
    /// Bytes of cached replies the duplicate cache makes room for when the endpoint is built
    /// (at most `dedup_capacity_bytes`): a hint like `dedup_reserve_entries`. 0 (the
    /// default): the reply arena doubles as it fills. The simulator sets it to its exchange
    /// count times the reply size (issue 17: each doubling copied the arena into fresh pages,
    /// and their faults were 4 % of a 400-flow run's CPU time). Reserved bytes the cache
    /// never fills are address space only: the arena fills from its start.
    pub dedup_reserve_reply_bytes: usize,
    /// Server processing time. Zero (the experiments): responses are piggybacked. Positive:
    /// a CON request is acknowledged at once with an empty ACK and the response follows as a
    /// separate CON after this delay (RFC 7252 §5.2.2).
    pub processing_delay: Duration,
    /// The Rexmit-Cnt option number a server echoes in piggybacked responses (FASOR,
    /// Globecom 2018; draft-ietf-core-fasor-02); `None` models a server unaware of it.
    pub rexmit_cnt_echo: Option<u16>,
    /// Serve entity tags (RFC 7252 §5.10.6): every response of `data/N` carries the ETag
    /// of its body, a GET naming it in an ETag option is answered 2.03 Valid without the
    /// body, and a PUT to `echo` answers the ETag of what it stored (`crate::media`). Off
    /// by default so that the experiments' message sizes stay those of docs/experiments.md
    /// §4; `coaplab server` turns it on. If-Match and If-None-Match are honoured either way.
    pub etags: bool,
    /// Emit a server's per-request events, [`crate::Event::Served`] and
    /// [`crate::Event::DuplicateRequest`] (on by default). A sink that reads neither turns them
    /// off: each is otherwise moved into the event queue and out again for every request (the
    /// simulator's server without observers: 2 % of a 400-flow run's instructions, issue 35).
    pub emit_request_events: bool,
    /// How long a partial Block1 upload (RFC 7959 §2.5) is kept after its last block: at
    /// last-block time + this lifetime the server forgets it (an [`crate::Event::UploadExpired`]
    /// follows), and a later block of it gets 4.08 Request Entity Incomplete (§2.3). RFC 7959
    /// lets a server drop partial-transfer state and names no time; the default is RFC 7252
    /// §4.8.2 EXCHANGE_LIFETIME (247 s), by which time no retransmission of the client's next
    /// block can still be on its way. `None` keeps partial uploads until completed, as the
    /// simulator's server (docs/experiments.md §4.3 keeps its state for the whole run).
    pub upload_lifetime: Option<Duration>,
    /// Most partial Block1 uploads reassembled at once, over all clients. The first block of
    /// one more is answered 5.03 Service Unavailable with Max-Age (RFC 7252 §5.9.3.4: the
    /// server is temporarily out of resources; 4.13 would tell the client its body is too
    /// large, RFC 7959 §2.9.3, which is not the case) and an [`crate::Event::UploadRefused`]
    /// follows. Also bounds the stored echo bodies served block-wise. Default
    /// [`crate::MAX_PENDING_UPLOADS`] (64: at most 64 MiB of partial bodies).
    pub max_pending_uploads: usize,
    /// Most of those partial Block1 uploads one source IP address may hold at once (all its
    /// ports together); its next first block is answered 5.03 like a full table, so one
    /// client cannot starve the others. Default [`crate::MAX_PENDING_UPLOADS_PER_SOURCE`]
    /// (8).
    pub max_pending_uploads_per_source: usize,
    /// The amplification limit of RFC 7252 §11.3 with the Echo option of RFC 9175 §2.4:
    /// `None` (the default, and the simulator) answers every request. `Some`: see
    /// [`Amplification`].
    pub amplification: Option<Amplification>,
    /// How long a Message ID this endpoint issued stays unusable for another message
    /// (RFC 7252 §4.4: not reused within EXCHANGE_LIFETIME): a request or further block that
    /// would need an ID issued less than this long ago waits (its request stalls, an
    /// [`crate::Event::MessageIdsExhausted`] says until when) instead of having its answer
    /// taken for an old one's by the peer's duplicate cache. With 65,536 IDs and the default
    /// [`EXCHANGE_LIFETIME`] (247 s) that is at most about 265 new messages per second on
    /// average over any 247 s, per endpoint. IDs are tracked in 64 groups of 1,024 (512 B);
    /// a group is reused when its last ID is that old. `None` (the simulator): no check, IDs
    /// wrap as before. Server-side IDs (NON and separate responses, notifications) are
    /// recorded but never wait.
    pub message_id_lifetime: Option<Duration>,
    /// How a server answers a duplicate CON request (RFC 7252 §4.5): from the duplicate
    /// cache (the RFC's behaviour, the default) or by running the handler again
    /// ([`ServerDuplicates`]).
    pub server_duplicates: ServerDuplicates,
}

/// How a server answers a duplicate of a CON request it has already answered.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ServerDuplicates {
    /// RFC 7252 §4.5: the reply sent to the first copy is sent again, byte for byte, without
    /// running the handler; a FASOR+token client sees the first copy's token echoed.
    #[default]
    Cache,
    /// The request is processed anew and the reply echoes this copy's token and Rexmit-Cnt,
    /// as libcoap's server did on the published testbeds (Pesola's thesis, the FASOR paper):
    /// a token echo then names the copy answered. Only piggybacked answers are reprocessed:
    /// a duplicate whose answer is a separate response (processing delay), or a Block1
    /// block (its reassembly state already holds the block), is still answered from the
    /// cache.
    Reprocess,
}

impl ServerDuplicates {
    /// The names accepted in scenario files and on the command line, in variant order.
    pub const NAMES: [&'static str; 2] = ["cache", "reprocess"];

    /// The name used in scenario files, results and on the command line.
    pub fn name(self) -> &'static str {
        match self {
            ServerDuplicates::Cache => "cache",
            ServerDuplicates::Reprocess => "reprocess",
        }
    }

    /// The variant named `name` (one of [`ServerDuplicates::NAMES`]).
    pub fn from_name(name: &str) -> Option<Self> {
        match name {
            "cache" => Some(ServerDuplicates::Cache),
            "reprocess" => Some(ServerDuplicates::Reprocess),
            _ => None,
        }
    }
}

/// RFC 9175 §2.4 amplification mitigation: a response more than `factor` times the size of
/// its request, to a source address not yet verified, is replaced by 4.01 Unauthorized with
/// an Echo option; the client repeats the request with that Echo value, which proves it
/// receives at its address, and gets the response. Verified addresses are remembered (the
/// most recent [`crate::VERIFIED_SOURCES_MAX`]).
///
/// NON requests are always held to the factor. CON requests are too, except within a
/// server-wide allowance of `unverified_con_bytes_per_s`: clients that do not implement the
/// Echo recovery (aiocoap 0.4's plain client) keep working while the server is not being
/// abused, and a flood of spoofed CON requests uses the allowance up within
/// [`crate::UNVERIFIED_CON_BURST_S`] seconds, after which they are challenged too (the way
/// SYN cookies and QUIC Retry engage under load). 0: CON is held to the factor always.
#[derive(Clone, PartialEq, Eq)]
pub struct Amplification {
    /// The largest response-to-request size ratio sent to an unverified source (RFC 9175
    /// §2.4 suggests 3).
    pub factor: u32,
    /// Bytes per second of over-the-factor responses sent to unverified sources of CON
    /// requests, over all of them (a token bucket [`crate::UNVERIFIED_CON_BURST_S`] seconds
    /// deep). Default [`crate::UNVERIFIED_CON_BYTES_PER_S`].
    pub unverified_con_bytes_per_s: u64,
    /// Bytes of answers *replayed* to duplicates (RFC 7252 §4.5, or reprocessed with
    /// [`ServerDuplicates::Reprocess`]) above `factor` times the duplicate's size that one
    /// unverified source IP address may be sent per [`crate::REPLAY_WINDOW`] (60 s), on top
    /// of `unverified_con_bytes_per_s`; beyond it a duplicate is answered 4.01 + Echo like a
    /// fresh request. Without it one answered CON resent with the same Message ID reflected
    /// its cached answer (74x for `/data/1024`) without limit. 0: every such replay is
    /// challenged. Default [`crate::UNVERIFIED_REPLAY_BYTES`] (16 KiB).
    pub unverified_replay_bytes: u64,
    /// The secret Echo values are keyed with (injected: the driver draws it from its random
    /// source). Values are a keyed hash of the client address and a time bucket, so the
    /// server keeps no state per challenge.
    pub key: [u8; 16],
}

impl core::fmt::Debug for Amplification {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        // The key stays out of logs.
        f.debug_struct("Amplification")
            .field("factor", &self.factor)
            .finish_non_exhaustive()
    }
}

/// The default [`Config::dedup_capacity_bytes`]: 32 MiB (with the rest of the server, peak
/// memory stays under 64 MiB under a flood).
pub const DEDUP_CAPACITY_BYTES: usize = 32 << 20;

impl Default for Config {
    fn default() -> Self {
        Config {
            nstart: 1,
            token_len_bytes: 2,
            initial_message_id: 0,
            initial_token: 0,
            block_size_bytes: 1024,
            request_block2_size_bytes: None,
            dedup_lifetime: Some(EXCHANGE_LIFETIME),
            dedup_capacity: 1 << 20,
            dedup_capacity_bytes: DEDUP_CAPACITY_BYTES,
            dedup_reserve_entries: 0,
            dedup_reserve_reply_bytes: 0,
            dedup_purge_timer: false,
            response_timeout: EXCHANGE_LIFETIME,
            processing_delay: Duration::ZERO,
            rexmit_cnt_echo: Some(65020),
            keep_bodies: true,
            etags: false,
            emit_snapshots: false,
            emit_request_events: true,
            emit_sent_events: true,
            upload_lifetime: Some(EXCHANGE_LIFETIME),
            max_pending_uploads: crate::uploads::MAX_PENDING_UPLOADS,
            max_body_bytes: MAX_BODY_BYTES,
            max_pending_uploads_per_source: crate::uploads::MAX_PENDING_UPLOADS_PER_SOURCE,
            amplification: None,
            server_duplicates: ServerDuplicates::Cache,
            message_id_lifetime: Some(EXCHANGE_LIFETIME),
        }
    }
}

/// Why a [`Config`] cannot be used.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ConfigError {
    /// `nstart` is 0.
    ZeroNstart,
    /// `token_len_bytes` above 8 (RFC 7252 §3).
    TokenTooLong(u8),
    /// A block size that is not 16, 32, …, 1024 (RFC 7959 §2.2).
    BlockSize(usize),
    /// An amplification factor of 0 (nothing could be sent to an unverified source).
    ZeroAmplification,
}

impl core::fmt::Display for ConfigError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            ConfigError::ZeroNstart => f.write_str("nstart must be at least 1"),
            ConfigError::TokenTooLong(n) => write!(f, "token_len_bytes {n} (0-8 allowed)"),
            ConfigError::BlockSize(n) => {
                write!(f, "block size {n} (16, 32, 64, 128, 256, 512 or 1024)")
            }
            ConfigError::ZeroAmplification => {
                f.write_str("amplification factor must be at least 1")
            }
        }
    }
}

impl std::error::Error for ConfigError {}

impl Config {
    /// Checks the values that have a range.
    pub fn validate(&self) -> Result<(), ConfigError> {
        if self.nstart == 0 {
            return Err(ConfigError::ZeroNstart);
        }
        if self.amplification.as_ref().is_some_and(|a| a.factor == 0) {
            return Err(ConfigError::ZeroAmplification);
        }
        if self.token_len_bytes > 8 {
            return Err(ConfigError::TokenTooLong(self.token_len_bytes));
        }
        for size in [Some(self.block_size_bytes), self.request_block2_size_bytes]
            .into_iter()
            .flatten()
        {
            if szx_of(size).is_none() {
                return Err(ConfigError::BlockSize(size));
            }
        }
        Ok(())
    }
}

/// SZX for a block size (RFC 7959 §2.2: size = 2^(SZX+4)).
pub(crate) fn szx_of(size_bytes: usize) -> Option<u8> {
    match size_bytes {
        16 => Some(0),
        32 => Some(1),
        64 => Some(2),
        128 => Some(3),
        256 => Some(4),
        512 => Some(5),
        1024 => Some(6),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::mem::{offset_of, size_of};

    #[test]
    fn the_fields_read_per_datagram_share_the_first_cache_line() {
        let end = |offset: usize, size: usize| offset + size;
        let ends = [
            end(offset_of!(Config, nstart), size_of::<u32>()),
            end(offset_of!(Config, token_len_bytes), 1),
            end(offset_of!(Config, dedup_purge_timer), 1),
            end(offset_of!(Config, keep_bodies), 1),
            end(offset_of!(Config, emit_snapshots), 1),
            end(offset_of!(Config, emit_sent_events), 1),
            end(offset_of!(Config, block_size_bytes), size_of::<usize>()),
            end(
                offset_of!(Config, request_block2_size_bytes),
                size_of::<Option<usize>>(),
            ),
            end(offset_of!(Config, response_timeout), size_of::<Duration>()),
            end(offset_of!(Config, max_body_bytes), size_of::<usize>()),
        ];
        assert!(ends.iter().all(|&e| e <= 64), "{ends:?}");
    }
}
