//! FASOR's parameters (draft-ietf-core-fasor-02; docs/algorithms.md, ambiguity #16–#22): the
//! `fasor` group and the two token groups that tell `fasor` (token_mode = off) from `fasor-token`
//! (token_mode = token).

use crate::params::{Kind, ParamSpec, Value};

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

/// FASOR's own parameters (after [`crate::common::COMMON`], before a token group).
pub const FASOR: &[ParamSpec] = &[
    seconds(
        "initial_rto_s",
        0.001,
        3600.0,
        2.0,
        "INITIAL_RTO: FastRTO before any sample",
        "draft-ietf-core-fasor-02",
    ),
    float(
        "k",
        0.0,
        64.0,
        4.0,
        "K: RTTVAR multiplier of FastRTO",
        "draft-ietf-core-fasor-02, RFC 6298",
    ),
    float(
        "alpha",
        0.0,
        1.0,
        0.125,
        "ALPHA: SRTT gain",
        "draft-ietf-core-fasor-02, RFC 6298",
    ),
    float(
        "beta",
        0.0,
        1.0,
        0.25,
        "BETA: RTTVAR gain",
        "draft-ietf-core-fasor-02, RFC 6298",
    ),
    seconds(
        "g_s",
        0.0,
        1.0,
        0.001,
        "G: clock granularity, floor of K*RTTVAR",
        "draft-ietf-core-fasor-02, RFC 6298",
    ),
    seconds(
        "rto_min_s",
        0.0,
        3600.0,
        0.0,
        "RTO_MIN: lower bound on FastRTO (0: the RFC 6298 1 s floor is removed)",
        "draft-ietf-core-fasor-02",
    ),
    seconds(
        "rto_max_s",
        0.001,
        f64::INFINITY,
        60.0,
        "RTO_MAX: upper bound on FastRTO and SlowRTO",
        "draft-ietf-core-fasor-02; docs/algorithms.md, ambiguity #19",
    ),
    seconds(
        "timer_max_s",
        0.001,
        f64::INFINITY,
        60.0,
        "TIMER_MAX: ceiling on the backoff register and every armed timer",
        "draft-ietf-core-fasor-02; docs/algorithms.md, ambiguity #19",
    ),
    float(
        "slowrto_factor",
        1.0,
        16.0,
        1.5,
        "SLOWRTO_FACTOR: SlowRTO = factor * RTT measured from the original",
        "draft-ietf-core-fasor-02",
    ),
    ParamSpec {
        key: "dither",
        kind: Kind::Bool,
        default: Value::Bool(true),
        help: "DITHER: add SRTT*[DITHER_LO, DITHER_HI] when the backoff register is loaded",
        source: "draft-ietf-core-fasor-02; docs/algorithms.md, ambiguity #17",
    },
    float(
        "dither_lo",
        0.0,
        16.0,
        0.25,
        "DITHER_LO: low end of the dither, in units of SRTT",
        "draft-ietf-core-fasor-02",
    ),
    float(
        "dither_hi",
        0.0,
        16.0,
        1.0,
        "DITHER_HI: high end of the dither, in units of SRTT",
        "draft-ietf-core-fasor-02",
    ),
    seconds(
        "initial_srtt_for_dither_s",
        0.0,
        3600.0,
        2.0 / 3.0,
        "INITIAL_SRTT_FOR_DITHER: SRTT used for dithering before any sample (INITIAL_RTO/3)",
        "draft-ietf-core-fasor-02",
    ),
    choice(
        "first_rttvar",
        &["normative", "appendix"],
        "normative",
        "first sample: RTTVAR = R/(2K) (normative text) or R/2 with K = 1 (draft appendix)",
        "draft-ietf-core-fasor-02; docs/algorithms.md, ambiguity #16",
    ),
    choice(
        "fsf_probe",
        &["register", "fast_rto"],
        "register",
        "FAST_SLOW_FAST k=1 timer: max(SlowRTO, 2*b) with b the dithered register, or \
         max(SlowRTO, 2*FastRTO) undithered",
        "draft-ietf-core-fasor-02; docs/algorithms.md, ambiguity #18",
    ),
    choice(
        "give_up",
        &["no_change", "ambiguous"],
        "no_change",
        "after a give-up: no state change, or treat it as an ambiguous ACK at the give-up time",
        "draft-ietf-core-fasor-02; docs/algorithms.md, ambiguity #21",
    ),
    choice(
        "token_base",
        &["max_prev_sample", "fast_rto"],
        "max_prev_sample",
        "token modes: load the register from max(FastRTO, previous sample) or FastRTO only",
        "draft-ietf-core-fasor-02; docs/algorithms.md, ambiguity #22",
    ),
];

const TOKEN_MODES: &[&str] = &["off", "token", "rexmit_cnt"];

const REXMIT_CNT_OPTION: ParamSpec = ParamSpec {
    key: "rexmit_cnt_option",
    kind: Kind::Int { min: 0, max: 65535 },
    default: Value::Int(65020),
    help: "option number of Rexmit-Cnt (elective, safe-to-forward, NoCacheKey; draft: TBD)",
    source: "Globecom 2018; draft-ietf-core-fasor-02",
};

/// The token group of `fasor`: `token_mode` defaults to `off`.
pub const TOKEN_OFF: &[ParamSpec] = &[
    choice(
        "token_mode",
        TOKEN_MODES,
        "off",
        "which transmission a response answers: off, token (token || byte(j)), rexmit_cnt option",
        "draft-ietf-core-fasor-02; Globecom 2018",
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
        "draft-ietf-core-fasor-02; Globecom 2018",
    ),
    REXMIT_CNT_OPTION,
];
