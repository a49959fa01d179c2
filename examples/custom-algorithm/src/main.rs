//! `coaplab-custom`: `coaplab` plus `linear` (docs/algorithms.md): RFC 6298 on clean samples, a dithered
//! first timer `T0` from the RTO (2 s at first), backoff `T0 · (1 + step · k)`, timers capped at `max_rto_s`.

use coaplab_cc::common::{arm_first, dither_secs, expire_with, COMMON};
use coaplab_cc::params::{Kind, ParamSpec, Params, Value};
use coaplab_cc::registry::{self, AlgorithmInfo};
use coaplab_cc::rfc6298::{Estimator, Gains};
use coaplab_cc::{Admission, Completion, Duration, Exchange, Expiry, Instant};
use coaplab_cc::{Random, RtoAlgorithm, Snapshot};

const PARAMS: &[ParamSpec] = &[
    ParamSpec {
        key: "step",
        kind: Kind::Float { min: 0.0, max: 100.0 },
        default: Value::Float(1.0),
        help: "the k-th retransmission's timer is T0 * (1 + step * k)",
        source: "this example",
    },
    ParamSpec {
        key: "max_rto_s",
        kind: Kind::Seconds { min: 0.001, max: 3600.0 },
        default: Value::Float(60.0),
        help: "cap of every timer",
        source: "RFC 6298 §2.5",
    },
];

/// Per-destination state `D`.
#[derive(Debug)]
struct Linear {
    est: Estimator,
    ack_random_factor: f64,
    step: f64,
    max_rto: Duration,
    max_retransmit: u32,
}

/// Per-exchange state, kept in [`Exchange::custom`]: this exchange's first timer in seconds.
#[derive(Debug, Clone, Default)]
struct FirstTimer(f64);

fn build(p: &Params, _now: Instant) -> Box<dyn RtoAlgorithm> {
    Box::new(Linear {
        est: Estimator::new(2.0),
        ack_random_factor: p.float("ack_random_factor"),
        step: p.float("step"),
        max_rto: p.secs("max_rto_s"),
        max_retransmit: p.int("max_retransmit") as u32,
    })
}

impl Linear {
    fn timer(&self, secs: f64) -> Duration {
        Duration::from_secs_f64_round_us(secs).min(self.max_rto)
    }
}

impl RtoAlgorithm for Linear {
    fn name(&self) -> &'static str {
        "linear"
    }
    fn start(&mut self, _: Instant, _: Admission, x: &mut Exchange, rng: &mut dyn Random) -> Duration {
        let t0 = dither_secs(self.est.rto_s, self.ack_random_factor, rng.uniform01());
        x.custom::<FirstTimer>().0 = t0;
        arm_first(x, self.timer(t0))
    }
    fn expired(&mut self, _: Instant, x: &mut Exchange, _: &mut dyn Random) -> Expiry {
        expire_with(x, self.max_retransmit, |x| {
            let k = f64::from(x.retransmissions);
            self.timer(x.custom::<FirstTimer>().0 * (1.0 + self.step * k))
        })
    }
    fn completed(&mut self, c: &Completion<'_>, _: &mut Exchange, _: &mut dyn Random) {
        if c.retransmissions() == 0 {
            let sample = c.rtt_from_original().as_secs_f64();
            self.est.update(sample, &Gains::rfc6298(4.0, 0.001));
        }
    }
    fn reset(&mut self, _: Instant) {
        self.est = Estimator::new(2.0);
    }
    fn rto(&self) -> Duration {
        self.timer(self.est.rto_s)
    }
    fn max_retransmit(&self) -> u32 {
        self.max_retransmit
    }
    fn snapshot(&self) -> Snapshot {
        Snapshot { rto: self.rto(), state: None, vars: vec![("srtt_s", self.est.srtt_s)] }
    }
}

fn main() -> std::process::ExitCode {
    let params = &[COMMON, PARAMS];
    let summary = "RFC 6298 estimator, linear backoff (examples/custom-algorithm)";
    let linear = AlgorithmInfo { name: "linear", summary, params, build };
    registry::register(linear).expect("'linear' is a new name");
    coaplab::main()
}
