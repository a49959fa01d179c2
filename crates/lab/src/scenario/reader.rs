//! Reading TOML values with their lines; lists at scalar positions become sweep axes.
//!
//! The same reader runs once to discover and check the axes (`choice` empty: every list
//! element is checked, the first one is used) and once per combination (`choice[k]` picks the
//! element of the k-th axis met). Both passes read keys in the same order, so the k-th list
//! met is always the same axis.

use std::ops::Range;

use coaplab_cc::time::Duration;
use toml_edit::{Item, TableLike, Value};

use super::{line_of, Axis, ScenarioError};

/// Keys valid in `[protocol]` (and, for convenience, at the top level or in `[network]`).
pub(super) const PROTOCOL_KEYS: &[&str] =
    &["max_retransmit", "nstart", "cc_preset", "server_duplicates"];

/// Reads one pass over a scenario document.
pub(super) struct Reader<'s> {
    source: &'s str,
    file: &'s str,
    choice: &'s [usize],
    axes: Vec<Axis>,
    /// `[vars]`: name → the value chosen for this pass.
    vars: Vec<(String, Value)>,
}

impl<'s> Reader<'s> {
    /// A reader taking element `choice[k]` of the k-th list met (0 when `choice` is short).
    pub(super) fn new(source: &'s str, file: &'s str, choice: &'s [usize]) -> Self {
        Reader {
            source,
            file,
            choice,
            axes: Vec::new(),
            vars: Vec::new(),
        }
    }

    /// The file name used in messages.
    pub(super) fn file(&self) -> &str {
        self.file
    }

    /// The axes met so far.
    pub(super) fn into_axes(self) -> Vec<Axis> {
        self.axes
    }

    /// The line of a span (1 without one).
    pub(super) fn line(&self, span: Option<Range<usize>>) -> usize {
        span.map(|s| line_of(self.source, s.start)).unwrap_or(1)
    }

    /// A bad-value error at `span`.
    pub(super) fn bad(
        &self,
        span: Option<Range<usize>>,
        key: &str,
        value: &str,
        expected: impl Into<String>,
    ) -> ScenarioError {
        ScenarioError::BadValue {
            file: self.file.to_string(),
            line: self.line(span),
            key: key.to_string(),
            value: value.to_string(),
            expected: expected.into(),
        }
    }

    /// Fails on the first key of `table` not in `allowed`.
    pub(super) fn check_keys(
        &self,
        table: &dyn TableLike,
        path: &str,
        allowed: &[&str],
    ) -> Result<(), ScenarioError> {
        for (key, _) in table.iter() {
            if !allowed.contains(&key) {
                let span = table.key(key).and_then(|k| k.span());
                return Err(ScenarioError::UnknownKey {
                    file: self.file.to_string(),
                    line: self.line(span),
                    key: join(path, key),
                    allowed: allowed.iter().map(|s| s.to_string()).collect(),
                });
            }
        }
        Ok(())
    }

    /// Reads optional scalar `key` of `table` through `conv`. A list is a sweep axis: every
    /// element is checked, and the element chosen for this pass is returned.
    pub(super) fn scalar<T>(
        &mut self,
        table: &dyn TableLike,
        path: &str,
        key: &str,
        conv: impl Fn(&Value) -> Result<T, String>,
    ) -> Result<Option<T>, ScenarioError> {
        let full = join(path, key);
        let Some(item) = table.get(key) else {
            return Ok(None);
        };
        let value = match item {
            Item::Value(v) => v,
            other => {
                return Err(self.bad(other.span(), &full, other.type_name(), "a value"));
            }
        };
        let Value::Array(list) = value else {
            if let Some(name) = value.as_str().and_then(|s| s.strip_prefix('$')) {
                return self.variable(value, &full, name, conv).map(Some);
            }
            return conv(value)
                .map(Some)
                .map_err(|expected| self.bad(value.span(), &full, &shown(value), expected));
        };
        if list.is_empty() {
            return Err(self.bad(
                value.span(),
                &full,
                "[]",
                "a value or a non-empty list of values to sweep",
            ));
        }
        let mut chosen = None;
        let index = self.choice.get(self.axes.len()).copied().unwrap_or(0);
        if let Some(element) = list.get(index).filter(|_| !self.choice.is_empty()) {
            // A combination pass: the first pass checked every element and recorded the axis,
            // so only the chosen element is read (a million combinations stay cheap).
            let v = conv(element)
                .map_err(|expected| self.bad(element.span(), &full, &shown(element), expected))?;
            self.axes.push(Axis {
                key: full,
                line: 0,
                values: Vec::new(),
                column: String::new(),
            });
            return Ok(Some(v));
        }
        let mut values = Vec::with_capacity(list.len());
        for (i, element) in list.iter().enumerate() {
            if matches!(element, Value::Array(_)) {
                return Err(self.bad(
                    element.span(),
                    &full,
                    &shown(element),
                    "a single value (lists do not nest)",
                ));
            }
            let v = conv(element)
                .map_err(|expected| self.bad(element.span(), &full, &shown(element), expected))?;
            if i == index {
                chosen = Some(v);
            }
            values.push(plain(element));
        }
        self.axes.push(Axis {
            key: full,
            line: self.line(value.span()),
            values,
            column: String::new(),
        });
        Ok(chosen)
    }

    /// The value of `$name` (from `[vars]`) through `conv`.
    fn variable<T>(
        &self,
        reference: &Value,
        full: &str,
        name: &str,
        conv: impl Fn(&Value) -> Result<T, String>,
    ) -> Result<T, ScenarioError> {
        let Some((_, var)) = self.vars.iter().find(|(n, _)| n == name) else {
            let defined: Vec<&str> = self.vars.iter().map(|(n, _)| n.as_str()).collect();
            return Err(self.bad(
                reference.span(),
                full,
                &shown(reference),
                format!("a variable defined in [vars] ({})", defined.join(", ")),
            ));
        };
        conv(var).map_err(|expected| {
            let given = format!("{} (= {})", shown(reference), shown(var));
            self.bad(reference.span(), full, &given, expected)
        })
    }

    /// Reads `[vars]`: named values (lists are sweep axes) that other keys use as `"$name"`,
    /// so several keys can follow one axis together.
    pub(super) fn vars(&mut self, doc: &toml_edit::Table) -> Result<(), ScenarioError> {
        let Some(item) = doc.get("vars") else {
            return Ok(());
        };
        let t = item
            .as_table_like()
            .ok_or_else(|| self.bad(item.span(), "vars", item.type_name(), "a table"))?;
        let names: Vec<String> = t.iter().map(|(k, _)| k.to_string()).collect();
        for name in names {
            let value = self.scalar(t, "vars", &name, |v| match v {
                Value::InlineTable(_) | Value::String(_) | Value::Integer(_) => Ok(v.clone()),
                Value::Float(_) | Value::Boolean(_) => Ok(v.clone()),
                _ => Err("a string, number, boolean or inline table".to_string()),
            })?;
            if let Some(v) = value {
                self.vars.push((name, v));
            }
        }
        Ok(())
    }

    /// Like [`Reader::scalar`], but the key must be present.
    pub(super) fn required<T>(
        &mut self,
        table: &dyn TableLike,
        table_span: Option<Range<usize>>,
        path: &str,
        key: &str,
        conv: impl Fn(&Value) -> Result<T, String>,
    ) -> Result<T, ScenarioError> {
        self.scalar(table, path, key, conv)?
            .ok_or_else(|| ScenarioError::Missing {
                file: self.file.to_string(),
                line: self.line(table_span),
                key: join(path, key),
            })
    }
}

/// `path.key`, or `key` at the top level.
pub(super) fn join(path: &str, key: &str) -> String {
    if path.is_empty() {
        key.to_string()
    } else {
        format!("{path}.{key}")
    }
}

/// A value as written (trimmed of decoration), for error messages.
pub(super) fn shown(v: &Value) -> String {
    v.to_string().trim().to_string()
}

/// A value for results files: strings without quotes, everything else as written.
pub(super) fn plain(v: &Value) -> String {
    match v {
        Value::String(s) => s.value().clone(),
        other => shown(other),
    }
}

/// An integer in `[min, max]`.
pub(super) fn uint(v: &Value, min: u64, max: u64) -> Result<u64, String> {
    super::in_range(v.as_integer().and_then(|n| u64::try_from(n).ok()), min, max)
}

/// A number (integer or float) in `[min, max]`.
pub(super) fn float(v: &Value, min: f64, max: f64) -> Result<f64, String> {
    let expected = || format!("a number in [{min}, {max}]");
    let x = match v {
        Value::Integer(i) => *i.value() as f64,
        Value::Float(f) => *f.value(),
        _ => return Err(expected()),
    };
    if x.is_nan() || x < min || x > max {
        return Err(expected());
    }
    Ok(x)
}

/// A string.
pub(super) fn string(v: &Value) -> Result<String, String> {
    v.as_str()
        .map(str::to_string)
        .ok_or_else(|| "a string".to_string())
}

/// One of `names`.
pub(super) fn choice(v: &Value, names: &[&str]) -> Result<String, String> {
    let expected = || format!("one of {}", names.join(", "));
    let s = v.as_str().ok_or_else(expected)?;
    if names.contains(&s) {
        Ok(s.to_string())
    } else {
        Err(expected())
    }
}

/// Milliseconds to a [`Duration`], exact to the nanosecond for up to 6 decimals.
pub(super) fn millis(ms: f64) -> Duration {
    Duration::from_nanos((ms * 1e6).round() as i64)
}
