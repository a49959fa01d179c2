//! CoAP over TCP flows in emulated runs: the simulator's TCP runner (`sim::tcp`) with the
//! kernel's TCP on real sockets in the emulator's namespaces instead of netsim's TCP model,
//! and the wall clock instead of virtual time.
//!
//! The RFC 8323 sessions ([`coaplab_endpoint::tcp::Session`]), the workloads (long transfer,
//! continuous, random with one new connection per short-lived client), the random streams
//! (start delays `start/flow{i}`, tokens `ids/flow{i}`, batch sizes `workload/flow{i}`) and the
//! metrics are the simulator's; this loop only moves bytes between sockets and sessions and
//! stamps them with the time they were read. One listener on 198.18.0.2:5683 in the server
//! namespace; each connection from its own ephemeral port on 198.18.0.1 in the client
//! namespace. Every socket is non-blocking with `TCP_NODELAY` (each session write is one
//! `write(2)`, so the client's CSM and first request are two segments) and the flow's
//! congestion control set with `TCP_CONGESTION` on the client socket and on the listener
//! (accepted sockets inherit it; checked, and set again if a flow asks for another one):
//! `tcp-newreno` → kernel `reno`, `tcp-bbr` → kernel `bbr`.
//!
//! Measured, per flow (docs/experiments.md §7), with the simulator's definitions where the kernel
//! allows:
//! * `fct_s`: the first request written → the last response's last byte read.
//! * `setup_s`: `connect(2)` (the first SYN) → the socket became writable (SYN-ACK received),
//!   first connection.
//! * From `TCP_INFO` of both ends of every connection, read before the socket is closed
//!   (a short-lived client's connection once both ends have read the other's FIN, the others
//!   at the end of the run): `segments_sent` = Σ `tcpi_segs_out`; `transmissions` =
//!   Σ `tcpi_data_segs_out` (segments with payload) + 1 per end that sent its FIN (a segment
//!   of its own here; the simulator counts FINs as data segments); `syn_retransmissions` = `tcpi_total_retrans` of the client when the
//!   handshake ends plus that of the server socket when accepted (the request's SYN-ACK
//!   retransmissions); `retransmissions` = `segments_retransmitted` = Σ `tcpi_total_retrans`
//!   minus those; `rto_count` = Σ `tcpi_total_rto` (kernel ≥ 6.7, else 0; the server's
//!   SYN-ACK timer is the request socket's and not counted); `bytes_up`/`bytes_down` =
//!   `tcpi_bytes_sent` + 40 B per segment of the client / server.
//! * Not measured: `unnecessary_retransmissions` (0): no ground truth on real packets.
//!
//! Why this loop is not the simulator's (`sim::tcp::TcpSim` over a `FlowApp`), though it runs
//! the same sessions: the simulated loop is driven by netsim's deliveries and per-connection
//! deadlines, this one by readiness (`poll(2)` over every socket, every flow serviced each
//! pass); the kernel's stream differs in what a session sees (an accepted socket is already
//! established and the server's CSM is written at once; end of stream is `read() == 0` after
//! draining rather than a `CloseWait` state; writes are partial and queued; FIN is a
//! `shutdown` after the queue drains; failure is a connect or read error, not a state); it
//! reads finished short-lived clients' sessions too and counts failed requests only on the
//! current connection; its counters come from `TCP_INFO`. Folding the two would change the
//! results of one side; a byte-stream trait over `Connection` and the kernel socket, after
//! those differences are settled here, is the way to one loop.

use std::collections::{HashMap, VecDeque};
use std::io::{ErrorKind, Read, Write};
use std::net::{IpAddr, Shutdown, SocketAddr, TcpListener, TcpStream};
use std::os::fd::AsFd;
use std::time::Duration as StdDuration;

use coaplab_cc::time::Instant;
use coaplab_emu::emulator::tcp_sockets::{self, Ready, TcpInfo};
use coaplab_emu::emulator::{
    Emulator, EmulatorConfig, EmulatorStats, CLIENT_ADDR, SERVER_ADDR as REAL_SERVER,
};
use coaplab_endpoint::tcp::{Session, SessionConfig, SessionEvent};
use coaplab_endpoint::Router;
use coaplab_netsim::SERVER_ADDR;

use super::super::tcp_flow::{draw_batch, flow_record, FlowPlan, Progress, SegmentCounts};
use super::MAX_WAIT;
use crate::results::{FlowRecord, NetworkRecord, RunError, RunResult};
use crate::scenario::{RunSpec, TcpCc, Transport};

/// IPv4 + TCP header bytes of a segment without options (timestamps and SACK are off).
const HEADER_BYTES: u64 = 40;

/// The kernel congestion control standing for a flow's `cc`.
pub(crate) fn kernel_cc(transport: &Transport) -> Result<&'static str, RunError> {
    match transport {
        Transport::Tcp { cc: TcpCc::NewReno } => Ok("reno"),
        Transport::Tcp { cc: TcpCc::Bbr } => Ok("bbr"),
        other => Err(RunError::NotAvailable(format!(
            "{} on the kernel's TCP in emulated runs",
            other.cc()
        ))),
    }
}

/// Refuses a flow with `[flows.params]` keys: every such key of a TCP (or HTTP) flow is a
/// parameter of the simulator's TCP model (BBR constants, `quickack_segments`, …) and none
/// reaches the kernel's TCP. Only the `[protocol]` keys copied into every flow's settings pass.
pub(super) fn refuse_model_params(fc: &crate::scenario::FlowConfig) -> Result<(), RunError> {
    if let Some(key) = fc
        .settings
        .iter()
        .map(|(k, _)| k)
        .find(|k| *k != coaplab_cc::presets::PRESET_KEY && *k != "max_retransmit")
    {
        return Err(RunError::NotAvailable(format!(
            "[flows.params] {key} of {} in emulated runs (a parameter of the simulator's \
             TCP model; the kernel's TCP has its own)",
            fc.cc()
        )));
    }
    Ok(())
}

/// One end of a connection: its socket and what is still to be written.
#[derive(Debug)]
struct End {
    stream: TcpStream,
    /// Session writes not yet (fully) written, one `write(2)` each; `off` into the first.
    out: VecDeque<Vec<u8>>,
    off: usize,
    /// The peer's FIN (or an error) was read.
    eof: bool,
    /// Our FIN: the write half is shut down.
    shut: bool,
    /// `tcpi_total_retrans` at the end of the handshake (SYN / SYN-ACK retransmissions).
    syn_retrans: u32,
    /// What the last wait found it ready for.
    ready: Ready,
}

impl End {
    fn new(stream: TcpStream) -> End {
        End {
            stream,
            out: VecDeque::new(),
            off: 0,
            eof: false,
            shut: false,
            syn_retrans: 0,
            ready: Ready::default(),
        }
    }

    /// What to wait for: readable until the peer's FIN, writable while writes wait.
    fn interest(&self) -> Ready {
        Ready {
            read: !self.eof,
            write: !self.out.is_empty(),
            error: false,
        }
    }

    /// Feeds everything readable to `session` at `now`; the end of the stream (or an error)
    /// as [`Session::handle_stream_end`]. Returns the reads that returned data or the end.
    fn read_into(&mut self, now: Instant, session: &mut Session, buf: &mut [u8]) -> u64 {
        let mut reads = 0;
        while !self.eof {
            match self.stream.read(buf) {
                Ok(0) => {
                    reads += 1;
                    self.eof = true;
                    session.handle_stream_end(now);
                }
                Ok(n) => {
                    reads += 1;
                    session.handle_stream_bytes(now, &buf[..n]);
                }
                Err(e) if e.kind() == ErrorKind::WouldBlock => break,
                Err(e) if e.kind() == ErrorKind::Interrupted => {}
                Err(_) => {
                    self.eof = true;
                    self.out.clear();
                    session.handle_stream_end(now);
                }
            }
        }
        reads
    }

    /// Queues the session's writes and writes what the socket takes.
    fn write_from(&mut self, session: &mut Session) {
        while let Some(w) = session.poll_write() {
            if !self.shut {
                self.out.push_back(w.bytes);
            }
        }
        self.flush();
    }

    fn flush(&mut self) {
        while let Some(first) = self.out.front() {
            match self.stream.write(&first[self.off..]) {
                Ok(n) => {
                    self.off += n;
                    if self.off == first.len() {
                        self.out.pop_front();
                        self.off = 0;
                    }
                }
                Err(e) if e.kind() == ErrorKind::WouldBlock => break,
                Err(e) if e.kind() == ErrorKind::Interrupted => {}
                Err(_) => {
                    // A reset: nothing more can be written; the read side sees the end.
                    self.out.clear();
                    self.off = 0;
                }
            }
        }
    }

    /// Sends our FIN once everything queued is written.
    fn shut_down_when_flushed(&mut self) {
        if !self.shut && self.out.is_empty() {
            self.shut = true;
            let _ = self.stream.shutdown(Shutdown::Write);
        }
    }

    fn info(&self) -> TcpInfo {
        tcp_sockets::tcp_info(&self.stream).unwrap_or_default()
    }
}

/// One connection of a flow.
struct Conn {
    k: u32,
    client: End,
    /// The handshake has not ended yet (client side).
    connecting: bool,
    client_session: Option<Session>,
    /// The short-lived client is done and closed its side.
    closing: bool,
    server: Option<(End, Session)>,
    /// Exchanges this connection still has to start.
    batch_left: u32,
}

/// Counters summed over the ends of a flow's connections.
#[derive(Debug, Clone, Copy, Default)]
struct Counts {
    segments: SegmentCounts,
    bytes_up: u64,
    bytes_down: u64,
}

impl Counts {
    fn add(&mut self, end: &End, up: bool) {
        let i = end.info();
        self.segments.segments_sent += u64::from(i.segs_out);
        // `tcpi_data_segs_out` counts segments with payload; the simulator counts the FIN as
        // a data segment too. Our FIN follows the last write, all of it already sent
        // (`TCP_NODELAY`), so it leaves as a segment of its own: one per end that shut down
        // (a retransmitted FIN is in `tcpi_total_retrans`).
        self.segments.data_segments_sent += u64::from(i.data_segs_out) + u64::from(end.shut);
        let syn = end.syn_retrans.min(i.total_retrans);
        self.segments.syn_retransmissions += u64::from(syn);
        self.segments.retransmitted += u64::from(i.total_retrans - syn);
        self.segments.rtos += u64::from(i.total_rto.unwrap_or(0));
        let bytes = i.bytes_sent + HEADER_BYTES * u64::from(i.segs_out);
        if up {
            self.bytes_up += bytes;
        } else {
            self.bytes_down += bytes;
        }
    }

    fn add_conn(&mut self, c: &Conn) {
        self.add(&c.client, true);
        if let Some((s, _)) = &c.server {
            self.add(s, false);
        }
    }
}

struct Flow {
    cc: String,
    kernel_cc: &'static str,
    plan: FlowPlan,
    conns: Vec<Conn>,
    opened: u32,
    retired: Counts,
    progress: Progress,
    failed: bool,
    counted: bool,
}

impl Flow {
    fn finished(&self) -> bool {
        self.progress.times.done_at.is_some() || self.failed
    }

    fn draw_batch(&mut self) -> u32 {
        draw_batch(&mut self.plan.batches, self.plan.quota)
    }
}

/// Which socket a poll entry is.
#[derive(Clone, Copy)]
enum Slot {
    Listener,
    Client(usize, usize),
    Server(usize, usize),
}

/// Runs `spec` (every flow a TCP flow) in real time through the emulator on kernel TCP.
pub(super) fn run(spec: &RunSpec) -> Result<RunResult, RunError> {
    let config = &spec.config;
    let mut cc_of_flow = Vec::new();
    for fc in &config.flows {
        let cc = kernel_cc(&fc.transport)?;
        refuse_model_params(fc)?;
        tcp_sockets::ensure_congestion_control(cc)
            .map_err(|e| RunError::NotAvailable(format!("{}: {e}", fc.cc())))?;
        cc_of_flow.push(cc);
    }
    let first_cc = cc_of_flow.first().copied().unwrap_or("reno");
    let mut emu_config = EmulatorConfig::new(config.network.clone());
    emu_config.seed = spec.seed;
    emu_config.tcp_congestion_control = first_cc.to_owned();
    let emu = Emulator::start(emu_config).map_err(|e| RunError::Setup(format!("emulator: {e}")))?;
    let server_addr = SocketAddr::new(IpAddr::V4(REAL_SERVER), SERVER_ADDR.port());
    let listener = tcp_sockets::listen_in(emu.server_netns(), server_addr, first_cc)
        .map_err(|e| RunError::Setup(format!("listener: {e}")))?;
    let paths = super::super::network::paths(&config.flows);
    let mut flows = Vec::new();
    for (group, fc) in config.flows.iter().enumerate() {
        for _ in 0..fc.count {
            let i = flows.len() as u32;
            flows.push(Flow {
                cc: fc.cc().to_string(),
                kernel_cc: cc_of_flow[group],
                plan: FlowPlan::new(spec.seed, fc, i, &paths.path_of[group]),
                conns: Vec::new(),
                opened: 0,
                retired: Counts::default(),
                progress: Progress::default(),
                failed: false,
                counted: false,
            });
        }
    }
    let mut run = Run {
        origin: emu.origin(),
        emu,
        listener,
        routes: paths.routes,
        by_client: HashMap::new(),
        unfinished: flows.len(),
        flows,
        buf: vec![0; 64 * 1024],
        now: Instant::ZERO,
        events: 0,
    };
    run.run(Instant::ZERO + config.max_sim_time)?;
    let (result, stats) = run.finish()?;
    super::report_timing(spec, &stats);
    Ok(result)
}

struct Run {
    emu: Emulator,
    origin: std::time::Instant,
    listener: TcpListener,
    routes: Vec<(String, coaplab_endpoint::Resource)>,
    /// A connection's client address → (flow, connection number).
    by_client: HashMap<SocketAddr, (usize, u32)>,
    flows: Vec<Flow>,
    unfinished: usize,
    buf: Vec<u8>,
    now: Instant,
    /// Handshakes ended, connections accepted and reads that returned data or the end.
    events: u64,
}

fn setup(i: usize) -> impl Fn(&dyn std::fmt::Display) -> RunError {
    move |e| RunError::Setup(format!("flow {i}: {e}"))
}

impl Run {
    fn clock(&self) -> Instant {
        let ns = self.origin.elapsed().as_nanos();
        Instant::from_nanos(i64::try_from(ns).unwrap_or(i64::MAX))
    }

    fn run(&mut self, end: Instant) -> Result<(), RunError> {
        loop {
            super::interrupted()?;
            if self.emu.has_failed() {
                return Err(RunError::Setup("the emulator stopped forwarding".into()));
            }
            self.now = self.clock();
            if self.unfinished == 0 || self.now >= end {
                return Ok(());
            }
            for i in 0..self.flows.len() {
                if self.flows[i].opened == 0 && self.flows[i].plan.start <= self.now {
                    let at = self.clock();
                    self.open(i)?;
                    self.flows[i].progress.times.syn_at = Some(at);
                }
            }
            let next_start = self
                .flows
                .iter()
                .filter(|f| f.opened == 0)
                .map(|f| f.plan.start)
                .min();
            let until = next_start.map_or(end, |s| s.min(end));
            let wait = StdDuration::from_nanos((until - self.now).as_nanos().max(0) as u64);
            self.wait(wait.min(MAX_WAIT))?;
            self.now = self.clock();
            self.accept()?;
            for i in 0..self.flows.len() {
                if !self.flows[i].conns.is_empty() {
                    self.service(i)?;
                }
                let f = &mut self.flows[i];
                if f.finished() && !f.counted {
                    f.counted = true;
                    self.unfinished -= 1;
                }
            }
        }
    }

    /// Opens flow `i`'s next connection (the SYN leaves now).
    fn open(&mut self, i: usize) -> Result<(), RunError> {
        let f = &mut self.flows[i];
        let k = f.opened;
        let batch = if k == 0 { f.draw_batch() } else { 0 };
        let to = SocketAddr::new(IpAddr::V4(REAL_SERVER), SERVER_ADDR.port());
        let stream = tcp_sockets::connect_in(
            self.emu.client_netns(),
            SocketAddr::new(IpAddr::V4(CLIENT_ADDR), 0),
            to,
            f.kernel_cc,
        )
        .map_err(|e| setup(i)(&e))?;
        let local = stream.local_addr().map_err(|e| setup(i)(&e))?;
        self.by_client.insert(local, (i, k));
        f.opened += 1;
        f.conns.push(Conn {
            k,
            client: End::new(stream),
            connecting: true,
            client_session: None,
            closing: false,
            server: None,
            batch_left: batch,
        });
        Ok(())
    }

    /// Waits until a socket is ready or `timeout` passes; records what each is ready for.
    fn wait(&mut self, timeout: StdDuration) -> Result<(), RunError> {
        let idle = Ready::default();
        let mut slots = vec![Slot::Listener];
        let read = Ready { read: true, ..idle };
        let mut fds = vec![(self.listener.as_fd(), read)];
        for (i, f) in self.flows.iter().enumerate() {
            for (j, c) in f.conns.iter().enumerate() {
                let want = if c.connecting {
                    Ready {
                        write: true,
                        ..idle
                    }
                } else {
                    c.client.interest()
                };
                if want != idle {
                    slots.push(Slot::Client(i, j));
                    fds.push((c.client.stream.as_fd(), want));
                }
                if let Some((s, _)) = &c.server {
                    if s.interest() != idle {
                        slots.push(Slot::Server(i, j));
                        fds.push((s.stream.as_fd(), s.interest()));
                    }
                }
            }
        }
        let ready = tcp_sockets::wait_ready(&fds, timeout)
            .map_err(|e| RunError::Setup(format!("poll: {e}")))?;
        drop(fds);
        for (slot, r) in slots.into_iter().zip(ready) {
            match slot {
                Slot::Listener => {}
                Slot::Client(i, j) => self.flows[i].conns[j].client.ready = r,
                Slot::Server(i, j) => {
                    if let Some((s, _)) = self.flows[i].conns[j].server.as_mut() {
                        s.ready = r;
                    }
                }
            }
        }
        Ok(())
    }

    /// Accepts every waiting connection and starts its server session (its CSM goes out).
    fn accept(&mut self) -> Result<(), RunError> {
        loop {
            let (stream, peer) = match self.listener.accept() {
                Ok(x) => x,
                Err(e) if e.kind() == ErrorKind::WouldBlock => return Ok(()),
                Err(e) if e.kind() == ErrorKind::Interrupted => continue,
                // e.g. ECONNABORTED: the connection is gone already.
                Err(_) => continue,
            };
            let Some(&(i, k)) = self.by_client.get(&peer) else {
                continue;
            };
            let set = |e: std::io::Error| setup(i)(&e);
            stream.set_nonblocking(true).map_err(set)?;
            stream.set_nodelay(true).map_err(set)?;
            let f = &mut self.flows[i];
            if tcp_sockets::congestion(&stream).ok().as_deref() != Some(f.kernel_cc) {
                tcp_sockets::set_congestion(&stream, f.kernel_cc).map_err(set)?;
            }
            let Some(c) = f.conns.iter_mut().find(|c| c.k == k) else {
                continue;
            };
            self.events += 1;
            let mut end = End::new(stream);
            end.syn_retrans = end.info().total_retrans;
            let mut router = Router::new();
            for (path, resource) in &self.routes {
                router.route(path, *resource);
            }
            let mut session =
                Session::new(SessionConfig::server(), router).map_err(|e| setup(i)(&e))?;
            end.write_from(&mut session);
            c.server = Some((end, session));
        }
    }

    /// Moves bytes between flow `i`'s sockets and sessions.
    fn service(&mut self, i: usize) -> Result<(), RunError> {
        let now = self.now;
        let err = setup(i);
        let f = &mut self.flows[i];
        let mut next_client = false;
        let current = f.conns.len() - 1;
        for (j, c) in f.conns.iter_mut().enumerate() {
            if c.connecting {
                let r = c.client.ready;
                if !(r.write || r.error) {
                    continue;
                }
                c.connecting = false;
                self.events += 1;
                if tcp_sockets::connect_result(&c.client.stream).is_err() {
                    f.progress.give_up(&mut f.failed, now);
                    continue;
                }
                c.client.syn_retrans = c.client.info().total_retrans;
                let session = f
                    .progress
                    .open_session(&f.plan, now, c.k, &mut c.batch_left)
                    .map_err(|e| err(&e))?;
                c.client_session = Some(session);
            }
            if let Some(session) = c.client_session.as_mut() {
                self.events += c.client.read_into(now, session, &mut self.buf);
                while let Some(event) = session.poll_event() {
                    match event {
                        SessionEvent::RequestCompleted { code, body_len, .. }
                            if !f.plan.is_whole(code, body_len) =>
                        {
                            // Not the whole answer: the flow ends incomplete, as simulated.
                            f.progress.partial_answers += 1;
                            f.progress.give_up(&mut f.failed, now);
                        }
                        SessionEvent::RequestCompleted { at, started, .. } => {
                            let done = f.progress.completed(at, started, f.plan.quota);
                            if f.plan.batches.is_some() && (done || c.batch_left == 0) {
                                // The short-lived client is done (docs/experiments.md §5.2): FIN;
                                // the next one connects at once.
                                c.closing = true;
                                next_client = !done && j == current;
                            } else if !done {
                                f.progress
                                    .request(&f.plan, session, now, &mut c.batch_left)
                                    .map_err(|e| err(&e))?;
                            }
                        }
                        SessionEvent::RequestFailed { .. } | SessionEvent::Aborted { .. }
                            if f.progress.times.done_at.is_none() && j == current =>
                        {
                            f.progress.give_up(&mut f.failed, now);
                        }
                        _ => {}
                    }
                }
                c.client.write_from(session);
                if c.closing {
                    c.client.shut_down_when_flushed();
                }
            }
            if let Some((s, session)) = c.server.as_mut() {
                self.events += s.read_into(now, session, &mut self.buf);
                s.write_from(session);
                if s.eof {
                    // The client's FIN: the server closes its side (passive close).
                    s.shut_down_when_flushed();
                }
                while session.poll_event().is_some() {}
            }
        }
        // A former short-lived client's connection goes once both ends have each other's FIN.
        let mut j = 0;
        while j + 1 < f.conns.len() {
            let c = &f.conns[j];
            let server_over = c.server.as_ref().is_some_and(|(s, _)| s.eof && s.shut);
            if c.closing && c.client.eof && server_over {
                let c = f.conns.remove(j);
                f.retired.add_conn(&c);
            } else {
                j += 1;
            }
        }
        if next_client {
            let batch = f.draw_batch();
            self.open(i)?;
            let f = &mut self.flows[i];
            if let Some(c) = f.conns.last_mut() {
                c.batch_left = batch;
            }
        }
        Ok(())
    }

    /// The run's result and the emulator's counters (for [`super::report_timing`]).
    fn finish(self) -> Result<(RunResult, EmulatorStats), RunError> {
        let now = self.clock();
        let records = self
            .flows
            .iter()
            .enumerate()
            .map(|(i, f)| record(i as u32, f, now))
            .collect();
        // The link's counters; the sockets close after the emulator has stopped.
        let stats = self
            .emu
            .finish()
            .map_err(|e| RunError::Setup(format!("emulator: {e}")))?;
        let result = RunResult {
            flows: records,
            events: self.events,
            sim_time_s: now.as_secs_f64(),
            network: Some(NetworkRecord {
                down: super::super::link_record(stats.down.link),
                up: super::super::link_record(stats.up.link),
                sim_time_s: now.as_secs_f64(),
                mesh: None,
                rpl: None,
            }),
        };
        Ok((result, stats))
    }
}

/// The record of flow `i`: the simulator's columns, the counters from `TCP_INFO`.
fn record(i: u32, f: &Flow, run_end: Instant) -> FlowRecord {
    let mut n = f.retired;
    for c in &f.conns {
        n.add_conn(c);
    }
    // Which copy of a segment reached the kernel's receiver is not observable here:
    // unnecessary_retransmissions stays 0.
    flow_record(
        i,
        &f.cc,
        f.plan.workload,
        &f.progress,
        n.segments,
        (n.bytes_up, n.bytes_down),
        run_end,
    )
}

#[cfg(test)]
mod tests {
    use crate::results::RunError;
    use crate::scenario::Scenario;

    #[test]
    fn tcp_flows_run_on_the_kernel_through_the_emulator() {
        if let Some(why) = coaplab_emu::emulator::unavailable() {
            eprintln!("SKIPPED: {why}");
            return;
        }
        // Over zigbee (20 ms each way): New Reno with short-lived clients (a connection each),
        // BBR with one connection; about 2 s each.
        let text = "name = \"t\"\nseed = 3\n[network]\npreset = \"zigbee\"\n[[flows]]\ncount = 2\n\
                    cc = [\"tcp-newreno\", \"tcp-bbr\"]\nworkload = [\"random\", \"continuous\"]\n\
                    exchanges = 6\nbatch_min = 1\nbatch_max = 3\n";
        let runs = Scenario::parse(text, "t.toml").unwrap().expand(None, None);
        let runs: Vec<_> = runs
            .iter()
            .filter(|spec| {
                let (cc, workload) = (
                    spec.config.flows[0].cc(),
                    spec.config.flows[0].workload.name(),
                );
                if cc == "tcp-bbr" && workload == "random" {
                    return false;
                }
                let there = coaplab_emu::emulator::tcp_sockets::congestion_available(
                    super::kernel_cc(&spec.config.flows[0].transport).unwrap(),
                );
                if !there {
                    eprintln!("SKIPPED {cc}: not in the kernel");
                }
                there
            })
            .collect();
        let emulated = super::super::at_once(&runs, |spec| super::super::run_one(spec));
        let mut ran = 0;
        for (spec, emulated) in runs.iter().zip(emulated) {
            let (cc, workload) = (
                spec.config.flows[0].cc(),
                spec.config.flows[0].workload.name(),
            );
            let emulated = emulated.unwrap();
            let simulated = crate::sim::run_one(spec).unwrap();
            assert_eq!(emulated.flows.len(), 2);
            for (e, s) in emulated.flows.iter().zip(&simulated.flows) {
                println!("{cc} {workload}: emulated {e:?}\n  simulated {s:?}");
                assert!(e.completed && e.exchanges == 6, "{e:?}");
                let (ef, sf) = (e.fct_s.unwrap(), s.fct_s.unwrap());
                // Real time adds latencies and the kernel's quick-ACKs take uplink time
                // (docs/cross-check.md); a generous bound.
                assert!((ef - sf).abs() < 0.1 + 0.3 * sf, "FCT {ef} vs {sf}");
                let (et, st) = (e.tcp.as_ref().unwrap(), s.tcp.as_ref().unwrap());
                assert!(et.setup_s.is_some_and(|x| x > 0.04 && x < 1.0), "{et:?}");
                assert!(et.segments_sent >= e.transmissions, "{et:?}");
                if e.retransmissions == 0 && s.retransmissions == 0 {
                    // Every write is a segment of its own (TCP_NODELAY), FINs included.
                    assert_eq!(e.transmissions, s.transmissions, "{cc} {workload}");
                }
                assert_eq!(et.syn_retransmissions, st.syn_retransmissions);
                assert!(e.bytes_up > 0 && e.bytes_down > 0);
            }
            ran += 1;
        }
        assert!(ran >= 1);
    }

    #[test]
    fn model_constants_are_refused_for_the_kernel() {
        let text = "name = \"t\"\n[network]\npreset = \"zigbee\"\n[[flows]]\ncount = 1\n\
                    cc = \"tcp-newreno\"\nexchanges = 1\n[flows.params]\nquickack_segments = 4\n";
        let runs = Scenario::parse(text, "t.toml").unwrap().expand(None, None);
        match super::super::run_one(&runs[0]) {
            Err(RunError::NotAvailable(why)) => assert!(why.contains("quickack_segments"), "{why}"),
            other => panic!("{other:?}"),
        }
    }
}
