//! Test drivers shared by the CoCoA family's tests.

use crate::algorithm::{Admission, Completion, Exchange, Expiry, RtoAlgorithm};
use crate::params::{ParamSpec, Params, Settings};
use crate::rng::Random;
use crate::time::{Duration, Instant};

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
/// as an expiry is processed first (docs/algorithms.md, 'Conventions').
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
