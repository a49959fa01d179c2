//! Californium's Linux RTO: a per-sample simplification of Linux
//! `tcp_rtt_estimator` in integer ms, STRONG samples only.
//!
//! Registered as `linux-rto`. Unlike the kernel, the error term is taken against the NEW SRTT
//! and `mdev_max` is reset to the 50 ms floor after every sample (not once per RTT), so RTTVAR
//! never drops below 50 ms and `rto ≥ SRTT + 200 ms`. Driven by [`crate::californium`]:
//! undithered first timer, ×2 backoff, blind multiplier until the first STRONG sample.

use crate::algorithm::RtoAlgorithm;
use crate::californium::{CfConfig, CfEstimator, CfRto, Sample};
use crate::java;
use crate::params::{Kind, ParamSpec, Params, Value};
use crate::time::Instant;

const fn gain(key: &'static str, default: f64, help: &'static str) -> ParamSpec {
    ParamSpec {
        key,
        kind: Kind::Float { min: 0.0, max: 1.0 },
        default: Value::Float(default),
        help,
        source: "Californium 3.x LinuxRto",
    }
}

/// Linux RTO's own parameters (after COMMON, CF_COMMON and CF_BLIND).
pub const LINUX: &[ParamSpec] = &[
    gain("lnx_srtt_gain", 0.125, "SRTT += round(gain * (m - SRTT))"),
    gain(
        "lnx_mdev_gain",
        0.25,
        "mdev = round((1-gain)*mdev) + round(gain*err) when the RTT is not falling",
    ),
    gain(
        "lnx_mdev_gain_down",
        0.03125,
        "mdev = round((1-gain)*mdev + gain*err) when m < SRTT - mdev (falling RTT)",
    ),
    gain(
        "lnx_rttvar_decay",
        0.25,
        "RTTVAR = round((1-decay)*RTTVAR + decay*mdev_max) when mdev_max < RTTVAR",
    ),
    ParamSpec {
        key: "lnx_mdev_floor_ms",
        kind: Kind::Int {
            min: 0,
            max: 3_600_000,
        },
        default: Value::Int(50),
        help: "mdev_max floor and reset value after every sample, in ms (Linux rto_min / 4)",
        source: "Californium 3.x LinuxRto",
    },
    ParamSpec {
        key: "lnx_k",
        kind: Kind::Int { min: 1, max: 64 },
        default: Value::Int(4),
        help: "rto = SRTT + K * RTTVAR",
        source: "Californium 3.x LinuxRto, RFC 6298",
    },
];

/// Linux RTO state, all in integer ms.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct LinuxRto {
    rto_ms: i64,
    /// None until the first STRONG sample.
    est: Option<LinuxVars>,
    srtt_gain: f64,
    mdev_gain: f64,
    mdev_gain_down: f64,
    rttvar_decay: f64,
    mdev_floor_ms: i64,
    k: i64,
}

/// SRTT, mdev, mdev_max and RTTVAR in ms.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct LinuxVars {
    pub(crate) srtt_ms: i64,
    pub(crate) mdev_ms: i64,
    pub(crate) mdev_max_ms: i64,
    pub(crate) rttvar_ms: i64,
}

impl LinuxRto {
    /// The estimator variables after the last sample, for tests.
    #[cfg(test)]
    pub(crate) fn vars_ms(&self) -> Option<LinuxVars> {
        self.est
    }

    fn sample(&mut self, m: i64) {
        let v = match self.est {
            None => {
                let mdev = m / 2;
                let mdev_max = mdev.max(self.mdev_floor_ms);
                LinuxVars {
                    srtt_ms: m,
                    mdev_ms: mdev,
                    mdev_max_ms: mdev_max,
                    rttvar_ms: mdev_max,
                }
            }
            Some(mut v) => {
                // SRTT first; the error is then taken against the NEW SRTT (Californium).
                v.srtt_ms += java::round(self.srtt_gain * (m - v.srtt_ms) as f64);
                let err = (m - v.srtt_ms).abs() as f64;
                if m < v.srtt_ms - v.mdev_ms {
                    // Falling RTT: damped gain, one rounding.
                    let g = self.mdev_gain_down;
                    v.mdev_ms = java::round((1.0 - g) * v.mdev_ms as f64 + g * err);
                } else {
                    // Two separate roundings, as Californium writes it.
                    let g = self.mdev_gain;
                    v.mdev_ms = java::round((1.0 - g) * v.mdev_ms as f64) + java::round(g * err);
                }
                if v.mdev_ms > v.mdev_max_ms {
                    v.mdev_max_ms = v.mdev_ms;
                    if v.mdev_max_ms > v.rttvar_ms {
                        v.rttvar_ms = v.mdev_max_ms;
                    }
                }
                if v.mdev_max_ms < v.rttvar_ms {
                    let d = self.rttvar_decay;
                    v.rttvar_ms =
                        java::round((1.0 - d) * v.rttvar_ms as f64 + d * v.mdev_max_ms as f64);
                }
                // Reset after EVERY sample (the kernel does it once per RTT).
                v.mdev_max_ms = self.mdev_floor_ms;
                v
            }
        };
        self.rto_ms = v.srtt_ms + self.k * v.rttvar_ms;
        self.est = Some(v);
    }
}

impl CfEstimator for LinuxRto {
    const NAME: &'static str = "linux-rto";

    fn rto_ms(&self) -> i64 {
        self.rto_ms
    }

    fn blind_pending(&self) -> bool {
        self.est.is_none()
    }

    fn update(&mut self, sample: Sample, _get_rto_ms: i64) {
        if let Sample::Strong(m) = sample {
            self.sample(m);
        }
    }

    fn vars(&self) -> Vec<(&'static str, f64)> {
        match self.est {
            None => Vec::new(),
            Some(v) => vec![
                ("srtt_ms", v.srtt_ms as f64),
                ("mdev_ms", v.mdev_ms as f64),
                ("mdev_max_ms", v.mdev_max_ms as f64),
                ("rttvar_ms", v.rttvar_ms as f64),
            ],
        }
    }
}

/// Builds `linux-rto` from resolved parameters.
pub(crate) fn build(p: &Params, _now: Instant) -> Box<dyn RtoAlgorithm> {
    Box::new(new(p))
}

fn new(p: &Params) -> CfRto<LinuxRto> {
    let cfg = CfConfig::from_params(p, true);
    CfRto::new(
        cfg,
        LinuxRto {
            rto_ms: cfg.ack_timeout_ms,
            est: None,
            srtt_gain: p.float("lnx_srtt_gain"),
            mdev_gain: p.float("lnx_mdev_gain"),
            mdev_gain_down: p.float("lnx_mdev_gain_down"),
            rttvar_decay: p.float("lnx_rttvar_decay"),
            mdev_floor_ms: p.int("lnx_mdev_floor_ms"),
            k: p.int("lnx_k"),
        },
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::algorithm::{Admission, Exchange};
    use crate::californium::test_util::exchange;
    use crate::californium::{CF_BLIND, CF_COMMON};
    use crate::common::COMMON;
    use crate::params::Settings;
    use crate::rng::ConstantRandom;
    use crate::time::Duration;

    fn linux(settings: &[&str]) -> CfRto<LinuxRto> {
        let s = Settings::parse(settings.iter().copied()).unwrap();
        let p = Params::resolve("linux-rto", &[COMMON, CF_COMMON, CF_BLIND, LINUX], &s).unwrap();
        let b = build(&p, Instant::ZERO);
        assert_eq!(b.name(), "linux-rto");
        new(&p)
    }

    #[test]
    fn example_table_of_spec_8_2() {
        // m | SRTT | mdev | RTTVAR | rto
        let rows: [(i64, i64, i64, i64, i64); 5] = [
            (100, 100, 50, 50, 300),
            (100, 100, 38, 50, 300),
            (300, 125, 73, 73, 417),
            (100, 122, 61, 70, 402),
            (100, 119, 51, 65, 379),
        ];
        let mut a = linux(&[]);
        let mut t = 0;
        for (m, srtt, mdev, rttvar, rto) in rows {
            exchange(&mut a, t, m, 0);
            t += 10_000;
            let v = a.estimator().vars_ms().unwrap();
            assert_eq!(
                (v.srtt_ms, v.mdev_ms, v.rttvar_ms),
                (srtt, mdev, rttvar),
                "m={m}"
            );
            assert_eq!(a.rto(), Duration::from_millis(rto), "m={m}");
            assert_eq!(v.mdev_max_ms, 50);
        }
        // The next first timer is the rto, undithered, clamped up to 500 ms.
        assert_eq!(exchange(&mut a, t, 100, 0), [500]);
    }

    #[test]
    fn falling_rtt_uses_the_damped_gain() {
        let mut a = linux(&[]);
        exchange(&mut a, 0, 1000, 0); // SRTT 1000, mdev 500, RTTVAR 500
        exchange(&mut a, 10_000, 100, 0);
        // SRTT = 1000 + round(-112.5) = 888; 100 < 888 - 500: mdev = round(0.96875*500 +
        // 0.03125*788) = round(509) = 509; mdev_max = 509 > 500 → RTTVAR 509.
        let v = a.estimator().vars_ms().unwrap();
        assert_eq!((v.srtt_ms, v.mdev_ms, v.rttvar_ms), (888, 509, 509));
        assert_eq!(a.rto(), Duration::from_millis(888 + 4 * 509));
    }

    #[test]
    fn weak_samples_are_ignored() {
        let mut a = linux(&[]);
        assert_eq!(exchange(&mut a, 0, 2500, 1), [2000, 4000]);
        assert_eq!(a.rto(), Duration::from_millis(2000));
        assert!(a.estimator().vars_ms().is_none());
    }

    #[test]
    fn blind_multiplier_until_the_first_strong_sample() {
        let mut a = linux(&[]);
        let mut rng = ConstantRandom(0.0);
        let second = Admission {
            in_flight: 2,
            dequeued: false,
        };
        let dequeued = Admission {
            in_flight: 2,
            dequeued: true,
        };
        let mut x = Exchange::new();
        // "Two running": the new one is not yet registered, n = 1 → no multiplier.
        assert_eq!(
            a.start(Instant::ZERO, second, &mut x, &mut rng),
            Duration::from_millis(2000)
        );
        assert_eq!(
            a.start(Instant::ZERO, dequeued, &mut x, &mut rng),
            Duration::from_millis(4000)
        );
        let three = Admission {
            in_flight: 3,
            dequeued: false,
        };
        assert_eq!(
            a.start(Instant::ZERO, three, &mut x, &mut rng),
            Duration::from_millis(4000)
        );
        exchange(&mut a, 0, 100, 0);
        assert_eq!(
            a.start(Instant::ZERO, three, &mut x, &mut rng),
            Duration::from_millis(500)
        );
        let mut off = linux(&["blind=false"]);
        assert_eq!(
            off.start(Instant::ZERO, dequeued, &mut x, &mut rng),
            Duration::from_millis(2000)
        );
    }

    #[test]
    fn reset_forgets_the_estimator() {
        let mut a = linux(&[]);
        exchange(&mut a, 0, 100, 0);
        a.reset(Instant::from_secs(5));
        assert_eq!(a.rto(), Duration::from_millis(2000));
        assert!(a.snapshot().vars == [("rto_ms", 2000.0)]);
    }
}
