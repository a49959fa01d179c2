//! A TCP flow's transport in the TCP run loop (`super::tcp`): its connections of netsim's TCP
//! model ([`Conn`], one or one per short-lived client), each with the state of the flow's
//! application (`super::tcp_app::FlowApp::Conn`), and what the loop measures of them
//! ([`Flow`]).

use std::net::SocketAddr;

use coaplab_cc::time::{earliest, Instant};
use coaplab_netsim::tcp::{Connection, TcpConfig, TcpState};

use super::tcp_copies::CopyLog;
use super::tcp_flow::{Progress, SegmentCounts};

/// One flow's transport: its connections (one, or one per short-lived client), each with the
/// application's state `C` (`super::tcp_app::FlowApp::Conn`), and what was measured.
pub(super) struct Flow<C> {
    /// Its index among the run's flows (client addresses, random streams, trace, errors);
    /// its place among the TCP loop's flows is this minus the loop's first index (`super::tcp`).
    pub(super) index: u32,
    pub(super) cc: String,
    /// The server it connects to ([`super::server_of`]).
    pub(super) server: SocketAddr,
    /// The TCP model's configuration of this flow's connections (its `cc`).
    pub(super) tcp: TcpConfig,
    /// The run's seed, for the connections' random streams.
    pub(super) seed: u64,
    /// When its first connection connects.
    pub(super) start: Instant,
    /// Live connections, oldest first; the last is the current client's. Former clients'
    /// connections stay until both ends have closed.
    pub(super) conns: Vec<Conn<C>>,
    /// Connections opened so far.
    pub(super) opened: u32,
    /// Per connection opened: the client's address and the exchanges it completed.
    pub(super) clients: Vec<(SocketAddr, u32)>,
    /// Counters of the connections already dropped.
    pub(super) retired: SegmentCounts,
    /// Unnecessary retransmissions of the connections already dropped.
    pub(super) retired_unnecessary: u64,
    /// Its instants (the first request's segment leaves at `get_at`), requests and exchanges.
    pub(super) progress: Progress,
    /// The client connection gave up (SYN retries exhausted) or the application ended early.
    pub(super) failed: bool,
    pub(super) bytes_up: u64,
    pub(super) bytes_down: u64,
}

impl<C> Flow<C> {
    pub(super) fn finished(&self) -> bool {
        self.progress.times.done_at.is_some() || self.failed
    }

    /// Its start, then the earliest timer of its connections and of its application (`app`).
    pub(super) fn next_timer(&self, app: Option<Instant>) -> Option<Instant> {
        if self.finished() {
            return None;
        }
        if self.opened == 0 {
            return Some(self.start);
        }
        // A fold, not `filter_map(..).chain(app).min()`: the loop asks after every segment.
        self.conns
            .iter()
            .fold(app, |next, c| earliest(next, c.next_timer()))
    }

    /// Drops the former clients' connections whose both ends have closed, keeping their
    /// counters.
    pub(super) fn retire_closed(&mut self) {
        let last = self.conns.len() - 1;
        let mut j = 0;
        while j < last.min(self.conns.len() - 1) {
            if self.conns[j].is_over() {
                let c = self.conns.remove(j);
                self.retired = self.retired.sum(c.stats());
                self.retired_unnecessary += c.copies.iter().map(CopyLog::unnecessary).sum::<u64>();
            } else {
                j += 1;
            }
        }
    }

    /// The segment counters of its connections, dropped ones included.
    pub(super) fn counts(&self) -> SegmentCounts {
        let mut n = self.retired;
        for c in &self.conns {
            n = n.sum(c.stats());
        }
        n
    }
}

/// One connection of a flow: both ends and the application's state `C`.
///
/// `repr(C)`, the small fields first and together: every delivery finds its connection by
/// `k`, every send reads `addr` and `copies`. Left to the compiler they sat 5 KB in, behind
/// the two `Connection`s, `addr` straddling two cache lines (100 flows: x0.98 simulation
/// time per packet).
#[repr(C)]
pub(super) struct Conn<C> {
    /// The flow's `k`-th connection (the `k`-th short-lived client of a random flow).
    pub(super) k: u32,
    /// The client's address (a new port per connection, `source_addr`).
    pub(super) addr: SocketAddr,
    /// The data segments the client (`[0]`, upstream) and the server (`[1]`) sent: ground
    /// truth for unnecessary retransmissions.
    pub(super) copies: [CopyLog; 2],
    /// `None` until the client connects.
    pub(super) client: Option<Connection>,
    pub(super) server: Connection,
    /// The application's state of this connection.
    pub(super) app: C,
}

impl<C> Conn<C> {
    /// Connection `k` from `addr` to the listening `server`, its client not connected yet.
    pub(super) fn new(k: u32, addr: SocketAddr, server: Connection, app: C) -> Conn<C> {
        Conn {
            k,
            addr,
            copies: Default::default(),
            client: None,
            server,
            app,
        }
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
fn add_stats(n: &mut SegmentCounts, c: &Connection) {
    let s = c.stats();
    n.segments_sent += s.segments_sent;
    n.data_segments_sent += s.data_segments_sent;
    n.retransmitted += s.segments_retransmitted;
    n.syn_retransmissions += s.syn_retransmissions;
    n.rtos += s.rto_count;
    n.rto_max = n.rto_max.max(s.rto_max);
}
