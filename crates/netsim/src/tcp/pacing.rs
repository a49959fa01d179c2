//! Linux's internal pacing with earliest departure times (≥ 4.20, no `fq` qdisc, which is
//! how docs/experiments.md §5.3 runs BBR): every data segment leaves at or after `tcp_wstamp_ns`,
//! which advances by `payload bytes / pacing rate` after each send (`tcp_update_skb_after_send`,
//! `tcp_pacing_check`). The first `unpaced_segments` data segments are not paced, and a
//! late sender gets up to half a slot of credit ("OS jitter").

use coaplab_base::time::{Duration, Instant};

/// The pacing clock of one connection.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Pacing {
    /// Earliest departure time of the next segment (`tcp_wstamp_ns`).
    pub wstamp: Instant,
    /// Data segments sent, retransmissions included (`tp->data_segs_out`).
    pub data_segs_out: u64,
    /// A segment is ready but waits for `wstamp` (the connection's pacing timer).
    pub wait: Option<Instant>,
}

impl Pacing {
    /// `tcp_pacing_check`: whether a segment must wait at `now`.
    pub fn must_wait(&self, now: Instant) -> bool {
        self.wstamp > now
    }

    /// `__tcp_transmit_skb` + `tcp_update_skb_after_send` for a segment of `payload_bytes`
    /// sent at `now` (0 for pure ACKs and FINs: they only move the clock to `now`).
    pub fn on_sent(
        &mut self,
        now: Instant,
        payload_bytes: u32,
        rate_bytes_per_s: u64,
        unpaced: u64,
    ) {
        let prior = self.wstamp;
        self.wstamp = self.wstamp.max(now);
        if payload_bytes == 0 {
            return;
        }
        self.data_segs_out += 1;
        if rate_bytes_per_s == 0 || self.data_segs_out < unpaced {
            return;
        }
        let mut len_ns =
            (u128::from(payload_bytes) * 1_000_000_000 / u128::from(rate_bytes_per_s)) as i64;
        let credit = (self.wstamp - prior).as_nanos();
        len_ns -= (len_ns / 2).min(credit);
        self.wstamp += Duration::from_nanos(len_ns);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn segments_are_spaced_by_their_payload_at_the_rate_after_ten_unpaced() {
        let mut p = Pacing::default();
        let t = Instant::from_millis(1000);
        for _ in 0..9 {
            p.on_sent(t, 256, 2560, 10);
        }
        assert_eq!(p.wstamp, t); // nine segments unpaced
        p.on_sent(t, 256, 2560, 10);
        assert_eq!(p.wstamp, t + Duration::from_millis(100)); // 256 B at 2,560 B/s
                                                              // Sent 30 ms late: the 100-ms slot shrinks by the 30 ms of credit.
        let late = Instant::from_millis(1130);
        p.on_sent(late, 256, 2560, 10);
        assert_eq!(p.wstamp, late + Duration::from_millis(70));
        // Very late: at most half a slot of credit.
        let idle = Instant::from_millis(5000);
        p.on_sent(idle, 256, 2560, 10);
        assert_eq!(p.wstamp, idle + Duration::from_millis(50));
    }
}
