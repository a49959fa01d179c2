//! CoCoA's Californium-compat profile (`cocoa profile=cf-compat`):
//! reproduces Californium 3.x's `Cocoa` / `CocoaStrong` numbers exactly.
//!
//! It deviates from the RFC profile (`cocoa/`) in nine switches, all here:
//! 1. integer milliseconds, sample `m = max(1, floor(R ms))`;
//! 2. swapped gains, RTTVAR 1/8 and SRTT 1/4, each step rounded with Java's `Math.round`;
//! 3. `G = 100 ms`;
//! 4. `rto = round(w·E + (1−w)·getRTO())`;
//! 5. `getRTO() = min(rto·n, 32000)` for n > 1 registered exchanges, never switched off;
//! 6. first timer `getRTO() + randInt[0, floor(1.5·T) − T]`, clamped to [500, 60000];
//! 7. the VBF computed once from that first timer, `T_k = min(60000, trunc(f·T_{k−1}))`, no 32 s
//!    truncation;
//! 8. aging after the first timer, one step, `last_update = now`;
//! 9. the sample point for an empty ACK is the separate response, which is the exchange layer's
//!    choice (docs/algorithms.md, ambiguity #35), not this module's.

#[cfg(test)]
mod tests;

use crate::algorithm::{Admission, Completion, Exchange, Expiry, RtoAlgorithm, Snapshot};
use crate::common::{self, expire_with};
use crate::java;
use crate::params::{Kind, ParamSpec, Params, Value};
use crate::rng::Random;
use crate::scratch::Scratch;
use crate::time::{Duration, Instant};

/// The profile switch of `cocoa` / `cocoa-strong` and the constants only the Californium
/// profile uses. The other constants (K, W, WEAK_MAX_RETX, VBF thresholds and factors,
/// TIMER_MAX, INITIAL_RTO, aging thresholds) are the `cocoa` group's, read in milliseconds.
pub const CF_COMPAT: &[ParamSpec] = &[
    ParamSpec {
        key: "profile",
        kind: Kind::Choice(&["rfc", "cf-compat"]),
        default: Value::Choice("rfc"),
        help: "rfc: draft semantics in f64 seconds; cf-compat: Californium 3.x in integer ms (swapped gains, G 100 ms, getRTO multiplier, VBF once, aging after the first timer)",
        source: "Californium 3.x Cocoa; docs/algorithms.md, ambiguities #7 #9 #11 #12",
    },
    ParamSpec {
        key: "cf_g_ms",
        kind: Kind::Int {
            min: 0,
            max: 3_600_000,
        },
        default: Value::Int(100),
        help: "cf-compat: G in E = SRTT + max(G, K*RTTVAR)",
        source: "Californium 3.x Cocoa",
    },
    ParamSpec {
        key: "cf_srtt_gain",
        kind: Kind::Float { min: 0.0, max: 1.0 },
        default: Value::Float(0.25),
        help: "cf-compat: SRTT gain (Californium swaps RFC 6298's gains)",
        source: "Californium 3.x Cocoa; docs/algorithms.md, ambiguity #7",
    },
    ParamSpec {
        key: "cf_rttvar_gain",
        kind: Kind::Float { min: 0.0, max: 1.0 },
        default: Value::Float(0.125),
        help: "cf-compat: RTTVAR gain (Californium swaps RFC 6298's gains)",
        source: "Californium 3.x Cocoa; docs/algorithms.md, ambiguity #7",
    },
    ParamSpec {
        key: "cf_rto_cap_ms",
        kind: Kind::Int {
            min: 1,
            max: 3_600_000,
        },
        default: Value::Int(32_000),
        help: "cf-compat: getRTO() = min(rto * n, this)",
        source: "Californium 3.x RemoteEndpoint.getRTO",
    },
    ParamSpec {
        key: "cf_first_timer_min_ms",
        kind: Kind::Int {
            min: 0,
            max: 3_600_000,
        },
        default: Value::Int(500),
        help: "cf-compat: the first timer is clamped to [this, TIMER_MAX]",
        source: "Californium 3.x",
    },
];

/// The largest millisecond count a [`Duration`] holds (about 292 years): "no limit".
const MS_MAX: i64 = i64::MAX / 1_000_000;

/// Seconds parameter → integer ms (Californium's unit); infinity saturates at [`MS_MAX`].
fn ms(p: &Params, key: &str) -> i64 {
    let v = (p.float(key) * 1000.0).round();
    if v >= MS_MAX as f64 {
        MS_MAX
    } else {
        v as i64
    }
}

/// The resolved constants of the profile, in ms where they are durations.
#[derive(Debug, Clone)]
struct CfConfig {
    ack_random_factor: f64,
    max_retransmit: u32,
    initial_rto_ms: i64,
    k_strong: f64,
    k_weak: f64,
    w_strong: f64,
    w_weak: f64,
    weak_max_retx: u32,
    strong_only: bool,
    g_ms: i64,
    srtt_gain: f64,
    rttvar_gain: f64,
    rto_cap_ms: i64,
    first_timer_min_ms: i64,
    timer_max_ms: i64,
    vbf_low_thresh_ms: i64,
    vbf_low: f64,
    vbf_high_thresh_ms: i64,
    vbf_high: f64,
    vbf_mid: f64,
    aging: bool,
    age_low_thresh_ms: i64,
    age_low_mult: f64,
    age_high_thresh_ms: i64,
    age_high_mult: f64,
    age_high_base_ms: i64,
    blind: bool,
}

/// One Californium estimator: integer ms.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
struct CfEstimator {
    srtt_ms: i64,
    rttvar_ms: i64,
    rto_ms: f64,
    init: bool,
}

impl CfEstimator {
    /// Californium 3.x Cocoa items 2-3. Returns `E`.
    fn update(&mut self, m: i64, k: f64, cfg: &CfConfig) -> f64 {
        if !self.init {
            self.srtt_ms = m;
            self.rttvar_ms = m / 2;
            self.init = true;
        } else {
            // RTTVAR first, with the old SRTT; each step Java-rounded.
            let err = (self.srtt_ms - m).abs() as f64;
            self.rttvar_ms = java::round(
                (1.0 - cfg.rttvar_gain) * self.rttvar_ms as f64 + cfg.rttvar_gain * err,
            );
            self.srtt_ms =
                java::round((1.0 - cfg.srtt_gain) * self.srtt_ms as f64 + cfg.srtt_gain * m as f64);
        }
        self.rto_ms = self.srtt_ms as f64 + (cfg.g_ms as f64).max(k * self.rttvar_ms as f64);
        self.rto_ms
    }
}

/// CoCoA / CoCoA-strong, Californium-compat profile.
#[derive(Debug, Clone)]
pub struct CocoaCf {
    cfg: CfConfig,
    strong: CfEstimator,
    weak: CfEstimator,
    /// The raw overall RTO in ms (before `getRTO()`'s multiplier and cap).
    rto_ms: i64,
    /// Aging clock; starts at endpoint creation.
    last_update: Instant,
    /// Exchanges started and not yet completed or failed (Californium's registered exchanges).
    in_flight: u32,
}

impl CocoaCf {
    /// `cocoa` (or `cocoa-strong`) with `profile = cf-compat`, created at `now`.
    pub fn new(p: &Params, now: Instant, strong_only: bool) -> CocoaCf {
        let cfg = CfConfig {
            ack_random_factor: p.float("ack_random_factor"),
            max_retransmit: p.int("max_retransmit") as u32,
            initial_rto_ms: ms(p, "initial_rto_s"),
            k_strong: p.float("k_strong"),
            k_weak: p.float("k_weak"),
            w_strong: p.float("w_strong"),
            w_weak: p.float("w_weak"),
            weak_max_retx: p.int("weak_max_retx") as u32,
            strong_only,
            g_ms: p.int("cf_g_ms"),
            srtt_gain: p.float("cf_srtt_gain"),
            rttvar_gain: p.float("cf_rttvar_gain"),
            rto_cap_ms: p.int("cf_rto_cap_ms"),
            first_timer_min_ms: p.int("cf_first_timer_min_ms"),
            timer_max_ms: ms(p, "timer_max_s"),
            vbf_low_thresh_ms: ms(p, "vbf_low_thresh_s"),
            vbf_low: p.float("vbf_low"),
            vbf_high_thresh_ms: ms(p, "vbf_high_thresh_s"),
            vbf_high: p.float("vbf_high"),
            vbf_mid: p.float("vbf_mid"),
            aging: p.flag("aging"),
            age_low_thresh_ms: ms(p, "age_low_thresh_s"),
            age_low_mult: p.float("age_low_mult"),
            age_high_thresh_ms: ms(p, "age_high_thresh_s"),
            age_high_mult: p.float("age_high_mult"),
            age_high_base_ms: ms(p, "age_high_base_s"),
            blind: p.choice("blind") != "off",
        };
        CocoaCf {
            rto_ms: cfg.initial_rto_ms,
            cfg,
            strong: CfEstimator::default(),
            weak: CfEstimator::default(),
            last_update: now,
            in_flight: 0,
        }
    }

    /// `getRTO()` with `n` registered exchanges (Californium 3.x Cocoa).
    fn get_rto(&self, n: u32) -> i64 {
        let n = if self.cfg.blind { n } else { 1 };
        if n > 1 {
            self.rto_ms
                .saturating_mul(n as i64)
                .min(self.cfg.rto_cap_ms)
        } else {
            self.rto_ms.min(self.cfg.rto_cap_ms)
        }
    }

    /// The VBF of a first timer (Californium 3.x Cocoa): strict thresholds, as in
    /// draft-ietf-core-cocoa-03.
    fn vbf(&self, t_ms: i64) -> f64 {
        if t_ms > self.cfg.vbf_high_thresh_ms {
            self.cfg.vbf_high
        } else if t_ms < self.cfg.vbf_low_thresh_ms {
            self.cfg.vbf_low
        } else {
            self.cfg.vbf_mid
        }
    }

    /// Californium 3.x Cocoa: one aging step at most, reading `getRTO()`, `last_update = now`.
    fn age(&mut self, now: Instant, n: u32) {
        let idle_ms = (now - self.last_update).as_millis();
        let rto = self.get_rto(n);
        let c = &self.cfg;
        if rto < c.age_low_thresh_ms && idle_ms as f64 > c.age_low_mult * rto as f64 {
            self.rto_ms = 2 * rto;
            self.last_update = now;
        } else if rto > c.age_high_thresh_ms && idle_ms as f64 > c.age_high_mult * rto as f64 {
            self.rto_ms = c.age_high_base_ms + rto / 2;
            self.last_update = now;
        }
    }
}

impl RtoAlgorithm for CocoaCf {
    fn name(&self) -> &'static str {
        if self.cfg.strong_only {
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
        // The timer is computed before the exchange is registered, unless it was dequeued from
        // the NSTART queue, which registers it first (Californium 3.x Cocoa).
        let mut t = self.get_rto(admission.registered());
        // randInt[0, floor(1.5·T) − T], inclusive; always one draw (docs/algorithms.md,
        // 'Conventions').
        let spread = java::trunc(t as f64 * self.cfg.ack_random_factor) - t;
        t += java::next_int(rng, spread.max(0) + 1);
        let t = t
            .min(self.cfg.timer_max_ms)
            .max(self.cfg.first_timer_min_ms.min(self.cfg.timer_max_ms));
        x.scratch = Scratch::FixedFactor(self.vbf(t));
        common::arm_first(x, Duration::from_millis(t));
        self.in_flight = self.in_flight.saturating_add(1);
        if self.cfg.aging {
            // Now registered: n includes this exchange.
            self.age(now, admission.in_flight);
        }
        x.timer
    }

    fn expired(&mut self, _now: Instant, x: &mut Exchange, _rng: &mut dyn Random) -> Expiry {
        let f = match x.scratch {
            Scratch::FixedFactor(f) => f,
            _ => self.vbf(x.timer.as_millis()),
        };
        let timer_max_ms = self.cfg.timer_max_ms;
        expire_with(x, self.cfg.max_retransmit, |x| {
            let t = java::trunc(f * x.timer.as_millis() as f64).min(timer_max_ms);
            Duration::from_millis(t)
        })
    }

    fn completed(&mut self, c: &Completion<'_>, _x: &mut Exchange, _rng: &mut dyn Random) {
        // The completing exchange is still registered while the RTO is updated.
        let n = self.in_flight.max(1);
        self.in_flight = self.in_flight.saturating_sub(1);
        let m = c.rtt_from_original().as_millis().max(1);
        let r = c.retransmissions();
        let (e, w) = if r == 0 {
            (
                self.strong.update(m, self.cfg.k_strong, &self.cfg),
                self.cfg.w_strong,
            )
        } else if r <= self.cfg.weak_max_retx && !self.cfg.strong_only {
            (
                self.weak.update(m, self.cfg.k_weak, &self.cfg),
                self.cfg.w_weak,
            )
        } else {
            return;
        };
        self.rto_ms = java::round(w * e + (1.0 - w) * self.get_rto(n) as f64);
        self.last_update = c.ack_time;
    }

    fn failed(&mut self, _now: Instant, _x: &mut Exchange) {
        self.in_flight = self.in_flight.saturating_sub(1);
    }

    fn reset(&mut self, now: Instant) {
        self.strong = CfEstimator::default();
        self.weak = CfEstimator::default();
        self.rto_ms = self.cfg.initial_rto_ms;
        self.last_update = now;
        self.in_flight = 0;
    }

    fn rto(&self) -> Duration {
        Duration::from_millis(self.get_rto(1))
    }

    fn max_retransmit(&self) -> u32 {
        self.cfg.max_retransmit
    }

    fn snapshot(&self) -> Snapshot {
        Snapshot {
            rto: self.rto(),
            state: None,
            vars: vec![
                ("rto_ms", self.rto_ms as f64),
                ("strong_srtt_ms", self.strong.srtt_ms as f64),
                ("strong_rttvar_ms", self.strong.rttvar_ms as f64),
                ("strong_rto_ms", self.strong.rto_ms),
                ("weak_srtt_ms", self.weak.srtt_ms as f64),
                ("weak_rttvar_ms", self.weak.rttvar_ms as f64),
                ("weak_rto_ms", self.weak.rto_ms),
                ("in_flight", f64::from(self.in_flight)),
                ("last_update_s", self.last_update.as_secs_f64()),
            ],
        }
    }
}
