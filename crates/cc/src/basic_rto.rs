//! Californium's BasicRTO: `rto = m + m/2` on every sample, no smoothing.
//!
//! Registered as `basic-rto`. Driven by the shared Californium machinery in [`crate::californium`]:
//! undithered first timer `clamp(rto, 500, 60000)` ms, ×2 backoff capped at 60 s, no blind
//! multiplier.

use crate::algorithm::RtoAlgorithm;
use crate::californium::{CfConfig, CfEstimator, CfRto, Sample};
use crate::params::{Kind, ParamSpec, Params, Value};
use crate::time::Instant;

/// BasicRTO's own parameters (after [`crate::common::COMMON`] and
/// [`crate::californium::CF_COMMON`]).
pub const BASIC: &[ParamSpec] = &[
    ParamSpec {
        key: "basic_factor",
        kind: Kind::Float {
            min: 1.0,
            max: 16.0,
        },
        default: Value::Float(1.5),
        help: "BASIC_FACTOR: rto = m * factor; 1.5 is computed as m + m/2 in integers",
        source: "Californium 3.x BasicRto",
    },
    ParamSpec {
        key: "basic_samples",
        kind: Kind::Choice(&["strong_and_weak", "strong_only"]),
        default: Value::Choice("strong_and_weak"),
        help: "which samples set the RTO: STRONG and WEAK (Californium) or STRONG only",
        source: "Californium 3.x BasicRto; docs/algorithms.md, ambiguity #24",
    },
];

/// The BasicRTO estimator: just the last accepted sample, scaled.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct BasicRto {
    /// The stored RTO in ms.
    rto_ms: i64,
    /// BASIC_FACTOR.
    factor: f64,
    /// Whether WEAK samples count (docs/algorithms.md, ambiguity #24).
    weak_samples: bool,
}

impl BasicRto {
    fn scaled(&self, m: i64) -> i64 {
        if self.factor == 1.5 {
            // Californium: `rtt + rtt / 2` on longs (integer division truncates).
            m + m / 2
        } else {
            crate::java::trunc(m as f64 * self.factor)
        }
    }
}

impl CfEstimator for BasicRto {
    const NAME: &'static str = "basic-rto";

    fn rto_ms(&self) -> i64 {
        self.rto_ms
    }

    fn blind_pending(&self) -> bool {
        false
    }

    fn update(&mut self, sample: Sample, _get_rto_ms: i64) {
        match sample {
            Sample::Strong(m) => self.rto_ms = self.scaled(m),
            Sample::Weak(m) if self.weak_samples => self.rto_ms = self.scaled(m),
            Sample::Weak(_) | Sample::None => {}
        }
    }

    fn vars(&self) -> Vec<(&'static str, f64)> {
        Vec::new()
    }
}

/// Builds `basic-rto` from resolved parameters.
pub(crate) fn build(p: &Params, _now: Instant) -> Box<dyn RtoAlgorithm> {
    let cfg = CfConfig::from_params(p, false);
    Box::new(CfRto::new(
        cfg,
        BasicRto {
            rto_ms: cfg.ack_timeout_ms,
            factor: p.float("basic_factor"),
            weak_samples: p.choice("basic_samples") == "strong_and_weak",
        },
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::californium::test_util::exchange;
    use crate::params::Settings;
    use crate::registry;
    use crate::time::Duration;

    fn basic(settings: &[&str]) -> Box<dyn RtoAlgorithm> {
        let s = Settings::parse(settings.iter().copied()).unwrap();
        registry::build("basic-rto", &s, Instant::ZERO).unwrap()
    }

    #[test]
    fn first_exchange_starts_at_ack_timeout_undithered() {
        let mut a = basic(&[]);
        assert_eq!(exchange(a.as_mut(), 0, 100, 0), [2000]);
    }

    #[test]
    fn strong_100ms_sample_gives_rto_150_and_a_500ms_first_timer() {
        // Californium 3.x BasicRto example.
        let mut a = basic(&[]);
        exchange(a.as_mut(), 0, 100, 0);
        assert_eq!(a.rto(), Duration::from_millis(150));
        assert_eq!(
            exchange(a.as_mut(), 1000, 5000, 4),
            [500, 1000, 2000, 4000, 8000]
        );
    }

    #[test]
    fn weak_2500ms_sample_gives_rto_3750() {
        // Californium 3.x BasicRto example: 1-2 retransmissions make a WEAK sample, which BasicRTO
        // uses.
        let mut a = basic(&[]);
        assert_eq!(exchange(a.as_mut(), 0, 2500, 1), [2000, 4000]);
        assert_eq!(a.rto(), Duration::from_millis(3750));
        assert_eq!(exchange(a.as_mut(), 10_000, 100, 0), [3750]);
    }

    #[test]
    fn odd_samples_truncate_the_half() {
        let mut a = basic(&[]);
        exchange(a.as_mut(), 0, 333, 0);
        assert_eq!(a.rto(), Duration::from_millis(499));
    }

    #[test]
    fn strong_only_ignores_weak_samples() {
        // docs/algorithms.md, ambiguity #24 alternative.
        let mut a = basic(&["basic_samples=strong_only"]);
        exchange(a.as_mut(), 0, 2500, 1);
        assert_eq!(a.rto(), Duration::from_millis(2000));
        exchange(a.as_mut(), 10_000, 300, 0);
        assert_eq!(a.rto(), Duration::from_millis(450));
    }

    #[test]
    fn three_retransmissions_give_no_sample() {
        let mut a = basic(&[]);
        exchange(a.as_mut(), 0, 20_000, 3);
        assert_eq!(a.rto(), Duration::from_millis(2000));
    }

    #[test]
    fn first_timer_floor_can_be_removed() {
        // docs/algorithms.md, ambiguity #25 alternative: no 500 ms floor.
        let mut a = basic(&["first_timer_min_ms=0"]);
        exchange(a.as_mut(), 0, 100, 0);
        assert_eq!(exchange(a.as_mut(), 1000, 100, 1), [150, 300]);
    }

    #[test]
    fn big_rto_is_capped_by_get_rto_and_backoff_by_60s() {
        let mut a = basic(&["max_retransmit=20"]);
        exchange(a.as_mut(), 0, 40_000, 0);
        assert_eq!(a.snapshot().vars, [("rto_ms", 60_000.0)]);
        assert_eq!(a.rto(), Duration::from_millis(32_000));
        assert_eq!(
            exchange(a.as_mut(), 100_000, 200_000, 3),
            [32_000, 60_000, 60_000, 60_000]
        );
    }

    #[test]
    fn gives_up_after_max_retransmit_and_reset_forgets() {
        use crate::algorithm::{Admission, Exchange, Expiry};
        use crate::rng::ConstantRandom;
        let mut a = basic(&["max_retransmit=2"]);
        let mut rng = ConstantRandom(0.0);
        let mut x = Exchange::new();
        let t0 = a.start(Instant::ZERO, Admission::ALONE, &mut x, &mut rng);
        assert_eq!(t0, Duration::from_millis(2000));
        assert_eq!(
            a.expired(Instant::from_millis(2000), &mut x, &mut rng),
            Expiry::Retransmit(Duration::from_millis(4000))
        );
        assert_eq!(
            a.expired(Instant::from_millis(6000), &mut x, &mut rng),
            Expiry::Retransmit(Duration::from_millis(8000))
        );
        assert_eq!(
            a.expired(Instant::from_millis(14_000), &mut x, &mut rng),
            Expiry::GiveUp
        );
        a.failed(Instant::from_millis(14_000), &mut x);
        exchange(a.as_mut(), 20_000, 100, 0);
        assert_eq!(a.rto(), Duration::from_millis(150));
        a.reset(Instant::from_secs(30));
        assert_eq!(a.rto(), Duration::from_millis(2000));
    }

    #[test]
    fn never_multiplies_blind() {
        use crate::algorithm::{Admission, Exchange};
        use crate::rng::ConstantRandom;
        let mut a = basic(&[]);
        let mut x = Exchange::new();
        let three = Admission {
            in_flight: 3,
            dequeued: true,
        };
        assert_eq!(
            a.start(Instant::ZERO, three, &mut x, &mut ConstantRandom(0.0)),
            Duration::from_millis(2000)
        );
    }
}
