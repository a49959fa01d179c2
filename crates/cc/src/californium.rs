//! The integer-millisecond machinery shared by Californium's BasicRTO, Linux RTO and
//! Peak-Hopper RTO (Californium 3.x, common rules).
//!
//! Californium keeps one `long` RTO in ms per destination and drives every exchange the same
//! way; only the estimator update differs. `CfRto` is that driver, generic over a
//! `CfEstimator` (one per file: `basic_rto.rs`, `linux_rto.rs`, `peak_hopper.rs`):
//!
//! * a sample is `m = max(1, floor(R ms))` measured from the ORIGINAL transmission, classed by
//!   retransmissions: 0 → STRONG, 1–2 → WEAK, ≥ 3 → none;
//! * `getRTO() = min(rto · n, 32000)` when the blind multiplier is active and `n > 1`, else
//!   `min(rto, 32000)` (Californium 3.x Cocoa: `n` counts exchanges already registered in flight);
//! * the first timer is `clamp(getRTO(), 500, 60000)`, undithered;
//! * each expiry gives `T_k = min(60000, (long)(2.0 · T_{k-1}))`; no backoff is carried to the
//!   next exchange, which starts again from the current RTO.

use core::fmt;

use crate::algorithm::{Admission, Completion, Exchange, Expiry, RtoAlgorithm, Snapshot};
use crate::common;
use crate::java;
use crate::params::{Kind, ParamSpec, Params, Value};
use crate::rng::Random;
use crate::time::{Duration, Instant};

/// Parameters of every Californium algorithm, after [`common::COMMON`]. Durations in integer ms, as
/// Californium stores them.
pub const CF_COMMON: &[ParamSpec] = &[
    ParamSpec {
        key: "ack_timeout_ms",
        kind: Kind::Int {
            min: 1,
            max: 3_600_000,
        },
        default: Value::Int(2000),
        help: "ACK_TIMEOUT: the RTO before any sample, in ms",
        source: "Californium 3.x ACK_TIMEOUT",
    },
    ParamSpec {
        key: "first_timer_min_ms",
        kind: Kind::Int {
            min: 0,
            max: 3_600_000,
        },
        default: Value::Int(500),
        help: "FIRST_TIMER_MIN: lower clamp on the first timer (0 disables it)",
        source: "Californium 3.x; docs/algorithms.md, ambiguity #25",
    },
    ParamSpec {
        key: "base_rto_cap_ms",
        kind: Kind::Int {
            min: 1,
            max: i64::MAX / 4,
        },
        default: Value::Int(32_000),
        help: "BASE_RTO_CAP: getRTO() never exceeds this, in ms",
        source: "Californium 3.x getRTO",
    },
    ParamSpec {
        key: "timer_max_ms",
        kind: Kind::Int {
            min: 1,
            max: i64::MAX / 4,
        },
        default: Value::Int(60_000),
        help: "TIMER_MAX: ceiling on the first and every backed-off timer, in ms",
        source: "Californium 3.x",
    },
    ParamSpec {
        key: "backoff",
        kind: Kind::Float {
            min: 1.0,
            max: 16.0,
        },
        default: Value::Float(2.0),
        help: "BACKOFF: T_k = min(TIMER_MAX, (long)(BACKOFF * T_{k-1}))",
        source: "Californium 3.x",
    },
];

/// The blind-multiplier switch of Linux RTO and Peak-Hopper (BasicRTO never uses it).
pub const CF_BLIND: &[ParamSpec] = &[ParamSpec {
    key: "blind",
    kind: Kind::Bool,
    default: Value::Bool(true),
    help: "multiply getRTO() by the exchanges registered in flight until the first STRONG sample",
    source: "Californium 3.x Cocoa",
}];

/// A classified RTT sample in integer ms (Californium 3.x common rules).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Sample {
    /// No retransmission: `m` is unambiguous.
    Strong(i64),
    /// One or two retransmissions: `m` is measured from the original.
    Weak(i64),
    /// Three or more retransmissions: no sample.
    None,
}

impl Sample {
    /// Classifies a completion: `m = max(1, floor(R0 in ms))`, class by retransmissions.
    pub(crate) fn of(c: &Completion<'_>) -> Sample {
        // R0 is never negative (now never decreases), so integer division is floor.
        let m = (c.rtt_from_original().as_nanos() / 1_000_000).max(1);
        match c.retransmissions() {
            0 => Sample::Strong(m),
            1 | 2 => Sample::Weak(m),
            _ => Sample::None,
        }
    }
}

/// The estimator part of a Californium algorithm: everything but the shared driver.
pub(crate) trait CfEstimator: fmt::Debug + Send + Clone {
    /// The registry name.
    const NAME: &'static str;

    /// The stored RTO in ms (before the getRTO cap).
    fn rto_ms(&self) -> i64;

    /// True while the blind multiplier may apply (before the first STRONG sample).
    fn blind_pending(&self) -> bool;

    /// Feeds one classified sample; `get_rto_ms` is `getRTO()` at the time of the update.
    fn update(&mut self, sample: Sample, get_rto_ms: i64);

    /// The estimator variables for [`Snapshot::vars`], names with units.
    fn vars(&self) -> Vec<(&'static str, f64)>;
}

/// The shared Californium settings, resolved from [`CF_COMMON`] (and [`CF_BLIND`] when declared).
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct CfConfig {
    /// MAX_RETRANSMIT.
    pub(crate) max_retransmit: u32,
    /// ACK_TIMEOUT in ms: the initial RTO.
    pub(crate) ack_timeout_ms: i64,
    /// Lower clamp on the first timer, ms.
    pub(crate) first_timer_min_ms: i64,
    /// Cap inside getRTO(), ms.
    pub(crate) base_rto_cap_ms: i64,
    /// Ceiling on every timer, ms.
    pub(crate) timer_max_ms: i64,
    /// Backoff multiplier per expiry.
    pub(crate) backoff: f64,
    /// Whether the blind multiplier is in use.
    pub(crate) blind: bool,
}

impl CfConfig {
    /// Reads the shared keys; `blind` is read only when the algorithm declares it.
    pub(crate) fn from_params(p: &Params, has_blind: bool) -> Self {
        CfConfig {
            max_retransmit: p.int("max_retransmit") as u32,
            ack_timeout_ms: p.int("ack_timeout_ms"),
            first_timer_min_ms: p.int("first_timer_min_ms"),
            base_rto_cap_ms: p.int("base_rto_cap_ms"),
            timer_max_ms: p.int("timer_max_ms"),
            backoff: p.float("backoff"),
            blind: has_blind && p.flag("blind"),
        }
    }

    /// `getRTO()` with `registered` exchanges in flight (blind multiplier when `blind` and
    /// `registered > 1`), capped at BASE_RTO_CAP.
    pub(crate) fn get_rto_ms(&self, rto_ms: i64, registered: u32, blind: bool) -> i64 {
        let base = if blind && registered > 1 {
            rto_ms.saturating_mul(i64::from(registered))
        } else {
            rto_ms
        };
        base.min(self.base_rto_cap_ms)
    }

    /// The first timer: `clamp(getRTO(), FIRST_TIMER_MIN, TIMER_MAX)`, undithered.
    pub(crate) fn first_timer_ms(&self, get_rto_ms: i64) -> i64 {
        // max then min, so TIMER_MAX wins if a user sets FIRST_TIMER_MIN above it.
        get_rto_ms
            .max(self.first_timer_min_ms)
            .min(self.timer_max_ms)
    }

    /// The next timer: `min(TIMER_MAX, (long)(BACKOFF · T))`.
    pub(crate) fn next_timer_ms(&self, timer_ms: i64) -> i64 {
        java::trunc(self.backoff * timer_ms as f64).min(self.timer_max_ms)
    }
}

/// A Californium algorithm: the shared driver around estimator `E`.
#[derive(Debug, Clone)]
pub(crate) struct CfRto<E> {
    cfg: CfConfig,
    /// The estimator as built, restored by `reset`.
    initial: E,
    est: E,
}

impl<E: CfEstimator> CfRto<E> {
    /// Wraps a freshly built estimator.
    pub(crate) fn new(cfg: CfConfig, est: E) -> Self {
        CfRto {
            cfg,
            initial: est.clone(),
            est,
        }
    }

    /// The estimator, for tests.
    #[cfg(test)]
    pub(crate) fn estimator(&self) -> &E {
        &self.est
    }

    fn base_rto_ms(&self) -> i64 {
        self.cfg.get_rto_ms(self.est.rto_ms(), 1, false)
    }
}

impl<E: CfEstimator + 'static> RtoAlgorithm for CfRto<E> {
    fn name(&self) -> &'static str {
        E::NAME
    }

    fn start(
        &mut self,
        _now: Instant,
        admission: Admission,
        x: &mut Exchange,
        _rng: &mut dyn Random,
    ) -> Duration {
        let blind = self.cfg.blind && self.est.blind_pending();
        let get_rto = self
            .cfg
            .get_rto_ms(self.est.rto_ms(), admission.registered(), blind);
        common::arm_first(x, Duration::from_millis(self.cfg.first_timer_ms(get_rto)))
    }

    fn expired(&mut self, _now: Instant, x: &mut Exchange, _rng: &mut dyn Random) -> Expiry {
        let cfg = self.cfg;
        common::expire_with(x, cfg.max_retransmit, |x| {
            Duration::from_millis(cfg.next_timer_ms(x.timer.as_millis()))
        })
    }

    fn completed(&mut self, c: &Completion<'_>, _x: &mut Exchange, _rng: &mut dyn Random) {
        // Blind ends at the first STRONG sample, so an update never sees n > 1 in practice;
        // the completing exchange is no longer counted either way.
        let get_rto = self.base_rto_ms();
        self.est.update(Sample::of(c), get_rto);
    }

    fn reset(&mut self, _now: Instant) {
        self.est = self.initial.clone();
    }

    fn rto(&self) -> Duration {
        Duration::from_millis(self.base_rto_ms())
    }

    fn max_retransmit(&self) -> u32 {
        self.cfg.max_retransmit
    }

    fn snapshot(&self) -> Snapshot {
        let mut vars = vec![("rto_ms", self.est.rto_ms() as f64)];
        vars.extend(self.est.vars());
        Snapshot {
            rto: self.rto(),
            state: None,
            vars,
        }
    }
}

#[cfg(test)]
pub(crate) mod test_util {
    //! Drives a Californium algorithm through scripted exchanges.

    use super::*;
    use crate::rng::ConstantRandom;

    /// Runs one exchange started at `t0_ms` that is answered `rtt_ms` after the original,
    /// after `retransmissions` expiries. Returns the timers armed (first timer first).
    pub(crate) fn exchange(
        alg: &mut dyn RtoAlgorithm,
        t0_ms: i64,
        rtt_ms: i64,
        retransmissions: u32,
    ) -> Vec<i64> {
        let mut rng = ConstantRandom(0.0);
        let mut x = Exchange::new();
        let start = Instant::from_millis(t0_ms);
        let mut tx = vec![start];
        let mut timers = vec![alg
            .start(start, Admission::ALONE, &mut x, &mut rng)
            .as_millis()];
        let mut t = start;
        for _ in 0..retransmissions {
            t += x.timer;
            match alg.expired(t, &mut x, &mut rng) {
                Expiry::Retransmit(d) => timers.push(d.as_millis()),
                Expiry::GiveUp => panic!("gave up"),
            }
            tx.push(t);
        }
        let c = Completion {
            ack_time: start + Duration::from_millis(rtt_ms),
            tx_times: &tx,
            answered: None,
            timer_in_force: x.timer,
        };
        alg.completed(&c, &mut x, &mut rng);
        timers
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::params::Settings;

    fn cfg(settings: &[&str]) -> CfConfig {
        let s = Settings::parse(settings.iter().copied()).unwrap();
        let p = Params::resolve("t", &[common::COMMON, CF_COMMON, CF_BLIND], &s).unwrap();
        CfConfig::from_params(&p, true)
    }

    fn completion(tx_ms: &[i64], ack_ns: i64) -> (Vec<Instant>, Instant) {
        (
            tx_ms.iter().map(|&t| Instant::from_millis(t)).collect(),
            Instant::from_nanos(ack_ns),
        )
    }

    #[test]
    fn samples_are_whole_ms_from_the_original_and_at_least_one() {
        let (tx, ack) = completion(&[0], 100_999_999);
        let c = Completion {
            ack_time: ack,
            tx_times: &tx,
            answered: None,
            timer_in_force: Duration::ZERO,
        };
        assert_eq!(Sample::of(&c), Sample::Strong(100));
        let (tx, ack) = completion(&[0], 400_000);
        let c = Completion {
            tx_times: &tx,
            ack_time: ack,
            ..c
        };
        assert_eq!(Sample::of(&c), Sample::Strong(1));
        let (tx, ack) = completion(&[0, 2000, 6000], 2_500_000_000);
        let c = Completion {
            tx_times: &tx,
            ack_time: ack,
            ..c
        };
        assert_eq!(Sample::of(&c), Sample::Weak(2500));
        let (tx, ack) = completion(&[0, 1, 2, 3], 9_000_000_000);
        let c = Completion {
            tx_times: &tx,
            ack_time: ack,
            ..c
        };
        assert_eq!(Sample::of(&c), Sample::None);
    }

    #[test]
    fn first_timer_is_clamped_to_500_and_60000() {
        let c = cfg(&[]);
        assert_eq!(c.first_timer_ms(150), 500);
        assert_eq!(c.first_timer_ms(2000), 2000);
        assert_eq!(c.first_timer_ms(70_000), 60_000);
        // docs/algorithms.md, ambiguity #25 alternative: no floor.
        assert_eq!(cfg(&["first_timer_min_ms=0"]).first_timer_ms(150), 150);
    }

    #[test]
    fn get_rto_caps_at_32000_and_multiplies_blind() {
        let c = cfg(&[]);
        assert_eq!(c.get_rto_ms(40_000, 1, true), 32_000);
        assert_eq!(c.get_rto_ms(2000, 2, true), 4000);
        assert_eq!(c.get_rto_ms(2000, 2, false), 2000);
        assert_eq!(c.get_rto_ms(2000, 20, true), 32_000);
    }

    #[test]
    fn backoff_doubles_and_caps_at_60000() {
        let c = cfg(&[]);
        let mut t = 500;
        let mut series = vec![t];
        for _ in 0..8 {
            t = c.next_timer_ms(t);
            series.push(t);
        }
        assert_eq!(
            series,
            [500, 1000, 2000, 4000, 8000, 16_000, 32_000, 60_000, 60_000]
        );
        assert_eq!(cfg(&["backoff=1.5"]).next_timer_ms(333), 499);
    }

    #[test]
    fn new_exchanges_are_not_yet_registered_but_dequeued_ones_are() {
        let a = Admission {
            in_flight: 3,
            dequeued: false,
        };
        assert_eq!(a.registered(), 2);
        assert_eq!(
            Admission {
                dequeued: true,
                ..a
            }
            .registered(),
            3
        );
        assert_eq!(Admission::ALONE.registered(), 0);
    }
}
