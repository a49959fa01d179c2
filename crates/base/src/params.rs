//! Named, documented, range-checked algorithm parameters (ns-3 attribute style).
//!
//! Every constant of every algorithm is a [`ParamSpec`]: a key (the source's name in
//! snake_case, with `_s` / `_ms` for durations), a default (the source's value or the resolution of
//! docs/algorithms.md), a checked range, help text and a source note. Users give `key=value`
//! strings ([`Settings`]); an unknown key or a bad value fails with a message that names the key
//! and lists what is valid.

use std::collections::BTreeMap;
use std::fmt;

use crate::time::Duration;

/// The type and range of a parameter.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Kind {
    /// A duration given in seconds (key ends in `_s`), inclusive bounds. `inf` is accepted
    /// when `max` is infinite.
    Seconds {
        /// Smallest accepted value.
        min: f64,
        /// Largest accepted value (may be `f64::INFINITY`).
        max: f64,
    },
    /// A real number, inclusive bounds.
    Float {
        /// Smallest accepted value.
        min: f64,
        /// Largest accepted value.
        max: f64,
    },
    /// An integer (durations in ms use this with a `_ms` key), inclusive bounds.
    Int {
        /// Smallest accepted value.
        min: i64,
        /// Largest accepted value.
        max: i64,
    },
    /// `true`/`false` (also `on`/`off`, `1`/`0`).
    Bool,
    /// One of a fixed list of names.
    Choice(&'static [&'static str]),
    /// A file path (in a scenario, relative to the scenario file), read by the key's reader:
    /// never an algorithm parameter, so [`Value`] has no variant for it.
    Path,
}

impl Kind {
    /// The accepted values, in words (`seconds in [0, 60]`, `true | false`, `a | b`), as
    /// `coaplab algorithms NAME` and the Python package print them.
    pub fn describe(self) -> String {
        match self {
            Kind::Seconds { min, max } if max.is_infinite() => format!("seconds >= {min}, or inf"),
            Kind::Seconds { min, max } => format!("seconds in [{min}, {max}]"),
            Kind::Float { min, max } => format!("number in [{min}, {max}]"),
            Kind::Int { min, max } => format!("integer in [{min}, {max}]"),
            Kind::Bool => "true | false".to_string(),
            Kind::Choice(names) => names.join(" | "),
            Kind::Path => "a file path".to_string(),
        }
    }
}

/// Seconds in [0, 3600] (a threshold or a granularity).
pub const SECS: Kind = Kind::Seconds {
    min: 0.0,
    max: 3600.0,
};

/// Seconds >= 0, `inf` accepted (a cap that can be switched off).
pub const SECS_OR_INF: Kind = Kind::Seconds {
    min: 0.0,
    max: f64::INFINITY,
};

/// A gain or weight in [0, 1].
pub const GAIN: Kind = Kind::Float { min: 0.0, max: 1.0 };

/// A multiplier in [0, 1000].
pub const FACTOR: Kind = Kind::Float {
    min: 0.0,
    max: 1000.0,
};

/// A parameter value.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Value {
    /// For [`Kind::Seconds`] and [`Kind::Float`].
    Float(f64),
    /// For [`Kind::Int`].
    Int(i64),
    /// For [`Kind::Bool`].
    Bool(bool),
    /// For [`Kind::Choice`].
    Choice(&'static str),
}

impl fmt::Display for Value {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Value::Float(v) if v.is_infinite() => f.write_str("inf"),
            Value::Float(v) => write!(f, "{v}"),
            Value::Int(v) => write!(f, "{v}"),
            Value::Bool(v) => write!(f, "{v}"),
            Value::Choice(v) => f.write_str(v),
        }
    }
}

/// One documented parameter.
#[derive(Debug, Clone, Copy)]
pub struct ParamSpec {
    /// The key users write, e.g. `ack_timeout_s`.
    pub key: &'static str,
    /// Type and range.
    pub kind: Kind,
    /// The default.
    pub default: Value,
    /// One line saying what it does.
    pub help: &'static str,
    /// Where the default comes from, e.g. `RFC 7252 §4.8` or `docs/algorithms.md, ambiguity #6`.
    pub source: &'static str,
}

/// Why a parameter could not be accepted.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ParamError {
    /// The key is not a parameter of this algorithm.
    UnknownKey {
        /// The algorithm.
        algorithm: String,
        /// The key given.
        key: String,
        /// Every valid key.
        valid: Vec<&'static str>,
    },
    /// The value does not parse or is out of range.
    BadValue {
        /// The key.
        key: String,
        /// The value given.
        value: String,
        /// What would be accepted.
        expected: String,
    },
    /// The algorithm name is not registered.
    UnknownAlgorithm {
        /// The name given.
        name: String,
        /// Every registered name.
        valid: Vec<&'static str>,
    },
    /// A `KEY=VALUE` setting without `=`.
    Malformed(String),
}

impl fmt::Display for ParamError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ParamError::UnknownKey {
                algorithm,
                key,
                valid,
            } => write!(
                f,
                "unknown parameter '{key}' for algorithm '{algorithm}'; valid parameters: {}",
                valid.join(", ")
            ),
            ParamError::BadValue {
                key,
                value,
                expected,
            } => write!(
                f,
                "bad value '{value}' for parameter '{key}': expected {expected}"
            ),
            ParamError::UnknownAlgorithm { name, valid } => write!(
                f,
                "unknown algorithm '{name}'; valid names: {}",
                valid.join(", ")
            ),
            ParamError::Malformed(s) => write!(f, "bad setting '{s}': expected KEY=VALUE"),
        }
    }
}

impl std::error::Error for ParamError {}

/// Raw `key=value` settings as a user wrote them (CLI `--set`, scenario file), in order; a later
/// setting of the same key wins.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Settings {
    entries: Vec<(String, String)>,
}

impl Settings {
    /// No settings: every parameter at its default.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds `key = value`.
    pub fn set(&mut self, key: impl Into<String>, value: impl Into<String>) -> &mut Self {
        self.entries.push((key.into(), value.into()));
        self
    }

    /// Parses `KEY=VALUE` strings.
    pub fn parse<'a>(items: impl IntoIterator<Item = &'a str>) -> Result<Self, ParamError> {
        let mut s = Settings::new();
        for item in items {
            let (k, v) = item
                .split_once('=')
                .ok_or_else(|| ParamError::Malformed(item.to_string()))?;
            s.set(k.trim(), v.trim());
        }
        Ok(s)
    }

    /// The settings in order.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &str)> {
        self.entries.iter().map(|(k, v)| (k.as_str(), v.as_str()))
    }

    /// The last value given for `key`, if any.
    pub fn get(&self, key: &str) -> Option<&str> {
        self.entries
            .iter()
            .rev()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.as_str())
    }
}

/// Resolved, checked values for every parameter of one algorithm.
#[derive(Debug, Clone, PartialEq)]
pub struct Params {
    values: BTreeMap<&'static str, Value>,
}

impl Params {
    /// Starts from every default in `groups` and applies `settings`, checking keys and ranges.
    pub fn resolve(
        algorithm: &str,
        groups: &[&[ParamSpec]],
        settings: &Settings,
    ) -> Result<Params, ParamError> {
        let mut values = BTreeMap::new();
        for spec in groups.iter().flat_map(|g| g.iter()) {
            values.insert(spec.key, spec.default);
        }
        for (key, raw) in settings.iter() {
            let spec = groups
                .iter()
                .flat_map(|g| g.iter())
                .find(|s| s.key == key)
                .ok_or_else(|| ParamError::UnknownKey {
                    algorithm: algorithm.to_string(),
                    key: key.to_string(),
                    valid: groups
                        .iter()
                        .flat_map(|g| g.iter())
                        .map(|s| s.key)
                        .collect(),
                })?;
            values.insert(spec.key, parse_value(spec, raw)?);
        }
        Ok(Params { values })
    }

    fn get(&self, key: &str) -> Value {
        *self
            .values
            .get(key)
            .unwrap_or_else(|| panic!("parameter '{key}' is not declared by this algorithm"))
    }

    /// A real-valued parameter. Panics if `key` was not declared (a programming error).
    pub fn float(&self, key: &str) -> f64 {
        match self.get(key) {
            Value::Float(v) => v,
            Value::Int(v) => v as f64,
            other => panic!("parameter '{key}' is {other:?}, not a number"),
        }
    }

    /// A `_s` parameter as a [`Duration`], rounded to the microsecond; infinity saturates.
    pub fn secs(&self, key: &str) -> Duration {
        Duration::from_secs_f64_round_us(self.float(key))
    }

    /// An integer parameter.
    pub fn int(&self, key: &str) -> i64 {
        match self.get(key) {
            Value::Int(v) => v,
            other => panic!("parameter '{key}' is {other:?}, not an integer"),
        }
    }

    /// A boolean parameter.
    pub fn flag(&self, key: &str) -> bool {
        match self.get(key) {
            Value::Bool(v) => v,
            other => panic!("parameter '{key}' is {other:?}, not a flag"),
        }
    }

    /// A choice parameter.
    pub fn choice(&self, key: &str) -> &'static str {
        match self.get(key) {
            Value::Choice(v) => v,
            other => panic!("parameter '{key}' is {other:?}, not a choice"),
        }
    }

    /// Every resolved value, sorted by key (for manifests and `--help` output).
    pub fn iter(&self) -> impl Iterator<Item = (&'static str, Value)> + '_ {
        self.values.iter().map(|(k, v)| (*k, *v))
    }
}

fn parse_value(spec: &ParamSpec, raw: &str) -> Result<Value, ParamError> {
    let bad = |expected: String| ParamError::BadValue {
        key: spec.key.to_string(),
        value: raw.to_string(),
        expected,
    };
    match spec.kind {
        Kind::Seconds { min, max } | Kind::Float { min, max } => {
            let v: f64 = match raw {
                "inf" | "infinity" | "Inf" => f64::INFINITY,
                _ => raw.parse().map_err(|_| bad(range_text(min, max)))?,
            };
            if v.is_nan() || v < min || v > max {
                return Err(bad(range_text(min, max)));
            }
            Ok(Value::Float(v))
        }
        Kind::Int { min, max } => {
            let v: i64 = raw
                .parse()
                .map_err(|_| bad(format!("an integer in [{min}, {max}]")))?;
            if v < min || v > max {
                return Err(bad(format!("an integer in [{min}, {max}]")));
            }
            Ok(Value::Int(v))
        }
        Kind::Bool => match raw {
            "true" | "on" | "1" | "yes" => Ok(Value::Bool(true)),
            "false" | "off" | "0" | "no" => Ok(Value::Bool(false)),
            _ => Err(bad("true or false".to_string())),
        },
        Kind::Choice(names) => names
            .iter()
            .find(|n| **n == raw)
            .map(|n| Value::Choice(n))
            .ok_or_else(|| bad(format!("one of {}", names.join(", ")))),
        Kind::Path => Err(bad(
            "a file, which only a scenario's or a command's own reader takes".to_string(),
        )),
    }
}

fn range_text(min: f64, max: f64) -> String {
    if max.is_infinite() {
        format!("a number >= {min} (or inf)")
    } else {
        format!("a number in [{min}, {max}]")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SPECS: &[ParamSpec] = &[
        ParamSpec {
            key: "ack_timeout_s",
            kind: Kind::Seconds {
                min: 0.001,
                max: 3600.0,
            },
            default: Value::Float(2.0),
            help: "base timeout",
            source: "RFC 7252 §4.8",
        },
        ParamSpec {
            key: "mode",
            kind: Kind::Choice(&["a", "b"]),
            default: Value::Choice("a"),
            help: "a mode",
            source: "test",
        },
    ];

    #[test]
    fn defaults_then_overrides() {
        let p = Params::resolve("x", &[SPECS], &Settings::new()).unwrap();
        assert_eq!(p.secs("ack_timeout_s"), Duration::from_secs(2));
        let s = Settings::parse(["ack_timeout_s=3", "mode=b"]).unwrap();
        let p = Params::resolve("x", &[SPECS], &s).unwrap();
        assert_eq!(p.secs("ack_timeout_s"), Duration::from_secs(3));
        assert_eq!(p.choice("mode"), "b");
    }

    #[test]
    fn unknown_key_lists_valid_keys() {
        let s = Settings::parse(["ack_timeout=3"]).unwrap();
        let e = Params::resolve("default", &[SPECS], &s).unwrap_err();
        assert_eq!(
            e.to_string(),
            "unknown parameter 'ack_timeout' for algorithm 'default'; valid parameters: ack_timeout_s, mode"
        );
    }

    #[test]
    fn out_of_range_and_bad_choice_name_the_key() {
        let s = Settings::parse(["ack_timeout_s=0"]).unwrap();
        let e = Params::resolve("x", &[SPECS], &s).unwrap_err();
        assert_eq!(
            e.to_string(),
            "bad value '0' for parameter 'ack_timeout_s': expected a number in [0.001, 3600]"
        );
        let s = Settings::parse(["mode=c"]).unwrap();
        let e = Params::resolve("x", &[SPECS], &s).unwrap_err();
        assert_eq!(
            e.to_string(),
            "bad value 'c' for parameter 'mode': expected one of a, b"
        );
        assert_eq!(
            Settings::parse(["oops"]).unwrap_err(),
            ParamError::Malformed("oops".into())
        );
    }
}
