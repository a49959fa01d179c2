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
//! A run whose flows are all CoAP over TCP runs in [`tcp`] on the kernel's TCP instead.
//!
//! What the simulator knows and an emulated run cannot: which copy of a request a delivered
//! reply answers (real packets carry no tag), so `unnecessary_retransmissions` is always 0 here.

use std::collections::{HashMap, VecDeque};
use std::net::{IpAddr, SocketAddr};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration as StdDuration;

use coaplab_cc::time::Instant;
use coaplab_emu::emulator::sockets::UdpSet;
use coaplab_emu::emulator::{Emulator, EmulatorConfig, CLIENT_ADDR, SERVER_ADDR as REAL_SERVER};
use coaplab_netsim::{Delivery, Direction, PacketId, SERVER_ADDR};

use super::{flow_of, link_record, tag, Network, Sim};
use crate::metrics::IP_UDP_HEADER_BYTES;
use crate::results::{NetworkRecord, RunError, RunResult};
use crate::scenario::RunSpec;

mod tcp;

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
    interrupted()?;
    let tcp_flows = spec.config.flows.iter().filter(|f| f.is_tcp()).count();
    if tcp_flows > 0 && tcp_flows == spec.config.flows.len() {
        return tcp::run(spec);
    }
    if tcp_flows > 0 {
        return Err(RunError::NotAvailable(
            "UDP and TCP flows in one run (issue 5)".to_string(),
        ));
    }
    let mut config = EmulatorConfig::new(spec.config.network.clone());
    config.seed = spec.seed;
    let emu = Emulator::start(config).map_err(|e| RunError::Setup(format!("emulator: {e}")))?;
    let stride = spec.config.total_flows().div_ceil(254).max(1);
    let net = EmulatedNet::new(emu, stride)?;
    let mut sim = Sim::with_network(spec, net)?;
    sim.run()?;
    sim.finish()
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
    fn client_socket(&mut self, model: SocketAddr) -> Result<usize, String> {
        if let Some(&i) = self.socket_of_model.get(&model) {
            return Ok(i);
        }
        let emu = self.emu.as_ref().ok_or("the emulator has stopped")?;
        let i = self
            .sockets
            .bind(
                emu.client_netns(),
                SocketAddr::new(IpAddr::V4(CLIENT_ADDR), 0),
            )
            .map_err(|e| format!("client socket: {e}"))?;
        let real = self.sockets.local_addr(i).map_err(|e| e.to_string())?;
        self.model_of_socket.push(Some(model));
        self.socket_of_model.insert(model, i);
        self.model_of_real.insert(real, model);
        self.real_of_model.insert(model, real);
        Ok(i)
    }
}

impl Network for EmulatedNet {
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
        bytes: &[u8],
        _tag: u64,
    ) -> Result<(), String> {
        let (socket, to) = if dst == SERVER_ADDR {
            let real_server = SocketAddr::new(IpAddr::V4(REAL_SERVER), SERVER_ADDR.port());
            (self.client_socket(src)?, real_server)
        } else if src == SERVER_ADDR {
            let to = *self
                .real_of_model
                .get(&dst)
                .ok_or_else(|| format!("{dst} never sent anything"))?;
            (self.server, to)
        } else {
            return Err(format!("{src} -> {dst}: only clients and the server talk"));
        };
        // A refused send is a lost datagram, as on a real host.
        let _ = self.sockets.send_to(socket, bytes, to);
        Ok(())
    }

    fn record(&mut self, now: Instant) -> Result<NetworkRecord, RunError> {
        let emu = self
            .emu
            .take()
            .ok_or_else(|| RunError::Setup("the emulator has stopped".into()))?;
        let stats = emu.finish().map_err(io_setup("emulator"))?;
        Ok(NetworkRecord {
            down: link_record(stats.down.link),
            up: link_record(stats.up.link),
            sim_time_s: now.as_secs_f64(),
        })
    }
}

#[cfg(test)]
mod tests {
    use crate::scenario::Scenario;

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
