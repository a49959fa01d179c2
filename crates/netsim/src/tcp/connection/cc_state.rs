//! The congestion-control state of a [`super::Connection`] beyond the Reno window:
//! delivery-rate sampling (`rate.rs`, kept for both choices, it changes nothing for Reno),
//! the pacing clock (`pacing.rs`, BBR only) and [`Bbr`] itself, at Linux's hook points. The
//! connection builds BBR's view of it ([`Tp`]) and passes it in.

use coaplab_base::rng::SeededRandom;
use coaplab_base::time::{Duration, Instant};

use crate::tcp::bbr::{Bbr, BbrConfig, Tp};
use crate::tcp::cc::CongestionControl;
use crate::tcp::pacing::Pacing;
use crate::tcp::rate::{RateSample, RateSnapshot, RateState};
use crate::tcp::sender::Sender;
use crate::tcp::state::CaState;

/// Rate sampling, pacing and BBR of one connection.
#[derive(Debug, Clone)]
pub(super) struct CcState {
    rate: RateState,
    pacing: Pacing,
    bbr: Option<Bbr>,
    /// The stream BBR draws its PROBE_BW start phases from.
    rng: Option<SeededRandom>,
    /// The head's retransmission after an RTO leaves at once (`tcp_retransmit_timer` calls
    /// `tcp_retransmit_skb` directly, outside the pacing check).
    rto_unpaced: bool,
}

/// What BBR's `cong_control` decided for one ACK.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct BbrWindow {
    /// The new cwnd.
    pub(super) cwnd: u32,
    /// BBR's ssthresh.
    pub(super) ssthresh: u32,
}

impl CcState {
    /// No BBR yet (it starts when the handshake completes), nothing delivered.
    pub(super) fn new() -> Self {
        CcState {
            rate: RateState::default(),
            pacing: Pacing::default(),
            bbr: None,
            rng: None,
            rto_unpaced: false,
        }
    }

    /// The random stream BBR will draw from.
    pub(super) fn set_random(&mut self, rng: SeededRandom) {
        self.rng = Some(rng);
    }

    /// BBR's state, when it runs.
    pub(super) fn bbr(&self) -> Option<&Bbr> {
        self.bbr.as_ref()
    }

    /// BBR, mutably (its `ssthresh` hook), when it runs.
    pub(super) fn bbr_mut(&mut self) -> Option<&mut Bbr> {
        self.bbr.as_mut()
    }

    /// The delivery-rate bookkeeping.
    pub(super) fn rate(&self) -> &RateState {
        &self.rate
    }

    /// The delivery-rate bookkeeping, mutably (an ACK's delivered segments).
    pub(super) fn rate_mut(&mut self) -> &mut RateState {
        &mut self.rate
    }

    /// `tcp_rate_skb_sent` for a segment sent at `now` with `packets_out` already out.
    pub(super) fn on_send(&mut self, now: Instant, packets_out: u32) -> RateSnapshot {
        self.rate.on_send(now, packets_out)
    }

    /// Earliest departure time of the next data segment (`tcp_wstamp_ns`).
    pub(super) fn pacing_time(&self) -> Instant {
        self.pacing.wstamp
    }

    /// The pacing timer's deadline: a segment waits for its departure time.
    pub(super) fn pacing_deadline(&self) -> Option<Instant> {
        self.pacing.wait
    }

    /// The pacing timer fired, or a transmit pass starts: nothing waits any more.
    pub(super) fn clear_pacing_wait(&mut self) {
        self.pacing.wait = None;
    }

    /// The handshake completed at `now` (`tcp_init_transfer`): the SYN counts as delivered and
    /// its RTT seeds `tcp_min_rtt`.
    pub(super) fn on_established(&mut self, now: Instant, handshake_rtt: Option<Duration>) {
        self.rate.delivered = 1;
        self.rate.delivered_at = now;
        if let Some(r) = handshake_rtt {
            self.rate.on_rtt(r.as_micros());
        }
    }

    /// `bbr_init`, reading the connection as `tp` (after [`CcState::on_established`]); without
    /// a random stream BBR uses `SeededRandom::new(0)`.
    pub(super) fn start_bbr(&mut self, cfg: BbrConfig, mss: u32, tp: &Tp) {
        let rng = self.rng.take().unwrap_or_else(|| SeededRandom::new(0));
        let min_rtt = self.rate.min_rtt_us;
        self.bbr = Some(Bbr::init(cfg, mss, rng, tp, min_rtt));
    }

    /// `tcp_rate_check_app_limited` at an application write, reading the sender's queue and
    /// flight, the MSS and cwnd.
    pub(super) fn on_write(&mut self, snd: &Sender, mss: u32, cwnd: u32) {
        let (unsent, in_flight, lost_waiting) =
            (snd.unsent_bytes(), snd.in_flight(), snd.has_lost_to_send());
        self.rate
            .check_app_limited(unsent, mss, in_flight, cwnd, lost_waiting);
    }

    /// BBR's `cong_control` for one ACK: BBR sets cwnd and the pacing rate from the completed
    /// rate sample. `None` when the connection does not run BBR.
    pub(super) fn bbr_on_ack(&mut self, tp: &Tp, rs: &RateSample) -> Option<BbrWindow> {
        let bbr = self.bbr.as_mut()?;
        let out = bbr.on_ack(tp, rs);
        if let Some(a) = out.app_limited {
            self.rate.app_limited = a;
        }
        Some(BbrWindow {
            cwnd: out.cwnd,
            ssthresh: bbr.ssthresh(),
        })
    }

    /// `bbr_set_state(TCP_CA_Loss)` after an RTO; the head's retransmission then leaves
    /// unpaced.
    pub(super) fn on_loss(&mut self, tp: &Tp) {
        if let Some(b) = self.bbr.as_mut() {
            b.on_loss_state(tp);
            self.rto_unpaced = true;
        }
    }

    /// `CA_EVENT_TX_START` (data leaves with nothing in flight): BBR's new cwnd, if it runs.
    pub(super) fn on_tx_start(&mut self, tp: &Tp) -> Option<u32> {
        let app_limited = self.rate.app_limited != 0;
        self.bbr.as_mut().map(|b| b.on_tx_start(tp, app_limited))
    }

    /// A retransmission left: the RTO's unpaced head is gone.
    pub(super) fn on_retransmit(&mut self) {
        self.rto_unpaced = false;
    }

    /// After any segment left at `now` with `payload_bytes`: advance the pacing clock (BBR
    /// only; its first `unpaced_segments` data segments unpaced).
    pub(super) fn after_send(&mut self, now: Instant, payload_bytes: u32, cc: &CongestionControl) {
        if let Some(b) = &self.bbr {
            let rate = b.pacing_rate_bytes_per_s();
            let unpaced = match cc {
                CongestionControl::Bbr(c) => c.unpaced_segments,
                CongestionControl::Reno => 0,
            };
            self.pacing.on_sent(now, payload_bytes, rate, unpaced);
        }
    }

    /// Whether a data segment ready at `now` must wait for its departure time (in congestion
    /// state `ca`); if so the pacing timer is armed.
    pub(super) fn pacing_blocks(&mut self, now: Instant, ca: CaState) -> bool {
        if self.bbr.is_none() || !self.pacing.must_wait(now) {
            return false;
        }
        if self.rto_unpaced && ca == CaState::Loss {
            return false;
        }
        self.pacing.wait = Some(self.pacing.wstamp);
        true
    }
}
