//! The star topology of docs/experiments.md §1.1: every client shares one uplink towards the server
//! and one downlink back.
//!
//! ```text
//! downlink: server → rest-of-path → [FIFO] → [serializer] → [propagation] → [loss] → client
//! uplink:   client → [FIFO] → [serializer] → [propagation] → [loss] → rest-of-path → server
//! ```
//!
//! [`Star`] is a [`Topology`], sans-IO in the quinn-proto sense (the trait gives the call
//! order). Packets carry the caller's bytes (moved in by [`Topology::send`], or copied in by
//! [`Star::send_ip`] with an IP length of the caller's; moved out on delivery: the caller's
//! buffer is swapped with the pooled one) and an opaque `tag`. Any address other than the
//! server's ([`SERVER_ADDR`]) is a client.
//!
//! A stage whose input order cannot change (no reordering jitter upstream) is evaluated
//! eagerly at send time, so in the default configuration a packet costs one event; otherwise
//! the hand-off waits for an internal event at the exact entry instant.

use std::net::SocketAddr;

use coaplab_base::time::Instant;

use crate::addr::SERVER_ADDR;
use crate::config::{ConfigError, NetworkConfig, IP_UDP_HEADER_BYTES};
use crate::engine::EventQueue;
use crate::link::delay::DelayStage;
use crate::link::{Link, LinkOutcome, LinkResult, LinkStats, LinkStreams};
use crate::record::{Delivery, Direction, Fate, PacketId, PacketRecord};
use crate::topology::{DirectionStats, SendError, Topology};

/// The IP length of a UDP datagram carrying `payload_bytes` (saturating).
fn udp_ip_len(payload_bytes: usize) -> u32 {
    u32::try_from(payload_bytes)
        .unwrap_or(u32::MAX)
        .saturating_add(IP_UDP_HEADER_BYTES)
}

/// A packet inside the network: what its arrival reads, in two cache lines.
///
/// A packet waits behind up to a buffer's worth of others, so at 400 flows its slot has left
/// the cache by the time it arrives, and each line of it read there is a miss (issue 35): the
/// 160-B slot, not aligned, spread what the arrival reads over three or four lines. What only
/// a recording reads lives in `Star::traces`, written only while recording (11 to 14 fewer
/// instructions per packet in the 100-flow UDP and TCP runs, 0.5 fewer L2 misses per packet
/// at 400 UDP flows).
#[derive(Debug)]
#[repr(C, align(64))]
struct InFlight {
    id: u64,
    tag: u64,
    src: SocketAddr,
    dst: SocketAddr,
    payload: Vec<u8>,
    ip_len: u32,
    up: bool,
}

impl InFlight {
    /// A free slot (every field is set when a packet takes it). The addresses are values, not
    /// options unwrapped at delivery: the unwrapped value was a temporary that the CPU stored
    /// and at once reloaded with wider loads, which wait for the store (issue 17).
    fn empty() -> InFlight {
        InFlight {
            id: 0,
            tag: 0,
            src: SERVER_ADDR,
            dst: SERVER_ADDR,
            payload: Vec::new(),
            ip_len: 0,
            up: false,
        }
    }
}

/// What a packet's record needs beyond its [`InFlight`] slot, kept only while recording.
#[derive(Debug, Clone, Copy, Default)]
struct SlotTrace {
    sent_at: Instant,
    enqueued_at: Instant,
    charged_bytes: u32,
    backlog_bytes: u64,
    backlog_packets: u32,
    serialized: Option<(Instant, Instant)>,
}

/// The star's one server ([`Topology::servers`]).
static SERVERS: [SocketAddr; 1] = [SERVER_ADDR];

/// [`EventQueue`] lanes of the arrivals at the clients and at the server.
const DOWN_LANE: usize = 0;
const UP_LANE: usize = 1;

/// Internal hand-offs, by slot index.
#[derive(Debug, Clone, Copy)]
enum Hop {
    /// A downlink packet leaves the rest-of-path and reaches the FIFO.
    EnterLink(u32),
    /// An uplink packet leaves the bottleneck and enters the rest-of-path.
    EnterRest(u32),
    /// A packet reaches its destination.
    Arrive(u32),
}

/// N clients and one server joined by a shared bottleneck.
///
/// ```
/// use coaplab_base::time::Instant;
/// use coaplab_netsim::{client_addr, NetworkConfig, Preset, Star, Topology, SERVER_ADDR};
///
/// let mut star = Star::new(&NetworkConfig::preset(Preset::Nbiot), 1).unwrap();
/// // 11 B of CoAP = 39 B IP: 5.2 ms at 60 kbit/s + 200 ms + 15 ms rest-of-path.
/// star.send(Instant::ZERO, client_addr(0), SERVER_ADDR, &mut vec![0; 11], 42).unwrap();
/// let mut buf = Vec::new();
/// let t = star.poll_at().unwrap();
/// let d = star.poll_delivery(t, &mut buf).unwrap();
/// assert_eq!((d.at, d.tag, buf.len()), (Instant::from_micros(220_200), 42, 11));
/// ```
#[derive(Debug)]
pub struct Star {
    mtu_bytes: u32,
    up: Link,
    down: Link,
    rest_up: DelayStage,
    rest_down: DelayStage,
    rest_down_reorders: bool,
    up_link_reorders: bool,
    events: EventQueue<Hop, 2>,
    slots: Vec<InFlight>,
    /// By slot, while recording: the rest of the packet's record.
    traces: Vec<SlotTrace>,
    free: Vec<u32>,
    next_id: u64,
    records: Option<Vec<PacketRecord>>,
}

impl Star {
    /// A network built from `config` (validated here) with random streams derived from
    /// `run_seed`: `down/jitter`, `down/loss`, `down/loss-chain`, the same under `up/`, and
    /// `down/rest-jitter`, `up/rest-jitter`. The server is [`SERVER_ADDR`].
    pub fn new(config: &NetworkConfig, run_seed: u64) -> Result<Star, ConfigError> {
        config.validate()?;
        let stream = |name: &str| crate::rng::stream(run_seed, name);
        Ok(Star {
            mtu_bytes: config.mtu_bytes,
            up: Link::new(&config.up, LinkStreams::named(run_seed, "up")),
            down: Link::new(&config.down, LinkStreams::named(run_seed, "down")),
            rest_up: DelayStage::new(config.rest_up, stream("up/rest-jitter")),
            rest_down: DelayStage::new(config.rest_down, stream("down/rest-jitter")),
            rest_down_reorders: config.rest_down.can_reorder(),
            up_link_reorders: config.up.propagation.can_reorder(),
            events: EventQueue::with_lanes(1024),
            slots: Vec::new(),
            traces: Vec::new(),
            free: Vec::new(),
            next_id: 0,
            records: None,
        })
    }

    /// The server's address.
    pub fn server(&self) -> SocketAddr {
        SERVER_ADDR
    }

    /// Counters of one bottleneck direction. Stages are evaluated when a packet's entry is
    /// certain, which may be ahead of the caller's clock (a downlink packet is offered to the
    /// FIFO at send time + rest-of-path): read the counters at the end of a run.
    pub fn stats(&self, direction: Direction) -> LinkStats {
        match direction {
            Direction::Up => self.up.stats(),
            Direction::Down => self.down.stats(),
        }
    }

    /// Packets inside the network (sent, not yet delivered, dropped or lost).
    pub fn in_flight(&self) -> usize {
        self.slots.len() - self.free.len()
    }

    /// Like [`Topology::send`], with the IP length given by the caller instead of `bytes + 28`
    /// and the bytes copied:
    /// for packets that are not UDP, e.g. a TCP model segment (`ip_len` = 40 + payload,
    /// [`crate::tcp::Segment::ip_len`]). `bytes` travel as the opaque payload (possibly
    /// empty; the caller may keep the packet in a table keyed by `tag` instead).
    pub fn send_ip(
        &mut self,
        now: Instant,
        src: SocketAddr,
        dst: SocketAddr,
        bytes: &[u8],
        ip_len: u32,
        tag: u64,
    ) -> Result<PacketId, SendError> {
        self.admit(now, src, dst, ip_len, tag, |payload| {
            payload.clear();
            payload.extend_from_slice(bytes);
        })
    }

    /// Sends a packet of `ip_len` whose payload `fill` puts in the pooled buffer.
    fn admit(
        &mut self,
        now: Instant,
        src: SocketAddr,
        dst: SocketAddr,
        ip_len: u32,
        tag: u64,
        fill: impl FnOnce(&mut Vec<u8>),
    ) -> Result<PacketId, SendError> {
        // The server's address a constant, not a field: compared and stored as immediates.
        let up = match (src == SERVER_ADDR, dst == SERVER_ADDR) {
            (false, true) => true,
            (true, false) => false,
            _ => return Err(SendError::NotViaServer { src, dst }),
        };
        if ip_len > self.mtu_bytes {
            return Err(SendError::ExceedsMtu {
                ip_len,
                mtu_bytes: self.mtu_bytes,
            });
        }
        let id = self.next_id;
        self.next_id += 1;
        let slot = self.allocate();
        let p = &mut self.slots[slot as usize];
        p.id = id;
        p.tag = tag;
        p.up = up;
        p.src = src;
        p.dst = dst;
        p.ip_len = ip_len;
        fill(&mut p.payload);
        if self.records.is_some() {
            self.trace_mut(slot).sent_at = now;
        }
        if up {
            self.enter_link(slot, now);
        } else {
            let at = self.rest_down.release(now);
            if self.rest_down_reorders {
                self.events.schedule(at, Hop::EnterLink(slot));
            } else {
                self.enter_link(slot, at);
            }
        }
        Ok(PacketId(id))
    }

    /// [`Topology::poll_delivery`] once its next event is due.
    fn poll_due(&mut self, now: Instant, buf: &mut Vec<u8>) -> Option<Delivery> {
        while let Some((at, hop)) = self.events.pop_due(now) {
            match hop {
                Hop::EnterLink(slot) => self.enter_link(slot, at),
                Hop::EnterRest(slot) => {
                    let arrive = self.rest_up.release(at);
                    self.events
                        .schedule_in_lane(UP_LANE, arrive, Hop::Arrive(slot));
                }
                Hop::Arrive(slot) => return Some(self.arrive(slot, at, buf)),
            }
        }
        None
    }

    fn allocate(&mut self) -> u32 {
        match self.free.pop() {
            Some(slot) => slot,
            None => {
                self.slots.push(InFlight::empty());
                (self.slots.len() - 1) as u32
            }
        }
    }

    /// Keeps what the record of the packet in `slot` says of its entry into its FIFO at `at`
    /// (recording on).
    #[cold]
    #[inline(never)]
    fn trace_enter(&mut self, slot: u32, at: Instant, outcome: LinkOutcome) {
        let t = self.trace_mut(slot);
        t.enqueued_at = at;
        t.charged_bytes = outcome.charged_bytes;
        t.backlog_bytes = outcome.backlog_bytes;
        t.backlog_packets = outcome.backlog_packets;
        t.serialized = match outcome.result {
            LinkResult::Overflow => None,
            LinkResult::Lost {
                ser_start, ser_end, ..
            }
            | LinkResult::Delivered {
                ser_start, ser_end, ..
            } => Some((ser_start, ser_end)),
        };
    }

    /// The rest of the record of the packet in `slot` (recording on).
    fn trace_mut(&mut self, slot: u32) -> &mut SlotTrace {
        let i = slot as usize;
        if self.traces.len() <= i {
            self.traces.resize(i + 1, SlotTrace::default());
        }
        &mut self.traces[i]
    }

    /// The packet in `slot` reaches its bottleneck FIFO at `at`.
    fn enter_link(&mut self, slot: u32, at: Instant) {
        let p = &self.slots[slot as usize];
        let up = p.up;
        let link = if up { &mut self.up } else { &mut self.down };
        let outcome = link.offer(at, p.ip_len);
        if self.records.is_some() {
            self.trace_enter(slot, at, outcome);
        }
        match outcome.result {
            LinkResult::Overflow => self.finish(slot, Fate::BufferOverflow),
            LinkResult::Lost { at, .. } => self.finish(slot, Fate::LinkError(at)),
            LinkResult::Delivered { at, .. } => {
                // The arrivals of one direction through a FIFO and a fixed delay come in
                // time order: they go in that direction's lane of the queue (no heap).
                if !up {
                    self.events
                        .schedule_in_lane(DOWN_LANE, at, Hop::Arrive(slot));
                } else if self.up_link_reorders {
                    self.events.schedule(at, Hop::EnterRest(slot));
                } else {
                    let arrive = self.rest_up.release(at);
                    self.events
                        .schedule_in_lane(UP_LANE, arrive, Hop::Arrive(slot));
                }
            }
        }
    }

    fn arrive(&mut self, slot: u32, at: Instant, buf: &mut Vec<u8>) -> Delivery {
        let p = &mut self.slots[slot as usize];
        std::mem::swap(&mut p.payload, buf);
        let delivery = Delivery {
            id: PacketId(p.id),
            at,
            src: p.src,
            dst: p.dst,
            tag: p.tag,
            direction: if p.up { Direction::Up } else { Direction::Down },
            ip_len: p.ip_len,
        };
        self.finish(slot, Fate::Delivered(at));
        delivery
    }

    /// Ends the journey of the packet in `slot`: records it if asked, frees the slot. Inline,
    /// the record out of line: an untraced run's every packet passes here, and the call with
    /// the record's registers saved and restored cost it 38 instructions (issue 35).
    #[inline]
    fn finish(&mut self, slot: u32, fate: Fate) {
        if self.records.is_some() {
            self.record(slot, fate);
        }
        self.free.push(slot);
    }

    /// Appends the record of the packet in `slot` (recording on).
    #[cold]
    #[inline(never)]
    fn record(&mut self, slot: u32, fate: Fate) {
        let t = *self.trace_mut(slot);
        let p = &self.slots[slot as usize];
        if let Some(records) = &mut self.records {
            records.push(PacketRecord {
                id: PacketId(p.id),
                tag: p.tag,
                direction: if p.up { Direction::Up } else { Direction::Down },
                src: p.src,
                dst: p.dst,
                ip_len: p.ip_len,
                charged_bytes: t.charged_bytes,
                sent_at: t.sent_at,
                enqueued_at: t.enqueued_at,
                backlog_bytes: t.backlog_bytes,
                backlog_packets: t.backlog_packets,
                serialized: t.serialized,
                fate,
            });
        }
    }
}

impl Topology for Star {
    /// Exactly one of the two addresses must be the server's.
    fn send(
        &mut self,
        now: Instant,
        src: SocketAddr,
        dst: SocketAddr,
        payload: &mut Vec<u8>,
        tag: u64,
    ) -> Result<PacketId, SendError> {
        let ip_len = udp_ip_len(payload.len());
        self.admit(now, src, dst, ip_len, tag, |pooled| {
            std::mem::swap(pooled, payload);
        })
    }

    /// An IPv4 packet of `20 + tcp_bytes` ([`Star::send_ip`]).
    #[inline]
    fn send_tcp(
        &mut self,
        now: Instant,
        src: SocketAddr,
        dst: SocketAddr,
        bytes: &[u8],
        tcp_bytes: u32,
        tag: u64,
    ) -> Result<PacketId, SendError> {
        let ip_len = crate::tcp::IPV4_HEADER_BYTES + tcp_bytes;
        self.send_ip(now, src, dst, bytes, ip_len, tag)
    }

    fn poll_at(&self) -> Option<Instant> {
        self.events.peek_time()
    }

    /// Arrivals in arrival order, ties in send order.
    ///
    /// Whether anything is due is decided inline: a loop ends every instant with a call that
    /// finds nothing (about 1.3 per packet in the simulator), whose entry and exit cost more
    /// than the check (issue 17).
    #[inline]
    fn poll_delivery(&mut self, now: Instant, buf: &mut Vec<u8>) -> Option<Delivery> {
        match self.events.peek_time() {
            Some(t) if t <= now => self.poll_due(now, buf),
            _ => None,
        }
    }

    /// The one server, [`SERVER_ADDR`].
    fn servers(&self) -> &[SocketAddr] {
        &SERVERS
    }

    /// The bottleneck link's counters ([`Star::stats`]).
    fn direction_stats(&self, direction: Direction) -> DirectionStats {
        self.stats(direction).into()
    }

    /// Turn it on before the first send: what only a record reads (send and enqueue instants,
    /// backlog, serialization) is kept from then on, so a packet already inside the network
    /// would be recorded without it.
    fn record_packets(&mut self, on: bool) {
        if on {
            self.records.get_or_insert_with(Vec::new);
        } else {
            self.records = None;
        }
    }

    fn take_records(&mut self) -> Vec<PacketRecord> {
        self.records
            .as_mut()
            .map(std::mem::take)
            .unwrap_or_default()
    }
}
