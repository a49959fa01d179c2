//! The congestion-control choice of a [`Connection`] (docs/experiments.md §5.3: `newreno | bbr`)
//! and the hooks that run BBR: delivery-rate bookkeeping (`rate.rs`, kept for both, it changes
//! nothing for Reno), pacing (`pacing.rs`, BBR only) and [`Bbr`] at Linux's hook points.

use coaplab_base::rng::SeededRandom;
use coaplab_base::time::Instant;

use super::bbr::{Bbr, BbrConfig, Tp};
use super::connection::{CaState, Connection};
use super::pacing::Pacing;
use super::rate::{RateSample, RateState};

/// Which congestion control a connection runs.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum CongestionControl {
    /// Linux `reno`, with the recovery of `TcpConfig::recovery` (PRR by default).
    #[default]
    Reno,
    /// Linux BBR v1 (`tcp_bbr.c`) with internal pacing; its every constant in [`BbrConfig`].
    Bbr(BbrConfig),
}

impl CongestionControl {
    /// The name used in scenario files (`tcp-newreno`, `tcp-bbr`).
    pub fn name(&self) -> &'static str {
        match self {
            CongestionControl::Reno => "newreno",
            CongestionControl::Bbr(_) => "bbr",
        }
    }
}

/// Per-connection state beyond Reno's window.
#[derive(Debug, Clone)]
pub(super) struct CcState {
    pub(super) rate: RateState,
    pub(super) pacing: Pacing,
    pub(super) bbr: Option<Bbr>,
    /// The stream BBR draws its PROBE_BW start phases from.
    pub(super) rng: Option<SeededRandom>,
    /// The head's retransmission after an RTO leaves at once (`tcp_retransmit_timer` calls
    /// `tcp_retransmit_skb` directly, outside the pacing check).
    pub(super) rto_unpaced: bool,
}

impl CcState {
    pub(super) fn new() -> Self {
        CcState {
            rate: RateState::default(),
            pacing: Pacing::default(),
            bbr: None,
            rng: None,
            rto_unpaced: false,
        }
    }
}

impl Connection {
    /// Gives BBR its random stream (the PROBE_BW start phase); without one it uses
    /// `SeededRandom::new(0)`. Call before the handshake completes.
    pub fn set_random(&mut self, rng: SeededRandom) {
        self.quiet = false;
        self.cc.rng = Some(rng);
    }

    /// BBR's state, when the connection runs BBR.
    pub fn bbr(&self) -> Option<&Bbr> {
        self.cc.bbr.as_ref()
    }

    /// Earliest departure time of the next data segment (BBR pacing).
    pub fn pacing_time(&self) -> Instant {
        self.cc.pacing.wstamp
    }

    /// Whether data segments are paced (BBR).
    pub(super) fn paced(&self) -> bool {
        matches!(self.config.cc, CongestionControl::Bbr(_))
    }

    /// What BBR reads of the connection now.
    pub(super) fn tp(&self, now: Instant) -> Tp {
        Tp {
            now,
            delivered: self.cc.rate.delivered,
            delivered_at: self.cc.rate.delivered_at,
            lost: self.snd.lost_total,
            in_flight: self.snd.in_flight(),
            ca: self.ca,
            wstamp: self.cc.pacing.wstamp,
            srtt_us: self.rtt.srtt().map(|d| d.as_micros()),
            cwnd: self.reno.cwnd,
        }
    }

    /// The handshake completed (`tcp_init_transfer`): the SYN counts as delivered, its RTT
    /// seeds `tcp_min_rtt`, and BBR starts (`bbr_init`).
    pub(super) fn cc_establish(
        &mut self,
        now: Instant,
        handshake_rtt: Option<coaplab_base::time::Duration>,
    ) {
        self.cc.rate.delivered = 1;
        self.cc.rate.delivered_at = now;
        if let Some(r) = handshake_rtt {
            self.cc.rate.on_rtt(r.as_micros());
        }
        if let CongestionControl::Bbr(cfg) = &self.config.cc {
            let rng = self.cc.rng.take().unwrap_or_else(|| SeededRandom::new(0));
            let tp = self.tp(now);
            let min_rtt = self.cc.rate.min_rtt_us;
            self.cc.bbr = Some(Bbr::init(cfg.clone(), self.config.mss(), rng, &tp, min_rtt));
        }
    }

    /// `tcp_rate_check_app_limited` at an application write.
    pub(super) fn cc_on_write(&mut self) {
        let unsent = self.snd.unsent_bytes();
        let lost_waiting = self.snd.has_lost_to_send();
        let (mss, in_flight, cwnd) = (self.config.mss(), self.snd.in_flight(), self.reno.cwnd);
        self.cc
            .rate
            .check_app_limited(unsent, mss, in_flight, cwnd, lost_waiting);
    }

    /// BBR's `cong_control` for one ACK: completes the rate sample and lets BBR set cwnd
    /// and the pacing rate. Returns false when the connection does not run BBR.
    pub(super) fn bbr_on_ack(&mut self, now: Instant, rs: &RateSample) -> bool {
        let tp = self.tp(now);
        let Some(bbr) = self.cc.bbr.as_mut() else {
            return false;
        };
        let out = bbr.on_ack(&tp, rs);
        self.reno.cwnd = out.cwnd;
        self.reno.ssthresh = bbr.ssthresh();
        if let Some(a) = out.app_limited {
            self.cc.rate.app_limited = a;
        }
        true
    }

    /// `icsk_ca_ops->ssthresh` on entering recovery or loss: `Some(ssthresh)` for BBR.
    pub(super) fn bbr_ssthresh(&mut self) -> Option<u32> {
        let cwnd = self.reno.cwnd;
        self.cc.bbr.as_mut().map(|b| b.on_ssthresh(cwnd))
    }

    /// `bbr_set_state(TCP_CA_Loss)` after an RTO.
    pub(super) fn bbr_on_loss(&mut self, now: Instant) {
        let tp = self.tp(now);
        if let Some(b) = self.cc.bbr.as_mut() {
            b.on_loss_state(&tp);
            self.cc.rto_unpaced = true;
        }
    }

    /// Before a data segment leaves at `now`: `CA_EVENT_TX_START` when nothing is in flight.
    pub(super) fn cc_before_data_send(&mut self, now: Instant) {
        if self.snd.in_flight() != 0 {
            return;
        }
        let tp = self.tp(now);
        let app_limited = self.cc.rate.app_limited != 0;
        if let Some(b) = self.cc.bbr.as_mut() {
            self.reno.cwnd = b.on_tx_start(&tp, app_limited);
        }
    }

    /// After any segment left at `now` with `payload_bytes`: advance the pacing clock.
    pub(super) fn cc_after_send(&mut self, now: Instant, payload_bytes: u32) {
        if let Some(b) = &self.cc.bbr {
            let rate = b.pacing_rate_bytes_per_s();
            let unpaced = match &self.config.cc {
                CongestionControl::Bbr(c) => c.unpaced_segments,
                CongestionControl::Reno => 0,
            };
            self.cc.pacing.on_sent(now, payload_bytes, rate, unpaced);
        }
    }

    /// Whether a data segment ready at `now` must wait for its departure time; if so the
    /// pacing timer is armed.
    pub(super) fn pacing_blocks(&mut self, now: Instant) -> bool {
        if self.cc.bbr.is_none() || !self.cc.pacing.must_wait(now) {
            return false;
        }
        if self.cc.rto_unpaced && self.ca == CaState::Loss {
            return false;
        }
        self.cc.pacing.wait = Some(self.cc.pacing.wstamp);
        true
    }
}
