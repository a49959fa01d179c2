//! Percentiles by linear interpolation between order statistics (Hyndman–Fan type 7, numpy's
//! default; docs/experiments.md §7).

use std::collections::BTreeMap;

/// The quantiles reported in `summary.csv` and the terminal table.
pub const SUMMARY_QUANTILES: [(&str, f64); 8] = [
    ("min", 0.0),
    ("p10", 0.10),
    ("p25", 0.25),
    ("p50", 0.50),
    ("p75", 0.75),
    ("p90", 0.90),
    ("p95", 0.95),
    ("max", 1.0),
];

/// Quantile `p` in `[0, 1]` of `sorted` (ascending, no NaN): with h = (n − 1)p, the value
/// x[⌊h⌋] + (h − ⌊h⌋)(x[⌊h⌋+1] − x[⌊h⌋]) (0-based). `None` for an empty sample.
pub fn quantile_sorted(sorted: &[f64], p: f64) -> Option<f64> {
    type7(sorted.len(), p, |i| sorted[i])
}

/// Quantile `p` of a sample of `n` values whose `i`-th smallest (0-based) is `at(i)`.
fn type7(n: usize, p: f64, at: impl Fn(usize) -> f64) -> Option<f64> {
    if n == 0 {
        return None;
    }
    let h = (n - 1) as f64 * p.clamp(0.0, 1.0);
    let lo = h.floor() as usize;
    let hi = (lo + 1).min(n - 1);
    let x_lo = at(lo);
    if h == lo as f64 {
        // On an order statistic: itself, also when the next one is infinite (a censored
        // value in a bootstrap resample), where 0 · ∞ would give NaN.
        return Some(x_lo);
    }
    let x_hi = at(hi);
    if x_lo == x_hi {
        // Equal neighbours, also two infinite ones, where ∞ − ∞ would give NaN.
        return Some(x_lo);
    }
    Some(x_lo + (h - lo as f64) * (x_hi - x_lo))
}

/// A quantile of a sample that holds censored values (flows that never finished, whose FCT
/// is only known to be at least their elapsed time).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Quantile {
    /// The interpolation reads finished values only: the quantile itself.
    Exact(f64),
    /// The interpolation reads a censored order statistic: the quantile is unbounded above,
    /// and at least this.
    AtLeast(f64),
}

impl Quantile {
    /// The value when it is exact, `None` when unbounded.
    pub fn exact(self) -> Option<f64> {
        match self {
            Quantile::Exact(x) => Some(x),
            Quantile::AtLeast(_) => None,
        }
    }

    /// The lower bound of an unbounded quantile, `None` when exact.
    pub fn at_least(self) -> Option<f64> {
        match self {
            Quantile::Exact(_) => None,
            Quantile::AtLeast(x) => Some(x),
        }
    }

    /// For reading: `12.345` when exact, `>=12.345` when unbounded (`decimals` digits).
    pub fn text(self, decimals: usize) -> String {
        match self {
            Quantile::Exact(x) => format!("{x:.decimals$}"),
            Quantile::AtLeast(x) => format!(">={x:.decimals$}"),
        }
    }
}

/// Quantile `p` (type 7) of a censored sample: `finished` holds the values observed
/// (ascending), `censored` the lower bounds of the values never observed (ascending). A
/// censored value ranks above every finished one, so the order statistics are the finished
/// values, then the censored ones; a censored order statistic is at least its bound and at
/// least the largest finished value. A quantile whose interpolation reads a censored order
/// statistic (with a non-zero weight) is [`Quantile::AtLeast`] the interpolation of those
/// lower bounds. `None` for an empty sample.
pub fn censored_quantile(finished: &[f64], censored: &[f64], p: f64) -> Option<Quantile> {
    let nf = finished.len();
    let n = nf + censored.len();
    let top = finished.last().copied().unwrap_or(f64::NEG_INFINITY);
    let at = |i: usize| {
        if i < nf {
            finished[i]
        } else {
            censored[i - nf].max(top)
        }
    };
    let x = type7(n, p, at)?;
    let h = (n - 1) as f64 * p.clamp(0.0, 1.0);
    let lo = h.floor() as usize;
    let reads_censored = lo >= nf || (h > lo as f64 && lo + 1 >= nf);
    Some(if reads_censored {
        Quantile::AtLeast(x)
    } else {
        Quantile::Exact(x)
    })
}

/// The quantiles of [`SUMMARY_QUANTILES`] of a censored sample ([`censored_quantile`]);
/// both slices ascending. `None` for an empty sample.
pub fn censored_summary(finished: &[f64], censored: &[f64]) -> Option<[Quantile; 8]> {
    let mut out = [Quantile::Exact(0.0); 8];
    for (slot, (_, p)) in out.iter_mut().zip(SUMMARY_QUANTILES) {
        *slot = censored_quantile(finished, censored, p)?;
    }
    Some(out)
}

/// The key of the value with bits `x`, unsigned order of keys = [`f64::total_cmp`] order.
fn total_key(x: u64) -> u64 {
    let bits = x as i64;
    ((bits ^ (((bits >> 63) as u64) >> 1) as i64) as u64) ^ (1 << 63)
}

/// The bits of the value whose key is `key` (inverse of [`total_key`]).
fn from_key(key: u64) -> u64 {
    let bits = (key ^ (1 << 63)) as i64;
    (bits ^ (((bits >> 63) as u64) >> 1) as i64) as u64
}

/// A sample kept as its distinct values and how often each occurs: the same quantiles as the
/// sorted sample (same order statistics, same arithmetic), in memory bounded by the number of
/// distinct values rather than of samples (e.g. retransmissions per flow).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Tally {
    /// Occurrences by [`total_key`] of the value's bits.
    counts: BTreeMap<u64, u64>,
    /// Values held (NaN excluded).
    n: usize,
}

impl Tally {
    /// Adds one value; NaN is dropped, as by [`median`].
    pub fn push(&mut self, x: f64) {
        if !x.is_nan() {
            *self.counts.entry(total_key(x.to_bits())).or_insert(0) += 1;
            self.n += 1;
        }
    }

    /// Values held.
    pub fn len(&self) -> usize {
        self.n
    }

    /// Whether no value is held.
    pub fn is_empty(&self) -> bool {
        self.n == 0
    }

    /// The `i`-th smallest value (0-based, `i < len`).
    fn nth(&self, i: usize) -> f64 {
        let mut seen = 0u64;
        for (&key, &count) in &self.counts {
            seen += count;
            if (i as u64) < seen {
                return f64::from_bits(from_key(key));
            }
        }
        unreachable!("nth({i}) of a tally of {}", self.n)
    }

    /// Quantile `p` (type 7), `None` when empty.
    pub fn quantile(&self, p: f64) -> Option<f64> {
        type7(self.n, p, |i| self.nth(i))
    }

    /// The median (type 7), `None` when empty.
    pub fn median(&self) -> Option<f64> {
        self.quantile(0.5)
    }
}

/// Sorts `values` (NaN dropped) and returns the quantiles of [`SUMMARY_QUANTILES`].
pub fn summary(values: &mut Vec<f64>) -> Option<[f64; 8]> {
    values.retain(|v| !v.is_nan());
    values.sort_by(f64::total_cmp);
    let mut out = [0.0; 8];
    for (slot, (_, p)) in out.iter_mut().zip(SUMMARY_QUANTILES) {
        *slot = quantile_sorted(values, p)?;
    }
    Some(out)
}

/// The median (type 7), `None` for an empty sample. `values` is left in no particular order.
///
/// The two middle order statistics are selected, not sorted for: O(n) instead of a sort,
/// which every flow's record pays once (issue 35: ~5,000 instructions per 50-exchange flow,
/// 1 % of a simulated 100-flow run).
pub fn median(values: &mut Vec<f64>) -> Option<f64> {
    values.retain(|v| !v.is_nan());
    let n = values.len();
    if n == 0 {
        return None;
    }
    let lo = (n - 1) / 2;
    let (_, &mut x_lo, above) = values.select_nth_unstable_by(lo, f64::total_cmp);
    let x_hi = above.iter().copied().min_by(f64::total_cmp).unwrap_or(x_lo);
    type7(n, 0.5, |i| if i == lo { x_lo } else { x_hi })
}

/// Resamples of the bootstrap confidence interval of the median in `summary.csv`.
pub const BOOTSTRAP_RESAMPLES: usize = 1000;

/// Mean and sample standard deviation (n − 1 in the denominator) of `sorted`, summed in
/// ascending order so that the result depends on the sample, not on the order rows came in.
/// `None` for an empty sample; the deviation is `None` for one value.
pub fn mean_sd(sorted: &[f64]) -> Option<(f64, Option<f64>)> {
    if sorted.is_empty() {
        return None;
    }
    let n = sorted.len() as f64;
    let mean = sorted.iter().sum::<f64>() / n;
    let sd = (sorted.len() > 1)
        .then(|| (sorted.iter().map(|x| (x - mean) * (x - mean)).sum::<f64>() / (n - 1.0)).sqrt());
    Some((mean, sd))
}

/// The 95 % percentile-bootstrap confidence interval of the (type-7) median of `sorted`
/// (censored values as +∞ at its top: a resample median that reads one is +∞):
/// `resamples` resamples of n values drawn with replacement from a splitmix64 stream seeded
/// with `seed`, the median of each, and the 2.5 % and 97.5 % type-7 quantiles of those
/// medians. `None` for an empty sample.
///
/// A resample is drawn as indices into the sorted sample and only its one or two middle
/// order statistics are found, by counting the indices drawn (O(n) per resample, no sort).
pub fn bootstrap_median_ci(sorted: &[f64], resamples: usize, seed: u64) -> Option<(f64, f64)> {
    let n = sorted.len();
    if n == 0 || resamples == 0 {
        return None;
    }
    let mut state = seed;
    let mut counts = vec![0u32; n];
    let mut medians = Vec::with_capacity(resamples);
    // Type-7 median: h = (n − 1) / 2; the order statistics ⌊h⌋ and ⌈h⌉ (0-based).
    let (lo_rank, hi_rank) = ((n - 1) / 2, n / 2);
    for _ in 0..resamples {
        counts.iter_mut().for_each(|c| *c = 0);
        for _ in 0..n {
            state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
            let r = crate::seed::splitmix64(state);
            // Lemire's multiply-shift: uniform in [0, n) up to a bias below n / 2^64.
            let i = ((u128::from(r) * n as u128) >> 64) as usize;
            counts[i] += 1;
        }
        let (mut lo, mut hi) = (None, None);
        let mut seen = 0usize;
        for (i, &c) in counts.iter().enumerate() {
            seen += c as usize;
            if lo.is_none() && seen > lo_rank {
                lo = Some(sorted[i]);
            }
            if seen > hi_rank {
                hi = Some(sorted[i]);
                break;
            }
        }
        let (lo, hi) = (lo?, hi?);
        // `lo == hi` also for two infinite (censored) values, whose difference is NaN.
        medians.push(if lo_rank == hi_rank || lo == hi {
            lo
        } else {
            lo + 0.5 * (hi - lo)
        });
    }
    medians.sort_by(f64::total_cmp);
    Some((
        quantile_sorted(&medians, 0.025)?,
        quantile_sorted(&medians, 0.975)?,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mean_and_sample_sd() {
        let (m, sd) = mean_sd(&[2.0, 4.0, 4.0, 4.0, 5.0, 5.0, 7.0, 9.0]).unwrap();
        assert_eq!(m, 5.0);
        // Sum of squares 32 over n − 1 = 7.
        assert_eq!(sd, Some((32.0f64 / 7.0).sqrt()));
        assert_eq!(mean_sd(&[3.0]), Some((3.0, None)));
        assert_eq!(mean_sd(&[]), None);
    }

    #[test]
    fn bootstrap_ci_of_the_median_is_seeded_and_brackets_the_median() {
        let x: Vec<f64> = (0..101).map(f64::from).collect();
        let ci = bootstrap_median_ci(&x, BOOTSTRAP_RESAMPLES, 7).unwrap();
        assert_eq!(ci, bootstrap_median_ci(&x, BOOTSTRAP_RESAMPLES, 7).unwrap());
        assert_ne!(ci, bootstrap_median_ci(&x, BOOTSTRAP_RESAMPLES, 8).unwrap());
        // The median of a resample of 0..=100 has standard error about 1.2533 * 29.2 / 10
        // ≈ 3.7, so the 95 % interval is about 50 ± 7: bounded loosely here.
        assert!(ci.0 < 50.0 && ci.0 > 38.0, "{ci:?}");
        assert!(ci.1 > 50.0 && ci.1 < 62.0, "{ci:?}");
        // Every resample of one value is that value; of two, medians are 1, 1.5 or 2.
        assert_eq!(bootstrap_median_ci(&[4.0], 100, 1), Some((4.0, 4.0)));
        assert_eq!(bootstrap_median_ci(&[1.0, 2.0], 1000, 1), Some((1.0, 2.0)));
        assert_eq!(bootstrap_median_ci(&[], 100, 1), None);
    }

    // Expected values computed by hand with numpy's type-7 rule, e.g. for
    // x = [1, 2, 4, 8, 16, 32, 64] (n = 7) and p = 0.1: h = 0.6, 1 + 0.6 * (2 - 1) = 1.6;
    // p = 0.95: h = 5.7, 32 + 0.7 * 32 = 54.4 (np.percentile(x, 95) = 54.4).
    #[test]
    fn type7_matches_numpy() {
        let x = [1.0, 2.0, 4.0, 8.0, 16.0, 32.0, 64.0];
        let q = |p| quantile_sorted(&x, p).unwrap();
        assert_eq!(q(0.0), 1.0);
        assert!((q(0.10) - 1.6).abs() < 1e-12);
        assert!((q(0.25) - 3.0).abs() < 1e-12); // h = 1.5: 2 + 0.5 * 2
        assert_eq!(q(0.50), 8.0); // h = 3
        assert!((q(0.75) - 24.0).abs() < 1e-12); // h = 4.5: 16 + 0.5 * 16
        assert!((q(0.90) - 44.8).abs() < 1e-12); // h = 5.4: 32 + 0.4 * 32
        assert!((q(0.95) - 54.4).abs() < 1e-12);
        assert_eq!(q(1.0), 64.0);
    }

    #[test]
    fn with_twenty_samples_the_median_is_the_mean_of_the_10th_and_11th() {
        let mut x: Vec<f64> = (1..=20).rev().map(f64::from).collect();
        assert_eq!(median(&mut x), Some(10.5));
        // np.percentile(range(1, 21), [10, 25, 75, 90, 95]) = 2.9, 5.75, 15.25, 18.1, 19.05
        let s = summary(&mut x).unwrap();
        let expected = [1.0, 2.9, 5.75, 10.5, 15.25, 18.1, 19.05, 20.0];
        for (got, want) in s.iter().zip(expected) {
            assert!((got - want).abs() < 1e-12, "{got} vs {want}");
        }
    }

    /// Eight finished values and two censored ones (bounds 100 and 50): order statistics
    /// 1..8, then max(50, 8) = 50 and 100 (n = 10, h = 9p).
    #[test]
    fn censored_values_rank_last_and_make_their_quantiles_unbounded() {
        let finished = [1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0];
        let q = |p| censored_quantile(&finished, &[50.0, 100.0], p).unwrap();
        let near = |a: f64, b: f64| (a - b).abs() < 1e-9;
        assert_eq!(q(0.0), Quantile::Exact(1.0));
        assert!(matches!(q(0.10), Quantile::Exact(x) if near(x, 1.9)));
        assert!(matches!(q(0.25), Quantile::Exact(x) if near(x, 3.25)));
        assert_eq!(q(0.50), Quantile::Exact(5.5)); // h = 4.5
        assert_eq!(q(0.75), Quantile::Exact(7.75)); // h = 6.75
                                                    // h = 8.1: the 9th value is censored: at least 50 + 0.1 · (100 − 50).
        assert!(matches!(q(0.90), Quantile::AtLeast(x) if near(x, 55.0)));
        assert!(matches!(q(0.95), Quantile::AtLeast(x) if near(x, 77.5)));
        assert_eq!(q(1.0), Quantile::AtLeast(100.0));
        // Without censored values: the uncensored quantile, exact.
        let plain = censored_summary(&finished, &[]).unwrap();
        for (c, (_, p)) in plain.iter().zip(SUMMARY_QUANTILES) {
            assert_eq!(*c, Quantile::Exact(quantile_sorted(&finished, p).unwrap()));
        }
        assert_eq!(censored_quantile(&[], &[], 0.5), None);
    }

    /// An interpolation between the largest finished value and a censored one is unbounded,
    /// one landing exactly on a finished value is not; a censored bound below the largest
    /// finished value counts as that value.
    #[test]
    fn a_quantile_touching_a_censored_value_is_unbounded() {
        let q = |p| censored_quantile(&[1.0, 2.0, 3.0], &[0.5], p).unwrap();
        assert_eq!(q(0.5), Quantile::Exact(2.5)); // h = 1.5
        assert_eq!(q(2.0 / 3.0), Quantile::Exact(3.0)); // h = 2: the 3rd value itself
        assert_eq!(q(0.75), Quantile::AtLeast(3.0)); // h = 2.25: reads the censored 4th
                                                     // More than half unfinished: the median is unbounded.
        let m = censored_quantile(&[10.0], &[5.0, 20.0], 0.5).unwrap();
        assert_eq!(m, Quantile::AtLeast(10.0));
        assert_eq!(m.text(1), ">=10.0");
        assert_eq!((m.exact(), m.at_least()), (None, Some(10.0)));
        // Nothing finished: every quantile unbounded, bounded below by the elapsed times.
        let all = censored_summary(&[], &[7.0, 9.0]).unwrap();
        assert_eq!(all[0], Quantile::AtLeast(7.0));
        assert_eq!(all[3], Quantile::AtLeast(8.0));
        assert_eq!(all[7], Quantile::AtLeast(9.0));
    }

    /// A censored value enters the bootstrap as +∞: a resample median reading it is +∞, so
    /// with half the sample censored the interval's upper end is +∞ (unbounded), not NaN.
    #[test]
    fn the_bootstrap_interval_of_a_censored_median_is_unbounded_above() {
        let x = [1.0, 2.0, f64::INFINITY, f64::INFINITY];
        let (lo, hi) = bootstrap_median_ci(&x, BOOTSTRAP_RESAMPLES, 3).unwrap();
        assert!(lo.is_finite() && lo >= 1.0, "{lo}");
        assert_eq!(hi, f64::INFINITY);
        assert_eq!(quantile_sorted(&[1.0, f64::INFINITY], 0.0), Some(1.0));
    }

    #[test]
    fn small_and_empty_samples() {
        assert_eq!(quantile_sorted(&[], 0.5), None);
        assert_eq!(quantile_sorted(&[3.0], 0.9), Some(3.0));
        let mut v = vec![2.0, f64::NAN, 1.0];
        assert_eq!(median(&mut v), Some(1.5));
        assert_eq!(Tally::default().median(), None);
    }

    /// The selection gives, bit for bit, the median of the sorted sample: odd and even sizes,
    /// ties, signed zeros, infinities, NaN dropped.
    #[test]
    fn median_by_selection_is_the_sorted_samples() {
        let mut state = 7u64;
        let mut draw = || {
            state = state
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            state >> 33
        };
        let pool = [
            0.0,
            -0.0,
            1.0,
            2.5,
            2.5,
            -3.0,
            f64::INFINITY,
            f64::NEG_INFINITY,
            f64::NAN,
        ];
        for n in 0..40 {
            for _ in 0..25 {
                let sample: Vec<f64> = (0..n)
                    .map(|_| match draw() % 3 {
                        0 => pool[(draw() % pool.len() as u64) as usize],
                        _ => (draw() % 1000) as f64 / 7.0,
                    })
                    .collect();
                let mut sorted: Vec<f64> = sample.iter().copied().filter(|v| !v.is_nan()).collect();
                sorted.sort_by(f64::total_cmp);
                let want = quantile_sorted(&sorted, 0.5);
                let got = median(&mut sample.clone());
                assert_eq!(got.map(f64::to_bits), want.map(f64::to_bits), "{sample:?}");
            }
        }
    }

    #[test]
    fn a_tally_has_the_quantiles_of_the_sorted_sample() {
        let values = [
            3.0,
            0.0,
            -0.0,
            1.0,
            3.0,
            f64::NAN,
            -2.5,
            1.0,
            1e300,
            3.0,
            0.1 + 0.2,
            7.0,
            f64::INFINITY,
            0.0,
            -f64::INFINITY,
        ];
        for n in 0..=values.len() {
            let mut tally = Tally::default();
            values[..n].iter().for_each(|&x| tally.push(x));
            let mut sorted = values[..n].to_vec();
            sorted.retain(|v| !v.is_nan());
            sorted.sort_by(f64::total_cmp);
            assert_eq!(tally.len(), sorted.len());
            for p in [0.0, 0.1, 0.25, 0.5, 0.75, 0.9, 0.95, 1.0] {
                let (a, b) = (tally.quantile(p), quantile_sorted(&sorted, p));
                assert_eq!(a.map(f64::to_bits), b.map(f64::to_bits), "n = {n}, p = {p}");
            }
        }
    }
}
