//! netem's Gilbert-Elliott model, `loss gemodel p [r [1-h [1-k]]]`, exactly as
//! `sch_netem.c`'s `loss_gilb_ell()` (see [`super::netem`] for the version followed).
//!
//! Two `u32` draws per packet offered, the state change first:
//!
//! ```c
//! case GOOD_STATE: if (rnd() < a1 /* p */)  state = BAD;
//!                  if (rnd() < a4 /* 1-k */) return true;   break;
//! case BAD_STATE:  if (rnd() < a2 /* r */)  state = GOOD;
//!                  if (rnd() > a3 /* h */)  return true;
//! ```
//!
//! so a packet is lost with the loss probability of the state it *found*; the new state
//! applies from the next packet. The kernel keeps `h` (tc sends `UINT32_MAX − (1-h)`), and BAD
//! loses on `rnd > h`: `(UINT32_MAX − h) / 2^32`, exactly `(1-h) / 2^32`. Start GOOD.
//!
//! [`super::GilbertElliott`] is the same chain in `f64` draws (kept for the existing
//! `gilbert-elliott` error model, whose results must not change); this one is netem's integer
//! arithmetic, bit for bit.

use coaplab_base::rng::{Random, SeededRandom};

use super::netem::{below, draw_u32, fraction_of, prob_from_fraction, NetemProb};

/// Gilbert-Elliott parameters in the kernel's `tc_netem_gemodel` form.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NetemGeParams {
    /// GOOD → BAD per packet (`p`, `a1`).
    pub p: NetemProb,
    /// BAD → GOOD per packet (`r`, `a2`).
    pub r: NetemProb,
    /// `h` as the kernel stores it (`a3`): BAD loses when a draw exceeds it, so the loss
    /// probability in BAD (tc's `1-h`) is `UINT32_MAX − h`.
    pub h: NetemProb,
    /// Loss probability in GOOD (tc's `1-k`, the kernel's `k1`, `a4`).
    pub k1: NetemProb,
}

impl NetemGeParams {
    /// The parameters tc sends for `loss gemodel p r 1-h 1-k`, each a fraction in `[0, 1]`
    /// (`None` if one is outside).
    pub fn from_fractions(p: f64, r: f64, one_minus_h: f64, one_minus_k: f64) -> Option<Self> {
        Some(NetemGeParams {
            p: prob_from_fraction(p)?,
            r: prob_from_fraction(r)?,
            h: u32::MAX - prob_from_fraction(one_minus_h)?,
            k1: prob_from_fraction(one_minus_k)?,
        })
    }

    /// tc's `1-h` (loss probability in BAD) as tc scales it.
    pub fn one_minus_h(&self) -> NetemProb {
        u32::MAX - self.h
    }

    /// The four parameters as the fractions tc prints: `(p, r, 1-h, 1-k)`.
    pub fn fractions(&self) -> (f64, f64, f64, f64) {
        (
            fraction_of(self.p),
            fraction_of(self.r),
            fraction_of(self.one_minus_h()),
            fraction_of(self.k1),
        )
    }

    /// Stationary share of packets that find BAD, `P(G→B) / (P(G→B) + P(B→G))` with the
    /// kernel's exact chances (0 when the chain never moves: it stays GOOD).
    pub fn bad_fraction(&self) -> f64 {
        let (to_bad, to_good) = (below(self.p.into()), below(self.r.into()));
        if to_bad == 0.0 {
            0.0
        } else {
            to_bad / (to_bad + to_good)
        }
    }

    /// Long-run fraction of packets lost, with the kernel's exact per-state chances.
    pub fn mean_loss(&self) -> f64 {
        let bad = self.bad_fraction();
        (1.0 - bad) * below(self.k1.into()) + bad * below(self.one_minus_h().into())
    }
}

/// GOOD or BAD (`GE_state_model`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GeState {
    /// `GOOD_STATE`: loses with `1-k`.
    Good,
    /// `BAD_STATE`: loses with `1-h`.
    Bad,
}

/// A running netem Gilbert-Elliott chain drawing `u32`s from `R`.
#[derive(Debug, Clone)]
pub struct NetemGemodel<R = SeededRandom> {
    params: NetemGeParams,
    state: GeState,
    draws: R,
}

impl<R: Random> NetemGemodel<R> {
    /// A chain in GOOD (`get_loss_clg()` sets `GOOD_STATE`).
    pub fn new(params: NetemGeParams, draws: R) -> Self {
        NetemGemodel {
            params,
            state: GeState::Good,
            draws,
        }
    }

    /// The state the next packet finds.
    pub fn state(&self) -> GeState {
        self.state
    }

    /// Whether the next packet is lost (`loss_gilb_ell()`); two draws.
    pub fn lose(&mut self) -> bool {
        let q = &self.params;
        match self.state {
            GeState::Good => {
                if draw_u32(&mut self.draws) < q.p {
                    self.state = GeState::Bad;
                }
                draw_u32(&mut self.draws) < q.k1
            }
            GeState::Bad => {
                if draw_u32(&mut self.draws) < q.r {
                    self.state = GeState::Good;
                }
                draw_u32(&mut self.draws) > q.h
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::netem::script;
    use super::*;
    use crate::rng::stream;

    #[test]
    fn steps_through_loss_gilb_ell() {
        // p = 1000, r = 2000, h = 3000 (1-h = UINT32_MAX − 3000), 1-k = 500. Each packet takes
        // (transition draw, loss draw); expected values stepped through the C by hand:
        let params = NetemGeParams {
            p: 1000,
            r: 2000,
            h: 3000,
            k1: 500,
        };
        let words = [
            999,
            500, //    GOOD: 999 < p → BAD next; 500 < 1-k? no → kept
            2000,
            3001, //  BAD: 2000 < r? no, stays; 3001 > h → lost
            1999,
            3000, //  BAD: 1999 < r → GOOD next; 3000 > h? no → kept (BAD's chance)
            1000,
            499, //   GOOD: 1000 < p? no; 499 < 1-k → lost (GOOD's chance)
            0,
            u32::MAX, // GOOD: 0 < p → BAD; u32::MAX < 1-k? no → kept
            u32::MAX,
            u32::MAX, // BAD: stays; u32::MAX > h → lost
        ];
        let mut m = NetemGemodel::new(params, script::words(&words));
        let mut got = Vec::new();
        for _ in 0..6 {
            let lost = m.lose();
            got.push((lost, m.state()));
        }
        use GeState::{Bad, Good};
        assert_eq!(
            got,
            [
                (false, Bad),
                (true, Bad),
                (false, Good),
                (true, Good),
                (false, Bad),
                (true, Bad)
            ]
        );
    }

    #[test]
    fn tc_conversion_of_one_minus_h() {
        // tc: gemodel.h = UINT32_MAX − get_percent(1-h); 1-h = 100 % → h = 0 (BAD loses on
        // any draw > 0), 1-h = 0 → h = UINT32_MAX (never).
        let all = NetemGeParams::from_fractions(0.1, 0.2, 1.0, 0.0).unwrap();
        assert_eq!((all.h, all.one_minus_h()), (0, u32::MAX));
        let none = NetemGeParams::from_fractions(0.1, 0.2, 0.0, 0.0).unwrap();
        assert_eq!(none.h, u32::MAX);
        assert_eq!(NetemGeParams::from_fractions(0.1, 1.2, 0.0, 0.0), None);
        let (p, r, bad, good) = all.fractions();
        assert!((p - 0.1).abs() < 1e-9 && (r - 0.2).abs() < 1e-9);
        assert_eq!((bad, good), (1.0, 0.0));
    }

    #[test]
    fn long_run_loss_matches_the_stationary_formula() {
        // The high profile's form for 10-packet bursts: p = 0.025806, r = 0.1, 1-h = 0.8,
        // 1-k = 0.02 → 18 %. Bursts of mean 10 packets correlate the samples: the standard
        // error over n = 2·10^6 packets is about 1e-3; bound 4e-3.
        let params = NetemGeParams::from_fractions(0.1 * 0.16 / 0.62, 0.1, 0.8, 0.02).unwrap();
        assert!((params.mean_loss() - 0.18).abs() < 1e-6);
        let mut m = NetemGemodel::new(params, stream(11, "netem-ge"));
        let n = 2_000_000;
        let rate = (0..n).filter(|_| m.lose()).count() as f64 / n as f64;
        assert!((rate - 0.18).abs() < 4e-3, "rate {rate}");
    }
}
