//! Delivery-rate sampling as in Linux `net/ipv4/tcp_rate.c` (4.x/5.x), the input of BBR.
//!
//! Every transmission snapshots the connection's delivery counters into the segment
//! ([`RateSnapshot`], `tcp_rate_skb_sent`); an ACK that delivers segments builds one
//! [`RateSample`] from the most recently sent of them (`tcp_rate_skb_delivered`,
//! `tcp_rate_gen`): `delivered / max(send interval, ACK interval)`.
//!
//! Without SACK, "delivered" counts what Linux counts for Reno (`tcp_count_delivered` in
//! `tcp_add_reno_sack` and `tcp_remove_reno_sacks`): one segment per duplicate ACK that grew
//! the dupack count, and on a cumulative ACK the segments not already counted by dupacks (at
//! least one). A duplicate ACK delivers no segment of the queue, so its sample has no timing
//! (`delivered = −1`, as in the kernel) but its `acked_sacked` still counts.
//!
//! Times are microseconds, as the kernel's `tcp_mstamp`. `tcp_min_rtt` (a 300-s windowed
//! minimum in Linux) is kept as the plain minimum of the connection's samples: every run here
//! is short against 300 s of unchanging propagation delay, or dominated by it.

use coaplab_base::time::Instant;

/// What a transmission records in its segment (`TCP_SKB_CB(skb)->tx`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RateSnapshot {
    /// `tp->delivered` when sent.
    pub delivered: u64,
    /// `tp->delivered_mstamp` when sent.
    pub delivered_at: Instant,
    /// `tp->first_tx_mstamp` when sent: the start of this sample's send phase.
    pub first_tx_at: Instant,
    /// The connection was application-limited when this was sent.
    pub app_limited: bool,
}

/// What an acknowledged segment contributes (`tcp_rate_skb_delivered`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DeliveredSegment {
    /// Its snapshot from the last (re)transmission.
    pub tx: RateSnapshot,
    /// Its last (re)transmission instant (`tcp_skb_timestamp_us`).
    pub sent_at: Instant,
    /// It was ever retransmitted (`TCPCB_RETRANS`).
    pub retrans: bool,
}

/// One ACK's rate sample (`struct rate_sample`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RateSample {
    /// `tp->delivered` snapshot of the most recently sent delivered segment; 0 = none.
    pub prior_delivered: u64,
    /// Its `delivered_mstamp`; `None` when no segment was delivered by this ACK.
    pub prior_at: Option<Instant>,
    /// Segments delivered over the sample's interval; −1 = no valid sample.
    pub delivered: i64,
    /// Sample interval in µs; −1 = no valid sample.
    pub interval_us: i64,
    /// RTT of the most recently sent, never retransmitted acknowledged segment (µs); −1 = none.
    pub rtt_us: i64,
    /// Segments newly marked lost while processing this ACK.
    pub losses: u32,
    /// Segments newly delivered by this ACK (cumulatively or by a duplicate ACK).
    pub acked_sacked: u32,
    /// Segments in flight before this ACK (`tcp_packets_in_flight`).
    pub prior_in_flight: u32,
    /// The sample's segment was sent while application-limited.
    pub is_app_limited: bool,
    /// The sample's segment was a retransmission.
    pub is_retrans: bool,
    /// The ACK may have been delayed by the receiver (`FLAG_ACK_MAYBE_DELAYED`).
    pub is_ack_delayed: bool,
}

impl RateSample {
    /// An empty sample for an ACK with `prior_in_flight` segments outstanding.
    pub fn new(prior_in_flight: u32) -> Self {
        RateSample {
            prior_delivered: 0,
            prior_at: None,
            delivered: -1,
            interval_us: -1,
            rtt_us: -1,
            losses: 0,
            acked_sacked: 0,
            prior_in_flight,
            is_app_limited: false,
            is_retrans: false,
            is_ack_delayed: false,
        }
    }
}

/// The connection's delivery bookkeeping (`tp->delivered`, `delivered_mstamp`,
/// `first_tx_mstamp`, `app_limited`, `tcp_min_rtt`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RateState {
    /// Segments delivered so far (the SYN or SYN-ACK counts one, as in Linux).
    pub delivered: u64,
    /// When `delivered` last grew.
    pub delivered_at: Instant,
    /// Send time of the most recently delivered segment.
    pub first_tx_at: Instant,
    /// Non-zero while application-limited: the `delivered` count that ends the bubble.
    pub app_limited: u64,
    /// Smallest RTT seen (µs), `None` before any sample.
    pub min_rtt_us: Option<i64>,
    /// Send time (`sent_at`) of the sample's segment, while an ACK is being processed.
    sample_sent_at: Option<Instant>,
    /// First segment's own send phase start, while an ACK is being processed.
    sample_first_tx_at: Instant,
}

impl Default for RateState {
    fn default() -> Self {
        RateState {
            delivered: 0,
            delivered_at: Instant::ZERO,
            first_tx_at: Instant::ZERO,
            app_limited: 0,
            min_rtt_us: None,
            sample_sent_at: None,
            sample_first_tx_at: Instant::ZERO,
        }
    }
}

impl RateState {
    /// `tcp_rate_skb_sent`: the snapshot for a segment sent at `now` with `packets_out`
    /// segments already outstanding.
    pub fn on_send(&mut self, now: Instant, packets_out: u32) -> RateSnapshot {
        if packets_out == 0 {
            // Nothing in flight: the sample starts now, not at the last ACK.
            self.first_tx_at = now;
            self.delivered_at = now;
        }
        RateSnapshot {
            delivered: self.delivered,
            delivered_at: self.delivered_at,
            first_tx_at: self.first_tx_at,
            app_limited: self.app_limited != 0,
        }
    }

    /// `tcp_rate_skb_delivered` for one cumulatively acknowledged segment.
    pub fn on_delivered(&mut self, rs: &mut RateSample, seg: &DeliveredSegment) {
        if rs.prior_delivered == 0 || seg.tx.delivered > rs.prior_delivered {
            rs.prior_delivered = seg.tx.delivered;
            rs.prior_at = Some(seg.tx.delivered_at);
            rs.is_app_limited = seg.tx.app_limited;
            rs.is_retrans = seg.retrans;
            // The most recently acknowledged segment's send time starts the next send phase.
            self.first_tx_at = seg.sent_at;
            self.sample_sent_at = Some(seg.sent_at);
            self.sample_first_tx_at = seg.tx.first_tx_at;
        }
    }

    /// An RTT sample (µs) for `tcp_min_rtt`.
    pub fn on_rtt(&mut self, rtt_us: i64) {
        self.min_rtt_us = Some(self.min_rtt_us.map_or(rtt_us, |m| m.min(rtt_us)));
    }

    /// `tcp_rate_gen`: completes `rs` at `now` after `delivered` segments were newly delivered
    /// and `lost` newly marked lost (both already added to the counters).
    pub fn generate(&mut self, now: Instant, delivered: u32, lost: u32, rs: &mut RateSample) {
        // The application-limited bubble ends once it is acknowledged.
        if self.app_limited != 0 && self.delivered > self.app_limited {
            self.app_limited = 0;
        }
        if delivered > 0 {
            self.delivered_at = now;
        }
        rs.acked_sacked = delivered;
        rs.losses = lost;
        let sent_at = self.sample_sent_at.take();
        let (Some(prior_at), Some(sent_at)) = (rs.prior_at, sent_at) else {
            rs.delivered = -1;
            rs.interval_us = -1;
            return;
        };
        rs.delivered = (self.delivered - rs.prior_delivered) as i64;
        // Send and ACK phases of the window; the longer one is the safe interval.
        let snd_us = sent_at.as_micros() - self.sample_first_tx_at.as_micros();
        let ack_us = now.as_micros() - prior_at.as_micros();
        rs.interval_us = snd_us.max(ack_us);
        if self.min_rtt_us.is_some_and(|m| rs.interval_us < m) {
            rs.interval_us = -1;
        }
    }

    /// `tcp_rate_check_app_limited`, called when the application writes: marks the
    /// connection application-limited when less than one segment waits, the window is not
    /// full and no lost segment waits for retransmission.
    pub fn check_app_limited(
        &mut self,
        unsent_bytes: u64,
        mss: u32,
        in_flight: u32,
        cwnd: u32,
        lost_waiting: bool,
    ) {
        if unsent_bytes < u64::from(mss) && in_flight < cwnd && !lost_waiting {
            self.app_limited = (self.delivered + u64::from(in_flight)).max(1);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(ms: i64) -> Instant {
        Instant::from_millis(ms)
    }

    #[test]
    fn sample_takes_the_longer_of_send_and_ack_phases() {
        let mut r = RateState {
            delivered: 1,
            ..RateState::default()
        };
        // Two segments sent back to back at 0 and 10 ms with nothing outstanding before.
        let a = r.on_send(at(0), 0);
        let b = r.on_send(at(10), 1);
        assert_eq!(
            (a.delivered, a.first_tx_at, b.first_tx_at),
            (1, at(0), at(0))
        );
        // One ACK for both at 700 ms.
        let mut rs = RateSample::new(2);
        for (tx, sent) in [(a, at(0)), (b, at(10))] {
            let seg = DeliveredSegment {
                tx,
                sent_at: sent,
                retrans: false,
            };
            r.on_delivered(&mut rs, &seg);
        }
        r.delivered += 2;
        r.generate(at(700), 2, 0, &mut rs);
        // Both carry the same snapshot: the first one acknowledged gives the sample (as in
        // the kernel, a later segment must have a strictly higher `delivered`). ACK phase
        // 700 ms: 2 segments over 700 ms.
        assert_eq!((rs.delivered, rs.interval_us), (2, 700_000));
        assert_eq!((r.delivered_at, r.first_tx_at), (at(700), at(0)));
    }

    #[test]
    fn duplicate_ack_counts_but_has_no_timing_and_bubble_ends_when_acked() {
        let mut r = RateState {
            delivered: 5,
            ..RateState::default()
        };
        r.check_app_limited(0, 256, 2, 4, false);
        assert_eq!(r.app_limited, 7);
        let mut rs = RateSample::new(3);
        r.delivered += 1;
        r.generate(at(5), 1, 0, &mut rs);
        assert_eq!((rs.delivered, rs.interval_us, rs.acked_sacked), (-1, -1, 1));
        r.delivered = 8;
        r.generate(at(6), 1, 0, &mut RateSample::new(1));
        assert_eq!(r.app_limited, 0);
    }
}
