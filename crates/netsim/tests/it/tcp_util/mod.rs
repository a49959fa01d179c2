//! A two-endpoint virtual-time harness for the TCP model: each direction is a pure serializer
//! (fixed rate, infinite buffer) followed by a constant delay, with scripted drops by the index
//! of the packet offered to that direction. Every send and drop is logged as one line.

use std::ops::RangeBounds;

use coaplab_base::time::{Duration, Instant};
use coaplab_netsim::link::serializer::Serializer;
use coaplab_netsim::tcp::{Connection, Segment, TcpConfig, TcpState};
use coaplab_netsim::{Link, LinkConfig, LinkResult, LinkStreams};

/// One direction: serializer → delay → scripted drops.
pub(crate) struct Path {
    ser: Serializer,
    /// When set, netsim's bottleneck link (FIFO → serializer → delay → loss) replaces the
    /// ideal serializer; the `delay` is then the rest-of-path added after it.
    link: Option<Link>,
    delay: Duration,
    /// 0-based indices of the packets (offered to this direction) to drop.
    pub(crate) drops: Vec<usize>,
    offered: usize,
}

impl Path {
    pub(crate) fn new(rate_bps: u64, delay: Duration) -> Self {
        Path {
            ser: Serializer::new(rate_bps, 0),
            link: None,
            delay,
            drops: Vec::new(),
            offered: 0,
        }
    }

    /// netsim's link for `config`, then a constant `rest` delay.
    pub(crate) fn link(config: &LinkConfig, rest: Duration) -> Self {
        let mut p = Path::new(1, rest);
        p.link = Some(Link::new(config, LinkStreams::named(1, "test")));
        p
    }

    /// The arrival instant, or `None` when scripted to drop.
    fn offer(&mut self, now: Instant, ip_len: u32) -> Option<Instant> {
        let i = self.offered;
        self.offered += 1;
        if let Some(link) = &mut self.link {
            return match link.offer(now, ip_len).result {
                LinkResult::Delivered { at, .. } if !self.drops.contains(&i) => {
                    Some(at + self.delay)
                }
                _ => None,
            };
        }
        let (_, end) = self.ser.transmit(now, ip_len);
        (!self.drops.contains(&i)).then_some(end + self.delay)
    }
}

/// Client, server, uplink (client → server) and downlink.
pub(crate) struct Pair {
    pub(crate) client: Connection,
    pub(crate) server: Connection,
    pub(crate) up: Path,
    pub(crate) down: Path,
    pub(crate) now: Instant,
    /// (arrival, to_server, segment), kept in arrival order (ties in send order).
    in_flight: Vec<(Instant, bool, Segment)>,
    /// One line per send: "t_us C|S kind seq ack len" (+ " DROP").
    pub(crate) log: Vec<String>,
    /// Client-side receive instants of data segments (seq, len).
    pub(crate) client_rx: Vec<(Instant, u64, usize)>,
    /// The server's window after each segment or timeout it handled:
    /// "t_us ack=A cwnd=C ssthresh=S pipe=P ca=X".
    pub(crate) server_trace: Vec<String>,
}

pub(crate) fn describe(s: &Segment) -> String {
    let kind = match (s.syn, s.ack.is_some(), s.payload.is_empty()) {
        (true, false, _) => "SYN",
        (true, true, _) => "SYNACK",
        _ if s.fin => "FIN",
        (false, true, true) => "ACK",
        _ => "DATA",
    };
    let ack = s.ack.map_or("-".to_string(), |a| a.to_string());
    format!("{kind} {} {ack} {}", s.seq, s.payload.len())
}

impl Pair {
    pub(crate) fn new(cfg: TcpConfig, up: Path, down: Path) -> Self {
        Pair {
            client: Connection::connect(cfg.clone()).expect("valid"),
            server: Connection::listen(cfg).expect("valid"),
            up,
            down,
            now: Instant::ZERO,
            in_flight: Vec::new(),
            log: Vec::new(),
            client_rx: Vec::new(),
            server_trace: Vec::new(),
        }
    }

    fn flush(&mut self) {
        let now = self.now;
        for to_server in [true, false] {
            loop {
                let conn = if to_server {
                    &mut self.client
                } else {
                    &mut self.server
                };
                let Some(seg) = conn.poll_transmit(now) else {
                    break;
                };
                let path = if to_server {
                    &mut self.up
                } else {
                    &mut self.down
                };
                let arrival = path.offer(now, seg.ip_len());
                let who = if to_server { "C" } else { "S" };
                let drop = if arrival.is_none() { " DROP" } else { "" };
                self.log.push(format!(
                    "{} {who} {}{drop}",
                    now.as_micros(),
                    describe(&seg)
                ));
                if let Some(at) = arrival {
                    let pos = self.in_flight.partition_point(|(t, _, _)| *t <= at);
                    self.in_flight.insert(pos, (at, to_server, seg));
                }
            }
        }
    }

    /// Runs until `until` returns true or nothing is left to do; bounded.
    pub(crate) fn run(&mut self, mut until: impl FnMut(&mut Pair) -> bool) {
        for _ in 0..1_000_000 {
            self.flush();
            let done = until(self);
            self.flush(); // what `until` wrote, as an application would
            if done {
                return;
            }
            let next = [
                self.in_flight.first().map(|(t, _, _)| *t),
                self.client.poll_timeout(),
                self.server.poll_timeout(),
            ]
            .into_iter()
            .flatten()
            .min();
            let Some(next) = next else { return };
            self.now = next.max(self.now);
            while self
                .in_flight
                .first()
                .is_some_and(|(t, _, _)| *t <= self.now)
            {
                let (_, to_server, seg) = self.in_flight.remove(0);
                if to_server {
                    let ack = seg.ack;
                    self.server
                        .handle_segment(self.now, seg)
                        .expect("server accepts");
                    self.trace_server(&format!("ack={}", ack.unwrap_or(0)));
                } else {
                    if !seg.payload.is_empty() {
                        self.client_rx.push((self.now, seg.seq, seg.payload.len()));
                    }
                    self.client
                        .handle_segment(self.now, seg)
                        .expect("client accepts");
                }
            }
            let now = self.now;
            if self.client.poll_timeout().is_some_and(|t| t <= now) {
                self.client.handle_timeout(now);
            }
            if self.server.poll_timeout().is_some_and(|t| t <= now) {
                self.server.handle_timeout(now);
                self.trace_server("timeout");
            }
        }
        panic!("harness did not settle");
    }
}

impl Pair {
    /// The index of the server trace's first line containing `needle`.
    pub(crate) fn server_trace_index(&self, needle: &str) -> usize {
        self.server_trace
            .iter()
            .position(|l| l.contains(needle))
            .unwrap_or_else(|| panic!("no server trace line contains {needle:?}"))
    }

    /// The log lines of the server's data segments sent within `range` (µs).
    pub(crate) fn server_sends(&self, range: impl RangeBounds<u64>) -> Vec<&str> {
        self.log
            .iter()
            .filter(|l| l.contains(" S DATA") && range.contains(&at_us(l)))
            .map(String::as_str)
            .collect()
    }

    /// The server's (segments retransmitted, fast recoveries, RTO expiries).
    pub(crate) fn server_recoveries(&self) -> (u64, u64, u64) {
        let s = self.server.stats();
        (s.segments_retransmitted, s.fast_recoveries, s.rto_count)
    }

    fn trace_server(&mut self, what: &str) {
        let s = &self.server;
        let ss = if s.ssthresh() > 1_000_000 {
            "inf".to_string()
        } else {
            s.ssthresh().to_string()
        };
        self.server_trace.push(format!(
            "{} {what} cwnd={} ssthresh={ss} pipe={} ca={:?}",
            self.now.as_micros(),
            s.cwnd(),
            s.pipe(),
            s.ca_state()
        ));
    }
}

/// The send instant (µs) of a log line.
pub(crate) fn at_us(line: &str) -> u64 {
    line.split(' ')
        .next()
        .and_then(|t| t.parse().ok())
        .expect("log line")
}

/// Drives the application of docs/experiments.md §5.1 (client CSM 6 B + GET 5 B, server CSM 2 B,
/// one response of `object_bytes`) until the client has it all and the server is fully
/// acknowledged; returns (GET sent, last byte received).
pub(crate) fn transfer(p: &mut Pair, object_bytes: usize) -> (Instant, Instant) {
    transfer_observed(p, object_bytes, |_| {})
}

/// [`transfer`], calling `observe` after every step of the harness.
pub(crate) fn transfer_observed(
    p: &mut Pair,
    object_bytes: usize,
    mut observe: impl FnMut(&Pair),
) -> (Instant, Instant) {
    let mut client_wrote = false;
    let mut server_csm = false;
    let mut responded = false;
    let mut got = 0usize;
    let mut get_at = None;
    let mut done_at = None;
    let mut buf = vec![0u8; 4096];
    p.run(|p| {
        if p.client.state() == TcpState::Established && !client_wrote {
            client_wrote = true;
            p.client.write(&[0xd0; 6]).expect("open"); // client CSM
            p.client.write(&[0x01; 5]).expect("open"); // GET
            get_at = Some(p.now);
        }
        if p.server.state() == TcpState::Established && !server_csm {
            server_csm = true;
            p.server.write(&[0xe0; 2]).expect("open");
        }
        if !responded && p.server.readable_len() >= 11 {
            responded = true;
            let mut req = [0u8; 11];
            assert_eq!(p.server.read(&mut req), 11);
            p.server.write(&vec![0x45; object_bytes]).expect("open");
        }
        loop {
            let n = p.client.read(&mut buf);
            if n == 0 {
                break;
            }
            got += n;
        }
        observe(p);
        if got == 2 + object_bytes && done_at.is_none() {
            done_at = Some(p.now);
        }
        done_at.is_some() && p.server.all_acked()
    });
    (get_at.expect("GET"), done_at.expect("done"))
}

/// The nbiot preset's links (docs/experiments.md §2.1) with the 15 ms rest-of-path folded into the
/// delay and an infinite buffer: uplink 60 kbit/s + 215 ms, downlink 30 kbit/s + 415 ms.
pub(crate) fn nbiot() -> (Path, Path) {
    (
        Path::new(60_000, Duration::from_millis(215)),
        Path::new(30_000, Duration::from_millis(415)),
    )
}
