//! Reference numbers (`--against FILE`): published values to compare a summary with.
//!
//! ```toml
//! [[reference]]
//! source = "Pesola 2020, Table 6"   # shown in the table
//! metric = "fct_p50_s"              # a column of summary.csv
//! value = 36.213
//! tolerance_pct = 2                 # within when |ours - value| <= 2 % of value
//! # or: range = [64.228, 73.388]    # within when inside the range (both ends included)
//! [reference.cell]                  # the summary.csv row: column = value, all must match
//! cc = "tcp-newreno"
//! buffer_bytes = 2500
//! ```

use toml_edit::{DocumentMut, Item, Value};

use crate::results::SummaryRow;

/// Why a reference file cannot be read; an entry's error names the entry (from 1) and its key.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ReferenceError {
    /// The file is not TOML.
    #[error("not TOML: {0}")]
    NotToml(String),
    /// The file has no `[[reference]]` entries.
    #[error("no [[reference]] entries")]
    NoEntries,
    /// `reference` is not an array of tables.
    #[error("`reference` must be an array of tables ([[reference]])")]
    NotEntries,
    /// More than [`MAX_REFERENCES`] entries.
    #[error("more than {MAX_REFERENCES} [[reference]] entries")]
    TooMany,
    /// One entry's key is missing or wrong.
    #[error("[[reference]] {entry}: {problem}")]
    Entry {
        /// The entry, from 1.
        entry: usize,
        /// The key at fault (`metric`, `value`, `tolerance_pct`, `range`, `cell` or
        /// `cell.COLUMN`).
        key: String,
        /// What is wrong with it.
        problem: String,
    },
}

/// Entries in one reference file at most (a bound on the work a file can ask for).
pub const MAX_REFERENCES: usize = 10_000;

/// One reference number.
#[derive(Debug, Clone, PartialEq)]
pub struct Reference {
    /// Where the number comes from.
    pub source: String,
    /// `(summary.csv column, value)` pairs selecting one row.
    pub cell: Vec<(String, String)>,
    /// A summary.csv column.
    pub metric: String,
    /// The published value.
    pub value: f64,
    /// How close counts as within.
    pub tolerance: Tolerance,
}

/// What "within tolerance" means for one reference.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Tolerance {
    /// |ours − value| ≤ pct % of |value|.
    Percent(f64),
    /// lo ≤ ours ≤ hi.
    Range(f64, f64),
}

/// One line of the comparison table.
#[derive(Debug, Clone, PartialEq)]
pub struct Comparison {
    /// The reference.
    pub reference: Reference,
    /// Our value, or why there is none.
    pub ours: Result<f64, NoValue>,
}

/// Why a reference has no value of ours to compare with.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum NoValue {
    /// The reference's `metric` is no column of summary.csv.
    #[error("summary.csv has no column {0}")]
    NoColumn(String),
    /// No summary row has the reference's `cell` values.
    #[error("no cell of these results matches")]
    NoCell,
    /// Several summary rows have them.
    #[error("several cells match; select one with more keys")]
    SeveralCells,
    /// The cell of the metric is empty.
    #[error("empty in this cell")]
    Empty,
    /// The cell holds an unbounded FCT quantile (`>=X`): unfinished flows.
    #[error("unbounded: {0} (unfinished flows)")]
    Unbounded(String),
}

impl Comparison {
    /// ours − reference.
    pub fn difference(&self) -> Option<f64> {
        self.ours.as_ref().ok().map(|o| o - self.reference.value)
    }

    /// Whether ours is within the tolerance; `None` without a value of ours.
    pub fn within(&self) -> Option<bool> {
        let ours = *self.ours.as_ref().ok()?;
        Some(match self.reference.tolerance {
            Tolerance::Percent(pct) => {
                (ours - self.reference.value).abs() <= pct / 100.0 * self.reference.value.abs()
            }
            Tolerance::Range(lo, hi) => (lo..=hi).contains(&ours),
        })
    }
}

/// A value as the text summary.csv would hold: strings unquoted, numbers as written.
fn plain(v: &Value) -> String {
    match v {
        Value::String(s) => s.value().clone(),
        other => other.to_string().trim().to_string(),
    }
}

fn number(v: Option<&Item>) -> Option<f64> {
    let v = v?.as_value()?;
    v.as_float().or_else(|| v.as_integer().map(|i| i as f64))
}

/// Parses a reference file; the error names the entry (from 1) and the key.
pub fn parse(text: &str) -> Result<Vec<Reference>, ReferenceError> {
    let doc: DocumentMut = text
        .parse()
        .map_err(|e: toml_edit::TomlError| ReferenceError::NotToml(e.to_string()))?;
    let Some(entries) = doc.get("reference") else {
        return Err(ReferenceError::NoEntries);
    };
    let tables = entries
        .as_array_of_tables()
        .ok_or(ReferenceError::NotEntries)?;
    if tables.len() > MAX_REFERENCES {
        return Err(ReferenceError::TooMany);
    }
    let mut out = Vec::new();
    for (i, t) in tables.iter().enumerate() {
        let at = |key: &str, problem: &str| ReferenceError::Entry {
            entry: i + 1,
            key: key.to_string(),
            problem: problem.to_string(),
        };
        let metric = t.get("metric").and_then(Item::as_str).ok_or_else(|| {
            at(
                "metric",
                "`metric` (a summary.csv column, e.g. \"fct_p50_s\") is missing",
            )
        })?;
        let value =
            number(t.get("value")).ok_or_else(|| at("value", "`value` (a number) is missing"))?;
        let tolerance = match (t.get("tolerance_pct"), t.get("range")) {
            (Some(p), None) => Tolerance::Percent(
                number(Some(p))
                    .filter(|p| *p >= 0.0)
                    .ok_or_else(|| at("tolerance_pct", "`tolerance_pct` must be a number ≥ 0"))?,
            ),
            (None, Some(r)) => {
                let r = r.as_array().filter(|r| r.len() == 2);
                let ends: Option<Vec<f64>> = r.map(|r| {
                    r.iter()
                        .filter_map(|v| v.as_float().or_else(|| v.as_integer().map(|i| i as f64)))
                        .collect()
                });
                match ends.as_deref() {
                    Some(&[lo, hi]) if lo <= hi => Tolerance::Range(lo, hi),
                    _ => return Err(at("range", "`range` must be [low, high] with low <= high")),
                }
            }
            _ => {
                return Err(at(
                    "tolerance_pct",
                    "give exactly one of `tolerance_pct` and `range`",
                ))
            }
        };
        let cell = match t.get("cell") {
            None => Vec::new(),
            Some(c) => c
                .as_table_like()
                .ok_or_else(|| {
                    at(
                        "cell",
                        "`cell` must be a table of summary.csv column = value",
                    )
                })?
                .iter()
                .map(|(k, v)| {
                    v.as_value()
                        .map(|v| (k.to_string(), plain(v)))
                        .ok_or_else(|| {
                            at(&format!("cell.{k}"), &format!("cell.{k} must be a value"))
                        })
                })
                .collect::<Result<_, _>>()?,
        };
        out.push(Reference {
            source: t
                .get("source")
                .and_then(Item::as_str)
                .unwrap_or("")
                .to_string(),
            cell,
            metric: metric.to_string(),
            value,
            tolerance,
        });
    }
    Ok(out)
}

/// Compares each reference with the one summary row its cell selects.
pub fn compare(references: &[Reference], rows: &[SummaryRow]) -> Vec<Comparison> {
    // The rows as summary.csv columns, so that any column can be selected or compared.
    let table = super::display_records(rows);
    let (header, records) = table
        .split_first()
        .map_or((&[][..], &[][..]), |(h, r)| (&h[..], r));
    let col = |name: &str| header.iter().position(|h| h == name);
    references
        .iter()
        .map(|r| {
            let ours = (|| {
                let metric = col(&r.metric).ok_or_else(|| NoValue::NoColumn(r.metric.clone()))?;
                let mut matching = records.iter().filter(|rec| {
                    r.cell
                        .iter()
                        .all(|(k, v)| col(k).and_then(|c| rec.get(c)) == Some(v))
                });
                let rec = matching.next().ok_or(NoValue::NoCell)?;
                if matching.next().is_some() {
                    return Err(NoValue::SeveralCells);
                }
                let value = rec.get(metric).map(String::as_str).unwrap_or("");
                value.parse::<f64>().map_err(|_| match value {
                    "" => NoValue::Empty,
                    // An unbounded FCT quantile: unfinished flows, no number to compare.
                    v => NoValue::Unbounded(v.to_string()),
                })
            })();
            Comparison {
                reference: r.clone(),
                ours,
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn references_parse_and_bad_ones_say_why() {
        let text = "[[reference]]\nsource = \"T6\"\nmetric = \"fct_p50_s\"\nvalue = 36.213\n\
                    tolerance_pct = 2\n[reference.cell]\ncc = \"tcp-newreno\"\nbuffer_bytes = 2500\n\
                    [[reference]]\nmetric = \"fct_p50_s\"\nvalue = 69\nrange = [64.228, 73.388]\n";
        let refs = parse(text).unwrap();
        assert_eq!(refs.len(), 2);
        assert_eq!(
            refs[0].cell,
            [
                ("cc".to_string(), "tcp-newreno".to_string()),
                ("buffer_bytes".to_string(), "2500".to_string())
            ]
        );
        assert_eq!(refs[0].tolerance, Tolerance::Percent(2.0));
        assert_eq!(refs[1].tolerance, Tolerance::Range(64.228, 73.388));
        assert_eq!(refs[1].value, 69.0);
        let e = parse("[[reference]]\nmetric = \"x\"\nvalue = 1\n").unwrap_err();
        assert_eq!(
            e.to_string(),
            "[[reference]] 1: give exactly one of `tolerance_pct` and `range`"
        );
        assert!(
            matches!(e, ReferenceError::Entry { entry: 1, ref key, .. } if key == "tolerance_pct")
        );
        assert_eq!(parse("x = 1").unwrap_err(), ReferenceError::NoEntries);
        let e = parse("[[reference]]\nvalue = 1\ntolerance_pct = 1\n").unwrap_err();
        assert!(matches!(e, ReferenceError::Entry { entry: 1, ref key, .. } if key == "metric"));
        assert!(e.to_string().contains("`metric`"));
    }

    #[test]
    fn within_tolerance() {
        let c = |ours: f64, tolerance| Comparison {
            reference: Reference {
                source: String::new(),
                cell: Vec::new(),
                metric: "m".into(),
                value: 100.0,
                tolerance,
            },
            ours: Ok(ours),
        };
        assert_eq!(c(102.0, Tolerance::Percent(2.0)).within(), Some(true));
        assert_eq!(c(102.5, Tolerance::Percent(2.0)).within(), Some(false));
        assert_eq!(c(102.5, Tolerance::Percent(2.0)).difference(), Some(2.5));
        assert_eq!(c(50.0, Tolerance::Range(40.0, 50.0)).within(), Some(true));
        assert_eq!(c(50.1, Tolerance::Range(40.0, 50.0)).within(), Some(false));
    }
}
