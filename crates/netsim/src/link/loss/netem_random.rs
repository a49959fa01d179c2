//! netem's plain random loss, `loss random PERCENT [CORRELATION]`, as `sch_netem.c`'s
//! `loss_event()` case `CLG_RANDOM` with `get_crandom()` (see [`super::netem`] for the
//! version followed).
//!
//! Per packet: `lost = loss != 0 && loss >= get_crandom()`, one `u32` draw. Note the `>=`:
//! the chance is `(loss + 1) / 2^32` (not `loss / 2^32`), so `100 %` loses every packet.
//!
//! With a correlation `rho`, `get_crandom()` returns a weighted mean of the new draw and the
//! previous *returned* value: `answer = (value · (2^32 − (rho+1)) + last · (rho+1)) >> 32`
//! in 64-bit arithmetic. The first `last` is an independent draw (netem's `init_crandom()`
//! takes it from the kernel's entropy pool, not from the qdisc's seeded generator). This
//! smooths the draws rather than making losses a Markov chain: the marginal loss rate is not
//! `loss` any more (a known property of netem's correlation), which is why the paper profiles
//! use the state models instead.

use coaplab_base::rng::{Random, SeededRandom};

use super::netem::{below, draw_u32, NetemProb};

/// Parameters of `loss random`, in tc's kernel form.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NetemRandomParams {
    /// Loss probability (`loss`; `u32::MAX` = 100 %).
    pub loss: NetemProb,
    /// Correlation with the previous draw (`loss_corr`, `rho`; 0 = independent).
    pub correlation: NetemProb,
}

impl NetemRandomParams {
    /// Long-run fraction of packets lost without correlation, `(loss + 1) / 2^32` (0 when
    /// `loss = 0`). With correlation this is only nominal (see the module doc).
    pub fn mean_loss(&self) -> f64 {
        if self.loss == 0 {
            0.0
        } else {
            below(u64::from(self.loss) + 1)
        }
    }
}

/// A running `loss random` instance drawing `u32`s from `R`.
#[derive(Debug, Clone)]
pub struct NetemRandom<R = SeededRandom> {
    params: NetemRandomParams,
    /// `crndstate.last`: the previous value `get_crandom()` returned.
    last: u32,
    draws: R,
}

impl<R: Random> NetemRandom<R> {
    /// An instance drawing from `draws`; `initial_last` is `init_crandom()`'s first `last`.
    pub fn new(params: NetemRandomParams, initial_last: u32, draws: R) -> Self {
        NetemRandom {
            params,
            last: initial_last,
            draws,
        }
    }

    /// `get_crandom(&q->loss_cor, ...)`: one draw, smoothed by the correlation.
    fn crandom(&mut self) -> u32 {
        let rho = self.params.correlation;
        if rho == 0 {
            return draw_u32(&mut self.draws);
        }
        let value = u64::from(draw_u32(&mut self.draws));
        let rho = u64::from(rho) + 1;
        // At most (2^32 − 1) · 2^32 < 2^64: no overflow, and the shifted result fits a u32.
        let answer = ((value * ((1u64 << 32) - rho) + u64::from(self.last) * rho) >> 32) as u32;
        self.last = answer;
        answer
    }

    /// Whether the next packet is lost (`loss_event()`, case `CLG_RANDOM`). One draw per
    /// packet, none at `loss = 0` (C's `&&` short-circuits before `get_crandom()`).
    pub fn lose(&mut self) -> bool {
        self.params.loss != 0 && self.params.loss >= self.crandom()
    }
}

#[cfg(test)]
mod tests {
    use super::super::netem::{prob_from_percent, script};
    use super::*;
    use crate::rng::stream;

    #[test]
    fn uncorrelated_loss_compares_with_greater_or_equal() {
        // Stepping loss_event(): loss >= rnd. loss = 100 → draws 100 (lost), 101 (kept),
        // 0 (lost), u32::MAX (kept).
        let params = NetemRandomParams {
            loss: 100,
            correlation: 0,
        };
        let mut m = NetemRandom::new(params, 0, script::words(&[100, 101, 0, u32::MAX]));
        let got: Vec<bool> = (0..4).map(|_| m.lose()).collect();
        assert_eq!(got, [true, false, true, false]);
        // loss = 0 short-circuits: no draw at all (the script is empty).
        let none = NetemRandomParams {
            loss: 0,
            correlation: 0,
        };
        let mut m = NetemRandom::new(none, 0, script::words(&[]));
        assert!(!m.lose());
        // 100 % loses even the largest draw.
        let all = NetemRandomParams {
            loss: u32::MAX,
            correlation: 0,
        };
        let mut m = NetemRandom::new(all, 0, script::words(&[u32::MAX]));
        assert!(m.lose());
    }

    #[test]
    fn correlation_is_get_crandoms_weighted_mean() {
        // rho = 2^31 − 1 → rho + 1 = 2^31: answer = (value + last) / 2 (rounded down),
        // computed by hand from get_crandom():
        //   last0 = 1000, value 3000 → (3000·2^31 + 1000·2^31) >> 32 = 2000
        //   last = 2000, value 0    → (0 + 2000·2^31) >> 32 = 1000
        //   last = 1000, value 1001 → (1001 + 1000)/2 = 1000 (floor of 1000.5)
        // loss = 1500: 1500 >= 2000? no; >= 1000 yes; >= 1000 yes.
        let params = NetemRandomParams {
            loss: 1500,
            correlation: (1 << 31) - 1,
        };
        let mut m = NetemRandom::new(params, 1000, script::words(&[3000, 0, 1001]));
        assert!(!m.lose());
        assert_eq!(m.last, 2000);
        assert!(m.lose());
        assert_eq!(m.last, 1000);
        assert!(m.lose());
        assert_eq!(m.last, 1000);
        // rho = u32::MAX → rho + 1 = 2^32: the draw has weight 0, the value never changes.
        let frozen = NetemRandomParams {
            loss: 10,
            correlation: u32::MAX,
        };
        let mut m = NetemRandom::new(frozen, 7, script::words(&[u32::MAX, u32::MAX]));
        assert!(m.lose() && m.lose());
        assert_eq!(m.last, 7);
    }

    #[test]
    fn uncorrelated_long_run_rate() {
        // loss random 2 %: n = 10^6, σ = sqrt(0.02·0.98/n) = 1.4e-4; bound 5σ = 7e-4.
        let params = NetemRandomParams {
            loss: prob_from_percent(2.0).unwrap(),
            correlation: 0,
        };
        let mut m = NetemRandom::new(params, 0, stream(9, "r"));
        let n = 1_000_000;
        let rate = (0..n).filter(|_| m.lose()).count() as f64 / n as f64;
        assert!((rate - params.mean_loss()).abs() < 7e-4, "rate {rate}");
        assert!((params.mean_loss() - 0.02).abs() < 1e-9);
    }
}
