//! [`Mesh`]: the multi-hop 802.15.4 topology, a [`Topology`] like [`crate::Star`].
//!
//! A datagram sent at a node is compressed and fragmented for its first hop
//! ([`super::sixlowpan`]), queued at that node's MAC ([`super::mac`]), sent frame by frame with
//! CSMA/CA and ACKs (none with `mac_ack_request = false`) over the UDGM medium
//! ([`super::medium`]), reassembled at the next hop and, if that is not the destination,
//! compressed, fragmented and queued again there (route-over, as Contiki forwards), along
//! [`super::routing::Routes`].
//!
//! Fates: a datagram that does not fit in a MAC queue (all its fragments) is a
//! `BufferOverflow`; one whose frame was dropped by the MAC (channel-access failure, no ACK)
//! or whose reassembly failed at the next hop is a `LinkError` at that instant.

use std::collections::HashMap;
use std::net::SocketAddr;

use coaplab_base::rng::SeededRandom;
use coaplab_base::time::{Duration, Instant};
use rustc_hash::FxBuildHasher;

use super::contiki_csma::Discipline;
use super::csma::{Failure, Next};
use super::layout::{Layout, LayoutError, Role};
use super::mac::{self, Frame, Mac, Phase, ACK_BYTES, BROADCAST, FCS_BYTES};
use super::medium::{MediumStats, Udgm};
use super::params::{MeshParams, Routing, RPL_FORMATION_LIMIT};
use super::phy;
use super::routing::Routes;
use super::sixlowpan::{self, Hop, Input, Plan, Reassembly, MAX_DATAGRAM_BYTES};
use crate::addr::{client_addr, server_addr, SERVER_ADDR};
use crate::record::{Delivery, Direction, PacketId};
use crate::topology::{DirectionStats, SendError, Topology};

/// A mesh: where the nodes are and every model parameter.
#[derive(Debug, Clone, PartialEq)]
pub struct MeshConfig {
    /// Nodes and roles.
    pub layout: Layout,
    /// Radio, MAC and 6LoWPAN parameters.
    pub params: MeshParams,
}

/// Why a mesh cannot be built.
#[derive(Debug, Clone, PartialEq)]
pub enum MeshError {
    /// The layout is unusable.
    Layout(LayoutError),
    /// A server or client node cannot reach the border router over the UDGM links.
    Unreachable {
        /// The node.
        node: u16,
    },
    /// RPL's DODAG did not form within [`RPL_FORMATION_LIMIT`].
    NotFormed,
}

impl std::fmt::Display for MeshError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            MeshError::Layout(e) => write!(f, "mesh layout: {e}"),
            MeshError::Unreachable { node } => write!(
                f,
                "mesh node {node} has no path to the border router within the transmission range"
            ),
            MeshError::NotFormed => write!(
                f,
                "RPL's DODAG did not form within {} s",
                RPL_FORMATION_LIMIT.as_secs_f64()
            ),
        }
    }
}

impl std::error::Error for MeshError {}

/// Counters of one direction (towards the server: up).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct MeshStats {
    /// Datagrams handed to [`Topology::send`].
    pub offered_packets: u64,
    /// Datagrams delivered.
    pub delivered_packets: u64,
    /// Datagrams refused by a full MAC queue.
    pub queue_drops: u64,
    /// Datagrams lost to a MAC failure (channel access or no ACK), or dropped by routing (no
    /// route, RPL's loop checks, the hop limit).
    pub mac_drops: u64,
    /// The part of `mac_drops` that RPL's loop checks dropped: a second rank error or a
    /// forwarding error (Contiki 3.0 `rpl-ext-header.c`), or the IPv6 hop limit
    /// ([`HOP_LIMIT`]).
    pub loop_drops: u64,
    /// Datagrams whose every frame was acknowledged (or, without ACK requests, sent) but that
    /// the next hop could not reassemble.
    pub reassembly_drops: u64,
    /// Data frame transmissions, retransmissions included.
    pub frames_sent: u64,
    /// PSDU bytes of those transmissions.
    pub frame_bytes: u64,
    /// MAC retransmissions (missing ACKs followed by another attempt).
    pub retries: u64,
    /// Frames dropped after `macMaxCSMABackoffs` busy CCAs.
    pub channel_access_failures: u64,
    /// Frames dropped after `macMaxFrameRetries` retransmissions.
    pub no_ack_failures: u64,
    /// Unicast data frames sent without an ACK request (`mac_ack_request = false`) that their
    /// addressee did not decode; always 0 with ACKs, where `retries` and `no_ack_failures`
    /// count the losses.
    pub frames_lost: u64,
    /// Air time of the data frames.
    pub airtime: Duration,
    /// Most frames found in one MAC queue.
    pub queue_high_water_frames: u64,
}

/// A datagram inside the mesh.
#[derive(Debug, Default)]
struct Datagram {
    id: u64,
    tag: u64,
    up: bool,
    src: Option<SocketAddr>,
    dst: Option<SocketAddr>,
    src_node: u16,
    dst_node: u16,
    /// The node that holds it now (sending it, or, once reassembled, the next one).
    holder: u16,
    ip_len: u32,
    /// A TCP segment ([`Topology::send_tcp`]) rather than a UDP datagram: compressed without
    /// the UDP NHC ([`Hop::tcp`]).
    tcp: bool,
    payload: Vec<u8>,
    alive: bool,
    /// Hops taken (RPL: a datagram caught in a transient loop dies at [`HOP_LIMIT`], unless
    /// the hop-by-hop option's checks drop it first).
    hops: u32,
    /// The node it came from on its last hop ([`NO_NODE`](super::routing::NO_NODE) at its
    /// source).
    prev_hop: u16,
    /// RPL's hop-by-hop option (RFC 6553) as its last sender wrote it: the 'O' (down) flag, the
    /// 'R' (rank error) flag and the sender rank (Contiki 3.0 `rpl-ext-header.c`).
    rpl_opt: control::RplOption,
}

/// IPv6 hop limit of data datagrams (Contiki `UIP_TTL` 64).
const HOP_LIMIT: u32 = 64;

/// What a radio is sending.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum TxKind {
    Data,
    Ack { to: u16, seq: u8 },
}

#[derive(Debug, Clone, Copy)]
enum Ev {
    BackoffEnd {
        node: u16,
        gen: u32,
    },
    CcaEnd {
        node: u16,
        gen: u32,
    },
    TxStart {
        node: u16,
        gen: u32,
    },
    TxEnd {
        node: u16,
    },
    AckStart {
        node: u16,
        to: u16,
        seq: u8,
    },
    AckTimeout {
        node: u16,
        gen: u32,
    },
    /// Contiki: NullRDC's `AFTER_ACK_DETECTED_WAIT_TIME` is over; read what came.
    AckRead {
        node: u16,
        gen: u32,
    },
    Arrive {
        slot: u32,
    },
    Rpl {
        node: u16,
        gen: u32,
    },
}

/// Sequence-number filter value meaning "nothing received yet".
const NO_SEQ: u16 = u16::MAX;

/// The multi-hop 802.15.4 mesh.
///
/// A [`Topology`], sans-IO like [`crate::Star`] (the trait gives the call order). The `j`-th
/// node with role server in id order is [`server_addr`]`(j)` (the first one [`SERVER_ADDR`]);
/// the `k`-th client node in id order is [`client_addr`]`(k)`. "Up" is towards a server. A
/// [`Delivery`]'s `ip_len` is the uncompressed IPv6 length (40 + 8 with RPL's option + 8 +
/// CoAP bytes). Per-packet records ([`Topology::record_packets`]) are not kept for the mesh
/// yet; [`Mesh::record_frames`] logs every frame on air instead.
#[derive(Debug)]
pub struct Mesh {
    params: MeshParams,
    layout: Layout,
    medium: Udgm,
    routes: Routes,
    macs: Vec<Mac>,
    mac_rngs: Vec<SeededRandom>,
    medium_rng: SeededRandom,
    reassembly: Vec<Reassembly>,
    /// `last_seq[receiver * n + sender]`: duplicate filter.
    last_seq: Vec<u16>,
    tx_kind: Vec<TxKind>,
    /// Address → node. Every datagram sent asks twice; with rustc's FxHash (a multiply per
    /// word) a look-up costs about a quarter of the binary search over sorted addresses it
    /// replaces, whose `SocketAddr` comparisons were 15 M of the Ch. 6 grid run's 720 M
    /// instructions (docs/mesh-model.md, "Simulation cost"); SipHash costs more than either.
    addr_node: HashMap<SocketAddr, u16, FxBuildHasher>,
    /// The servers' addresses ([`Topology::servers`]).
    servers: Vec<SocketAddr>,
    events: super::agenda::Agenda<Ev>,
    slots: Vec<Datagram>,
    free: Vec<u32>,
    next_id: u64,
    max_payload: u32,
    received: Vec<u16>,
    stats: [MeshStats; 2],
    acks_skipped: u64,
    duplicates: u64,
    /// RPL (`Routing::Rpl`); `None` with static routes.
    rpl: Option<control::RplState>,
    /// The routes RPL's parents give (`None` with static routes).
    rpl_routes: Option<Routes>,
    control_stats: ControlStats,
    /// Internal time minus run time: the DODAG's formation (warm-up) precedes the run.
    epoch: Duration,
    /// Moving nodes ([`Mesh::set_mobility`]); `None`: every node stays put.
    mobility: Option<Box<crate::mesh::mobility::Tracker>>,
    /// Static routes rebuilt after a move.
    route_rebuilds: u64,
    /// Frames on air since [`Mesh::record_frames`]; `None`: not recording.
    frame_log: Option<Vec<FrameRecord>>,
    /// The datagrams sent since [`Mesh::record_frames`] (kept only while recording).
    datagram_log: Vec<frames::DatagramRecord>,
}

impl Mesh {
    /// The mesh of `config`, random streams from `run_seed`: `mesh/medium` for UDGM's draws,
    /// `mesh/mac/node{i}` for node `i`'s backoffs (and its first sequence number).
    pub fn new(config: &MeshConfig, run_seed: u64) -> Result<Mesh, MeshError> {
        let layout = config.layout.clone();
        layout
            .validate_with(config.params.off_mesh_server)
            .map_err(MeshError::Layout)?;
        let p = &config.params;
        let n = layout.nodes.len();
        let medium = Udgm::new(
            &layout.positions(),
            p.tx_range_m,
            p.interference_range_m,
            p.success_ratio_tx,
            p.success_ratio_rx,
            p.cca_threshold_dbm,
        );
        let root = layout
            .with_role(Role::BorderRouter)
            .next()
            .expect("validated: one border router");
        let routes = Routes::tree(n, root, |u| medium.links(u));
        for (i, node) in layout.nodes.iter().enumerate() {
            if node.role != Role::Router && routes.hops(i as u16).is_none() {
                return Err(MeshError::Unreachable { node: i as u16 });
            }
        }
        let mut addr_node = HashMap::with_hasher(FxBuildHasher);
        for (j, s) in layout.with_role(Role::Server).enumerate() {
            addr_node.insert(server_addr(j as u32), s);
        }
        for (k, c) in layout.with_role(Role::Client).enumerate() {
            addr_node.insert(client_addr(k as u32), c);
        }
        if p.off_mesh_server {
            // Datagrams to the off-mesh server end at the border router (the gateway).
            addr_node.insert(SERVER_ADDR, root);
        }
        let servers = if p.off_mesh_server {
            vec![SERVER_ADDR]
        } else {
            (0..layout.with_role(Role::Server).count() as u32)
                .map(server_addr)
                .collect()
        };
        let mut mac_rngs: Vec<SeededRandom> = (0..n)
            .map(|i| crate::rng::stream(run_seed, &format!("mesh/mac/node{i}")))
            .collect();
        let macs = mac_rngs
            .iter_mut()
            .map(|r| {
                use coaplab_base::rng::Random;
                Mac::new(
                    p.mac,
                    p.csma,
                    p.contiki,
                    p.queue_frames as usize,
                    r.below(256) as u8,
                )
            })
            .collect();
        let mut mesh = Mesh {
            params: p.clone(),
            medium,
            routes,
            macs,
            mac_rngs,
            medium_rng: crate::rng::stream(run_seed, "mesh/medium"),
            reassembly: vec![Reassembly::default(); n],
            last_seq: vec![NO_SEQ; n * n],
            tx_kind: vec![TxKind::Data; n],
            addr_node,
            servers,
            events: super::agenda::Agenda::new(),
            slots: Vec::new(),
            free: Vec::new(),
            next_id: 0,
            max_payload: mac::max_payload(p.short_addresses),
            received: Vec::with_capacity(n),
            stats: [MeshStats::default(); 2],
            acks_skipped: 0,
            duplicates: 0,
            layout,
            rpl: None,
            rpl_routes: None,
            control_stats: ControlStats::default(),
            epoch: Duration::ZERO,
            mobility: None,
            route_rebuilds: 0,
            frame_log: None,
            datagram_log: Vec::new(),
        };
        if let Routing::Rpl { objective, warmup } = p.routing {
            mesh.rpl_start(objective, run_seed);
            mesh.warm_up(warmup)?;
        }
        Ok(mesh)
    }

    /// Runs RPL alone until the DODAG has formed (or for `warmup`); the run starts there.
    fn warm_up(&mut self, warmup: Option<Duration>) -> Result<(), MeshError> {
        let limit = Instant::ZERO + warmup.unwrap_or(RPL_FORMATION_LIMIT);
        let mut buf = Vec::new();
        let mut formed = None;
        while let Some(t) = self.events.peek_time() {
            if t > limit {
                break;
            }
            let _ = self.step(t, &mut buf);
            if formed.is_none() && self.rpl_formed() {
                formed = Some(t);
                if warmup.is_none() {
                    break;
                }
            }
        }
        self.control_stats.formed_after = formed.map(|t| t - Instant::ZERO);
        self.epoch = match (warmup, formed) {
            (Some(w), _) => w,
            (None, Some(t)) => t - Instant::ZERO,
            (None, None) => return Err(MeshError::NotFormed),
        };
        self.control_stats.warm_up_time = self.epoch;
        self.control_stats.warm_up = self.control_stats.total;
        Ok(())
    }

    /// RPL's control-traffic counters (all zero with static routes).
    pub fn control_stats(&self) -> ControlStats {
        let mut c = self.control_stats;
        if let Some(r) = &self.rpl {
            c.parent_switches = r.nodes.iter().map(|x| x.parent_switches()).sum();
        }
        c
    }

    /// The model parameters.
    pub fn params(&self) -> &MeshParams {
        &self.params
    }

    /// The layout.
    pub fn layout(&self) -> &Layout {
        &self.layout
    }

    /// The routes (under RPL: over the parents chosen so far).
    pub fn routes(&self) -> &Routes {
        self.rpl_routes.as_ref().unwrap_or(&self.routes)
    }

    /// The node with address `addr`.
    pub fn node_of(&self, addr: SocketAddr) -> Option<u16> {
        self.addr_node.get(&addr).copied()
    }

    /// Counters of one direction (up: towards the server); [`Topology::direction_stats`] gives
    /// the drop counts every topology has.
    pub fn stats(&self, direction: Direction) -> MeshStats {
        self.stats[usize::from(direction == Direction::Down)]
    }

    /// Counters of the radio medium.
    pub fn medium_stats(&self) -> MediumStats {
        self.medium.stats()
    }

    /// ACKs not sent because the receiver's radio was already transmitting, and duplicate
    /// frames filtered by sequence number.
    pub fn ack_and_duplicate_counts(&self) -> (u64, u64) {
        (self.acks_skipped, self.duplicates)
    }

    /// Internal events (MAC timers, radio starts and ends, arrivals) scheduled so far.
    pub fn events_scheduled(&self) -> u64 {
        self.events.scheduled_total()
    }

    /// Datagrams inside the mesh.
    pub fn in_flight(&self) -> usize {
        self.slots.len() - self.free.len()
    }

    /// Runs the internal events (MAC, radio, RPL) due up to run instant `run_until`, and
    /// stops before the first datagram arrival: its run instant, or `None` when none is due
    /// by then. [`Topology::poll_delivery`] at that instant hands it out. A run loop that asks
    /// this instead of [`Topology::poll_at`] wakes once per delivery, not once per internal
    /// event; both handle the same events in the same order.
    pub fn advance(&mut self, run_until: Instant) -> Option<Instant> {
        let until = run_until + self.epoch;
        let internal = |ev: &Ev| !matches!(ev, Ev::Arrive { .. });
        while let Some((at, ev)) = self.events.pop_due_if(until, internal) {
            self.handle(at, ev);
        }
        match self.events.peek() {
            Some((at, Ev::Arrive { .. })) if at <= until => Some(at - self.epoch),
            _ => None,
        }
    }

    /// The run instant of the last internal event handled (an arrival included).
    pub fn clock(&self) -> Instant {
        self.events.now() - self.epoch
    }

    /// [`Topology::poll_delivery`] on the internal clock.
    fn step(&mut self, now: Instant, buf: &mut Vec<u8>) -> Option<Delivery> {
        while let Some((at, ev)) = self.events.pop_due(now) {
            if let Ev::Arrive { slot } = ev {
                return Some(self.arrive(slot, at, buf));
            }
            self.handle(at, ev);
        }
        None
    }

    /// One internal event other than an arrival.
    // Always inlined into its two loops (`advance`, `step`): out of line, its register saves
    // and restores were 28 M of the representative run's 811 M instructions (callgrind,
    // docs/BENCHMARKS.md).
    #[inline(always)]
    fn handle(&mut self, at: Instant, ev: Ev) {
        match ev {
            Ev::BackoffEnd { node, gen } => {
                let m = &mut self.macs[node as usize];
                if m.generation == gen && m.discipline != Discipline::Ieee802154 {
                    self.contiki_attempt(node, at);
                } else if m.generation == gen {
                    m.phase = Phase::Cca;
                    m.cca_start = at;
                    self.events
                        .schedule(at + phy::CCA, Ev::CcaEnd { node, gen });
                }
            }
            Ev::CcaEnd { node, gen } => {
                if self.macs[node as usize].generation == gen {
                    let busy = self
                        .medium
                        .cca_busy(node, self.macs[node as usize].cca_start);
                    self.cca_done(node, at, busy);
                }
            }
            Ev::TxStart { node, gen } => {
                if self.macs[node as usize].generation == gen {
                    self.tx_start(node, at);
                }
            }
            Ev::TxEnd { node } => self.tx_end(node, at),
            Ev::AckStart { node, to, seq } => {
                if self.medium.is_transmitting(node) {
                    self.acks_skipped += 1;
                } else {
                    self.move_radio(node, at);
                    self.medium.start_tx(node, &mut self.medium_rng);
                    self.tx_kind[node as usize] = TxKind::Ack { to, seq };
                    self.events
                        .schedule(at + phy::airtime(ACK_BYTES), Ev::TxEnd { node });
                }
            }
            Ev::AckTimeout { node, gen } => {
                let m = &self.macs[node as usize];
                if m.generation == gen && m.discipline != Discipline::Ieee802154 {
                    self.contiki_ack_wait_over(node, at);
                } else if m.generation == gen {
                    let next = {
                        let m = &mut self.macs[node as usize];
                        m.csma.no_ack(at, &mut self.mac_rngs[node as usize])
                    };
                    if matches!(next, Next::Cca(_)) {
                        self.head_stats(node).retries += 1;
                    }
                    self.csma_next(node, at, next);
                }
            }
            Ev::AckRead { node, gen } => {
                if self.macs[node as usize].generation == gen {
                    self.contiki_ack_read(node, at);
                }
            }
            Ev::Rpl { node, gen } => self.rpl_timer(node, gen, at),
            Ev::Arrive { .. } => unreachable!("arrivals are the caller's"),
        }
    }

    fn dir(&mut self, up: bool) -> &mut MeshStats {
        &mut self.stats[usize::from(!up)]
    }

    /// The counters `node`'s head frame counts in: its datagram's direction, or control.
    fn head_stats(&mut self, node: u16) -> &mut MeshStats {
        let head = self.macs[node as usize].queue.front().copied();
        match head {
            Some(f) if f.control.is_some() => &mut self.control_stats.mac,
            Some(f) => {
                let up = self.slots[f.slot as usize].up;
                self.dir(up)
            }
            None => self.dir(true),
        }
    }

    /// Starts CSMA/CA for the head frame of an idle MAC.
    // Always inlined, as is `cca_done`: both mostly hand over to the Contiki MAC, and out of
    // line the extra frame's register saves and restores ran at every data frame.
    #[inline(always)]
    fn kick(&mut self, node: u16, now: Instant) {
        let m = &mut self.macs[node as usize];
        if m.discipline != Discipline::Ieee802154 {
            return self.contiki_kick(node, now);
        }
        if m.phase != Phase::Idle || m.queue.is_empty() {
            return;
        }
        let gen = m.bump();
        // CSMA/CA starts once the interframe space after the last frame (or its ACK) is over.
        let at = m
            .csma
            .begin(now.max(m.ifs_until), &mut self.mac_rngs[node as usize]);
        m.phase = Phase::Backoff;
        self.events.schedule(at, Ev::BackoffEnd { node, gen });
    }

    #[inline(always)]
    fn cca_done(&mut self, node: u16, at: Instant, busy: bool) {
        let m = &mut self.macs[node as usize];
        if m.discipline != Discipline::Ieee802154 {
            return self.contiki_cca_done(node, at, busy);
        }
        let next = m.csma.cca_done(at, busy, &mut self.mac_rngs[node as usize]);
        self.csma_next(node, at, next);
    }

    // Always inlined: most callers pass one known variant (the Contiki CCA's `Transmit` at
    // every data frame), so each keeps only its arm and no call frame.
    #[inline(always)]
    fn csma_next(&mut self, node: u16, at: Instant, next: Next) {
        let m = &mut self.macs[node as usize];
        let gen = m.generation;
        match next {
            Next::Cca(t) => {
                m.phase = Phase::Backoff;
                self.events.schedule(t, Ev::BackoffEnd { node, gen });
            }
            Next::Transmit(t) => {
                m.phase = Phase::Turnaround;
                self.events.schedule(t, Ev::TxStart { node, gen });
            }
            Next::Fail(f) => {
                match f {
                    Failure::ChannelAccess => self.head_stats(node).channel_access_failures += 1,
                    Failure::NoAck => {
                        self.head_stats(node).no_ack_failures += 1;
                        if let Some(&h) = self.macs[node as usize].queue.front() {
                            let tx = self.macs[node as usize].attempt();
                            self.rpl_link_sample(node, h.to, false, tx, at);
                        }
                    }
                }
                self.drop_head(node, at);
            }
        }
    }

    // Always inlined into `Mesh::handle`, its one caller (see `contiki_attempt`).
    #[inline(always)]
    fn tx_start(&mut self, node: u16, at: Instant) {
        if self.medium.is_transmitting(node) || at < self.macs[node as usize].ifs_until {
            // Still sending an ACK, or within the SIFS after it: the channel is busy for this
            // frame.
            return self.cca_done(node, at, true);
        }
        let Some(&frame) = self.macs[node as usize].queue.front() else {
            return;
        };
        self.move_radio(node, at);
        self.medium.start_tx(node, &mut self.medium_rng);
        self.tx_kind[node as usize] = TxKind::Data;
        self.macs[node as usize].phase = Phase::Transmitting;
        let airtime = phy::airtime(u32::from(frame.psdu_bytes));
        if let Some(c) = frame.control {
            self.count_control(c, frame.psdu_bytes);
        }
        let s = self.head_stats(node);
        s.frames_sent += 1;
        s.frame_bytes += u64::from(frame.psdu_bytes);
        s.airtime += airtime;
        self.events.schedule(at + airtime, Ev::TxEnd { node });
    }

    fn tx_end(&mut self, node: u16, at: Instant) {
        let kind = self.tx_kind[node as usize];
        let addressee = match kind {
            TxKind::Data => self.macs[node as usize].queue.front().map(|f| f.to),
            TxKind::Ack { to, .. } => Some(to),
        };
        // The receivers are listed only for a broadcast and for the frame log: a unicast
        // frame or ACK needs to know whether its addressee decoded it.
        let mut listed = std::mem::take(&mut self.received);
        listed.clear();
        let list = addressee == Some(BROADCAST) || self.frame_log.is_some();
        let mut decoded = false;
        self.medium.end_tx(node, at, |r| {
            decoded |= Some(r) == addressee;
            if list {
                listed.push(r);
            }
        });
        match kind {
            TxKind::Data => {
                if let Some(&frame) = self.macs[node as usize].queue.front() {
                    self.log_frame(node, &frame, at, &listed);
                    if frame.to == BROADCAST {
                        // No ACK, no retry: done once on air.
                        for &r in &listed {
                            self.got_control(r, node, frame, at);
                        }
                        self.macs[node as usize].finish_head(at, false);
                        self.kick(node, at);
                        self.received = listed;
                        return;
                    }
                    self.received = listed;
                    if decoded {
                        self.got_data(frame.to, node, frame, at);
                    }
                    if !self.params.mac_ack_request {
                        // No ACK requested (Contiki 3.0 NullRDC without
                        // NULLRDC_CONF_802154_AUTOACK: nullrdc.c `send_one_packet` maps
                        // cc2420_send's RADIO_TX_OK to MAC_TX_OK): done once on air, a
                        // success for the MAC and RPL whether or not the addressee decoded it.
                        if !decoded {
                            self.head_stats(node).frames_lost += 1;
                        }
                        return self.head_sent(node, at);
                    }
                    let m = &mut self.macs[node as usize];
                    m.phase = Phase::AwaitAck;
                    let gen = m.generation;
                    self.events
                        .schedule(at + m.ack_wait(), Ev::AckTimeout { node, gen });
                }
            }
            TxKind::Ack { to, seq } => {
                if self.frame_log.is_some() {
                    self.log_ack(node, to, seq, at, &listed);
                }
                self.received = listed;
                let m = &self.macs[to as usize];
                if decoded
                    && m.phase == Phase::AwaitAck
                    && m.queue.front().is_some_and(|f| f.seq == seq)
                {
                    if m.discipline == Discipline::Ieee802154 {
                        self.head_sent(to, at);
                    } else {
                        // NullRDC reads the ACK only when its wait is over.
                        self.macs[to as usize].acked = true;
                    }
                }
            }
        }
    }

    /// `receiver` decoded `frame` from `sender` at `at`.
    fn got_data(&mut self, receiver: u16, sender: u16, frame: Frame, at: Instant) {
        if self.params.mac_ack_request {
            self.schedule_ack(receiver, sender, frame, at);
        }
        let n = self.macs.len();
        let filter = &mut self.last_seq[receiver as usize * n + sender as usize];
        if *filter == u16::from(frame.seq) {
            self.duplicates += 1;
            return;
        }
        *filter = u16::from(frame.seq);
        if frame.control.is_some() {
            return self.got_control(receiver, sender, frame, at);
        }
        let input = self.reassembly[receiver as usize].input(
            at,
            sender,
            frame.datagram,
            u32::from(frame.fragment),
            u32::from(frame.fragments),
            self.params.reass_maxage,
        );
        let d = &self.slots[frame.slot as usize];
        if input == Input::Complete && d.alive && d.id == frame.datagram {
            self.forward(frame.slot, receiver, at);
        }
    }

    /// `receiver` owes `sender` the hardware auto-ACK of `frame` (MSPSim's CC2420 sends it as
    /// an ordinary transmission through the radio medium, so UDGM's TX and RX ratios apply to
    /// it as to any frame: `CC2420.java` `TX_ACK` → `rfListener.receivedByte`, Cooja's
    /// `Msp802154Radio` → `TRANSMISSION_STARTED` → `UDGM.createConnections`).
    fn schedule_ack(&mut self, receiver: u16, sender: u16, frame: Frame, at: Instant) {
        let turnaround = self.macs[receiver as usize].ack_delay();
        self.events.schedule(
            at + turnaround,
            Ev::AckStart {
                node: receiver,
                to: sender,
                seq: frame.seq,
            },
        );
        // The receiver's own next frame follows its ACK by at least a SIFS (§7.5.1.3).
        let r = &mut self.macs[receiver as usize];
        r.ifs_until = r
            .ifs_until
            .max(at + turnaround + phy::airtime(ACK_BYTES) + mac::ifs(ACK_BYTES));
    }

    /// `node`'s head frame is done: acknowledged, or on air without an ACK request.
    fn head_sent(&mut self, node: u16, at: Instant) {
        let m = &mut self.macs[node as usize];
        let tx = m.attempt();
        if let Some(frame) = m.finish_head(at, false) {
            self.rpl_link_sample(node, frame.to, true, tx, at);
            if frame.control.is_none()
                && u32::from(frame.fragment) + 1 == u32::from(frame.fragments)
            {
                let d = &self.slots[frame.slot as usize];
                if d.alive && d.id == frame.datagram && d.holder == node {
                    // Every frame acknowledged, yet the next hop has no datagram.
                    let up = d.up;
                    self.dir(up).reassembly_drops += 1;
                    self.finish(frame.slot);
                }
            }
        }
        self.kick(node, at);
    }

    /// Drops the head frame and the rest of its datagram at `node`.
    fn drop_head(&mut self, node: u16, at: Instant) {
        if let Some(frame) = self.macs[node as usize].finish_head(at, true) {
            if frame.control.is_some() {
                return self.kick(node, at);
            }
            let d = &self.slots[frame.slot as usize];
            if d.alive && d.id == frame.datagram && d.holder == node {
                let up = d.up;
                self.dir(up).mac_drops += 1;
                self.finish(frame.slot);
            }
        }
        self.kick(node, at);
    }

    /// The datagram in `slot` is whole at `node`.
    fn forward(&mut self, slot: u32, node: u16, at: Instant) {
        if !self.rpl_verify_header(slot, node, at) {
            let up = self.slots[slot as usize].up;
            let s = self.dir(up);
            s.mac_drops += 1;
            s.loop_drops += 1;
            return self.finish(slot);
        }
        let d = &mut self.slots[slot as usize];
        d.prev_hop = d.holder;
        d.holder = node;
        if node == d.dst_node {
            self.events.schedule(at, Ev::Arrive { slot });
        } else {
            self.enqueue(slot, node, at);
        }
    }

    /// Frames the datagram in `slot` for its hop from `node` and queues them.
    fn enqueue(&mut self, slot: u32, node: u16, at: Instant) {
        self.refresh_routes(at);
        let d = &self.slots[slot as usize];
        let next = if d.hops >= HOP_LIMIT {
            let up = d.up;
            self.dir(up).loop_drops += 1;
            None
        } else {
            self.rpl_route(slot, node, at)
        };
        let d = &self.slots[slot as usize];
        let Some(next) = next else {
            let up = d.up;
            self.dir(up).mac_drops += 1;
            return self.finish(slot);
        };
        let hop = Hop {
            forwarded: node != d.src_node,
            src_inline: node != d.src_node,
            dst_inline: next != d.dst_node,
            short_addresses: self.params.short_addresses,
            rpl_hbh: self.params.rpl_hbh_option,
            tcp: d.tcp,
        };
        let plan = Plan::new(d.ip_len, hop, self.max_payload);
        self.slots[slot as usize].hops += 1;
        let d = &self.slots[slot as usize];
        let (up, id) = (d.up, d.id);
        let header = mac::header_bytes(self.params.short_addresses) + FCS_BYTES;
        let m = &mut self.macs[node as usize];
        if !m.has_room(plan.frames as usize, next) {
            self.dir(up).queue_drops += 1;
            return self.finish(slot);
        }
        for k in 0..plan.frames {
            m.push(
                Frame {
                    slot,
                    datagram: id,
                    fragment: k as u16,
                    fragments: plan.frames as u16,
                    psdu_bytes: (header + plan.payload_bytes(k)) as u16,
                    to: next,
                    seq: 0,
                    control: None,
                },
                at,
            );
        }
        let len = m.queue.len() as u64;
        let s = self.dir(up);
        s.queue_high_water_frames = s.queue_high_water_frames.max(len);
        self.kick(node, at);
    }

    fn arrive(&mut self, slot: u32, at: Instant, buf: &mut Vec<u8>) -> Delivery {
        let d = &mut self.slots[slot as usize];
        std::mem::swap(&mut d.payload, buf);
        let delivery = Delivery {
            id: PacketId(d.id),
            at,
            src: d.src.unwrap_or(SERVER_ADDR),
            dst: d.dst.unwrap_or(SERVER_ADDR),
            tag: d.tag,
            direction: if d.up { Direction::Up } else { Direction::Down },
            ip_len: d.ip_len,
        };
        let up = d.up;
        self.dir(up).delivered_packets += 1;
        self.finish(slot);
        delivery
    }

    fn finish(&mut self, slot: u32) {
        self.slots[slot as usize].alive = false;
        self.free.push(slot);
    }
}

impl Mesh {
    /// [`Topology::send`] and [`Topology::send_tcp`]: a datagram of `ip_len` (TCP when
    /// `tcp`) whose bytes `fill` puts in its slot.
    fn admit(
        &mut self,
        run_now: Instant,
        src: SocketAddr,
        dst: SocketAddr,
        (ip_len, tcp): (u32, bool),
        tag: u64,
        fill: impl FnOnce(&mut Vec<u8>),
    ) -> Result<PacketId, SendError> {
        let src_node = self.node_of(src).ok_or(SendError::UnknownAddress(src))?;
        let dst_node = self.node_of(dst).ok_or(SendError::UnknownAddress(dst))?;
        if src_node == dst_node {
            return Err(SendError::SameNode(src));
        }
        let now = run_now + self.epoch;
        if ip_len > MAX_DATAGRAM_BYTES {
            return Err(SendError::ExceedsMtu {
                ip_len,
                mtu_bytes: MAX_DATAGRAM_BYTES,
            });
        }
        let id = self.next_id;
        self.next_id += 1;
        let up = self.layout.nodes[usize::from(dst_node)].role == Role::Server
            || (self.params.off_mesh_server && dst == SERVER_ADDR);
        let slot = match self.free.pop() {
            Some(s) => s,
            None => {
                self.slots.push(Datagram::default());
                (self.slots.len() - 1) as u32
            }
        };
        let d = &mut self.slots[slot as usize];
        d.id = id;
        d.tag = tag;
        d.up = up;
        d.src = Some(src);
        d.dst = Some(dst);
        d.src_node = src_node;
        d.dst_node = dst_node;
        d.holder = src_node;
        d.ip_len = ip_len;
        d.tcp = tcp;
        fill(&mut d.payload);
        d.alive = true;
        d.hops = 0;
        d.prev_hop = super::routing::NO_NODE;
        d.rpl_opt = control::RplOption::default();
        if self.frame_log.is_some() {
            self.log_datagram(slot);
        }
        self.dir(up).offered_packets += 1;
        self.enqueue(slot, src_node, now);
        Ok(PacketId(id))
    }
}

impl Topology for Mesh {
    /// Any two nodes of the mesh ([`SendError::UnknownAddress`] otherwise); a datagram to the
    /// off-mesh server ends at the border router.
    fn send(
        &mut self,
        run_now: Instant,
        src: SocketAddr,
        dst: SocketAddr,
        payload: &mut Vec<u8>,
        tag: u64,
    ) -> Result<PacketId, SendError> {
        let coap_len = u32::try_from(payload.len()).unwrap_or(u32::MAX);
        let ip_len = sixlowpan::ipv6_len(coap_len.min(1 << 20), self.params.rpl_hbh_option);
        self.admit(run_now, src, dst, (ip_len, false), tag, |slot| {
            std::mem::swap(slot, payload)
        })
    }

    /// An IPv6 packet of `40 + tcp_bytes` (+ 8 with RPL's option), compressed without the
    /// UDP NHC and fragmented like any datagram ([`sixlowpan`]); `bytes` are copied in.
    fn send_tcp(
        &mut self,
        run_now: Instant,
        src: SocketAddr,
        dst: SocketAddr,
        bytes: &[u8],
        tcp_bytes: u32,
        tag: u64,
    ) -> Result<PacketId, SendError> {
        let ip_len = sixlowpan::ipv6_tcp_len(tcp_bytes.min(1 << 20), self.params.rpl_hbh_option);
        self.admit(run_now, src, dst, (ip_len, true), tag, |slot| {
            slot.clear();
            slot.extend_from_slice(bytes);
        })
    }

    fn poll_at(&self) -> Option<Instant> {
        self.events.peek_time().map(|t| t - self.epoch)
    }

    fn poll_delivery(&mut self, now: Instant, buf: &mut Vec<u8>) -> Option<Delivery> {
        let mut d = self.step(now + self.epoch, buf)?;
        d.at = d.at - self.epoch;
        Some(d)
    }

    /// The server nodes' addresses in node order ([`server_addr`]`(0..)`), or with
    /// `off_mesh_server` the one server beyond the border router, [`SERVER_ADDR`].
    fn servers(&self) -> &[SocketAddr] {
        &self.servers
    }

    /// [`Mesh::stats`] as every topology counts: a full MAC queue is an overflow; a MAC
    /// failure, a missing route or a failed reassembly a link error; delivered datagrams are
    /// the packets sent, data frames' PSDU bytes and air time the bytes sent and busy time,
    /// the queue high water in frames × 127 B (the queue counts frames).
    fn direction_stats(&self, direction: Direction) -> DirectionStats {
        let s = self.stats(direction);
        DirectionStats {
            offered_packets: s.offered_packets,
            overflow_drops: s.queue_drops,
            link_error_drops: s.mac_drops + s.reassembly_drops,
            sent_packets: s.delivered_packets,
            sent_bytes: s.frame_bytes,
            busy_time: s.airtime,
            queue_high_water_bytes: s.queue_high_water_frames * u64::from(phy::MAX_PSDU_OCTETS),
        }
    }
}

mod frames;
pub use frames::{DatagramRecord, FrameKind, FrameRecord};

mod mobile;

mod control;
pub use control::{ControlCounts, ControlStats};

mod contiki;

#[cfg(test)]
mod tests;

#[cfg(test)]
mod rpl_tests;

#[cfg(test)]
mod rpl_mobile_tests;

#[cfg(test)]
mod contiki_tests;

#[cfg(test)]
mod rpl_loop_tests;
