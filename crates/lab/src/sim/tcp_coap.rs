//! CoAP over TCP on the TCP run loop (`super::tcp`, docs/experiments.md §5): the
//! [`FlowApp`] whose connections carry one RFC 8323 session
//! ([`coaplab_endpoint::tcp::Session`]) at each end.
//!
//! A flow's client connects at its start (first SYN); once its connection is established it
//! writes its CSM and its first request (two writes, so two segments with `TCP_NODELAY`). The
//! server end of every connection listens from the start and, once established, writes its
//! CSM, then the answers. One request is outstanding at a time: the next is written as soon
//! as the previous response is complete. A random flow's short-lived client closes with a FIN
//! after its batch (the server closes its side when it reads the end of the stream) and the
//! next client connects at the same instant, from the next port of the flow's host
//! (`super::source_addr`); former clients' connections are dropped once both ends have
//! closed.

use std::sync::Arc;

use coaplab_cc::time::Instant;
use coaplab_endpoint::tcp::{GeneratedBody, Session, SessionConfig, SessionEvent};
use coaplab_endpoint::Router;
use coaplab_netsim::rng;
use coaplab_netsim::tcp::{Connection, Generate, TcpState};

use super::tcp_app::{Arrival, FlowApp, OnSegment, Serviced, Shared, Wake};
use super::tcp_conns::{Conn, Flow};
use super::tcp_copies::CopyLog;
use super::tcp_flow::{draw_batch, flow_record, FlowPlan};
use crate::results::{FlowRecord, RunError};
use crate::scenario::{FlowConfig, RunSpec};

/// RFC 8323 sessions on a flow's connections: what the flow asks, fixed before the run.
pub(super) struct CoapApp {
    plan: FlowPlan,
    /// The next [`FlowApp::service`] serves only one side of the flow: the server sessions
    /// (`Some(true)`) or the current client's (`Some(false)`), set when a segment reached
    /// that side. Nothing changed on the other since it was last served (every change is
    /// served when it happens), so its half of `service` would find nothing to do; a data
    /// segment then costs one half. With the pure ACKs that skip `service` altogether
    /// ([`FlowApp::on_segment`]): 2.1 → 0.6 `pump` calls and ~165 fewer instructions per link
    /// packet (tcp-100 star, callgrind).
    only: Option<bool>,
}

/// One connection's sessions.
pub(super) struct CoapConn {
    /// Exchanges this connection still has to start (random workload: its short-lived
    /// client's draw; otherwise the flow's quota).
    batch_left: u32,
    client: Option<Session>,
    server: Option<Session>,
}

impl FlowApp for CoapApp {
    type Conn = CoapConn;

    fn new(
        spec: &RunSpec,
        fc: &FlowConfig,
        index: u32,
        path: &str,
    ) -> Result<(CoapApp, Instant), RunError> {
        let plan = FlowPlan::new(spec.seed, fc, index, path);
        let start = plan.start;
        Ok((CoapApp { plan, only: None }, start))
    }

    fn new_conn(&mut self) -> CoapConn {
        CoapConn {
            batch_left: draw_batch(&mut self.plan.batches, self.plan.quota),
            client: None,
            server: None,
        }
    }

    fn listen(&self, flow: &Flow<CoapConn>, k: u32) -> Result<Connection, String> {
        let mut server = Connection::listen(flow.tcp.clone()).map_err(|e| e.to_string())?;
        let i = flow.index;
        server.set_random(rng::stream(
            flow.seed,
            &format!("tcp/flow{i}/conn{k}/server"),
        ));
        Ok(server)
    }

    fn open(&mut self, f: &mut Flow<CoapConn>, _: &Shared, now: Instant) -> Result<Wake, RunError> {
        f.conns[0].client = Some(connect(f, 0)?);
        f.opened = 1;
        f.clients.push((f.conns[0].addr, 0));
        f.progress.times.syn_at = Some(now);
        Ok(Wake::Service { event: true })
    }

    fn woken(&mut self, fired: bool) -> Wake {
        if fired {
            Wake::Service { event: true }
        } else {
            Wake::Idle
        }
    }

    /// A pure ACK between established ends only sends: `service` would find nothing to read,
    /// no session to open or close, no event and no write (every earlier change of the flow
    /// was serviced when it happened), so it is skipped, half of the deliveries of a long
    /// transfer (with the one-sided `service` of [`CoapApp`]'s `only`: ~165 instructions per
    /// link packet, tcp-100 star).
    #[inline]
    fn on_segment(&mut self, a: Arrival, _: &mut Connection) -> OnSegment {
        if a.established_ack {
            OnSegment::Send
        } else {
            self.only = Some(a.up);
            OnSegment::Service
        }
    }

    fn service(
        &mut self,
        f: &mut Flow<CoapConn>,
        shared: &mut Shared,
        now: Instant,
    ) -> Result<Serviced, RunError> {
        let index = f.index;
        let setup = |e: &dyn std::fmt::Display| RunError::Setup(format!("flow {index}: {e}"));
        let plan = &self.plan;
        let only = self.only.take();
        let mut next_client = false;
        let current = f.conns.len() - 1;
        if only != Some(true) {
            let c = &mut f.conns[current];
            if let Some(client) = c.client.as_mut() {
                if client.state() == TcpState::Failed {
                    f.progress.give_up(&mut f.failed, now);
                }
                let s = &mut c.app;
                if client.state() == TcpState::Established && s.client.is_none() {
                    let session = f
                        .progress
                        .open_session(plan, now, c.k, &mut s.batch_left)
                        .map_err(|e| setup(&e))?;
                    s.client = Some(session);
                }
                if let Some(session) = s.client.as_mut() {
                    // One request outstanding at a time (docs/experiments.md §5.2): the next is
                    // written as soon as the previous response is complete.
                    loop {
                        pump(now, client, session, &mut shared.buf).map_err(|e| setup(&e))?;
                        let mut wrote = false;
                        while let Some(event) = session.poll_event() {
                            match event {
                                SessionEvent::RequestCompleted { code, body_len, .. }
                                    if !plan.is_whole(code, body_len) =>
                                {
                                    f.progress.partial_answers += 1;
                                    f.progress.give_up(&mut f.failed, now);
                                }
                                SessionEvent::RequestCompleted { at, started, .. } => {
                                    let done = f.progress.completed(at, started, plan.quota);
                                    if let Some(last) = f.clients.last_mut() {
                                        last.1 += 1;
                                    }
                                    if plan.batches.is_some() && (done || s.batch_left == 0) {
                                        // The short-lived client is done (docs/experiments.md
                                        // §5.2): it closes with a FIN; the next one connects at
                                        // once.
                                        client.close();
                                        next_client = !done;
                                    } else if !done {
                                        f.progress
                                            .request(plan, session, now, &mut s.batch_left)
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
        for c in f.conns.iter_mut().filter(|_| only != Some(false)) {
            let s = &mut c.app;
            if c.server.state() == TcpState::Established && s.server.is_none() {
                let mut router = Router::new();
                for (path, resource) in &shared.routes {
                    router.route(path, *resource);
                }
                s.server =
                    Some(Session::new(SessionConfig::server(), router).map_err(|e| setup(&e))?);
            }
            if let Some(session) = s.server.as_mut() {
                if c.server.state() == TcpState::CloseWait {
                    // The client's FIN: the server reads the end of the stream and closes
                    // its side (passive close).
                    session.handle_stream_end(now);
                    c.server.close();
                } else if !matches!(c.server.state(), TcpState::LastAck | TcpState::Closed) {
                    pump(now, &mut c.server, session, &mut shared.buf).map_err(|e| setup(&e))?;
                }
                while session.poll_event().is_some() {}
            }
        }
        if next_client {
            let k = f.opened;
            f.opened += 1;
            let addr = super::source_addr(f.index, k, shared.port_stride);
            let server = self.listen(f, k).map_err(|e| setup(&e))?;
            let mut c = Conn::new(k, addr, server, self.new_conn());
            c.client = Some(connect(f, k)?);
            f.clients.push((c.addr, 0));
            f.conns.push(c);
        }
        f.retire_closed();
        Ok(Serviced::Done)
    }

    fn record(&self, f: &Flow<CoapConn>, run_end: Instant) -> FlowRecord {
        let mut r = flow_record(
            f.index,
            &f.cc,
            self.plan.workload,
            &f.progress,
            f.counts(),
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
}

/// The client connection of flow `f`'s `k`-th connection.
fn connect(f: &Flow<CoapConn>, k: u32) -> Result<Connection, RunError> {
    let i = f.index;
    let mut c = Connection::connect(f.tcp.clone())
        .map_err(|e| RunError::Setup(format!("flow {i}: {e}")))?;
    c.set_random(rng::stream(f.seed, &format!("tcp/flow{i}/conn{k}/client")));
    Ok(c)
}

/// Feeds the connection's in-order bytes to the session and the session's writes to the
/// connection.
fn pump(
    now: Instant,
    conn: &mut Connection,
    session: &mut Session,
    buf: &mut Vec<u8>,
) -> Result<(), coaplab_netsim::tcp::ConnectionFailed> {
    // Read where the bytes lie: a copy into `buf` first cost ~25 instructions per link packet
    // (tcp-100 star, callgrind).
    conn.read_in_place(|bytes| session.handle_stream_bytes(now, bytes));
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
