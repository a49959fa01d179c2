//! BBR's long-term bandwidth sampler (`bbr_lt_bw_sampling`): two consecutive lossy
//! intervals (loss ≥ 20 %) of 4–16 rounds with consistent delivery rates mean a token-bucket
//! policer; BBR then paces at their average for 48 rounds.

use super::config::BBR_UNIT;
use super::{Bbr, Mode, Tp, BW_UNIT};
use crate::tcp::rate::RateSample;

impl Bbr {
    /// `bbr_reset_lt_bw_sampling_interval`.
    fn reset_lt_bw_sampling_interval(&mut self, tp: &Tp) {
        self.lt_last_stamp_ms = tp.delivered_at.as_micros() / 1000;
        self.lt_last_delivered = tp.delivered;
        self.lt_last_lost = tp.lost;
        self.lt_rtt_cnt = 0;
    }

    /// `bbr_reset_lt_bw_sampling`.
    pub(super) fn reset_lt_bw_sampling(&mut self, tp: &Tp) {
        self.lt_bw = 0;
        self.lt_use_bw = false;
        self.lt_is_sampling = false;
        self.reset_lt_bw_sampling_interval(tp);
    }

    /// `bbr_lt_bw_interval_done`.
    fn lt_bw_interval_done(&mut self, tp: &Tp, bw: u64) {
        if self.lt_bw != 0 {
            let diff = bw.abs_diff(self.lt_bw);
            if diff * u64::from(BBR_UNIT) <= u64::from(self.cfg.lt_bw_ratio_256ths) * self.lt_bw
                || self.rate_bytes_per_s(diff, BBR_UNIT) <= self.cfg.lt_bw_diff_bytes_per_s
            {
                // Consistent with the previous interval: policed.
                self.lt_bw = (bw + self.lt_bw) >> 1;
                self.lt_use_bw = true;
                self.pacing_gain = BBR_UNIT;
                self.lt_rtt_cnt = 0;
                return;
            }
        }
        self.lt_bw = bw;
        self.reset_lt_bw_sampling_interval(tp);
    }

    /// `bbr_lt_bw_sampling`.
    pub(super) fn lt_bw_sampling(&mut self, tp: &Tp, rs: &RateSample) {
        if self.lt_use_bw {
            if self.mode == Mode::ProbeBw && self.round_start {
                self.lt_rtt_cnt += 1;
                if self.lt_rtt_cnt >= self.cfg.lt_bw_max_rounds {
                    self.reset_lt_bw_sampling(tp);
                    self.reset_probe_bw_mode(tp.delivered_at);
                }
            }
            return;
        }
        // Start at the first loss, once a policer would have spent its tokens.
        if !self.lt_is_sampling {
            if rs.losses == 0 {
                return;
            }
            self.reset_lt_bw_sampling_interval(tp);
            self.lt_is_sampling = true;
        }
        if rs.is_app_limited {
            self.reset_lt_bw_sampling(tp);
            return;
        }
        if self.round_start {
            self.lt_rtt_cnt += 1;
        }
        if self.lt_rtt_cnt < self.cfg.lt_intvl_min_rounds {
            return;
        }
        if self.lt_rtt_cnt > 4 * self.cfg.lt_intvl_min_rounds {
            self.reset_lt_bw_sampling(tp);
            return;
        }
        // End the interval at a loss, when the tokens are surely exhausted.
        if rs.losses == 0 {
            return;
        }
        let lost = tp.lost - self.lt_last_lost;
        let delivered = tp.delivered - self.lt_last_delivered;
        if delivered == 0 || (lost << 8) < u64::from(self.cfg.lt_loss_thresh_256ths) * delivered {
            return;
        }
        let t_ms = tp.delivered_at.as_micros() / 1000 - self.lt_last_stamp_ms;
        if t_ms < 1 {
            return;
        }
        let bw = delivered * BW_UNIT / (t_ms as u64 * 1000);
        self.lt_bw_interval_done(tp, bw);
    }
}
