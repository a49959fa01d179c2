//! netem's 4-state Markov model (Salsano et al.'s "GI" model), `loss state p13 [p31 [p32
//! [p23 [p14]]]]`, exactly as `sch_netem.c`'s `loss_4state()` (see [`super::netem`] for the
//! version followed).
//!
//! States: 1 = packet sent in a gap period, 2 = sent in a burst, 3 = lost in a burst,
//! 4 = isolated loss in a gap. One `u32` draw `rnd` per packet offered; the state the chain
//! moves to is the fate of *this* packet (lost when it moves to 3 or 4):
//!
//! ```c
//! case 1: if (rnd < a4 /* p14 */) { state = 4; lost }
//!         else if (rnd < a1 + a4 /* p13 + p14, u32 wrapping */) { state = 3; lost }
//!         else state = 1;
//! case 2: if (rnd < a5 /* p23 */) { state = 3; lost } else state = 2;
//! case 3: if (rnd < a3 /* p32 */) state = 2;
//!         else if (rnd < a2 + a3 /* p31 + p32 */) state = 1;
//!         else { state = 3; lost }
//! case 4: state = 1;   /* the draw is still taken */
//! ```
//!
//! A burst period (states 2, 3) is entered through a loss and left only from 3.

use coaplab_base::rng::{Random, SeededRandom};

use super::netem::{below, draw_u32, fraction_of, NetemProb};

/// 4-state parameters in the kernel's `tc_netem_gimodel` form.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NetemStateParams {
    /// Gap → burst: 1 → 3 (`a1`).
    pub p13: NetemProb,
    /// Burst → gap: 3 → 1 (`a2`).
    pub p31: NetemProb,
    /// Lost → sent within a burst: 3 → 2 (`a3`).
    pub p32: NetemProb,
    /// Sent → lost within a burst: 2 → 3 (`a5`).
    pub p23: NetemProb,
    /// Isolated loss in a gap: 1 → 4 (`a4`).
    pub p14: NetemProb,
}

impl NetemStateParams {
    /// tc's defaults for `loss state p13` alone: `p31 = 1 − p13`, `p32 = 0`, `p23 = 100 %`,
    /// `p14 = 0` (set before the optional values are read).
    pub fn tc_defaults(p13: NetemProb) -> Self {
        NetemStateParams {
            p13,
            // set_percent(1 − p13): the same rint of the complementary fraction.
            p31: super::netem::prob_from_fraction(1.0 - fraction_of(p13)).unwrap_or(0),
            p32: 0,
            p23: u32::MAX,
            p14: 0,
        }
    }

    /// The name of the first parameter whose sum with its sibling exceeds 100 % (`p13 + p14`
    /// or `p31 + p32`): the kernel's `u32` sums would wrap and break the chain.
    pub fn invalid_parameter(&self) -> Option<&'static str> {
        if u64::from(self.p13) + u64::from(self.p14) > u64::from(u32::MAX) {
            Some("p14")
        } else if u64::from(self.p31) + u64::from(self.p32) > u64::from(u32::MAX) {
            Some("p32")
        } else {
            None
        }
    }

    /// Long-run fraction of packets lost, from the stationary distribution with the kernel's
    /// exact chances. Balance gives, relative to state 1: `π4 = p14`, `π3 = p13/p31`,
    /// `π2 = π3 · p32/p23`. Chains that never leave a state set are solved for where they end.
    pub fn mean_loss(&self) -> f64 {
        let a = below(self.p13.into());
        let b = below(u64::from(self.p31));
        let c = below(self.p32.into());
        let d = below(self.p23.into());
        let e = below(self.p14.into());
        // Within a burst: share of lost packets (c = 0: stuck in 3; d = 0: stuck in 2).
        let burst_loss = if c == 0.0 {
            1.0
        } else if d == 0.0 {
            0.0
        } else {
            d / (c + d)
        };
        if a == 0.0 {
            return e / (1.0 + e); // never leaves the gap
        }
        if b == 0.0 {
            return burst_loss; // never leaves the burst
        }
        if c > 0.0 && d == 0.0 {
            return 0.0; // ends in state 2
        }
        let w3 = a / b;
        let w2 = if c == 0.0 { 0.0 } else { w3 * c / d };
        (w3 + e) / (1.0 + e + w3 + w2)
    }
}

/// The four states of `_4_state_model`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GiState {
    /// 1, `TX_IN_GAP_PERIOD`.
    TxInGap,
    /// 2, `TX_IN_BURST_PERIOD`.
    TxInBurst,
    /// 3, `LOST_IN_BURST_PERIOD`.
    LostInBurst,
    /// 4, `LOST_IN_GAP_PERIOD`.
    LostInGap,
}

/// A running netem 4-state chain drawing `u32`s from `R`.
#[derive(Debug, Clone)]
pub struct NetemState<R = SeededRandom> {
    params: NetemStateParams,
    state: GiState,
    draws: R,
}

impl<R: Random> NetemState<R> {
    /// A chain in state 1 (`get_loss_clg()` sets `TX_IN_GAP_PERIOD`).
    pub fn new(params: NetemStateParams, draws: R) -> Self {
        NetemState {
            params,
            state: GiState::TxInGap,
            draws,
        }
    }

    /// The state of the last packet (state 1 before the first).
    pub fn state(&self) -> GiState {
        self.state
    }

    /// Whether the next packet is lost (`loss_4state()`); one draw.
    pub fn lose(&mut self) -> bool {
        let q = &self.params;
        let rnd = draw_u32(&mut self.draws);
        let (next, lost) = match self.state {
            GiState::TxInGap => {
                if rnd < q.p14 {
                    (GiState::LostInGap, true)
                } else if rnd < q.p13.wrapping_add(q.p14) {
                    (GiState::LostInBurst, true)
                } else {
                    (GiState::TxInGap, false)
                }
            }
            GiState::TxInBurst => {
                if rnd < q.p23 {
                    (GiState::LostInBurst, true)
                } else {
                    (GiState::TxInBurst, false)
                }
            }
            GiState::LostInBurst => {
                if rnd < q.p32 {
                    (GiState::TxInBurst, false)
                } else if rnd < q.p31.wrapping_add(q.p32) {
                    (GiState::TxInGap, false)
                } else {
                    (GiState::LostInBurst, true)
                }
            }
            GiState::LostInGap => (GiState::TxInGap, false),
        };
        self.state = next;
        lost
    }
}

#[cfg(test)]
mod tests {
    use super::super::netem::{prob_from_fraction, script};
    use super::*;
    use crate::rng::stream;

    #[test]
    fn steps_through_loss_4state() {
        // p13 = 100, p31 = 200, p32 = 300, p23 = 400, p14 = 50. Expected values stepped
        // through loss_4state() by hand, one draw per packet:
        let params = NetemStateParams {
            p13: 100,
            p31: 200,
            p32: 300,
            p23: 400,
            p14: 50,
        };
        use GiState::*;
        let steps: [(u32, bool, GiState); 10] = [
            (49, true, LostInGap),    // 1: 49 < p14 → 4, lost
            (0, false, TxInGap),      // 4: → 1 whatever the draw
            (50, true, LostInBurst),  // 1: 50 ≥ p14, 50 < p13 + p14 = 150 → 3, lost
            (500, true, LostInBurst), // 3: 500 ≥ p31 + p32 = 500 → stays 3, lost
            (299, false, TxInBurst),  // 3: 299 < p32 → 2, sent
            (400, false, TxInBurst),  // 2: 400 ≥ p23 → stays 2, sent
            (399, true, LostInBurst), // 2: 399 < p23 → 3, lost
            (300, false, TxInGap),    // 3: 300 ≥ p32, 300 < 500 → 1, sent
            (150, false, TxInGap),    // 1: 150 ≥ 150 → stays 1, sent
            (149, true, LostInBurst), // 1: 149 < 150 → 3, lost
        ];
        let words: Vec<u32> = steps.iter().map(|s| s.0).collect();
        let mut m = NetemState::new(params, script::words(&words));
        for (i, &(_, lost, state)) in steps.iter().enumerate() {
            assert_eq!((m.lose(), m.state()), (lost, state), "packet {}", i + 1);
        }
    }

    #[test]
    fn sums_wrap_as_in_the_kernel_and_are_refused() {
        // p13 + p14 wraps in u32: a1 + a4 = 2^32 + 9 → 9, so a draw of 20 stays in gap.
        let params = NetemStateParams {
            p13: u32::MAX,
            p31: 0,
            p32: 0,
            p23: 0,
            p14: 10,
        };
        let mut m = NetemState::new(params, script::words(&[20]));
        assert!(!m.lose());
        assert_eq!(m.state(), GiState::TxInGap);
        assert_eq!(params.invalid_parameter(), Some("p14"));
        let tc = NetemStateParams::tc_defaults(prob_from_fraction(0.25).unwrap());
        assert_eq!((tc.p32, tc.p23, tc.p14), (0, u32::MAX, 0));
        assert_eq!(tc.invalid_parameter(), None);
    }

    #[test]
    fn long_run_loss_matches_the_stationary_formula() {
        // The medium profile's 4-state form for 10-packet bursts (docs/scenarios.md):
        // p13 = 2.5 %, p31 = 20 %, p32 = p23 = 50 %, p14 = 0 → π3 = 0.125/1.25 = 10 %.
        let f = |x: f64| prob_from_fraction(x).unwrap();
        let params = NetemStateParams {
            p13: f(0.025),
            p31: f(0.2),
            p32: f(0.5),
            p23: f(0.5),
            p14: 0,
        };
        assert!((params.mean_loss() - 0.10).abs() < 1e-6);
        // Bursts of 10 packets: the standard error over 2·10^6 packets is about 1e-3.
        let mut m = NetemState::new(params, stream(12, "netem-state"));
        let n = 2_000_000;
        let rate = (0..n).filter(|_| m.lose()).count() as f64 / n as f64;
        assert!((rate - 0.10).abs() < 4e-3, "rate {rate}");
    }
}
