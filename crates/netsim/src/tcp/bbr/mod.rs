//! BBR v1 congestion control as in Linux `net/ipv4/tcp_bbr.c` (5.x), sans-IO.
//!
//! One [`Bbr`] per connection, driven by the connection at the kernel's hook points:
//! [`Bbr::init`] when the handshake completes (`bbr_init`), [`Bbr::on_ack`] for every ACK
//! that finds data outstanding (`bbr_main` via `cong_control`, after loss detection),
//! [`Bbr::on_ssthresh`] on entering recovery or loss (`bbr_ssthresh`), [`Bbr::on_loss_state`]
//! on an RTO (`bbr_set_state(TCP_CA_Loss)`), [`Bbr::on_tx_start`] when data is sent with
//! nothing in flight (`bbr_cwnd_event(CA_EVENT_TX_START)`). The connection paces every data
//! segment at [`Bbr::pacing_rate_bytes_per_s`] (see `pacing.rs`).
//!
//! Files: `config` (every constant), `minmax` (the windowed max filter), `model` (bandwidth,
//! rounds, gain cycle, full-pipe detection, drain, min_rtt and PROBE_RTT), `cwnd` (target
//! cwnd, recovery/restore, pacing rate), `lt` (long-term "policer" bandwidth).
//!
//! Units as in the kernel: bandwidth in segments per µs << 24 (`BW_SCALE`), gains in 1/256,
//! RTTs in µs. The kernel's jiffies (min_rtt stamps, PROBE_RTT end) are nanoseconds here.

pub mod config;
mod cwnd;
mod lt;
pub mod minmax;
mod model;

use coaplab_base::rng::SeededRandom;
use coaplab_base::time::Instant;

pub use config::{BbrConfig, BBR_PARAMS, BBR_UNIT, CYCLE_LEN};

use super::rate::RateSample;
use super::state::CaState;
use minmax::WindowedMax;

/// Bandwidth scale: segments per µs << 24 (`BW_SCALE`).
pub const BW_SCALE: u32 = 24;
/// One segment per µs in bandwidth units (`BW_UNIT`).
pub const BW_UNIT: u64 = 1 << BW_SCALE;

/// BBR's operating mode (`enum bbr_mode`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// Ramp up the sending rate to fill the pipe.
    Startup,
    /// Drain the queue STARTUP created.
    Drain,
    /// Pace around the estimated bandwidth, cycling the gain.
    ProbeBw,
    /// Cut inflight to `cwnd_min_target_segments` to measure the propagation RTT.
    ProbeRtt,
}

/// What BBR reads of the connection (`struct tcp_sock`) at a hook.
#[derive(Debug, Clone, Copy)]
pub struct Tp {
    /// The current instant (`tcp_mstamp`, jiffies).
    pub now: Instant,
    /// `tp->delivered`.
    pub delivered: u64,
    /// `tp->delivered_mstamp`.
    pub delivered_at: Instant,
    /// `tp->lost`.
    pub lost: u64,
    /// `tcp_packets_in_flight` now.
    pub in_flight: u32,
    /// Congestion-avoidance state after loss detection (`icsk_ca_state`).
    pub ca: CaState,
    /// Earliest departure time of the next segment (`tcp_wstamp_ns`).
    pub wstamp: Instant,
    /// Smoothed RTT in µs (`srtt_us >> 3`), `None` before any sample.
    pub srtt_us: Option<i64>,
    /// `snd_cwnd` in segments.
    pub cwnd: u32,
}

/// State of one connection's BBR (`struct bbr`).
#[derive(Debug, Clone)]
pub struct Bbr {
    cfg: BbrConfig,
    mss: u32,
    /// Draws the PROBE_BW start phase (`prandom_u32_max`).
    rng: SeededRandom,
    /// Minimum RTT in the filter window, µs; `u32::MAX` = no sample (`~0U`).
    min_rtt_us: u32,
    min_rtt_stamp: Instant,
    probe_rtt_done_stamp: Option<Instant>,
    bw: WindowedMax,
    rtt_cnt: u32,
    next_rtt_delivered: u64,
    cycle_mstamp: Instant,
    mode: Mode,
    prev_ca: CaState,
    packet_conservation: bool,
    round_start: bool,
    idle_restart: bool,
    probe_rtt_round_done: bool,
    lt_is_sampling: bool,
    lt_rtt_cnt: u32,
    lt_use_bw: bool,
    lt_bw: u64,
    lt_last_delivered: u64,
    lt_last_stamp_ms: i64,
    lt_last_lost: u64,
    pacing_gain: u32,
    cwnd_gain: u32,
    full_bw_reached: bool,
    full_bw_cnt: u32,
    cycle_idx: usize,
    has_seen_rtt: bool,
    prior_cwnd: u32,
    full_bw: u64,
    ack_epoch_mstamp: Instant,
    extra_acked: [u32; 2],
    ack_epoch_acked: u32,
    extra_acked_win_rtts: u32,
    extra_acked_win_idx: usize,
    pacing_rate_bytes_per_s: u64,
    /// `tp->snd_ssthresh` as BBR sets it (infinite until DRAIN).
    ssthresh: u32,
}

/// What an ACK asks of the connection besides the new cwnd.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AckOutcome {
    /// The new `snd_cwnd`.
    pub cwnd: u32,
    /// PROBE_RTT marks the connection application-limited up to this `delivered` count.
    pub app_limited: Option<u64>,
}

impl Bbr {
    /// `bbr_init` at the end of the handshake: `min_rtt_us` is `tcp_min_rtt` (the handshake
    /// sample), `tp.srtt_us` and `tp.cwnd` give the initial pacing rate.
    pub fn init(
        cfg: BbrConfig,
        mss: u32,
        rng: SeededRandom,
        tp: &Tp,
        min_rtt_us: Option<i64>,
    ) -> Self {
        let mut b = Bbr {
            mss,
            rng,
            min_rtt_us: min_rtt_us.map_or(u32::MAX, |r| r.clamp(0, i64::from(u32::MAX)) as u32),
            min_rtt_stamp: tp.now,
            probe_rtt_done_stamp: None,
            bw: WindowedMax::default(),
            rtt_cnt: 0,
            next_rtt_delivered: 0,
            cycle_mstamp: Instant::ZERO,
            mode: Mode::Startup,
            prev_ca: CaState::Open,
            packet_conservation: false,
            round_start: false,
            idle_restart: false,
            probe_rtt_round_done: false,
            lt_is_sampling: false,
            lt_rtt_cnt: 0,
            lt_use_bw: false,
            lt_bw: 0,
            lt_last_delivered: 0,
            lt_last_stamp_ms: 0,
            lt_last_lost: 0,
            pacing_gain: cfg.high_gain_256ths,
            cwnd_gain: cfg.high_gain_256ths,
            full_bw_reached: false,
            full_bw_cnt: 0,
            cycle_idx: 0,
            has_seen_rtt: false,
            prior_cwnd: 0,
            full_bw: 0,
            ack_epoch_mstamp: tp.now,
            extra_acked: [0; 2],
            ack_epoch_acked: 0,
            extra_acked_win_rtts: 0,
            extra_acked_win_idx: 0,
            pacing_rate_bytes_per_s: 0,
            ssthresh: super::newreno::INFINITE_SSTHRESH,
            cfg,
        };
        b.init_pacing_rate_from_rtt(tp);
        b.reset_lt_bw_sampling(tp);
        b
    }

    /// `bbr_main`: updates the model from one ACK's rate sample, then the pacing rate and
    /// cwnd.
    pub fn on_ack(&mut self, tp: &Tp, rs: &RateSample) -> AckOutcome {
        let mut tp = *tp;
        let app_limited = self.update_model(&mut tp, rs);
        let bw = self.bw();
        self.set_pacing_rate(&tp, bw, self.pacing_gain);
        let cwnd = self.set_cwnd(&tp, rs, rs.acked_sacked, bw, self.cwnd_gain);
        AckOutcome { cwnd, app_limited }
    }

    /// `bbr_ssthresh` (entering recovery or loss): remembers the cwnd to restore; ssthresh is
    /// left as it is.
    pub fn on_ssthresh(&mut self, cwnd: u32) -> u32 {
        self.save_cwnd(cwnd);
        self.ssthresh
    }

    /// `bbr_set_state(TCP_CA_Loss)` on an RTO: the RTO ends a round and restarts full-pipe
    /// detection, and counts as a loss for the long-term sampler.
    pub fn on_loss_state(&mut self, tp: &Tp) {
        let mut rs = RateSample::new(0);
        rs.losses = 1;
        self.prev_ca = CaState::Loss;
        self.full_bw = 0;
        self.round_start = true;
        self.lt_bw_sampling(tp, &rs);
    }

    /// `bbr_undo_cwnd`: a spurious loss signal — restart full-pipe detection. (The model has
    /// no undo: without timestamps and DSACK Linux cannot prove a retransmission spurious.)
    pub fn on_undo(&mut self, tp: &Tp) -> u32 {
        self.full_bw = 0;
        self.full_bw_cnt = 0;
        self.reset_lt_bw_sampling(tp);
        tp.cwnd
    }

    /// `bbr_cwnd_event(CA_EVENT_TX_START)`: data leaves with nothing in flight. Returns the
    /// new cwnd when leaving PROBE_RTT restores it.
    pub fn on_tx_start(&mut self, tp: &Tp, app_limited: bool) -> u32 {
        let mut cwnd = tp.cwnd;
        if app_limited {
            self.idle_restart = true;
            self.ack_epoch_mstamp = tp.now;
            self.ack_epoch_acked = 0;
            // Restarting from idle and application-limited: pace at the estimate, no faster.
            match self.mode {
                Mode::ProbeBw => self.set_pacing_rate(tp, self.bw(), BBR_UNIT),
                Mode::ProbeRtt => self.check_probe_rtt_done(tp.now, tp.delivered_at, &mut cwnd),
                _ => {}
            }
        }
        cwnd
    }

    /// `bbr_save_cwnd`: the last cwnd that was good enough (not cut by recovery or PROBE_RTT).
    fn save_cwnd(&mut self, cwnd: u32) {
        if self.prev_ca < CaState::Recovery && self.mode != Mode::ProbeRtt {
            self.prior_cwnd = cwnd;
        } else {
            self.prior_cwnd = self.prior_cwnd.max(cwnd);
        }
    }

    /// Current mode.
    pub fn mode(&self) -> Mode {
        self.mode
    }

    /// Current pacing gain (1/256).
    pub fn pacing_gain(&self) -> u32 {
        self.pacing_gain
    }

    /// Current cwnd gain (1/256).
    pub fn cwnd_gain(&self) -> u32 {
        self.cwnd_gain
    }

    /// Index in the PROBE_BW gain cycle.
    pub fn cycle_idx(&self) -> usize {
        self.cycle_idx
    }

    /// Packet-timed rounds so far.
    pub fn rounds(&self) -> u32 {
        self.rtt_cnt
    }

    /// Whether STARTUP found the pipe full.
    pub fn full_bw_reached(&self) -> bool {
        self.full_bw_reached
    }

    /// Windowed max bandwidth in segments/µs << 24.
    pub fn max_bw(&self) -> u64 {
        self.bw.get()
    }

    /// Windowed max bandwidth in segments per second.
    pub fn max_bw_segments_per_s(&self) -> f64 {
        self.bw.get() as f64 * 1e6 / BW_UNIT as f64
    }

    /// min_rtt in µs (`u32::MAX` before any sample).
    pub fn min_rtt_us(&self) -> u32 {
        self.min_rtt_us
    }

    /// cwnd remembered for restoring after recovery, loss or PROBE_RTT.
    pub fn prior_cwnd(&self) -> u32 {
        self.prior_cwnd
    }

    /// Pacing rate in payload bytes per second (`sk_pacing_rate`).
    pub fn pacing_rate_bytes_per_s(&self) -> u64 {
        self.pacing_rate_bytes_per_s
    }

    /// The long-term (policer) bandwidth is in use.
    pub fn lt_use_bw(&self) -> bool {
        self.lt_use_bw
    }

    /// ssthresh as BBR set it.
    pub fn ssthresh(&self) -> u32 {
        self.ssthresh
    }

    /// `bbr_bw`: the long-term rate when policed, else the windowed max.
    fn bw(&self) -> u64 {
        if self.lt_use_bw {
            self.lt_bw
        } else {
            self.bw.get()
        }
    }
}

#[cfg(test)]
mod tests;
