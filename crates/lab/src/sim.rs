//! One simulated run: the star topology of `coaplab-netsim` with one client endpoint per flow
//! and one server endpoint from `coaplab-endpoint`, driven in virtual time; a pure function of
//! the [`RunSpec`].
//!
//! The loop advances to the earliest of: the network's next delivery, an endpoint's timer, a
//! flow's start. At one instant, deliveries are handed in before timers (an ACK wins over an
//! expiry at the same instant, docs/algorithms.md, 'Conventions'), then flows start. The run ends
//! when every flow is done, when nothing is left to happen, or at `max_sim_time`.
//!
//! Every packet carries a tag (see [`tag`]) naming the flow and, for a client's CON copy, the
//! exchange and copy; the server's reply inherits the tag of the packet it answers, which is
//! how [`crate::metrics`] knows which copy a delivered reply answers (ground truth).
//!
//! A run whose flows all have a TCP `cc` (`tcp-newreno`, `tcp-bbr`) runs CoAP over TCP instead, in the
//! TCP run loop of the private `tcp` module: connections of netsim's TCP model on the same star
//! or mesh, each flow's application on top a `tcp_app::FlowApp` — RFC 8323 sessions (private
//! `tcp_coap` module) or, as a sibling, an HTTP download (`cc` = `http1`, `h2`, `iot-http1`,
//! `iot-h2`, private `http` module). Which loop a run takes follows from its topology and its
//! flows' typed [`crate::scenario::Transport`], in the one dispatcher of the private `dispatch`
//! module (simulated, traced and emulated runs alike). A run of CoAP-over-UDP groups followed
//! by CoAP-over-TCP groups (a long download beside CoAP clients) runs this loop on the private
//! `cross_tcp` module's star, which carries the TCP flows itself: it drives the TCP loop's
//! flows from inside its network.
//!
//! The loop reaches the network only through netsim's [`Topology`] trait: netsim's [`Star`], or
//! netsim's multi-hop 802.15.4 `Mesh` (`[topology] kind = "mesh"`, private `mesh` module,
//! which composes it with a star for an off-mesh server), both in virtual time; or
//! [`emulated`]'s real sockets behind the link emulator, whose loop waits for them in real
//! time (the private `Sim::run_with`).

use std::net::SocketAddr;
use std::sync::Arc;

use coaplab_cc::params::Settings;
use coaplab_cc::rng::Random;
use coaplab_cc::time::{earliest, Duration, Instant};
use coaplab_endpoint::observe::{NotifyPolicy, NotifyTimer};
use coaplab_endpoint::{
    registry_factory, Config, Endpoint, Event, FailReason, Request, ResolvedController, Resource,
    Router, TransmitMeta,
};
use coaplab_netsim::{
    client_addr, rng, Delivery, Direction, DirectionStats, Star, Topology, SERVER_ADDR,
};

use crate::mesh_metrics::MeshFlowMetrics;
use crate::metrics::{FlowMetrics, IP_UDP_HEADER_BYTES};
use crate::observe_metrics::ObserveMetrics;
use crate::results::{LinkRecord, NetworkRecord, RunError, RunResult};
use crate::scenario::{FlowConfig, RunSpec, SourcePort, Workload};
use crate::trace::RunTrace;
use crate::workload::{self, FlowDriver};
use dispatch::{Mode, RunLoop};
use owner_deadlines::OwnerDeadlines;

mod cross_tcp;
#[cfg(test)]
mod deadlines;
mod dispatch;
#[cfg(feature = "emulated")]
pub mod emulated;
mod http;
mod mesh;
mod network;
mod owner_deadlines;
pub use crate::tag;
mod tcp;
mod tcp_app;
mod tcp_coap;
mod tcp_conns;
mod tcp_copies;
mod tcp_flow;
mod tcp_packet;

/// Simulates `spec` and returns one record per flow.
pub fn run_one(spec: &RunSpec) -> Result<RunResult, RunError> {
    match dispatch::run_loop(&spec.config, Mode::Simulated)? {
        RunLoop::UdpMesh(mesh) => mesh::run(spec, mesh),
        RunLoop::TcpMesh(mesh) => Ok(tcp::run_on_mesh(spec, mesh, false)?.0),
        // HTTP is a sibling session kind on the CoAP-over-TCP loop.
        RunLoop::TcpStar | RunLoop::HttpStar => tcp::run(spec),
        RunLoop::UdpTcpStar => cross_tcp::run(spec),
        RunLoop::UdpStar => {
            let mut sim = Sim::build(spec)?;
            sim.run()?;
            Ok(sim.finish())
        }
    }
}

/// Simulates `spec` like [`run_one`] (the same result, byte for byte) and keeps its trace:
/// the clients' events with their algorithm's snapshots, every packet sent and the star's
/// per-packet records, or on a mesh every frame on air ([`crate::trace`]).
pub fn run_traced(spec: &RunSpec) -> Result<(RunResult, RunTrace), RunError> {
    match dispatch::run_loop(&spec.config, Mode::Simulated)? {
        RunLoop::UdpMesh(mesh) => mesh::run_traced(spec, mesh),
        RunLoop::TcpMesh(mesh) => tcp::run_on_mesh(spec, mesh, true),
        RunLoop::TcpStar | RunLoop::HttpStar => tcp::run_traced(spec),
        RunLoop::UdpTcpStar => cross_tcp::run_traced(spec),
        RunLoop::UdpStar => run_traced_udp_star(spec),
    }
}

/// [`run_traced`] of CoAP over UDP on the star.
fn run_traced_udp_star(spec: &RunSpec) -> Result<(RunResult, RunTrace), RunError> {
    let star =
        Star::new(&spec.config.network, spec.seed).map_err(|e| RunError::Setup(e.to_string()))?;
    let mut sim = Sim::assemble(spec, star, true)?;
    sim.net.record_packets(true);
    sim.trace = Some(Box::default());
    sim.run()?;
    let result = sim.finish();
    let mut trace = sim.trace.take().map(|t| *t).unwrap_or_default();
    trace.records = drain_records(&mut sim.net);
    Ok((result, trace))
}

/// Follows every packet still inside `net` to its fate (no endpoint sees them any more) and
/// returns every packet's record.
pub(crate) fn drain_records(net: &mut impl Topology) -> Vec<coaplab_netsim::PacketRecord> {
    let far = Instant::ZERO + Duration::from_secs(1 << 30);
    let mut buf = Vec::new();
    while net.poll_delivery(far, &mut buf).is_some() {}
    net.take_records()
}

/// One client: its endpoint, what it does, what was measured.
///
/// Laid out for the loop, which reads a flow's state for each of its events (issue 35: at
/// 400 flows this `Vec` is the run's most-read memory and larger than the cache, so each
/// distinct line touched per event is a miss): the fields in declaration order (`repr(C)`),
/// each client starting a cache line, what every event reads first and together (address,
/// driver, metrics), then the endpoint, and behind one box what only the flow's setup, a
/// fresh short-lived client and the result read.
#[repr(C, align(64))]
struct Client {
    addr: SocketAddr,
    /// Observers (`workload = "observe"`): the notification metrics; `None` otherwise.
    observe: Option<Box<ObserveMetrics>>,
    driver: FlowDriver,
    metrics: FlowMetrics,
    endpoint: Endpoint,
    info: Box<ClientInfo>,
}

/// What the loop does not read per event of a flow.
struct ClientInfo {
    /// The server it addresses ([`server_of`]).
    server: SocketAddr,
    cc: String,
    workload: &'static str,
    /// What a random flow with `random_source_port = "new"` needs to start its next
    /// short-lived client on a fresh endpoint; `None` otherwise.
    renewal: Option<Renewal>,
}

/// The state a flow needs to build fresh short-lived clients.
struct Renewal {
    /// The flow group's algorithm with its settings.
    controller: ResolvedController,
    /// Short-lived clients started after the first.
    clients: u32,
}

struct Sim<N: Topology> {
    /// The network: netsim's star or mesh in virtual time, or the emulated one.
    net: N,
    /// One endpoint per address of [`Topology::servers`], in that order: flow `i` addresses
    /// server `i mod n` ([`server_of`]).
    servers: Vec<Endpoint>,
    /// Their addresses.
    server_addrs: Vec<SocketAddr>,
    clients: Vec<Client>,
    /// Client deadlines at their index; the servers' after every client (`server_slot`).
    timers: OwnerDeadlines,
    /// Flow start times, sorted.
    starts: Vec<(Instant, u32)>,
    next_start: usize,
    remaining: usize,
    end: Instant,
    now: Instant,
    events: u64,
    /// The run seed (fresh short-lived clients derive their algorithm's stream from it).
    seed: u64,
    /// Client ports per host taken by the flows' first clients ([`source_addr`]).
    port_stride: u32,
    /// The datagram being delivered (reused).
    buf: Vec<u8>,
    /// IP bytes the servers sent to each flow, added to its metrics at the end: counted
    /// here, not in the flow's own metrics, whose lines a reply would otherwise fetch into
    /// the cache for nothing (the flow only wakes when the reply arrives).
    bytes_down: Vec<u64>,
    /// What a traced run keeps ([`run_traced`]); `None` otherwise.
    trace: Option<Box<RunTrace>>,
    /// A flow group observes: the server's events feed the observers' metrics, and what it
    /// sends from a timer (notifications) is tagged with the observer's flow.
    observing: bool,
    /// Whether `drain_client` counts the copies the clients send (they emit no
    /// [`Event::Sent`], [`client_emits_sent`]): the same for every client, kept here rather
    /// than read from each endpoint's configuration, one more cache line of the flow's.
    count_copies: bool,
    /// Whether the network still runs flows of its own (`cross_tcp`'s TCP flows): the run
    /// goes on while it does. Asked only once every client is done.
    net_busy: fn(&N) -> bool,
}

impl Sim<Star> {
    /// A simulated run on netsim's star.
    fn build(spec: &RunSpec) -> Result<Sim<Star>, RunError> {
        let star = Star::new(&spec.config.network, spec.seed)
            .map_err(|e| RunError::Setup(e.to_string()))?;
        Sim::with_network(spec, star)
    }
}

impl<N: Topology> Sim<N> {
    fn with_network(spec: &RunSpec, net: N) -> Result<Sim<N>, RunError> {
        Sim::assemble(spec, net, false)
    }

    /// The run on `net`; with `snapshots`, the clients emit their algorithm's snapshots.
    fn assemble(spec: &RunSpec, net: N, snapshots: bool) -> Result<Sim<N>, RunError> {
        let config = &spec.config;
        let paths = network::paths(&config.flows);
        let mut router = Router::new();
        for (path, resource) in &paths.routes {
            router.route(path, *resource);
        }
        let observed = config.flows.iter().find_map(|f| match f.workload {
            Workload::Observe {
                period, con_every, ..
            } => Some((period, con_every)),
            _ => None,
        });
        if let Some((period, con_every)) = observed {
            // One observable resource; its CON notifications timed by the observer's
            // algorithm (the server's controller factory below).
            router
                .counter(crate::workload::OBSERVE_PATH, period)
                .max_observers(config.total_flows() as usize)
                .notify_policy(NotifyPolicy {
                    con_every,
                    timer: NotifyTimer::Controller,
                });
        }
        let port_stride = config.total_flows().div_ceil(254).max(1);
        let server_config = Config {
            block_size_bytes: paths.block_bytes,
            dedup_lifetime: None,
            // The experiments' endpoints let Message IDs wrap, as before the check existed.
            message_id_lifetime: None,
            // Like the duplicate cache, partial uploads are kept for the whole run, and the
            // server takes as many at once as before the limit became configurable.
            upload_lifetime: None,
            max_pending_uploads: 1024,
            // Unbounded like before the limits existed, so no run changes: the byte cap and
            // the per-source share are for real-socket servers, and a purge timer would only
            // add wake-ups (expired entries are never used either way).
            max_pending_uploads_per_source: usize::MAX,
            dedup_capacity_bytes: usize::MAX,
            dedup_reserve_entries: expected_requests(config),
            dedup_reserve_reply_bytes: expected_reply_bytes(config, paths.block_bytes),
            dedup_purge_timer: false,
            keep_bodies: false,
            // Only observers' metrics read the server's events (`drain_server`), and only
            // the notifications'.
            emit_request_events: observed.is_some(),
            emit_sent_events: false,
            server_duplicates: config.protocol.server_duplicates,
            ..Config::default()
        };
        let server_addrs = net.servers().to_vec();
        let mut servers = Vec::with_capacity(server_addrs.len());
        for _ in &server_addrs {
            let server_factory = match observed {
                None => registry_factory("default", &Settings::new(), spec.seed)
                    .map_err(|e| RunError::Setup(e.to_string()))?,
                Some(_) => observer_factory(spec, port_stride)?,
            };
            let server = Endpoint::new(server_config.clone(), server_factory, router.clone())
                .map_err(|e| RunError::Setup(e.to_string()))?;
            servers.push(server);
        }
        let mut clients = Vec::with_capacity(config.total_flows() as usize);
        let mut starts = Vec::with_capacity(clients.capacity());
        for (group, flow) in config.flows.iter().enumerate() {
            // One request per group, shared by its flows ([`FlowDriver`]).
            let request = workload::request_of(
                flow.workload,
                flow.request_payload_bytes,
                &paths.path_of[group],
            );
            // Resolved once per group; each flow's factory differs only in its seed.
            let controller = ResolvedController::new(flow.cc(), &flow.settings)
                .map_err(|e| RunError::Setup(format!("flows[{group}]: {e}")))?;
            for _ in 0..flow.count {
                let i = clients.len() as u32;
                let server = server_of(i, &server_addrs);
                let client = client(spec, flow, &controller, i, server, &request, snapshots)?;
                let mut start_rng = rng::indexed_stream(spec.seed, "start/flow", i);
                let jitter = flow.start_jitter.as_nanos() as f64;
                let at =
                    Instant::ZERO + Duration::from_nanos((start_rng.uniform01() * jitter) as i64);
                starts.push((at, i));
                clients.push(client);
            }
        }
        starts.sort();
        let n_clients = clients.len();
        Ok(Sim {
            net,
            timers: OwnerDeadlines::new(
                n_clients + servers.len(),
                Instant::ZERO + config.max_sim_time,
            ),
            servers,
            server_addrs,
            remaining: clients.len(),
            clients,
            starts,
            next_start: 0,
            end: Instant::ZERO + config.max_sim_time,
            now: Instant::ZERO,
            events: 0,
            seed: spec.seed,
            port_stride,
            buf: Vec::with_capacity(2048),
            bytes_down: vec![0; n_clients],
            trace: None,
            observing: observed.is_some(),
            count_copies: !client_emits_sent(spec, snapshots),
            net_busy: |_| false,
        })
    }

    /// Runs the loop in virtual time: from each instant straight to the next thing that
    /// happens, the network's next event or `local` (the earliest endpoint timer or flow start).
    fn run(&mut self) -> Result<(), RunError> {
        self.run_with(|net, local, _end| Ok(earliest(net.poll_at(), local)))
    }

    /// Runs the loop, `next_at(net, local, end)` choosing the instant it handles next given
    /// `local`, the earliest endpoint timer or flow start, and the horizon `end`; `None`:
    /// nothing left to happen. In virtual time ([`Sim::run`]) the earlier of `local` and the
    /// network's next event; in real time the wall clock once a datagram has arrived, `local`
    /// or `end` has come (`emulated`, which waits on its sockets until then).
    fn run_with(
        &mut self,
        mut next_at: impl FnMut(&mut N, Option<Instant>, Instant) -> Result<Option<Instant>, RunError>,
    ) -> Result<(), RunError> {
        let mut ran_out = false;
        // The delivery buffer is the loop's for the whole run (taken once, not per instant).
        let mut buf = std::mem::take(&mut self.buf);
        while self.remaining > 0 || (self.net_busy)(&self.net) {
            let next_start = self.starts.get(self.next_start).map(|(t, _)| *t);
            let local = earliest(self.timers.next_at(), next_start);
            let next = next_at(&mut self.net, local, self.end)?;
            let Some(now) = next.filter(|&t| t <= self.end) else {
                ran_out = true;
                break;
            };
            self.now = now;
            while let Some(d) = self.net.poll_delivery(now, &mut buf) {
                self.events += 1;
                self.deliver(&d, &buf)?;
            }
            while let Some(who) = self.timers.pop_due(now) {
                self.events += 1;
                if let Some(j) = (who as usize).checked_sub(self.clients.len()) {
                    self.servers[j].handle_timeout(now);
                    self.drain_server(j, None)?;
                } else {
                    let c = &mut self.clients[who as usize];
                    c.endpoint.handle_timeout(now);
                    c.driver.tick(now, &mut c.endpoint);
                    self.drain_client(who)?;
                }
            }
            // No flow starts at an instant before the next start time (none is added).
            if next_start.map_or(true, |t| t > now) {
                continue;
            }
            while let Some(&(t, who)) = self.starts.get(self.next_start) {
                if t > now {
                    break;
                }
                self.next_start += 1;
                self.events += 1;
                let c = &mut self.clients[who as usize];
                c.driver.start(now, &mut c.endpoint);
                self.drain_client(who)?;
            }
        }
        self.buf = buf;
        // A loop that ran out of events stops its clock where the lazy timer heap it once had
        // would have: at the latest displaced deadline before the horizon (see `OwnerDeadlines`).
        if ran_out {
            self.now = self.timers.latest_displaced_by(self.now);
        }
        Ok(())
    }

    fn deliver(&mut self, d: &Delivery, bytes: &[u8]) -> Result<(), RunError> {
        if let Some(j) = self.server_addrs.iter().position(|a| *a == d.dst) {
            self.servers[j].handle_datagram(d.at, d.src, bytes);
            return self.drain_server(j, Some(d.tag));
        }
        let flow = tag::flow(d.tag);
        let Some(c) = self.clients.get_mut(flow as usize) else {
            return Ok(());
        };
        if let Some((exchange, ordinal)) = tag::answered(d.tag) {
            c.metrics.on_reply_delivered(exchange, ordinal);
        }
        if d.dst != c.addr {
            // Addressed to a former short-lived client of this flow: its socket is closed.
            return Ok(());
        }
        c.endpoint.handle_datagram(d.at, d.src, bytes);
        self.drain_client(flow)
    }

    /// Server `j`'s owner index in `timers`: after every client, so that at equal instants
    /// client timers fire first.
    fn server_slot(&self, j: usize) -> u32 {
        (self.clients.len() + j) as u32
    }

    /// Sends what server `j` queued (replies tagged after `rx_tag`) and re-arms its timer.
    /// `rx_tag`: the tag of the datagram just handed in; `None` after a timer.
    fn drain_server(&mut self, j: usize, rx_tag: Option<u64>) -> Result<(), RunError> {
        let now = self.now;
        let from = self.server_addrs[j];
        let server = &mut self.servers[j];
        let (net, bytes_down, trace) = (&mut self.net, &mut self.bytes_down, &mut self.trace);
        let (observing, port_stride) = (self.observing, self.port_stride);
        while let Some(sent) = server.poll_transmit_with(now, |tx, datagram| {
            let tag = match (tx.meta, rx_tag) {
                // A notification (or its retransmission) belongs to its observer's flow.
                (TransmitMeta::Reply { .. }, None) if observing => {
                    tag::from_server(flow_of(tx.destination, port_stride))
                }
                (TransmitMeta::Reply { .. }, rx) => tag::reply(rx.unwrap_or(0)),
                (TransmitMeta::Exchange { .. }, _) => {
                    tag::from_server(flow_of(tx.destination, port_stride))
                }
            };
            if let Some(b) = bytes_down.get_mut(tag::flow(tag) as usize) {
                *b += datagram.len() as u64 + IP_UDP_HEADER_BYTES;
            }
            if let Some(trace) = trace.as_deref_mut() {
                trace.packets.udp(tag::flow(tag), datagram);
            }
            net.send(now, from, tx.destination, datagram, tag)
        }) {
            sent.map_err(|e| RunError::Setup(format!("server: {e}")))?;
        }
        while let Some(e) = server.poll_event() {
            if !self.observing {
                continue;
            }
            if let Event::NotificationSent { peer, .. }
            | Event::NotificationRetransmitted { peer, .. } = e
            {
                let flow = flow_of(peer, self.port_stride) as usize;
                if let Some(o) = self.clients.get_mut(flow).and_then(|c| c.observe.as_mut()) {
                    o.on_server_event(&e);
                }
            }
        }
        // A request answered at once leaves the deadline armed as it was: neither asked
        // again nor re-armed (issue 35: about 70 instructions per request).
        if server.timeout_may_have_changed() {
            let t = server.poll_timeout();
            let slot = self.server_slot(j);
            self.timers.arm(slot, t);
        }
        Ok(())
    }

    /// Sends what client `i` queued, feeds its events to its metrics and driver, re-arms.
    fn drain_client(&mut self, i: u32) -> Result<(), RunError> {
        let now = self.now;
        let c = &mut self.clients[i as usize];
        loop {
            let (net, trace) = (&mut self.net, &mut self.trace);
            let (addr, metrics) = (c.addr, &mut c.metrics);
            // Without `Event::Sent` (`client`), each copy is counted here as it goes out: the
            // first copy of a flow goes out at the instant of the input that made it, as its
            // event says (later copies' instants are not read).
            let count_copies = self.count_copies;
            while let Some(sent) = c.endpoint.poll_transmit_with(now, |tx, datagram| {
                let tag = match tx.meta {
                    TransmitMeta::Exchange { exchange, ordinal } => {
                        if count_copies {
                            metrics.on_sent(exchange.0, ordinal, now);
                        }
                        tag::copy(i, metrics.exchange_id(exchange.0), ordinal)
                    }
                    TransmitMeta::Reply { .. } => tag::from_client(i),
                };
                metrics.bytes_up += datagram.len() as u64 + IP_UDP_HEADER_BYTES;
                if let Some(trace) = trace.as_deref_mut() {
                    trace.packets.udp(i, datagram);
                }
                net.send(now, addr, tx.destination, datagram, tag)
            }) {
                sent.map_err(|e| RunError::Setup(format!("flow {i}: {e}")))?;
            }
            while let Some(event) = c.endpoint.poll_event() {
                c.metrics.on_event(&event);
                if let Some(trace) = self.trace.as_deref_mut() {
                    trace.event(i, &event);
                }
                if let Some(o) = c.observe.as_mut() {
                    // An observer: notifications are its metrics; it ends at its tick.
                    o.on_client_event(&event);
                    continue;
                }
                match event {
                    Event::RequestCompleted { code, body_len, .. }
                        if !c.driver.is_whole(code, body_len) =>
                    {
                        // Not the whole object: the flow is not complete (and never will be).
                        c.metrics.failed_exchanges += 1;
                        if !c.driver.is_done() {
                            c.driver.on_partial();
                            c.metrics.gave_up_at = Some(now);
                            self.remaining -= 1;
                        }
                    }
                    Event::RequestCompleted { exchanges, at, .. } => {
                        c.metrics.exchanges += match c.driver.workload() {
                            Workload::LongTransfer { .. } => exchanges,
                            _ => 1,
                        };
                        if c.driver.on_completed(now, &mut c.endpoint) {
                            c.metrics.finished = Some(at);
                            self.remaining -= 1;
                        }
                    }
                    Event::RequestFailed { reason, .. } => {
                        // Only network outcomes are retried; anything else would fail again at
                        // once, forever.
                        if !matches!(
                            reason,
                            FailReason::GiveUp | FailReason::Reset | FailReason::ResponseTimeout
                        ) {
                            return Err(RunError::Setup(format!(
                                "flow {i}: a request failed with {reason:?}"
                            )));
                        }
                        c.metrics.failed_exchanges += 1;
                        // A periodic flow may have ended (partial answer) with requests
                        // still open: count its end once.
                        let was_done = c.driver.is_done();
                        c.driver.on_failed(now, &mut c.endpoint);
                        if !was_done && c.driver.is_done() {
                            if c.metrics.finished.is_none() {
                                c.metrics.gave_up_at = Some(now);
                            }
                            self.remaining -= 1;
                        }
                    }
                    _ => {}
                }
            }
            // What the events' handlers queued (the next request, its events) is the next
            // pass's; with nothing queued a further pass would find nothing (issue 35).
            if c.endpoint.has_output() {
                continue;
            }
            if !c.driver.wants_new_client() {
                break;
            }
            // The old client is drained: its successor starts on a fresh endpoint.
            renew(c, i, self.seed, self.port_stride)?;
            c.driver.resume(now, &mut c.endpoint);
        }
        if c.observe.is_some() && c.driver.is_done() && c.metrics.finished.is_none() {
            // The observer deregistered: its observation is over.
            c.metrics.finished = Some(now);
            self.remaining -= 1;
        }
        // A periodic flow's next request start is a deadline of its client too.
        let t = earliest(c.endpoint.poll_timeout(), c.driver.next_tick());
        self.timers.arm(i, t);
        Ok(())
    }

    /// Counts the replies delivered for `(flow, exchange, ordinal)` client copies, from a
    /// network whose packets cannot carry tags (the emulated one derives them from its packet
    /// log when it stops); before [`Sim::finish`]. A tagged network's deliveries were counted
    /// as they came.
    #[cfg(feature = "emulated")]
    fn replies_delivered(&mut self, copies: impl IntoIterator<Item = (u32, u64, u32)>) {
        for (flow, exchange, ordinal) in copies {
            if let Some(c) = self.clients.get_mut(flow as usize) {
                c.metrics.on_reply_delivered(exchange, ordinal);
            }
        }
    }

    /// The run's result: one record per flow, and the network's counters
    /// ([`Topology::direction_stats`]) as they stand at the run's end.
    fn finish(&mut self) -> RunResult {
        let network = network_record(&self.net, self.now);
        for (c, bytes) in self.clients.iter_mut().zip(&self.bytes_down) {
            c.metrics.bytes_down += bytes;
        }
        let flows = self
            .clients
            .iter_mut()
            .enumerate()
            .map(|(i, c)| {
                let done = c.driver.is_done() && c.metrics.finished.is_some();
                if !done && matches!(c.driver.workload(), Workload::LongTransfer { .. }) {
                    // An unfinished transfer's request never completed: count the block
                    // exchanges that did.
                    c.metrics.exchanges = c.metrics.rtts.len() as u32;
                }
                // A flow still running when the loop stopped was running at the cap (the loop
                // stops early only when every flow is done or nothing is left to happen).
                let mut r = c
                    .metrics
                    .record(i as u32, &c.info.cc, c.info.workload, done, self.end);
                r.observe = c.observe.as_deref().map(ObserveMetrics::record);
                r
            })
            .collect();
        RunResult {
            flows,
            events: self.events,
            sim_time_s: self.now.as_secs_f64(),
            network: Some(network),
        }
    }
}

/// The counters of `net` at the end of a run at `now` (a mesh's channel and RPL records are
/// its run loop's to add).
fn network_record(net: &impl Topology, now: Instant) -> NetworkRecord {
    NetworkRecord {
        down: link_record(net.direction_stats(Direction::Down)),
        up: link_record(net.direction_stats(Direction::Up)),
        sim_time_s: now.as_secs_f64(),
        mesh: None,
        rpl: None,
    }
}

/// One direction's counters as the results record them.
fn link_record(s: impl Into<DirectionStats>) -> LinkRecord {
    let s = s.into();
    LinkRecord {
        offered_packets: s.offered_packets,
        overflow_drops: s.overflow_drops,
        link_error_drops: s.link_error_drops,
        sent_packets: s.sent_packets,
        sent_bytes: s.sent_bytes,
        busy_s: s.busy_time.as_secs_f64(),
        queue_high_water_bytes: s.queue_high_water_bytes,
    }
}

/// Builds client `i` of flow group `flow`.
fn client(
    spec: &RunSpec,
    flow: &FlowConfig,
    controller: &ResolvedController,
    i: u32,
    server: SocketAddr,
    request: &Arc<Request>,
    snapshots: bool,
) -> Result<Client, RunError> {
    let seed = spec.seed;
    let factory = controller.factory(rng::indexed_stream_seed(seed, "cc/flow", i));
    let mut ids = rng::indexed_stream(seed, "ids/flow", i);
    let block = match flow.workload {
        Workload::LongTransfer { block_bytes, .. } => block_bytes as usize,
        _ => 1024,
    };
    let config = Config {
        nstart: spec.config.protocol.nstart,
        initial_message_id: ids.below(1 << 16) as u16,
        initial_token: ids.below(1 << 16),
        block_size_bytes: block,
        request_block2_size_bytes: flow.early_block2.then_some(block),
        keep_bodies: false,
        // Bodies are not kept and the server is ours: the scenario's object_bytes bounds a
        // transfer, and an object past the CLI's 64-MiB default still runs as before.
        max_body_bytes: usize::MAX,
        // As for the server: no byte cap, no purge wake-ups (see `with_network`), Message IDs
        // wrap as before.
        dedup_capacity_bytes: usize::MAX,
        message_id_lifetime: None,
        dedup_purge_timer: false,
        // The mesh metrics read the algorithm's base RTO from the snapshots.
        emit_snapshots: snapshots || spec.config.mesh_metrics(),
        emit_sent_events: client_emits_sent(spec, snapshots),
        ..Config::default()
    };
    let endpoint = Endpoint::new(config, factory, Router::new())
        .map_err(|e| RunError::Setup(format!("flow {i}: {e}")))?;
    let renewal = (matches!(flow.workload, Workload::Random { .. })
        && flow.random_source_port == SourcePort::New)
        .then(|| Renewal {
            controller: controller.clone(),
            clients: 0,
        });
    Ok(Client {
        addr: client_addr(i),
        observe: matches!(flow.workload, Workload::Observe { .. }).then(Box::default),
        endpoint,
        driver: FlowDriver::new(
            flow.workload,
            Arc::clone(request),
            flow.response_payload_bytes,
            rng::indexed_stream(seed, "workload/flow", i),
        )
        .new_client_per_batch(renewal.is_some())
        .periodic(flow.interval)
        .server(server),
        metrics: FlowMetrics::with_expiries(spec.config.timers)
            .with_room_for(exchange_quota(flow.workload).min(MAX_ROOM_EXCHANGES) as usize)
            .with_mesh(spec.config.mesh_metrics().then(|| {
                MeshFlowMetrics::new(
                    flow.request_payload_bytes,
                    spec.config.intervals,
                    spec.config.exchanges,
                )
            })),
        info: Box::new(ClientInfo {
            server,
            cc: flow.cc().to_string(),
            workload: flow.workload.name(),
            renewal,
        }),
    })
}

/// Whether the clients emit [`Event::Sent`]: only the trace and the mesh metrics read it
/// itself; otherwise the flow metrics count each copy as `drain_client` sends it (one event
/// fewer per copy, issue 35).
fn client_emits_sent(spec: &RunSpec, snapshots: bool) -> bool {
    snapshots || spec.config.mesh_metrics()
}

/// The most entries a server's duplicate cache is sized for up front (~10 MB of hash table);
/// past them it grows as it fills.
const MAX_DEDUP_RESERVE: usize = 1 << 16;

/// The requests the server(s) will remember: one per exchange of the flows with an exchange
/// quota (a retransmission reuses its request's Message ID), none counted for the others (a
/// block-wise transfer, an observer). A hint to size the duplicate cache once instead of
/// growing it from empty; not an over-estimate, since reserved room a run never fills still
/// costs page faults.
fn expected_requests(config: &crate::scenario::RunConfig) -> usize {
    let exchanges: u64 = config.flows.iter().map(quota_exchanges).sum();
    (exchanges as usize).min(MAX_DEDUP_RESERVE)
}

/// Exchanges flow group `f` is to complete, when it has a quota of them (0 for a block-wise
/// transfer or an observer).
fn quota_exchanges(f: &FlowConfig) -> u64 {
    u64::from(f.count) * exchange_quota(f.workload)
}

/// Exchanges one flow of `workload` is to complete, when it has a quota of them (0 for a
/// block-wise transfer or an observer).
fn exchange_quota(workload: Workload) -> u64 {
    match workload {
        Workload::Continuous { exchanges } | Workload::Random { exchanges, .. } => {
            u64::from(exchanges)
        }
        Workload::LongTransfer { .. } | Workload::Observe { .. } => 0,
    }
}

/// The most exchanges a flow's metrics make room for up front ([`FlowMetrics::with_room_for`]);
/// past them they grow as they fill.
const MAX_ROOM_EXCHANGES: u64 = 1024;

/// Bytes of a server's reply beyond its payload: header, token (at most 8 B), a response's
/// options (Content-Format, Block2, ETag...) and the payload marker; an estimate for the
/// duplicate cache's reservation.
const REPLY_OVERHEAD_BYTES: u64 = 24;

/// The reply bytes the server(s) will remember for [`expected_requests`]: each flow group's
/// exchanges times its reply (payload at most the server's `block_bytes`), within the same cap
/// of entries. A hint, so that the duplicate cache places its replies without copying them as
/// it grows; the arena fills from its start, so room a run never fills is never touched.
fn expected_reply_bytes(config: &crate::scenario::RunConfig, block_bytes: usize) -> usize {
    let reply = |f: &FlowConfig| {
        u64::from(f.response_payload_bytes).min(block_bytes as u64) + REPLY_OVERHEAD_BYTES
    };
    let bytes: u64 = config
        .flows
        .iter()
        .map(|f| quota_exchanges(f) * reply(f))
        .sum();
    let cap = MAX_DEDUP_RESERVE as u64 * (block_bytes as u64 + REPLY_OVERHEAD_BYTES);
    bytes.min(cap) as usize
}

/// The server flow `i` addresses: `servers[i mod n]` (round-robin over the servers in node
/// order, by flow index, which on a mesh is the client node's rank among the client nodes).
/// With one server (the star, most meshes) every flow addresses it.
pub(crate) fn server_of(i: u32, servers: &[SocketAddr]) -> SocketAddr {
    servers
        .get(i as usize % servers.len().max(1))
        .copied()
        .unwrap_or(SERVER_ADDR)
}

/// The server's controller factory in a run with observers: each observer's address gets
/// its flow group's algorithm and settings, so its CON notifications are timed as that
/// group's `cc` would time a CON request (each destination its own random stream, seeded
/// from the run seed).
fn observer_factory(
    spec: &RunSpec,
    port_stride: u32,
) -> Result<coaplab_endpoint::ControllerFactory, RunError> {
    let seed = rng::stream_seed(spec.seed, "cc/server");
    let mut factories = Vec::with_capacity(spec.config.flows.len());
    let mut group_of = Vec::with_capacity(spec.config.total_flows() as usize);
    for (g, flow) in spec.config.flows.iter().enumerate() {
        let f = registry_factory(flow.cc(), &flow.settings, seed)
            .map_err(|e| RunError::Setup(format!("server for flows[{g}]: {e}")))?;
        factories.push(f);
        group_of.resize(group_of.len() + flow.count as usize, g);
    }
    Ok(Box::new(move |addr, now| {
        let flow = flow_of(addr, port_stride) as usize;
        let g = group_of.get(flow).copied().unwrap_or(0);
        (factories[g])(addr, now)
    }))
}

/// Replaces client `i`'s endpoint by a fresh one on the flow's next source address
/// (`random_source_port = "new"`): same settings, a fresh algorithm from the stream
/// `cc/flow{i}/client{k}`, Message IDs and tokens continuing where the old endpoint stopped.
fn renew(c: &mut Client, i: u32, seed: u64, port_stride: u32) -> Result<(), RunError> {
    let info = &mut *c.info;
    let Some(renewal) = info.renewal.as_mut() else {
        return Ok(());
    };
    renewal.clients += 1;
    let k = renewal.clients;
    let factory = renewal
        .controller
        .factory(rng::stream_seed(seed, &format!("cc/flow{i}/client{k}")));
    let config = Config {
        initial_message_id: c.endpoint.next_message_id(),
        initial_token: c.endpoint.next_token(),
        ..c.endpoint.config().clone()
    };
    c.endpoint = Endpoint::new(config, factory, Router::new())
        .map_err(|e| RunError::Setup(format!("flow {i}: {e}")))?;
    c.addr = source_addr(i, k, port_stride);
    c.metrics.start_new_client();
    Ok(())
}

/// First client port of every host.
const FIRST_PORT: u16 = 10_000;

/// The source address of short-lived client `k` of flow `i` (`k = 0`: the flow's first
/// client, [`client_addr`]). The host stays the flow's; the port moves on by `k · stride`,
/// where `stride` is the number of ports the flows' first clients take per host, so no two
/// (flow, client) pairs share an address until the host's ports wrap around (then, like
/// ephemeral ports, a port is reused long after its previous client ended).
fn source_addr(i: u32, k: u32, stride: u32) -> SocketAddr {
    let first = client_addr(i);
    if k == 0 {
        return first;
    }
    let stride = u64::from(stride.max(1));
    let ports = u64::from(u16::MAX - FIRST_PORT) + 1;
    let slots = (ports / stride).max(1) * stride;
    let offset = (u64::from(first.port() - FIRST_PORT) + u64::from(k) * stride) % slots;
    let port = u16::try_from(u64::from(FIRST_PORT) + offset).unwrap_or(u16::MAX);
    SocketAddr::new(first.ip(), port)
}

/// The flow index of a client address ([`source_addr`] and [`client_addr`] inverted).
fn flow_of(addr: SocketAddr, stride: u32) -> u32 {
    match addr {
        SocketAddr::V4(v4) => {
            let host = u32::from(v4.ip().octets()[3]);
            let slot = u32::from(v4.port().saturating_sub(FIRST_PORT)) % stride.max(1);
            slot * 254 + host.saturating_sub(1)
        }
        SocketAddr::V6(_) => u32::MAX,
    }
}

/// The resource of the path `f` for the short-lived exchanges and the long transfer.
pub(crate) fn resource(object_bytes: u64, reply_bytes: u32) -> Resource {
    Resource::experiment(object_bytes as usize, reply_bytes as usize)
}

#[cfg(test)]
mod mesh_tcp_tests;
#[cfg(test)]
mod mesh_tests;
#[cfg(test)]
mod observe_tests;
#[cfg(test)]
mod tests;
