//! CoCoA (draft-ietf-core-cocoa-03) with RFC 6298 semantics: `cocoa` and `cocoa-strong`
//! (spec/algorithms.md §4.1–4.5).
//!
//! Two RFC 6298 estimators, *strong* (samples from exchanges without retransmission, K = 4)
//! and *weak* (1..=2 retransmissions, measured from the original send, K = 1), blended into one
//! overall RTO. The first timer is the overall RTO dithered by ×[1, ACK_RANDOM_FACTOR);
//! retransmissions back off by the variable backoff factor (VBF) and are truncated at
//! BACKOFF_CAP. An idle destination's RTO drifts back toward 2 s ("aging").
//!
//! `CocoaCore` holds the state and the pieces CoCoA-FB (`cocoa_fb.rs`) and GSRTC
//! (`gsrtc.rs`) reuse: start with aging and the blind rule, the VBF, the sample classes and the
//! overall-RTO blend. The Californium-compat profile (§4.6, integer ms) lives in `cocoa_cf.rs`
//! and is selected with `profile = cf-compat`.

use crate::algorithm::{Admission, Completion, Exchange, Expiry, RtoAlgorithm, Scratch, Snapshot};
use crate::cocoa_cf::{CocoaCf, CF_COMPAT};
use crate::common::{self, dither_secs, expire_with};
use crate::params::{Kind, ParamSpec, Params, Value};
use crate::rfc6298::{Estimator, Form, Gains};
use crate::rng::Random;
use crate::time::{Duration, Instant};

const SECS: Kind = Kind::Seconds {
    min: 0.0,
    max: 3600.0,
};
const SECS_OR_INF: Kind = Kind::Seconds {
    min: 0.0,
    max: f64::INFINITY,
};
const GAIN: Kind = Kind::Float { min: 0.0, max: 1.0 };
const FACTOR: Kind = Kind::Float {
    min: 0.0,
    max: 1000.0,
};

/// The parameters of CoCoA (spec §4.1), shared by `cocoa`, `cocoa-strong`, `cocoa-fb1`,
/// `cocoa-fb2` and `gsrtc`. `cocoa-strong` is STRONG_ONLY = true, chosen by its name.
pub const COCOA: &[ParamSpec] = &[
    ParamSpec {
        key: "initial_rto_s",
        kind: Kind::Seconds {
            min: 0.001,
            max: 3600.0,
        },
        default: Value::Float(2.0),
        help: "INITIAL_RTO: initial E_strong, E_weak and overall RTO",
        source: "draft-ietf-core-cocoa-03 §4.2; spec §4.1",
    },
    ParamSpec {
        key: "alpha",
        kind: GAIN,
        default: Value::Float(0.125),
        help: "ALPHA: SRTT gain of both estimators (cf-compat swaps the gains: alpha=0.25 beta=0.125)",
        source: "RFC 6298 §2.3; spec §4.1, §12 #7",
    },
    ParamSpec {
        key: "beta",
        kind: GAIN,
        default: Value::Float(0.25),
        help: "BETA: RTTVAR gain of both estimators",
        source: "RFC 6298 §2.3; spec §4.1, §12 #7",
    },
    ParamSpec {
        key: "g_s",
        kind: SECS,
        default: Value::Float(0.001),
        help: "G: clock granularity, floor of K*RTTVAR in E = SRTT + max(G, K*RTTVAR)",
        source: "RFC 6298 §2; spec §4.1, §12 #6",
    },
    ParamSpec {
        key: "k_strong",
        kind: FACTOR,
        default: Value::Float(4.0),
        help: "K_STRONG: RTTVAR multiplier of the strong estimator",
        source: "draft-ietf-core-cocoa-03 §4.2.1; spec §4.1",
    },
    ParamSpec {
        key: "k_weak",
        kind: FACTOR,
        default: Value::Float(1.0),
        help: "K_WEAK: RTTVAR multiplier of the weak estimator",
        source: "draft-ietf-core-cocoa-03 §4.2.1; spec §4.1",
    },
    ParamSpec {
        key: "w_strong",
        kind: GAIN,
        default: Value::Float(0.5),
        help: "W_STRONG: weight of E_strong in the overall RTO (gsrtc replaces it by its adaptive weight)",
        source: "draft-ietf-core-cocoa-03 §4.2.2; spec §4.1",
    },
    ParamSpec {
        key: "w_weak",
        kind: GAIN,
        default: Value::Float(0.25),
        help: "W_WEAK: weight of E_weak in the overall RTO",
        source: "draft-ietf-core-cocoa-03 §4.2.2; spec §4.1",
    },
    ParamSpec {
        key: "weak_max_retx",
        kind: Kind::Int { min: 0, max: 255 },
        default: Value::Int(2),
        help: "WEAK_MAX_RETX: weak samples only from exchanges with 1..=this many retransmissions",
        source: "draft-ietf-core-cocoa-03 §4.2.1; spec §4.1",
    },
    ParamSpec {
        key: "vbf_low_thresh_s",
        kind: SECS,
        default: Value::Float(1.0),
        help: "VBF_LOW_THRESH: a timer below this backs off by VBF_LOW",
        source: "draft-ietf-core-cocoa-03 §4.3; spec §4.1",
    },
    ParamSpec {
        key: "vbf_low",
        kind: FACTOR,
        default: Value::Float(3.0),
        help: "VBF_LOW: backoff factor of timers below VBF_LOW_THRESH",
        source: "draft-ietf-core-cocoa-03 §4.3; spec §4.1",
    },
    ParamSpec {
        key: "vbf_high_thresh_s",
        kind: SECS,
        default: Value::Float(3.0),
        help: "VBF_HIGH_THRESH: a timer above this backs off by VBF_HIGH",
        source: "draft-ietf-core-cocoa-03 §4.3; spec §4.1",
    },
    ParamSpec {
        key: "vbf_high",
        kind: FACTOR,
        default: Value::Float(1.5),
        help: "VBF_HIGH: backoff factor of timers above VBF_HIGH_THRESH",
        source: "draft-ietf-core-cocoa-03 §4.3; spec §4.1",
    },
    ParamSpec {
        key: "vbf_mid",
        kind: FACTOR,
        default: Value::Float(2.0),
        help: "VBF_MID: backoff factor of timers within [VBF_LOW_THRESH, VBF_HIGH_THRESH]",
        source: "draft-ietf-core-cocoa-03 §4.3; spec §4.1",
    },
    ParamSpec {
        key: "vbf_from_first",
        kind: Kind::Bool,
        default: Value::Bool(false),
        help: "compute the VBF once from the dithered first timer (Californium) instead of from the current timer at each expiry",
        source: "spec §12 #9",
    },
    ParamSpec {
        key: "backoff_cap_s",
        kind: SECS_OR_INF,
        default: Value::Float(32.0),
        help: "BACKOFF_CAP: backed-off timers are truncated here (inf: no truncation)",
        source: "draft-ietf-core-cocoa-03 §4.3; spec §4.1",
    },
    ParamSpec {
        key: "truncation",
        kind: Kind::Choice(&["never_shrink", "literal"]),
        default: Value::Choice("never_shrink"),
        help: "never_shrink: min(f*T, max(BACKOFF_CAP, T)); literal: min(f*T, BACKOFF_CAP), which may shrink a timer",
        source: "spec §12 #10",
    },
    ParamSpec {
        key: "timer_max_s",
        kind: SECS_OR_INF,
        default: Value::Float(60.0),
        help: "TIMER_MAX: ceiling on any armed timer (the first timer, and every backed-off one)",
        source: "spec §0.3, §4.1",
    },
    ParamSpec {
        key: "rto_max_s",
        kind: SECS_OR_INF,
        default: Value::Float(60.0),
        help: "RTO_MAX: clamp on the overall RTO and on the blind base",
        source: "spec §0.3, §4.1",
    },
    ParamSpec {
        key: "aging",
        kind: Kind::Bool,
        default: Value::Bool(true),
        help: "AGING: an idle destination's RTO drifts toward 1..3 s (preset fasor18: off)",
        source: "draft-ietf-core-cocoa-03 §4.4; spec §4.1, §12 #12",
    },
    ParamSpec {
        key: "aging_style",
        kind: Kind::Choice(&["cumulative", "cf-compat"]),
        default: Value::Choice("cumulative"),
        help: "cumulative: lazy, at exchange start, last_update advanced by each consumed interval; cf-compat: after the first timer, at most one step, last_update = now",
        source: "spec §4.4, §4.6 item 8, §12 #12",
    },
    ParamSpec {
        key: "age_low_thresh_s",
        kind: SECS,
        default: Value::Float(1.0),
        help: "AGE_LOW_THRESH: an RTO below this doubles after AGE_LOW_MULT*RTO idle",
        source: "draft-ietf-core-cocoa-03 §4.4; spec §4.1",
    },
    ParamSpec {
        key: "age_low_mult",
        kind: FACTOR,
        default: Value::Float(16.0),
        help: "AGE_LOW_MULT: idle multiple of the RTO before a low RTO doubles",
        source: "draft-ietf-core-cocoa-03 §4.4; spec §4.1",
    },
    ParamSpec {
        key: "age_high_thresh_s",
        kind: SECS,
        default: Value::Float(3.0),
        help: "AGE_HIGH_THRESH: an RTO above this becomes AGE_HIGH_BASE + RTO/2 after AGE_HIGH_MULT*RTO idle",
        source: "draft-ietf-core-cocoa-03 §4.4; spec §4.1",
    },
    ParamSpec {
        key: "age_high_mult",
        kind: FACTOR,
        default: Value::Float(4.0),
        help: "AGE_HIGH_MULT: idle multiple of the RTO before a high RTO decays",
        source: "draft-ietf-core-cocoa-03 §4.4; spec §4.1",
    },
    ParamSpec {
        key: "age_high_base_s",
        kind: SECS,
        default: Value::Float(1.0),
        help: "the constant in RTO = AGE_HIGH_BASE + RTO/2 when a high RTO ages",
        source: "draft-ietf-core-cocoa-03 §4.4; spec §4.4",
    },
    ParamSpec {
        key: "blind",
        kind: Kind::Choice(&["on", "off", "cf-compat"]),
        default: Value::Choice("on"),
        help: "blind RTO for parallel exchanges. on: INITIAL_RTO*n (n includes the new exchange) before any sample; off: INITIAL_RTO; cf-compat: RTO*n' with n' excluding the new exchange unless dequeued, forever",
        source: "draft-ietf-core-cocoa-03 §4.2; spec §4.4, §12 #11",
    },
    ParamSpec {
        key: "estimator",
        kind: Kind::Choice(&["rfc6298", "pseudocode_literal"]),
        default: Value::Choice("rfc6298"),
        help: "rfc6298: |SRTT-R| and max(G, K*RTTVAR); pseudocode_literal: the draft's pseudocode without abs() and G",
        source: "spec §4.3, §12 #6",
    },
];

/// Which samples update which estimator (spec §4.4 `completed`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum SampleClass {
    /// No retransmission: the strong estimator.
    Strong,
    /// 1..=WEAK_MAX_RETX retransmissions (and not STRONG_ONLY): the weak estimator.
    Weak,
    /// No sample.
    None,
}

/// The blind-RTO rule (spec §4.4, §12 #11).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Blind {
    /// The draft: `INITIAL_RTO · n` before any sample, `n` including the new exchange.
    On,
    /// Always `INITIAL_RTO` before any sample.
    Off,
    /// Californium: `RTO · n'`, with `n'` the exchanges already registered, forever.
    CfCompat,
}

/// Where and how aging runs (spec §12 #12).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum AgingStyle {
    /// At exchange start, before the base is read; cumulative, advancing `last_update`.
    Cumulative,
    /// After the first timer is computed; one step at most, `last_update = now`.
    CfCompat,
}

/// CoCoA's constants, resolved from [`Params`] (the `cocoa` parameter group).
#[derive(Debug, Clone)]
pub(crate) struct CocoaConfig {
    pub(crate) ack_random_factor: f64,
    pub(crate) max_retransmit: u32,
    pub(crate) initial_rto_s: f64,
    pub(crate) strong: Gains,
    pub(crate) weak: Gains,
    pub(crate) w_strong: f64,
    pub(crate) w_weak: f64,
    pub(crate) weak_max_retx: u32,
    pub(crate) strong_only: bool,
    pub(crate) vbf: Vbf,
    pub(crate) vbf_from_first: bool,
    pub(crate) backoff_cap_s: f64,
    pub(crate) truncation_literal: bool,
    pub(crate) timer_max_s: f64,
    pub(crate) rto_max_s: f64,
    pub(crate) aging: bool,
    pub(crate) aging_style: AgingStyle,
    pub(crate) age_low_thresh_s: f64,
    pub(crate) age_low_mult: f64,
    pub(crate) age_high_thresh_s: f64,
    pub(crate) age_high_mult: f64,
    pub(crate) age_high_base_s: f64,
    pub(crate) blind: Blind,
}

/// The variable backoff factor's thresholds and factors (spec §4.4 `next_timer`).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Vbf {
    pub(crate) low_thresh_s: f64,
    pub(crate) low: f64,
    pub(crate) high_thresh_s: f64,
    pub(crate) high: f64,
    pub(crate) mid: f64,
}

impl Vbf {
    /// The draft's defaults (for CoCoA++'s `vbf` expiry alternative).
    pub(crate) const DEFAULT: Vbf = Vbf {
        low_thresh_s: 1.0,
        low: 3.0,
        high_thresh_s: 3.0,
        high: 1.5,
        mid: 2.0,
    };

    /// Reads the `vbf_*` parameters.
    pub(crate) fn from_params(p: &Params) -> Vbf {
        Vbf {
            low_thresh_s: p.float("vbf_low_thresh_s"),
            low: p.float("vbf_low"),
            high_thresh_s: p.float("vbf_high_thresh_s"),
            high: p.float("vbf_high"),
            mid: p.float("vbf_mid"),
        }
    }

    /// The factor for a timer of `t_s` seconds: strict comparisons, so a timer of exactly
    /// 1 s or 3 s gets VBF_MID (spec §4.4 notes).
    pub(crate) fn factor(&self, t_s: f64) -> f64 {
        if t_s < self.low_thresh_s {
            self.low
        } else if t_s > self.high_thresh_s {
            self.high
        } else {
            self.mid
        }
    }
}

impl CocoaConfig {
    /// Reads the `common` and `cocoa` parameter groups.
    pub(crate) fn from_params(p: &Params, strong_only: bool) -> CocoaConfig {
        let form = Form::from_name(p.choice("estimator")).expect("declared choice");
        let gains = |k: f64| Gains {
            alpha: p.float("alpha"),
            beta: p.float("beta"),
            k,
            g_s: p.float("g_s"),
            form,
        };
        CocoaConfig {
            ack_random_factor: p.float("ack_random_factor"),
            max_retransmit: p.int("max_retransmit") as u32,
            initial_rto_s: p.float("initial_rto_s"),
            strong: gains(p.float("k_strong")),
            weak: gains(p.float("k_weak")),
            w_strong: p.float("w_strong"),
            w_weak: p.float("w_weak"),
            weak_max_retx: p.int("weak_max_retx") as u32,
            strong_only,
            vbf: Vbf::from_params(p),
            vbf_from_first: p.flag("vbf_from_first"),
            backoff_cap_s: p.float("backoff_cap_s"),
            truncation_literal: p.choice("truncation") == "literal",
            timer_max_s: p.float("timer_max_s"),
            rto_max_s: p.float("rto_max_s"),
            aging: p.flag("aging"),
            aging_style: match p.choice("aging_style") {
                "cf-compat" => AgingStyle::CfCompat,
                _ => AgingStyle::Cumulative,
            },
            age_low_thresh_s: p.float("age_low_thresh_s"),
            age_low_mult: p.float("age_low_mult"),
            age_high_thresh_s: p.float("age_high_thresh_s"),
            age_high_mult: p.float("age_high_mult"),
            age_high_base_s: p.float("age_high_base_s"),
            blind: match p.choice("blind") {
                "off" => Blind::Off,
                "cf-compat" => Blind::CfCompat,
                _ => Blind::On,
            },
        }
    }
}

/// Per-exchange scratch of the CoCoA family and CoCoA++: the armed timer *before* µs rounding
/// (so backoff chains and thresholds follow the spec's exact arithmetic, §0.4) and the first
/// timer (the VBF input under `vbf_from_first`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct TimerScratch {
    /// The armed timer in f64 seconds; `Exchange::timer` is this rounded to the µs.
    pub(crate) timer_s: f64,
    /// The first timer of the exchange in f64 seconds.
    pub(crate) first_s: f64,
}

impl TimerScratch {
    /// Arms the first timer `t0_s` on `x` (k = 0) and returns it rounded.
    pub(crate) fn arm_first(x: &mut Exchange, t0_s: f64) -> Duration {
        let t0_s = t0_s.max(0.0);
        x.retransmissions = 0;
        x.scratch = Scratch::Timer(TimerScratch {
            timer_s: t0_s,
            first_s: t0_s,
        });
        x.timer = Duration::from_secs_f64_round_us(t0_s);
        x.timer
    }

    /// The scratch of `x`, or one rebuilt from the rounded timer if the exchange was started by
    /// another algorithm.
    pub(crate) fn of(x: &Exchange) -> TimerScratch {
        match x.scratch {
            Scratch::Timer(s) => s,
            _ => {
                let t = x.timer.as_secs_f64();
                TimerScratch {
                    timer_s: t,
                    first_s: t,
                }
            }
        }
    }

    /// Replaces the armed timer of `x` with `t_s` (a retransmission) and returns it rounded.
    pub(crate) fn arm_next(x: &mut Exchange, t_s: f64) -> Duration {
        let mut s = TimerScratch::of(x);
        s.timer_s = t_s.max(0.0);
        x.scratch = Scratch::Timer(s);
        Duration::from_secs_f64_round_us(s.timer_s)
    }
}

/// The CoCoA state `D` of spec §4.2 and the rules of §4.4, shared by the whole family.
#[derive(Debug, Clone)]
pub(crate) struct CocoaCore {
    pub(crate) cfg: CocoaConfig,
    /// `D.S`.
    pub(crate) strong: Estimator,
    /// `D.W`.
    pub(crate) weak: Estimator,
    /// `D.rto`: the overall RTO in seconds.
    pub(crate) rto_s: f64,
    /// `D.has_sample`.
    pub(crate) has_sample: bool,
    /// `D.last_update`: the aging clock.
    pub(crate) last_update: Instant,
}

impl CocoaCore {
    /// Fresh state created at `now` (spec §4.2).
    pub(crate) fn new(cfg: CocoaConfig, now: Instant) -> CocoaCore {
        CocoaCore {
            strong: Estimator::new(cfg.initial_rto_s),
            weak: Estimator::new(cfg.initial_rto_s),
            rto_s: cfg.initial_rto_s,
            has_sample: false,
            last_update: now,
            cfg,
        }
    }

    /// Back to the state of a fresh destination created at `now`.
    pub(crate) fn reset(&mut self, now: Instant) {
        *self = CocoaCore::new(self.cfg.clone(), now);
    }

    /// `start` of spec §4.4 (and of §5 with `carried`): ages the RTO, picks the base (the
    /// carried RTO, the overall RTO, or the blind base), dithers it unless it is a carried value
    /// used undithered, caps it at TIMER_MAX and arms it.
    pub(crate) fn start(
        &mut self,
        now: Instant,
        admission: Admission,
        x: &mut Exchange,
        rng: &mut dyn Random,
        carried: Option<Carried>,
    ) -> Duration {
        if self.cfg.aging && self.cfg.aging_style == AgingStyle::Cumulative {
            self.age(now);
        }
        let t0_s = match carried {
            // spec §5: the carried value used UNDITHERED, no draw consumed (RESOLVED, §12 #13).
            Some(Carried::Undithered) => self.rto_s.min(self.cfg.timer_max_s),
            Some(Carried::Dithered) => self.dithered(self.rto_s, rng),
            None => {
                let base = self.base_s(admission);
                self.dithered(base, rng)
            }
        };
        if self.cfg.aging && self.cfg.aging_style == AgingStyle::CfCompat {
            // §4.6 item 8: aging after the first timer, so it affects the next exchange.
            self.age_one_step(now);
        }
        TimerScratch::arm_first(x, t0_s)
    }

    /// `min(base·(1 + (ARF−1)·u), TIMER_MAX)`: one draw (spec §0.4).
    fn dithered(&self, base_s: f64, rng: &mut dyn Random) -> f64 {
        let u = rng.uniform01();
        dither_secs(base_s, self.cfg.ack_random_factor, u).min(self.cfg.timer_max_s)
    }

    /// The undithered base of the first timer, with the blind rule (spec §4.4, §12 #11).
    pub(crate) fn base_s(&self, admission: Admission) -> f64 {
        match self.cfg.blind {
            _ if self.has_sample && self.cfg.blind != Blind::CfCompat => self.rto_s,
            // Draft: "two already running -> the new one gets 6 s"; n counts the new exchange.
            Blind::On => {
                (self.cfg.initial_rto_s * admission.in_flight.max(1) as f64).min(self.cfg.rto_max_s)
            }
            Blind::Off => self.cfg.initial_rto_s,
            Blind::CfCompat => {
                // Californium computes the timer before registering the exchange, unless it was
                // dequeued from the NSTART queue (spec §4.6 item 5); ×1 for n' <= 1.
                let n = if admission.dequeued {
                    admission.in_flight
                } else {
                    admission.in_flight.saturating_sub(1)
                };
                (self.rto_s * n.max(1) as f64).min(self.cfg.rto_max_s)
            }
        }
    }

    /// `age(now)` of spec §4.4: lazy and cumulative. Each step consumes its interval by
    /// advancing `last_update`, so evaluating late equals a timer that ran all along.
    pub(crate) fn age(&mut self, now: Instant) {
        loop {
            let idle_s = (now - self.last_update).as_secs_f64();
            let Some((step_s, new_rto_s)) = self.aging_step(idle_s) else {
                return;
            };
            let step = Duration::from_secs_f64_round_us(step_s);
            if step <= Duration::ZERO {
                return; // a zero or negative RTO (pseudocode_literal) must not loop forever
            }
            self.last_update += step;
            self.rto_s = new_rto_s;
        }
    }

    /// The cf-compat aging of §4.6 item 8 in seconds: at most one step, then
    /// `last_update = now` (the remainder of the idle interval is lost).
    fn age_one_step(&mut self, now: Instant) {
        let idle_s = (now - self.last_update).as_secs_f64();
        if let Some((_, new_rto_s)) = self.aging_step(idle_s) {
            self.rto_s = new_rto_s;
            self.last_update = now;
        }
    }

    /// One aging step after `idle_s` idle seconds: `(interval consumed, new RTO)`, or `None`.
    /// Comparisons are strict (spec §4.4 notes).
    fn aging_step(&self, idle_s: f64) -> Option<(f64, f64)> {
        let c = &self.cfg;
        let rto = self.rto_s;
        if rto <= 0.0 {
            return None;
        }
        if rto < c.age_low_thresh_s && idle_s > c.age_low_mult * rto {
            // draft §4.4: a small RTO of an idle destination doubles.
            Some((c.age_low_mult * rto, 2.0 * rto))
        } else if rto > c.age_high_thresh_s && idle_s > c.age_high_mult * rto {
            // draft §4.4: a large RTO decays toward 2 s: 1 s + RTO/2.
            Some((c.age_high_mult * rto, c.age_high_base_s + rto / 2.0))
        } else {
            None
        }
    }

    /// `next_timer` of spec §4.4: VBF on the current timer (or on the first, §12 #9), then the
    /// BACKOFF_CAP truncation (never shrinking unless `truncation = literal`, §12 #10) and
    /// TIMER_MAX (§0.3).
    pub(crate) fn next_timer(&self, x: &mut Exchange) -> Duration {
        let s = TimerScratch::of(x);
        let input_s = if self.cfg.vbf_from_first {
            s.first_s
        } else {
            s.timer_s
        };
        let f = self.cfg.vbf.factor(input_s);
        let cap_s = if self.cfg.truncation_literal {
            self.cfg.backoff_cap_s
        } else {
            self.cfg.backoff_cap_s.max(s.timer_s)
        };
        let t_s = (f * s.timer_s).min(cap_s).min(self.cfg.timer_max_s);
        TimerScratch::arm_next(x, t_s)
    }

    /// `expired` with the common give-up rule.
    pub(crate) fn expired(&self, x: &mut Exchange) -> Expiry {
        expire_with(x, self.cfg.max_retransmit, |x| self.next_timer(x))
    }

    /// Which estimator a completion with `r` retransmissions feeds (spec §4.4).
    pub(crate) fn classify(&self, r: u32) -> SampleClass {
        if r == 0 {
            SampleClass::Strong
        } else if r <= self.cfg.weak_max_retx && !self.cfg.strong_only {
            SampleClass::Weak
        } else {
            SampleClass::None
        }
    }

    /// `est_update(D.S, R, K_STRONG)`, then `D.rto = w·E_s + (1−w)·D.rto` (no touch).
    pub(crate) fn update_strong(&mut self, r_s: f64, w: f64) {
        let e = self.strong.update(r_s, &self.cfg.strong);
        self.rto_s = w * e + (1.0 - w) * self.rto_s;
    }

    /// `est_update(D.W, R, K_WEAK)`, then `D.rto = W_WEAK·E_w + (1−W_WEAK)·D.rto` (no touch).
    pub(crate) fn update_weak(&mut self, r_s: f64) {
        let e = self.weak.update(r_s, &self.cfg.weak);
        self.rto_s = self.cfg.w_weak * e + (1.0 - self.cfg.w_weak) * self.rto_s;
    }

    /// `touch(now)`: clamp at RTO_MAX, mark a sample, restart the aging clock.
    pub(crate) fn touch(&mut self, now: Instant) {
        self.rto_s = self.rto_s.min(self.cfg.rto_max_s);
        self.has_sample = true;
        self.last_update = now;
    }

    /// `completed` of spec §4.4 (plain CoCoA). Returns the class of the sample.
    pub(crate) fn completed(&mut self, c: &Completion<'_>) -> SampleClass {
        // The weak RTT is measured from the ORIGINAL send (spec §4.4).
        let r_s = c.rtt_from_original().as_secs_f64();
        let class = self.classify(c.retransmissions());
        match class {
            SampleClass::Strong => self.update_strong(r_s, self.cfg.w_strong),
            SampleClass::Weak => self.update_weak(r_s),
            SampleClass::None => return class,
        }
        self.touch(c.ack_time);
        class
    }

    /// The current overall RTO as a duration.
    pub(crate) fn rto(&self) -> Duration {
        Duration::from_secs_f64_round_us(self.rto_s)
    }

    /// The estimator variables (snake_case with units).
    pub(crate) fn vars(&self) -> Vec<(&'static str, f64)> {
        vec![
            ("rto_s", self.rto_s),
            ("strong_srtt_s", self.strong.srtt_s),
            ("strong_rttvar_s", self.strong.rttvar_s),
            ("strong_rto_s", self.strong.rto_s),
            ("weak_srtt_s", self.weak.srtt_s),
            ("weak_rttvar_s", self.weak.rttvar_s),
            ("weak_rto_s", self.weak.rto_s),
            ("has_sample", f64::from(u8::from(self.has_sample))),
            ("last_update_s", self.last_update.as_secs_f64()),
        ]
    }
}

/// How a carried RTO becomes the first timer (CoCoA-FB, GSRTC; spec §5, §12 #13).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Carried {
    /// Used exactly (capped at TIMER_MAX), no draw.
    Undithered,
    /// Dithered like a CoCoA first timer.
    Dithered,
}

/// CoCoA and CoCoA-strong with RFC 6298 semantics (spec §4).
#[derive(Debug, Clone)]
pub struct Cocoa {
    core: CocoaCore,
}

impl Cocoa {
    /// `cocoa` (or `cocoa-strong` when `strong_only`) from resolved parameters, created at
    /// `now`.
    pub fn new(p: &Params, now: Instant, strong_only: bool) -> Cocoa {
        Cocoa {
            core: CocoaCore::new(CocoaConfig::from_params(p, strong_only), now),
        }
    }
}

impl RtoAlgorithm for Cocoa {
    fn name(&self) -> &'static str {
        if self.core.cfg.strong_only {
            "cocoa-strong"
        } else {
            "cocoa"
        }
    }

    fn start(
        &mut self,
        now: Instant,
        admission: Admission,
        x: &mut Exchange,
        rng: &mut dyn Random,
    ) -> Duration {
        self.core.start(now, admission, x, rng, None)
    }

    fn expired(&mut self, _now: Instant, x: &mut Exchange, _rng: &mut dyn Random) -> Expiry {
        self.core.expired(x)
    }

    fn completed(&mut self, c: &Completion<'_>, _x: &mut Exchange, _rng: &mut dyn Random) {
        self.core.completed(c);
    }

    fn reset(&mut self, now: Instant) {
        self.core.reset(now);
    }

    fn rto(&self) -> Duration {
        self.core.rto()
    }

    fn max_retransmit(&self) -> u32 {
        self.core.cfg.max_retransmit
    }

    fn snapshot(&self) -> Snapshot {
        Snapshot {
            rto: self.core.rto(),
            state: None,
            vars: self.core.vars(),
        }
    }
}

/// Registry constructor of `cocoa`: the RFC profile, or [`CocoaCf`] with `profile = cf-compat`.
pub(crate) fn build_cocoa(p: &Params, now: Instant) -> Box<dyn RtoAlgorithm> {
    build(p, now, false)
}

/// Registry constructor of `cocoa-strong`, either profile.
pub(crate) fn build_cocoa_strong(p: &Params, now: Instant) -> Box<dyn RtoAlgorithm> {
    build(p, now, true)
}

fn build(p: &Params, now: Instant, strong_only: bool) -> Box<dyn RtoAlgorithm> {
    match p.choice("profile") {
        "cf-compat" => Box::new(CocoaCf::new(p, now, strong_only)),
        _ => Box::new(Cocoa::new(p, now, strong_only)),
    }
}

/// The parameter groups of `cocoa` and `cocoa-strong`: common, CoCoA, then the profile switch.
pub(crate) const GROUPS: &[&[ParamSpec]] = &[common::COMMON, COCOA, CF_COMPAT];

/// Test drivers shared by the CoCoA family's tests.
#[cfg(test)]
pub(crate) mod harness {
    use super::*;
    use crate::params::Settings;

    /// Resolves `settings` over `groups`.
    pub(crate) fn params(groups: &[&[ParamSpec]], settings: &[&str]) -> Params {
        Params::resolve(
            "test",
            groups,
            &Settings::parse(settings.iter().copied()).unwrap(),
        )
        .unwrap()
    }

    /// µs shorthand.
    pub(crate) fn us(micros: i64) -> Duration {
        Duration::from_micros(micros)
    }

    /// Seconds as a duration rounded to the µs.
    pub(crate) fn secs(s: f64) -> Duration {
        Duration::from_secs_f64_round_us(s)
    }

    /// Seconds as an instant rounded to the µs.
    pub(crate) fn at(s: f64) -> Instant {
        Instant::ZERO + secs(s)
    }

    /// What happened to one driven exchange.
    #[derive(Debug, Clone, PartialEq)]
    pub(crate) struct Outcome {
        /// Every armed timer, the first one first.
        pub(crate) timers: Vec<Duration>,
        /// Send times of every transmission.
        pub(crate) tx: Vec<Instant>,
        /// When it ended (ACK or give-up).
        pub(crate) end: Instant,
        /// True if the ACK arrived, false on give-up.
        pub(crate) acked: bool,
    }

    /// Drives one exchange started at `t0`: the first ACK arrives `rtt` after the ORIGINAL
    /// send (every retransmission spurious), or never if `None`. An ACK at the same instant
    /// as an expiry is processed first (spec §0.2).
    pub(crate) fn exchange(
        alg: &mut dyn RtoAlgorithm,
        t0: Instant,
        admission: Admission,
        rtt: Option<Duration>,
        rng: &mut dyn Random,
    ) -> Outcome {
        let mut x = Exchange::new();
        let t = alg.start(t0, admission, &mut x, rng);
        assert_eq!(x.timer, t);
        assert_eq!(x.retransmissions, 0);
        let mut timers = vec![t];
        let mut tx = vec![t0];
        let mut deadline = t0 + t;
        loop {
            if let Some(rtt) = rtt {
                let ack = t0 + rtt;
                if ack <= deadline {
                    let c = Completion {
                        ack_time: ack,
                        tx_times: &tx,
                        answered: None,
                        timer_in_force: x.timer,
                    };
                    alg.completed(&c, &mut x, rng);
                    return Outcome {
                        timers,
                        tx,
                        end: ack,
                        acked: true,
                    };
                }
            }
            match alg.expired(deadline, &mut x, rng) {
                Expiry::Retransmit(t) => {
                    assert_eq!(x.timer, t);
                    tx.push(deadline);
                    timers.push(t);
                    deadline += t;
                }
                Expiry::GiveUp => {
                    alg.failed(deadline, &mut x);
                    return Outcome {
                        timers,
                        tx,
                        end: deadline,
                        acked: false,
                    };
                }
            }
        }
    }

    /// Asserts `|a - b| < 1e-12`.
    pub(crate) fn close(a: f64, b: f64) {
        assert!((a - b).abs() < 1e-12, "{a} != {b}");
    }

    /// The value of snapshot variable `name`.
    pub(crate) fn var(alg: &dyn RtoAlgorithm, name: &str) -> f64 {
        alg.snapshot()
            .vars
            .iter()
            .find(|(n, _)| *n == name)
            .unwrap_or_else(|| panic!("no snapshot var {name}"))
            .1
    }
}

#[cfg(test)]
mod tests {
    use super::harness::*;
    use super::*;
    use crate::rng::{ConstantRandom, ScriptedRandom};

    fn cocoa(settings: &[&str]) -> Cocoa {
        Cocoa::new(&params(GROUPS, settings), Instant::ZERO, false)
    }

    /// Sets the overall RTO as if a sample had been taken at `t`.
    fn with_rto(alg: &mut Cocoa, rto_s: f64, t: Instant) {
        alg.core.rto_s = rto_s;
        alg.core.has_sample = true;
        alg.core.last_update = t;
    }

    fn first_timer(alg: &mut Cocoa, now: Instant, adm: Admission, u: f64) -> Duration {
        alg.start(now, adm, &mut Exchange::new(), &mut ConstantRandom(u))
    }

    #[test]
    fn example_a_convergence_then_weak_samples() {
        // spec §4.5 A: RTT 0.1 s three times, then 1.2 s; u = 0.
        let mut alg = cocoa(&[]);
        let mut rng = ConstantRandom(0.0);
        let mut t = Instant::ZERO;
        let mut run = |alg: &mut Cocoa, rtt: f64| {
            let o = exchange(alg, t, Admission::ALONE, Some(secs(rtt)), &mut rng);
            t = o.end + secs(0.5);
            o
        };
        // Exchange 1: T0 = 2.0; strong srtt 0.1, rttvar 0.05, E_s 0.3; RTO 1.15.
        assert_eq!(run(&mut alg, 0.1).timers, [us(2_000_000)]);
        close(var(&alg, "strong_srtt_s"), 0.1);
        close(var(&alg, "strong_rttvar_s"), 0.05);
        close(var(&alg, "strong_rto_s"), 0.3);
        close(alg.core.rto_s, 1.15);
        // Exchange 2: T0 = 1.15; rttvar 0.0375, E_s 0.25; RTO 0.7.
        assert_eq!(run(&mut alg, 0.1).timers, [us(1_150_000)]);
        close(var(&alg, "strong_rttvar_s"), 0.0375);
        close(var(&alg, "strong_rto_s"), 0.25);
        close(alg.core.rto_s, 0.7);
        // Exchange 3: T0 = 0.7; rttvar 0.028125, E_s 0.2125; RTO 0.45625.
        assert_eq!(run(&mut alg, 0.1).timers, [us(700_000)]);
        close(var(&alg, "strong_rttvar_s"), 0.028125);
        close(var(&alg, "strong_rto_s"), 0.2125);
        close(alg.core.rto_s, 0.45625);
        assert_eq!(alg.rto(), us(456_250));
        // Exchange 4: 0.45625 expires, ×3 -> 1.36875; ACK 1.2 (r = 1); weak first sample.
        let o = run(&mut alg, 1.2);
        assert_eq!(o.timers, [us(456_250), us(1_368_750)]);
        assert_eq!(o.tx.len(), 2);
        close(var(&alg, "weak_srtt_s"), 1.2);
        close(var(&alg, "weak_rttvar_s"), 0.6);
        close(var(&alg, "weak_rto_s"), 1.8);
        close(alg.core.rto_s, 0.7921875);
        // Exchange 5: 0.7921875, ×3 -> 2.3765625. In exact decimals both are half-µs ties
        // rounding up (792188, 2376563). In f64, E_w = 1.2 + 0.6 = 1.7999999999999998, so the
        // RTO is 0.7921874999999999 and its timer rounds DOWN to 792187 µs (a spec §0.4
        // f64-vs-decimal tie, reported); ×3 of the f64 state gives exactly 2.3765625 -> 2376563.
        let o = run(&mut alg, 1.2);
        assert_eq!(o.timers, [us(792_187), us(2_376_563)]);
        close(var(&alg, "weak_rttvar_s"), 0.45);
        close(var(&alg, "weak_rto_s"), 1.65);
        close(alg.core.rto_s, 1.006640625);
        // Exchange 6: 1.006640625, ×2 (1 <= T <= 3) -> 2.01328125.
        let o = run(&mut alg, 1.2);
        assert_eq!(o.timers, [us(1_006_641), us(2_013_281)]);
        close(var(&alg, "weak_rttvar_s"), 0.3375);
        close(var(&alg, "weak_rto_s"), 1.5375);
        close(alg.core.rto_s, 1.13935546875);
        // Exchange 7: u > 0.10645 gives T0 > 1.2 s and a clean exchange.
        let mut below = alg.clone();
        let o = exchange(
            &mut below,
            t,
            Admission::ALONE,
            Some(secs(1.2)),
            &mut ScriptedRandom::new(&[0.1064]),
        );
        assert!(o.timers[0] < secs(1.2) && o.tx.len() == 2, "{o:?}");
        let o = exchange(
            &mut alg,
            t,
            Admission::ALONE,
            Some(secs(1.2)),
            &mut ScriptedRandom::new(&[0.1065]),
        );
        assert!(o.timers[0] > secs(1.2) && o.tx.len() == 1, "{o:?}");
    }

    #[test]
    fn first_timer_is_dithered_by_one_draw() {
        // spec §4.5 A ex 1: u = 0.2 would give 2.2.
        let mut alg = cocoa(&[]);
        let mut rng = ScriptedRandom::new(&[0.2]);
        let t = alg.start(
            Instant::ZERO,
            Admission::ALONE,
            &mut Exchange::new(),
            &mut rng,
        );
        assert_eq!(t, us(2_200_000));
        assert_eq!(rng.consumed(), 1);
    }

    fn series(alg: &mut Cocoa, u: f64, n: usize) -> Vec<Duration> {
        let mut x = Exchange::new();
        let mut rng = ConstantRandom(u);
        let mut out = vec![alg.start(Instant::ZERO, Admission::ALONE, &mut x, &mut rng)];
        while out.len() < n {
            match alg.expired(Instant::ZERO, &mut x, &mut rng) {
                Expiry::Retransmit(t) => out.push(t),
                Expiry::GiveUp => break,
            }
        }
        out
    }

    #[test]
    fn example_b_vbf_series_truncated_at_32_s() {
        // spec §4.5 B: 0.45, 1.35 (×3), 2.7 (×2), 5.4 (×2, 2.7 <= 3), 8.1 (×1.5), 12.15, 18.225,
        // 27.3375, 32 (truncated), 32.
        let mut alg = cocoa(&["max_retransmit=20"]);
        with_rto(&mut alg, 0.45, Instant::ZERO);
        let expect = [
            450_000, 1_350_000, 2_700_000, 5_400_000, 8_100_000, 12_150_000, 18_225_000,
            27_337_500, 32_000_000, 32_000_000, 32_000_000,
        ];
        assert_eq!(series(&mut alg, 0.0, 11), expect.map(us));
    }

    #[test]
    fn vbf_thresholds_are_strict_so_1_s_and_3_s_double() {
        let mut alg = cocoa(&[]);
        with_rto(&mut alg, 1.0, Instant::ZERO);
        assert_eq!(
            series(&mut alg, 0.0, 3),
            [1, 2, 4].map(|s| us(s * 1_000_000))
        );
        with_rto(&mut alg, 3.0, Instant::ZERO);
        assert_eq!(
            series(&mut alg, 0.0, 3),
            [us(3_000_000), us(6_000_000), us(9_000_000)]
        );
        with_rto(&mut alg, 0.999_999, Instant::ZERO);
        assert_eq!(series(&mut alg, 0.0, 2), [us(999_999), us(2_999_997)]);
    }

    #[test]
    fn vbf_from_first_keeps_the_first_factor() {
        // spec §12 #9: the factor of the dithered first timer (0.45 s -> ×3) for every step.
        let mut alg = cocoa(&["max_retransmit=20", "vbf_from_first=true"]);
        with_rto(&mut alg, 0.45, Instant::ZERO);
        let expect = [
            450_000, 1_350_000, 4_050_000, 12_150_000, 32_000_000, 32_000_000,
        ];
        assert_eq!(series(&mut alg, 0.0, 6), expect.map(us));
        // The first timer is the dithered one: 0.8·1.5 = 1.2 s -> ×2.
        with_rto(&mut alg, 0.8, Instant::ZERO);
        assert_eq!(
            series(&mut alg, 1.0, 3),
            [1_200_000, 2_400_000, 4_800_000].map(us)
        );
    }

    #[test]
    fn truncation_never_shrinks_unless_literal() {
        // A 40 s first timer (> BACKOFF_CAP): ×1.5 = 60, truncated to max(32, 40) = 40.
        let mut alg = cocoa(&[]);
        with_rto(&mut alg, 40.0, Instant::ZERO);
        assert_eq!(
            series(&mut alg, 0.0, 3),
            [40, 40, 40].map(|s| us(s * 1_000_000))
        );
        // spec §12 #10 `literal`: min(f·T, 32 s) shrinks it to 32.
        let mut alg = cocoa(&["truncation=literal"]);
        with_rto(&mut alg, 40.0, Instant::ZERO);
        assert_eq!(
            series(&mut alg, 0.0, 3),
            [40, 32, 32].map(|s| us(s * 1_000_000))
        );
        // No cap at all: only TIMER_MAX bounds the series.
        let mut alg = cocoa(&["backoff_cap_s=inf", "max_retransmit=20"]);
        with_rto(&mut alg, 8.0, Instant::ZERO);
        assert_eq!(
            series(&mut alg, 0.0, 6),
            [8.0, 12.0, 18.0, 27.0, 40.5, 60.0].map(secs)
        );
    }

    #[test]
    fn timer_max_caps_the_first_timer() {
        let mut alg = cocoa(&[]);
        with_rto(&mut alg, 50.0, Instant::ZERO);
        assert_eq!(
            first_timer(&mut alg, Instant::ZERO, Admission::ALONE, 0.5),
            secs(60.0)
        );
        let mut alg = cocoa(&["timer_max_s=inf"]);
        with_rto(&mut alg, 50.0, Instant::ZERO);
        assert_eq!(
            first_timer(&mut alg, Instant::ZERO, Admission::ALONE, 0.5),
            secs(62.5)
        );
    }

    #[test]
    fn rto_max_clamps_the_overall_rto() {
        // A 100 s strong sample: E_s = 100 + 4·50 = 300, blend 151 -> clamped to 60.
        let mut alg = cocoa(&["max_retransmit=0"]);
        let o = exchange(
            &mut alg,
            Instant::ZERO,
            Admission::ALONE,
            None,
            &mut ConstantRandom(0.0),
        );
        assert!(!o.acked);
        let tx = [Instant::ZERO];
        let c = Completion {
            ack_time: at(100.0),
            tx_times: &tx,
            answered: None,
            timer_in_force: secs(2.0),
        };
        alg.completed(&c, &mut Exchange::new(), &mut ConstantRandom(0.0));
        close(var(&alg, "strong_rto_s"), 300.0);
        assert_eq!(alg.rto(), secs(60.0));
    }

    #[test]
    fn gives_up_after_max_retransmit_without_state_change() {
        // Default MAX_RETRANSMIT 4: 2, 4, 6 (×1.5 above 3 s), 9, 13.5; then give-up.
        let mut alg = cocoa(&[]);
        let before = alg.snapshot();
        let o = exchange(
            &mut alg,
            Instant::ZERO,
            Admission::ALONE,
            None,
            &mut ConstantRandom(0.0),
        );
        assert!(!o.acked);
        assert_eq!(o.timers, [2.0, 4.0, 6.0, 9.0, 13.5].map(secs));
        assert_eq!(o.end, at(34.5));
        assert_eq!(alg.snapshot(), before);
    }

    #[test]
    fn three_or_more_retransmissions_give_no_sample() {
        let mut alg = cocoa(&[]);
        with_rto(&mut alg, 0.45625, Instant::ZERO);
        let before = alg.snapshot();
        // spec §5 example 1: 0.45625, 1.36875, 2.7375, 5.475; ACK at 5.0 (r = 3).
        let o = exchange(
            &mut alg,
            Instant::ZERO,
            Admission::ALONE,
            Some(secs(5.0)),
            &mut ConstantRandom(0.0),
        );
        assert_eq!(o.timers, [0.45625, 1.36875, 2.7375, 5.475].map(secs));
        assert_eq!(o.tx, [0.0, 0.45625, 1.825, 4.5625].map(at));
        assert_eq!(alg.snapshot(), before);
    }

    #[test]
    fn cocoa_strong_ignores_weak_samples() {
        let mut alg = Cocoa::new(&params(GROUPS, &[]), Instant::ZERO, true);
        assert_eq!(alg.name(), "cocoa-strong");
        let mut rng = ConstantRandom(0.0);
        exchange(
            &mut alg,
            Instant::ZERO,
            Admission::ALONE,
            Some(secs(0.1)),
            &mut rng,
        );
        close(alg.core.rto_s, 1.15);
        // 1.15 expires, 2.3; ACK at 1.5 (r = 1): ignored by cocoa-strong.
        let before = alg.snapshot();
        let o = exchange(
            &mut alg,
            at(1.0),
            Admission::ALONE,
            Some(secs(1.5)),
            &mut rng,
        );
        assert_eq!(o.tx.len(), 2);
        assert_eq!(alg.snapshot(), before);
    }

    #[test]
    fn example_c_aging_is_lazy_strict_and_cumulative() {
        let t0 = Instant::ZERO;
        // RTO 0.3 s, idle 10 s: 10 > 4.8 -> 0.6 with 5.2 s left; 5.2 < 9.6 -> 0.6.
        let mut alg = cocoa(&[]);
        with_rto(&mut alg, 0.3, t0);
        assert_eq!(
            first_timer(&mut alg, at(10.0), Admission::ALONE, 0.0),
            secs(0.6)
        );
        close(alg.core.rto_s, 0.6);
        assert_eq!(alg.core.last_update, at(4.8));
        // Evaluated twice (at 5 s and 10 s), the result is the same: lazy = running timer.
        let mut alg = cocoa(&[]);
        with_rto(&mut alg, 0.3, t0);
        first_timer(&mut alg, at(5.0), Admission::ALONE, 0.0);
        assert_eq!(
            first_timer(&mut alg, at(10.0), Admission::ALONE, 0.0),
            secs(0.6)
        );
        assert_eq!(alg.core.last_update, at(4.8));
        // RTO 0.1 s, idle 10 s: 0.2, 0.4 (last_update advanced 1.6 + 3.2 s) -> 0.4.
        let mut alg = cocoa(&[]);
        with_rto(&mut alg, 0.1, t0);
        assert_eq!(
            first_timer(&mut alg, at(10.0), Admission::ALONE, 0.0),
            secs(0.4)
        );
        assert_eq!(alg.core.last_update, at(4.8));
        // RTO 4 s, idle 16.5 s -> 3.0; idle exactly 16 s -> no change (strict >).
        let mut alg = cocoa(&[]);
        with_rto(&mut alg, 4.0, t0);
        assert_eq!(
            first_timer(&mut alg, at(16.5), Admission::ALONE, 0.0),
            secs(3.0)
        );
        let mut alg = cocoa(&[]);
        with_rto(&mut alg, 4.0, t0);
        assert_eq!(
            first_timer(&mut alg, at(16.0), Admission::ALONE, 0.0),
            secs(4.0)
        );
        // RTO 8 s, idle 60 s: 5 (32 s used), 3.5 (20 s used), 8 s left < 14 -> 3.5.
        let mut alg = cocoa(&[]);
        with_rto(&mut alg, 8.0, t0);
        assert_eq!(
            first_timer(&mut alg, at(60.0), Admission::ALONE, 0.0),
            secs(3.5)
        );
        assert_eq!(alg.core.last_update, at(52.0));
    }

    #[test]
    fn aging_off_keeps_the_rto() {
        let mut alg = cocoa(&["aging=false"]);
        with_rto(&mut alg, 0.1, Instant::ZERO);
        assert_eq!(
            first_timer(&mut alg, at(1000.0), Admission::ALONE, 0.0),
            secs(0.1)
        );
    }

    #[test]
    fn cf_compat_aging_runs_after_the_first_timer_and_loses_the_remainder() {
        // spec §12 #12 `cf-compat`: RTO 0.1, idle 10 s -> one step to 0.2, last_update = now;
        // the first timer still uses 0.1.
        let mut alg = cocoa(&["aging_style=cf-compat"]);
        with_rto(&mut alg, 0.1, Instant::ZERO);
        assert_eq!(
            first_timer(&mut alg, at(10.0), Admission::ALONE, 0.0),
            secs(0.1)
        );
        close(alg.core.rto_s, 0.2);
        assert_eq!(alg.core.last_update, at(10.0));
        assert_eq!(
            first_timer(&mut alg, at(10.5), Admission::ALONE, 0.0),
            secs(0.2)
        );
    }

    #[test]
    fn example_d_blind_rto_before_any_sample() {
        // NSTART = 4, no sample: 2, 4, 6 s; each dithered ×[1, 1.5).
        let mut alg = cocoa(&[]);
        let adm = |n| Admission {
            in_flight: n,
            dequeued: false,
        };
        for (n, s) in [(1, 2.0), (2, 4.0), (3, 6.0)] {
            assert_eq!(first_timer(&mut alg, Instant::ZERO, adm(n), 0.0), secs(s));
            assert_eq!(
                first_timer(&mut alg, Instant::ZERO, adm(n), 0.5),
                secs(s * 1.25)
            );
        }
        // Capped at RTO_MAX, then TIMER_MAX.
        assert_eq!(
            first_timer(&mut alg, Instant::ZERO, adm(40), 0.0),
            secs(60.0)
        );
        // After a sample the blind rule is over.
        exchange(
            &mut alg,
            Instant::ZERO,
            adm(1),
            Some(secs(0.1)),
            &mut ConstantRandom(0.0),
        );
        assert_eq!(first_timer(&mut alg, at(1.0), adm(3), 0.0), secs(1.15));
        // blind = off: always INITIAL_RTO.
        let mut alg = cocoa(&["blind=off"]);
        assert_eq!(first_timer(&mut alg, Instant::ZERO, adm(3), 0.0), secs(2.0));
    }

    #[test]
    fn cf_compat_blind_excludes_the_new_exchange_and_never_ends() {
        // spec §12 #11: n' = in flight excluding the new one, unless it was dequeued.
        let mut alg = cocoa(&["blind=cf-compat"]);
        let adm = |n, dequeued| Admission {
            in_flight: n,
            dequeued,
        };
        assert_eq!(
            first_timer(&mut alg, Instant::ZERO, adm(2, false), 0.0),
            secs(2.0)
        );
        assert_eq!(
            first_timer(&mut alg, Instant::ZERO, adm(3, false), 0.0),
            secs(4.0)
        );
        assert_eq!(
            first_timer(&mut alg, Instant::ZERO, adm(2, true), 0.0),
            secs(4.0)
        );
        exchange(
            &mut alg,
            Instant::ZERO,
            adm(1, false),
            Some(secs(0.1)),
            &mut ConstantRandom(0.0),
        );
        assert_eq!(
            first_timer(&mut alg, at(1.0), adm(3, false), 0.0),
            secs(2.3)
        );
    }

    #[test]
    fn pseudocode_literal_estimator_is_selectable() {
        // spec §12 #6: a rising second sample makes the literal RTTVAR negative.
        let mut alg = cocoa(&["estimator=pseudocode_literal"]);
        let mut rng = ConstantRandom(0.0);
        exchange(
            &mut alg,
            Instant::ZERO,
            Admission::ALONE,
            Some(secs(0.1)),
            &mut rng,
        );
        close(alg.core.rto_s, 1.15);
        exchange(
            &mut alg,
            at(1.0),
            Admission::ALONE,
            Some(secs(1.0)),
            &mut rng,
        );
        close(var(&alg, "strong_rttvar_s"), -0.1875);
        close(var(&alg, "strong_rto_s"), 0.2125 - 0.75);
        close(alg.core.rto_s, 0.5 * (0.2125 - 0.75) + 0.5 * 1.15);
    }

    #[test]
    fn fasor18_preset_turns_aging_off_and_sets_the_caps() {
        use crate::params::Settings;
        let s = Settings::parse(["preset=fasor18"]).unwrap();
        let (_, p) = crate::registry::resolve("cocoa", &s).unwrap();
        assert!(!p.flag("aging"));
        assert_eq!(p.int("max_retransmit"), 20);
        assert_eq!(p.secs("backoff_cap_s"), secs(32.0));
        assert_eq!(p.secs("timer_max_s"), secs(60.0));
        assert_eq!(p.secs("rto_max_s"), secs(60.0));
        for name in [
            "cocoa",
            "cocoa-strong",
            "cocoa-fb1",
            "cocoa-fb2",
            "gsrtc",
            "cocoa++",
        ] {
            let alg = crate::registry::build(name, &s, Instant::ZERO).unwrap();
            assert_eq!(alg.name(), name);
            assert_eq!(alg.max_retransmit(), 20);
            assert_eq!(alg.rto(), secs(2.0));
        }
        let mut s = s.clone();
        s.set("profile", "cf-compat");
        let alg = crate::registry::build("cocoa-strong", &s, Instant::ZERO).unwrap();
        assert_eq!((alg.name(), alg.max_retransmit()), ("cocoa-strong", 20));
    }

    #[test]
    fn reset_forgets_the_destination() {
        let mut alg = cocoa(&[]);
        exchange(
            &mut alg,
            Instant::ZERO,
            Admission::ALONE,
            Some(secs(0.1)),
            &mut ConstantRandom(0.0),
        );
        assert_eq!(alg.rto(), secs(1.15));
        alg.reset(at(100.0));
        let fresh = Cocoa::new(&params(GROUPS, &[]), at(100.0), false);
        assert_eq!(alg.snapshot(), fresh.snapshot());
        assert_eq!(alg.rto(), secs(2.0));
        // The blind rule is back.
        let adm = Admission {
            in_flight: 2,
            dequeued: false,
        };
        assert_eq!(first_timer(&mut alg, at(100.0), adm, 0.0), secs(4.0));
    }
}
