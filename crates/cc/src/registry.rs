//! Algorithms by name: the names users write on the command line and in scenario files.

use crate::algorithm::RtoAlgorithm;
use crate::params::{ParamError, ParamSpec, Params, Settings};
use crate::time::Instant;

/// One registered algorithm.
#[derive(Debug, Clone, Copy)]
pub struct AlgorithmInfo {
    /// The name users write, e.g. `cocoa-fb1`.
    pub name: &'static str,
    /// One line for `--help` listings, naming the source.
    pub summary: &'static str,
    /// Parameter groups (common ones first); every key is unique across the groups.
    pub params: &'static [&'static [ParamSpec]],
    /// Builds the per-destination state from resolved parameters; `now` is `D.created`.
    pub build: fn(&Params, Instant) -> Box<dyn RtoAlgorithm>,
}

/// Every algorithm, in the order of spec/algorithms.md.
pub static ALGORITHMS: &[AlgorithmInfo] = &[
    AlgorithmInfo {
        name: "default",
        summary: "Default CoAP: fresh dithered first timer, binary backoff (RFC 7252; spec §1)",
        params: &[crate::common::COMMON, crate::default::PARAMS],
        build: crate::default::DefaultCoap::build,
    },
    AlgorithmInfo {
        name: "default-fb1",
        summary: "Default CoAP with Full Backoff 1: the backed-off timer is carried until one \
                  clean exchange (ANRW 2018; spec §2)",
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
                  (ANRW 2018; spec §2)",
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
            "GST-CoAP: FB2 with a geometric decrease of the carried timer (Rathod 2022; spec §3)",
        params: &[
            crate::common::COMMON,
            crate::default::PARAMS,
            crate::default_fb::CARRY_PARAMS,
            crate::default_fb::RESET_PARAMS,
            crate::gst::PARAMS,
        ],
        build: crate::gst::Gst::build,
    },
    // -- CoCoA family (spec §4-6, §10) --
    AlgorithmInfo {
        name: "cocoa",
        summary: "CoCoA: strong/weak RFC 6298 estimators, variable backoff, aging \
                  (draft-ietf-core-cocoa-03; spec §4)",
        params: crate::cocoa::GROUPS,
        build: crate::cocoa::build_cocoa,
    },
    AlgorithmInfo {
        name: "cocoa-strong",
        summary: "CoCoA with strong samples only (weak samples ignored; spec §4.4)",
        params: crate::cocoa::GROUPS,
        build: crate::cocoa::build_cocoa_strong,
    },
    AlgorithmInfo {
        name: "cocoa-fb1",
        summary: "CoCoA with Full Backoff 1: the backed-off timer at the ACK becomes the \
                  undithered next first timer (ANRW 2018; spec §5)",
        params: crate::cocoa_fb::GROUPS,
        build: crate::cocoa_fb::build_fb1,
    },
    AlgorithmInfo {
        name: "cocoa-fb2",
        summary: "CoCoA with Full Backoff 2: max(backed-off timer, weak-updated RTO) is carried \
                  (ANRW 2018; spec §5)",
        params: crate::cocoa_fb::GROUPS,
        build: crate::cocoa_fb::build_fb2,
    },
    AlgorithmInfo {
        name: "gsrtc",
        summary: "GSRTC: CoCoA-FB2 with a strong weight growing geometrically over clean \
                  exchanges (Rathod 2022 Algorithm 2; spec §6)",
        params: crate::gsrtc::GROUPS,
        build: crate::gsrtc::build,
    },
    AlgorithmInfo {
        name: "cocoa++",
        summary: "CoCoA++: CAIA delay-gradient probabilistic backoff factor on the RTO, x1.42 \
                  backoff (Rathod 2022 ch. 6; spec §10)",
        params: crate::cocoa_pp::GROUPS,
        build: crate::cocoa_pp::build,
    },
    // -- end CoCoA family --
    AlgorithmInfo {
        name: "fasor",
        summary:
            "FASOR: FastRTO, SlowRTO and a three-state backoff (draft-ietf-core-fasor-02; spec §7)",
        params: &[
            crate::common::COMMON,
            crate::fasor::FASOR,
            crate::fasor::TOKEN_OFF,
        ],
        build: crate::fasor::build,
    },
    AlgorithmInfo {
        name: "fasor-token",
        summary: "FASOR+token: samples from the transmission a response names (spec §7.6)",
        params: &[
            crate::common::COMMON,
            crate::fasor::FASOR,
            crate::fasor::TOKEN_ON,
        ],
        build: crate::fasor::build_token,
    },
    AlgorithmInfo {
        name: "basic-rto",
        summary: "Californium BasicRTO: rto = 1.5 x last sample, integer ms (spec §8.1)",
        params: &[
            crate::common::COMMON,
            crate::californium::CF_COMMON,
            crate::basic_rto::BASIC,
        ],
        build: crate::basic_rto::build,
    },
    AlgorithmInfo {
        name: "linux-rto",
        summary: "Californium Linux RTO: per-sample tcp_rtt_estimator, integer ms (spec §8.2)",
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
        summary: "Californium Peak-Hopper RTO (Ekström & Ludwig 2004), integer ms (spec §8.3)",
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
            "CoAP-Eifel (Rathod 2022 ch. 4): Eifel timer with gain 1/3, Karn sampling (spec §9)",
        params: &[crate::common::COMMON, crate::eifel::EIFEL],
        build: crate::eifel::build,
    },
];

/// Every registered name.
pub fn names() -> Vec<&'static str> {
    ALGORITHMS.iter().map(|a| a.name).collect()
}

/// The entry for `name`, or an error listing the valid names.
pub fn lookup(name: &str) -> Result<&'static AlgorithmInfo, ParamError> {
    ALGORITHMS
        .iter()
        .find(|a| a.name == name)
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
/// expanded first, then the other settings override it (spec §0.5, [`crate::presets`]).
pub fn resolve(
    name: &str,
    settings: &Settings,
) -> Result<(&'static AlgorithmInfo, Params), ParamError> {
    let info = lookup(name)?;
    let expanded = crate::presets::expand(info, settings)?;
    let params = Params::resolve(info.name, info.params, &expanded)?;
    Ok((info, params))
}
