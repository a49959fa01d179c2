//! FASOR (spec §7; draft-ietf-core-fasor-02, Järvinen et al., Globecom 2018), registered as
//! `fasor`, and FASOR+token (§7.6), registered as `fasor-token`.
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
//! each use, so the series is the table of spec §7.4.
//!
//! Everything an exchange's timers depend on is snapshotted when it starts (spec §12 #20), so
//! exchanges running in parallel (NSTART > 1) are not affected by each other's completions.

use crate::algorithm::{Admission, Completion, Exchange, Expiry, RtoAlgorithm, Scratch, Snapshot};
use crate::common;
use crate::params::{Kind, ParamSpec, Params, Value};
use crate::rfc6298::{Estimator, Form, Gains};
use crate::rng::Random;
use crate::time::{Duration, Instant};

const fn seconds(
    key: &'static str,
    min: f64,
    max: f64,
    default: f64,
    help: &'static str,
    source: &'static str,
) -> ParamSpec {
    ParamSpec {
        key,
        kind: Kind::Seconds { min, max },
        default: Value::Float(default),
        help,
        source,
    }
}

const fn float(
    key: &'static str,
    min: f64,
    max: f64,
    default: f64,
    help: &'static str,
    source: &'static str,
) -> ParamSpec {
    ParamSpec {
        key,
        kind: Kind::Float { min, max },
        default: Value::Float(default),
        help,
        source,
    }
}

const fn choice(
    key: &'static str,
    names: &'static [&'static str],
    default: &'static str,
    help: &'static str,
    source: &'static str,
) -> ParamSpec {
    ParamSpec {
        key,
        kind: Kind::Choice(names),
        default: Value::Choice(default),
        help,
        source,
    }
}

/// FASOR's own parameters (after [`common::COMMON`], before a token group).
pub const FASOR: &[ParamSpec] = &[
    seconds(
        "initial_rto_s",
        0.001,
        3600.0,
        2.0,
        "INITIAL_RTO: FastRTO before any sample",
        "spec §7.1, draft-ietf-core-fasor-02",
    ),
    float(
        "k",
        0.0,
        64.0,
        4.0,
        "K: RTTVAR multiplier of FastRTO",
        "spec §7.1, RFC 6298",
    ),
    float(
        "alpha",
        0.0,
        1.0,
        0.125,
        "ALPHA: SRTT gain",
        "spec §7.1, RFC 6298",
    ),
    float(
        "beta",
        0.0,
        1.0,
        0.25,
        "BETA: RTTVAR gain",
        "spec §7.1, RFC 6298",
    ),
    seconds(
        "g_s",
        0.0,
        1.0,
        0.001,
        "G: clock granularity, floor of K*RTTVAR",
        "spec §7.1, RFC 6298",
    ),
    seconds(
        "rto_min_s",
        0.0,
        3600.0,
        0.0,
        "RTO_MIN: lower bound on FastRTO (0: the RFC 6298 1 s floor is removed)",
        "spec §7.1",
    ),
    seconds(
        "rto_max_s",
        0.001,
        f64::INFINITY,
        60.0,
        "RTO_MAX: upper bound on FastRTO and SlowRTO",
        "spec §7.1, §12 #19",
    ),
    seconds(
        "timer_max_s",
        0.001,
        f64::INFINITY,
        60.0,
        "TIMER_MAX: ceiling on the backoff register and every armed timer",
        "spec §7.1, §12 #19",
    ),
    float(
        "slowrto_factor",
        1.0,
        16.0,
        1.5,
        "SLOWRTO_FACTOR: SlowRTO = factor * RTT measured from the original",
        "spec §7.1, draft-ietf-core-fasor-02",
    ),
    ParamSpec {
        key: "dither",
        kind: Kind::Bool,
        default: Value::Bool(true),
        help: "DITHER: add SRTT*[DITHER_LO, DITHER_HI] when the backoff register is loaded",
        source: "spec §7.1, §12 #17",
    },
    float(
        "dither_lo",
        0.0,
        16.0,
        0.25,
        "DITHER_LO: low end of the dither, in units of SRTT",
        "spec §7.1",
    ),
    float(
        "dither_hi",
        0.0,
        16.0,
        1.0,
        "DITHER_HI: high end of the dither, in units of SRTT",
        "spec §7.1",
    ),
    seconds(
        "initial_srtt_for_dither_s",
        0.0,
        3600.0,
        2.0 / 3.0,
        "INITIAL_SRTT_FOR_DITHER: SRTT used for dithering before any sample (INITIAL_RTO/3)",
        "spec §7.1",
    ),
    choice(
        "first_rttvar",
        &["normative", "appendix"],
        "normative",
        "first sample: RTTVAR = R/(2K) (normative text) or R/2 with K = 1 (draft appendix)",
        "spec §7.3, §12 #16",
    ),
    choice(
        "fsf_probe",
        &["register", "fast_rto"],
        "register",
        "FAST_SLOW_FAST k=1 timer: max(SlowRTO, 2*b) with b the dithered register, or \
         max(SlowRTO, 2*FastRTO) undithered",
        "spec §7.4, §12 #18",
    ),
    choice(
        "give_up",
        &["no_change", "ambiguous"],
        "no_change",
        "after a give-up: no state change, or treat it as an ambiguous ACK at the give-up time",
        "spec §7.4, §12 #21",
    ),
    choice(
        "token_base",
        &["max_prev_sample", "fast_rto"],
        "max_prev_sample",
        "token modes: load the register from max(FastRTO, previous sample) or FastRTO only",
        "spec §7.4, §12 #22",
    ),
];

const TOKEN_MODES: &[&str] = &["off", "token", "rexmit_cnt"];

const REXMIT_CNT_OPTION: ParamSpec = ParamSpec {
    key: "rexmit_cnt_option",
    kind: Kind::Int { min: 0, max: 65535 },
    default: Value::Int(65020),
    help: "option number of Rexmit-Cnt (elective, safe-to-forward, NoCacheKey; draft: TBD)",
    source: "spec §7.6",
};

/// The token group of `fasor`: `token_mode` defaults to `off`.
pub const TOKEN_OFF: &[ParamSpec] = &[
    choice(
        "token_mode",
        TOKEN_MODES,
        "off",
        "which transmission a response answers: off, token (token || byte(j)), rexmit_cnt option",
        "spec §7.1, §7.6",
    ),
    REXMIT_CNT_OPTION,
];

/// The token group of `fasor-token`: `token_mode` defaults to `token`.
pub const TOKEN_ON: &[ParamSpec] = &[
    choice(
        "token_mode",
        TOKEN_MODES,
        "token",
        "which transmission a response answers: off, token (token || byte(j)), rexmit_cnt option",
        "spec §7.1, §7.6",
    ),
    REXMIT_CNT_OPTION,
];

/// FASOR's state machine (spec §7.4).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum State {
    /// Normal operation: FastRTO with exponential backoff.
    Fast,
    /// After one ambiguous exchange: FastRTO, then a SlowRTO probe, then backoff.
    FastSlowFast,
    /// After two or more ambiguous exchanges in a row: SlowRTO first, then FastRTO backoff.
    SlowFast,
}

impl State {
    /// The name used in snapshots and traces.
    pub fn name(self) -> &'static str {
        match self {
            State::Fast => "FAST",
            State::FastSlowFast => "FAST_SLOW_FAST",
            State::SlowFast => "SLOW_FAST",
        }
    }

    /// The transition on an ambiguous ACK.
    fn after_ambiguous(self) -> State {
        match self {
            State::Fast => State::FastSlowFast,
            State::FastSlowFast | State::SlowFast => State::SlowFast,
        }
    }
}

/// What an exchange's timers depend on, captured at its start (spec §7.2, §12 #20).
#[derive(Debug, Clone, Copy, PartialEq)]
struct Snap {
    state: State,
    fast_rto_s: f64,
    srtt_s: f64,
    has_sample: bool,
    slow_s: Option<f64>,
    prev_sample_s: Option<f64>,
}

/// FASOR's per-exchange scratch: the backoff register and the snapshot.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct FasorScratch {
    /// `X.b`: the backoff register in seconds (not rounded; timers are).
    b_s: f64,
    snap: Snap,
    /// When the original was sent (for the `give_up = ambiguous` alternative).
    started: Instant,
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
                // The draft's appendix pseudocode uses K = 1 (spec §7.3, §12 #16).
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

    /// `fast_update(R)` of spec §7.3.
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
            // [RTO + SRTT/4, RTO + SRTT] by default (spec §7.4, §12 #17).
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

    /// `timer(X, k)` of spec §7.4, in seconds before rounding.
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
        x.retransmissions = 0;
        x.timer = t0;
        t0
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
        // Default: no change (spec §12 #21).
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::params::Settings;
    use crate::rng::{ConstantRandom, ScriptedRandom};
    use crate::testutil::{run_exchange, secs, us};

    fn fasor(settings: &[&str]) -> Fasor {
        let s = Settings::parse(settings.iter().copied()).unwrap();
        Fasor::new(
            "fasor",
            &Params::resolve("fasor", &[common::COMMON, FASOR, TOKEN_OFF], &s).unwrap(),
        )
    }

    fn fasor_token(settings: &[&str]) -> Fasor {
        let s = Settings::parse(settings.iter().copied()).unwrap();
        Fasor::new(
            "fasor-token",
            &Params::resolve("fasor-token", &[common::COMMON, FASOR, TOKEN_ON], &s).unwrap(),
        )
    }

    fn close(a: f64, b: f64) {
        assert!((a - b).abs() < 1e-12, "{a} != {b}");
    }

    /// No draws allowed: the script is empty.
    fn no_draws() -> ScriptedRandom {
        ScriptedRandom::new(&[])
    }

    /// One exchange at `start_s`, answered `ack_s` after the original; returns its timers.
    fn ex(a: &mut Fasor, start_s: f64, ack_s: f64, answered: Option<u32>) -> Vec<Duration> {
        let start = Instant::ZERO + secs(start_s);
        run_exchange(a, start, Some(secs(ack_s)), answered, &mut no_draws()).timers
    }

    /// Every timer of an exchange that is never answered (on a clone, so the state is kept).
    fn series(a: &Fasor, rng: &mut dyn Random) -> Vec<Duration> {
        let mut a = a.clone();
        run_exchange(&mut a, Instant::from_secs(10_000), None, None, rng).timers
    }

    fn secs_list(v: &[f64]) -> Vec<Duration> {
        v.iter().map(|&s| secs(s)).collect()
    }

    #[test]
    fn first_timer_dither_with_u_half_is_2_41667() {
        // spec §7.5: 2 + (2/3)·(0.25 + 0.75·0.5) = 2 + (2/3)·0.625.
        let mut a = fasor(&[]);
        let mut rng = ScriptedRandom::new(&[0.5]);
        let mut x = Exchange::new();
        let t0 = a.start(Instant::ZERO, Admission::ALONE, &mut x, &mut rng);
        assert_eq!(t0, us(2_416_667));
        assert_eq!(rng.consumed(), 1);
    }

    #[test]
    fn dither_range_before_and_after_the_first_sample() {
        // spec §7.5: [2.1667, 2.6667] s, then [1.4, 2.0] s after R = 0.8.
        let a = fasor(&[]);
        let first = |u: f64| series(&a, &mut ConstantRandom(u))[0];
        assert_eq!(first(0.0), us(2_166_667));
        assert_eq!(first(1.0), us(2_666_667));
        let mut a = fasor(&[]);
        run_exchange(
            &mut a,
            Instant::ZERO,
            Some(secs(0.8)),
            None,
            &mut ConstantRandom(0.0),
        );
        close(a.fast_rto_s(), 1.2);
        let first = |u: f64| series(&a, &mut ConstantRandom(u))[0];
        assert_eq!(first(0.0), us(1_400_000));
        assert_eq!(first(1.0), us(2_000_000));
    }

    #[test]
    fn one_draw_per_exchange_and_backoff_doubles_the_dithered_register() {
        let a = fasor(&["max_retransmit=3"]);
        let mut rng = ScriptedRandom::new(&[0.5]);
        let t = series(&a, &mut rng);
        assert_eq!(rng.consumed(), 1);
        let b = 2.0 + (2.0 / 3.0) * 0.625;
        assert_eq!(t, secs_list(&[b, 2.0 * b, 4.0 * b, 8.0 * b]));
    }

    /// The six exchanges of the bufferbloat trace, with the checks of each row.
    #[test]
    fn bufferbloat_trace_without_dither() {
        let mut a = fasor(&["dither=false"]);
        // 1: FAST, 2.0, clean 0.8 → srtt 0.8, rttvar 0.1, FastRTO 1.2.
        assert_eq!(ex(&mut a, 0.0, 0.8, None), secs_list(&[2.0]));
        close(a.fast.srtt_s, 0.8);
        close(a.fast.rttvar_s, 0.1);
        close(a.fast_rto_s(), 1.2);
        assert_eq!(a.state(), State::Fast);
        // 2: FAST, 1.2, clean 0.8 → rttvar 0.075, FastRTO 1.1.
        assert_eq!(ex(&mut a, 10.0, 0.8, None), secs_list(&[1.2]));
        close(a.fast.rttvar_s, 0.075);
        close(a.fast_rto_s(), 1.1);
        // 3: FAST, 1.1, 2.2, 4.4 (sent at 0, 1.1, 3.3), ACK at 5.0 with r = 2.
        let o = run_exchange(
            &mut a,
            Instant::from_secs(20),
            Some(secs(5.0)),
            None,
            &mut no_draws(),
        );
        assert_eq!(o.timers, secs_list(&[1.1, 2.2, 4.4]));
        assert_eq!(
            o.tx_times,
            [
                Instant::from_secs(20),
                Instant::from_secs(20) + secs(1.1),
                Instant::from_secs(20) + secs(3.3)
            ]
        );
        close(a.slow_rto_s().unwrap(), 7.5);
        close(a.fast_rto_s(), 1.1);
        assert_eq!(a.state(), State::FastSlowFast);
        // 4: FSF, 1.1 then max(7.5, 2.2) = 7.5; ACK 5.0, r = 1 → SLOW_FAST.
        assert_eq!(ex(&mut a, 30.0, 5.0, None), secs_list(&[1.1, 7.5]));
        close(a.slow_rto_s().unwrap(), 7.5);
        assert_eq!(a.state(), State::SlowFast);
        // 5: SF, 7.5, clean 5.0 → rttvar 1.10625, srtt 1.325, FastRTO 5.75; → FAST.
        assert_eq!(ex(&mut a, 40.0, 5.0, None), secs_list(&[7.5]));
        close(a.fast.rttvar_s, 1.10625);
        close(a.fast.srtt_s, 1.325);
        close(a.fast_rto_s(), 5.75);
        assert_eq!(a.state(), State::Fast);
        // 6: FAST, 5.75, clean 5.0 → rttvar 1.7484375, srtt 1.784375, FastRTO 8.778125.
        assert_eq!(ex(&mut a, 60.0, 5.0, None), secs_list(&[5.75]));
        close(a.fast.rttvar_s, 1.7484375);
        close(a.fast.srtt_s, 1.784375);
        close(a.fast_rto_s(), 8.778125);
        assert_eq!(a.rto(), us(8_778_125));
        assert_eq!(a.snapshot().state, Some("FAST"));
    }

    #[test]
    fn bufferbloat_trace_with_token() {
        let mut a = fasor_token(&["dither=false"]);
        assert_eq!(a.name(), "fasor-token");
        ex(&mut a, 0.0, 0.8, Some(0));
        ex(&mut a, 10.0, 0.8, Some(0));
        close(a.fast_rto_s(), 1.1);
        // 3: the response echoes ordinal 0, so R = 5.0 is unambiguous.
        assert_eq!(ex(&mut a, 20.0, 5.0, Some(0)), secs_list(&[1.1, 2.2, 4.4]));
        close(a.fast_rto_s(), 5.75);
        close(a.prev_sample_s.unwrap(), 5.0);
        close(a.slow_rto_s().unwrap(), 7.5);
        assert_eq!(a.state(), State::FastSlowFast);
        // 4: loads max(5.75, 5.0) = 5.75, clean: FastRTO 8.778125, → FAST.
        assert_eq!(ex(&mut a, 30.0, 5.0, Some(0)), secs_list(&[5.75]));
        close(a.fast_rto_s(), 8.778125);
        assert_eq!(a.state(), State::Fast);
    }

    #[test]
    fn token_sample_from_a_retransmission() {
        // spec §7.5: the original is lost, the response echoes ordinal 1 and arrives 0.8 s
        // after retransmission 1, so Rj = 0.8 feeds FastRTO; SlowRTO still uses R0.
        let mut a = fasor_token(&["dither=false"]);
        // FastRTO 2.0: retransmission 1 at 2.0, response at 2.8.
        assert_eq!(ex(&mut a, 0.0, 2.8, Some(1)), secs_list(&[2.0, 4.0]));
        close(a.fast_rto_s(), 1.2);
        close(a.prev_sample_s.unwrap(), 0.8);
        close(a.slow_rto_s().unwrap(), 1.5 * 2.8);
        assert_eq!(a.state(), State::FastSlowFast);
    }

    #[test]
    fn token_ordinal_is_ignored_when_token_mode_is_off() {
        let mut a = fasor(&["dither=false"]);
        ex(&mut a, 0.0, 2.8, Some(1));
        close(a.fast_rto_s(), 2.0);
        assert!(!a.fast.init);
    }

    #[test]
    fn token_base_alternative_uses_fast_rto_only() {
        // §12 #22 alternative: a previous sample above FastRTO is not used.
        let mut a = fasor_token(&["dither=false", "token_base=fast_rto"]);
        ex(&mut a, 0.0, 0.8, Some(0));
        ex(&mut a, 10.0, 0.8, Some(0));
        ex(&mut a, 20.0, 5.0, Some(0)); // FastRTO 5.75, prev 5.0
        a.fast_rto_s = 4.0; // pretend FastRTO is below the previous sample
        assert_eq!(series(&a, &mut no_draws())[0], secs(4.0));
        let mut b = fasor_token(&["dither=false"]);
        b.prev_sample_s = Some(5.0);
        b.fast_rto_s = 4.0;
        assert_eq!(series(&b, &mut no_draws())[0], secs(5.0));
    }

    /// A FASOR with FastRTO 1.1 (two clean 0.8 s samples, no dither) in `state`, S = 7.5.
    fn with_f_1_1(state: State) -> Fasor {
        let mut a = fasor(&["dither=false", "max_retransmit=4"]);
        ex(&mut a, 0.0, 0.8, None);
        ex(&mut a, 10.0, 0.8, None);
        if state != State::Fast {
            ex(&mut a, 20.0, 5.0, None); // r = 2: S = 7.5, FAST_SLOW_FAST
        }
        if state == State::SlowFast {
            ex(&mut a, 30.0, 5.0, None); // r = 1: S = 7.5, SLOW_FAST
        }
        assert_eq!(a.state(), state);
        close(a.fast_rto_s(), 1.1);
        close(a.slow_rto_s().unwrap_or(7.5), 7.5);
        a
    }

    #[test]
    fn timer_series_table_f_1_1_s_7_5() {
        // spec §7.4: FAST 1.1, 2.2, 4.4, 8.8, 17.6; FSF 1.1, 7.5, 2.2, 4.4, 8.8;
        // SF 7.5, 1.1, 2.2, 4.4, 8.8.
        let fast = with_f_1_1(State::Fast);
        assert_eq!(
            series(&fast, &mut no_draws()),
            secs_list(&[1.1, 2.2, 4.4, 8.8, 17.6])
        );
        let fsf = with_f_1_1(State::FastSlowFast);
        assert_eq!(
            series(&fsf, &mut no_draws()),
            secs_list(&[1.1, 7.5, 2.2, 4.4, 8.8])
        );
        let sf = with_f_1_1(State::SlowFast);
        assert_eq!(
            series(&sf, &mut no_draws()),
            secs_list(&[7.5, 1.1, 2.2, 4.4, 8.8])
        );
    }

    #[test]
    fn slow_fast_draws_at_k1_not_at_the_original() {
        let mut sf = with_f_1_1(State::SlowFast);
        sf.dither = true;
        let mut rng = ScriptedRandom::new(&[0.0]);
        let mut x = Exchange::new();
        assert_eq!(
            sf.start(Instant::ZERO, Admission::ALONE, &mut x, &mut rng),
            secs(7.5)
        );
        assert_eq!(rng.consumed(), 0);
        // SRTT = 0.8 after the two clean samples: 1.1 + 0.8/4 = 1.3.
        assert_eq!(
            sf.expired(Instant::ZERO + secs(7.5), &mut x, &mut rng),
            Expiry::Retransmit(secs(1.3))
        );
        assert_eq!(rng.consumed(), 1);
    }

    #[test]
    fn fsf_probe_uses_the_dithered_register_or_fast_rto() {
        // §12 #18: with S small, the k = 1 timer shows which base is used.
        let mut a = with_f_1_1(State::FastSlowFast);
        a.dither = true;
        a.slow_s = Some(1.0);
        // b = 1.1 + 0.8·(0.25 + 0.75·1) = 1.9 (u = 1): k1 = max(1.0, 3.8), k2 = 3.8.
        let t = series(&a, &mut ConstantRandom(1.0));
        assert_eq!(t[..3], secs_list(&[1.9, 3.8, 3.8]));
        a.fsf_probe_from_register = false;
        let t = series(&a, &mut ConstantRandom(1.0));
        assert_eq!(t[..3], secs_list(&[1.9, 2.2, 3.8]));
    }

    #[test]
    fn caps_timer_max_and_rto_max() {
        // §12 #19: FastRTO, SlowRTO and every timer ≤ 60 s.
        let mut a = fasor(&["dither=false", "max_retransmit=8"]);
        ex(&mut a, 0.0, 0.8, None);
        ex(&mut a, 10.0, 0.8, None);
        assert_eq!(
            series(&a, &mut no_draws()),
            secs_list(&[1.1, 2.2, 4.4, 8.8, 17.6, 35.2, 60.0, 60.0, 60.0])
        );
        // An ambiguous RTT of 50 s: SlowRTO min(75, 60) = 60.
        let mut b = fasor(&["dither=false", "max_retransmit=20"]);
        ex(&mut b, 0.0, 50.0, None);
        close(b.slow_rto_s().unwrap(), 60.0);
        // A clean 50 s sample: FastRTO min(75, 60) = 60.
        let mut c = fasor(&["dither=false", "initial_rto_s=100", "timer_max_s=inf"]);
        ex(&mut c, 0.0, 50.0, None);
        close(c.fast_rto_s(), 60.0);
        // Another RTO_MAX (≥ 60 s) lifts both.
        let mut d = fasor(&[
            "dither=false",
            "initial_rto_s=100",
            "timer_max_s=inf",
            "rto_max_s=120",
        ]);
        ex(&mut d, 0.0, 50.0, None);
        close(d.fast_rto_s(), 75.0);
        // A dithered register is capped too.
        let e = fasor(&["initial_rto_s=59.9"]);
        assert_eq!(series(&e, &mut ConstantRandom(0.5))[0], secs(60.0));
    }

    #[test]
    fn rto_min_floors_fast_rto() {
        let mut a = fasor(&["dither=false", "rto_min_s=1"]);
        ex(&mut a, 0.0, 0.1, None);
        close(a.fast_rto_s(), 1.0);
    }

    #[test]
    fn appendix_first_rttvar_alternative() {
        // §12 #16: RTTVAR = R/2 with K = 1: also 1.5·R on the first sample, but the larger
        // RTTVAR is carried forward: rttvar 0.4 (normative: 0.1), FastRTO 0.8 + 0.4 = 1.2.
        let mut a = fasor(&["dither=false", "first_rttvar=appendix"]);
        ex(&mut a, 0.0, 0.8, None);
        close(a.fast.rttvar_s, 0.4);
        close(a.fast_rto_s(), 1.2);
        ex(&mut a, 10.0, 1.0, None);
        // rttvar 0.75·0.4 + 0.25·0.2 = 0.35, srtt 0.825 → 1.175 (normative: 0.825 + 4·0.125).
        close(a.fast.rttvar_s, 0.35);
        close(a.fast_rto_s(), 1.175);
        let mut n = fasor(&["dither=false"]);
        ex(&mut n, 0.0, 0.8, None);
        ex(&mut n, 10.0, 1.0, None);
        close(n.fast_rto_s(), 1.325);
    }

    #[test]
    fn give_up_after_max_retransmit_changes_nothing_by_default() {
        let mut a = fasor(&["dither=false", "max_retransmit=2"]);
        let o = run_exchange(&mut a, Instant::ZERO, None, None, &mut no_draws());
        assert_eq!(o.timers, secs_list(&[2.0, 4.0, 8.0]));
        assert_eq!(o.gave_up, Some(Instant::from_secs(14)));
        assert_eq!(a.state(), State::Fast);
        assert_eq!(a.slow_rto_s(), None);
        assert_eq!(a.rto(), secs(2.0));
    }

    #[test]
    fn give_up_as_ambiguous_alternative() {
        // §12 #21 alternative: S = 1.5 × (give-up time − original send) = 1.5 × 14, capped 60.
        let mut a = fasor(&["dither=false", "max_retransmit=2", "give_up=ambiguous"]);
        run_exchange(&mut a, Instant::from_secs(5), None, None, &mut no_draws());
        assert_eq!(a.state(), State::FastSlowFast);
        close(a.slow_rto_s().unwrap(), 21.0);
        run_exchange(&mut a, Instant::from_secs(100), None, None, &mut no_draws());
        assert_eq!(a.state(), State::SlowFast);
    }

    #[test]
    fn parallel_exchanges_use_the_state_at_their_start() {
        // §12 #20: exchange A starts in FAST; B completes ambiguously meanwhile; A keeps the
        // FAST series from its snapshot.
        let mut a = with_f_1_1(State::Fast);
        let mut rng = no_draws();
        let mut xa = Exchange::new();
        let two = Admission {
            in_flight: 2,
            dequeued: false,
        };
        assert_eq!(a.start(Instant::ZERO, two, &mut xa, &mut rng), secs(1.1));
        ex(&mut a, 0.0, 5.0, None); // B: r = 2, → FAST_SLOW_FAST, S = 7.5
        assert_eq!(a.state(), State::FastSlowFast);
        assert_eq!(
            a.expired(Instant::ZERO + secs(1.1), &mut xa, &mut rng),
            Expiry::Retransmit(secs(2.2))
        );
    }

    #[test]
    fn clean_exchange_returns_to_fast() {
        let mut a = with_f_1_1(State::FastSlowFast);
        ex(&mut a, 50.0, 0.8, None);
        assert_eq!(a.state(), State::Fast);
        assert_eq!(a.snapshot().state, Some("FAST"));
    }

    #[test]
    fn reset_forgets_everything() {
        let mut a = with_f_1_1(State::SlowFast);
        a.reset(Instant::from_secs(100));
        assert_eq!(a.state(), State::Fast);
        assert_eq!(a.rto(), secs(2.0));
        assert_eq!(a.slow_rto_s(), None);
        assert_eq!(a.snapshot().vars, [("fast_rto_s", 2.0)]);
        assert_eq!(series(&a, &mut no_draws())[0], secs(2.0));
    }

    #[test]
    fn registry_builds_both_variants_with_their_token_defaults() {
        use crate::registry;
        let f = registry::build("fasor", &Settings::new(), Instant::ZERO).unwrap();
        assert_eq!(f.name(), "fasor");
        let p = Params::resolve(
            "fasor-token",
            registry::lookup("fasor-token").unwrap().params,
            &Settings::new(),
        )
        .unwrap();
        assert_eq!(p.choice("token_mode"), "token");
        assert_eq!(p.int("rexmit_cnt_option"), 65020);
        let t = registry::build("fasor-token", &Settings::new(), Instant::ZERO).unwrap();
        assert_eq!(t.name(), "fasor-token");
        assert_eq!(t.snapshot().state, Some("FAST"));
    }
}
