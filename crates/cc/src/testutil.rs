//! Test helpers: drive one exchange through an algorithm on a scripted timeline.

use crate::algorithm::{Admission, Completion, Exchange, Expiry, RtoAlgorithm};
use crate::params::Settings;
use crate::registry;
use crate::rng::Random;
use crate::time::{Duration, Instant};

/// Algorithm `name` of the registry with `settings` (`key=value`), created at time zero.
pub(crate) fn build(name: &str, settings: &[&str]) -> Box<dyn RtoAlgorithm> {
    registry::build(
        name,
        &Settings::parse(settings.iter().copied()).unwrap(),
        Instant::ZERO,
    )
    .unwrap()
}

/// `s` seconds rounded to the microsecond.
pub(crate) fn secs(s: f64) -> Duration {
    Duration::from_secs_f64_round_us(s)
}

/// `n` microseconds.
pub(crate) fn us(n: i64) -> Duration {
    Duration::from_micros(n)
}

/// What happened to one exchange.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Outcome {
    /// Every timer armed, in order (T0 first).
    pub(crate) timers: Vec<Duration>,
    /// Send time of every transmission (original first).
    pub(crate) tx_times: Vec<Instant>,
    /// When the exchange gave up, if it did.
    pub(crate) gave_up: Option<Instant>,
}

/// Starts an exchange at `start` (alone in flight) and fires its timers until the answer arrives
/// `ack_after` after the original (an answer at the expiry instant wins, docs/algorithms.md,
/// 'Conventions') or the exchange gives up. `answered` is the 0-based transmission the answer
/// identifies.
pub(crate) fn run_exchange(
    alg: &mut dyn RtoAlgorithm,
    start: Instant,
    ack_after: Option<Duration>,
    answered: Option<u32>,
    rng: &mut dyn Random,
) -> Outcome {
    let mut x = Exchange::new();
    let t0 = alg.start(start, Admission::ALONE, &mut x, rng);
    assert_eq!(x.timer, t0, "start must arm the timer it returns");
    assert_eq!(x.retransmissions, 0);
    let mut out = Outcome {
        timers: vec![t0],
        tx_times: vec![start],
        gave_up: None,
    };
    let ack_at = ack_after.map(|d| start + d);
    loop {
        let deadline = *out.tx_times.last().unwrap() + x.timer;
        if let Some(t_ack) = ack_at.filter(|t| *t <= deadline) {
            let c = Completion {
                ack_time: t_ack,
                tx_times: &out.tx_times,
                answered,
                timer_in_force: x.timer,
            };
            alg.completed(&c, &mut x, rng);
            return out;
        }
        match alg.expired(deadline, &mut x, rng) {
            Expiry::Retransmit(t) => {
                assert_eq!(x.timer, t);
                out.timers.push(t);
                out.tx_times.push(deadline);
            }
            Expiry::GiveUp => {
                alg.failed(deadline, &mut x);
                out.gave_up = Some(deadline);
                return out;
            }
        }
    }
}
