//! Per-destination congestion control: the RTO algorithm, its random stream and whether the
//! client marks copies in the token (FASOR+token), built lazily by a caller-supplied factory
//! when the first exchange to a destination starts (spec/algorithms.md §0.1).

use std::net::SocketAddr;

use coaplab_cc::params::Value;
use coaplab_cc::rng::{Random, SeededRandom};
use coaplab_cc::time::Instant;
use coaplab_cc::{registry, ParamError, RtoAlgorithm, Settings};

/// The congestion-control state of one destination.
pub struct Controller {
    /// The algorithm's per-destination state `D`.
    pub algorithm: Box<dyn RtoAlgorithm>,
    /// The random stream its dithering draws from.
    pub rng: Box<dyn Random + Send>,
    /// FASOR+token (spec/algorithms.md §7.6): copy j carries token `base ‖ byte(j)` and a
    /// piggybacked response's echo tells which copy it answers.
    pub token_mode: bool,
}

impl core::fmt::Debug for Controller {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("Controller")
            .field("algorithm", &self.algorithm)
            .field("token_mode", &self.token_mode)
            .finish_non_exhaustive()
    }
}

/// Builds the [`Controller`] of a destination the first time an exchange to it starts;
/// `now` becomes `D.created`.
pub type ControllerFactory = Box<dyn FnMut(SocketAddr, Instant) -> Controller + Send>;

/// A factory for registry algorithm `name` with `settings` (checked once, here), each
/// destination drawing from its own ChaCha stream seeded from `seed` and the destination
/// address, so adding a destination never shifts another's draws.
///
/// `token_mode = token` (the default of `fasor-token`) turns on token marking;
/// `token_mode = rexmit_cnt` is not implemented by the endpoint and is refused.
pub fn registry_factory(
    name: &str,
    settings: &Settings,
    seed: u64,
) -> Result<ControllerFactory, ParamError> {
    let (info, params) = registry::resolve(name, settings)?;
    let token_mode = match params.iter().find(|(k, _)| *k == "token_mode") {
        None | Some((_, Value::Choice("off"))) => false,
        Some((_, Value::Choice("token"))) => true,
        Some((_, other)) => {
            return Err(ParamError::BadValue {
                key: "token_mode".into(),
                value: other.to_string(),
                expected: "off or token (the endpoint does not implement rexmit_cnt)".into(),
            })
        }
    };
    let build = info.build;
    Ok(Box::new(move |dest, now| Controller {
        algorithm: build(&params, now),
        rng: Box::new(SeededRandom::new(destination_seed(seed, dest))),
        token_mode,
    }))
}

/// A stable seed for `dest`'s stream: splitmix64 over the seed and the address bits.
pub fn destination_seed(seed: u64, dest: SocketAddr) -> u64 {
    let addr_bits: u64 = match dest.ip() {
        std::net::IpAddr::V4(v4) => u32::from(v4) as u64,
        std::net::IpAddr::V6(v6) => {
            let b = u128::from(v6);
            (b as u64) ^ ((b >> 64) as u64)
        }
    };
    let mut x = splitmix64(seed ^ splitmix64(addr_bits));
    x = splitmix64(x ^ dest.port() as u64);
    x
}

fn splitmix64(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn registry_factory_reads_token_mode() {
        let s = Settings::new();
        let mut f = registry_factory("fasor-token", &s, 1).unwrap();
        let dest: SocketAddr = "198.18.1.1:5683".parse().unwrap();
        assert!(f(dest, Instant::ZERO).token_mode);
        let mut f = registry_factory("fasor", &s, 1).unwrap();
        assert!(!f(dest, Instant::ZERO).token_mode);
        let mut f = registry_factory("default", &s, 1).unwrap();
        assert!(!f(dest, Instant::ZERO).token_mode);
        let mut rexmit = Settings::new();
        rexmit.set("token_mode", "rexmit_cnt");
        assert!(matches!(
            registry_factory("fasor", &rexmit, 1),
            Err(ParamError::BadValue { .. })
        ));
        assert!(registry_factory("nope", &s, 1).is_err());
    }

    #[test]
    fn destinations_get_distinct_stable_seeds() {
        let a: SocketAddr = "198.18.0.1:40000".parse().unwrap();
        let b: SocketAddr = "198.18.0.2:40000".parse().unwrap();
        assert_ne!(destination_seed(7, a), destination_seed(7, b));
        assert_eq!(destination_seed(7, a), destination_seed(7, a));
        assert_ne!(destination_seed(7, a), destination_seed(8, a));
    }
}
