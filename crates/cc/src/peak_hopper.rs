//! Californium's Peak-Hopper RTO (Ekström & Ludwig, INFOCOM 2004), STRONG samples
//! only, integer ms.
//!
//! Registered as `peakhopper`. A jump in the RTT raises the booster `B` (up to `B_MAX`) and the
//! RTO hops to `(1+B)·max(m, rtt_prev)` at once; afterwards the RTO decays by `D = 1 − 1/F` per
//! sample towards RTT + 100 ms, while `B` decays by the same factor. Driven by
//! [`crate::californium`]: undithered first timer, ×2 backoff, blind multiplier until the first
//! STRONG sample.

use crate::algorithm::RtoAlgorithm;
use crate::californium::{CfConfig, CfEstimator, CfRto, Sample};
use crate::java;
use crate::params::{Kind, ParamSpec, Params, Value};
use crate::time::Instant;

/// Peak-Hopper's own parameters (after COMMON, CF_COMMON and CF_BLIND).
pub const PEAK_HOPPER: &[ParamSpec] = &[
    ParamSpec {
        key: "ph_init_factor",
        kind: Kind::Float {
            min: 1.0,
            max: 16.0,
        },
        default: Value::Float(1.75),
        help: "first STRONG sample: rto = (long)(factor * m)",
        source: "Californium 3.x PeakhopperRto",
    },
    ParamSpec {
        key: "ph_f",
        kind: Kind::Int { min: 2, max: 1000 },
        default: Value::Int(24),
        help: "decay D = 1 - 1/F per sample, for both the RTO and the booster B",
        source: "Californium 3.x PeakhopperRto, Ekström & Ludwig 2004",
    },
    ParamSpec {
        key: "ph_b_max",
        kind: Kind::Float {
            min: 0.0,
            max: 16.0,
        },
        default: Value::Float(1.0),
        help: "B_MAX: ceiling of the booster B",
        source: "Californium 3.x PeakhopperRto",
    },
    ParamSpec {
        key: "ph_hist",
        kind: Kind::Int { min: 1, max: 64 },
        default: Value::Int(2),
        help: "PH_HIST: samples kept for rto_min = max(history) + 2 * margin",
        source: "Californium 3.x PeakhopperRto",
    },
    ParamSpec {
        key: "ph_margin_ms",
        kind: Kind::Int {
            min: 0,
            max: 3_600_000,
        },
        default: Value::Int(50),
        help: "PH_MARGIN in ms: rto >= rtt_max + (1+B_MAX)*margin and >= max(history) + 2*margin",
        source: "Californium 3.x PeakhopperRto",
    },
    ParamSpec {
        key: "ph_int_delta",
        kind: Kind::Bool,
        default: Value::Bool(false),
        help: "Californium 3.x: delta = |(m - rtt_prev) / m| in integer division (0 unless the RTT doubles)",
        source: "Californium 3.x PeakhopperRto; docs/algorithms.md, ambiguity #23",
    },
];

/// Peak-Hopper state.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct PeakHopper {
    rto_ms: i64,
    /// The booster `B`, real-valued.
    b: f64,
    /// The previous STRONG sample, ms (stays 0 after the first sample, as in Californium).
    rtt_prev_ms: i64,
    /// Ring of the last PH_HIST samples, ms.
    hist_ms: Vec<i64>,
    /// Next ring slot to overwrite.
    hist_next: usize,
    /// True once a STRONG sample was taken.
    has_sample: bool,
    init_factor: f64,
    f: i64,
    b_max: f64,
    margin_ms: i64,
    int_delta: bool,
}

impl PeakHopper {
    /// The booster `B`, for tests.
    #[cfg(test)]
    pub(crate) fn booster(&self) -> f64 {
        self.b
    }

    fn push(&mut self, m: i64) {
        self.hist_ms[self.hist_next] = m;
        self.hist_next = (self.hist_next + 1) % self.hist_ms.len();
    }

    fn sample(&mut self, m: i64, get_rto_ms: i64) {
        self.push(m);
        if !self.has_sample {
            self.has_sample = true;
            self.rto_ms = java::trunc(self.init_factor * m as f64);
            return;
        }
        let d = 1.0 - 1.0 / self.f as f64;
        let delta = if self.int_delta {
            // Californium 3.x: long division before the conversion.
            ((m - self.rtt_prev_ms) / m).abs() as f64
        } else {
            (m - self.rtt_prev_ms).abs() as f64 / m as f64
        };
        self.b = (2.0 * delta).max(d * self.b).min(self.b_max);
        let rtt_max = m.max(self.rtt_prev_ms);
        let rto_min = self.hist_ms.iter().copied().max().unwrap_or(0) + 2 * self.margin_ms;
        // D·getRTO() on integers: floor((F-1)·rto / F).
        let decayed = (self.f - 1) * get_rto_ms / self.f;
        let boosted = (1.0 + self.b) * rtt_max as f64;
        let rto = java::trunc((decayed as f64).max(boosted));
        let floor = java::trunc(rtt_max as f64 + (1.0 + self.b_max) * self.margin_ms as f64);
        self.rto_ms = rto.max(floor).max(rto_min);
        self.rtt_prev_ms = m;
    }
}

impl CfEstimator for PeakHopper {
    const NAME: &'static str = "peakhopper";

    fn rto_ms(&self) -> i64 {
        self.rto_ms
    }

    fn blind_pending(&self) -> bool {
        !self.has_sample
    }

    fn update(&mut self, sample: Sample, get_rto_ms: i64) {
        if let Sample::Strong(m) = sample {
            self.sample(m, get_rto_ms);
        }
    }

    fn vars(&self) -> Vec<(&'static str, f64)> {
        vec![
            ("booster", self.b),
            ("rtt_prev_ms", self.rtt_prev_ms as f64),
        ]
    }
}

/// Builds `peakhopper` from resolved parameters.
pub(crate) fn build(p: &Params, _now: Instant) -> Box<dyn RtoAlgorithm> {
    Box::new(new(p))
}

fn new(p: &Params) -> CfRto<PeakHopper> {
    let cfg = CfConfig::from_params(p, true);
    CfRto::new(
        cfg,
        PeakHopper {
            rto_ms: cfg.ack_timeout_ms,
            b: 0.0,
            rtt_prev_ms: 0,
            hist_ms: vec![0; p.int("ph_hist") as usize],
            hist_next: 0,
            has_sample: false,
            init_factor: p.float("ph_init_factor"),
            f: p.int("ph_f"),
            b_max: p.float("ph_b_max"),
            margin_ms: p.int("ph_margin_ms"),
            int_delta: p.flag("ph_int_delta"),
        },
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::californium::test_util::exchange;
    use crate::californium::{CF_BLIND, CF_COMMON};
    use crate::common::COMMON;
    use crate::params::Settings;
    use crate::time::Duration;

    fn ph(settings: &[&str]) -> CfRto<PeakHopper> {
        let s = Settings::parse(settings.iter().copied()).unwrap();
        new(&Params::resolve(
            "peakhopper",
            &[COMMON, CF_COMMON, CF_BLIND, PEAK_HOPPER],
            &s,
        )
        .unwrap())
    }

    const SAMPLES_MS: [i64; 8] = [100, 100, 100, 300, 100, 100, 100, 100];

    fn close(a: f64, b: f64) {
        assert!((a - b).abs() < 1e-6, "{a} != {b}");
    }

    #[test]
    fn example_table_fractional_delta() {
        // Californium 3.x PeakhopperRto, column "2.x".
        let rto = [175, 200, 200, 600, 600, 575, 551, 528];
        let booster = [0.0, 1.0, 0.958333, 1.0, 1.0, 0.958333, 0.918403, 0.880136];
        let mut a = ph(&[]);
        for (i, m) in SAMPLES_MS.into_iter().enumerate() {
            exchange(&mut a, i as i64 * 10_000, m, 0);
            assert_eq!(a.rto(), Duration::from_millis(rto[i]), "row {i}");
            close(a.estimator().booster(), booster[i]);
        }
        assert_eq!(exchange(&mut a, 100_000, 100, 0), [528]);
    }

    #[test]
    fn example_table_integer_delta() {
        // Californium 3.x PeakhopperRto, column "with ph_int_delta": row 4 gives B 0.918403
        // and 575.
        let rto = [175, 200, 200, 575, 600, 575, 551, 528];
        let mut a = ph(&["ph_int_delta=true"]);
        for (i, m) in SAMPLES_MS.into_iter().enumerate() {
            exchange(&mut a, i as i64 * 10_000, m, 0);
            assert_eq!(a.rto(), Duration::from_millis(rto[i]), "row {i}");
            if i == 3 {
                close(a.estimator().booster(), 0.918403);
            }
        }
    }

    #[test]
    fn steady_state_is_rtt_plus_100ms() {
        let mut a = ph(&[]);
        for i in 0..200 {
            exchange(&mut a, i * 10_000, 250, 0);
        }
        assert_eq!(a.rto(), Duration::from_millis(350));
        // The next first timer is clamped up to the 500 ms floor.
        assert_eq!(exchange(&mut a, 10_000_000, 250, 0), [500]);
    }

    #[test]
    fn weak_samples_are_ignored_and_reset_forgets() {
        let mut a = ph(&[]);
        exchange(&mut a, 0, 2500, 2);
        assert_eq!(a.rto(), Duration::from_millis(2000));
        exchange(&mut a, 20_000, 100, 0);
        assert_eq!(a.rto(), Duration::from_millis(175));
        a.reset(Instant::from_secs(40));
        assert_eq!(a.rto(), Duration::from_millis(2000));
        exchange(&mut a, 50_000, 100, 0);
        assert_eq!(a.rto(), Duration::from_millis(175));
    }
}
