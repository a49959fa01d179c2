//! Algorithms by name: the names users write on the command line and in scenario files.

use std::fmt;
use std::sync::RwLock;

use crate::algorithm::RtoAlgorithm;
use crate::params::{ParamError, Params, Settings};
use crate::time::Instant;

// The record's type lives beside the trait it builds ([`crate::algorithm`]), so the presets
// can read it without importing the registry that reads them.
pub use crate::algorithm::AlgorithmInfo;

/// Every algorithm, in the order of docs/algorithms.md, 'Picking an algorithm'.
pub static ALGORITHMS: &[AlgorithmInfo] = &[
    AlgorithmInfo {
        name: "default",
        summary: "Default CoAP: fresh dithered first timer, binary backoff (RFC 7252)",
        params: &[crate::common::COMMON, crate::default::PARAMS],
        build: crate::default::DefaultCoap::build,
    },
    AlgorithmInfo {
        name: "default-fb1",
        summary: "Default CoAP with Full Backoff 1: the backed-off timer is carried until one \
                  clean exchange (ANRW 2018)",
        params: &[
            crate::common::COMMON,
            crate::default::PARAMS,
            crate::default_fb::CARRY_PARAMS,
        ],
        build: crate::default_fb::DefaultFb::build_fb1,
    },
    AlgorithmInfo {
        name: "default-fb2",
        summary: "Default CoAP with Full Backoff 2: the carried timer halves per clean exchange \
                  (ANRW 2018)",
        params: &[
            crate::common::COMMON,
            crate::default::PARAMS,
            crate::default_fb::CARRY_PARAMS,
            crate::default_fb::RESET_PARAMS,
            crate::default_fb::FB2_PARAMS,
        ],
        build: crate::default_fb::DefaultFb::build_fb2,
    },
    AlgorithmInfo {
        name: "gst",
        summary:
            "GST-CoAP: FB2 with a geometric decrease of the carried timer (Rathod 2022)",
        params: &[
            crate::common::COMMON,
            crate::default::PARAMS,
            crate::default_fb::CARRY_PARAMS,
            crate::default_fb::RESET_PARAMS,
            crate::gst::PARAMS,
        ],
        build: crate::gst::Gst::build,
    },
    // -- CoCoA family (draft-ietf-core-cocoa-03; Rathod 2022 ch. 6) --
    AlgorithmInfo {
        name: "cocoa",
        summary: "CoCoA: strong/weak RFC 6298 estimators, variable backoff, aging \
                  (draft-ietf-core-cocoa-03)",
        params: crate::cocoa::GROUPS,
        build: crate::cocoa::build_cocoa,
    },
    AlgorithmInfo {
        name: "cocoa-strong",
        summary: "CoCoA with strong samples only (weak samples ignored; draft-ietf-core-cocoa-03)",
        params: crate::cocoa::GROUPS,
        build: crate::cocoa::build_cocoa_strong,
    },
    AlgorithmInfo {
        name: "cocoa-fb1",
        summary: "CoCoA with Full Backoff 1: the backed-off timer at the ACK becomes the \
                  undithered next first timer (ANRW 2018)",
        params: crate::cocoa_fb::GROUPS,
        build: crate::cocoa_fb::build_fb1,
    },
    AlgorithmInfo {
        name: "cocoa-fb2",
        summary: "CoCoA with Full Backoff 2: max(backed-off timer, weak-updated RTO) is carried \
                  (ANRW 2018)",
        params: crate::cocoa_fb::GROUPS,
        build: crate::cocoa_fb::build_fb2,
    },
    AlgorithmInfo {
        name: "gsrtc",
        summary: "GSRTC: CoCoA-FB2 with a strong weight growing geometrically over clean \
                  exchanges (Rathod 2022 Algorithm 2)",
        params: crate::gsrtc::GROUPS,
        build: crate::gsrtc::build,
    },
    AlgorithmInfo {
        name: "cocoa++",
        summary: "CoCoA++: CAIA delay-gradient probabilistic backoff factor on the RTO, x1.42 \
                  backoff (Rathod 2022 ch. 6)",
        params: crate::cocoa_pp::GROUPS,
        build: crate::cocoa_pp::build,
    },
    // -- end CoCoA family --
    AlgorithmInfo {
        name: "fasor",
        summary:
            "FASOR: FastRTO, SlowRTO and a three-state backoff (draft-ietf-core-fasor-02)",
        params: &[
            crate::common::COMMON,
            crate::fasor::FASOR,
            crate::fasor::TOKEN_OFF,
        ],
        build: crate::fasor::build,
    },
    AlgorithmInfo {
        name: "fasor-token",
        summary: "FASOR+token: samples from the transmission a response names (Globecom 2018; draft-ietf-core-fasor-02)",
        params: &[
            crate::common::COMMON,
            crate::fasor::FASOR,
            crate::fasor::TOKEN_ON,
        ],
        build: crate::fasor::build_token,
    },
    AlgorithmInfo {
        name: "basic-rto",
        summary: "Californium BasicRTO: rto = 1.5 x last sample, integer ms",
        params: &[
            crate::common::COMMON,
            crate::californium::CF_COMMON,
            crate::basic_rto::BASIC,
        ],
        build: crate::basic_rto::build,
    },
    AlgorithmInfo {
        name: "linux-rto",
        summary: "Californium Linux RTO: per-sample tcp_rtt_estimator, integer ms",
        params: &[
            crate::common::COMMON,
            crate::californium::CF_COMMON,
            crate::californium::CF_BLIND,
            crate::linux_rto::LINUX,
        ],
        build: crate::linux_rto::build,
    },
    AlgorithmInfo {
        name: "peakhopper",
        summary: "Californium Peak-Hopper RTO (Ekström & Ludwig 2004), integer ms",
        params: &[
            crate::common::COMMON,
            crate::californium::CF_COMMON,
            crate::californium::CF_BLIND,
            crate::peak_hopper::PEAK_HOPPER,
        ],
        build: crate::peak_hopper::build,
    },
    AlgorithmInfo {
        name: "eifel",
        summary:
            "CoAP-Eifel (Rathod 2022 ch. 4): Eifel timer with gain 1/3, Karn sampling",
        params: &[crate::common::COMMON, crate::eifel::EIFEL],
        build: crate::eifel::build,
    },
];

/// Algorithms added at start-up by [`register`], after [`ALGORITHMS`].
static REGISTERED: RwLock<Vec<&'static AlgorithmInfo>> = RwLock::new(Vec::new());

/// The most algorithms [`register`] accepts: each registration is kept for the life of the
/// process, so a program registering in a loop fails instead of growing without bound.
pub const MAX_REGISTERED: usize = 256;

/// Why [`register`] refused an algorithm.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RegisterError {
    /// The name is built in or already registered.
    NameTaken(String),
    /// The name is empty or has characters other than `a-z`, `0-9`, `-`, `+`, `_`, `.`.
    BadName(String),
    /// Two parameters of the algorithm have this key.
    DuplicateKey {
        /// The algorithm.
        algorithm: String,
        /// The key.
        key: String,
    },
    /// [`MAX_REGISTERED`] algorithms are registered already.
    Full,
}

impl fmt::Display for RegisterError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RegisterError::NameTaken(n) => write!(f, "algorithm name '{n}' is already taken"),
            RegisterError::BadName(n) => write!(
                f,
                "algorithm name '{n}' must be non-empty and use only a-z, 0-9, '-', '+', '_', '.'"
            ),
            RegisterError::DuplicateKey { algorithm, key } => {
                write!(
                    f,
                    "algorithm '{algorithm}' declares parameter '{key}' twice"
                )
            }
            RegisterError::Full => write!(f, "{MAX_REGISTERED} algorithms are registered already"),
        }
    }
}

impl std::error::Error for RegisterError {}

/// Adds an algorithm defined outside this crate, under `info.name`, for the rest of the
/// process: [`lookup`], [`build`], scenario files, `coaplab trace`, `coaplab run` and the
/// real-socket commands then accept it like a built-in one. Call it at start-up, before
/// anything looks algorithms up (a program that embeds the `coaplab` command registers, then
/// calls `coaplab::main()`; see docs/algorithms.md, "Adding an algorithm").
pub fn register(info: AlgorithmInfo) -> Result<(), RegisterError> {
    let valid = |c: char| c.is_ascii_lowercase() || c.is_ascii_digit() || "-+_.".contains(c);
    if info.name.is_empty() || !info.name.chars().all(valid) {
        return Err(RegisterError::BadName(info.name.to_string()));
    }
    let keys: Vec<&str> = info
        .params
        .iter()
        .flat_map(|g| g.iter())
        .map(|p| p.key)
        .collect();
    if let Some((_, key)) = keys
        .iter()
        .enumerate()
        .find(|(i, k)| keys[..*i].contains(k))
    {
        return Err(RegisterError::DuplicateKey {
            algorithm: info.name.to_string(),
            key: key.to_string(),
        });
    }
    let mut registered = REGISTERED.write().unwrap_or_else(|e| e.into_inner());
    if ALGORITHMS
        .iter()
        .chain(registered.iter().copied())
        .any(|a| a.name == info.name)
    {
        return Err(RegisterError::NameTaken(info.name.to_string()));
    }
    if registered.len() >= MAX_REGISTERED {
        return Err(RegisterError::Full);
    }
    registered.push(Box::leak(Box::new(info)));
    Ok(())
}

/// Every algorithm: the built-in ones ([`ALGORITHMS`]), then those added by [`register`].
pub fn all() -> Vec<&'static AlgorithmInfo> {
    let registered = REGISTERED.read().unwrap_or_else(|e| e.into_inner());
    ALGORITHMS
        .iter()
        .chain(registered.iter().copied())
        .collect()
}

/// Every registered name.
pub fn names() -> Vec<&'static str> {
    all().iter().map(|a| a.name).collect()
}

/// The entry for `name`, or an error listing the valid names.
pub fn lookup(name: &str) -> Result<&'static AlgorithmInfo, ParamError> {
    let registered = || {
        let list = REGISTERED.read().unwrap_or_else(|e| e.into_inner());
        list.iter().copied().find(|a| a.name == name)
    };
    ALGORITHMS
        .iter()
        .find(|a| a.name == name)
        .or_else(registered)
        .ok_or_else(|| ParamError::UnknownAlgorithm {
            name: name.to_string(),
            valid: names(),
        })
}

/// Builds algorithm `name` with `settings` applied over its defaults; `now` is `D.created`.
pub fn build(
    name: &str,
    settings: &Settings,
    now: Instant,
) -> Result<Box<dyn RtoAlgorithm>, ParamError> {
    let (info, params) = resolve(name, settings)?;
    Ok((info.build)(&params, now))
}

/// Resolves the parameters of algorithm `name`: the `preset` named in `settings` (if any) is
/// expanded first, then the other settings override it (docs/algorithms.md, 'Presets',
/// [`crate::presets`]).
pub fn resolve(
    name: &str,
    settings: &Settings,
) -> Result<(&'static AlgorithmInfo, Params), ParamError> {
    let info = lookup(name)?;
    let expanded = crate::presets::expand(info, settings)?;
    let params = Params::resolve(info.name, info.params, &expanded)?;
    Ok((info, params))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::algorithm::Exchange;

    fn info(name: &'static str) -> AlgorithmInfo {
        AlgorithmInfo {
            name,
            ..*lookup("default").unwrap()
        }
    }

    #[test]
    fn registered_algorithms_are_found_after_the_built_in_ones() {
        assert!(matches!(
            lookup("test-extra"),
            Err(ParamError::UnknownAlgorithm { .. })
        ));
        register(info("test-extra")).unwrap();
        assert_eq!(lookup("test-extra").unwrap().name, "test-extra");
        assert_eq!(names().last(), Some(&"test-extra"));
        assert!(build("test-extra", &Settings::new(), Instant::ZERO).is_ok());
        assert_eq!(
            register(info("test-extra")),
            Err(RegisterError::NameTaken("test-extra".into()))
        );
        assert_eq!(
            register(info("fasor")),
            Err(RegisterError::NameTaken("fasor".into()))
        );
        assert_eq!(
            register(info("Bad Name")),
            Err(RegisterError::BadName("Bad Name".into()))
        );
        let twice = AlgorithmInfo {
            params: &[crate::common::COMMON, crate::common::COMMON],
            ..info("test-twice")
        };
        assert_eq!(
            register(twice).unwrap_err().to_string(),
            "algorithm 'test-twice' declares parameter 'ack_random_factor' twice"
        );
    }

    #[test]
    fn an_exchange_holds_an_outside_algorithms_scratch() {
        #[derive(Debug, Clone, Default, PartialEq)]
        struct Mine(u32);
        let mut x = Exchange::new();
        assert_eq!(x.custom_ref::<Mine>(), None);
        x.custom::<Mine>().0 += 2;
        x.custom::<Mine>().0 += 3;
        let copy = x.clone();
        assert_eq!(copy.custom_ref::<Mine>(), Some(&Mine(5)));
        assert_eq!(x.custom::<f64>(), &0.0, "another type replaces the value");
        assert_eq!(x.custom_ref::<Mine>(), None);
    }
}
