//! Packet-based Gilbert-Elliott loss with Linux netem `gemodel` semantics (docs/experiments.md
//! §1.2).
//!
//! Per packet, two independent uniform draws, as netem's `loss_gilb_ell()` (4.x/5.x kernels):
//! the first decides the state transition, which applies from the **next** packet; the second
//! decides this packet's loss with the probability of the state it found. Start GOOD.

use coaplab_base::rng::{Random, SeededRandom};

/// Gilbert-Elliott parameters, in netem's `gemodel p r 1-h 1-k` order.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct GeParams {
    /// GOOD → BAD transition probability per packet.
    pub p: f64,
    /// BAD → GOOD transition probability per packet.
    pub r: f64,
    /// Loss probability in BAD (`1-h`).
    pub loss_bad: f64,
    /// Loss probability in GOOD (`1-k`).
    pub loss_good: f64,
}

impl GeParams {
    /// Profile `medium` realised per packet (docs/experiments.md §3, example `r = 0.1`): `p =
    /// 0.025`, `1-h = 0.5`, `1-k = 0` (π_B = 0.2, ≈10 %, bursts of 10 packets on average).
    pub const MEDIUM: GeParams = GeParams {
        p: 0.025,
        r: 0.1,
        loss_bad: 0.5,
        loss_good: 0.0,
    };

    /// Profile `high` realised per packet (docs/experiments.md §3, example `r = 0.1`): `p =
    /// 0.02581`, `1-h = 0.8`, `1-k = 0.02` (π_B ≈ 0.2051, ≈18 %).
    pub const HIGH: GeParams = GeParams {
        p: 0.02581,
        r: 0.1,
        loss_bad: 0.8,
        loss_good: 0.02,
    };

    /// Stationary probability of BAD, `p/(p+r)` (0 when `p = r = 0`: the chain stays GOOD).
    pub fn bad_fraction(&self) -> f64 {
        if self.p + self.r == 0.0 {
            0.0
        } else {
            self.p / (self.p + self.r)
        }
    }

    /// Mean loss `[r(1-k) + p(1-h)]/(p+r)`.
    pub fn mean_loss(&self) -> f64 {
        let bad = self.bad_fraction();
        (1.0 - bad) * self.loss_good + bad * self.loss_bad
    }

    /// The name of the first parameter outside `[0, 1]`, if any.
    pub fn invalid_parameter(&self) -> Option<&'static str> {
        let unit = |x: f64| (0.0..=1.0).contains(&x);
        [
            ("p", self.p),
            ("r", self.r),
            ("loss_bad", self.loss_bad),
            ("loss_good", self.loss_good),
        ]
        .into_iter()
        .find(|(_, v)| !unit(*v))
        .map(|(name, _)| name)
    }
}

/// A running Gilbert-Elliott chain drawing from `R`.
#[derive(Debug, Clone)]
pub struct GilbertElliott<R = SeededRandom> {
    params: GeParams,
    bad: bool,
    draws: R,
}

impl<R: Random> GilbertElliott<R> {
    /// A chain in GOOD.
    pub fn new(params: GeParams, draws: R) -> Self {
        GilbertElliott {
            params,
            bad: false,
            draws,
        }
    }

    /// Whether the chain is in BAD (the state the next packet finds).
    pub fn is_bad(&self) -> bool {
        self.bad
    }

    /// Whether the next packet is lost; advances the chain by one packet.
    pub fn lose(&mut self) -> bool {
        let (switch, loss) = if self.bad {
            (self.params.r, self.params.loss_bad)
        } else {
            (self.params.p, self.params.loss_good)
        };
        if self.draws.uniform01() < switch {
            self.bad = !self.bad;
        }
        self.draws.uniform01() < loss
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::stream;
    use coaplab_base::rng::ScriptedRandom;

    #[test]
    fn transition_applies_from_the_next_packet() {
        let params = GeParams {
            p: 0.5,
            r: 0.5,
            loss_bad: 1.0,
            loss_good: 0.0,
        };
        // Draw pairs (transition, loss) per packet.
        let draws = ScriptedRandom::new(&[0.1, 0.0, 0.9, 0.2, 0.3, 0.99, 0.7, 0.0]);
        let mut chain = GilbertElliott::new(params, draws);
        // 1: finds GOOD, switches (0.1 < p) but GOOD loses nothing even with u = 0.
        assert!(!chain.lose());
        assert!(chain.is_bad());
        // 2: finds BAD, stays (0.9 ≥ r), lost (0.2 < 1-h).
        assert!(chain.lose());
        // 3: finds BAD, switches back (0.3 < r), still lost with BAD's probability (0.99 < 1).
        assert!(chain.lose());
        assert!(!chain.is_bad());
        // 4: finds GOOD again.
        assert!(!chain.lose());
    }

    #[test]
    fn mean_loss_matches_the_stationary_formula() {
        // docs/experiments.md §3 high profile for r = 0.1: p = 0.02581, 1-h = 0.8, 1-k = 0.02 →
        // 18.0 %.
        let params = GeParams {
            p: 0.02581,
            r: 0.1,
            loss_bad: 0.8,
            loss_good: 0.02,
        };
        let expected = (0.1 * 0.02 + 0.02581 * 0.8) / (0.02581 + 0.1);
        assert!((params.mean_loss() - expected).abs() < 1e-15);
        // Bursts of mean 10 packets make samples correlated: the standard error over n = 2·10^6
        // packets is about sqrt(var·(1+2·Σρ)/n) ≈ 1e-3; bound 4e-3.
        let mut chain = GilbertElliott::new(params, stream(11, "ge"));
        let n = 2_000_000;
        let lost = (0..n).filter(|_| chain.lose()).count();
        let rate = lost as f64 / n as f64;
        assert!(
            (rate - expected).abs() < 4e-3,
            "rate {rate}, expected {expected}"
        );
    }

    #[test]
    fn starts_good_and_rejects_bad_parameters() {
        let params = GeParams {
            p: 0.0,
            r: 1.0,
            loss_bad: 1.0,
            loss_good: 0.0,
        };
        let mut chain = GilbertElliott::new(params, stream(1, "ge"));
        assert!((0..1000).all(|_| !chain.lose()));
        assert!(!chain.is_bad());
        let broken = GeParams { r: -0.1, ..params };
        assert_eq!(broken.invalid_parameter(), Some("r"));
    }
}
