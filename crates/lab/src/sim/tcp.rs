//! CoAP over TCP flows (spec §5): per flow, one connection of netsim's TCP model
//! ([`coaplab_netsim::tcp::Connection`]) carrying one RFC 8323 session
//! ([`coaplab_endpoint::tcp::Session`]) at each end, over the same star as the UDP flows.
//!
//! A flow's client connects after its start delay (first SYN); once its connection is
//! established it writes its CSM and its first request (two writes, so two segments with
//! `TCP_NODELAY`). The server accepts every flow on a listener of its own and, once
//! established, writes its CSM, then the answers. Long transfer (spec §5.1): one GET (1-B
//! token) answered by one message of `object_bytes`. Continuous (spec §5.2): `exchanges`
//! POSTs of `payload_bytes` (2-B tokens) one after the other on the one connection, each
//! answered by `response_payload_bytes`; the connection is not closed at the end (the run
//! stops when every flow is done). Segments travel
//! as `Star::send_ip` packets of `40 + payload` bytes, the segment itself kept in a table keyed
//! by the packet's tag.
//!
//! Measured (spec §7): FCT from the first request's segment (the request is written at that
//! instant) to the last byte of the last response; CoAP RTT per exchange from writing the
//! request to the response's last byte; setup time from the first SYN to the SYN-ACK received; the
//! connection counters of both ends.
//!
//! The loop scans every flow's two timers for the next deadline: O(flows) per event, fine for
//! the few long-lived flows of spec §5.

use std::collections::HashMap;
use std::net::SocketAddr;

use coaplab_cc::rng::Random;
use coaplab_cc::time::{Duration, Instant};
use coaplab_endpoint::tcp::{Session, SessionConfig, SessionEvent};
use coaplab_endpoint::{Request, Router};
use coaplab_netsim::tcp::{Connection, Segment, TcpConfig, TcpState};
use coaplab_netsim::{client_addr, rng, Star, SERVER_ADDR};

use crate::metrics::FlowMetrics;
use crate::results::{FlowRecord, RunError, RunResult, TcpFlowRecord};
use crate::scenario::{RunSpec, Workload};

/// One flow: both ends of its connection and what was measured.
struct Flow {
    addr: SocketAddr,
    cc: String,
    workload: &'static str,
    /// The request the client repeats (`GET` for the long transfer, a `POST` of
    /// `payload_bytes` for short exchanges).
    request: Request,
    /// Token length of the client's session (spec §5.1: 1 B; §5.2: 2 B).
    token_len: usize,
    /// Exchanges to complete (1 for the long transfer).
    quota: u32,
    start: Instant,
    /// `None` until the start delay has passed.
    client: Option<Connection>,
    server: Connection,
    client_session: Option<Session>,
    server_session: Option<Session>,
    /// First SYN sent.
    syn_at: Option<Instant>,
    /// SYN-ACK received (client established).
    established_at: Option<Instant>,
    /// The first request was written (its segment leaves at this instant).
    get_at: Option<Instant>,
    /// The last response's last byte arrived.
    done_at: Option<Instant>,
    /// Requests written.
    requests: u32,
    /// Request → response time of every completed exchange.
    rtts: Vec<Duration>,
    /// The client connection gave up (SYN retries exhausted) or the session ended early.
    failed: bool,
    bytes_up: u64,
    bytes_down: u64,
}

impl Flow {
    fn finished(&self) -> bool {
        self.done_at.is_some() || self.failed
    }

    fn next_timer(&self) -> Option<Instant> {
        if self.finished() {
            return None;
        }
        let client = match &self.client {
            Some(c) => c.poll_timeout(),
            None => Some(self.start),
        };
        [client, self.server.poll_timeout()]
            .into_iter()
            .flatten()
            .min()
    }
}

/// Runs `spec`, every flow of which is a TCP flow (`cc = "tcp-newreno"`).
pub(super) fn run(spec: &RunSpec) -> Result<RunResult, RunError> {
    let config = &spec.config;
    let star = Star::new(&config.network, spec.seed).map_err(|e| RunError::Setup(e.to_string()))?;
    let paths = super::network::paths(&config.flows);
    let tcp = TcpConfig {
        mtu_bytes: config.network.mtu_bytes,
        ..TcpConfig::default()
    };
    let mut flows = Vec::with_capacity(config.total_flows() as usize);
    for (group, fc) in config.flows.iter().enumerate() {
        for _ in 0..fc.count {
            let i = flows.len() as u32;
            let mut start_rng = rng::stream(spec.seed, &format!("start/flow{i}"));
            let jitter = fc.start_jitter.as_nanos() as f64;
            let start =
                Instant::ZERO + Duration::from_nanos((start_rng.uniform01() * jitter) as i64);
            flows.push(Flow {
                addr: client_addr(i),
                cc: fc.cc.clone(),
                workload: fc.workload.name(),
                request: match fc.workload {
                    Workload::LongTransfer { .. } => Request::get(&paths.path_of[group]),
                    _ => Request::post(
                        &paths.path_of[group],
                        vec![0; fc.request_payload_bytes as usize],
                    ),
                },
                token_len: match fc.workload {
                    Workload::LongTransfer { .. } => 1,
                    _ => 2,
                },
                quota: match fc.workload {
                    Workload::LongTransfer { .. } => 1,
                    Workload::Continuous { exchanges } | Workload::Random { exchanges, .. } => {
                        exchanges
                    }
                },
                start,
                client: None,
                server: Connection::listen(tcp.clone())
                    .map_err(|e| RunError::Setup(format!("flow {i}: {e}")))?,
                client_session: None,
                server_session: None,
                syn_at: None,
                established_at: None,
                get_at: None,
                done_at: None,
                requests: 0,
                rtts: Vec::new(),
                failed: false,
                bytes_up: 0,
                bytes_down: 0,
            });
        }
    }
    let mut sim = TcpSim {
        star,
        flows,
        segments: HashMap::new(),
        next_tag: 0,
        tcp,
        routes: paths.routes,
        seed: spec.seed,
        events: 0,
        now: Instant::ZERO,
        buf: Vec::with_capacity(64 * 1024),
    };
    let end = Instant::ZERO + config.max_sim_time;
    sim.run(end)?;
    Ok(sim.finish())
}

struct TcpSim {
    star: Star,
    flows: Vec<Flow>,
    /// Segments in flight, by packet tag, with their flow.
    segments: HashMap<u64, (u32, Segment)>,
    next_tag: u64,
    tcp: TcpConfig,
    routes: Vec<(String, coaplab_endpoint::Resource)>,
    seed: u64,
    events: u64,
    now: Instant,
    /// Bytes read from a connection (reused).
    buf: Vec<u8>,
}

impl TcpSim {
    fn run(&mut self, end: Instant) -> Result<(), RunError> {
        let mut rx = Vec::new();
        while self.flows.iter().any(|f| !f.finished()) {
            let next = self
                .flows
                .iter()
                .filter_map(Flow::next_timer)
                .chain(self.star.poll_at())
                .min();
            let Some(now) = next else { break };
            if now > end {
                break;
            }
            self.now = now;
            // Deliveries before timers (an ACK wins over an expiry at the same instant).
            while let Some(d) = self.star.poll_delivery(now, &mut rx) {
                self.events += 1;
                let Some((i, seg)) = self.segments.remove(&d.tag) else {
                    continue;
                };
                let f = &mut self.flows[i as usize];
                let to = if d.dst == SERVER_ADDR {
                    Some(&mut f.server)
                } else {
                    f.client.as_mut()
                };
                if let Some(conn) = to {
                    // A refused segment is the model's business (counted there), not an error
                    // of the run.
                    let _ = conn.handle_segment(d.at, seg);
                }
                self.service(i)?;
            }
            for i in 0..self.flows.len() as u32 {
                let f = &mut self.flows[i as usize];
                if f.finished() {
                    continue;
                }
                let mut fired = false;
                match f.client.as_mut() {
                    None if f.start <= now => {
                        f.client = Some(
                            Connection::connect(self.tcp.clone())
                                .map_err(|e| RunError::Setup(format!("flow {i}: {e}")))?,
                        );
                        f.syn_at = Some(now);
                        fired = true;
                    }
                    Some(c) if c.poll_timeout().is_some_and(|t| t <= now) => {
                        c.handle_timeout(now);
                        fired = true;
                    }
                    _ => {}
                }
                if f.server.poll_timeout().is_some_and(|t| t <= now) {
                    f.server.handle_timeout(now);
                    fired = true;
                }
                if fired {
                    self.events += 1;
                    self.service(i)?;
                }
            }
        }
        Ok(())
    }

    /// Moves bytes between flow `i`'s connections and sessions, then sends what the
    /// connections queued.
    fn service(&mut self, i: u32) -> Result<(), RunError> {
        // What the connections send on their own (the handshake's ACK, ACKs of data) leaves
        // before what the applications write in answer, as from a kernel.
        self.transmit(i)?;
        let now = self.now;
        let f = &mut self.flows[i as usize];
        let setup = |e: &dyn std::fmt::Display| RunError::Setup(format!("flow {i}: {e}"));
        if let Some(client) = f.client.as_mut() {
            if client.state() == TcpState::Failed {
                f.failed = true;
            }
            if client.state() == TcpState::Established && f.client_session.is_none() {
                f.established_at = Some(now);
                let config = SessionConfig {
                    token_len: f.token_len,
                    first_token: rng::stream(self.seed, &format!("ids/flow{i}"))
                        .below(1 << (8 * f.token_len)),
                    ..SessionConfig::client()
                };
                let mut session = Session::new(config, Router::new()).map_err(|e| setup(&e))?;
                session.request(now, &f.request).map_err(|e| setup(&e))?;
                f.requests += 1;
                f.get_at = Some(now);
                f.client_session = Some(session);
            }
            if let Some(session) = f.client_session.as_mut() {
                // One request outstanding at a time (spec §5.2): the next is written as soon
                // as the previous response is complete.
                loop {
                    pump(now, client, session, &mut self.buf).map_err(|e| setup(&e))?;
                    let mut wrote = false;
                    while let Some(event) = session.poll_event() {
                        match event {
                            SessionEvent::RequestCompleted { at, started, .. } => {
                                f.rtts.push(at - started);
                                if f.rtts.len() as u32 >= f.quota {
                                    f.done_at = Some(at);
                                } else {
                                    session.request(now, &f.request).map_err(|e| setup(&e))?;
                                    f.requests += 1;
                                    wrote = true;
                                }
                            }
                            SessionEvent::RequestFailed { .. } | SessionEvent::Aborted { .. } => {
                                f.failed = true;
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
            f.server_session =
                Some(Session::new(SessionConfig::server(), router).map_err(|e| setup(&e))?);
        }
        if let Some(session) = f.server_session.as_mut() {
            pump(now, &mut f.server, session, &mut self.buf).map_err(|e| setup(&e))?;
            while session.poll_event().is_some() {}
        }
        self.transmit(i)
    }

    /// Sends what flow `i`'s connections queued.
    fn transmit(&mut self, i: u32) -> Result<(), RunError> {
        let now = self.now;
        let f = &mut self.flows[i as usize];
        let setup = |e: &dyn std::fmt::Display| RunError::Setup(format!("flow {i}: {e}"));
        for (conn, src, dst, up) in [
            (f.client.as_mut(), f.addr, SERVER_ADDR, true),
            (Some(&mut f.server), SERVER_ADDR, f.addr, false),
        ] {
            let Some(conn) = conn else { continue };
            while let Some(seg) = conn.poll_transmit(now) {
                let len = seg.ip_len();
                let tag = self.next_tag;
                self.next_tag += 1;
                self.star
                    .send_ip(now, src, dst, &[], len, tag)
                    .map_err(|e| setup(&e))?;
                self.segments.insert(tag, (i, seg));
                if up {
                    f.bytes_up += u64::from(len);
                } else {
                    f.bytes_down += u64::from(len);
                }
            }
        }
        Ok(())
    }

    fn finish(self) -> RunResult {
        let flows = self
            .flows
            .iter()
            .enumerate()
            .map(|(i, f)| record(i as u32, f))
            .collect();
        RunResult {
            flows,
            events: self.events,
            sim_time_s: self.now.as_secs_f64(),
            network: Some(super::network_record(&self.star, self.now)),
        }
    }
}

/// Feeds the connection's in-order bytes to the session and the session's writes to the
/// connection.
fn pump(
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
    while let Some(w) = session.poll_write() {
        conn.write(&w.bytes)?;
    }
    Ok(())
}

/// The record of flow `i`.
fn record(i: u32, f: &Flow) -> FlowRecord {
    let done = f.done_at.is_some();
    let mut metrics = FlowMetrics::default();
    metrics.first_sent = f.get_at;
    metrics.finished = f.done_at;
    metrics.exchanges = f.rtts.len() as u32;
    metrics.transmissions = u64::from(f.requests);
    metrics.bytes_up = f.bytes_up;
    metrics.bytes_down = f.bytes_down;
    metrics.rtts.clone_from(&f.rtts);
    if !f.rtts.is_empty() {
        // Over a stream every request is sent once: all exchanges needed one transmission.
        metrics.transmission_counts.push(f.rtts.len() as u32);
    }
    let mut r = metrics.record(i, &f.cc, f.workload, done);
    let stats = |c: &Connection| {
        let s = c.stats();
        (s.segments_sent, s.segments_retransmitted, s.rto_count)
    };
    let (mut sent, mut retx, mut rtos) = stats(&f.server);
    if let Some(c) = &f.client {
        let (a, b, c) = stats(c);
        (sent, retx, rtos) = (sent + a, retx + b, rtos + c);
    }
    r.tcp = Some(TcpFlowRecord {
        setup_s: match (f.syn_at, f.established_at) {
            (Some(a), Some(b)) => Some((b - a).as_secs_f64()),
            _ => None,
        },
        segments_sent: sent,
        segments_retransmitted: retx,
        rto_count: rtos,
    });
    r
}
