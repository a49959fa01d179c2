//! The TCP run loop: per flow, one or more connections of netsim's TCP model
//! ([`coaplab_netsim::tcp::Connection`]) over the star or the mesh ([`TcpNet`];
//! [`run_on_mesh`]), carrying the flow's application ([`FlowApp`], `super::tcp_app`): RFC 8323
//! sessions (CoAP over TCP, docs/experiments.md §5, `super::tcp_coap`) or an HTTP download
//! (`cc` = `http1`, `h2`, `iot-http1`, `iot-h2`, docs/experiments.md §8e, `super::http`). The
//! loop owns the transport: connections, their timers, the segments they send and take in;
//! the application moves bytes in and out of them. Mixed runs (CoAP over UDP beside CoAP over
//! TCP, `super::cross_tcp`) drive the same loop's flows ([`TcpSim::deliver`],
//! [`TcpSim::fire`]) from inside the UDP loop's network.
//!
//! Segments travel as [`Topology::send_tcp`] packets: on the star of `40 + payload` bytes
//! (IPv4 + TCP), on the mesh IPv6 datagrams compressed and fragmented by 6LoWPAN; the segment
//! itself is carried as the packet's bytes ([`super::tcp_packet`]). Each flow talks to its
//! server ([`super::server_of`]: the star's one, a mesh's round-robin), each connection's server
//! end listening from the start. At one instant deliveries come before timers (an ACK wins
//! over an expiry at the same instant), flows in flow order. What the connections send on their
//! own (the handshake's ACK, ACKs of data) leaves before what the application writes in
//! answer, as from a kernel.
//!
//! `cc = "tcp-bbr"` runs both ends' connections with BBR v1 (netsim's `tcp::bbr`, Linux
//! defaults); each connection draws its PROBE_BW start phases from the stream
//! `tcp/flow{i}/conn{k}/client|server`.
//!
//! Measured (docs/experiments.md §7): FCT from the flow's first request's segment (the request is
//! written at that instant) to the last byte of the last response, later handshakes inside; CoAP
//! RTT per exchange from writing the request to the response's last byte; setup time from the first
//! SYN to the SYN-ACK received (first connection); the connection counters of both ends, summed
//! over the flow's connections; `transmissions` / `retransmissions` = data segments sent /
//! retransmitted by both ends, and a copy is an unnecessary retransmission when an earlier copy of
//! the segment reached the receiver.
//!
//! Each flow has one deadline ([`OwnerDeadlines`]), the earliest timer of its live connections
//! and of its application, re-armed whenever the flow is touched (the RTO restarts on almost
//! every acknowledgement): its entry moves in place, and the loop wakes only for live
//! deadlines.

use std::net::SocketAddr;

use coaplab_cc::time::{earliest, Instant};
use coaplab_netsim::tcp::{
    BbrConfig, CongestionControl, Connection, Segment, TcpConfig, TcpState, HEADER_BYTES,
};
use coaplab_netsim::{
    client_addr, Delivery, Direction, DirectionStats, PacketId, PacketRecord, SendError, Star,
    Topology,
};

use super::http::HttpApp;
use super::owner_deadlines::OwnerDeadlines;
use super::tcp_app::{Arrival, FlowApp, OnSegment, Serviced, Shared, Wake};
use super::tcp_coap::CoapApp;
use super::tcp_conns::{Conn, Flow};
use super::tcp_copies::CopyLog;
use super::tcp_flow::{Progress, SegmentCounts};
use super::tcp_packet::{self, Owner};
use crate::results::{FlowRecord, RunError, RunResult};
use crate::scenario::RunSpec;
use crate::trace::RunTrace;

/// BBR's configuration: Linux's defaults with the flow's `[flows.params]` (checked by the
/// scenario reader).
pub(super) fn bbr_config(settings: &coaplab_cc::params::Settings) -> Result<BbrConfig, RunError> {
    let mut c = BbrConfig::default();
    for name in BbrConfig::NAMES {
        if let Some(v) = settings.get(name) {
            c.set(name, v).map_err(|e| RunError::Setup(e.to_string()))?;
        }
    }
    Ok(c)
}

/// The networks the TCP loop runs on, as one type: the loop is compiled once, for this type,
/// not once per topology. A second copy of it gave `Connection::poll_transmit` a second caller,
/// and LLVM stopped inlining it into the star's loop (+5 % instructions on
/// `pesola-tcp-calibration`, callgrind); the `match` per call costs less. The star is held
/// inline (the loop reaches it for every packet), the mesh behind a box.
#[allow(clippy::large_enum_variant)]
pub(super) enum TcpNet {
    /// netsim's star.
    Star(Star),
    /// The mesh ([`super::mesh`]).
    Mesh(Box<super::mesh::MeshNet>),
}

impl Topology for TcpNet {
    fn send(
        &mut self,
        now: Instant,
        src: SocketAddr,
        dst: SocketAddr,
        payload: &mut Vec<u8>,
        tag: u64,
    ) -> Result<PacketId, SendError> {
        match self {
            TcpNet::Star(n) => n.send(now, src, dst, payload, tag),
            TcpNet::Mesh(n) => n.send(now, src, dst, payload, tag),
        }
    }

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
        match self {
            TcpNet::Star(n) => n.send_tcp(now, src, dst, bytes, tcp_bytes, tag),
            TcpNet::Mesh(n) => n.send_tcp(now, src, dst, bytes, tcp_bytes, tag),
        }
    }

    #[inline]
    fn poll_at(&self) -> Option<Instant> {
        match self {
            TcpNet::Star(n) => n.poll_at(),
            TcpNet::Mesh(n) => n.poll_at(),
        }
    }

    #[inline]
    fn poll_delivery(&mut self, now: Instant, buf: &mut Vec<u8>) -> Option<Delivery> {
        match self {
            TcpNet::Star(n) => n.poll_delivery(now, buf),
            TcpNet::Mesh(n) => mesh_delivery(n, now, buf),
        }
    }

    fn servers(&self) -> &[SocketAddr] {
        match self {
            TcpNet::Star(n) => n.servers(),
            TcpNet::Mesh(n) => n.servers(),
        }
    }

    fn direction_stats(&self, direction: Direction) -> DirectionStats {
        match self {
            TcpNet::Star(n) => n.direction_stats(direction),
            TcpNet::Mesh(n) => n.direction_stats(direction),
        }
    }

    fn record_packets(&mut self, on: bool) {
        match self {
            TcpNet::Star(n) => n.record_packets(on),
            TcpNet::Mesh(n) => n.record_packets(on),
        }
    }

    fn take_records(&mut self) -> Vec<PacketRecord> {
        match self {
            TcpNet::Star(n) => n.take_records(),
            TcpNet::Mesh(n) => n.take_records(),
        }
    }
}

/// The mesh's next delivery, out of line: the mesh's `poll_delivery` is inlined into its
/// callers (`super::mesh`), and inlined here as well it grew the star's TCP loop (+1 %
/// instructions on `pesola-tcp-calibration`, callgrind).
#[inline(never)]
fn mesh_delivery(
    net: &mut super::mesh::MeshNet,
    now: Instant,
    buf: &mut Vec<u8>,
) -> Option<Delivery> {
    net.poll_delivery(now, buf)
}

/// Runs `spec`, every flow of which is a TCP flow (`cc = "tcp-newreno"` or `"tcp-bbr"`), or
/// its one HTTP download, on the star.
pub(super) fn run(spec: &RunSpec) -> Result<RunResult, RunError> {
    Ok(run_on_star(spec, false)?.0)
}

/// [`run`], keeping the run's trace: every segment sent, the connection state after every
/// ACK and the star's per-packet records.
pub(super) fn run_traced(spec: &RunSpec) -> Result<(RunResult, RunTrace), RunError> {
    run_on_star(spec, true)
}

/// [`run`], keeping the trace when `traced`.
fn run_on_star(spec: &RunSpec, traced: bool) -> Result<(RunResult, RunTrace), RunError> {
    let star =
        Star::new(&spec.config.network, spec.seed).map_err(|e| RunError::Setup(e.to_string()))?;
    let net = TcpNet::Star(star);
    if is_http(spec) {
        finish_traced(simulate_on::<HttpApp>(spec, net, traced)?)
    } else {
        finish_traced(simulate_on::<CoapApp>(spec, net, traced)?)
    }
}

/// Whether the run's flow is an HTTP download (it is then the run's only flow).
fn is_http(spec: &RunSpec) -> bool {
    spec.config.flows.iter().any(|f| f.transport.is_http())
}

/// The result and trace of the finished run `sim`: every packet's record when traced.
fn finish_traced<A: FlowApp>(
    mut sim: TcpSim<TcpNet, A>,
) -> Result<(RunResult, RunTrace), RunError> {
    let traced = sim.trace.is_some();
    let mut trace = sim.trace.take().map(|t| *t).unwrap_or_default();
    if traced {
        trace.records = super::drain_records(&mut sim.net);
    }
    Ok((sim.finish(), trace))
}

/// Per flow, per connection: the client's address and the exchanges done on it.
#[cfg(test)]
pub(super) fn connections(spec: &RunSpec) -> Result<Vec<Vec<(SocketAddr, u32)>>, RunError> {
    let star =
        Star::new(&spec.config.network, spec.seed).map_err(|e| RunError::Setup(e.to_string()))?;
    Ok(simulate_on::<CoapApp>(spec, TcpNet::Star(star), false)?
        .flows
        .into_iter()
        .map(|f| f.clients)
        .collect())
}

/// Builds and runs the simulation of `spec` on `net`, keeping a trace when `traced`. Each
/// flow's TCP ends cut segments of its `mss_bytes`, by default the largest the topology
/// carries ([`crate::scenario::Topology::max_tcp_mss_bytes`]: on the star its MTU − 40).
/// Run with [`TcpNet`] only (its documentation says why).
fn simulate_on<A: FlowApp>(
    spec: &RunSpec,
    net: TcpNet,
    traced: bool,
) -> Result<TcpSim<TcpNet, A>, RunError> {
    let mut sim = TcpSim::assemble(spec, net, 0, Tags::Numbered(0), traced)?;
    sim.net.record_packets(traced);
    sim.run()?;
    Ok(sim)
}

/// How a run's TCP packets are tagged.
#[derive(Debug, Clone, Copy)]
pub(super) enum Tags {
    /// Numbered in send order from this number on (a run of TCP flows only).
    Numbered(u64),
    /// With their flow ([`super::tag::from_client`] of its index): the UDP loop that shares
    /// the star (`super::cross_tcp`) tells its own packets apart by the flow.
    PerFlow,
}

/// What a delivered segment left to do at its instant.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Delivered {
    /// Nothing: go on with the instant's next delivery.
    Taken,
    /// The segment completed its flow's application (an HTTP download): the run's last
    /// event, nothing after it is simulated.
    Last,
}

/// One end of a connection, as [`Outbox::drain`] sends from it.
#[derive(Debug, Clone, Copy)]
struct End {
    /// The flow's `k`-th connection.
    k: u32,
    src: SocketAddr,
    dst: SocketAddr,
}

/// What sending one flow's segments uses of the loop ([`TcpSim::transmit`]).
struct Outbox<'a, N: Topology> {
    net: &'a mut N,
    tags: &'a mut Tags,
    /// The bytes of a packet without payload ([`tcp_packet::encode`]).
    spare: &'a mut Vec<u8>,
    trace: Option<&'a mut RunTrace>,
    sent_ids: &'a mut Vec<u64>,
    now: Instant,
    /// The flow's place in the loop, and its index in the run.
    i: u32,
    index: u32,
    tcp: &'a TcpConfig,
}

impl<N: Topology> Outbox<'_, N> {
    /// Sends every segment `conn` has queued (its copies numbered in `copies`), counting their
    /// IP bytes in `bytes`.
    fn drain(
        &mut self,
        conn: &mut Connection,
        copies: &mut CopyLog,
        end: End,
        bytes: &mut u64,
    ) -> Result<(), RunError> {
        while let Some(mut seg) = conn.poll_transmit(self.now) {
            let len = seg.ip_len();
            let tag = match self.tags {
                Tags::Numbered(next) => {
                    *next += 1;
                    *next - 1
                }
                Tags::PerFlow => super::tag::from_client(self.index),
            };
            // Data segments (FIN included; not SYNs) are numbered per sequence number.
            let (copy, slot) = if seg.seq_len() > 0 && !seg.syn {
                copies.sent(seg.seq)
            } else {
                (0, 0)
            };
            let owner = Owner {
                flow: self.i,
                conn: end.k,
                copy,
                slot,
            };
            let tcp_len = seg.tcp_len();
            let payload_len = seg.payload.len();
            let packet = tcp_packet::encode(&mut seg, owner, self.spare);
            let id = self
                .net
                .send_tcp(self.now, end.src, end.dst, packet, tcp_len, tag)
                .map_err(|e| RunError::Setup(format!("flow {}: {e}", self.index)))?;
            tcp_packet::sent(&mut seg, payload_len);
            if let Some(trace) = self.trace.as_deref_mut() {
                trace.packets.tcp(self.index, &seg, self.tcp);
                self.sent_ids.push(id.0);
            }
            conn.recycle(seg);
            *bytes += u64::from(len);
        }
        Ok(())
    }
}

/// A run of TCP flows running the application `A` on the network `N` ([`simulate_on`]).
pub(super) struct TcpSim<N: Topology, A: FlowApp> {
    /// The network: netsim's star, or the mesh (`super::mesh`).
    pub(super) net: N,
    flows: Vec<Flow<A::Conn>>,
    /// Each flow's application, at its index in `flows`.
    apps: Vec<A>,
    /// Each flow's next deadline (its start, then its connections' timers).
    timers: OwnerDeadlines,
    /// Flows not yet finished; the run ends when it reaches zero.
    pub(super) unfinished: usize,
    /// The time cap (`max_sim_time_s`): a flow still running when the loop stopped was
    /// running there (its censored FCT's end).
    pub(super) end: Instant,
    /// Whether a flow's finish has been subtracted from `unfinished`.
    counted: Vec<bool>,
    /// The segment of the packet being delivered (reused).
    rx_seg: Segment,
    /// The bytes of a packet without payload being sent (reused, [`tcp_packet::encode`]).
    tx_bytes: Vec<u8>,
    /// How packets are tagged.
    tags: Tags,
    /// A traced run: the network's ids of the packets sent, in send order.
    pub(super) sent_ids: Vec<u64>,
    /// What the flows' applications share.
    shared: Shared,
    /// Deliveries and timer expiries handled.
    pub(super) events: u64,
    pub(super) now: Instant,
    /// What a traced run keeps ([`run_traced`]); `None` otherwise.
    pub(super) trace: Option<Box<RunTrace>>,
}

impl<N: Topology, A: FlowApp> TcpSim<N, A> {
    /// The TCP flows of `spec`'s groups from `first_group` on (flows numbered after those of
    /// the groups before), on `net`, not started yet; keeping a trace when `traced`.
    pub(super) fn assemble(
        spec: &RunSpec,
        net: N,
        first_group: usize,
        tags: Tags,
        traced: bool,
    ) -> Result<TcpSim<N, A>, RunError> {
        let config = &spec.config;
        let paths = super::network::paths(&config.flows);
        let max_mss = config.topology.max_tcp_mss_bytes(config.network.mtu_bytes);
        let servers = net.servers().to_vec();
        let first: u32 = config.flows[..first_group].iter().map(|f| f.count).sum();
        let mut flows = Vec::with_capacity(config.total_flows() as usize);
        let mut apps = Vec::with_capacity(flows.capacity());
        for (group, fc) in config.flows.iter().enumerate().skip(first_group) {
            for _ in 0..fc.count {
                let i = first + flows.len() as u32;
                let setup = |e: &dyn std::fmt::Display| RunError::Setup(format!("flow {i}: {e}"));
                let (mut app, start) = A::new(spec, fc, i, &paths.path_of[group])?;
                let mut flow = Flow {
                    index: i,
                    cc: fc.cc().to_string(),
                    server: super::server_of(i, &servers),
                    tcp: TcpConfig {
                        cc: if fc.transport.is_bbr() {
                            CongestionControl::Bbr(bbr_config(&fc.settings)?)
                        } else {
                            CongestionControl::Reno
                        },
                        // The model's MSS is its `mtu_bytes` − 40 (IPv4 + TCP headers).
                        mtu_bytes: fc.mss_bytes.unwrap_or(max_mss) + HEADER_BYTES,
                        ..TcpConfig::default()
                    }
                    // `[flows.params]` (netsim's TCP_PARAMS), checked by the scenario reader.
                    .with_settings(&fc.settings)
                    .map_err(|e| setup(&e))?,
                    seed: spec.seed,
                    start,
                    conns: Vec::new(),
                    opened: 0,
                    clients: Vec::new(),
                    retired: SegmentCounts::default(),
                    retired_unnecessary: 0,
                    progress: Progress::default(),
                    failed: false,
                    bytes_up: 0,
                    bytes_down: 0,
                };
                let conn = app.new_conn();
                let server = app.listen(&flow, 0).map_err(|e| setup(&e))?;
                flow.conns.push(Conn::new(0, client_addr(i), server, conn));
                flows.push(flow);
                apps.push(app);
            }
        }
        let end = Instant::ZERO + config.max_sim_time;
        let mut timers = OwnerDeadlines::new(flows.len(), end);
        for (i, (f, app)) in flows.iter().zip(&apps).enumerate() {
            timers.arm(i as u32, f.next_timer(app.next_timer()));
        }
        Ok(TcpSim {
            net,
            tags,
            sent_ids: Vec::new(),
            unfinished: flows.iter().filter(|f| !f.finished()).count(),
            end,
            counted: flows.iter().map(Flow::finished).collect(),
            timers,
            flows,
            apps,
            rx_seg: Segment {
                seq: 0,
                ack: None,
                syn: false,
                fin: false,
                payload: Vec::with_capacity(1500),
                options_bytes: 0,
            },
            tx_bytes: Vec::with_capacity(1500),
            shared: Shared {
                routes: paths.routes,
                port_stride: config.total_flows().div_ceil(254).max(1),
                buf: Vec::with_capacity(64 * 1024),
            },
            events: 0,
            now: Instant::ZERO,
            trace: traced.then(Box::default),
        })
    }

    /// Runs the flows to their end, or to the time cap, in virtual time.
    fn run(&mut self) -> Result<(), RunError> {
        let end = self.end;
        let mut rx = Vec::new();
        while self.unfinished > 0 {
            let next = earliest(self.timers.next_at(), self.net.poll_at());
            let Some(now) = next.filter(|&t| t <= end) else {
                // Out of events before the end: the clock stops where the lazy heap this loop
                // once had, which kept every displaced deadline, would have stopped it.
                self.now = self.timers.latest_displaced_by(self.now);
                break;
            };
            self.now = now;
            // Deliveries before timers (an ACK wins over an expiry at the same instant).
            while let Some(d) = self.net.poll_delivery(now, &mut rx) {
                self.events += 1;
                if self.deliver(&d, &mut rx)? == Delivered::Last {
                    break;
                }
            }
            self.fire(now)?;
        }
        Ok(())
    }

    /// Hands the segment `d` (its bytes in `rx`, whose buffer becomes the segment's payload:
    /// `rx` gets the previous one) to its connection, at [`TcpSim::now`], and tells the flow's
    /// application. Inlined into both its callers (this loop and
    /// `super::cross_tcp`'s network): out of line, with `rearm`, it cost the star's TCP loop
    /// 1.4 % more instructions (`pesola-tcp-calibration`, callgrind).
    #[inline(always)]
    pub(super) fn deliver(
        &mut self,
        d: &Delivery,
        rx: &mut Vec<u8>,
    ) -> Result<Delivered, RunError> {
        let seg = &mut self.rx_seg;
        let Owner {
            flow: i,
            conn: k,
            copy,
            slot,
        } = tcp_packet::decode(rx, seg);
        let f = &mut self.flows[i as usize];
        // A segment of a connection already dropped (both ends closed) is lost (every
        // data segment of such a connection had a copy delivered already).
        let current = f.conns.last().is_some_and(|c| c.k == k);
        let Some(c) = f.conns.iter_mut().find(|c| c.k == k) else {
            return Ok(Delivered::Taken);
        };
        // To the server (the star's, or a mesh's server node): its `Direction::Up`.
        let up = d.direction == Direction::Up;
        if copy > 0 {
            c.copies[usize::from(!up)].delivered(seg.seq, copy, slot);
        }
        let to = if up {
            Some(&mut c.server)
        } else {
            c.client.as_mut()
        };
        let next = match to {
            Some(conn) => {
                let ack = seg.ack;
                let pure_ack = seg.is_pure_ack() && conn.state() == TcpState::Established;
                // A refused segment is the model's business (counted there), not an error
                // of the run.
                let _ = conn.handle_segment(d.at, &*seg);
                if let (Some(trace), Some(ack)) = (self.trace.as_deref_mut(), ack) {
                    trace.tcp.ack(d.at, f.index, k, !up, ack, conn);
                }
                let arrival = Arrival {
                    at: d.at,
                    up,
                    ip_len: d.ip_len,
                    current,
                    established_ack: pure_ack && conn.state() == TcpState::Established,
                };
                self.apps[i as usize].on_segment(arrival, conn)
            }
            None => OnSegment::Service,
        };
        match next {
            OnSegment::Service => self.service(i)?,
            OnSegment::Send => self.transmit(i)?,
            OnSegment::Wait => {}
            OnSegment::Complete => {
                self.flows[i as usize].progress.times.done_at = Some(d.at);
                self.rearm(i);
                return Ok(Delivered::Last);
            }
        }
        self.rearm(i);
        Ok(Delivered::Taken)
    }

    /// Fires the flows' deadlines due at `now` (their starts and their connections'
    /// timers), in flow order.
    ///
    /// Whether one is due is decided inline: the loop asks at every instant and one in twenty
    /// has a deadline due, so the call's entry and exit cost more than the check (tcp-100
    /// star: ~30 instructions per link packet).
    #[inline(always)]
    pub(super) fn fire(&mut self, now: Instant) -> Result<(), RunError> {
        if !self.timers.next_at().is_some_and(|t| t <= now) {
            return Ok(());
        }
        self.fire_due(now)
    }

    /// [`TcpSim::fire`] when a deadline is due.
    fn fire_due(&mut self, now: Instant) -> Result<(), RunError> {
        while let Some(i) = self.timers.pop_due(now) {
            let f = &mut self.flows[i as usize];
            let app = &mut self.apps[i as usize];
            let wake = if f.opened == 0 {
                app.open(f, &self.shared, now)?
            } else {
                let mut fired = false;
                for c in &mut f.conns {
                    if let Some(client) = c.client.as_mut() {
                        if client.poll_timeout().is_some_and(|t| t <= now) {
                            client.handle_timeout(now);
                            fired = true;
                        }
                    }
                    if c.server.poll_timeout().is_some_and(|t| t <= now) {
                        c.server.handle_timeout(now);
                        fired = true;
                    }
                }
                app.woken(fired)
            };
            match wake {
                Wake::Idle => {}
                Wake::Send => self.transmit(i)?,
                Wake::Service { event } => {
                    self.events += u64::from(event);
                    self.service(i)?;
                }
            }
            self.rearm(i);
        }
        Ok(())
    }

    /// The earliest deadline of a flow (its start or a connection's timer).
    pub(super) fn next_deadline(&self) -> Option<Instant> {
        self.timers.next_at()
    }

    /// Re-arms flow `i`'s deadline after anything touched it, and counts it once when it
    /// finishes.
    #[inline(always)]
    fn rearm(&mut self, i: u32) {
        let f = &self.flows[i as usize];
        if f.finished() && !self.counted[i as usize] {
            self.counted[i as usize] = true;
            self.unfinished -= 1;
        }
        let app = self.apps[i as usize].next_timer();
        self.timers.arm(i, f.next_timer(app));
    }

    /// Moves bytes between flow `i`'s connections and its application, sending what the
    /// connections queue: what they send on their own (the handshake's ACK, ACKs of data)
    /// leaves before what the application writes in answer, as from a kernel.
    fn service(&mut self, i: u32) -> Result<(), RunError> {
        loop {
            self.transmit(i)?;
            let f = &mut self.flows[i as usize];
            let app = &mut self.apps[i as usize];
            if app.service(f, &mut self.shared, self.now)? == Serviced::Done {
                break;
            }
        }
        self.transmit(i)
    }

    /// Sends what flow `i`'s connections queued, oldest connection first, each client before
    /// its server.
    ///
    /// Whether any end has something to send is decided inline: the send after the
    /// application's turn ([`TcpSim::service`]) mostly finds every end quiet, and the call with
    /// its setup cost more than the check (tcp-100 star: ~20 instructions per link packet).
    #[inline(always)]
    fn transmit(&mut self, i: u32) -> Result<(), RunError> {
        let quiet = |c: &Conn<A::Conn>| {
            c.server.is_quiet() && c.client.as_ref().map_or(true, Connection::is_quiet)
        };
        if self.flows[i as usize].conns.iter().all(quiet) {
            return Ok(());
        }
        self.transmit_busy(i)
    }

    /// [`TcpSim::transmit`] when some end may have something to send.
    fn transmit_busy(&mut self, i: u32) -> Result<(), RunError> {
        let Flow {
            index,
            server,
            tcp,
            conns,
            bytes_up,
            bytes_down,
            ..
        } = &mut self.flows[i as usize];
        let mut out = Outbox {
            net: &mut self.net,
            tags: &mut self.tags,
            spare: &mut self.tx_bytes,
            trace: self.trace.as_deref_mut(),
            sent_ids: &mut self.sent_ids,
            now: self.now,
            i,
            index: *index,
            tcp,
        };
        let server = *server;
        for c in conns {
            // Two calls, not a loop over both ends: building the ends as an array cost ~50
            // instructions per call (tcp-100 star, callgrind); a quiet end costs no call.
            let [up_copies, down_copies] = &mut c.copies;
            if let Some(client) = c.client.as_mut().filter(|c| !c.is_quiet()) {
                let end = End {
                    k: c.k,
                    src: c.addr,
                    dst: server,
                };
                out.drain(client, up_copies, end, bytes_up)?;
            }
            if !c.server.is_quiet() {
                let end = End {
                    k: c.k,
                    src: server,
                    dst: c.addr,
                };
                out.drain(&mut c.server, down_copies, end, bytes_down)?;
            }
        }
        Ok(())
    }

    pub(super) fn finish(&self) -> RunResult {
        // An HTTP run's events are its packets delivered up to the download's end.
        let events = self
            .apps
            .iter()
            .filter_map(A::events)
            .reduce(|a, b| a + b)
            .unwrap_or(self.events);
        RunResult {
            flows: self.records(),
            events,
            sim_time_s: self.now.as_secs_f64(),
            network: Some(super::network_record(&self.net, self.now)),
        }
    }

    /// The flows' records, in flow order.
    pub(super) fn records(&self) -> Vec<FlowRecord> {
        self.flows
            .iter()
            .zip(&self.apps)
            .map(|(f, app)| app.record(f, self.end))
            .collect()
    }
}

/// CoAP over TCP, or an HTTP download, on the mesh `config`: this loop over the mesh, every
/// segment an IPv6/TCP datagram compressed and fragmented by 6LoWPAN
/// ([`coaplab_netsim::Topology::send_tcp`]); the run's records get the mesh's channel and RPL
/// counters and its internal events, as a UDP mesh run's. A traced run keeps the TCP trace
/// (segments, connection states), no frame log: the frame and pcap writers decode datagrams as
/// UDP. A flow's MSS is its `mss_bytes`, by default the largest one datagram carries
/// ([`crate::scenario::Topology::max_tcp_mss_bytes`]).
pub(super) fn run_on_mesh(
    spec: &RunSpec,
    config: &coaplab_netsim::mesh::MeshConfig,
    traced: bool,
) -> Result<(RunResult, RunTrace), RunError> {
    // `super::dispatch` refuses an off-mesh server, whose border router forwards UDP only.
    let net = TcpNet::Mesh(Box::new(super::mesh::network(spec, config, false)?));
    let http = is_http(spec);
    let (mut sim_net, mut result, trace) = if http {
        mesh_run(simulate_on::<HttpApp>(spec, net, traced)?)
    } else {
        mesh_run(simulate_on::<CoapApp>(spec, net, traced)?)
    };
    if let TcpNet::Mesh(net) = &mut sim_net {
        // An HTTP run's events are its packets, on any network.
        net.add_records(&mut result, !http);
    }
    Ok((result, trace))
}

/// The network, result and trace of the finished mesh run `sim`.
fn mesh_run<A: FlowApp>(mut sim: TcpSim<TcpNet, A>) -> (TcpNet, RunResult, RunTrace) {
    let result = sim.finish();
    let trace = sim.trace.take().map(|t| *t).unwrap_or_default();
    (sim.net, result, trace)
}
