//! One direction of the bottleneck link (docs/experiments.md §1.1): drop-tail byte FIFO →
//! serializer → propagation delay → loss stage.
//!
//! The interface takes packet lengths and instants only ([`Link::offer`]), so the simulator
//! drives it with virtual time and the emulator with the wall clock and real packets. With a
//! constant (or FIFO-jittered) propagation delay every stage is deterministic once a packet is
//! admitted, so [`Link::offer`] returns the packet's whole fate at once: dropped on enqueue,
//! or serialized over `[ser_start, ser_end)` and then delivered or lost at the far end. With
//! constant delay `D` this reproduces netem's recurrence `e_n = max(a_n + D, e_{n−1}) + tx_n`.
//! A [`trace`] (known in advance) replaces the constant rate and delay with a time-varying
//! schedule; the fate is still whole at admission.

pub mod delay;
pub mod loss;
pub mod queue;
pub mod serializer;
pub mod trace;

use std::sync::Arc;

use coaplab_base::rng::SeededRandom;
use coaplab_base::time::{Duration, Instant};

use self::delay::{DelayConfig, DelayStage};
use self::loss::{LossModel, LossStage};
use self::queue::ByteFifo;
use self::serializer::Serializer;
use self::trace::traced::TracedStage;
use self::trace::LinkTrace;

/// Parameters of one link direction.
#[derive(Debug, Clone, PartialEq)]
pub struct LinkConfig {
    /// Serializer rate in bit/s (1 kbit/s = 1000 bit/s).
    pub rate_bps: u64,
    /// Propagation delay (and optional jitter) between serializer and loss stage.
    pub propagation: DelayConfig,
    /// FIFO capacity in charged bytes.
    pub buffer_bytes: u64,
    /// Bytes charged per packet on top of the IP length (L2 header the qdisc sees).
    pub overhead_bytes: u32,
    /// Whether the FIFO charges `ip_len + overhead_bytes` (true) or the bare IP length.
    pub queue_counts_overhead: bool,
    /// Whether the packet being serialized still counts in the backlog.
    pub count_in_service: bool,
    /// Token-bucket depth for tbf-style bursts; 0 = pure serializer.
    pub burst_bytes: u64,
    /// Link-error model of the loss stage.
    pub loss: LossModel,
    /// A time-varying rate and delay ([`trace`]): when set, it replaces `rate_bps` and
    /// `propagation` (which must then have no jitter; `burst_bytes` must be 0).
    pub trace: Option<Arc<LinkTrace>>,
}

/// The random streams one link direction uses, named by purpose.
#[derive(Debug, Clone)]
pub struct LinkStreams {
    /// Propagation-delay jitter.
    pub jitter: SeededRandom,
    /// Per-packet loss decisions.
    pub loss: SeededRandom,
    /// Loss-state trajectory (time-based chain).
    pub loss_chain: SeededRandom,
}

impl LinkStreams {
    /// The streams `{prefix}/jitter`, `{prefix}/loss` and `{prefix}/loss-chain` of the run.
    pub fn named(run_seed: u64, prefix: &str) -> Self {
        LinkStreams {
            jitter: crate::rng::stream(run_seed, &format!("{prefix}/jitter")),
            loss: crate::rng::stream(run_seed, &format!("{prefix}/loss")),
            loss_chain: crate::rng::stream(run_seed, &format!("{prefix}/loss-chain")),
        }
    }
}

/// What happened to an offered packet.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LinkOutcome {
    /// Bytes the serializer charges: IP length + overhead.
    pub charged_bytes: u32,
    /// FIFO backlog in bytes found on arrival (before this packet).
    pub backlog_bytes: u64,
    /// FIFO backlog in packets found on arrival.
    pub backlog_packets: u32,
    /// The packet's fate.
    pub result: LinkResult,
}

/// The fate of an offered packet.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LinkResult {
    /// Dropped on enqueue: the FIFO was full (cause `buffer_overflow`).
    Overflow,
    /// Serialized over `[ser_start, ser_end)`, then propagated and lost to a link error at
    /// `at` (cause `link_error`): it used link time.
    Lost {
        /// Start of serialization.
        ser_start: Instant,
        /// End of serialization.
        ser_end: Instant,
        /// When it entered (and died in) the loss stage.
        at: Instant,
    },
    /// Serialized, propagated and handed to the far side at `at`.
    Delivered {
        /// Start of serialization.
        ser_start: Instant,
        /// End of serialization.
        ser_end: Instant,
        /// Arrival at the far end of the link.
        at: Instant,
    },
}

/// Counters of one link direction. Lengths are IP lengths unless named `charged`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct LinkStats {
    /// Packets offered to the FIFO.
    pub offered_packets: u64,
    /// IP bytes offered.
    pub offered_bytes: u64,
    /// Packets dropped on enqueue (`buffer_overflow`).
    pub overflow_drops: u64,
    /// Packets out of the serializer.
    pub sent_packets: u64,
    /// IP bytes out of the serializer.
    pub sent_bytes: u64,
    /// Charged bytes out of the serializer.
    pub sent_charged_bytes: u64,
    /// Packets lost after the serializer (`link_error`).
    pub link_error_drops: u64,
    /// Packets delivered at the far end.
    pub delivered_packets: u64,
    /// IP bytes delivered.
    pub delivered_bytes: u64,
    /// Serializer busy time (Σ 8·w/R, exact to the ns).
    pub busy_time: Duration,
    /// Largest FIFO backlog in charged bytes, right after an admission.
    pub queue_high_water_bytes: u64,
    /// Largest FIFO backlog in packets, right after an admission.
    pub queue_high_water_packets: u32,
}

/// One link direction in operation.
#[derive(Debug, Clone)]
pub struct Link {
    overhead_bytes: u32,
    queue_counts_overhead: bool,
    count_in_service: bool,
    queue: ByteFifo,
    serializer: Serializer,
    propagation: DelayStage,
    /// The serializer and propagation under a trace, instead of the two above.
    traced: Option<TracedStage>,
    loss: LossStage,
    last_offer: Instant,
    stats: LinkStats,
}

impl Link {
    /// A link in its initial state (empty queue, idle serializer, loss chain at time 0). The
    /// configuration is assumed valid (see [`crate::config::NetworkConfig::validate`]).
    pub fn new(config: &LinkConfig, streams: LinkStreams) -> Self {
        Link {
            overhead_bytes: config.overhead_bytes,
            queue_counts_overhead: config.queue_counts_overhead,
            count_in_service: config.count_in_service,
            queue: ByteFifo::new(config.buffer_bytes),
            serializer: Serializer::new(config.rate_bps, config.burst_bytes),
            propagation: DelayStage::new(config.propagation, streams.jitter),
            traced: config.trace.clone().map(TracedStage::new),
            loss: LossStage::new(&config.loss, streams.loss, streams.loss_chain),
            last_offer: Instant::from_nanos(i64::MIN),
            stats: LinkStats::default(),
        }
    }

    /// Offers a packet of `ip_len` bytes to the FIFO at `now` and returns its fate.
    ///
    /// Calls must come with non-decreasing `now` (an earlier instant is treated as the latest
    /// one seen, so the FIFO never runs backwards).
    pub fn offer(&mut self, now: Instant, ip_len: u32) -> LinkOutcome {
        let now = now.max(self.last_offer);
        self.last_offer = now;
        self.queue.retire(now);
        let charged_bytes = ip_len.saturating_add(self.overhead_bytes);
        let queue_charge = if self.queue_counts_overhead {
            charged_bytes
        } else {
            ip_len
        };
        let backlog_bytes = self.queue.backlog_bytes();
        let backlog_packets = self.queue.backlog_packets();
        self.stats.offered_packets += 1;
        self.stats.offered_bytes += u64::from(ip_len);
        let mut outcome = LinkOutcome {
            charged_bytes,
            backlog_bytes,
            backlog_packets,
            result: LinkResult::Overflow,
        };
        if !self.queue.fits(queue_charge) {
            self.stats.overflow_drops += 1;
            return outcome;
        }
        let (ser_start, ser_end, at) = match &mut self.traced {
            None => {
                let (start, end) = self.serializer.transmit(now, charged_bytes);
                (start, end, self.propagation.release(end))
            }
            Some(traced) => {
                let t = traced.transmit(now, charged_bytes);
                (t.ser_start, t.ser_end, t.at)
            }
        };
        let leaves_at = if self.count_in_service {
            ser_end
        } else {
            ser_start
        };
        self.queue.admit(leaves_at, queue_charge);
        let s = &mut self.stats;
        s.queue_high_water_bytes = s.queue_high_water_bytes.max(self.queue.backlog_bytes());
        s.queue_high_water_packets = s.queue_high_water_packets.max(self.queue.backlog_packets());
        s.sent_packets += 1;
        s.sent_bytes += u64::from(ip_len);
        s.sent_charged_bytes += u64::from(charged_bytes);
        outcome.result = if self.loss.lose(at) {
            s.link_error_drops += 1;
            LinkResult::Lost {
                ser_start,
                ser_end,
                at,
            }
        } else {
            s.delivered_packets += 1;
            s.delivered_bytes += u64::from(ip_len);
            LinkResult::Delivered {
                ser_start,
                ser_end,
                at,
            }
        };
        outcome
    }

    /// Counters so far.
    pub fn stats(&self) -> LinkStats {
        LinkStats {
            busy_time: match &self.traced {
                None => self.serializer.busy_time(),
                Some(traced) => traced.busy_time(),
            },
            ..self.stats
        }
    }
}
