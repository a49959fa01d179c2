//! Emulated runs (`coaplab run --mode emulated`): the simulator's run loop, endpoints,
//! workloads and metrics unchanged, with netsim's star replaced by real UDP sockets in the
//! link emulator's two namespaces (`coaplab_emu::emulator`) and virtual time by the wall
//! clock. Every datagram crosses the emulated link, whose fate decisions are netsim's own
//! (the emulator runs the same `Star` against the wall clock).
//!
//! Each client address of the model ([`coaplab_netsim::client_addr`] and the short-lived
//! clients' source addresses) gets its own socket on 198.18.0.1 (an ephemeral port) in the
//! client namespace when it first sends; the server has one socket on 198.18.0.2:5683 in the
//! server namespace. Runs take their simulated duration in real time, one at a time.
//!
//! A run whose flows are all CoAP over TCP runs in [`tcp`] on the kernel's TCP instead; an HTTP
//! download (docs/experiments.md §8e) in [`http`], with the real hyper client and server.
//!
//! Real packets carry no tag naming the exchange copy a reply answers, so the ground truth
//! for `unnecessary_retransmissions` comes from the emulator's per-packet log instead (kept
//! with the packets' bytes): [`truth`] decodes the CoAP messages written to the server's and
//! the client's TUN devices and recovers which copy of which request each delivered reply
//! answers; the copy's exchange id is the one the run loop tagged it with when it was sent
//! (remembered here by client port, Message ID and token). The rule itself is the
//! simulator's ([`crate::metrics::FlowMetrics`]).

use std::collections::{HashMap, VecDeque};
use std::net::{IpAddr, SocketAddr};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration as StdDuration;

use coaplab_cc::time::Instant;
use coaplab_emu::emulator::sockets::UdpSet;
use coaplab_emu::emulator::{
    Emulator, EmulatorConfig, EmulatorStats, CLIENT_ADDR, SERVER_ADDR as REAL_SERVER,
};
use coaplab_netsim::{
    Delivery, Direction, DirectionStats, PacketId, SendError, Topology, SERVER_ADDR,
};
use coaplab_wire::{Message, Token};

use super::dispatch::{emulated_mesh, run_loop, Mode, RunLoop};
use super::{flow_of, tag, Sim};
use crate::metrics::IP_UDP_HEADER_BYTES;
use crate::results::{RunError, RunResult};
use crate::scenario::RunSpec;

mod http;
mod tcp;
mod truth;

/// Longest single wait for a datagram (the emulator's health is checked in between).
const MAX_WAIT: StdDuration = StdDuration::from_millis(100);

/// Set by [`interrupt`]: the running and every later emulated run fail at once.
static INTERRUPTED: AtomicBool = AtomicBool::new(false);

/// Makes the running emulated run (within [`MAX_WAIT`]) and every later one fail with
/// "interrupted", so that the emulator is torn down normally (for a SIGINT handler).
pub fn interrupt() {
    INTERRUPTED.store(true, Ordering::Relaxed);
}

fn interrupted() -> Result<(), RunError> {
    if INTERRUPTED.load(Ordering::Relaxed) {
        return Err(RunError::Setup("interrupted".to_string()));
    }
    Ok(())
}

/// Runs `spec` in real time through the link emulator (needs root; see
/// `coaplab_emu::emulator::unavailable`). A run whose flows are all CoAP over TCP runs on the
/// kernel's TCP ([`tcp`]).
pub fn run_one(spec: &RunSpec) -> Result<RunResult, RunError> {
    run_logged(spec).map(|(result, _)| result)
}

/// [`run_one`], with the emulator's counters and packet log of a UDP run.
fn run_logged(spec: &RunSpec) -> Result<(RunResult, Option<EmulatorStats>), RunError> {
    run_captured(spec, None)
}

/// [`run_logged`], writing the packets the link delivered to `pcap` when given (UDP and HTTP
/// runs; for checks with tshark).
fn run_captured(
    spec: &RunSpec,
    pcap: Option<std::path::PathBuf>,
) -> Result<(RunResult, Option<EmulatorStats>), RunError> {
    interrupted()?;
    match run_loop(&spec.config, Mode::Emulated)? {
        // `run_loop` refuses an emulated mesh already.
        RunLoop::UdpMesh(_) | RunLoop::TcpMesh(_) => Err(emulated_mesh()),
        // Refused by the dispatcher in this mode.
        RunLoop::UdpTcpStar => Err(RunError::NotAvailable("UDP and TCP flows".to_string())),
        RunLoop::HttpStar => http::run(spec, pcap).map(|r| (r, None)),
        RunLoop::TcpStar => tcp::run(spec).map(|r| (r, None)),
        RunLoop::UdpStar => run_udp(spec, pcap),
    }
}

/// [`run_captured`] of CoAP over UDP: the simulator's loop on the emulated star.
fn run_udp(
    spec: &RunSpec,
    pcap: Option<std::path::PathBuf>,
) -> Result<(RunResult, Option<EmulatorStats>), RunError> {
    let mut config = EmulatorConfig::new(spec.config.network.clone());
    config.seed = spec.seed;
    config.log_packets = true;
    config.log_bytes = true;
    config.pcap = pcap;
    let emu = Emulator::start(config).map_err(|e| RunError::Setup(format!("emulator: {e}")))?;
    let stride = spec.config.total_flows().div_ceil(254).max(1);
    let net = EmulatedNet::new(emu, stride)?;
    let mut sim = Sim::with_network(spec, net)?;
    sim.run_with(EmulatedNet::next_at)?;
    sim.net.stop(sim.now)?;
    let answered = std::mem::take(&mut sim.net.answered);
    sim.replies_delivered(answered);
    let result = sim.finish();
    let log = sim.net.log.take();
    if let Some(stats) = &log {
        report_timing(spec, stats);
    }
    Ok((result, log))
}

/// Prints one line on standard error with how late the emulator wrote packets against the
/// model's delivery instants (p50 / p99 / max per direction, ms) and the machine's 1-minute
/// load average at the run's end. A real-time result is only as good as this lateness is
/// small against the link's serialization time (nbiot: 78.9 ms per full 296-B segment down), so
/// studies that compare emulated with simulated runs (docs/calibration.md) keep it with
/// every result. Not a results column: the simulated files stay byte-identical.
fn report_timing(spec: &RunSpec, stats: &EmulatorStats) {
    let ms = |q: Option<coaplab_cc::time::Duration>| {
        q.map_or_else(
            || "-".to_string(),
            |d| format!("{:.3}", d.as_secs_f64() * 1e3),
        )
    };
    let side = |d: &coaplab_emu::emulator::DirectionStats| {
        format!(
            "{}/{}/{}",
            ms(d.lateness.quantile(0.5)),
            ms(d.lateness.quantile(0.99)),
            ms(d.lateness.quantile(1.0))
        )
    };
    let load = std::fs::read_to_string("/proc/loadavg")
        .ok()
        .and_then(|s| s.split_whitespace().next().map(str::to_owned))
        .unwrap_or_else(|| "-".to_string());
    eprintln!(
        "emulated run {}: write lateness p50/p99/max ms down {} up {}; load average {}",
        spec.run,
        side(&stats.down),
        side(&stats.up),
        load
    );
}

/// The emulated network as the run loop sees it.
struct EmulatedNet {
    emu: Option<Emulator>,
    origin: std::time::Instant,
    sockets: UdpSet,
    /// The server's socket.
    server: usize,
    /// Socket → the model address it stands for (`None`: the server's).
    model_of_socket: Vec<Option<SocketAddr>>,
    /// Model client address → its socket.
    socket_of_model: HashMap<SocketAddr, usize>,
    /// Real client address ↔ model client address.
    model_of_real: HashMap<SocketAddr, SocketAddr>,
    real_of_model: HashMap<SocketAddr, SocketAddr>,
    stride: u32,
    arrived: VecDeque<(Delivery, Vec<u8>)>,
    rx: Vec<u8>,
    next_id: u64,
    /// Datagrams sent.
    sent: u64,
    /// (real client port, Message ID, token) of a CON copy sent → (flow, exchange id).
    exchange_of: HashMap<(u16, u16, Token), (u32, u64)>,
    /// `(flow, exchange, ordinal)` of every copy whose reply reached the client (known
    /// after [`EmulatedNet::stop`]).
    answered: Vec<(u32, u64, u32)>,
    /// The emulator's link counters, after [`EmulatedNet::stop`].
    stats: [DirectionStats; 2],
    /// The emulator's counters and packet log, after [`EmulatedNet::stop`].
    log: Option<EmulatorStats>,
}

fn io_setup(what: &str) -> impl Fn(std::io::Error) -> RunError + '_ {
    move |e| RunError::Setup(format!("{what}: {e}"))
}

impl EmulatedNet {
    fn new(emu: Emulator, stride: u32) -> Result<EmulatedNet, RunError> {
        let mut sockets = UdpSet::new();
        let server_addr = SocketAddr::new(IpAddr::V4(REAL_SERVER), SERVER_ADDR.port());
        let server = sockets
            .bind(emu.server_netns(), server_addr)
            .map_err(io_setup("server socket"))?;
        Ok(EmulatedNet {
            origin: emu.origin(),
            emu: Some(emu),
            sockets,
            server,
            model_of_socket: vec![None],
            socket_of_model: HashMap::new(),
            model_of_real: HashMap::new(),
            real_of_model: HashMap::new(),
            stride,
            arrived: VecDeque::new(),
            rx: vec![0; 65_536],
            next_id: 0,
            sent: 0,
            exchange_of: HashMap::new(),
            answered: Vec::new(),
            stats: [DirectionStats::default(); 2],
            log: None,
        })
    }

    fn now(&self) -> Instant {
        let ns = self.origin.elapsed().as_nanos();
        Instant::from_nanos(i64::try_from(ns).unwrap_or(i64::MAX))
    }

    /// Moves every waiting datagram into `arrived`, stamped now.
    fn drain(&mut self) -> Result<(), RunError> {
        while let Some((i, from, len)) = self
            .sockets
            .recv_any(&mut self.rx)
            .map_err(io_setup("receive"))?
        {
            let at = self.now();
            let (src, dst, tag, direction) = if i == self.server {
                let Some(&model) = self.model_of_real.get(&from) else {
                    continue;
                };
                let flow = flow_of(model, self.stride);
                (model, SERVER_ADDR, tag::from_client(flow), Direction::Up)
            } else {
                let Some(Some(model)) = self.model_of_socket.get(i).copied() else {
                    continue;
                };
                let flow = flow_of(model, self.stride);
                (SERVER_ADDR, model, tag::from_server(flow), Direction::Down)
            };
            self.next_id += 1;
            let delivery = Delivery {
                id: PacketId(self.next_id),
                at,
                src,
                dst,
                tag,
                direction,
                ip_len: len as u32 + IP_UDP_HEADER_BYTES as u32,
            };
            self.arrived.push_back((delivery, self.rx[..len].to_vec()));
        }
        Ok(())
    }

    /// The socket standing for model client `model`, created on first use.
    fn client_socket(&mut self, model: SocketAddr) -> Result<usize, SendError> {
        if let Some(&i) = self.socket_of_model.get(&model) {
            return Ok(i);
        }
        let unavailable = |kind| SendError::Unavailable { src: model, kind };
        let emu = self
            .emu
            .as_ref()
            .ok_or(unavailable(std::io::ErrorKind::NotConnected))?;
        let i = self
            .sockets
            .bind(
                emu.client_netns(),
                SocketAddr::new(IpAddr::V4(CLIENT_ADDR), 0),
            )
            .map_err(|e| unavailable(e.kind()))?;
        let real = self
            .sockets
            .local_addr(i)
            .map_err(|e| unavailable(e.kind()))?;
        self.model_of_socket.push(Some(model));
        self.socket_of_model.insert(model, i);
        self.model_of_real.insert(real, model);
        self.real_of_model.insert(model, real);
        Ok(i)
    }

    /// The instant the run loop handles next ([`Sim::run_with`]): now once a datagram has
    /// arrived, or once `local` (the earliest endpoint timer or flow start) or `end` has come,
    /// waiting on the sockets until then.
    fn next_at(
        &mut self,
        local: Option<Instant>,
        end: Instant,
    ) -> Result<Option<Instant>, RunError> {
        loop {
            let now = self.now();
            if !self.arrived.is_empty() {
                return Ok(Some(now));
            }
            let until = local.map_or(end, |l| l.min(end));
            if now >= until {
                return Ok(Some(now));
            }
            interrupted()?;
            if self.emu.as_ref().is_some_and(Emulator::has_failed) {
                return Err(RunError::Setup("the emulator stopped forwarding".into()));
            }
            let wait = StdDuration::from_nanos((until - now).as_nanos().max(0) as u64);
            self.sockets
                .wait(wait.min(MAX_WAIT))
                .map_err(io_setup("wait"))?;
            self.drain()?;
        }
    }

    /// Stops the emulator at the run's end, `now`: keeps its counters and packet log, and
    /// from the log the client copies whose reply was delivered ([`truth`]).
    fn stop(&mut self, now: Instant) -> Result<(), RunError> {
        let emu = self
            .emu
            .take()
            .ok_or_else(|| RunError::Setup("the emulator has stopped".into()))?;
        let stats = emu.finish().map_err(io_setup("emulator"))?;
        let packets = stats
            .packets
            .iter()
            .zip(&stats.packet_bytes)
            .map(|(p, bytes)| truth::LoggedPacket {
                up: p.direction == Direction::Up,
                read_at: p.read_at,
                written_at: p.written_at,
                ip: bytes,
            });
        for a in truth::answered_copies(packets, SERVER_ADDR.port(), now) {
            if let Some(&(flow, exchange)) = self.exchange_of.get(&(a.port, a.message_id, a.token))
            {
                self.answered.push((flow, exchange, a.ordinal));
            }
        }
        self.stats = [stats.up.link.into(), stats.down.link.into()];
        self.log = Some(stats);
        Ok(())
    }
}

/// Real sockets in place of the star; [`Topology::poll_at`] knows the datagrams already
/// received only, so the run loop waits for the next in [`EmulatedNet::next_at`].
impl Topology for EmulatedNet {
    fn poll_at(&self) -> Option<Instant> {
        self.arrived.front().map(|(d, _)| d.at)
    }

    fn poll_delivery(&mut self, now: Instant, buf: &mut Vec<u8>) -> Option<Delivery> {
        if self.arrived.front().is_some_and(|(d, _)| d.at <= now) {
            let (d, mut bytes) = self.arrived.pop_front()?;
            std::mem::swap(buf, &mut bytes);
            return Some(d);
        }
        None
    }

    fn send(
        &mut self,
        _now: Instant,
        src: SocketAddr,
        dst: SocketAddr,
        payload: &mut Vec<u8>,
        tag: u64,
    ) -> Result<PacketId, SendError> {
        let bytes: &[u8] = payload;
        let (socket, to) = if dst == SERVER_ADDR {
            let real_server = SocketAddr::new(IpAddr::V4(REAL_SERVER), SERVER_ADDR.port());
            let socket = self.client_socket(src)?;
            if let (Some((exchange, _)), Ok(msg)) = (tag::copied(tag), Message::decode(bytes)) {
                let port = self.real_of_model.get(&src).map_or(0, SocketAddr::port);
                self.exchange_of.insert(
                    (port, msg.message_id, msg.token()),
                    (tag::flow(tag), exchange),
                );
            }
            (socket, real_server)
        } else if src == SERVER_ADDR {
            // A client that never sent has no socket, hence no address to answer.
            let to = *self
                .real_of_model
                .get(&dst)
                .ok_or(SendError::UnknownAddress(dst))?;
            (self.server, to)
        } else {
            return Err(SendError::NotViaServer { src, dst });
        };
        // A refused send is a lost datagram, as on a real host.
        let _ = self.sockets.send_to(socket, bytes, to);
        self.sent += 1;
        Ok(PacketId(self.sent - 1))
    }

    /// The one server, [`SERVER_ADDR`].
    fn servers(&self) -> &[SocketAddr] {
        std::slice::from_ref(&SERVER_ADDR)
    }

    /// The emulated link's counters, once [`EmulatedNet::stop`]ped (zero before).
    fn direction_stats(&self, direction: Direction) -> DirectionStats {
        self.stats[usize::from(direction == Direction::Down)]
    }
}

/// `run` of every item, all at once on threads of their own, the results in item order: for
/// tests whose emulated runs wait on real time (each in its own namespaces), so that a test
/// waits for the longest run, not the sum.
#[cfg(test)]
fn at_once<T: Sync, R: Send>(items: &[T], run: impl Fn(&T) -> R + Sync) -> Vec<R> {
    std::thread::scope(|s| {
        let run = &run;
        let running: Vec<_> = items.iter().map(|i| s.spawn(move || run(i))).collect();
        running.into_iter().map(|h| h.join().unwrap()).collect()
    })
}

#[cfg(test)]
mod tests {
    use coaplab_cc::time::Instant;
    use coaplab_emu::emulator::EmulatorStats;
    use coaplab_netsim::Direction;
    use coaplab_wire::{Message, MessageType};
    use std::collections::HashMap;

    use super::truth::udp_payload;
    use crate::scenario::Scenario;

    /// Unnecessary retransmissions counted straight from the emulator's packet log: per
    /// (client port, Message ID), the CON copies read from the client's device, and the
    /// earliest copy answered by an ACK that reached the client by `end` (the copy it answers:
    /// the last one written to the server's device before the ACK was read).
    /// Returns the copies in the log and the unnecessary ones.
    fn direct_count(log: &EmulatorStats, end: Instant) -> (u64, u64) {
        let mut copies: HashMap<(u16, u16), Vec<Option<Instant>>> = HashMap::new();
        let mut first: HashMap<(u16, u16), usize> = HashMap::new();
        for (p, bytes) in log.packets.iter().zip(&log.packet_bytes) {
            let (src, dst, payload) = udp_payload(bytes).unwrap();
            let msg = Message::decode(payload).unwrap();
            let reached = p.written_at.filter(|&t| t <= end);
            if p.direction == Direction::Up {
                if msg.mtype == MessageType::Con && msg.code.is_request() {
                    copies
                        .entry((src, msg.message_id))
                        .or_default()
                        .push(reached);
                }
            } else if msg.mtype == MessageType::Ack && reached.is_some() {
                let key = (dst, msg.message_id);
                let j = copies[&key]
                    .iter()
                    .rposition(|c| c.is_some_and(|t| t <= p.read_at))
                    .unwrap();
                let f = first.entry(key).or_insert(j);
                *f = (*f).min(j);
            }
        }
        let sent = copies.values().map(|c| c.len() as u64).sum();
        let unnecessary = first
            .iter()
            .map(|(key, &j)| (copies[key].len() - j - 1) as u64)
            .sum();
        (sent, unnecessary)
    }

    #[test]
    fn unnecessary_retransmissions_come_from_the_emulators_packet_log() {
        if let Some(why) = coaplab_emu::emulator::unavailable() {
            eprintln!("SKIPPED: {why}");
            return;
        }
        // Zigbee (about 45 ms RTT) with 15 % loss each way. An ACK_TIMEOUT of 0.3 s: the
        // retransmissions follow losses; of 0.02 s: every first timer fires before the reply
        // can arrive, so most retransmissions are spurious.
        let mut spurious = 0;
        let timeouts = ["0.3", "0.02"];
        let logged = super::at_once(&timeouts, |ack_timeout| {
            let text = format!(
                "name = \"t\"\n[network]\npreset = \"zigbee\"\n\
                 loss = {{ model = \"bernoulli\", p = 0.15 }}\n[[flows]]\ncount = 2\n\
                 cc = \"default\"\nexchanges = 8\n[flows.params]\nack_timeout_s = {ack_timeout}\n"
            );
            let runs = Scenario::parse(&text, "t.toml").unwrap().expand(None, None);
            super::run_logged(&runs[0]).unwrap()
        });
        for (ack_timeout, (result, log)) in timeouts.into_iter().zip(logged) {
            let log = log.unwrap();
            assert_eq!(log.packets.len(), log.packet_bytes.len());
            let end = Instant::from_nanos((result.sim_time_s * 1e9) as i64);
            let (logged, expected) = direct_count(&log, end);
            // Every copy the endpoints sent is in the log (those in flight at the end too).
            let sent: u64 = result.flows.iter().map(|f| f.transmissions).sum();
            assert_eq!(logged, sent);
            let retransmissions: u64 = result.flows.iter().map(|f| f.retransmissions).sum();
            let unnecessary: u64 = result
                .flows
                .iter()
                .map(|f| f.unnecessary_retransmissions)
                .sum();
            println!(
                "ack_timeout {ack_timeout} s: {retransmissions} retransmissions, \
                 {unnecessary} unnecessary (log: {expected})"
            );
            assert!(retransmissions > 0);
            assert_eq!(unnecessary, expected);
            for f in &result.flows {
                assert!(f.completed, "{f:?}");
                assert!(f.unnecessary_retransmissions <= f.retransmissions, "{f:?}");
            }
            if ack_timeout == "0.02" {
                spurious = unnecessary;
            }
        }
        assert!(spurious > 0);
    }

    #[test]
    fn continuous_flows_complete_through_the_emulator() {
        if let Some(why) = coaplab_emu::emulator::unavailable() {
            eprintln!("SKIPPED: {why}");
            return;
        }
        // Two clients, five 60-B exchanges each, over zigbee (20 ms each way): about a second.
        let text = "name = \"t\"\n[network]\npreset = \"zigbee\"\n[[flows]]\ncount = 2\n\
                    cc = \"cocoa\"\nexchanges = 5\n";
        let runs = Scenario::parse(text, "t.toml").unwrap().expand(None, None);
        let result = super::run_one(&runs[0]).unwrap();
        assert_eq!(result.flows.len(), 2);
        for f in &result.flows {
            assert!(f.completed && f.exchanges == 5, "{f:?}");
            assert!(f.fct_s.is_some_and(|s| s > 0.1 && s < 30.0), "{f:?}");
        }
        let net = result.network.unwrap();
        assert!(
            net.up.sent_packets >= 10 && net.down.sent_packets >= 10,
            "{net:?}"
        );
        // The same run simulated: the same exchanges on the same link, in virtual time.
        let simulated = crate::sim::run_one(&runs[0]).unwrap();
        let fct = |r: &crate::results::RunResult| {
            r.flows.iter().map(|f| f.fct_s.unwrap()).collect::<Vec<_>>()
        };
        println!(
            "FCT emulated {:?} s, simulated {:?} s; {} up / {} down packets",
            fct(&result),
            fct(&simulated),
            net.up.sent_packets,
            net.down.sent_packets
        );
        for (e, s) in fct(&result).iter().zip(fct(&simulated)) {
            // Real time adds the endpoints' and the kernel's latencies; a generous bound.
            assert!(
                (e - s).abs() < 0.1 + 0.2 * s,
                "emulated {e} s vs simulated {s} s"
            );
        }
    }
}
