//! Per-destination congestion control: the RTO algorithm, its random stream and whether the
//! client marks copies in the token (FASOR+token), built lazily by a caller-supplied factory
//! when the first exchange to a destination starts (docs/algorithms.md, 'Conventions').

use std::net::SocketAddr;
use std::sync::Arc;

use coaplab_cc::params::{Params, Value};
use coaplab_cc::rng::{splitmix64, Random, SeededRandom};
use coaplab_cc::time::Instant;
use coaplab_cc::{registry, ParamError, RtoAlgorithm, Settings};

/// The congestion-control state of one destination.
pub struct Controller {
    /// The algorithm's per-destination state `D`.
    pub algorithm: Box<dyn RtoAlgorithm>,
    /// The random stream its dithering draws from.
    pub rng: Box<dyn Random + Send>,
    /// How copies are marked so a response can name the one it answers.
    pub marking: Marking,
}

/// Which transmission a response answers (Globecom 2018; draft-ietf-core-fasor-02), as the
/// algorithm's `token_mode` parameter says.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Marking {
    /// Copies are identical; `answered` is always `None`.
    Off,
    /// FASOR+token: copy j carries token `base ‖ byte(j)`; a piggybacked response's echo
    /// tells which copy it answers.
    Token,
    /// The Rexmit-Cnt option: the first original to a destination probes with 255; if the
    /// piggybacked response echoes it, originals carry it empty and copy j carries j.
    RexmitCnt {
        /// The option number (the draft leaves it TBD; default 65020).
        option: u16,
    },
}

impl core::fmt::Debug for Controller {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("Controller")
            .field("algorithm", &self.algorithm)
            .field("marking", &self.marking)
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
/// `token_mode` (`fasor`, `fasor-token`) chooses the [`Marking`]: `token` (the default of
/// `fasor-token`) or `rexmit_cnt` with the `rexmit_cnt_option` number.
pub fn registry_factory(
    name: &str,
    settings: &Settings,
    seed: u64,
) -> Result<ControllerFactory, ParamError> {
    Ok(ResolvedController::new(name, settings)?.factory(seed))
}

/// Registry algorithm `name` with `settings`, resolved and checked: [`registry_factory`] up
/// to the seed. A caller that builds many endpoints of one algorithm (the simulator, one per
/// flow) resolves it once and makes each endpoint's factory from it, instead of looking the
/// name up and expanding its presets and parameters again for each (issue 35: 5,200
/// instructions per flow, ~1 % of a 100-flow run).
#[derive(Debug, Clone)]
pub struct ResolvedController {
    build: fn(&Params, Instant) -> Box<dyn RtoAlgorithm>,
    params: Arc<Params>,
    marking: Marking,
}

impl ResolvedController {
    /// Resolves `name` with `settings`; the errors are [`registry_factory`]'s.
    pub fn new(name: &str, settings: &Settings) -> Result<ResolvedController, ParamError> {
        let (info, params) = registry::resolve(name, settings)?;
        let param = |key: &str| params.iter().find(|(k, _)| *k == key).map(|(_, v)| v);
        let marking = match param("token_mode") {
            None | Some(Value::Choice("off")) => Marking::Off,
            Some(Value::Choice("token")) => Marking::Token,
            Some(Value::Choice("rexmit_cnt")) => {
                let option = match param("rexmit_cnt_option") {
                    Some(Value::Int(n)) => u16::try_from(n).ok(),
                    _ => Some(65020),
                };
                let option = option.ok_or_else(|| ParamError::BadValue {
                    key: "rexmit_cnt_option".into(),
                    value: format!("{:?}", param("rexmit_cnt_option")),
                    expected: "an option number 0-65535".into(),
                })?;
                Marking::RexmitCnt { option }
            }
            Some(other) => {
                return Err(ParamError::BadValue {
                    key: "token_mode".into(),
                    value: other.to_string(),
                    expected: "off, token or rexmit_cnt".into(),
                })
            }
        };
        Ok(ResolvedController {
            build: info.build,
            params: Arc::new(params),
            marking,
        })
    }

    /// The factory [`registry_factory`] gives for this algorithm and `seed`.
    pub fn factory(&self, seed: u64) -> ControllerFactory {
        let ResolvedController {
            build,
            params,
            marking,
        } = self.clone();
        Box::new(move |dest, now| Controller {
            algorithm: build(&params, now),
            rng: Box::new(SeededRandom::new(destination_seed(seed, dest))),
            marking,
        })
    }
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

#[cfg(test)]
mod tests {
    use super::*;

    /// One resolution makes, for each seed, the controllers `registry_factory` makes: same
    /// algorithm state, same marking, same random draws.
    #[test]
    fn a_resolved_controller_makes_registry_factorys_controllers() {
        let dest: SocketAddr = "198.18.1.1:5683".parse().unwrap();
        let mut s = Settings::new();
        s.set("token_mode", "rexmit_cnt");
        for (name, settings) in [
            ("default", Settings::new()),
            ("cocoa", Settings::new()),
            ("fasor", s),
        ] {
            let resolved = ResolvedController::new(name, &settings).unwrap();
            for seed in [1, 99] {
                let mut a = registry_factory(name, &settings, seed).unwrap()(dest, Instant::ZERO);
                let mut b = resolved.factory(seed)(dest, Instant::ZERO);
                assert_eq!(format!("{:?}", a.algorithm), format!("{:?}", b.algorithm));
                assert_eq!(a.marking, b.marking);
                assert_eq!(a.rng.uniform01().to_bits(), b.rng.uniform01().to_bits());
            }
        }
        assert!(ResolvedController::new("no-such-algorithm", &Settings::new()).is_err());
    }

    #[test]
    fn registry_factory_reads_token_mode() {
        let s = Settings::new();
        let dest: SocketAddr = "198.18.1.1:5683".parse().unwrap();
        let marking = |name: &str, s: &Settings| {
            registry_factory(name, s, 1).unwrap()(dest, Instant::ZERO).marking
        };
        assert_eq!(marking("fasor-token", &s), Marking::Token);
        assert_eq!(marking("fasor", &s), Marking::Off);
        assert_eq!(marking("default", &s), Marking::Off);
        let mut rexmit = Settings::new();
        rexmit.set("token_mode", "rexmit_cnt");
        assert_eq!(
            marking("fasor", &rexmit),
            Marking::RexmitCnt { option: 65020 }
        );
        rexmit.set("rexmit_cnt_option", "65000");
        assert_eq!(
            marking("fasor", &rexmit),
            Marking::RexmitCnt { option: 65000 }
        );
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
