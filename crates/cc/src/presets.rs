//! Experiment presets (docs/algorithms.md, 'Presets'): named bundles of `key=value` settings that
//! put every algorithm into the configuration of a published testbed.
//!
//! A preset is selected with the pseudo-parameter `preset` in [`Settings`]
//! (`--set preset=fasor18`). [`crate::registry::build`] expands it for the algorithm being built
//! *first*, then applies the user's other settings over it, so the user always wins.
//!
//! Presets are cross-algorithm: a preset setting a key the algorithm does not have (e.g.
//! `aging` for Default CoAP) is skipped for that algorithm. A key the *user* gives that the
//! algorithm lacks is still an error. Presets only set these keys: `max_retransmit`,
//! `timer_max_s`, `backoff_cap_s`, `aging`, `rto_max_s`, `ack_timeout_s`.

use crate::algorithm::AlgorithmInfo;
use crate::params::{Kind, ParamError, ParamSpec, Settings, Value};

/// The pseudo-parameter that selects a preset.
pub const PRESET_KEY: &str = "preset";

/// Documentation of the `preset` pseudo-parameter, for `coaplab algorithms NAME`.
pub const PRESET_PARAM: ParamSpec = ParamSpec {
    key: PRESET_KEY,
    kind: Kind::Choice(&["rfc", "fasor18", "rathod-text", "rathod-contiki"]),
    default: Value::Choice("rfc"),
    help: "experiment preset, expanded before the other settings (which override it)",
    source: "docs/algorithms.md, 'Presets'",
};

/// Which algorithms one preset setting applies to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Applies {
    /// Every algorithm that has the key.
    All,
    /// Only the named algorithms (when they have the key).
    Only(&'static [&'static str]),
}

impl Applies {
    /// Whether the setting applies to algorithm `name`.
    pub fn includes(self, name: &str) -> bool {
        match self {
            Applies::All => true,
            Applies::Only(names) => names.contains(&name),
        }
    }
}

/// One `key=value` of a preset.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PresetSetting {
    /// The algorithms it applies to.
    pub applies: Applies,
    /// The parameter key.
    pub key: &'static str,
    /// The value, as a user would write it.
    pub value: &'static str,
}

/// One named preset.
#[derive(Debug, Clone, Copy)]
pub struct Preset {
    /// The name users write, e.g. `fasor18`.
    pub name: &'static str,
    /// What it reproduces, naming the source.
    pub summary: &'static str,
    /// The settings, applied in order.
    pub settings: &'static [PresetSetting],
}

/// The Default-CoAP family: these reuse Default CoAP's parameters (`ack_timeout_s`, `timer_max_s`).
const DEFAULT_FAMILY: Applies = Applies::Only(&["default", "default-fb1", "default-fb2", "gst"]);

const fn all(key: &'static str, value: &'static str) -> PresetSetting {
    PresetSetting {
        applies: Applies::All,
        key,
        value,
    }
}

const fn only(applies: Applies, key: &'static str, value: &'static str) -> PresetSetting {
    PresetSetting {
        applies,
        key,
        value,
    }
}

/// Every preset of docs/algorithms.md, 'Presets'.
pub static PRESETS: &[Preset] = &[
    Preset {
        name: "rfc",
        summary:
            "every parameter at its default (RFC 7252 and the resolutions of docs/algorithms.md)",
        settings: &[],
    },
    Preset {
        name: "fasor18",
        summary: "FASOR Globecom/ANRW 2018 testbed (also Pesola 2020): MAX_RETRANSMIT 20, \
                  60 s timer and RTO caps, CoCoA backoff cap 32 s without aging",
        settings: &[
            all("max_retransmit", "20"),
            // Default CoAP TIMER_MAX = 60 s; FASOR RTO_MAX = TIMER_MAX = 60 s (docs/algorithms.md,
            // 'Presets').
            all("timer_max_s", "60"),
            all("rto_max_s", "60"),
            // CoCoA: BACKOFF_CAP = 32 s, aging off (docs/algorithms.md, 'Presets';
            // docs/algorithms.md, ambiguity #12).
            all("backoff_cap_s", "32"),
            all("aging", "false"),
            // "every algorithm starts at 2 s with dithering" (docs/algorithms.md, 'Presets').
            all("ack_timeout_s", "2"),
        ],
    },
    Preset {
        name: "rathod-text",
        summary:
            "Rathod 2022 thesis text: Default CoAP initial timer in [2, 3] s, MAX_RETRANSMIT 4",
        settings: &[
            only(DEFAULT_FAMILY, "ack_timeout_s", "2"),
            all("max_retransmit", "4"),
        ],
    },
    Preset {
        name: "rathod-contiki",
        summary: "Rathod 2022 Contiki testbed: ACK_TIMEOUT 3 s (initial timer in [3, 4.5] s) for \
                  Default CoAP, FB1, FB2 and GST; MAX_RETRANSMIT 4",
        settings: &[
            only(DEFAULT_FAMILY, "ack_timeout_s", "3"),
            all("max_retransmit", "4"),
        ],
    },
];

/// Every preset name.
pub fn names() -> Vec<&'static str> {
    PRESETS.iter().map(|p| p.name).collect()
}

/// The preset called `name`, or an error listing the valid presets.
pub fn lookup(name: &str) -> Result<&'static Preset, ParamError> {
    PRESETS
        .iter()
        .find(|p| p.name == name)
        .ok_or_else(|| ParamError::BadValue {
            key: PRESET_KEY.to_string(),
            value: name.to_string(),
            expected: format!("one of {}", names().join(", ")),
        })
}

impl Preset {
    /// The settings of this preset that apply to `algorithm`: those addressed to it whose key
    /// it declares (the others are skipped, since presets are cross-algorithm).
    pub fn settings_for(&self, algorithm: &AlgorithmInfo) -> Settings {
        let mut out = Settings::new();
        for s in self.settings {
            let declared = algorithm
                .params
                .iter()
                .flat_map(|g| g.iter())
                .any(|p| p.key == s.key);
            if s.applies.includes(algorithm.name) && declared {
                out.set(s.key, s.value);
            }
        }
        out
    }
}

/// Expands `settings` for `algorithm`: the settings of the preset named by the `preset` key
/// (if any) come first, then every user setting except `preset` itself, so the user wins.
pub fn expand(algorithm: &AlgorithmInfo, settings: &Settings) -> Result<Settings, ParamError> {
    let mut out = match settings.get(PRESET_KEY) {
        Some(name) => lookup(name)?.settings_for(algorithm),
        None => Settings::new(),
    };
    for (k, v) in settings.iter().filter(|(k, _)| *k != PRESET_KEY) {
        out.set(k, v);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::algorithm::RtoAlgorithm;
    use crate::params::Params;
    use crate::time::Instant;

    const FAMILY_PARAMS: &[ParamSpec] = &[
        ParamSpec {
            key: "max_retransmit",
            kind: Kind::Int { min: 0, max: 255 },
            default: Value::Int(4),
            help: "h",
            source: "s",
        },
        ParamSpec {
            key: "ack_timeout_s",
            kind: Kind::Seconds {
                min: 0.001,
                max: 3600.0,
            },
            default: Value::Float(2.0),
            help: "h",
            source: "s",
        },
        ParamSpec {
            key: "timer_max_s",
            kind: Kind::Seconds {
                min: 0.001,
                max: f64::INFINITY,
            },
            default: Value::Float(f64::INFINITY),
            help: "h",
            source: "s",
        },
    ];

    fn unused(_: &Params, _: Instant) -> Box<dyn RtoAlgorithm> {
        unreachable!("tests only expand settings")
    }

    fn info(name: &'static str) -> AlgorithmInfo {
        AlgorithmInfo {
            name,
            summary: "test",
            params: &[FAMILY_PARAMS],
            build: unused,
        }
    }

    fn pairs(s: &Settings) -> Vec<(String, String)> {
        s.iter().map(|(k, v)| (k.into(), v.into())).collect()
    }

    #[test]
    fn preset_keys_the_algorithm_lacks_are_skipped() {
        let s = Settings::parse(["preset=fasor18"]).unwrap();
        let e = expand(&info("default"), &s).unwrap();
        // backoff_cap_s, aging, rto_max_s are CoCoA/FASOR keys: skipped for this algorithm.
        assert_eq!(
            pairs(&e),
            [
                ("max_retransmit".into(), "20".into()),
                ("timer_max_s".into(), "60".into()),
                ("ack_timeout_s".into(), "2".into()),
            ]
        );
    }

    #[test]
    fn user_settings_override_the_preset() {
        let s = Settings::parse(["max_retransmit=7", "preset=fasor18"]).unwrap();
        let e = expand(&info("default"), &s).unwrap();
        assert_eq!(e.get("max_retransmit"), Some("7"));
        assert_eq!(e.get("timer_max_s"), Some("60"));
        assert_eq!(e.get(PRESET_KEY), None);
    }

    #[test]
    fn rathod_contiki_sets_3s_only_for_the_default_family() {
        let s = Settings::parse(["preset=rathod-contiki"]).unwrap();
        assert_eq!(
            expand(&info("gst"), &s).unwrap().get("ack_timeout_s"),
            Some("3")
        );
        assert_eq!(
            expand(&info("some-other"), &s)
                .unwrap()
                .get("ack_timeout_s"),
            None
        );
        assert_eq!(
            expand(&info("some-other"), &s)
                .unwrap()
                .get("max_retransmit"),
            Some("4")
        );
    }

    #[test]
    fn unknown_preset_lists_the_valid_ones() {
        let s = Settings::parse(["preset=fasor"]).unwrap();
        let e = expand(&info("default"), &s).unwrap_err();
        assert_eq!(
            e.to_string(),
            "bad value 'fasor' for parameter 'preset': expected one of rfc, fasor18, rathod-text, \
             rathod-contiki"
        );
    }

    #[test]
    fn every_preset_resolves_for_every_registered_algorithm() {
        for info in crate::registry::ALGORITHMS {
            for preset in PRESETS {
                let s = Settings::parse([format!("preset={}", preset.name).as_str()]).unwrap();
                if let Err(e) = crate::registry::resolve(info.name, &s) {
                    panic!("preset {} on {}: {e}", preset.name, info.name);
                }
            }
        }
    }

    #[test]
    fn fasor18_applies_to_every_algorithm_that_has_the_keys() {
        let s = Settings::parse(["preset=fasor18"]).unwrap();
        for info in crate::registry::ALGORITHMS {
            let (_, p) = crate::registry::resolve(info.name, &s).unwrap();
            for (key, value) in p.iter() {
                let expected = match key {
                    "max_retransmit" => Value::Int(20),
                    "timer_max_s" | "rto_max_s" => Value::Float(60.0),
                    "backoff_cap_s" => Value::Float(32.0),
                    "aging" => Value::Bool(false),
                    "ack_timeout_s" => Value::Float(2.0),
                    _ => continue,
                };
                assert_eq!(value, expected, "{}: {key}", info.name);
            }
        }
    }

    #[test]
    fn preset_param_documents_every_preset() {
        assert_eq!(PRESET_PARAM.kind, Kind::Choice(&names().leak()[..]));
    }
}
