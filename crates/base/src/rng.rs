//! Injected randomness (docs/algorithms.md, 'Conventions'): algorithms draw through [`Random`],
//! never from global state.
//!
//! Named random streams: one seeded ChaCha8 stream per purpose and direction. A run has one
//! seed. Each consumer (the uplink loss chain, the downlink jitter, a client's start delay, …)
//! derives its own stream from `(run seed, stream name)`, as ns-3 assigns fixed streams per
//! model: adding a component or drawing more from one stream never shifts another. The
//! derivation is fixed here forever so results reproduce across platforms and versions: FNV-1a
//! 64 of the name's UTF-8 bytes, mixed with the seed by two rounds of splitmix64 ([`stream_seed`]).
//! It is the only splitmix64 and FNV-1a of the workspace: run seeds (lab), stream seeds
//! (netsim) and per-destination seeds (endpoint) all use these.

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

/// FNV-1a 64-bit offset basis.
pub const FNV_OFFSET: u64 = 0xcbf2_9ce4_8422_2325;
/// FNV-1a 64-bit prime.
const FNV_PRIME: u64 = 0x0000_0100_0000_01b3;

/// FNV-1a 64 of `bytes`, continuing from `state` (start with [`FNV_OFFSET`]), so several
/// byte strings can be hashed as one.
pub fn fnv1a(state: u64, bytes: &[u8]) -> u64 {
    bytes.iter().fold(state, |hash, &b| {
        (hash ^ u64::from(b)).wrapping_mul(FNV_PRIME)
    })
}

/// FNV-1a 64 of `bytes` (stable, platform-independent).
pub fn fnv1a64(bytes: &[u8]) -> u64 {
    fnv1a(FNV_OFFSET, bytes)
}

/// One splitmix64 output for state `x` (Steele, Lea, Flood 2014): a bijective 64-bit mixer.
pub fn splitmix64(x: u64) -> u64 {
    let mut z = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// The seed of stream `name` in the run seeded with `run_seed`:
/// `splitmix64(splitmix64(run_seed) ^ fnv1a64(name))`.
pub fn stream_seed(run_seed: u64, name: &str) -> u64 {
    splitmix64(splitmix64(run_seed) ^ fnv1a64(name.as_bytes()))
}

/// The ChaCha8 stream `name` of the run seeded with `run_seed`.
pub fn stream(run_seed: u64, name: &str) -> SeededRandom {
    SeededRandom::new(stream_seed(run_seed, name))
}

/// [`stream_seed`] of the name `{prefix}{index}` (index in decimal), e.g. `cc/flow17`, without
/// building the name: a simulated run derives several such streams per flow, and formatting
/// each name was ~700 instructions (issue 35).
pub fn indexed_stream_seed(run_seed: u64, prefix: &str, index: u32) -> u64 {
    let mut digits = [0u8; 10];
    let mut start = digits.len();
    let mut rest = index;
    loop {
        start -= 1;
        digits[start] = b'0' + (rest % 10) as u8;
        rest /= 10;
        if rest == 0 {
            break;
        }
    }
    let name = fnv1a(fnv1a64(prefix.as_bytes()), &digits[start..]);
    splitmix64(splitmix64(run_seed) ^ name)
}

/// [`stream`] of the name `{prefix}{index}` ([`indexed_stream_seed`]).
pub fn indexed_stream(run_seed: u64, prefix: &str, index: u32) -> SeededRandom {
    SeededRandom::new(indexed_stream_seed(run_seed, prefix, index))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_indexed_stream_is_the_stream_of_the_formatted_name() {
        for i in [0, 1, 9, 10, 99, 100, 12_345, u32::MAX] {
            for prefix in ["cc/flow", "ids/flow", ""] {
                assert_eq!(
                    indexed_stream_seed(42, prefix, i),
                    stream_seed(42, &format!("{prefix}{i}"))
                );
            }
        }
    }

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

    #[test]
    fn fnv1a64_matches_the_reference_vectors() {
        // Vectors from the FNV reference implementation (draft-eastlake-fnv).
        assert_eq!(fnv1a64(b""), 0xcbf2_9ce4_8422_2325);
        assert_eq!(fnv1a64(b"a"), 0xaf63_dc4c_8601_ec8c);
        assert_eq!(fnv1a64(b"foobar"), 0x8594_4171_f739_67e8);
    }

    #[test]
    fn splitmix64_matches_the_reference_sequence() {
        // First outputs of the reference generator seeded with 0 (state advances by the
        // golden-ratio increment before each mix).
        assert_eq!(splitmix64(0), 0xe220_a839_7b1d_cdaf);
        assert_eq!(splitmix64(0x9e37_79b9_7f4a_7c15), 0x6e78_9e6a_a1b9_65f4);
    }

    #[test]
    fn stream_seeds_are_pinned_and_distinct() {
        let a = stream_seed(1, "down/loss-chain");
        let b = stream_seed(1, "up/loss-chain");
        let c = stream_seed(2, "down/loss-chain");
        assert_ne!(a, b);
        assert_ne!(a, c);
        assert_eq!(a, splitmix64(splitmix64(1) ^ fnv1a64(b"down/loss-chain")));
        let mut x = stream(1, "down/loss-chain");
        let mut y = stream(1, "down/loss-chain");
        for _ in 0..10 {
            assert_eq!(x.uniform01(), y.uniform01());
        }
    }
}
