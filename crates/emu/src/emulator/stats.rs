//! What the emulator measured: per-direction link counters (netsim's [`LinkStats`]) plus what
//! only real time adds — packets written to the far TUN, the achieved rate, and how late each
//! write was against the model's delivery instant.

use std::fmt;

use coaplab_base::time::{Duration, Instant};
use coaplab_netsim::{Direction, Fate, LinkStats};

/// Lateness samples kept per direction; later writes are counted but not sampled.
pub const MAX_LATENESS_SAMPLES: usize = 10_000_000;

/// Scheduling lateness: actual write instant (as the write began) minus the model's delivery
/// instant.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Lateness {
    samples_ns: Vec<i64>,
}

impl Lateness {
    /// Adds one sample.
    pub fn record(&mut self, late: Duration) {
        if self.samples_ns.len() < MAX_LATENESS_SAMPLES {
            self.samples_ns.push(late.as_nanos());
        }
    }

    /// The samples, in nanoseconds, in write order.
    pub fn samples_ns(&self) -> &[i64] {
        &self.samples_ns
    }

    /// The `q`-quantile (nearest rank, `q` in [0, 1]); `None` without samples.
    pub fn quantile(&self, q: f64) -> Option<Duration> {
        quantile(&self.samples_ns, q).map(Duration::from_nanos)
    }
}

/// The nearest-rank `q`-quantile of `values` (`None` when empty).
pub fn quantile(values: &[i64], q: f64) -> Option<i64> {
    let mut v = values.to_vec();
    v.sort_unstable();
    quantile_sorted(&v, q)
}

/// The nearest-rank `q`-quantile of the ascending `sorted`: the value of rank ⌈q·n⌉, at least
/// 1 (`None` when empty). `q` is taken in parts per million and the rank computed in integers,
/// so that 0.9 of 10 samples is rank 9 (in f64, 0.9 × 10 = 9.000000000000002 would ceil to 10).
pub fn quantile_sorted(sorted: &[i64], q: f64) -> Option<i64> {
    if sorted.is_empty() {
        return None;
    }
    let ppm = (q.clamp(0.0, 1.0) * 1e6).round() as u64;
    let rank = (ppm * sorted.len() as u64).div_ceil(1_000_000).max(1);
    Some(sorted[rank as usize - 1])
}

/// One direction of the emulated link.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct DirectionStats {
    /// netsim's counters: offered, overflow and link-error drops, sent, delivered, busy time,
    /// queue high-water mark.
    pub link: LinkStats,
    /// Packets written to the far TUN device.
    pub written_packets: u64,
    /// IP bytes written.
    pub written_bytes: u64,
    /// Writes the kernel refused (the packet is lost; counted as cause `write_error`).
    pub write_errors: u64,
    /// Packets refused before the link because they exceed the MTU (`exceeds_mtu`).
    pub exceeds_mtu: u64,
    /// First packet read from the near TUN.
    pub first_read: Option<Instant>,
    /// Last packet written to the far TUN (as its write began).
    pub last_write: Option<Instant>,
    /// Lateness of each write against the model's delivery instant.
    pub lateness: Lateness,
}

impl DirectionStats {
    /// IP bits delivered per second between the first read and the last write (`None`
    /// before any delivery).
    pub fn achieved_bps(&self) -> Option<f64> {
        let span = self.last_write? - self.first_read?;
        (span > Duration::ZERO).then(|| self.written_bytes as f64 * 8.0 / span.as_secs_f64())
    }
}

/// One packet's journey, when the per-packet log is on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PacketLog {
    /// Direction.
    pub direction: Direction,
    /// IP length.
    pub ip_len: u32,
    /// When it was read from the near TUN (the model's send instant).
    pub read_at: Instant,
    /// When it reached the bottleneck FIFO (after the downlink rest-of-path).
    pub enqueued_at: Instant,
    /// FIFO backlog in bytes it found.
    pub backlog_bytes: u64,
    /// Serialization interval, unless dropped on enqueue.
    pub serialized: Option<(Instant, Instant)>,
    /// Its fate in the model (delivery instant, loss instant or overflow).
    pub fate: Fate,
    /// When its write to the far TUN began (delivered packets only): the receiver cannot
    /// have read it earlier, and may have read it before the write call returned.
    pub written_at: Option<Instant>,
}

/// Everything the emulator counted in one session.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct EmulatorStats {
    /// Client → server.
    pub up: DirectionStats,
    /// Server → client.
    pub down: DirectionStats,
    /// Packets that were not IPv4 (dropped before the link, cause `not_ipv4`).
    pub not_ipv4: u64,
    /// Time from start to stop.
    pub elapsed: Duration,
    /// Per-packet log (empty unless asked for), in the order the packets were read.
    pub packets: Vec<PacketLog>,
    /// The bytes of each packet of `packets`, at the same index (empty unless
    /// [`super::EmulatorConfig::log_bytes`]).
    pub packet_bytes: Vec<Vec<u8>>,
    /// The forwarding thread's scheduling policy, e.g. `SCHED_FIFO 10`.
    pub scheduling: String,
}

impl EmulatorStats {
    /// The counters of one direction.
    pub fn direction(&self, d: Direction) -> &DirectionStats {
        match d {
            Direction::Up => &self.up,
            Direction::Down => &self.down,
        }
    }
}

fn ms(d: Option<Duration>) -> String {
    d.map_or("-".into(), |d| format!("{:.3}", d.as_nanos() as f64 / 1e6))
}

impl fmt::Display for EmulatorStats {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(
            f,
            "link statistics after {:.3} s (forwarding thread: {})",
            self.elapsed.as_secs_f64(),
            self.scheduling
        )?;
        writeln!(
            f,
            "{:<6} {:>8} {:>9} {:>8} {:>9} {:>8} {:>8} {:>8} {:>8} {:>10} {:>10} {:>9} {:>9} {:>9}",
            "dir",
            "in_pkts",
            "in_bytes",
            "out_pkts",
            "out_bytes",
            "overflow",
            "link_err",
            "too_big",
            "wr_err",
            "queue_hw_B",
            "rate_bps",
            "late_p50",
            "late_p99",
            "late_max"
        )?;
        for (name, d) in [("up", &self.up), ("down", &self.down)] {
            let l = &d.link;
            writeln!(
                f,
                "{:<6} {:>8} {:>9} {:>8} {:>9} {:>8} {:>8} {:>8} {:>8} {:>10} {:>10} {:>9} {:>9} {:>9}",
                name,
                l.offered_packets + d.exceeds_mtu,
                l.offered_bytes,
                d.written_packets,
                d.written_bytes,
                l.overflow_drops,
                l.link_error_drops,
                d.exceeds_mtu,
                d.write_errors,
                l.queue_high_water_bytes,
                d.achieved_bps().map_or("-".into(), |r| format!("{r:.0}")),
                ms(d.lateness.quantile(0.5)),
                ms(d.lateness.quantile(0.99)),
                ms(d.lateness.quantile(1.0)),
            )?;
        }
        write!(
            f,
            "(late_* in ms: write instant minus model delivery instant; not IPv4: {})",
            self.not_ipv4
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nearest_rank_quantiles() {
        let v: Vec<i64> = (1..=100).collect();
        assert_eq!(quantile(&v, 0.5), Some(50));
        assert_eq!(quantile(&v, 0.99), Some(99));
        assert_eq!(quantile(&v, 1.0), Some(100));
        assert_eq!(quantile(&v, 0.0), Some(1));
        assert_eq!(quantile(&[], 0.5), None);
        let ten: Vec<i64> = (1..=10).collect();
        assert_eq!(quantile_sorted(&ten, 0.9), Some(9));
    }

    #[test]
    fn achieved_rate_spans_first_read_to_last_write() {
        let d = DirectionStats {
            written_bytes: 1_000,
            first_read: Some(Instant::ZERO),
            last_write: Some(Instant::from_secs(2)),
            ..DirectionStats::default()
        };
        assert_eq!(d.achieved_bps(), Some(4_000.0));
        assert_eq!(DirectionStats::default().achieved_bps(), None);
    }
}
