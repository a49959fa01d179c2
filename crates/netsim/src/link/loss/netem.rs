//! What Linux netem's three loss models share: 32-bit probabilities, 32-bit draws and tc's
//! percentage syntax.
//!
//! Followed: `net/sched/sch_netem.c` of Linux 6.18 (MyWRT/linux-6.18.y at ba2cadd, where the
//! draws come from the qdisc's own seedable `prandom_u32_state`) and iproute2 `tc/q_netem.c`
//! and `tc/tc_util.c` at ee2a4a8 (2026-06). Recent kernels differ from it only in the random
//! source (`prandom_u32()`, then `get_random_u32()`); the first versions of the models
//! (2.6.39 era) were different code: their `loss_gilb_ell()` fell through from GOOD into BAD
//! for lack of a `break`, and their `loss_4state()` branched otherwise. netem compares a uniform `u32` draw with a `u32` probability scaled so that
//! `UINT32_MAX` means 100 %: tc's `set_percent()` stores `rint(fraction · UINT32_MAX)`.
//!
//! The draws come from the run's injected streams, not from netem's `prandom` generator: the
//! models reproduce netem's state sequence for a given `u32` stream, not netem's streams.

use coaplab_base::rng::Random;

/// A netem probability: `value / 2^32` in practice, `u32::MAX` meaning 100 % (tc's scaling).
pub type NetemProb = u32;

/// tc's `set_percent()`: `rint(fraction · UINT32_MAX)` (round half to even, as `rint` in the
/// default rounding mode). `None` outside `[0, 1]` (tc's `parse_percent` refuses those too).
pub fn prob_from_fraction(fraction: f64) -> Option<NetemProb> {
    if !(0.0..=1.0).contains(&fraction) {
        return None;
    }
    Some((fraction * f64::from(u32::MAX)).round_ties_even() as u32)
}

/// tc's `get_percent()` for a number of percent (`2.5` → 2.5 %).
pub fn prob_from_percent(percent: f64) -> Option<NetemProb> {
    prob_from_fraction(percent / 100.0)
}

/// tc's `parse_percent()` syntax: a number of percent, optionally followed by `%`.
pub fn parse_percent(text: &str) -> Option<NetemProb> {
    let number = text.strip_suffix('%').unwrap_or(text);
    prob_from_percent(number.trim().parse::<f64>().ok()?)
}

/// The fraction tc prints for `prob` (`per / UINT32_MAX`).
pub fn fraction_of(prob: NetemProb) -> f64 {
    f64::from(prob) / f64::from(u32::MAX)
}

/// The chance that a uniform `u32` draw is below `threshold` (`threshold / 2^32`), which is
/// what netem's `prandom_u32() < a` comparisons deliver.
pub(super) fn below(threshold: u64) -> f64 {
    threshold as f64 / 4_294_967_296.0
}

/// One uniform `u32` draw from `draws` (netem's `prandom_u32_state`). For the project's
/// [`coaplab_base::rng::SeededRandom`] this is exactly the top 32 bits of the 64-bit word behind
/// its `uniform01` draw (53 bits times 2^32 is exact in `f64`), so it is one draw of the stream.
pub fn draw_u32<R: Random>(draws: &mut R) -> u32 {
    (draws.uniform01() * 4_294_967_296.0) as u32
}

#[cfg(test)]
pub(super) mod script {
    //! A scripted `u32` stream for the netem models' worked examples.
    use coaplab_base::rng::ScriptedRandom;

    /// Plays `words` back as `u32` draws (each `w / 2^32` is exact in `f64`, so
    /// [`super::draw_u32`] returns `w` again).
    pub(crate) fn words(words: &[u32]) -> ScriptedRandom {
        let draws: Vec<f64> = words
            .iter()
            .map(|&w| f64::from(w) / 4_294_967_296.0)
            .collect();
        ScriptedRandom::new(&draws)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::stream;

    #[test]
    fn tc_percent_scaling() {
        // set_percent(): rint(per · UINT32_MAX).
        assert_eq!(prob_from_percent(100.0), Some(u32::MAX));
        assert_eq!(prob_from_percent(0.0), Some(0));
        // 0.5 · 4294967295 = 2147483647.5 → rint → 2147483648 (ties to even).
        assert_eq!(prob_from_percent(50.0), Some(2_147_483_648));
        // 0.1 · 4294967295 = 429496729.5 (to f64 precision) → 429496730 (even).
        assert_eq!(prob_from_percent(10.0), Some(429_496_730));
        assert_eq!(parse_percent("2%"), prob_from_percent(2.0));
        assert_eq!(parse_percent("2"), prob_from_percent(2.0));
        assert_eq!(parse_percent("101"), None);
        assert_eq!(parse_percent("-1"), None);
        assert_eq!(parse_percent("x%"), None);
    }

    #[test]
    fn u32_draws_are_the_top_bits_of_the_stream() {
        use coaplab_base::rng::Random;
        let mut a = stream(3, "x");
        let mut b = stream(3, "x");
        for _ in 0..1000 {
            let word = draw_u32(&mut a);
            let u = b.uniform01();
            assert_eq!(u64::from(word), (u * 4_294_967_296.0).floor() as u64);
        }
        let mut s = script::words(&[0, 1, u32::MAX, 0x8000_0000]);
        let got: Vec<u32> = (0..4).map(|_| draw_u32(&mut s)).collect();
        assert_eq!(got, [0, 1, u32::MAX, 0x8000_0000]);
    }
}
