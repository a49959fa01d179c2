//! FASOR (draft-ietf-core-fasor-02, Järvinen et al., Globecom 2018), registered as
//! `fasor`, and FASOR+token (Globecom 2018; draft-ietf-core-fasor-02), registered as `fasor-token`.
//!
//! FASOR keeps two RTOs per destination:
//!
//! * **FastRTO**, an RFC 6298 estimator fed only by unambiguous samples (clean exchanges, or
//!   with `token_mode` the transmission the response names), without the 1 s floor;
//! * **SlowRTO** = 1.5 × the RTT measured from the original of the last ambiguous exchange
//!   (one that was retransmitted), a conservative bound that drains a bufferbloated queue.
//!
//! A three-state machine decides which is used: after an ambiguous exchange FAST becomes
//! FAST_SLOW_FAST (probe with FastRTO, then wait SlowRTO before backing off), a second one in a
//! row gives SLOW_FAST (wait SlowRTO first); any clean exchange returns to FAST. The per-exchange
//! backoff register `b` is loaded from FastRTO (plus a dither of [SRTT/4, SRTT]) and doubled on
//! each use, so the series is the table of draft-ietf-core-fasor-02.
//!
//! Everything an exchange's timers depend on is snapshotted when it starts (docs/algorithms.md,
//! ambiguity #20), so exchanges running in parallel (NSTART > 1) are not affected by each other's
//! completions.
//!
//! The parameters are in `params.rs`, the tests in `tests.rs`.

mod params;
#[cfg(test)]
mod tests;

pub use self::params::{FASOR, TOKEN_OFF, TOKEN_ON};

use crate::algorithm::{Admission, Completion, Exchange, Expiry, RtoAlgorithm, Snapshot};
use crate::common;
use crate::params::Params;
use crate::rfc6298::{Estimator, Form, Gains};
use crate::rng::Random;
use crate::scratch::{FasorScratch, Scratch, Snap};
use crate::time::{Duration, Instant};

/// FASOR's state machine (declared with the per-exchange data that an [`Exchange`] carries,
/// so that the exchange names no algorithm module).
pub use crate::scratch::FasorState as State;

impl State {
    /// The transition on an ambiguous ACK.
    fn after_ambiguous(self) -> State {
        match self {
            State::Fast => State::FastSlowFast,
            State::FastSlowFast | State::SlowFast => State::SlowFast,
        }
    }
}

/// FASOR per-destination state.
#[derive(Debug, Clone)]
pub struct Fasor {
    name: &'static str,
    max_retransmit: u32,
    initial_rto_s: f64,
    gains: Gains,
    appendix_seed: bool,
    rto_min_s: f64,
    rto_max_s: f64,
    timer_max_s: f64,
    slowrto_factor: f64,
    dither: bool,
    dither_lo: f64,
    dither_hi: f64,
    initial_srtt_for_dither_s: f64,
    fsf_probe_from_register: bool,
    give_up_ambiguous: bool,
    token_mode: bool,
    token_base_max: bool,

    /// The FastRTO estimator (SRTT, RTTVAR; its `rto_s` is before the clamp).
    fast: Estimator,
    /// FastRTO, clamped to [RTO_MIN, RTO_MAX].
    fast_rto_s: f64,
    /// SlowRTO, once an ambiguous ACK was seen.
    slow_s: Option<f64>,
    state: State,
    /// The last unambiguous sample of the previous exchange (token modes use it).
    prev_sample_s: Option<f64>,
}

impl Fasor {
    /// Builds the state from resolved parameters; `name` is the registry name.
    pub fn new(name: &'static str, p: &Params) -> Fasor {
        let appendix_seed = p.choice("first_rttvar") == "appendix";
        let initial_rto_s = p.float("initial_rto_s");
        Fasor {
            name,
            max_retransmit: p.int("max_retransmit") as u32,
            initial_rto_s,
            gains: Gains {
                alpha: p.float("alpha"),
                beta: p.float("beta"),
                // The draft's appendix pseudocode uses K = 1 (draft-ietf-core-fasor-02;
                // docs/algorithms.md, ambiguity #16).
                k: if appendix_seed { 1.0 } else { p.float("k") },
                g_s: p.float("g_s"),
                form: Form::Rfc6298,
            },
            appendix_seed,
            rto_min_s: p.float("rto_min_s"),
            rto_max_s: p.float("rto_max_s"),
            timer_max_s: p.float("timer_max_s"),
            slowrto_factor: p.float("slowrto_factor"),
            dither: p.flag("dither"),
            dither_lo: p.float("dither_lo"),
            dither_hi: p.float("dither_hi"),
            initial_srtt_for_dither_s: p.float("initial_srtt_for_dither_s"),
            fsf_probe_from_register: p.choice("fsf_probe") == "register",
            give_up_ambiguous: p.choice("give_up") == "ambiguous",
            token_mode: p.choice("token_mode") != "off",
            token_base_max: p.choice("token_base") == "max_prev_sample",
            fast: Estimator::new(initial_rto_s),
            fast_rto_s: initial_rto_s,
            slow_s: None,
            state: State::Fast,
            prev_sample_s: None,
        }
    }

    /// The state machine's current state.
    pub fn state(&self) -> State {
        self.state
    }

    /// FastRTO in seconds (before µs rounding).
    pub fn fast_rto_s(&self) -> f64 {
        self.fast_rto_s
    }

    /// SlowRTO in seconds, once an ambiguous exchange has set it.
    pub fn slow_rto_s(&self) -> Option<f64> {
        self.slow_s
    }

    fn snap(&self) -> Snap {
        Snap {
            state: self.state,
            fast_rto_s: self.fast_rto_s,
            srtt_s: self.fast.srtt_s,
            has_sample: self.fast.init,
            slow_s: self.slow_s,
            prev_sample_s: self.prev_sample_s,
        }
    }

    /// `fast_update(R)` of draft-ietf-core-fasor-02.
    fn fast_update(&mut self, r_s: f64) {
        // Normative text: RTTVAR = R/(2K), so FastRTO = 1.5·R; the appendix seeds R/2 with
        // K = 1 (also 1.5·R, but a larger RTTVAR is carried forward).
        let seed = if self.appendix_seed {
            r_s / 2.0
        } else {
            r_s / (2.0 * self.gains.k)
        };
        let e = self.fast.update_seeding(r_s, seed, &self.gains);
        self.fast_rto_s = e.max(self.rto_min_s).min(self.rto_max_s);
    }

    /// An ambiguous outcome: SlowRTO from the RTT measured from the original, next state.
    fn ambiguous(&mut self, r0_s: f64) {
        self.slow_s = Some((self.slowrto_factor * r0_s).min(self.rto_max_s));
        self.state = self.state.after_ambiguous();
    }

    /// `load(X)`: (re)initialises the register from the snapshot's FastRTO; one draw if
    /// dithering.
    fn load(&self, s: &mut FasorScratch, rng: &mut dyn Random) -> f64 {
        let snap = &s.snap;
        let mut base = snap.fast_rto_s;
        if self.token_mode && self.token_base_max {
            if let Some(p) = snap.prev_sample_s {
                base = base.max(p);
            }
        }
        if self.dither {
            let srtt = if snap.has_sample {
                snap.srtt_s
            } else {
                self.initial_srtt_for_dither_s
            };
            let u = rng.uniform01();
            // [RTO + SRTT/4, RTO + SRTT] by default (draft-ietf-core-fasor-02; docs/algorithms.md,
            // ambiguity #17).
            base += srtt * (self.dither_lo + (self.dither_hi - self.dither_lo) * u);
        }
        s.b_s = base.min(self.timer_max_s);
        s.b_s
    }

    /// Doubles the register (capped) and returns it.
    fn double(&self, s: &mut FasorScratch) -> f64 {
        s.b_s = (2.0 * s.b_s).min(self.timer_max_s);
        s.b_s
    }

    /// `timer(X, k)` of draft-ietf-core-fasor-02, in seconds before rounding.
    fn timer(&self, s: &mut FasorScratch, k: u32, rng: &mut dyn Random) -> f64 {
        // SlowRTO is set whenever FSF/SF was entered; INITIAL_RTO is a defensive fallback.
        let slow = s.snap.slow_s.unwrap_or(self.initial_rto_s);
        match (s.snap.state, k) {
            (State::Fast | State::FastSlowFast, 0) => self.load(s, rng),
            (State::Fast, _) => self.double(s),
            (State::FastSlowFast, 1) => {
                // The SlowRTO probe leaves the register untouched, so k = 2 is 2·b.
                let fast = if self.fsf_probe_from_register {
                    s.b_s
                } else {
                    s.snap.fast_rto_s
                };
                slow.max(2.0 * fast).min(self.timer_max_s)
            }
            (State::FastSlowFast, _) => self.double(s),
            (State::SlowFast, 0) => slow.min(self.timer_max_s), // never dithered
            (State::SlowFast, 1) => self.load(s, rng),
            (State::SlowFast, _) => self.double(s),
        }
    }

    /// The exchange's scratch; one made from the current state if the caller lost it.
    fn scratch_of(&self, x: &Exchange) -> FasorScratch {
        match x.scratch {
            Scratch::Fasor(s) => s,
            _ => FasorScratch {
                b_s: x.timer.as_secs_f64(),
                snap: self.snap(),
                started: Instant::ZERO,
            },
        }
    }
}

impl RtoAlgorithm for Fasor {
    fn name(&self) -> &'static str {
        self.name
    }

    fn start(
        &mut self,
        now: Instant,
        _admission: Admission,
        x: &mut Exchange,
        rng: &mut dyn Random,
    ) -> Duration {
        let mut s = FasorScratch {
            b_s: 0.0,
            snap: self.snap(),
            started: now,
        };
        let t0 = Duration::from_secs_f64_round_us(self.timer(&mut s, 0, rng));
        x.scratch = Scratch::Fasor(s);
        common::arm_first(x, t0)
    }

    fn expired(&mut self, _now: Instant, x: &mut Exchange, rng: &mut dyn Random) -> Expiry {
        let mut s = self.scratch_of(x);
        let expiry = common::expire_with(x, self.max_retransmit, |x| {
            Duration::from_secs_f64_round_us(self.timer(&mut s, x.retransmissions, rng))
        });
        x.scratch = Scratch::Fasor(s);
        expiry
    }

    fn completed(&mut self, c: &Completion<'_>, _x: &mut Exchange, _rng: &mut dyn Random) {
        let r = c.retransmissions();
        let r0_s = c.rtt_from_original().as_secs_f64();
        let answered = c
            .answered
            .filter(|_| self.token_mode)
            .and_then(|j| c.tx_times.get(j as usize));
        if let Some(&t_j) = answered {
            // Token- or option-matched: unambiguous even after retransmissions.
            let rj_s = (c.ack_time - t_j).as_secs_f64();
            self.fast_update(rj_s);
            self.prev_sample_s = Some(rj_s);
        } else if r == 0 {
            self.fast_update(r0_s);
            self.prev_sample_s = Some(r0_s);
        } else {
            self.prev_sample_s = None;
        }
        if r == 0 {
            self.state = State::Fast;
        } else {
            // SlowRTO always from the ORIGINAL, even when a token named a later copy.
            self.ambiguous(r0_s);
        }
    }

    fn failed(&mut self, now: Instant, x: &mut Exchange) {
        // Default: no change (docs/algorithms.md, ambiguity #21).
        if self.give_up_ambiguous {
            let started = self.scratch_of(x).started;
            self.prev_sample_s = None;
            self.ambiguous(now.saturating_since(started).as_secs_f64());
        }
    }

    fn reset(&mut self, _now: Instant) {
        self.fast = Estimator::new(self.initial_rto_s);
        self.fast_rto_s = self.initial_rto_s;
        self.slow_s = None;
        self.state = State::Fast;
        self.prev_sample_s = None;
    }

    /// FastRTO.
    fn rto(&self) -> Duration {
        Duration::from_secs_f64_round_us(self.fast_rto_s)
    }

    fn max_retransmit(&self) -> u32 {
        self.max_retransmit
    }

    fn snapshot(&self) -> Snapshot {
        let mut vars = vec![("fast_rto_s", self.fast_rto_s)];
        if self.fast.init {
            vars.push(("srtt_s", self.fast.srtt_s));
            vars.push(("rttvar_s", self.fast.rttvar_s));
        }
        if let Some(s) = self.slow_s {
            vars.push(("slow_rto_s", s));
        }
        if let Some(p) = self.prev_sample_s {
            vars.push(("prev_sample_s", p));
        }
        Snapshot {
            rto: self.rto(),
            state: Some(self.state.name()),
            vars,
        }
    }
}

/// Builds `fasor` from resolved parameters.
pub(crate) fn build(p: &Params, _now: Instant) -> Box<dyn RtoAlgorithm> {
    Box::new(Fasor::new("fasor", p))
}

/// Builds `fasor-token` from resolved parameters.
pub(crate) fn build_token(p: &Params, _now: Instant) -> Box<dyn RtoAlgorithm> {
    Box::new(Fasor::new("fasor-token", p))
}
