//! BBR's path model (`bbr_update_model`): bandwidth samples and packet-timed rounds, the
//! PROBE_BW gain cycle, full-pipe detection, DRAIN, the min_rtt filter and PROBE_RTT.

use coaplab_base::time::Instant;

use super::config::{BBR_UNIT, CYCLE_LEN};
use super::{Bbr, Mode, Tp, BW_UNIT};
use crate::tcp::rate::RateSample;

impl Bbr {
    /// `bbr_update_model`; returns the application-limited mark PROBE_RTT asks for. May
    /// restore `tp.cwnd` when PROBE_RTT ends.
    pub(super) fn update_model(&mut self, tp: &mut Tp, rs: &RateSample) -> Option<u64> {
        self.update_bw(tp, rs);
        self.update_ack_aggregation(tp, rs);
        self.update_cycle_phase(tp, rs);
        self.check_full_bw_reached(rs);
        self.check_drain(tp);
        let app_limited = self.update_min_rtt(tp, rs);
        self.update_gains();
        app_limited
    }

    /// `bbr_update_bw`: round counting and the max-bandwidth filter.
    fn update_bw(&mut self, tp: &Tp, rs: &RateSample) {
        self.round_start = false;
        if rs.delivered < 0 || rs.interval_us <= 0 {
            return; // not a valid observation
        }
        // A round ends when a segment sent after the previous round's end is delivered.
        if rs.prior_delivered >= self.next_rtt_delivered {
            self.next_rtt_delivered = tp.delivered;
            self.rtt_cnt += 1;
            self.round_start = true;
            self.packet_conservation = false;
        }
        self.lt_bw_sampling(tp, rs);
        let bw = rs.delivered as u64 * BW_UNIT / rs.interval_us as u64;
        // An application-limited sample only counts when it does not lower the estimate.
        if !rs.is_app_limited || bw >= self.bw.get() {
            self.bw.update(self.cfg.bw_window_rounds, self.rtt_cnt, bw);
        }
    }

    /// `bbr_update_ack_aggregation`: the largest excess of acknowledged data over what the
    /// estimated rate explains, per epoch, max-filtered over 5–10 rounds.
    fn update_ack_aggregation(&mut self, tp: &Tp, rs: &RateSample) {
        if self.cfg.extra_acked_gain_256ths == 0
            || rs.acked_sacked == 0
            || rs.delivered < 0
            || rs.interval_us <= 0
        {
            return;
        }
        if self.round_start {
            self.extra_acked_win_rtts = (self.extra_acked_win_rtts + 1).min(0x1f);
            if self.extra_acked_win_rtts >= self.cfg.extra_acked_win_rounds {
                self.extra_acked_win_rtts = 0;
                self.extra_acked_win_idx ^= 1;
                self.extra_acked[self.extra_acked_win_idx] = 0;
            }
        }
        let epoch_us = us_since(tp.delivered_at, self.ack_epoch_mstamp);
        let mut expected = (self.bw() * epoch_us / BW_UNIT) as u32;
        if self.ack_epoch_acked <= expected
            || self.ack_epoch_acked + rs.acked_sacked >= self.cfg.ack_epoch_acked_reset_thresh
        {
            self.ack_epoch_acked = 0;
            self.ack_epoch_mstamp = tp.delivered_at;
            expected = 0;
        }
        self.ack_epoch_acked = (self.ack_epoch_acked + rs.acked_sacked).min(0xFFFFF);
        let extra = (self.ack_epoch_acked - expected).min(tp.cwnd);
        let slot = &mut self.extra_acked[self.extra_acked_win_idx];
        if extra > *slot {
            *slot = extra;
        }
    }

    /// `bbr_update_cycle_phase` / `bbr_is_next_cycle_phase`.
    fn update_cycle_phase(&mut self, tp: &Tp, rs: &RateSample) {
        if self.mode != Mode::ProbeBw {
            return;
        }
        let is_full_length =
            us_since(tp.delivered_at, self.cycle_mstamp) > u64::from(self.min_rtt_us);
        let next = if self.pacing_gain == BBR_UNIT {
            is_full_length
        } else {
            let inflight = self.packets_in_net_at_edt(tp, rs.prior_in_flight);
            let bw = self.bw.get();
            if self.pacing_gain > BBR_UNIT {
                // Probe until inflight reaches gain × BDP, but give up on loss: a small
                // buffer may not hold that much.
                is_full_length && (rs.losses > 0 || inflight >= self.inflight(bw, self.pacing_gain))
            } else {
                // Drain until inflight falls to one BDP.
                is_full_length || inflight <= self.inflight(bw, BBR_UNIT)
            }
        };
        if next {
            self.advance_cycle_phase(tp.delivered_at);
        }
    }

    fn advance_cycle_phase(&mut self, delivered_at: Instant) {
        self.cycle_idx = (self.cycle_idx + 1) & (CYCLE_LEN - 1);
        self.cycle_mstamp = delivered_at;
    }

    /// `bbr_reset_probe_bw_mode`: a random start phase, never the 3/4 drain phase.
    pub(super) fn reset_probe_bw_mode(&mut self, delivered_at: Instant) {
        use coaplab_base::rng::Random;
        self.mode = Mode::ProbeBw;
        let draw = self.rng.below(u64::from(self.cfg.cycle_rand)) as usize;
        self.cycle_idx = CYCLE_LEN - 1 - draw;
        self.advance_cycle_phase(delivered_at);
    }

    /// `bbr_reset_mode`.
    fn reset_mode(&mut self, delivered_at: Instant) {
        if self.full_bw_reached {
            self.reset_probe_bw_mode(delivered_at);
        } else {
            self.mode = Mode::Startup;
        }
    }

    /// `bbr_check_full_bw_reached`: three non-app-limited rounds without 25 % growth.
    fn check_full_bw_reached(&mut self, rs: &RateSample) {
        if self.full_bw_reached || !self.round_start || rs.is_app_limited {
            return;
        }
        let thresh = (self.full_bw * u64::from(self.cfg.full_bw_thresh_256ths)) >> 8;
        if self.bw.get() >= thresh {
            self.full_bw = self.bw.get();
            self.full_bw_cnt = 0;
            return;
        }
        self.full_bw_cnt += 1;
        self.full_bw_reached = self.full_bw_cnt >= self.cfg.full_bw_rounds;
    }

    /// `bbr_check_drain`.
    fn check_drain(&mut self, tp: &Tp) {
        if self.mode == Mode::Startup && self.full_bw_reached {
            self.mode = Mode::Drain;
            self.ssthresh = self.inflight(self.bw.get(), BBR_UNIT);
        }
        if self.mode == Mode::Drain
            && self.packets_in_net_at_edt(tp, tp.in_flight)
                <= self.inflight(self.bw.get(), BBR_UNIT)
        {
            self.reset_probe_bw_mode(tp.delivered_at); // the queue is drained
        }
    }

    /// `bbr_check_probe_rtt_done`: after 200 ms and a round at the minimum, restore cwnd.
    pub(super) fn check_probe_rtt_done(
        &mut self,
        now: Instant,
        delivered_at: Instant,
        cwnd: &mut u32,
    ) {
        if !self.probe_rtt_done_stamp.is_some_and(|t| now > t) {
            return;
        }
        self.min_rtt_stamp = now; // wait a whole window before the next PROBE_RTT
        *cwnd = (*cwnd).max(self.prior_cwnd);
        self.reset_mode(delivered_at);
    }

    /// `bbr_update_min_rtt`: the 10-s min filter and PROBE_RTT.
    fn update_min_rtt(&mut self, tp: &mut Tp, rs: &RateSample) -> Option<u64> {
        let expired = tp.now > self.min_rtt_stamp + self.cfg.min_rtt_window;
        if rs.rtt_us >= 0
            && (rs.rtt_us <= i64::from(self.min_rtt_us) || (expired && !rs.is_ack_delayed))
        {
            self.min_rtt_us = rs.rtt_us.min(i64::from(u32::MAX)) as u32;
            self.min_rtt_stamp = tp.now;
        }
        let mut app_limited = None;
        if self.cfg.probe_rtt_duration > coaplab_base::time::Duration::ZERO
            && expired
            && !self.idle_restart
            && self.mode != Mode::ProbeRtt
        {
            self.mode = Mode::ProbeRtt; // dip, drain the queue
            self.save_cwnd(tp.cwnd);
            self.probe_rtt_done_stamp = None;
        }
        if self.mode == Mode::ProbeRtt {
            // Samples taken at the minimum window say nothing about the bandwidth.
            app_limited = Some((tp.delivered + u64::from(tp.in_flight)).max(1));
            if self.probe_rtt_done_stamp.is_none()
                && tp.in_flight <= self.cfg.cwnd_min_target_segments
            {
                self.probe_rtt_done_stamp = Some(tp.now + self.cfg.probe_rtt_duration);
                self.probe_rtt_round_done = false;
                self.next_rtt_delivered = tp.delivered;
            } else if self.probe_rtt_done_stamp.is_some() {
                if self.round_start {
                    self.probe_rtt_round_done = true;
                }
                if self.probe_rtt_round_done {
                    self.check_probe_rtt_done(tp.now, tp.delivered_at, &mut tp.cwnd);
                }
            }
        }
        if rs.delivered > 0 {
            self.idle_restart = false;
        }
        app_limited
    }

    /// `bbr_update_gains`.
    fn update_gains(&mut self) {
        let c = &self.cfg;
        (self.pacing_gain, self.cwnd_gain) = match self.mode {
            Mode::Startup => (c.high_gain_256ths, c.high_gain_256ths),
            Mode::Drain => (c.drain_gain_256ths, c.high_gain_256ths),
            Mode::ProbeBw if self.lt_use_bw => (BBR_UNIT, c.cwnd_gain_256ths),
            Mode::ProbeBw => (
                c.pacing_gain_cycle_256ths[self.cycle_idx],
                c.cwnd_gain_256ths,
            ),
            Mode::ProbeRtt => (BBR_UNIT, BBR_UNIT),
        };
    }

    /// `bbr_packets_in_net_at_edt`: inflight at the next departure time, less what the
    /// path delivers until then.
    pub(super) fn packets_in_net_at_edt(&self, tp: &Tp, inflight_now: u32) -> u32 {
        let edt = tp.wstamp.max(tp.now);
        let interval_us = us_since(edt, tp.now);
        let interval_delivered = (self.bw() * interval_us) >> super::BW_SCALE;
        let mut inflight_at_edt = u64::from(inflight_now);
        if self.pacing_gain > BBR_UNIT {
            inflight_at_edt += u64::from(self.tso_segs_goal()); // the segment departing at EDT
        }
        inflight_at_edt.saturating_sub(interval_delivered) as u32
    }
}

/// `tcp_stamp_us_delta`: whole µs from `earlier` to `later`, 0 if negative.
pub(super) fn us_since(later: Instant, earlier: Instant) -> u64 {
    (later.as_micros() - earlier.as_micros()).max(0) as u64
}
