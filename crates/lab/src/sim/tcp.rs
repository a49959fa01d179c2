//! CoAP over TCP flows (docs/experiments.md §5): per flow, one connection of netsim's TCP model
//! ([`coaplab_netsim::tcp::Connection`]) carrying one RFC 8323 session
//! ([`coaplab_endpoint::tcp::Session`]) at each end, over the same star as the UDP flows, or
//! over the mesh ([`TcpNet`]; [`run_on_mesh`]).
//!
//! A flow's client connects after its start delay (first SYN); once its connection is
//! established it writes its CSM and its first request (two writes, so two segments with
//! `TCP_NODELAY`). The server accepts every flow on a listener of its own and, once
//! established, writes its CSM, then the answers. Long transfer (docs/experiments.md §5.1): one GET
//! (1-B token) answered by one message of `object_bytes` (the client's Max-Message-Size, 131,072 B,
//! is raised to that message for objects above 131,064 B). Continuous (docs/experiments.md §5.2):
//! `exchanges` POSTs of `payload_bytes` (2-B tokens) one after the other on the one connection,
//! each answered by `response_payload_bytes`; the connection is not closed at the end (the run
//! stops when every flow is done). Random (docs/experiments.md §5.2, §6.1): the same POSTs, but
//! every short-lived client (U{batch_min..=batch_max} exchanges from the stream `workload/flow{i}`,
//! as over UDP) runs on a new connection from a new port of the flow's host
//! (`source_addr`): handshake, both CSMs, its exchanges; after its last response the
//! client closes with a FIN (the server closes its side when it reads the end of the stream)
//! and the next client connects at the same instant, its SYN queued behind that FIN. Former
//! clients' connections live on until both ends have closed. Segments travel as
//! [`Topology::send_tcp`] packets: on the star of `40 + payload` bytes (IPv4 + TCP), on the
//! mesh IPv6 datagrams compressed and fragmented by 6LoWPAN; the segment itself is carried as
//! the packet's bytes ([`super::tcp_packet`]). Each flow talks to its server
//! ([`super::server_of`]: the star's one, a mesh's round-robin).
//!
//! An HTTP download flow (`cc` = `http1`, `h2`, `iot-http1`, `iot-h2`, docs/experiments.md §8e) runs in this
//! loop too, as a sibling session kind: its connection's ends carry the HTTP applications of
//! `sim::http` (`HttpApp`: netsim's byte-exact messages, written when hyper writes them)
//! instead of RFC 8323 sessions. They read each delivered segment at once and write once every
//! delivery and timer of the instant is handled (`service_http`); the IoT variants first
//! download on an unmeasured warm-up connection that fetches the TCP Fast Open cookie, then
//! on the measured one (`open_http`). The run ends with the segment that completes the object.
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
//! Each flow has one deadline ([`OwnerDeadlines`]), the earliest timer of its live connections,
//! re-armed whenever the flow is touched (the RTO restarts on almost every acknowledgement): its
//! entry moves in place, and the loop wakes only for live deadlines.

use std::net::SocketAddr;
use std::sync::Arc;

use coaplab_cc::time::{earliest, Instant};
use coaplab_endpoint::tcp::{GeneratedBody, Session, SessionConfig, SessionEvent};
use coaplab_endpoint::Router;
use coaplab_netsim::tcp::{
    BbrConfig, CongestionControl, Connection, Generate, Segment, TcpConfig, TcpState, HEADER_BYTES,
};
use coaplab_netsim::{
    client_addr, rng, Delivery, Direction, DirectionStats, PacketId, PacketRecord, SendError, Star,
    Topology,
};

use super::http::{Fetch, HttpApp};
use super::owner_deadlines::OwnerDeadlines;
use super::tcp_copies::CopyLog;
use super::tcp_flow::{draw_batch, flow_record, FlowPlan, Progress, SegmentCounts};
use super::tcp_packet::{self, Owner};
use crate::results::{FlowRecord, RunError, RunResult};
use crate::scenario::RunSpec;
use crate::trace::RunTrace;

/// One flow: its connections (one, or one per short-lived client) and what was measured.
struct Flow {
    /// Its index among the run's flows (client addresses, random streams, trace, errors);
    /// its place in [`TcpSim::flows`] is this minus [`TcpSim::first`].
    index: u32,
    cc: String,
    /// The server it connects to ([`super::server_of`]).
    server: SocketAddr,
    /// The TCP model's configuration of this flow's connections (its `cc`).
    tcp: TcpConfig,
    /// The run's seed, for the connections' random streams.
    seed: u64,
    plan: FlowPlan,
    /// Live connections, oldest first; the last is the current client's. Former clients'
    /// connections stay until both ends have closed.
    conns: Vec<Conn>,
    /// Connections opened so far.
    opened: u32,
    /// Per connection opened: the client's address and the exchanges it completed.
    clients: Vec<(SocketAddr, u32)>,
    /// Counters of the connections already dropped.
    retired: SegmentCounts,
    /// Unnecessary retransmissions of the connections already dropped.
    retired_unnecessary: u64,
    /// Its instants (the first request's segment leaves at `get_at`), requests and exchanges.
    progress: Progress,
    /// The client connection gave up (SYN retries exhausted) or the session ended early.
    failed: bool,
    bytes_up: u64,
    bytes_down: u64,
    /// An HTTP download flow (`sim::http`): its one connection carries the HTTP
    /// applications instead of RFC 8323 sessions.
    http: Option<HttpApp>,
}

impl Flow {
    fn finished(&self) -> bool {
        self.progress.times.done_at.is_some() || self.failed
    }

    fn next_timer(&self) -> Option<Instant> {
        if self.finished() {
            return None;
        }
        if self.opened == 0 {
            return Some(self.plan.start);
        }
        let http = self.http.as_ref();
        let app = http.and_then(|h| earliest(h.woken_at, h.connect_at));
        self.conns
            .iter()
            .filter_map(Conn::next_timer)
            .chain(app)
            .min()
    }

    fn draw_batch(&mut self) -> u32 {
        draw_batch(&mut self.plan.batches, self.plan.quota)
    }
}

/// One connection of a flow: both ends and their sessions.
///
/// `repr(C)`, the small fields first and together: every delivery finds its connection by
/// `k`, every send reads `addr` and `copies`. Left to the compiler they sat 5 KB in, behind
/// the two `Connection`s, `addr` straddling two cache lines (100 flows: x0.98 simulation
/// time per packet).
#[repr(C)]
struct Conn {
    /// The flow's `k`-th connection (the `k`-th short-lived client of a random flow).
    k: u32,
    /// Exchanges this connection still has to start (random workload: its short-lived
    /// client's draw; otherwise the flow's quota).
    batch_left: u32,
    /// The client's address (a new port per connection, `source_addr`).
    addr: SocketAddr,
    /// The data segments the client (`[0]`, upstream) and the server (`[1]`) sent: ground
    /// truth for unnecessary retransmissions.
    copies: [CopyLog; 2],
    /// `None` until the flow's start delay has passed (first connection only).
    client: Option<Connection>,
    server: Connection,
    client_session: Option<Session>,
    server_session: Option<Session>,
}

impl Conn {
    fn new(k: u32, addr: SocketAddr, flow: &Flow, batch: u32) -> Result<Conn, RunError> {
        let i = flow.index;
        let server = if let Some(http) = &flow.http {
            http.listen(flow.tcp.clone()).map_err(RunError::Setup)?
        } else {
            let mut server =
                Connection::listen(flow.tcp.clone()).map_err(|e| RunError::Setup(e.to_string()))?;
            server.set_random(rng::stream(
                flow.seed,
                &format!("tcp/flow{i}/conn{k}/server"),
            ));
            server
        };
        Ok(Conn {
            k,
            addr,
            client: None,
            server,
            client_session: None,
            server_session: None,
            batch_left: batch,
            copies: Default::default(),
        })
    }

    fn next_timer(&self) -> Option<Instant> {
        earliest(
            self.client.as_ref().and_then(Connection::poll_timeout),
            self.server.poll_timeout(),
        )
    }

    /// Both ends closed and nothing left to time: a former short-lived client's connection
    /// can be dropped.
    fn is_over(&self) -> bool {
        let closed = |s: TcpState| matches!(s, TcpState::TimeWait | TcpState::Closed);
        self.client
            .as_ref()
            .is_some_and(|c| closed(c.state()) && c.poll_timeout().is_none())
            && closed(self.server.state())
            && self.server.poll_timeout().is_none()
    }

    fn stats(&self) -> SegmentCounts {
        let mut n = SegmentCounts::default();
        add_stats(&mut n, &self.server);
        if let Some(client) = &self.client {
            add_stats(&mut n, client);
        }
        n
    }
}

/// Adds one connection's model counters (both ends are counted by the caller).
pub(super) fn add_stats(n: &mut SegmentCounts, c: &Connection) {
    let s = c.stats();
    n.segments_sent += s.segments_sent;
    n.data_segments_sent += s.data_segments_sent;
    n.retransmitted += s.segments_retransmitted;
    n.syn_retransmissions += s.syn_retransmissions;
    n.rtos += s.rto_count;
    n.rto_max = n.rto_max.max(s.rto_max);
}

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

/// The client connection of flow `i`'s `k`-th connection.
fn connect(flow: &Flow, k: u32) -> Result<Connection, RunError> {
    let i = flow.index;
    let mut c = Connection::connect(flow.tcp.clone())
        .map_err(|e| RunError::Setup(format!("flow {i}: {e}")))?;
    c.set_random(rng::stream(
        flow.seed,
        &format!("tcp/flow{i}/conn{k}/client"),
    ));
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

/// Builds and runs the simulation of `spec` on the star.
fn simulate(spec: &RunSpec) -> Result<TcpSim<TcpNet>, RunError> {
    simulate_traced(spec, false)
}

/// [`simulate`], keeping a trace when `traced` ([`crate::trace`]).
fn simulate_traced(spec: &RunSpec, traced: bool) -> Result<TcpSim<TcpNet>, RunError> {
    let config = &spec.config;
    let star = Star::new(&config.network, spec.seed).map_err(|e| RunError::Setup(e.to_string()))?;
    simulate_on(spec, TcpNet::Star(star), traced)
}

/// Builds and runs the simulation of `spec` on `net`, keeping a trace when `traced`. Each
/// flow's TCP ends cut segments of its `mss_bytes`, by default the largest the topology
/// carries ([`crate::scenario::Topology::max_tcp_mss_bytes`]: on the star its MTU − 40).
/// Generic over the network, run with [`TcpNet`] only (its documentation says why).
pub(super) fn simulate_on<N: Topology>(
    spec: &RunSpec,
    net: N,
    traced: bool,
) -> Result<TcpSim<N>, RunError> {
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
    /// The segment completed an HTTP download: the run's last event (nothing after it is
    /// simulated).
    Last,
}

impl<N: Topology> TcpSim<N> {
    /// The TCP flows of `spec`'s groups from `first_group` on (flows numbered after those of
    /// the groups before), on `net`, not started yet; keeping a trace when `traced`.
    pub(super) fn assemble(
        spec: &RunSpec,
        net: N,
        first_group: usize,
        tags: Tags,
        traced: bool,
    ) -> Result<TcpSim<N>, RunError> {
        let config = &spec.config;
        let paths = super::network::paths(&config.flows);
        let max_mss = config.topology.max_tcp_mss_bytes(config.network.mtu_bytes);
        let servers = net.servers().to_vec();
        let first: u32 = config.flows[..first_group].iter().map(|f| f.count).sum();
        let mut flows = Vec::with_capacity(config.total_flows() as usize);
        for (group, fc) in config.flows.iter().enumerate().skip(first_group) {
            for _ in 0..fc.count {
                let i = first + flows.len() as u32;
                let http = if fc.transport.is_http() {
                    let (protocol, object_bytes, _) = super::http::download_of(config)?;
                    Some(HttpApp::new(protocol, object_bytes))
                } else {
                    None
                };
                let mut plan = FlowPlan::new(spec.seed, fc, i, &paths.path_of[group]);
                if http.is_some() {
                    // The download starts at 0 (start_jitter_s does not apply).
                    plan.start = Instant::ZERO;
                }
                let mut flow = Flow {
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
                    .map_err(|e| RunError::Setup(format!("flow {i}: {e}")))?,
                    seed: spec.seed,
                    plan,
                    conns: Vec::new(),
                    opened: 0,
                    clients: Vec::new(),
                    retired: SegmentCounts::default(),
                    retired_unnecessary: 0,
                    progress: Progress::default(),
                    failed: false,
                    bytes_up: 0,
                    bytes_down: 0,
                    http,
                    index: i,
                };
                let batch = flow.draw_batch();
                flow.conns.push(
                    Conn::new(0, client_addr(i), &flow, batch)
                        .map_err(|e| RunError::Setup(format!("flow {i}: {e}")))?,
                );
                flows.push(flow);
            }
        }
        let end = Instant::ZERO + config.max_sim_time;
        let mut timers = OwnerDeadlines::new(flows.len(), end);
        for (i, f) in flows.iter().enumerate() {
            timers.arm(i as u32, f.next_timer());
        }
        Ok(TcpSim {
            net,
            first,
            tags,
            sent_ids: Vec::new(),
            unfinished: flows.iter().filter(|f| !f.finished()).count(),
            end,
            counted: flows.iter().map(Flow::finished).collect(),
            timers,
            flows,
            rx_seg: Segment {
                seq: 0,
                ack: None,
                syn: false,
                fin: false,
                payload: Vec::with_capacity(1500),
                options_bytes: 0,
            },
            tx_bytes: Vec::with_capacity(1500),
            routes: paths.routes,
            port_stride: config.total_flows().div_ceil(254).max(1),
            events: 0,
            now: Instant::ZERO,
            buf: Vec::with_capacity(64 * 1024),
            trace: traced.then(Box::default),
        })
    }
}

/// Runs `spec`, every flow of which is a TCP flow (`cc = "tcp-newreno"` or `"tcp-bbr"`).
pub(super) fn run(spec: &RunSpec) -> Result<RunResult, RunError> {
    Ok(simulate(spec)?.finish())
}

/// [`run`], keeping the run's trace: every segment sent, the connection state after every
/// ACK and the star's per-packet records.
pub(super) fn run_traced(spec: &RunSpec) -> Result<(RunResult, RunTrace), RunError> {
    let mut sim = simulate_traced(spec, true)?;
    let mut trace = sim.trace.take().map(|t| *t).unwrap_or_default();
    trace.records = super::drain_records(&mut sim.net);
    Ok((sim.finish(), trace))
}

/// Per flow, per connection: the client's address and the exchanges done on it.
#[cfg(test)]
pub(super) fn connections(spec: &RunSpec) -> Result<Vec<Vec<(SocketAddr, u32)>>, RunError> {
    Ok(simulate(spec)?
        .flows
        .into_iter()
        .map(|f| f.clients)
        .collect())
}

/// A run of TCP flows on the network `N` ([`simulate_on`]).
pub(super) struct TcpSim<N: Topology> {
    /// The network: netsim's star, or the mesh (`super::mesh`).
    pub(super) net: N,
    /// The run's index of the first flow here: the flows of a mixed run's UDP groups come
    /// before (`super::cross_tcp`); 0 otherwise.
    first: u32,
    flows: Vec<Flow>,
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
    /// The bytes of the packet being sent (reused).
    tx_bytes: Vec<u8>,
    /// How packets are tagged.
    tags: Tags,
    /// A traced run: the network's ids of the packets sent, in send order.
    pub(super) sent_ids: Vec<u64>,
    routes: Vec<(String, coaplab_endpoint::Resource)>,
    /// Client ports per host taken by the flows' first connections (`source_addr`).
    port_stride: u32,
    /// Deliveries and timer expiries handled.
    pub(super) events: u64,
    pub(super) now: Instant,
    /// Bytes read from a connection (reused).
    buf: Vec<u8>,
    /// What a traced run keeps ([`run_traced`]); `None` otherwise.
    pub(super) trace: Option<Box<RunTrace>>,
}

impl<N: Topology> TcpSim<N> {
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
                if self.deliver(&d, &rx)? == Delivered::Last {
                    break;
                }
            }
            self.fire(now)?;
        }
        Ok(())
    }

    /// Hands the segment `d` (its bytes in `rx`) to its connection, at [`TcpSim::now`], and
    /// services its flow.
    #[inline]
    pub(super) fn deliver(&mut self, d: &Delivery, rx: &[u8]) -> Result<Delivered, RunError> {
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
        if let Some(conn) = to {
            let ack = seg.ack;
            // A refused segment is the model's business (counted there), not an error
            // of the run.
            let _ = conn.handle_segment(d.at, &*seg);
            if let (Some(trace), Some(ack)) = (self.trace.as_deref_mut(), ack) {
                trace.tcp.ack(d.at, f.index, k, !up, ack, conn);
            }
            if let Some(http) = f.http.as_mut() {
                // The application reads now and writes once every delivery of this
                // instant is in (`woken_at`); the download ends with the segment that
                // completes the object: nothing after it is simulated.
                if http.delivered(d.at, up, d.ip_len, conn, current) == Fetch::Complete {
                    f.progress.times.done_at = Some(d.at);
                    self.rearm(i);
                    return Ok(Delivered::Last);
                }
                self.rearm(i);
                return Ok(Delivered::Taken);
            }
        }
        self.service(i)?;
        self.rearm(i);
        Ok(Delivered::Taken)
    }

    /// Fires the flows' deadlines due at `now` (their starts and their connections'
    /// timers), in flow order.
    pub(super) fn fire(&mut self, now: Instant) -> Result<(), RunError> {
        while let Some(i) = self.timers.pop_due(now) {
            let f = &mut self.flows[i as usize];
            let mut fired = false;
            if f.opened == 0 && f.http.is_some() {
                self.open_http(i)?;
                self.rearm(i);
                continue;
            }
            if f.opened == 0 {
                f.conns[0].client = Some(connect(f, 0)?);
                f.opened = 1;
                f.clients.push((f.conns[0].addr, 0));
                f.progress.times.syn_at = Some(now);
                fired = true;
            } else {
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
            }
            if f.http.is_some() {
                self.service_http(i)?;
            } else if fired {
                self.events += 1;
                self.service(i)?;
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
    fn rearm(&mut self, i: u32) {
        let f = &self.flows[i as usize];
        if f.finished() && !self.counted[i as usize] {
            self.counted[i as usize] = true;
            self.unfinished -= 1;
        }
        self.timers.arm(i, f.next_timer());
    }

    /// Moves bytes between flow `i`'s connections and sessions, then sends what the
    /// connections queued.
    fn service(&mut self, i: u32) -> Result<(), RunError> {
        // What the connections send on their own (the handshake's ACK, ACKs of data) leaves
        // before what the applications write in answer, as from a kernel.
        self.transmit(i)?;
        let now = self.now;
        let index = self.first + i;
        let setup = |e: &dyn std::fmt::Display| RunError::Setup(format!("flow {index}: {e}"));
        let f = &mut self.flows[i as usize];
        let mut next_client = false;
        let current = f.conns.len() - 1;
        {
            let c = &mut f.conns[current];
            if let Some(client) = c.client.as_mut() {
                if client.state() == TcpState::Failed {
                    f.progress.give_up(&mut f.failed, now);
                }
                if client.state() == TcpState::Established && c.client_session.is_none() {
                    let session = f
                        .progress
                        .open_session(&f.plan, now, c.k, &mut c.batch_left)
                        .map_err(|e| setup(&e))?;
                    c.client_session = Some(session);
                }
                if let Some(session) = c.client_session.as_mut() {
                    // One request outstanding at a time (docs/experiments.md §5.2): the next is
                    // written as soon as the previous response is complete.
                    loop {
                        pump(now, client, session, &mut self.buf).map_err(|e| setup(&e))?;
                        let mut wrote = false;
                        while let Some(event) = session.poll_event() {
                            match event {
                                SessionEvent::RequestCompleted { code, body_len, .. }
                                    if !f.plan.is_whole(code, body_len) =>
                                {
                                    f.progress.partial_answers += 1;
                                    f.progress.give_up(&mut f.failed, now);
                                }
                                SessionEvent::RequestCompleted { at, started, .. } => {
                                    let done = f.progress.completed(at, started, f.plan.quota);
                                    if let Some(last) = f.clients.last_mut() {
                                        last.1 += 1;
                                    }
                                    if f.plan.batches.is_some() && (done || c.batch_left == 0) {
                                        // The short-lived client is done (docs/experiments.md
                                        // §5.2): it closes with a FIN; the next one connects at
                                        // once.
                                        client.close();
                                        next_client = !done;
                                    } else if !done {
                                        f.progress
                                            .request(&f.plan, session, now, &mut c.batch_left)
                                            .map_err(|e| setup(&e))?;
                                        wrote = true;
                                    }
                                }
                                SessionEvent::RequestFailed { .. }
                                | SessionEvent::Aborted { .. } => {
                                    f.progress.give_up(&mut f.failed, now);
                                }
                                _ => {}
                            }
                        }
                        if !wrote {
                            break;
                        }
                    }
                }
            }
        }
        for c in &mut f.conns {
            if c.server.state() == TcpState::Established && c.server_session.is_none() {
                let mut router = Router::new();
                for (path, resource) in &self.routes {
                    router.route(path, *resource);
                }
                c.server_session =
                    Some(Session::new(SessionConfig::server(), router).map_err(|e| setup(&e))?);
            }
            if let Some(session) = c.server_session.as_mut() {
                if c.server.state() == TcpState::CloseWait {
                    // The client's FIN: the server reads the end of the stream and closes
                    // its side (passive close).
                    session.handle_stream_end(now);
                    c.server.close();
                } else if !matches!(c.server.state(), TcpState::LastAck | TcpState::Closed) {
                    pump(now, &mut c.server, session, &mut self.buf).map_err(|e| setup(&e))?;
                }
                while session.poll_event().is_some() {}
            }
        }
        if next_client {
            let k = f.opened;
            f.opened += 1;
            let batch = f.draw_batch();
            let addr = super::source_addr(f.index, k, self.port_stride);
            let mut c = Conn::new(k, addr, f, batch).map_err(|e| setup(&e))?;
            c.client = Some(connect(f, k)?);
            f.clients.push((c.addr, 0));
            f.conns.push(c);
        }
        // Former clients' connections whose both ends have closed are dropped.
        let last = f.conns.len() - 1;
        let mut j = 0;
        while j < last.min(f.conns.len() - 1) {
            if f.conns[j].is_over() {
                let c = f.conns.remove(j);
                f.retired = f.retired.sum(c.stats());
                f.retired_unnecessary += c.copies.iter().map(CopyLog::unnecessary).sum::<u64>();
            } else {
                j += 1;
            }
        }
        self.transmit(i)
    }

    /// An HTTP flow after its timers and deliveries at this instant: what the connections
    /// send on their own leaves first (the kernel answers before hyper runs), then the
    /// applications write what is due and that is sent.
    fn service_http(&mut self, i: u32) -> Result<(), RunError> {
        self.transmit(i)?;
        let now = self.now;
        let f = &mut self.flows[i as usize];
        if f.http
            .as_ref()
            .and_then(|h| h.connect_at)
            .is_some_and(|t| t <= now)
        {
            self.open_http(i)?;
        }
        let f = &mut self.flows[i as usize];
        let Some(http) = f.http.as_mut() else {
            return Ok(());
        };
        http.woken_at = None;
        // Between the warm-up and the measured connection no connection is current.
        let live = if http.connect_at.is_some() { 0 } else { 1 };
        let done = f.conns.len().saturating_sub(live);
        let (warm_up, current) = f.conns.split_at_mut(done);
        for old in warm_up {
            // The warm-up connection's client closed: the server closes its side.
            if old.server.state() == TcpState::CloseWait {
                old.server.close();
            }
        }
        if let Some(c) = current.first_mut() {
            if let Some(client) = c.client.as_mut() {
                http.write_due(client, &mut c.server);
            }
        }
        self.transmit(i)
    }

    /// Opens HTTP flow `i`'s next connection now (its first, or the measured one after the
    /// warm-up): the client connects and writes what hyper writes at once, then it is sent.
    fn open_http(&mut self, i: u32) -> Result<(), RunError> {
        let now = self.now;
        let index = self.first + i;
        let setup = |e: &dyn std::fmt::Display| RunError::Setup(format!("flow {index}: {e}"));
        let f = &mut self.flows[i as usize];
        let k = f.opened;
        let first = f.conns.first().and_then(|c| c.client.as_ref());
        let cookie = first.is_some_and(Connection::fast_open_cookie_received);
        if k > 0 {
            let addr = super::source_addr(f.index, k, self.port_stride);
            let c = Conn::new(k, addr, f, 0).map_err(|e| setup(&e))?;
            f.conns.push(c);
        }
        let (Some(http), Some(c)) = (f.http.as_mut(), f.conns.last_mut()) else {
            return Ok(());
        };
        let mut client = http
            .connect(f.tcp.clone(), now, cookie)
            .map_err(|e| setup(&e))?;
        http.write_at_connect(&mut client);
        c.client = Some(client);
        f.opened += 1;
        f.clients.push((c.addr, 0));
        f.progress.times.syn_at = Some(now);
        self.transmit(i)
    }

    /// Sends what flow `i`'s connections queued, oldest connection first.
    fn transmit(&mut self, i: u32) -> Result<(), RunError> {
        let now = self.now;
        let f = &mut self.flows[i as usize];
        let index = self.first + i;
        let setup = |e: &dyn std::fmt::Display| RunError::Setup(format!("flow {index}: {e}"));
        let server = f.server;
        for c in &mut f.conns {
            for (conn, src, dst, up) in [
                (c.client.as_mut(), c.addr, server, true),
                (Some(&mut c.server), server, c.addr, false),
            ] {
                let Some(conn) = conn else { continue };
                while let Some(seg) = conn.poll_transmit(now) {
                    let len = seg.ip_len();
                    let tag = match &mut self.tags {
                        Tags::Numbered(next) => {
                            *next += 1;
                            *next - 1
                        }
                        Tags::PerFlow => super::tag::from_client(f.index),
                    };
                    // Data segments (FIN included; not SYNs) are numbered per sequence number.
                    let (copy, slot) = if seg.seq_len() > 0 && !seg.syn {
                        c.copies[usize::from(!up)].sent(seg.seq)
                    } else {
                        (0, 0)
                    };
                    let owner = Owner {
                        flow: i,
                        conn: c.k,
                        copy,
                        slot,
                    };
                    tcp_packet::encode(&mut self.tx_bytes, owner, &seg);
                    let id = self
                        .net
                        .send_tcp(now, src, dst, &self.tx_bytes, seg.tcp_len(), tag)
                        .map_err(|e| setup(&e))?;
                    if let Some(trace) = self.trace.as_deref_mut() {
                        trace.packets.tcp(f.index, &seg, &f.tcp);
                        self.sent_ids.push(id.0);
                    }
                    conn.recycle(seg);
                    if up {
                        f.bytes_up += u64::from(len);
                    } else {
                        f.bytes_down += u64::from(len);
                    }
                }
            }
        }
        Ok(())
    }

    pub(super) fn finish(&self) -> RunResult {
        let flows = self.records();
        // An HTTP run's events are its packets delivered up to the download's end.
        let http_packets = self.flows.iter().filter_map(|f| f.http.as_ref());
        let events = match http_packets
            .map(|h| h.measured.packets)
            .reduce(|a, b| a + b)
        {
            Some(packets) => packets,
            None => self.events,
        };
        RunResult {
            flows,
            events,
            sim_time_s: self.now.as_secs_f64(),
            network: Some(super::network_record(&self.net, self.now)),
        }
    }

    /// The flows' records, in flow order.
    pub(super) fn records(&self) -> Vec<FlowRecord> {
        self.flows
            .iter()
            .map(|f| match &f.http {
                Some(http) => super::http::record(
                    &f.cc,
                    &http.measured,
                    f.finished() && !f.failed,
                    f.progress.gave_up_at,
                    self.end,
                ),
                None => record(f, self.end),
            })
            .collect()
    }
}

/// Feeds the connection's in-order bytes to the session and the session's writes to the
/// connection.
pub(super) fn pump(
    now: Instant,
    conn: &mut Connection,
    session: &mut Session,
    buf: &mut Vec<u8>,
) -> Result<(), coaplab_netsim::tcp::ConnectionFailed> {
    while conn.readable_len() > 0 {
        buf.resize(conn.readable_len().min(64 * 1024), 0);
        let n = conn.read(buf);
        session.handle_stream_bytes(now, &buf[..n]);
    }
    // A generated body (the long transfer's object) goes to the connection ungenerated: its
    // bytes are produced segment by segment, so neither end holds the object whole.
    while let Some((_, tail)) = session.poll_write_parts(buf) {
        let tail = tail.map(|t| Arc::new(Tail(t)) as Arc<dyn Generate>);
        conn.write_parts(buf, tail)?;
    }
    Ok(())
}

/// A response body generated by the server's session, produced by the connection as it
/// sends.
#[derive(Debug)]
struct Tail(GeneratedBody);

impl Generate for Tail {
    fn len(&self) -> u64 {
        self.0.len() as u64
    }

    fn write(&self, offset: u64, out: &mut [u8]) {
        self.0.write(offset as usize, out);
    }
}

/// The record of flow `i`.
fn record(f: &Flow, run_end: Instant) -> FlowRecord {
    let mut n = f.retired;
    for c in &f.conns {
        n = n.sum(c.stats());
    }
    let mut r = flow_record(
        f.index,
        &f.cc,
        f.plan.workload,
        &f.progress,
        n,
        (f.bytes_up, f.bytes_down),
        run_end,
    );
    // A copy is unnecessary when an earlier copy of the same segment reached the receiver.
    r.unnecessary_retransmissions = f.retired_unnecessary
        + f.conns
            .iter()
            .flat_map(|c| &c.copies)
            .map(CopyLog::unnecessary)
            .sum::<u64>();
    r
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
    let net = super::mesh::network(spec, config, false)?;
    let mut sim = simulate_on(spec, TcpNet::Mesh(Box::new(net)), traced)?;
    let mut result = sim.finish();
    if let TcpNet::Mesh(net) = &sim.net {
        // An HTTP run's events are its packets, on any network.
        let http = spec.config.flows.iter().any(|f| f.transport.is_http());
        net.add_records(&mut result, !http);
    }
    let trace = sim.trace.take().map(|t| *t).unwrap_or_default();
    Ok((result, trace))
}
