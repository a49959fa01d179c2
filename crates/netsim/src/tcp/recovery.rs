//! ACK processing and loss recovery of [`Connection`]: Linux `tcp_ack`,
//! `tcp_fastretrans_alert` for Reno (no SACK), `tcp_cong_control`, and the RTO
//! (`tcp_retransmit_timer`, `tcp_enter_loss`).

use coaplab_base::time::Instant;

use super::config::{RecoveryMode, RtoBackoffReset};
use super::connection::{CaState, Connection};
use super::newreno::Prr;
use super::rate::RateSample;

impl Connection {
    /// Processes cumulative `ack` (≤ snd_nxt, checked); `pure` when the segment carried no
    /// data and no FIN (a candidate duplicate ACK).
    pub(super) fn on_ack(&mut self, now: Instant, ack: u64, pure: bool) {
        let snd_una = self.snd.snd_una();
        if ack < snd_una {
            return; // old ACK
        }
        let prior_packets = self.snd.packets_out();
        if prior_packets == 0 {
            return; // nothing outstanding (`no_queue`)
        }
        let advanced = ack > snd_una;
        let is_dupack = !advanced && pure;
        let mut delivered = 0;
        let mut data_acked = false;
        let mut retrans_acked = false;
        let mut rs = RateSample::new(self.snd.in_flight());
        let (prior_lost, prior_sacked) = (self.snd.lost_total, self.snd.sacked_out);
        let mut acked_segments = 0;
        if advanced {
            self.rto_retransmits = 0;
            let rate = &mut self.cc.rate;
            let acked = self
                .snd
                .on_cumulative_ack(now, ack, |d| rate.on_delivered(&mut rs, d));
            acked_segments = acked.segments;
            data_acked = acked.segments > 0;
            retrans_acked = acked.retrans_acked;
            if let Some(r) = acked.rtt {
                self.rtt.sample(r, self.snd.snd_una(), self.snd.snd_nxt());
            } else if self.config.rto_backoff_reset == RtoBackoffReset::NewAck {
                // ns-3's rule: a new ACK recomputes the RTO from the estimator, so a backoff
                // does not outlive it (Linux keeps it until a valid sample).
                self.rtt.clear_backoff();
            }
            if let Some(r) = acked.newest_rtt {
                rs.rtt_us = r.as_micros();
                self.cc.rate.on_rtt(rs.rtt_us);
            }
            if self.config.recovery == RecoveryMode::Rfc6582 && self.ca == CaState::Recovery {
                delivered = acked.segments;
                self.snd.sacked_out = 0;
            } else {
                delivered = self.snd.remove_reno_sacks(acked.segments);
            }
            if data_acked {
                self.rto_at = (self.snd.packets_out() > 0).then(|| self.rto_deadline(now));
            }
            self.burst_open = true;
        }
        if is_dupack || self.ca != CaState::Open {
            delivered += self.fastretrans_alert(advanced, is_dupack, delivered);
        }
        self.cc.rate.delivered += u64::from(delivered);
        // `FLAG_ACK_MAYBE_DELAYED`: a lone segment acknowledged, nothing else delivered since.
        rs.is_ack_delayed = acked_segments == 1
            && prior_sacked == 0
            && rs.prior_at.is_some()
            && rs.prior_delivered + 1 == self.cc.rate.delivered;
        let lost = (self.snd.lost_total - prior_lost) as u32;
        self.cc.rate.generate(now, delivered, lost, &mut rs);
        if !self.bbr_on_ack(now, &rs) {
            self.cong_control(delivered, data_acked, retrans_acked);
        }
    }

    /// `tcp_fastretrans_alert` for Reno; returns segments delivered by a duplicate ACK.
    fn fastretrans_alert(&mut self, advanced: bool, is_dupack: bool, acked: u32) -> u32 {
        let una = self.snd.snd_una();
        let inflation = self.config.recovery == RecoveryMode::Rfc6582;
        let mut extra = 0;
        let mut do_lost = is_dupack;
        // D. Exit of recovery once high_seq is acknowledged.
        if self.ca == CaState::Recovery && una >= self.high_seq {
            self.snd.sacked_out = 0;
            if una == self.high_seq && !inflation {
                // Reno holds recovery until something above high_seq is acknowledged.
                return 0;
            }
            if self.cc.bbr.is_none() {
                self.reno.cwnd = self.reno.ssthresh; // tcp_end_cwnd_reduction
            }
            self.ca = CaState::Open;
        }
        match self.ca {
            CaState::Recovery => {
                if !advanced {
                    if is_dupack && self.snd.add_reno_sack() {
                        extra = 1;
                        if inflation {
                            self.reno.cwnd += 1;
                        }
                    }
                } else {
                    // Partial ACK: retransmit the new head (RFC 6582 §3.2 step 5).
                    do_lost = true;
                    if inflation {
                        self.reno.cwnd = self.reno.cwnd.saturating_sub(acked).max(1) + 1;
                    }
                }
            }
            CaState::Loss => {
                if una >= self.high_seq {
                    if una == self.high_seq {
                        return 0; // hold, as for recovery
                    }
                    self.ca = CaState::Open;
                    self.snd.sacked_out = 0;
                } else {
                    if self.snd.snd_nxt() > self.high_seq && is_dupack {
                        if self.snd.add_reno_sack() {
                            extra = 1;
                        }
                    } else if advanced {
                        self.snd.sacked_out = 0;
                    }
                    return extra;
                }
            }
            CaState::Open | CaState::Disorder => {
                if advanced {
                    self.snd.sacked_out = 0;
                }
                if is_dupack && self.snd.add_reno_sack() {
                    extra = 1;
                }
                // `tcp_time_to_recover` without RACK: `sacked_out + 1 > tp->reordering`.
                let reordering = self.snd.reno_reordering.unwrap_or(self.config.dupthresh);
                if self.snd.lost_out == 0 && self.snd.sacked_out < reordering {
                    self.try_keep_open();
                    return extra;
                }
                self.enter_recovery();
            }
        }
        if do_lost {
            self.snd.mark_head_lost();
        }
        extra
    }

    /// `tcp_try_keep_open`.
    fn try_keep_open(&mut self) {
        let head_retrans = self.snd.segments().next().is_some_and(|s| s.ever_retrans);
        let state = if self.snd.sacked_out + self.snd.lost_out > 0
            || self.snd.retrans_out > 0
            || head_retrans
        {
            CaState::Disorder
        } else {
            CaState::Open
        };
        if self.ca != state {
            self.ca = state;
            self.high_seq = self.snd.snd_nxt();
        }
    }

    /// `tcp_enter_recovery` + `tcp_init_cwnd_reduction`.
    fn enter_recovery(&mut self) {
        self.stats.fast_recoveries += 1;
        self.high_seq = self.snd.snd_nxt();
        self.reno.cwnd_cnt = 0;
        self.prr = Prr::start(self.reno.cwnd);
        if let Some(ssthresh) = self.bbr_ssthresh() {
            // BBR keeps cwnd and ssthresh; it remembers cwnd (`bbr_save_cwnd`) and runs packet
            // conservation itself.
            self.reno.ssthresh = ssthresh;
            self.ca = CaState::Recovery;
            return;
        }
        match self.config.recovery {
            RecoveryMode::Prr => self.reno.ssthresh = self.reno.loss_ssthresh(),
            RecoveryMode::Rfc6582 => {
                // RFC 6582 §3.2 step 2: ssthresh = max(FlightSize / 2, 2); cwnd = ssthresh + 3.
                self.reno.ssthresh = (self.snd.packets_out() / 2).max(2);
                self.reno.cwnd = self.reno.ssthresh + self.config.dupthresh;
            }
        }
        self.ca = CaState::Recovery;
    }

    /// `tcp_cong_control` without a `cong_control` hook: PRR in recovery, else Reno growth on
    /// acknowledged data.
    fn cong_control(&mut self, delivered: u32, data_acked: bool, retrans_acked: bool) {
        if self.ca == CaState::Recovery {
            if self.config.recovery == RecoveryMode::Prr {
                let pipe = self.snd.in_flight();
                if let Some(c) = self
                    .prr
                    .reduce(self.reno.ssthresh, pipe, delivered, retrans_acked)
                {
                    self.reno.cwnd = c;
                }
            }
        } else if data_acked {
            let limited = self.cwnd_limited();
            self.reno.cong_avoid(delivered, limited);
        }
    }

    /// `tcp_retransmit_timer` with `tcp_enter_loss`: everything outstanding is lost, cwnd 1,
    /// RTO doubled (kept until a fresh sample).
    pub(super) fn on_rto(&mut self, now: Instant) {
        if self.snd.packets_out() == 0 {
            self.rto_at = None;
            return;
        }
        // The timer ran for the RTO in effect: re-armed with it on every ACK that advanced.
        self.stats.on_rto_expired(self.rtt.rto());
        let una = self.snd.snd_una();
        if self.ca <= CaState::Disorder
            || self.high_seq <= una
            || (self.ca == CaState::Loss && self.rto_retransmits == 0)
        {
            self.reno.ssthresh = match self.bbr_ssthresh() {
                Some(s) => s,
                None => self.reno.loss_ssthresh(),
            };
        }
        self.reno.cwnd = 1;
        self.reno.cwnd_cnt = 0;
        self.snd.mark_all_lost();
        self.high_seq = self.snd.snd_nxt();
        self.ca = CaState::Loss;
        self.bbr_on_loss(now);
        self.rto_retransmits += 1;
        self.rtt.back_off();
        self.rto_at = Some(self.rto_deadline(now));
    }
}
