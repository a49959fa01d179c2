//! BBR's outputs: the target cwnd (`bbr_bdp`, `bbr_quantization_budget`, ACK aggregation),
//! recovery and restore (`bbr_set_cwnd_to_recover_or_restore`, `bbr_set_cwnd`), and the
//! pacing rate (`bbr_set_pacing_rate`).

use super::{Bbr, Mode, Tp, BW_UNIT};
use crate::tcp::rate::RateSample;
use crate::tcp::state::CaState;

/// `GSO_MAX_SIZE − 1 − MAX_TCP_HEADER`: the byte cap of a TSO burst (MAX_TCP_HEADER taken as
/// 320 B; the cap never binds at the rates simulated here).
const TSO_MAX_BYTES: u64 = 65_536 - 1 - 320;

impl Bbr {
    /// `bbr_bdp`: ceil(bw × min_rtt × gain), in segments; `init_cwnd_segments` without an RTT
    /// sample.
    pub(super) fn bdp(&self, bw: u64, gain: u32) -> u32 {
        if self.min_rtt_us == u32::MAX {
            return self.cfg.init_cwnd_segments;
        }
        let w = bw * u64::from(self.min_rtt_us);
        (((w * u64::from(gain)) >> 8).div_ceil(BW_UNIT)) as u32
    }

    /// `bbr_tso_segs_goal`: segments per burst, ~1 ms at the pacing rate (1 at low rates).
    pub(super) fn tso_segs_goal(&self) -> u32 {
        let min_segs = if self.pacing_rate_bytes_per_s < self.cfg.min_tso_rate_bps >> 3 {
            1
        } else {
            2
        };
        let bytes = (self.pacing_rate_bytes_per_s >> self.cfg.pacing_shift).min(TSO_MAX_BYTES);
        ((bytes / u64::from(self.mss)) as u32)
            .max(min_segs)
            .min(0x7f)
    }

    /// `bbr_quantization_budget`: room for three bursts in the end hosts, an even cwnd
    /// (delayed ACKs), and +2 in the probing phase so small BDPs still probe.
    pub(super) fn quantization_budget(&self, cwnd: u32) -> u32 {
        let mut cwnd = cwnd + 3 * self.tso_segs_goal();
        cwnd = (cwnd + 1) & !1;
        if self.mode == Mode::ProbeBw && self.cycle_idx == 0 {
            cwnd += 2;
        }
        cwnd
    }

    /// `bbr_inflight`.
    pub(super) fn inflight(&self, bw: u64, gain: u32) -> u32 {
        self.quantization_budget(self.bdp(bw, gain))
    }

    /// `bbr_ack_aggregation_cwnd`.
    fn ack_aggregation_cwnd(&self) -> u32 {
        if self.cfg.extra_acked_gain_256ths == 0 || !self.full_bw_reached {
            return 0;
        }
        let max_aggr = self.bw() * self.cfg.extra_acked_max.as_micros() as u64 / BW_UNIT;
        let extra = u64::from(self.extra_acked[0].max(self.extra_acked[1]));
        let aggr = (u64::from(self.cfg.extra_acked_gain_256ths) * extra) >> 8;
        aggr.min(max_aggr) as u32
    }

    /// `bbr_set_cwnd_to_recover_or_restore`: packet conservation in the first round of
    /// recovery, the saved cwnd restored on leaving recovery or loss. Returns the cwnd and
    /// whether packet conservation decides it.
    fn recover_or_restore(&mut self, tp: &Tp, rs: &RateSample, acked: u32) -> (u32, bool) {
        let (prev, state) = (self.prev_ca, tp.ca);
        let mut cwnd = tp.cwnd;
        // An ACK for P segments releases at most 2P: first take off what was lost.
        if rs.losses > 0 {
            cwnd = cwnd.saturating_sub(rs.losses).max(1);
        }
        if state == CaState::Recovery && prev != CaState::Recovery {
            self.packet_conservation = true;
            self.next_rtt_delivered = tp.delivered; // the round starts now
            cwnd = tp.in_flight + acked;
        } else if prev >= CaState::Recovery && state < CaState::Recovery {
            cwnd = cwnd.max(self.prior_cwnd);
            self.packet_conservation = false;
        }
        self.prev_ca = state;
        if self.packet_conservation {
            return ((tp.in_flight + acked).max(cwnd), true);
        }
        (cwnd, false)
    }

    /// `bbr_set_cwnd`: slow start toward the target (gain × BDP + budget), or snap down to it
    /// once the pipe was full; PROBE_RTT caps at the minimum.
    pub(super) fn set_cwnd(
        &mut self,
        tp: &Tp,
        rs: &RateSample,
        acked: u32,
        bw: u64,
        gain: u32,
    ) -> u32 {
        let mut cwnd = tp.cwnd;
        if acked > 0 {
            let (c, conserving) = self.recover_or_restore(tp, rs, acked);
            cwnd = c;
            if !conserving {
                let mut target = self.bdp(bw, gain) + self.ack_aggregation_cwnd();
                target = self.quantization_budget(target);
                if self.full_bw_reached {
                    cwnd = (cwnd + acked).min(target);
                } else if cwnd < target || tp.delivered < u64::from(self.cfg.init_cwnd_segments) {
                    cwnd += acked;
                }
                cwnd = cwnd.max(self.cfg.cwnd_min_target_segments);
            }
        }
        if self.mode == Mode::ProbeRtt {
            cwnd = cwnd.min(self.cfg.cwnd_min_target_segments);
        }
        cwnd
    }

    /// `bbr_rate_bytes_per_sec`: segments/µs << 24 with a gain → payload bytes per second,
    /// `pacing_margin_percent` below.
    pub(super) fn rate_bytes_per_s(&self, rate: u64, gain: u32) -> u64 {
        let mut r = rate * u64::from(self.mss);
        r *= u64::from(gain);
        r >>= 8;
        r *= 1_000_000 / 100 * u64::from(100 - self.cfg.pacing_margin_percent);
        r >> super::BW_SCALE
    }

    /// `bbr_init_pacing_rate_from_rtt`: high_gain × cwnd / srtt (1 ms without a sample).
    pub(super) fn init_pacing_rate_from_rtt(&mut self, tp: &Tp) {
        let rtt_us = match tp.srtt_us {
            Some(s) if s > 0 => {
                self.has_seen_rtt = true;
                s.max(1) as u64
            }
            _ => self.cfg.nominal_rtt.as_micros().max(1) as u64,
        };
        let bw = u64::from(tp.cwnd) * BW_UNIT / rtt_us;
        self.pacing_rate_bytes_per_s = self.rate_bytes_per_s(bw, self.cfg.high_gain_256ths);
    }

    /// `bbr_set_pacing_rate`: never lower the rate before the pipe is full.
    pub(super) fn set_pacing_rate(&mut self, tp: &Tp, bw: u64, gain: u32) {
        let rate = self.rate_bytes_per_s(bw, gain);
        if !self.has_seen_rtt && tp.srtt_us.is_some() {
            self.init_pacing_rate_from_rtt(tp);
        }
        if self.full_bw_reached || rate > self.pacing_rate_bytes_per_s {
            self.pacing_rate_bytes_per_s = rate;
        }
    }
}
