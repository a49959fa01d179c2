//! Java arithmetic, for the Californium-faithful algorithms (docs/algorithms.md, 'Conventions').
//!
//! Californium computes RTOs in integer milliseconds (`long`) with `Math.round` and `(long)`
//! casts. Rust's `f64::round` rounds half away from zero, which differs from Java on negative
//! halves (`Math.round(-2.5) = -2`, Rust gives `-3`), so these helpers spell out Java's rules.
//! Integer division `/` on `i64` already truncates toward zero in both languages.

// Shared helpers: not every algorithm uses every one.
#![allow(dead_code)]

use crate::rng::Random;

/// Java `Math.round(double)`: `floor(x + 0.5)`, so halves round toward +∞
/// (`round(-3.125) = -3`, `round(-2.5) = -2`, `round(2.5) = 3`). Saturates like Java; NaN → 0.
pub(crate) fn round(x: f64) -> i64 {
    // `as` saturates at the i64 bounds and maps NaN to 0, exactly like Java's conversion.
    (x + 0.5).floor() as i64
}

/// Java `(long) x`: truncation toward zero (`trunc(-2.7) = -2`). Saturates like Java; NaN → 0.
pub(crate) fn trunc(x: f64) -> i64 {
    x as i64
}

/// Java `Random.nextInt(bound)`-style draw: a uniform integer in `[0, bound)`, from one
/// injected `uniform01` draw (docs/algorithms.md, 'Conventions'). `bound` ≤ 0 is treated as 1
/// (always 0).
pub(crate) fn next_int(rng: &mut dyn Random, bound: i64) -> i64 {
    rng.below(bound.max(1) as u64) as i64
}

/// A uniform integer in `[lo, hi]`, both inclusive (Californium's `randInt` as used for the
/// dithered first timer, Californium 3.x Cocoa). Returns `lo` when `hi <= lo`.
pub(crate) fn rand_int_inclusive(rng: &mut dyn Random, lo: i64, hi: i64) -> i64 {
    if hi <= lo {
        return lo;
    }
    lo + next_int(rng, hi - lo + 1)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::ConstantRandom;

    #[test]
    fn round_sends_halves_toward_positive_infinity() {
        assert_eq!(round(-3.125), -3);
        assert_eq!(round(-2.75), -3);
        assert_eq!(round(-2.5), -2);
        assert_eq!(round(2.5), 3);
        assert_eq!(round(43.75), 44);
        assert_eq!(round(38.5), 39);
        assert_eq!(round(484.5), 485);
        assert_eq!(round(f64::NAN), 0);
    }

    #[test]
    fn trunc_goes_toward_zero() {
        assert_eq!(trunc(191.7), 191);
        assert_eq!(trunc(-2.7), -2);
        assert_eq!(trunc(f64::INFINITY), i64::MAX);
    }

    #[test]
    fn inclusive_draw_covers_both_ends() {
        assert_eq!(
            rand_int_inclusive(&mut ConstantRandom(0.0), 1150, 1725),
            1150
        );
        assert_eq!(
            rand_int_inclusive(&mut ConstantRandom(0.999_999_999), 1150, 1725),
            1725
        );
        assert_eq!(rand_int_inclusive(&mut ConstantRandom(0.5), 7, 7), 7);
    }
}
