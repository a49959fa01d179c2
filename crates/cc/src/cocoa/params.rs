//! CoCoA's parameters (draft-ietf-core-cocoa-03) and the constants resolved from them, shared by
//! `cocoa`, `cocoa-strong`, `cocoa-fb1`, `cocoa-fb2` and `gsrtc`.

use crate::params::{Kind, ParamSpec, Params, Value, FACTOR, GAIN, SECS, SECS_OR_INF};
use crate::rfc6298::{Form, Gains};

/// The parameters of CoCoA (draft-ietf-core-cocoa-03), shared by `cocoa`, `cocoa-strong`,
/// `cocoa-fb1`, `cocoa-fb2` and `gsrtc`. `cocoa-strong` is STRONG_ONLY = true, chosen by its name.
pub const COCOA: &[ParamSpec] = &[
    ParamSpec {
        key: "initial_rto_s",
        kind: Kind::Seconds {
            min: 0.001,
            max: 3600.0,
        },
        default: Value::Float(2.0),
        help: "INITIAL_RTO: initial E_strong, E_weak and overall RTO",
        source: "draft-ietf-core-cocoa-03 §4.2",
    },
    ParamSpec {
        key: "alpha",
        kind: GAIN,
        default: Value::Float(0.125),
        help: "ALPHA: SRTT gain of both estimators (cf-compat swaps the gains: alpha=0.25 beta=0.125)",
        source: "RFC 6298 §2.3; draft-ietf-core-cocoa-03; docs/algorithms.md, ambiguity #7",
    },
    ParamSpec {
        key: "beta",
        kind: GAIN,
        default: Value::Float(0.25),
        help: "BETA: RTTVAR gain of both estimators",
        source: "RFC 6298 §2.3; draft-ietf-core-cocoa-03; docs/algorithms.md, ambiguity #7",
    },
    ParamSpec {
        key: "g_s",
        kind: SECS,
        default: Value::Float(0.001),
        help: "G: clock granularity, floor of K*RTTVAR in E = SRTT + max(G, K*RTTVAR)",
        source: "RFC 6298 §2; draft-ietf-core-cocoa-03; docs/algorithms.md, ambiguity #6",
    },
    ParamSpec {
        key: "k_strong",
        kind: FACTOR,
        default: Value::Float(4.0),
        help: "K_STRONG: RTTVAR multiplier of the strong estimator",
        source: "draft-ietf-core-cocoa-03 §4.2.1",
    },
    ParamSpec {
        key: "k_weak",
        kind: FACTOR,
        default: Value::Float(1.0),
        help: "K_WEAK: RTTVAR multiplier of the weak estimator",
        source: "draft-ietf-core-cocoa-03 §4.2.1",
    },
    ParamSpec {
        key: "w_strong",
        kind: GAIN,
        default: Value::Float(0.5),
        help: "W_STRONG: weight of E_strong in the overall RTO (gsrtc replaces it by its adaptive weight)",
        source: "draft-ietf-core-cocoa-03 §4.2.2",
    },
    ParamSpec {
        key: "w_weak",
        kind: GAIN,
        default: Value::Float(0.25),
        help: "W_WEAK: weight of E_weak in the overall RTO",
        source: "draft-ietf-core-cocoa-03 §4.2.2",
    },
    ParamSpec {
        key: "weak_max_retx",
        kind: Kind::Int { min: 0, max: 255 },
        default: Value::Int(2),
        help: "WEAK_MAX_RETX: weak samples only from exchanges with 1..=this many retransmissions",
        source: "draft-ietf-core-cocoa-03 §4.2.1",
    },
    ParamSpec {
        key: "vbf_low_thresh_s",
        kind: SECS,
        default: Value::Float(1.0),
        help: "VBF_LOW_THRESH: a timer below this backs off by VBF_LOW",
        source: "draft-ietf-core-cocoa-03 §4.3",
    },
    ParamSpec {
        key: "vbf_low",
        kind: FACTOR,
        default: Value::Float(3.0),
        help: "VBF_LOW: backoff factor of timers below VBF_LOW_THRESH",
        source: "draft-ietf-core-cocoa-03 §4.3",
    },
    ParamSpec {
        key: "vbf_high_thresh_s",
        kind: SECS,
        default: Value::Float(3.0),
        help: "VBF_HIGH_THRESH: a timer above this backs off by VBF_HIGH",
        source: "draft-ietf-core-cocoa-03 §4.3",
    },
    ParamSpec {
        key: "vbf_high",
        kind: FACTOR,
        default: Value::Float(1.5),
        help: "VBF_HIGH: backoff factor of timers above VBF_HIGH_THRESH",
        source: "draft-ietf-core-cocoa-03 §4.3",
    },
    ParamSpec {
        key: "vbf_mid",
        kind: FACTOR,
        default: Value::Float(2.0),
        help: "VBF_MID: backoff factor of timers within [VBF_LOW_THRESH, VBF_HIGH_THRESH]",
        source: "draft-ietf-core-cocoa-03 §4.3",
    },
    ParamSpec {
        key: "vbf_from_first",
        kind: Kind::Bool,
        default: Value::Bool(false),
        help: "compute the VBF once from the dithered first timer (Californium) instead of from the current timer at each expiry",
        source: "docs/algorithms.md, ambiguity #9",
    },
    ParamSpec {
        key: "backoff_cap_s",
        kind: SECS_OR_INF,
        default: Value::Float(32.0),
        help: "BACKOFF_CAP: backed-off timers are truncated here (inf: no truncation)",
        source: "draft-ietf-core-cocoa-03 §4.3",
    },
    ParamSpec {
        key: "truncation",
        kind: Kind::Choice(&["never_shrink", "literal"]),
        default: Value::Choice("never_shrink"),
        help: "never_shrink: min(f*T, max(BACKOFF_CAP, T)); literal: min(f*T, BACKOFF_CAP), which may shrink a timer",
        source: "docs/algorithms.md, ambiguity #10",
    },
    ParamSpec {
        key: "timer_max_s",
        kind: SECS_OR_INF,
        default: Value::Float(60.0),
        help: "TIMER_MAX: ceiling on any armed timer (the first timer, and every backed-off one)",
        source: "RFC 7252 §4.8; draft-ietf-core-cocoa-03",
    },
    ParamSpec {
        key: "rto_max_s",
        kind: SECS_OR_INF,
        default: Value::Float(60.0),
        help: "RTO_MAX: clamp on the overall RTO and on the blind base",
        source: "RFC 7252 §4.8; draft-ietf-core-cocoa-03",
    },
    ParamSpec {
        key: "aging",
        kind: Kind::Bool,
        default: Value::Bool(true),
        help: "AGING: an idle destination's RTO drifts toward 1..3 s (preset fasor18: off)",
        source: "draft-ietf-core-cocoa-03 §4.4; docs/algorithms.md, ambiguity #12",
    },
    ParamSpec {
        key: "aging_style",
        kind: Kind::Choice(&["cumulative", "cf-compat"]),
        default: Value::Choice("cumulative"),
        help: "cumulative: lazy, at exchange start, last_update advanced by each consumed interval; cf-compat: after the first timer, at most one step, last_update = now",
        source: "draft-ietf-core-cocoa-03; Californium 3.x Cocoa; docs/algorithms.md, ambiguity #12",
    },
    ParamSpec {
        key: "age_low_thresh_s",
        kind: SECS,
        default: Value::Float(1.0),
        help: "AGE_LOW_THRESH: an RTO below this doubles after AGE_LOW_MULT*RTO idle",
        source: "draft-ietf-core-cocoa-03 §4.4",
    },
    ParamSpec {
        key: "age_low_mult",
        kind: FACTOR,
        default: Value::Float(16.0),
        help: "AGE_LOW_MULT: idle multiple of the RTO before a low RTO doubles",
        source: "draft-ietf-core-cocoa-03 §4.4",
    },
    ParamSpec {
        key: "age_high_thresh_s",
        kind: SECS,
        default: Value::Float(3.0),
        help: "AGE_HIGH_THRESH: an RTO above this becomes AGE_HIGH_BASE + RTO/2 after AGE_HIGH_MULT*RTO idle",
        source: "draft-ietf-core-cocoa-03 §4.4",
    },
    ParamSpec {
        key: "age_high_mult",
        kind: FACTOR,
        default: Value::Float(4.0),
        help: "AGE_HIGH_MULT: idle multiple of the RTO before a high RTO decays",
        source: "draft-ietf-core-cocoa-03 §4.4",
    },
    ParamSpec {
        key: "age_high_base_s",
        kind: SECS,
        default: Value::Float(1.0),
        help: "the constant in RTO = AGE_HIGH_BASE + RTO/2 when a high RTO ages",
        source: "draft-ietf-core-cocoa-03 §4.4",
    },
    ParamSpec {
        key: "blind",
        kind: Kind::Choice(&["on", "off", "cf-compat"]),
        default: Value::Choice("on"),
        help: "blind RTO for parallel exchanges. on: INITIAL_RTO*n (n includes the new exchange) before any sample; off: INITIAL_RTO; cf-compat: RTO*n' with n' excluding the new exchange unless dequeued, forever",
        source: "draft-ietf-core-cocoa-03 §4.2; docs/algorithms.md, ambiguity #11",
    },
    ParamSpec {
        key: "estimator",
        kind: Kind::Choice(&["rfc6298", "pseudocode_literal"]),
        default: Value::Choice("rfc6298"),
        help: "rfc6298: |SRTT-R| and max(G, K*RTTVAR); pseudocode_literal: the draft's pseudocode without abs() and G",
        source: "RFC 6298 §2; docs/algorithms.md, ambiguity #6",
    },
];

/// The blind-RTO rule (draft-ietf-core-cocoa-03; docs/algorithms.md, ambiguity #11).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Blind {
    /// The draft: `INITIAL_RTO · n` before any sample, `n` including the new exchange.
    On,
    /// Always `INITIAL_RTO` before any sample.
    Off,
    /// Californium: `RTO · n'`, with `n'` the exchanges already registered, forever.
    CfCompat,
}

/// Where and how aging runs (docs/algorithms.md, ambiguity #12).
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

/// The variable backoff factor's thresholds and factors (draft-ietf-core-cocoa-03 `next_timer`).
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
    /// 1 s or 3 s gets VBF_MID (draft-ietf-core-cocoa-03 notes).
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
