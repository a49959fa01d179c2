//! Loss recovery of a [`super::Connection`] for Reno without SACK: Linux's congestion state
//! (`icsk_ca_state`, `high_seq`), the Reno window and PRR — `tcp_fastretrans_alert`,
//! `tcp_enter_recovery`, `tcp_try_keep_open`, `tcp_cong_control` without a `cong_control`
//! hook, and the window half of an RTO (`tcp_enter_loss`). The scoreboard it reads and marks is
//! the [`Sender`]'s; BBR, when it runs, keeps its own window and only answers `ssthresh`.

use crate::tcp::bbr::Bbr;
use crate::tcp::config::RecoveryMode;
use crate::tcp::newreno::{Prr, Reno};
use crate::tcp::sender::Sender;
use crate::tcp::state::CaState;
use crate::tcp::stats::TcpStats;

use super::cwnd_validation::CwndValidation;

/// Congestion state, window and recovery episode.
#[derive(Debug, Clone)]
pub(super) struct Recovery {
    reno: Reno,
    prr: Prr,
    ca: CaState,
    /// `tp->high_seq`: snd_nxt when recovery or loss began.
    high_seq: u64,
    /// `TcpConfig::recovery`.
    mode: RecoveryMode,
    /// `TcpConfig::dupthresh` (`net.ipv4.tcp_reordering`).
    dupthresh: u32,
}

impl Recovery {
    /// Open, a window of `iw` segments, nothing sent yet (first data byte 1).
    pub(super) fn new(iw: u32, mode: RecoveryMode, dupthresh: u32) -> Self {
        Recovery {
            reno: Reno::new(iw),
            prr: Prr::default(),
            ca: CaState::Open,
            high_seq: 1,
            mode,
            dupthresh,
        }
    }

    /// Congestion-avoidance state.
    pub(super) fn ca(&self) -> CaState {
        self.ca
    }

    /// Congestion window in segments.
    pub(super) fn cwnd(&self) -> u32 {
        self.reno.cwnd
    }

    /// Slow-start threshold in segments.
    pub(super) fn ssthresh(&self) -> u32 {
        self.reno.ssthresh
    }

    /// Sets cwnd (the handshake's initial window; BBR's window at a transmission start).
    pub(super) fn set_cwnd(&mut self, cwnd: u32) {
        self.reno.cwnd = cwnd;
    }

    /// BBR's `cong_control` set the window.
    pub(super) fn set_window(&mut self, cwnd: u32, ssthresh: u32) {
        self.reno.cwnd = cwnd;
        self.reno.ssthresh = ssthresh;
    }

    /// RFC 6582 recovery with window inflation in progress (the window gates differently).
    pub(super) fn inflating(&self) -> bool {
        self.mode == RecoveryMode::Rfc6582 && self.ca == CaState::Recovery
    }

    /// `tcp_cwnd_restart`: sending resumes after `idle_rtos` whole RTOs of idleness.
    pub(super) fn restart_after_idle(&mut self, iw: u32, idle_rtos: u64) {
        self.reno.restart_after_idle(iw, idle_rtos);
    }

    /// A data segment (new or retransmitted) left: PRR counts it during recovery.
    pub(super) fn on_data_sent(&mut self) {
        if self.ca == CaState::Recovery {
            self.prr.out += 1;
        }
    }

    /// A cumulative ACK removed `acked` segments: the segments it delivered (RFC 6582's
    /// recovery counts them all and forgets the duplicate ACKs; otherwise
    /// `tcp_remove_reno_sacks`).
    pub(super) fn on_cumulative_ack(&mut self, snd: &mut Sender, acked: u32) -> u32 {
        if self.inflating() {
            snd.reset_reno_sacks();
            acked
        } else {
            snd.remove_reno_sacks(acked)
        }
    }

    /// `tcp_fastretrans_alert` for Reno; returns segments delivered by a duplicate ACK.
    /// `bbr` is the connection's BBR when it runs one.
    pub(super) fn fastretrans_alert(
        &mut self,
        snd: &mut Sender,
        bbr: Option<&mut Bbr>,
        stats: &mut TcpStats,
        advanced: bool,
        is_dupack: bool,
        acked: u32,
    ) -> u32 {
        let una = snd.snd_una();
        let inflation = self.mode == RecoveryMode::Rfc6582;
        let mut extra = 0;
        let mut do_lost = is_dupack;
        // D. Exit of recovery once high_seq is acknowledged.
        if self.ca == CaState::Recovery && una >= self.high_seq {
            snd.reset_reno_sacks();
            if una == self.high_seq && !inflation {
                // Reno holds recovery until something above high_seq is acknowledged.
                return 0;
            }
            if bbr.is_none() {
                self.reno.cwnd = self.reno.ssthresh; // tcp_end_cwnd_reduction
            }
            self.ca = CaState::Open;
        }
        match self.ca {
            CaState::Recovery => {
                if !advanced {
                    if is_dupack && snd.add_reno_sack() {
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
                    snd.reset_reno_sacks();
                } else {
                    if snd.snd_nxt() > self.high_seq && is_dupack {
                        if snd.add_reno_sack() {
                            extra = 1;
                        }
                    } else if advanced {
                        snd.reset_reno_sacks();
                    }
                    return extra;
                }
            }
            CaState::Open | CaState::Disorder => {
                if advanced {
                    snd.reset_reno_sacks();
                }
                if is_dupack && snd.add_reno_sack() {
                    extra = 1;
                }
                // `tcp_time_to_recover` without RACK: `sacked_out + 1 > tp->reordering`.
                let reordering = snd.reno_reordering().unwrap_or(self.dupthresh);
                if snd.lost_out() == 0 && snd.sacked_out() < reordering {
                    self.try_keep_open(snd);
                    return extra;
                }
                self.enter_recovery(snd, bbr, stats);
            }
        }
        if do_lost {
            snd.mark_head_lost();
        }
        extra
    }

    /// `tcp_try_keep_open`.
    fn try_keep_open(&mut self, snd: &Sender) {
        let head_retrans = snd.segments().next().is_some_and(|s| s.ever_retrans);
        let state =
            if snd.sacked_out() + snd.lost_out() > 0 || snd.retrans_out() > 0 || head_retrans {
                CaState::Disorder
            } else {
                CaState::Open
            };
        if self.ca != state {
            self.ca = state;
            self.high_seq = snd.snd_nxt();
        }
    }

    /// `tcp_enter_recovery` + `tcp_init_cwnd_reduction`.
    fn enter_recovery(&mut self, snd: &Sender, bbr: Option<&mut Bbr>, stats: &mut TcpStats) {
        stats.fast_recoveries += 1;
        self.high_seq = snd.snd_nxt();
        self.reno.cwnd_cnt = 0;
        self.prr = Prr::start(self.reno.cwnd);
        if let Some(b) = bbr {
            // BBR keeps cwnd and ssthresh; it remembers cwnd (`bbr_save_cwnd`) and runs packet
            // conservation itself.
            self.reno.ssthresh = b.on_ssthresh(self.reno.cwnd);
            self.ca = CaState::Recovery;
            return;
        }
        match self.mode {
            RecoveryMode::Prr => self.reno.ssthresh = self.reno.loss_ssthresh(),
            RecoveryMode::Rfc6582 => {
                // RFC 6582 §3.2 step 2: ssthresh = max(FlightSize / 2, 2); cwnd = ssthresh + 3.
                self.reno.ssthresh = (snd.packets_out() / 2).max(2);
                self.reno.cwnd = self.reno.ssthresh + self.dupthresh;
            }
        }
        self.ca = CaState::Recovery;
    }

    /// `tcp_cong_control` without a `cong_control` hook: PRR in recovery, else Reno growth on
    /// acknowledged data (when the flight was cwnd-limited, `cwv`).
    pub(super) fn cong_control(
        &mut self,
        snd: &Sender,
        cwv: &CwndValidation,
        delivered: u32,
        data_acked: bool,
        retrans_acked: bool,
    ) {
        if self.ca == CaState::Recovery {
            if self.mode == RecoveryMode::Prr {
                let pipe = snd.in_flight();
                if let Some(c) = self
                    .prr
                    .reduce(self.reno.ssthresh, pipe, delivered, retrans_acked)
                {
                    self.reno.cwnd = c;
                }
            }
        } else if data_acked {
            let limited = cwv.cwnd_limited(&self.reno);
            self.reno.cong_avoid(delivered, limited);
        }
    }

    /// The window half of `tcp_enter_loss` after an RTO with `expiries` earlier expiries since
    /// snd_una advanced: everything outstanding is lost, cwnd 1, ssthresh lowered unless this
    /// RTO continues a loss episode (BBR's `ssthresh` answers for BBR).
    pub(super) fn enter_loss(&mut self, snd: &mut Sender, bbr: Option<&mut Bbr>, expiries: u32) {
        let una = snd.snd_una();
        if self.ca <= CaState::Disorder
            || self.high_seq <= una
            || (self.ca == CaState::Loss && expiries == 0)
        {
            self.reno.ssthresh = match bbr {
                Some(b) => b.on_ssthresh(self.reno.cwnd),
                None => self.reno.loss_ssthresh(),
            };
        }
        self.reno.cwnd = 1;
        self.reno.cwnd_cnt = 0;
        snd.mark_all_lost();
        self.high_seq = snd.snd_nxt();
        self.ca = CaState::Loss;
    }
}
