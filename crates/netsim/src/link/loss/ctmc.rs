//! The time-based two-state Markov loss model (docs/experiments.md §3: the default until issue 12,
//! now `error_model = "ctmc"`; scenarios default to netem's per-packet `gemodel`).
//!
//! The channel alternates between a low-error state and an error burst with exponential
//! sojourns (means `good_mean` and `burst_mean`). The state at time 0 is drawn from the
//! stationary distribution (burst with probability `π_B = burst/(burst+good)`). A packet entering
//! the loss stage at `t` is lost with the loss probability of the state at `t`: one uniform draw
//! per packet, whatever the state, so the draw stream stays aligned across configurations.
//!
//! The trajectory comes from its own stream (`chain`), independent of the per-packet `draws`,
//! so every algorithm compared under one seed faces the same bursts. Queries may arrive slightly
//! out of time order (jitter that reorders before the loss stage): the chain remembers its last
//! [`HISTORY_SEGMENTS`] sojourns to answer them.

use std::collections::VecDeque;

use coaplab_base::rng::{Random, SeededRandom};
use coaplab_base::time::{Duration, Instant};

/// Past sojourns kept for out-of-order queries (each lasts seconds on average, so this covers
/// far more than any jitter).
pub const HISTORY_SEGMENTS: usize = 16;

/// Parameters of the two-state chain.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CtmcParams {
    /// Mean sojourn in the error burst.
    pub burst_mean: Duration,
    /// Mean sojourn in the low-error state.
    pub good_mean: Duration,
    /// Loss probability in the low-error state.
    pub loss_good: f64,
    /// Loss probability in the error burst.
    pub loss_burst: f64,
}

impl CtmcParams {
    /// Profile `medium`: bursts of 1 s at 50 %, low-error periods of 4 s at 0 % (≈10 %).
    pub const MEDIUM: CtmcParams = CtmcParams {
        burst_mean: Duration::from_secs(1),
        good_mean: Duration::from_secs(4),
        loss_good: 0.0,
        loss_burst: 0.5,
    };

    /// Profile `high`: bursts of 1 s at 80 %, low-error periods of 3.875 s at 2 % (≈18 %).
    pub const HIGH: CtmcParams = CtmcParams {
        burst_mean: Duration::from_secs(1),
        good_mean: Duration::from_millis(3_875),
        loss_good: 0.02,
        loss_burst: 0.8,
    };

    /// Stationary probability of the burst state, `burst/(burst+good)`.
    pub fn burst_fraction(&self) -> f64 {
        let b = self.burst_mean.as_secs_f64();
        b / (b + self.good_mean.as_secs_f64())
    }

    /// Long-run loss probability of a packet arriving independently of the chain.
    pub fn mean_loss(&self) -> f64 {
        let pi_b = self.burst_fraction();
        pi_b * self.loss_burst + (1.0 - pi_b) * self.loss_good
    }

    /// The name of the first parameter outside its range, if any.
    pub fn invalid_parameter(&self) -> Option<&'static str> {
        let unit = |x: f64| (0.0..=1.0).contains(&x);
        if self.burst_mean <= Duration::ZERO {
            Some("burst_mean_s")
        } else if self.good_mean <= Duration::ZERO {
            Some("good_mean_s")
        } else if !unit(self.loss_good) {
            Some("loss_good")
        } else if !unit(self.loss_burst) {
            Some("loss_burst")
        } else {
            None
        }
    }
}

/// One sojourn `[start, end)` in one state.
#[derive(Debug, Clone, Copy)]
struct Sojourn {
    start: Instant,
    end: Instant,
    burst: bool,
}

/// A running chain drawing from `R`.
#[derive(Debug, Clone)]
pub struct Ctmc<R = SeededRandom> {
    params: CtmcParams,
    chain: R,
    draws: R,
    current: Sojourn,
    history: VecDeque<Sojourn>,
}

impl<R: Random> Ctmc<R> {
    /// A chain starting at [`Instant::ZERO`] in a stationary state. Draws the initial state and
    /// the first sojourn from `chain` immediately.
    pub fn new(params: CtmcParams, mut chain: R, draws: R) -> Self {
        let burst = chain.uniform01() < params.burst_fraction();
        let end = Instant::ZERO + sojourn(&mut chain, mean(&params, burst));
        Ctmc {
            params,
            chain,
            draws,
            current: Sojourn {
                start: Instant::ZERO,
                end,
                burst,
            },
            history: VecDeque::with_capacity(HISTORY_SEGMENTS),
        }
    }

    /// Whether the channel is in the error burst at `at`.
    pub fn in_burst(&mut self, at: Instant) -> bool {
        while at >= self.current.end {
            if self.history.len() == HISTORY_SEGMENTS {
                self.history.pop_front();
            }
            self.history.push_back(self.current);
            let burst = !self.current.burst;
            let start = self.current.end;
            let end = start + sojourn(&mut self.chain, mean(&self.params, burst));
            self.current = Sojourn { start, end, burst };
        }
        if at >= self.current.start {
            return self.current.burst;
        }
        // Out-of-order query: the most recent remembered sojourn that began at or before `at`,
        // else the oldest remembered one.
        self.history
            .iter()
            .rev()
            .find(|s| s.start <= at)
            .or(self.history.front())
            .map_or(self.current.burst, |s| s.burst)
    }

    /// Whether a packet entering the loss stage at `at` is lost (one draw).
    pub fn lose(&mut self, at: Instant) -> bool {
        let p = if self.in_burst(at) {
            self.params.loss_burst
        } else {
            self.params.loss_good
        };
        self.draws.uniform01() < p
    }
}

fn mean(params: &CtmcParams, burst: bool) -> Duration {
    if burst {
        params.burst_mean
    } else {
        params.good_mean
    }
}

/// An exponential sojourn of the given mean, rounded to the nearest ns and at least 1 ns.
fn sojourn<R: Random>(rng: &mut R, mean: Duration) -> Duration {
    let u = rng.uniform01();
    let nanos = (-(1.0 - u).ln() * mean.as_nanos() as f64).round();
    Duration::from_nanos((nanos as i64).max(1))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::stream;
    use coaplab_base::rng::ScriptedRandom;

    #[test]
    fn scripted_trajectory_switches_at_exact_instants() {
        // Chain draws: initial state (0.1 < π_B = 0.2 → burst), then sojourns with u = 0.5:
        // burst 1 s · ln 2 = 693,147,180.56 ns → 693,147,181; good 4 s · ln 2 → 2,772,588,722.
        let chain = ScriptedRandom::new(&[0.1, 0.5, 0.5, 0.5]);
        let draws = ScriptedRandom::new(&[0.49, 0.49, 0.0, 0.51]);
        let mut c = Ctmc::new(CtmcParams::MEDIUM, chain, draws);
        assert!(c.in_burst(Instant::from_nanos(693_147_180)));
        assert!(!c.in_burst(Instant::from_nanos(693_147_181)));
        assert!(!c.in_burst(Instant::from_nanos(3_465_735_902)));
        assert!(c.in_burst(Instant::from_nanos(3_465_735_903)));
        // Out-of-order queries are answered from history.
        assert!(c.in_burst(Instant::from_nanos(5)));
        assert!(!c.in_burst(Instant::from_nanos(1_000_000_000)));
        // Loss draws: burst at 50 % loses 0.49, good at 0 % keeps even u = 0.
        assert!(c.lose(Instant::from_nanos(0)));
        assert!(!c.lose(Instant::from_nanos(700_000_000)));
    }

    fn long_run_loss(params: CtmcParams, seed: u64) -> f64 {
        // One packet every 100 ms for 10^5 s: 10^6 packets.
        let mut c = Ctmc::new(params, stream(seed, "chain"), stream(seed, "draws"));
        let n = 1_000_000i64;
        let lost = (0..n)
            .filter(|i| c.lose(Instant::from_millis(i * 100)))
            .count();
        lost as f64 / n as f64
    }

    #[test]
    fn medium_profile_loses_ten_percent_over_a_long_run() {
        // Time-average of the burst indicator over T: variance ≈ 2·π_B·π_G·τ/T with
        // τ = 1/(1/b + 1/g) = 0.8 s → σ(loss) ≈ 0.5·sqrt(0.256/10^5) = 8e-4; bound 4e-3 (5σ).
        let rate = long_run_loss(CtmcParams::MEDIUM, 1);
        assert!((rate - 0.10).abs() < 4e-3, "rate {rate}");
    }

    #[test]
    fn high_profile_loses_eighteen_percent_over_a_long_run() {
        // τ = 0.795 s, π_B = 0.205: σ(loss) ≈ 0.78·sqrt(2·0.205·0.795·0.795/10^5) = 1.3e-3;
        // bound 5e-3 (≈4σ).
        let rate = long_run_loss(CtmcParams::HIGH, 1);
        assert!((rate - 0.18).abs() < 5e-3, "rate {rate}");
    }
}
