//! The TUN/network-namespace link emulator (docs/experiments.md §1.3).
//!
//! ```text
//!  namespace <prefix>-c                 this process                  namespace <prefix>-s
//!  198.18.0.1 ── TUN <dev>c ══ read ─▶ netsim Star (uplink) ─▶ write ══ TUN <dev>s ── 198.18.0.2
//!                          ◀═ write ◀─ netsim Star (downlink) ◀─ read ═
//! ```
//!
//! [`Emulator::start`] creates two fresh network namespaces (`client` and `server`, names
//! unique per process and session), creates one TUN device per side in the caller's
//! namespace, moves each into its namespace, gives it its address, the link MTU and a route
//! to the peer with `initcwnd 4`, writes the kernel TCP settings of docs/experiments.md §5.3, and
//! starts one thread that owns both devices and runs [`link`]'s forwarding loop. Every packet's
//! fate is decided by `coaplab_netsim::Star` — the simulator's own link model — against the wall
//! clock. [`Emulator::finish`] (or dropping the [`Emulator`]) ends every process left in the
//! namespaces, stops the thread, closes the devices and deletes the namespaces.
//!
//! Modules: [`tun`] (the device), [`netns`] (namespaces and kernel settings through
//! iproute2), [`link`] (the loop), [`stats`] (counters, lateness), [`pcap`] (capture file),
//! [`sockets`] (UDP sockets created inside the namespaces, for programs that drive endpoints
//! themselves), [`tcp_sockets`] (the same for kernel TCP: listener, non-blocking connects,
//! `TCP_CONGESTION`, `TCP_INFO`), [`watchdog`] (removes a session whose process was killed
//! with SIGKILL), [`reap`] (removes leftovers of dead sessions whose watchdog died too).
//!
//! Names: namespaces `cl-<pid>-<start>-<n>-c|s` (pid and start time of the owning process,
//! session number), TUN devices `cl<pid>x<n>c|s` ([`reap::NamespaceName`],
//! [`reap::DeviceName`]).

pub mod link;
pub mod netns;
pub use crate::pcap;
pub mod reap;
pub mod sockets;
pub mod stats;
pub mod tcp_sockets;
pub mod tun;
pub mod watchdog;

use std::fs::File;
use std::io::{self, BufWriter};
use std::net::Ipv4Addr;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;

use coaplab_netsim::NetworkConfig;

use self::link::{Clock, Forwarder};
use self::netns::{Namespace, SettingOutcome, KERNEL_SETTINGS};
use self::pcap::PcapWriter;
use self::reap::{NamespaceName, Removed, Side};
pub use self::stats::{DirectionStats, EmulatorStats, Lateness, PacketLog};
use self::tun::Tun;
use self::watchdog::Watchdog;

/// The client namespace's address.
pub const CLIENT_ADDR: Ipv4Addr = Ipv4Addr::new(198, 18, 0, 1);
/// The server namespace's address.
pub const SERVER_ADDR: Ipv4Addr = Ipv4Addr::new(198, 18, 0, 2);
/// Initial congestion window (segments) set on the route to the peer (docs/experiments.md §5.3).
pub const INITCWND: u32 = 4;

/// What to emulate.
#[derive(Debug, Clone)]
pub struct EmulatorConfig {
    /// The link (both directions and rest-of-path), as the simulator takes it.
    pub network: NetworkConfig,
    /// Seed of the link's random streams (loss, jitter), as in the simulator.
    pub seed: u64,
    /// Write the packets as delivered to this pcap file.
    pub pcap: Option<PathBuf>,
    /// Keep a per-packet log in the final [`EmulatorStats::packets`].
    pub log_packets: bool,
    /// With `log_packets`, also keep every logged packet's bytes (from its IP header on) in
    /// [`EmulatorStats::packet_bytes`] (memory grows with the traffic).
    pub log_bytes: bool,
    /// `net.ipv4.tcp_congestion_control` in both namespaces (e.g. `reno`, `bbr`).
    pub tcp_congestion_control: String,
    /// Run the forwarding thread under `SCHED_FIFO` at this priority (1..=99), so that other
    /// busy processes delay its wake-ups less; `None`: normal scheduling. If the kernel
    /// refuses, the thread runs normally and [`EmulatorStats::scheduling`] says why.
    pub realtime_priority: Option<u8>,
    /// `net.ipv4.tcp_fastopen` = 3 (client and server) in both namespaces instead of
    /// docs/experiments.md §5.3's 0, for the TCP Fast Open variants of the HTTP comparison
    /// (docs/experiments.md §8e).
    pub tcp_fastopen: bool,
}

impl EmulatorConfig {
    /// `network` with seed 1, no capture, no per-packet log (nor bytes), New Reno,
    /// `SCHED_FIFO` 10, no TCP Fast Open.
    pub fn new(network: NetworkConfig) -> Self {
        EmulatorConfig {
            network,
            seed: 1,
            pcap: None,
            log_packets: false,
            log_bytes: false,
            tcp_congestion_control: "reno".to_owned(),
            realtime_priority: Some(10),
            tcp_fastopen: false,
        }
    }
}

/// Why the emulator cannot run here, if it cannot: not root, or no `/dev/net/tun`, or no `ip`.
pub fn unavailable() -> Option<String> {
    if !rustix::process::geteuid().is_root() {
        return Some("the emulator needs root (network namespaces and TUN devices)".into());
    }
    if !std::path::Path::new("/dev/net/tun").exists() {
        return Some("/dev/net/tun does not exist".into());
    }
    let ip = std::process::Command::new("ip")
        .arg("-V")
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .status();
    if !ip.is_ok_and(|s| s.success()) {
        return Some("iproute2's `ip` is not installed".into());
    }
    None
}

/// A running emulator: two namespaces joined by the emulated link.
#[derive(Debug)]
pub struct Emulator {
    // Field order is drop order: the thread is stopped in `Drop`, then the namespaces go.
    thread: Option<JoinHandle<io::Result<EmulatorStats>>>,
    stop: Arc<AtomicBool>,
    client: Namespace,
    server: Namespace,
    // Last: woken after the namespaces are gone, it finds nothing to do.
    watchdog: Watchdog,
    reaped: Vec<Removed>,
    settings: Vec<SettingOutcome>,
    mtu: u32,
    origin: std::time::Instant,
}

/// Sessions started by this process (makes names unique within it).
static SESSIONS: AtomicU32 = AtomicU32::new(0);

impl Emulator {
    /// Removes the leftovers of dead sessions ([`reap::reap`]), sets everything up and starts
    /// forwarding. On error, whatever was created is removed. A [`Watchdog`] removes the
    /// namespaces if this process dies without dropping the emulator.
    pub fn start(config: EmulatorConfig) -> io::Result<Emulator> {
        config
            .network
            .validate()
            .map_err(|e| io::Error::new(io::ErrorKind::InvalidInput, e.to_string()))?;
        if let Some(why) = unavailable() {
            return Err(io::Error::new(io::ErrorKind::PermissionDenied, why));
        }
        let cc = &config.tcp_congestion_control;
        if cc.is_empty() || !cc.bytes().all(|c| c.is_ascii_alphanumeric() || c == b'_') {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("bad TCP congestion control name {cc:?}"),
            ));
        }
        // A failure to look for leftovers does not stop the session.
        let reaped = reap::reap().unwrap_or_default();
        let session = SESSIONS.fetch_add(1, Ordering::Relaxed);
        let pid = std::process::id();
        let netns_name = |side| NamespaceName {
            pid,
            start_ticks: reap::own_start_ticks(),
            session,
            side,
        };
        let names = [
            netns_name(Side::Client).to_string(),
            netns_name(Side::Server).to_string(),
        ];
        let watchdog = Watchdog::start(&[&names[0], &names[1]])?;
        let client = Namespace::create(&names[0])?;
        let server = Namespace::create(&names[1])?;
        let mut wanted: Vec<(&str, &str)> = KERNEL_SETTINGS.to_vec();
        wanted.push(("net.ipv4.tcp_congestion_control", cc));
        if config.tcp_fastopen {
            for w in &mut wanted {
                if w.0 == "net.ipv4.tcp_fastopen" {
                    w.1 = "3";
                }
            }
        }
        let mut settings = client.apply_settings(&wanted)?;
        let server_settings = server.apply_settings(&wanted)?;
        // Report a setting as applied only when both namespaces hold it.
        for (c, s) in settings.iter_mut().zip(server_settings) {
            if !s.applied() {
                *c = s;
            }
        }
        let mtu = config.network.mtu_bytes;
        let client_tun = Tun::create(&netns_name(Side::Client).device().to_string())?;
        client.adopt(client_tun.name())?;
        let server_tun = Tun::create(&netns_name(Side::Server).device().to_string())?;
        server.adopt(server_tun.name())?;
        client.configure_link(client_tun.name(), CLIENT_ADDR, SERVER_ADDR, mtu, INITCWND)?;
        server.configure_link(server_tun.name(), SERVER_ADDR, CLIENT_ADDR, mtu, INITCWND)?;
        let pcap = match &config.pcap {
            Some(path) => Some(
                PcapWriter::new(BufWriter::new(File::create(path)?))
                    .map_err(|e| io::Error::new(e.kind(), format!("{}: {e}", path.display())))?,
            ),
            None => None,
        };
        let clock = Clock::start();
        let forwarder = Forwarder::new(client_tun, server_tun, &config, pcap, clock)?;
        let stop = Arc::new(AtomicBool::new(false));
        let flag = Arc::clone(&stop);
        let thread = std::thread::Builder::new()
            .name("coaplab-emulator".into())
            .spawn(move || forwarder.run(&flag))?;
        Ok(Emulator {
            thread: Some(thread),
            stop,
            client,
            server,
            watchdog,
            reaped,
            settings,
            mtu,
            origin: clock.origin(),
        })
    }

    /// The client namespace's name.
    pub fn client_netns(&self) -> &Namespace {
        &self.client
    }

    /// The server namespace's name.
    pub fn server_netns(&self) -> &Namespace {
        &self.server
    }

    /// The leftovers of dead sessions removed before this one started.
    pub fn reaped(&self) -> &[Removed] {
        &self.reaped
    }

    /// The process id of the session's [`Watchdog`].
    pub fn watchdog_pid(&self) -> u32 {
        self.watchdog.pid()
    }

    /// The link MTU (both TUN devices).
    pub fn mtu(&self) -> u32 {
        self.mtu
    }

    /// The monotonic instant that is the emulator's time zero: a packet logged at
    /// [`coaplab_base::time::Instant`] `t` was handled at `origin + t`.
    pub fn origin(&self) -> std::time::Instant {
        self.origin
    }

    /// Each kernel setting asked for and what the kernel holds (both namespaces).
    pub fn kernel_settings(&self) -> &[SettingOutcome] {
        &self.settings
    }

    /// Whether the forwarding thread has stopped on its own (a device error).
    pub fn has_failed(&self) -> bool {
        self.thread.as_ref().is_some_and(JoinHandle::is_finished)
    }

    /// Ends every process in both namespaces, stops forwarding and returns the counters; the
    /// namespaces are deleted when `self` drops at the end of this call.
    pub fn finish(mut self) -> io::Result<EmulatorStats> {
        self.client.end_processes(netns::TERM_GRACE);
        self.server.end_processes(netns::TERM_GRACE);
        self.stop_thread()
    }

    fn stop_thread(&mut self) -> io::Result<EmulatorStats> {
        self.stop.store(true, Ordering::Relaxed);
        match self.thread.take() {
            Some(t) => t
                .join()
                .unwrap_or_else(|_| Err(io::Error::other("the emulator thread panicked"))),
            None => Err(io::Error::other("the emulator was already stopped")),
        }
    }
}

impl Drop for Emulator {
    fn drop(&mut self) {
        if self.thread.is_some() {
            let _ = self.stop_thread();
        }
    }
}
