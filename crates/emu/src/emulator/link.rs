//! The forwarding loop: packets read from one TUN device go through netsim's star topology —
//! uplink: FIFO → serializer → propagation → loss → rest-of-path; downlink: rest-of-path →
//! FIFO → serializer → propagation → loss — and are written to the other device at the
//! delivery instant the model computed. Nothing here decides a packet's fate: that is
//! [`coaplab_netsim::Star`] (and through it [`coaplab_netsim::Link::offer`]), the same code
//! the simulator runs, fed with wall-clock [`Instant`]s.
//!
//! Time: an [`Instant`] is the nanoseconds elapsed on the monotonic clock since the emulator
//! started. The loop sleeps in `ppoll(2)` on both devices until the model's next delivery
//! (with 1 ns timer slack); each packet read is stamped when read, each write's lateness
//! against its model instant is recorded.

use std::fs::File;
use std::io::{self, BufWriter};
use std::num::NonZeroU64;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::SystemTime;

use coaplab_base::time::{Duration, Instant};
use coaplab_netsim::{client_addr, Direction, Fate, Star, Topology, SERVER_ADDR};
use rustix::event::{poll, PollFd, PollFlags, Timespec};

use super::pcap::PcapWriter;
use super::stats::{EmulatorStats, PacketLog};
use super::tun::Tun;
use super::EmulatorConfig;

/// Longest sleep between checks of the stop flag.
const MAX_SLEEP: Duration = Duration::from_millis(20);
/// Packets read from one device before the loop looks at due deliveries again.
const READ_BATCH: usize = 32;
/// Packets read from one device after the stop, at most.
const FINAL_READS: usize = 4096;
/// Receive buffer: the largest IPv4 packet.
const BUF_BYTES: usize = 65_535;

/// The emulator's clock: monotonic time since start, as netsim instants.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Clock {
    origin: std::time::Instant,
    origin_wall: SystemTime,
}

impl Clock {
    /// A clock whose zero is now.
    pub(crate) fn start() -> Clock {
        Clock {
            origin: std::time::Instant::now(),
            origin_wall: SystemTime::now(),
        }
    }

    /// Time since start.
    pub(crate) fn now(&self) -> Instant {
        let ns = self.origin.elapsed().as_nanos();
        Instant::from_nanos(i64::try_from(ns).unwrap_or(i64::MAX))
    }

    /// The monotonic instant that is this clock's zero.
    pub(crate) fn origin(&self) -> std::time::Instant {
        self.origin
    }

    /// The wall-clock time of `at`.
    pub(crate) fn wall(&self, at: Instant) -> SystemTime {
        self.origin_wall + std::time::Duration::from_nanos(at.as_nanos().max(0) as u64)
    }
}

/// Puts the calling thread under `SCHED_FIFO` at `prio` (with `chrt`, so no unsafe code
/// here); says what the thread runs under. Linux's real-time throttling
/// (`kernel.sched_rt_runtime_us`, 95 % by default) still leaves the CPU to others.
fn realtime(prio: u8) -> String {
    let tid = rustix::thread::gettid().as_raw_nonzero().to_string();
    let out = std::process::Command::new("chrt")
        .args(["-f", "-p", &prio.to_string(), &tid])
        .stdin(std::process::Stdio::null())
        .output();
    match out {
        Ok(o) if o.status.success() => format!("SCHED_FIFO {prio}"),
        Ok(o) => format!(
            "SCHED_OTHER (chrt refused: {})",
            String::from_utf8_lossy(&o.stderr).trim()
        ),
        Err(e) => format!("SCHED_OTHER (chrt: {e})"),
    }
}

/// One emulator session's forwarding state. Owns both TUN devices.
#[derive(Debug)]
pub(crate) struct Forwarder {
    client: Tun,
    server: Tun,
    star: Star,
    clock: Clock,
    pcap: Option<PcapWriter<BufWriter<File>>>,
    log_packets: bool,
    log_bytes: bool,
    realtime_priority: Option<u8>,
    written: Vec<Option<Instant>>,
    /// Each logged packet's bytes, by tag (with `log_bytes`).
    bytes: Vec<Vec<u8>>,
    next_tag: u64,
    stats: EmulatorStats,
    buf: Vec<u8>,
}

impl Forwarder {
    /// A forwarder between `client` and `server` through `config`'s network (validated by
    /// `Star`), with random streams from `config.seed`.
    pub(crate) fn new(
        client: Tun,
        server: Tun,
        config: &EmulatorConfig,
        pcap: Option<PcapWriter<BufWriter<File>>>,
        clock: Clock,
    ) -> io::Result<Forwarder> {
        let mut star = Star::new(&config.network, config.seed)
            .map_err(|e| io::Error::new(io::ErrorKind::InvalidInput, e.to_string()))?;
        star.record_packets(config.log_packets);
        Ok(Forwarder {
            client,
            server,
            star,
            clock,
            pcap,
            log_packets: config.log_packets,
            log_bytes: config.log_packets && config.log_bytes,
            realtime_priority: config.realtime_priority,
            written: Vec::new(),
            bytes: Vec::new(),
            next_tag: 0,
            stats: EmulatorStats::default(),
            buf: vec![0; BUF_BYTES],
        })
    }

    /// Forwards until `stop` is set, then returns the counters. A device error (e.g. the
    /// device vanished with its namespace) ends the loop with that error.
    pub(crate) fn run(mut self, stop: &AtomicBool) -> io::Result<EmulatorStats> {
        // The default 50 µs timer slack would be added to every wake-up.
        let _ = rustix::thread::set_current_timer_slack(NonZeroU64::new(1));
        self.stats.scheduling = match self.realtime_priority {
            Some(prio) => realtime(prio),
            None => "SCHED_OTHER (real-time priority not asked for)".to_owned(),
        };
        let mut rx = vec![0u8; BUF_BYTES];
        while !stop.load(Ordering::Relaxed) {
            let now = self.clock.now();
            self.deliver_due(now);
            let now = self.clock.now();
            let wait = self
                .star
                .poll_at()
                .map_or(MAX_SLEEP, |t| (t - now).clamp(Duration::ZERO, MAX_SLEEP));
            let timeout = Timespec {
                tv_sec: wait.as_nanos() / 1_000_000_000,
                tv_nsec: wait.as_nanos() % 1_000_000_000,
            };
            let mut fds = [
                PollFd::new(&self.client, PollFlags::IN),
                PollFd::new(&self.server, PollFlags::IN),
            ];
            match poll(&mut fds, Some(&timeout)) {
                Ok(_) => {}
                Err(rustix::io::Errno::INTR) => continue,
                Err(e) => return Err(e.into()),
            }
            let ready = [fds[0].revents(), fds[1].revents()];
            for (i, revents) in ready.into_iter().enumerate() {
                let up = i == 0;
                if revents.intersects(PollFlags::ERR | PollFlags::HUP | PollFlags::NVAL) {
                    return Err(io::Error::other(format!(
                        "TUN device {} failed ({revents:?})",
                        self.tun(up).name()
                    )));
                }
                if revents.contains(PollFlags::IN) {
                    self.read_batch(up, &mut rx, READ_BATCH)?;
                }
            }
        }
        // What the endpoints sent before the stop waits in the devices: read it into the
        // model and the log (it is not delivered any more), so that every packet sent counts.
        for up in [true, false] {
            self.read_batch(up, &mut rx, FINAL_READS)?;
        }
        Ok(self.finish())
    }

    fn tun(&self, client_side: bool) -> &Tun {
        if client_side {
            &self.client
        } else {
            &self.server
        }
    }

    /// Reads up to `limit` packets from one device into the model.
    fn read_batch(&mut self, up: bool, rx: &mut [u8], limit: usize) -> io::Result<()> {
        for _ in 0..limit {
            let n = match self.tun(up).recv(rx) {
                Ok(n) => n,
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Ok(()),
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => {
                    return Err(io::Error::new(
                        e.kind(),
                        format!("reading {}: {e}", self.tun(up).name()),
                    ))
                }
            };
            let now = self.clock.now();
            self.ingress(up, now, &rx[..n]);
        }
        Ok(())
    }

    /// Hands one packet read at `now` to the model.
    fn ingress(&mut self, up: bool, now: Instant, packet: &[u8]) {
        if packet.len() < 20 || packet[0] >> 4 != 4 {
            self.stats.not_ipv4 += 1;
            return;
        }
        let client = client_addr(0);
        let (src, dst, d) = if up {
            (client, SERVER_ADDR, &mut self.stats.up)
        } else {
            (SERVER_ADDR, client, &mut self.stats.down)
        };
        d.first_read.get_or_insert(now);
        let tag = self.next_tag;
        let ip_len = packet.len() as u32;
        match self.star.send_ip(now, src, dst, packet, ip_len, tag) {
            Ok(_) => {
                self.next_tag += 1;
                if self.log_packets {
                    self.written.push(None);
                }
                if self.log_bytes {
                    self.bytes.push(packet.to_vec());
                }
            }
            Err(_) => d.exceeds_mtu += 1,
        }
    }

    /// Writes every packet whose model delivery instant is at or before `now`.
    fn deliver_due(&mut self, now: Instant) {
        while let Some(delivery) = self.star.poll_delivery(now, &mut self.buf) {
            let up = delivery.direction == Direction::Up;
            // Stamped before the write: the far side's stack runs inside `send` and can wake
            // its reader, which may read the packet (and stamp its own clock) before this
            // thread gets back from the call. A packet stamped at or before an instant the
            // reader observed is then every packet the reader can have read by it.
            let written = self.clock.now();
            let result = self.tun(!up).send(&self.buf);
            let d = if up {
                &mut self.stats.up
            } else {
                &mut self.stats.down
            };
            if result.is_err() {
                d.write_errors += 1;
                continue;
            }
            d.written_packets += 1;
            d.written_bytes += self.buf.len() as u64;
            d.last_write = Some(written);
            d.lateness.record(written - delivery.at);
            if let Some(slot) = self.written.get_mut(delivery.tag as usize) {
                *slot = Some(written);
            }
            if let Some(pcap) = &mut self.pcap {
                if pcap.write(self.clock.wall(delivery.at), &self.buf).is_err() {
                    self.pcap = None;
                    eprintln!("coaplab emulator: writing the capture failed; capture stopped");
                }
            }
        }
    }

    fn finish(mut self) -> EmulatorStats {
        if let Some(pcap) = self.pcap.take() {
            let _ = pcap.finish();
        }
        let mut s = self.stats;
        s.up.link = self.star.stats(Direction::Up);
        s.down.link = self.star.stats(Direction::Down);
        s.elapsed = self.clock.now() - Instant::ZERO;
        // Packets still inside the model are recorded when their journey ends: end them all
        // (nothing is written any more) so that the log holds every packet read.
        let far = Instant::ZERO + Duration::from_secs(1 << 30);
        while self.star.in_flight() > 0 {
            if self.star.poll_delivery(far, &mut self.buf).is_none() {
                break;
            }
        }
        let mut records = self.star.take_records();
        records.sort_by_key(|r| r.tag);
        if self.log_bytes {
            s.packet_bytes = records
                .iter()
                .map(|r| {
                    self.bytes
                        .get_mut(r.tag as usize)
                        .map(std::mem::take)
                        .unwrap_or_default()
                })
                .collect();
        }
        s.packets = records
            .into_iter()
            .map(|r| PacketLog {
                direction: r.direction,
                ip_len: r.ip_len,
                read_at: r.sent_at,
                enqueued_at: r.enqueued_at,
                backlog_bytes: r.backlog_bytes,
                serialized: r.serialized,
                fate: r.fate,
                written_at: match r.fate {
                    Fate::Delivered(_) => self.written.get(r.tag as usize).copied().flatten(),
                    _ => None,
                },
            })
            .collect();
        s
    }
}
