//! The one loss grammar: every loss model a user can name with its parameters, in one table
//! ([`LOSS_MODELS`]), and the one function that builds it ([`build`]).
//!
//! A scenario writes `loss = { model = "netem-gemodel", p = 2.5, r = "10%" }`; `coaplab emulate`
//! writes `--loss netem-gemodel:2.5,10%`, the same keys in the table's order. Each reader turns
//! its syntax into [`LossValue`]s (a TOML number, a tc percentage) and leaves keys, defaults,
//! ranges and tc's rules to [`build`], so both mean the same process.

use coaplab_base::time::Duration;

use super::netem::{self, NetemProb};
use super::{CtmcParams, GeParams, LossModel, NetemGeParams, NetemRandomParams, NetemStateParams};
use LossUnit::{Percent, Probability, Seconds};

/// How a loss parameter is written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LossUnit {
    /// A probability in `[0, 1]`.
    Probability,
    /// A mean duration in seconds, in `[1e-6, 1e7]`.
    Seconds,
    /// A netem probability as tc reads it: percent in `[0, 100]` (`2.5` or `2.5%`).
    Percent,
}

/// One parameter of a loss model.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LossParam {
    /// The key (a scenario table's key; the position in `coaplab emulate --loss NAME:..`).
    pub key: &'static str,
    /// How it is written.
    pub unit: LossUnit,
    /// Its default when absent, in words (`None`: required).
    pub default: Option<&'static str>,
}

/// One loss model users can name.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LossModelSpec {
    /// The name (`model = NAME`, `--loss NAME:..`).
    pub name: &'static str,
    /// What it is, and its tc equivalent if any.
    pub summary: &'static str,
    /// Its parameters, in the order `--loss NAME:V1,V2,..` takes them.
    pub params: &'static [LossParam],
}

const fn required(key: &'static str, unit: LossUnit) -> LossParam {
    LossParam {
        key,
        unit,
        default: None,
    }
}

const fn optional(key: &'static str, unit: LossUnit, default: &'static str) -> LossParam {
    LossParam {
        key,
        unit,
        default: Some(default),
    }
}

/// Every loss model with parameters, in the order error messages list them.
pub const LOSS_MODELS: &[LossModelSpec] = &[
    LossModelSpec {
        name: "bernoulli",
        summary: "each packet lost independently with probability p (f64 draws)",
        params: &[required("p", Probability)],
    },
    LossModelSpec {
        name: "ctmc",
        summary:
            "time-based two-state chain: exponential sojourns in seconds (docs/experiments.md §3)",
        params: &[
            required("good_mean_s", Seconds),
            required("burst_mean_s", Seconds),
            optional("loss_good", Probability, "0"),
            optional("loss_burst", Probability, "1"),
        ],
    },
    LossModelSpec {
        name: "gilbert-elliott",
        summary: "packet-based Gilbert-Elliott chain with netem gemodel's meaning in f64 draws",
        params: &[
            required("p", Probability),
            required("r", Probability),
            optional("loss_good", Probability, "0"),
            optional("loss_bad", Probability, "1"),
        ],
    },
    LossModelSpec {
        name: "netem-random",
        summary: "tc `loss random P [CORR]`, netem's integer arithmetic",
        params: &[
            required("p", Percent),
            optional("correlation", Percent, "0"),
        ],
    },
    LossModelSpec {
        name: "netem-state",
        summary: "tc `loss state p13 p31 p32 p23 p14` (4 states), netem's integer arithmetic",
        params: &[
            required("p13", Percent),
            optional("p31", Percent, "100 - p13"),
            optional("p32", Percent, "0"),
            optional("p23", Percent, "100"),
            optional("p14", Percent, "0"),
        ],
    },
    LossModelSpec {
        name: "netem-gemodel",
        summary: "tc `loss gemodel p r 1-h 1-k` (Gilbert-Elliott), netem's integer arithmetic",
        params: &[
            required("p", Percent),
            optional("r", Percent, "100 - p"),
            optional("1-h", Percent, "100"),
            optional("1-k", Percent, "0"),
        ],
    },
];

/// The loss model named `name`, if it is one of [`LOSS_MODELS`].
pub fn loss_model_spec(name: &str) -> Option<&'static LossModelSpec> {
    LOSS_MODELS.iter().find(|m| m.name == name)
}

impl LossModelSpec {
    /// The keys, `model` first, as a scenario table allows them.
    pub fn table_keys(&self) -> Vec<&'static str> {
        std::iter::once("model")
            .chain(self.params.iter().map(|p| p.key))
            .collect()
    }

    /// The positional form `coaplab emulate --loss` takes: `netem-state:p13[,p31[,..]]`.
    pub fn positional(&self) -> String {
        let mut out = format!("{}:", self.name);
        let mut open = 0;
        for (i, p) in self.params.iter().enumerate() {
            let sep = if i == 0 { "" } else { "," };
            if p.default.is_some() {
                out.push_str(&format!("[{sep}{}", p.key));
                open += 1;
            } else {
                out.push_str(&format!("{sep}{}", p.key));
            }
        }
        out.push_str(&"]".repeat(open));
        out
    }
}

/// A loss parameter's value, already in its unit.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum LossValue {
    /// A number as written (probability or seconds).
    Number(f64),
    /// A netem probability (from a tc percentage).
    Netem(NetemProb),
    /// Present but not a value of the parameter's unit (a reader could not convert it);
    /// [`build`] reports it as [`LossBuildError::WrongUnit`] when it reaches the key, so
    /// errors come in the same order for every reader.
    Invalid,
}

/// Why a loss model cannot be built from its parameters.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum LossBuildError {
    /// Not one of [`LOSS_MODELS`].
    #[error("loss model one of {} (not \"{0}\")", names())]
    UnknownModel(String),
    /// A required parameter is absent.
    #[error("a {model} model with '{key}'")]
    Missing {
        /// The model.
        model: &'static str,
        /// The key.
        key: &'static str,
    },
    /// A value of the wrong unit (a number where a percentage belongs, or the reverse).
    #[error("'{key}' {}", expected(*unit))]
    WrongUnit {
        /// The key.
        key: &'static str,
        /// Its unit.
        unit: LossUnit,
    },
    /// A number outside its range.
    #[error("'{key}' a number in [{min}, {max}]")]
    OutOfRange {
        /// The key.
        key: &'static str,
        /// Least value.
        min: f64,
        /// Largest value.
        max: f64,
    },
    /// netem's 4-state chain with `p13 + p14` or `p31 + p32` above 100 %.
    #[error("a netem-state model with {sum} at most 100 (see '{key}')")]
    StateSum {
        /// The sum, e.g. `p13 + p14`.
        sum: &'static str,
        /// The parameter netsim names ([`NetemStateParams::invalid_parameter`]).
        key: &'static str,
    },
}

/// The names of [`LOSS_MODELS`], comma-separated.
pub fn names() -> String {
    LOSS_MODELS
        .iter()
        .map(|m| m.name)
        .collect::<Vec<_>>()
        .join(", ")
}

/// What a value of `unit` must be, in words.
pub fn expected(unit: LossUnit) -> &'static str {
    match unit {
        Probability => "a number in [0, 1]",
        Seconds => "a number in [0.000001, 10000000]",
        Percent => "a percentage in [0, 100] (2.5 or \"2.5%\", as tc)",
    }
}

/// The loss model `name` with the parameters `get` gives (`None`: absent). Defaults, ranges
/// and tc's rules are applied here, for every reader.
pub fn build(
    name: &str,
    get: impl Fn(&'static str) -> Option<LossValue>,
) -> Result<LossModel, LossBuildError> {
    let spec = loss_model_spec(name).ok_or_else(|| LossBuildError::UnknownModel(name.into()))?;
    let model = spec.name;
    let num = |key: &'static str, unit: LossUnit, default: Option<f64>| {
        let (min, max) = if unit == Seconds {
            (1e-6, 1e7)
        } else {
            (0.0, 1.0)
        };
        match get(key) {
            Some(LossValue::Number(x)) if x.is_nan() || x < min || x > max => {
                Err(LossBuildError::OutOfRange { key, min, max })
            }
            Some(LossValue::Number(x)) => Ok(x),
            Some(_) => Err(LossBuildError::WrongUnit { key, unit }),
            None => default.ok_or(LossBuildError::Missing { model, key }),
        }
    };
    let prob = |key, default| num(key, Probability, default);
    let secs = |key| num(key, Seconds, None).map(Duration::from_secs_f64_round_us);
    let pct = |key: &'static str, default: Option<NetemProb>| match get(key) {
        Some(LossValue::Netem(p)) => Ok(p),
        Some(_) => Err(LossBuildError::WrongUnit { key, unit: Percent }),
        None => default.ok_or(LossBuildError::Missing { model, key }),
    };
    Ok(match model {
        "bernoulli" => LossModel::Bernoulli {
            p: prob("p", None)?,
        },
        "ctmc" => LossModel::Ctmc(CtmcParams {
            good_mean: secs("good_mean_s")?,
            burst_mean: secs("burst_mean_s")?,
            loss_good: prob("loss_good", Some(0.0))?,
            loss_burst: prob("loss_burst", Some(1.0))?,
        }),
        "gilbert-elliott" => LossModel::GilbertElliott(GeParams {
            p: prob("p", None)?,
            r: prob("r", None)?,
            loss_good: prob("loss_good", Some(0.0))?,
            loss_bad: prob("loss_bad", Some(1.0))?,
        }),
        "netem-random" => LossModel::NetemRandom(NetemRandomParams {
            loss: pct("p", None)?,
            correlation: pct("correlation", Some(0))?,
        }),
        "netem-state" => {
            let tc = NetemStateParams::tc_defaults(pct("p13", None)?);
            let params = NetemStateParams {
                p31: pct("p31", Some(tc.p31))?,
                p32: pct("p32", Some(tc.p32))?,
                p23: pct("p23", Some(tc.p23))?,
                p14: pct("p14", Some(tc.p14))?,
                ..tc
            };
            if let Some(key) = params.invalid_parameter() {
                let sum = if key == "p14" {
                    "p13 + p14"
                } else {
                    "p31 + p32"
                };
                return Err(LossBuildError::StateSum { sum, key });
            }
            LossModel::NetemState(params)
        }
        _ => {
            // tc's defaults for `gemodel p`: r = 1 − p, 1-h = 100 %, 1-k = 0.
            let p = pct("p", None)?;
            let r_default = netem::prob_from_fraction(1.0 - netem::fraction_of(p));
            LossModel::NetemGemodel(NetemGeParams {
                p,
                r: pct("r", r_default)?,
                h: u32::MAX - pct("1-h", Some(u32::MAX))?,
                k1: pct("1-k", Some(0))?,
            })
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pct(x: f64) -> LossValue {
        LossValue::Netem(netem::prob_from_percent(x).unwrap())
    }

    #[test]
    fn the_positional_form_lists_the_keys_in_order() {
        let form = |n| loss_model_spec(n).unwrap().positional();
        assert_eq!(
            form("netem-state"),
            "netem-state:p13[,p31[,p32[,p23[,p14]]]]"
        );
        assert_eq!(form("netem-gemodel"), "netem-gemodel:p[,r[,1-h[,1-k]]]");
        assert_eq!(form("netem-random"), "netem-random:p[,correlation]");
        assert_eq!(form("bernoulli"), "bernoulli:p");
        assert_eq!(
            form("ctmc"),
            "ctmc:good_mean_s,burst_mean_s[,loss_good[,loss_burst]]"
        );
    }

    #[test]
    fn tc_defaults_fill_what_is_absent() {
        let gemodel = build("netem-gemodel", |k| (k == "p").then(|| pct(20.0))).unwrap();
        let f = |x| netem::prob_from_percent(x).unwrap();
        assert_eq!(
            gemodel,
            LossModel::NetemGemodel(NetemGeParams {
                p: f(20.0),
                r: f(80.0),
                h: 0,
                k1: 0
            })
        );
        let state = build("netem-state", |k| (k == "p13").then(|| pct(5.0))).unwrap();
        assert_eq!(
            state,
            LossModel::NetemState(NetemStateParams::tc_defaults(f(5.0)))
        );
    }

    #[test]
    fn bad_parameters_are_typed_errors_naming_the_key() {
        assert_eq!(
            build("bernoulli", |_| Some(LossValue::Number(2.0))),
            Err(LossBuildError::OutOfRange {
                key: "p",
                min: 0.0,
                max: 1.0
            })
        );
        assert_eq!(
            build("ctmc", |_| None),
            Err(LossBuildError::Missing {
                model: "ctmc",
                key: "good_mean_s"
            })
        );
        let e = build("netem-state", |k| match k {
            "p13" => Some(pct(60.0)),
            "p14" => Some(pct(50.0)),
            _ => None,
        });
        assert_eq!(
            e,
            Err(LossBuildError::StateSum {
                sum: "p13 + p14",
                key: "p14"
            })
        );
        assert_eq!(
            build("netem-random", |_| Some(LossValue::Number(0.5))),
            Err(LossBuildError::WrongUnit {
                key: "p",
                unit: Percent
            })
        );
        assert!(build("lots", |_| None)
            .unwrap_err()
            .to_string()
            .starts_with("loss model one of bernoulli, ctmc, gilbert-elliott,"));
    }
}
