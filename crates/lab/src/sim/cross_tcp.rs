//! CoAP over UDP beside CoAP-over-TCP flows on one star (issue 36, "competing with TCP"): the
//! run of a scenario whose first flow groups are CoAP over UDP (any registry algorithm) and
//! whose last are CoAP over TCP (`cc = "tcp-newreno"` or `"tcp-bbr"`), typically one long
//! download (`workload = "long-transfer"`). The TCP segments and the CoAP datagrams share the
//! star's FIFOs: the download's queue is the CoAP flows' queue.
//!
//! The TCP flows live inside a network: [`WithTcp`] wraps netsim's [`Star`] and is itself a
//! [`Topology`], so the CoAP-over-UDP run loop (`Sim`) runs on it unchanged. The wrapper
//! carries its TCP flows' segments through the star (`Star::send_ip`, for a segment's IP
//! length) and hands every other delivery to the loop. Its [`Topology::poll_at`] includes the
//! TCP timers; at each instant it takes in its own deliveries as they arrive, then fires its
//! due timers once the star has nothing more for that instant (deliveries before timers, as in
//! the TCP loop). A TCP packet is told apart by its tag: it names a flow past the CoAP-over-UDP
//! ones ([`super::tag::from_client`] of the TCP flow's index), which no UDP packet does.
//!
//! Each TCP flow is what the CoAP-over-TCP loop (`super::tcp`) makes of it, call for call: one
//! connection of netsim's TCP model with an RFC 8323 session at each end, the same random
//! streams, start instant, requests and measurements (docs/experiments.md §5, §7). With no UDP
//! flow beside it, a TCP flow's record is the pure TCP run's, field for field (tested below).
//! Short-lived clients on fresh connections (`workload = "random"`) are not carried here:
//! refused by `super::dispatch`.
//!
//! Flows are numbered group by group as in every run (results, `under_test` of suites): the
//! UDP flows first, then the TCP flows, whose client addresses and random streams are named by
//! that index. The run ends when every flow of both kinds is done, or at `max_sim_time_s`
//! (an unfinished flow is censored there). runs.csv's `events` adds the TCP flows' deliveries
//! and timer expiries to the UDP loop's.

use std::net::SocketAddr;

use coaplab_cc::time::{earliest, Instant};
use coaplab_endpoint::tcp::{Session, SessionConfig, SessionEvent};
use coaplab_endpoint::Router;
use coaplab_netsim::tcp::{CongestionControl, Connection, Segment, TcpConfig, TcpState};
use coaplab_netsim::{
    client_addr, rng, Delivery, Direction, DirectionStats, PacketId, PacketRecord, SendError, Star,
    Topology, SERVER_ADDR,
};

use super::owner_deadlines::OwnerDeadlines;
use super::tcp::{add_stats, bbr_config, pump};
use super::tcp_copies::CopyLog;
use super::tcp_flow::{draw_batch, flow_record, FlowPlan, Progress, SegmentCounts};
use super::tcp_packet::{self, Owner};
use super::{tag, Sim};
use crate::results::{FlowRecord, RunError, RunResult};
use crate::scenario::{FlowConfig, RunSpec, Transport};
use crate::trace::RunTrace;

/// Runs `spec`: its CoAP-over-UDP groups (the first ones) in the UDP loop, on a star that
/// carries its CoAP-over-TCP groups (the rest) as well.
pub(super) fn run(spec: &RunSpec) -> Result<RunResult, RunError> {
    let mut sim = simulate(spec, false)?;
    finish(&mut sim)
}

/// [`run`] (the same result), keeping the trace: the UDP clients' events with their
/// algorithms' snapshots, every packet sent (datagrams and segments, in send order), the TCP
/// connections' state after every ACK, and the star's per-packet records.
pub(super) fn run_traced(spec: &RunSpec) -> Result<(RunResult, RunTrace), RunError> {
    let mut sim = simulate(spec, true)?;
    let result = finish(&mut sim)?;
    let mut trace = sim.trace.take().map(|t| *t).unwrap_or_default();
    if let Some(tcp) = sim.net.trace.take() {
        let udp = std::mem::take(&mut trace.packets);
        trace.packets = udp.interleave(tcp.packets, &sim.net.traced_ids);
        trace.tcp = tcp.tcp;
    }
    // The star's packets, not the wrapper's: no TCP flow acts after the run.
    trace.records = super::drain_records(&mut sim.net.star);
    Ok((result, trace))
}

/// The run of `spec` (`traced`: the UDP loop and the wrapper keep their traces).
fn simulate(spec: &RunSpec, traced: bool) -> Result<Sim<WithTcp>, RunError> {
    let groups = &spec.config.flows;
    let udp_groups = groups
        .iter()
        .position(|f| !matches!(f.transport, Transport::Udp { .. }))
        .unwrap_or(groups.len());
    let mut udp = spec.clone();
    udp.config.flows.truncate(udp_groups);
    let mut net = WithTcp::new(spec, udp_groups)?;
    if traced {
        net.star.record_packets(true);
        net.trace = Some(Box::default());
    }
    let mut sim = Sim::assemble(&udp, net, traced)?;
    if traced {
        sim.trace = Some(Box::default());
    }
    sim.net_busy = WithTcp::busy;
    sim.run()?;
    Ok(sim)
}

/// The run's result: the UDP loop's, then the TCP flows' records.
fn finish(sim: &mut Sim<WithTcp>) -> Result<RunResult, RunError> {
    if let Some(e) = sim.net.error.take() {
        return Err(e);
    }
    let mut result = sim.finish();
    let run_end = sim.end;
    result.events += sim.net.events;
    result
        .flows
        .extend(sim.net.flows.iter().map(|f| f.record(run_end)));
    Ok(result)
}

/// One CoAP-over-TCP flow: its one connection, both sessions, and what was measured (the
/// CoAP-over-TCP loop's flow with a single connection).
struct TcpFlow {
    /// Its flow index in the run (after every UDP flow).
    index: u32,
    cc: String,
    /// The TCP model's configuration of both ends (its `cc`).
    tcp: TcpConfig,
    plan: FlowPlan,
    /// The client's address: [`client_addr`] of `index`.
    addr: SocketAddr,
    /// `None` until the flow's start.
    client: Option<Connection>,
    server: Connection,
    client_session: Option<Session>,
    server_session: Option<Session>,
    /// Exchanges still to start.
    batch_left: u32,
    /// The data segments the client (`[0]`) and the server (`[1]`) sent.
    copies: [CopyLog; 2],
    progress: Progress,
    /// The client connection or session gave up.
    failed: bool,
    /// IP bytes sent up and down.
    bytes_up: u64,
    bytes_down: u64,
}

impl TcpFlow {
    /// Flow `index` of group `fc`, whose resource is `path`, in the run seeded `seed`; `base`:
    /// the run's TCP configuration before the group's `cc` and `[flows.params]`.
    fn new(
        seed: u64,
        fc: &FlowConfig,
        index: u32,
        path: &str,
        base: &TcpConfig,
    ) -> Result<TcpFlow, RunError> {
        let setup = |e: &dyn std::fmt::Display| RunError::Setup(format!("flow {index}: {e}"));
        let tcp = TcpConfig {
            cc: if fc.transport.is_bbr() {
                CongestionControl::Bbr(bbr_config(&fc.settings)?)
            } else {
                CongestionControl::Reno
            },
            ..base.clone()
        }
        .with_settings(&fc.settings)
        .map_err(|e| setup(&e))?;
        let mut plan = FlowPlan::new(seed, fc, index, path);
        let batch_left = draw_batch(&mut plan.batches, plan.quota);
        let mut server = Connection::listen(tcp.clone()).map_err(|e| setup(&e))?;
        server.set_random(rng::stream(seed, &format!("tcp/flow{index}/conn0/server")));
        Ok(TcpFlow {
            index,
            cc: fc.cc().to_string(),
            tcp,
            plan,
            addr: client_addr(index),
            client: None,
            server,
            client_session: None,
            server_session: None,
            batch_left,
            copies: Default::default(),
            progress: Progress::default(),
            failed: false,
            bytes_up: 0,
            bytes_down: 0,
        })
    }

    fn finished(&self) -> bool {
        self.progress.times.done_at.is_some() || self.failed
    }

    /// Its start, then its connection's timers; none once finished.
    fn next_timer(&self) -> Option<Instant> {
        if self.finished() {
            return None;
        }
        match &self.client {
            None => Some(self.plan.start),
            Some(c) => earliest(c.poll_timeout(), self.server.poll_timeout()),
        }
    }

    /// The client connects at `now`.
    fn connect(&mut self, seed: u64, now: Instant) -> Result<(), RunError> {
        let i = self.index;
        let mut c = Connection::connect(self.tcp.clone())
            .map_err(|e| RunError::Setup(format!("flow {i}: {e}")))?;
        c.set_random(rng::stream(seed, &format!("tcp/flow{i}/conn0/client")));
        self.client = Some(c);
        self.progress.times.syn_at = Some(now);
        Ok(())
    }

    /// Its flows.csv row, the CoAP-over-TCP loop's.
    fn record(&self, run_end: Instant) -> FlowRecord {
        let mut n = SegmentCounts::default();
        add_stats(&mut n, &self.server);
        if let Some(client) = &self.client {
            add_stats(&mut n, client);
        }
        let mut r = flow_record(
            self.index,
            &self.cc,
            self.plan.workload,
            &self.progress,
            n,
            (self.bytes_up, self.bytes_down),
            run_end,
        );
        r.unnecessary_retransmissions = self.copies.iter().map(CopyLog::unnecessary).sum();
        r
    }
}

/// The star with CoAP-over-TCP flows inside: a [`Topology`] whose deliveries are the UDP
/// packets only (see the [module documentation](self)).
pub(super) struct WithTcp {
    star: Star,
    flows: Vec<TcpFlow>,
    /// The flow index of the first TCP flow (the number of UDP flows): packets tagged with a
    /// flow from here on are the TCP flows'.
    first: u32,
    /// The run's seed (the client connections' random streams).
    seed: u64,
    /// Each TCP flow's next deadline (its start, then its connection's timers).
    timers: OwnerDeadlines,
    /// TCP flows not finished yet.
    unfinished: usize,
    /// Whether a flow's finish has been counted.
    counted: Vec<bool>,
    /// The servers' routes.
    routes: Vec<(String, coaplab_endpoint::Resource)>,
    /// The segment being delivered, the bytes being sent, the bytes read (all reused).
    rx_seg: Segment,
    tx_bytes: Vec<u8>,
    buf: Vec<u8>,
    now: Instant,
    /// TCP deliveries and timer expiries handled.
    events: u64,
    /// The first error of a TCP flow (a session or a send refused): the run's error.
    error: Option<RunError>,
    /// A traced run: the TCP segments sent (`packets`) and the connections' state after every
    /// ACK (`tcp`); `None` otherwise.
    trace: Option<Box<RunTrace>>,
    /// A traced run: the star's ids of the TCP segments sent, in send order.
    traced_ids: Vec<u64>,
}

impl WithTcp {
    /// The star of `spec` carrying the TCP flows of its groups from `first_group` on.
    fn new(spec: &RunSpec, first_group: usize) -> Result<WithTcp, RunError> {
        let config = &spec.config;
        let star =
            Star::new(&config.network, spec.seed).map_err(|e| RunError::Setup(e.to_string()))?;
        let paths = super::network::paths(&config.flows);
        let base = TcpConfig {
            mtu_bytes: config.network.mtu_bytes,
            ..TcpConfig::default()
        };
        let first: u32 = config.flows[..first_group].iter().map(|f| f.count).sum();
        let mut flows = Vec::new();
        for (group, fc) in config.flows.iter().enumerate().skip(first_group) {
            for _ in 0..fc.count {
                let index = first + flows.len() as u32;
                let path = &paths.path_of[group];
                flows.push(TcpFlow::new(spec.seed, fc, index, path, &base)?);
            }
        }
        let end = Instant::ZERO + config.max_sim_time;
        let mut timers = OwnerDeadlines::new(flows.len(), end);
        for (j, f) in flows.iter().enumerate() {
            timers.arm(j as u32, f.next_timer());
        }
        Ok(WithTcp {
            star,
            unfinished: flows.len(),
            counted: vec![false; flows.len()],
            flows,
            first,
            seed: spec.seed,
            timers,
            routes: paths.routes,
            rx_seg: Segment {
                seq: 0,
                ack: None,
                syn: false,
                fin: false,
                payload: Vec::with_capacity(1500),
                options_bytes: 0,
            },
            tx_bytes: Vec::with_capacity(1500),
            buf: Vec::with_capacity(64 * 1024),
            now: Instant::ZERO,
            events: 0,
            error: None,
            trace: None,
            traced_ids: Vec::new(),
        })
    }

    /// Whether a TCP flow is still running (the UDP loop goes on while one is).
    fn busy(&self) -> bool {
        self.unfinished > 0
    }

    /// TCP flow `j`'s segment in `rx`, delivered as `d`.
    fn deliver(&mut self, d: &Delivery, rx: &[u8]) -> Result<(), RunError> {
        let seg = &mut self.rx_seg;
        let Owner {
            flow: j,
            copy,
            slot,
            ..
        } = tcp_packet::decode(rx, seg);
        let f = &mut self.flows[j as usize];
        let up = d.dst == SERVER_ADDR;
        if copy > 0 {
            f.copies[usize::from(!up)].delivered(seg.seq, copy, slot);
        }
        let to = if up {
            Some(&mut f.server)
        } else {
            f.client.as_mut()
        };
        if let Some(conn) = to {
            // A refused segment is the model's business (counted there).
            let ack = seg.ack;
            let _ = conn.handle_segment(d.at, &*seg);
            if let (Some(trace), Some(ack)) = (self.trace.as_deref_mut(), ack) {
                trace.tcp.ack(d.at, f.index, 0, !up, ack, conn);
            }
        }
        self.service(j)?;
        self.rearm(j);
        Ok(())
    }

    /// Fires the TCP flows' deadlines due at `now`, in flow order.
    fn fire(&mut self, now: Instant) -> Result<(), RunError> {
        while let Some(j) = self.timers.pop_due(now) {
            let f = &mut self.flows[j as usize];
            let mut fired = false;
            match f.client.as_mut() {
                None => {
                    f.connect(self.seed, now)?;
                    fired = true;
                }
                Some(client) => {
                    if client.poll_timeout().is_some_and(|t| t <= now) {
                        client.handle_timeout(now);
                        fired = true;
                    }
                    if f.server.poll_timeout().is_some_and(|t| t <= now) {
                        f.server.handle_timeout(now);
                        fired = true;
                    }
                }
            }
            if fired {
                self.events += 1;
                self.service(j)?;
            }
            self.rearm(j);
        }
        Ok(())
    }

    /// Re-arms flow `j`'s deadline, and counts its finish once.
    fn rearm(&mut self, j: u32) {
        let f = &self.flows[j as usize];
        if f.finished() && !self.counted[j as usize] {
            self.counted[j as usize] = true;
            self.unfinished -= 1;
        }
        self.timers.arm(j, f.next_timer());
    }

    /// Moves bytes between flow `j`'s connection and sessions, then sends what the ends
    /// queued (the CoAP-over-TCP loop's `service` for one connection).
    fn service(&mut self, j: u32) -> Result<(), RunError> {
        // What the connections send on their own leaves before the applications' answers.
        self.transmit(j)?;
        let now = self.now;
        let f = &mut self.flows[j as usize];
        let i = f.index;
        let setup = |e: &dyn std::fmt::Display| RunError::Setup(format!("flow {i}: {e}"));
        if let Some(client) = f.client.as_mut() {
            if client.state() == TcpState::Failed {
                f.progress.give_up(&mut f.failed, now);
            }
            if client.state() == TcpState::Established && f.client_session.is_none() {
                let session = f
                    .progress
                    .open_session(&f.plan, now, 0, &mut f.batch_left)
                    .map_err(|e| setup(&e))?;
                f.client_session = Some(session);
            }
            if let Some(session) = f.client_session.as_mut() {
                // One request outstanding at a time (docs/experiments.md §5.2).
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
                                if !done {
                                    f.progress
                                        .request(&f.plan, session, now, &mut f.batch_left)
                                        .map_err(|e| setup(&e))?;
                                    wrote = true;
                                }
                            }
                            SessionEvent::RequestFailed { .. } | SessionEvent::Aborted { .. } => {
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
        if f.server.state() == TcpState::Established && f.server_session.is_none() {
            let mut router = Router::new();
            for (path, resource) in &self.routes {
                router.route(path, *resource);
            }
            let session = Session::new(SessionConfig::server(), router).map_err(|e| setup(&e))?;
            f.server_session = Some(session);
        }
        if let Some(session) = f.server_session.as_mut() {
            if f.server.state() == TcpState::CloseWait {
                session.handle_stream_end(now);
                f.server.close();
            } else if !matches!(f.server.state(), TcpState::LastAck | TcpState::Closed) {
                pump(now, &mut f.server, session, &mut self.buf).map_err(|e| setup(&e))?;
            }
            while session.poll_event().is_some() {}
        }
        self.transmit(j)
    }

    /// Sends what flow `j`'s ends queued, the client's first.
    fn transmit(&mut self, j: u32) -> Result<(), RunError> {
        let now = self.now;
        let f = &mut self.flows[j as usize];
        let i = f.index;
        let tag = tag::from_client(i);
        for (conn, src, dst, up) in [
            (f.client.as_mut(), f.addr, SERVER_ADDR, true),
            (Some(&mut f.server), SERVER_ADDR, f.addr, false),
        ] {
            let Some(conn) = conn else { continue };
            while let Some(seg) = conn.poll_transmit(now) {
                let len = seg.ip_len();
                // Data segments (FIN included; not SYNs) are numbered per sequence number.
                let (copy, slot) = if seg.seq_len() > 0 && !seg.syn {
                    f.copies[usize::from(!up)].sent(seg.seq)
                } else {
                    (0, 0)
                };
                let owner = Owner {
                    flow: j,
                    conn: 0,
                    copy,
                    slot,
                };
                tcp_packet::encode(&mut self.tx_bytes, owner, &seg);
                let id = self
                    .star
                    .send_ip(now, src, dst, &self.tx_bytes, len, tag)
                    .map_err(|e| RunError::Setup(format!("flow {i}: {e}")))?;
                if let Some(trace) = self.trace.as_deref_mut() {
                    trace.packets.tcp(i, &seg, &f.tcp);
                    self.traced_ids.push(id.0);
                }
                conn.recycle(seg);
                if up {
                    f.bytes_up += u64::from(len);
                } else {
                    f.bytes_down += u64::from(len);
                }
            }
        }
        Ok(())
    }
}

impl Topology for WithTcp {
    /// A UDP packet of the loop, straight into the star.
    fn send(
        &mut self,
        now: Instant,
        src: SocketAddr,
        dst: SocketAddr,
        payload: &mut Vec<u8>,
        tag: u64,
    ) -> Result<PacketId, SendError> {
        self.star.send(now, src, dst, payload, tag)
    }

    /// The star's next event or a TCP flow's deadline.
    fn poll_at(&self) -> Option<Instant> {
        earliest(self.star.poll_at(), self.timers.next_at())
    }

    /// The next UDP packet arriving by `now`; the TCP segments arriving before it are taken
    /// in on the way, and once the star has nothing more by `now` the TCP deadlines due fire.
    fn poll_delivery(&mut self, now: Instant, buf: &mut Vec<u8>) -> Option<Delivery> {
        self.now = now;
        while let Some(d) = self.star.poll_delivery(now, buf) {
            if tag::flow(d.tag) < self.first {
                return Some(d);
            }
            self.events += 1;
            if let Err(e) = self.deliver(&d, buf) {
                self.error.get_or_insert(e);
            }
        }
        if let Err(e) = self.fire(now) {
            self.error.get_or_insert(e);
        }
        None
    }

    fn servers(&self) -> &[SocketAddr] {
        self.star.servers()
    }

    fn direction_stats(&self, direction: Direction) -> DirectionStats {
        self.star.direction_stats(direction)
    }

    fn record_packets(&mut self, on: bool) {
        self.star.record_packets(on);
    }

    fn take_records(&mut self) -> Vec<PacketRecord> {
        self.star.take_records()
    }
}

#[cfg(test)]
#[path = "cross_tcp_tests.rs"]
mod tests;
