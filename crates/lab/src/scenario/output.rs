//! `[output]`: what a sweep writes besides its results files. Not a sweep axis: its lists are
//! read as lists.
//!
//! ```toml
//! [output]
//! trace = [0, 5]          # trace runs 0 and 5 (or "first", or "0,5,10-12")
//! trace_format = "csv"    # "parquet" (default) or "csv"
//! timers = true           # timers.csv: every expired retransmission timer
//! intervals = true        # intervals.csv: payload per 50-ms interval (default: on a mesh)
//! exchanges = true        # exchanges.csv: one row per ended exchange
//! ```
//!
//! `timers`, `intervals` and `exchanges` change what a run records, so they are read with the
//! run configuration (`RunConfig`, in the reader); the trace keys are read here.

use toml_edit::{Item, Value};

use super::reader::{shown, Reader};
use super::trace_choice::{RunSelection, TraceFormat};
use super::ScenarioError;

/// Keys valid in `[output]`.
pub(super) const OUTPUT_KEYS: &[&str] =
    &["trace", "trace_format", "timers", "intervals", "exchanges"];

/// The `[output]` table of a scenario.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Output {
    /// `trace`: the runs to trace (into `--trace DIR`, or `OUT/trace` without it).
    pub trace: Option<RunSelection>,
    /// `trace_format`: the trace tables' format.
    pub trace_format: Option<TraceFormat>,
}

/// Reads `[output]` of `doc`.
pub(super) fn read(reader: &Reader<'_>, doc: &toml_edit::Table) -> Result<Output, ScenarioError> {
    let Some(item) = doc.get("output") else {
        return Ok(Output::default());
    };
    let t = item
        .as_table_like()
        .ok_or_else(|| reader.bad(item.span(), "output", item.type_name(), "a table"))?;
    reader.check_keys(t, "output", OUTPUT_KEYS)?;
    let mut out = Output::default();
    if let Some(Item::Value(v)) = t.get("trace") {
        let runs = match v {
            Value::Array(list) => {
                let mut ranges = Vec::with_capacity(list.len());
                for e in list.iter() {
                    let n = e.as_integer().and_then(|n| usize::try_from(n).ok());
                    let n = n.ok_or_else(|| {
                        reader.bad(
                            e.span(),
                            "output.trace",
                            &shown(e),
                            "a run id (an integer >= 0)",
                        )
                    })?;
                    ranges.push((n, n));
                }
                Ok(RunSelection::Runs(ranges))
            }
            Value::String(s) => RunSelection::parse(s.value()).map_err(|e| e.to_string()),
            _ => Err("a list of run ids, or a string such as \"first\" or \"0,5,10-12\"".into()),
        };
        out.trace = Some(runs.map_err(|e| reader.bad(v.span(), "output.trace", &shown(v), e))?);
    } else if let Some(other) = t.get("trace") {
        return Err(reader.bad(
            other.span(),
            "output.trace",
            other.type_name(),
            "a list of run ids",
        ));
    }
    if let Some(item) = t.get("trace_format") {
        let text = item.as_str().unwrap_or_default();
        let format = TraceFormat::parse(text)
            .map_err(|_| reader.bad(item.span(), "output.trace_format", text, "parquet or csv"))?;
        out.trace_format = Some(format);
    }
    Ok(out)
}
