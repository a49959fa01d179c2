//! Injected randomness (docs/algorithms.md, 'Conventions'): algorithms draw through [`Random`],
//! never from global state.

/// A source of uniform draws. One draw of [`Random::uniform01`] per dithered first timer.
pub trait Random {
    /// A uniform draw `u` in `[0, 1)`.
    fn uniform01(&mut self) -> f64;

    /// A uniform integer in `[0, n)` (`n` ≥ 1), for integer-arithmetic reference behaviours
    /// (Californium's `randInt`, Contiki ticks). Consumes exactly one `uniform01` draw.
    fn below(&mut self, n: u64) -> u64 {
        let n = n.max(1);
        ((self.uniform01() * n as f64) as u64).min(n - 1)
    }
}

/// A seeded ChaCha8 stream: the generator of every simulated and real run.
#[derive(Debug, Clone)]
pub struct SeededRandom {
    inner: rand_chacha::ChaCha8Rng,
}

impl SeededRandom {
    /// A stream fixed by `seed`.
    pub fn new(seed: u64) -> Self {
        use rand_core::SeedableRng;
        SeededRandom {
            inner: rand_chacha::ChaCha8Rng::seed_from_u64(seed),
        }
    }
}

impl Random for SeededRandom {
    fn uniform01(&mut self) -> f64 {
        use rand_core::RngCore;
        // 53 random mantissa bits: every value is a multiple of 2^-53 in [0, 1).
        (self.inner.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }
}

/// Plays back a fixed list of draws, for worked examples ("u = 0.4"). Panics when the script
/// runs out, so a test notices an unexpected extra draw.
#[derive(Debug, Clone, Default)]
pub struct ScriptedRandom {
    draws: Vec<f64>,
    next: usize,
}

impl ScriptedRandom {
    /// Draws returned in order.
    pub fn new(draws: &[f64]) -> Self {
        ScriptedRandom {
            draws: draws.to_vec(),
            next: 0,
        }
    }

    /// The same draw forever (e.g. `u = 0` for "undithered" examples).
    pub fn constant(u: f64) -> ConstantRandom {
        ConstantRandom(u)
    }

    /// Draws consumed so far.
    pub fn consumed(&self) -> usize {
        self.next
    }
}

impl Random for ScriptedRandom {
    fn uniform01(&mut self) -> f64 {
        let u = *self
            .draws
            .get(self.next)
            .unwrap_or_else(|| panic!("ScriptedRandom: draw #{} was not scripted", self.next + 1));
        self.next += 1;
        u
    }
}

/// Returns the same draw every time.
#[derive(Debug, Clone, Copy)]
pub struct ConstantRandom(pub f64);

impl Random for ConstantRandom {
    fn uniform01(&mut self) -> f64 {
        self.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seeded_stream_is_reproducible_and_in_range() {
        let mut a = SeededRandom::new(7);
        let mut b = SeededRandom::new(7);
        for _ in 0..1000 {
            let u = a.uniform01();
            assert_eq!(u, b.uniform01());
            assert!((0.0..1.0).contains(&u));
        }
    }

    #[test]
    fn below_maps_draws_onto_integers() {
        assert_eq!(ConstantRandom(0.0).below(193), 0);
        assert_eq!(ConstantRandom(0.999_999_999).below(193), 192);
        assert_eq!(ConstantRandom(0.5).below(1), 0);
    }
}
