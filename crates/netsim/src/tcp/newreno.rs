//! Linux `reno` congestion control (`tcp_reno_cong_avoid`, `tcp_slow_start`,
//! `tcp_cong_avoid_ai`, `tcp_reno_ssthresh`) and PRR (`tcp_cwnd_reduction`, RFC 6937), in
//! segments.

/// ssthresh before the first loss (Linux `TCP_INFINITE_SSTHRESH`).
pub const INFINITE_SSTHRESH: u32 = 0x7fff_ffff;

/// The Reno window: cwnd, ssthresh and the congestion-avoidance counter.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reno {
    /// Congestion window in segments.
    pub cwnd: u32,
    /// Slow-start threshold in segments.
    pub ssthresh: u32,
    /// Segments acknowledged toward the next +1 in congestion avoidance (`snd_cwnd_cnt`).
    pub cwnd_cnt: u32,
}

impl Reno {
    /// A fresh window of `iw` segments and an infinite ssthresh.
    pub fn new(iw: u32) -> Self {
        Reno {
            cwnd: iw,
            ssthresh: INFINITE_SSTHRESH,
            cwnd_cnt: 0,
        }
    }

    /// `cwnd < ssthresh` (Linux `tcp_in_slow_start`).
    pub fn in_slow_start(&self) -> bool {
        self.cwnd < self.ssthresh
    }

    /// `tcp_reno_cong_avoid`: grows the window for `acked` delivered segments when the
    /// connection is cwnd-limited.
    pub fn cong_avoid(&mut self, mut acked: u32, cwnd_limited: bool) {
        if !cwnd_limited {
            return;
        }
        if self.in_slow_start() {
            acked = self.slow_start(acked);
            if acked == 0 {
                return;
            }
        }
        self.cong_avoid_ai(self.cwnd, acked);
    }

    /// `tcp_slow_start`: cwnd += acked up to ssthresh; returns the leftover.
    fn slow_start(&mut self, acked: u32) -> u32 {
        let cwnd = self.cwnd.saturating_add(acked).min(self.ssthresh);
        let used = cwnd - self.cwnd;
        self.cwnd = cwnd;
        acked - used
    }

    /// `tcp_cong_avoid_ai`: +1 segment per `w` acknowledged segments.
    fn cong_avoid_ai(&mut self, w: u32, acked: u32) {
        if self.cwnd_cnt >= w {
            self.cwnd_cnt = 0;
            self.cwnd += 1;
        }
        self.cwnd_cnt += acked;
        if self.cwnd_cnt >= w {
            let delta = self.cwnd_cnt / w;
            self.cwnd_cnt -= delta * w;
            self.cwnd += delta;
        }
    }

    /// `tcp_reno_ssthresh`: max(cwnd / 2, 2).
    pub fn loss_ssthresh(&self) -> u32 {
        (self.cwnd >> 1).max(2)
    }

    /// `tcp_current_ssthresh` outside recovery: max(ssthresh, ¾ cwnd).
    pub fn current_ssthresh(&self) -> u32 {
        self.ssthresh.max((self.cwnd >> 1) + (self.cwnd >> 2))
    }

    /// `tcp_cwnd_restart` after `idle_rtos` whole RTOs without sending: ssthresh = current,
    /// cwnd halved per RTO of idleness but not below `min(iw, cwnd)`.
    pub fn restart_after_idle(&mut self, iw: u32, idle_rtos: u64) {
        self.ssthresh = self.current_ssthresh();
        let restart = iw.min(self.cwnd);
        let mut cwnd = self.cwnd;
        let mut n = idle_rtos;
        while n > 0 && cwnd > restart {
            cwnd >>= 1;
            n -= 1;
        }
        self.cwnd = cwnd.max(restart);
    }
}

/// Proportional Rate Reduction state during one recovery episode.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Prr {
    /// cwnd when recovery started (`prior_cwnd`).
    pub prior_cwnd: u32,
    /// Segments delivered (cumulatively acknowledged or counted by duplicate ACKs) since.
    pub delivered: u32,
    /// Segments sent (retransmissions and new data) since.
    pub out: u32,
}

impl Prr {
    /// Starts an episode at `cwnd`.
    pub fn start(cwnd: u32) -> Self {
        Prr {
            prior_cwnd: cwnd,
            delivered: 0,
            out: 0,
        }
    }

    /// Linux 4.x/5.x `tcp_cwnd_reduction`: the new cwnd after an ACK that delivered
    /// `newly_delivered` segments, with `pipe` segments in flight; `retrans_acked` when the
    /// ACK covered retransmitted data. `None` when nothing was delivered (cwnd unchanged).
    pub fn reduce(
        &mut self,
        ssthresh: u32,
        pipe: u32,
        newly_delivered: u32,
        retrans_acked: bool,
    ) -> Option<u32> {
        if newly_delivered == 0 || self.prior_cwnd == 0 {
            return None;
        }
        self.delivered += newly_delivered;
        let delta = i64::from(ssthresh) - i64::from(pipe);
        let (delivered, out) = (i64::from(self.delivered), i64::from(self.out));
        let mut sndcnt = if delta < 0 {
            // RFC 6937: proportional part, ceil(ssthresh × delivered / prior_cwnd) − out.
            let prior = i64::from(self.prior_cwnd);
            (i64::from(ssthresh) * delivered + prior - 1) / prior - out
        } else if retrans_acked {
            // Slow-start reduction bound (PRR-SSRB).
            delta.min((delivered - out).max(i64::from(newly_delivered)) + 1)
        } else {
            // Conservative reduction bound (PRR-CRB).
            delta.min(i64::from(newly_delivered))
        };
        // Force a fast retransmit upon entering recovery.
        sndcnt = sndcnt.max(if self.out > 0 { 0 } else { 1 });
        Some((i64::from(pipe) + sndcnt).max(0) as u32)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slow_start_adds_every_acked_segment_and_spills_into_avoidance() {
        let mut r = Reno::new(4);
        r.cong_avoid(2, true);
        assert_eq!(r.cwnd, 6);
        r.ssthresh = 7;
        r.cong_avoid(2, true); // 1 to reach 7, 1 left for avoidance
        assert_eq!((r.cwnd, r.cwnd_cnt), (7, 1));
        for _ in 0..3 {
            r.cong_avoid(2, true);
        }
        assert_eq!((r.cwnd, r.cwnd_cnt), (8, 0));
        r.cong_avoid(2, false);
        assert_eq!((r.cwnd, r.cwnd_cnt), (8, 0));
    }

    #[test]
    fn ssthresh_and_idle_restart() {
        let mut r = Reno::new(4);
        r.cwnd = 20;
        assert_eq!(r.loss_ssthresh(), 10);
        r.restart_after_idle(4, 2);
        assert_eq!((r.cwnd, r.ssthresh), (5, INFINITE_SSTHRESH));
        r.cwnd = 3;
        assert_eq!(r.loss_ssthresh(), 2);
        r.restart_after_idle(4, 5);
        assert_eq!(r.cwnd, 3);
    }

    #[test]
    fn prr_first_ack_forces_one_segment() {
        // cwnd 10 → ssthresh 5; third dupack: pipe = 10 − 3 − 1 = 6 > 5.
        let mut p = Prr::start(10);
        assert_eq!(p.reduce(5, 6, 1, false), Some(7)); // ceil(5/10) − 0 = 1
        p.out = 1;
        assert_eq!(p.reduce(5, 6, 1, false), Some(6)); // ceil(10/10) − 1 = 0
        assert_eq!(p.reduce(5, 5, 1, false), Some(5)); // delta 0: min(0, 1) = 0
    }
}
