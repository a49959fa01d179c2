//! Pieces every algorithm shares: the common parameters of RFC 7252 §4.8, the give-up rule and
//! the dithered first timer.

use crate::algorithm::{Exchange, Expiry};
use crate::params::{Kind, ParamSpec, Value};
use crate::time::Duration;

/// Parameters every algorithm has (RFC 7252 §4.8). Each algorithm lists this group first.
pub const COMMON: &[ParamSpec] = &[
    ParamSpec {
        key: "ack_random_factor",
        kind: Kind::Float {
            min: 1.0,
            max: 16.0,
        },
        default: Value::Float(1.5),
        help: "ACK_RANDOM_FACTOR: first timers are dithered by x[1, factor)",
        source: "RFC 7252 §4.8",
    },
    ParamSpec {
        key: "max_retransmit",
        kind: Kind::Int { min: 0, max: 255 },
        default: Value::Int(4),
        help: "MAX_RETRANSMIT: retransmissions before giving up (experiment presets use 20)",
        source: "RFC 7252 §4.8",
    },
];

/// The start half of the event contract (docs/algorithms.md, 'Conventions'): a fresh exchange with
/// `k = 0` and `T = t0` armed. Returns `t0`.
pub fn arm_first(x: &mut Exchange, t0: Duration) -> Duration {
    x.retransmissions = 0;
    x.timer = t0;
    t0
}

/// The give-up rule of docs/algorithms.md, 'Conventions': when the timer of transmission
/// MAX_RETRANSMIT expires the exchange fails; otherwise `k += 1`, `next(x)` computes the new timer,
/// which is armed.
pub fn expire_with(
    x: &mut Exchange,
    max_retransmit: u32,
    next: impl FnOnce(&mut Exchange) -> Duration,
) -> Expiry {
    if x.retransmissions >= max_retransmit {
        return Expiry::GiveUp;
    }
    x.retransmissions += 1;
    let t = next(x);
    x.timer = t;
    Expiry::Retransmit(t)
}

/// `base * (1 + (arf - 1) * u)` in f64 seconds (RFC 7252 §4.2), not yet rounded.
pub fn dither_secs(base_s: f64, ack_random_factor: f64, u: f64) -> f64 {
    base_s * (1.0 + (ack_random_factor - 1.0) * u)
}

/// `min(a, b)` on durations where `b` may be [`Duration::MAX`] ("no cap").
pub fn cap(a: Duration, max: Duration) -> Duration {
    a.min(max)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn give_up_after_max_retransmit_timers() {
        let mut x = Exchange::new();
        x.timer = Duration::from_secs(1);
        let mut series = vec![];
        while let Expiry::Retransmit(t) = expire_with(&mut x, 2, |x| x.timer * 2) {
            series.push(t);
        }
        assert_eq!(series, [Duration::from_secs(2), Duration::from_secs(4)]);
        assert_eq!(x.retransmissions, 2);
    }

    #[test]
    fn dither_matches_the_rfc_example() {
        // RFC 7252 §4.2: u = 0.4 gives 2.4 s.
        assert_eq!(
            Duration::from_secs_f64_round_us(dither_secs(2.0, 1.5, 0.4)),
            Duration::from_micros(2_400_000)
        );
    }
}
