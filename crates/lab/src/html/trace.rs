//! Timelines of traced runs, when the results directory has them:
//!
//! - `trace/<run>/events.parquet` or `events.csv` (what `coaplab run --trace` writes, in either
//!   `--trace-format`) with columns `time_s, flow, event, rto_s`: the RTO of each flow over time
//!   (rows with an empty `rto_s` are skipped);
//! - `trace/<run>/queue.parquet` or `queue.csv` with columns `time_s, queue_bytes`: the
//!   bottleneck queue (both directions).
//!
//! Either file may be absent; a directory without `trace/` has no timelines.

use std::collections::BTreeMap;
use std::path::Path;

use super::plot::Series;
use crate::results::csv;

/// Traced runs shown at most (the first by name).
pub const MAX_RUNS: usize = 6;
/// Flows drawn per RTO chart at most (the first by number).
pub const MAX_FLOWS: usize = 8;
/// Bytes read of one trace file at most; a longer file is read up to there.
pub const MAX_FILE_BYTES: u64 = 64 << 20;

/// The timelines of one traced run.
pub struct Timeline {
    /// The run's directory name under `trace/`.
    pub run: String,
    /// RTO (s) over time (s), one series per flow.
    pub rto: Vec<Series>,
    /// Queue (bytes) over time (s); empty without `queue.csv`.
    pub queue: Vec<(f64, f64)>,
}

/// The table `stem`.parquet, else `stem`.csv, as rows of text (header first).
fn read_table(base: &Path, stem: &str) -> Option<Vec<Vec<String>>> {
    read_parquet(&base.join(format!("{stem}.parquet")))
        .or_else(|| read(&base.join(format!("{stem}.csv"))))
}

/// A Parquet trace table as rows of text (header first; nulls empty), at most
/// [`MAX_FILE_BYTES`] of file.
fn read_parquet(path: &Path) -> Option<Vec<Vec<String>>> {
    use arrow_cast::display::{ArrayFormatter, FormatOptions};
    use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
    let file = std::fs::File::open(path).ok()?;
    if file.metadata().ok()?.len() > MAX_FILE_BYTES {
        return None;
    }
    let builder = ParquetRecordBatchReaderBuilder::try_new(file).ok()?;
    let header: Vec<String> = builder
        .schema()
        .fields()
        .iter()
        .map(|f| f.name().clone())
        .collect();
    let mut rows = vec![header];
    let options = FormatOptions::default();
    for batch in builder.build().ok()? {
        let batch = batch.ok()?;
        let formatters: Vec<ArrayFormatter<'_>> = batch
            .columns()
            .iter()
            .map(|c| ArrayFormatter::try_new(c.as_ref(), &options).ok())
            .collect::<Option<_>>()?;
        for row in 0..batch.num_rows() {
            rows.push(
                formatters
                    .iter()
                    .map(|f| f.value(row).to_string())
                    .collect(),
            );
        }
    }
    Some(rows)
}

fn read(path: &Path) -> Option<Vec<Vec<String>>> {
    use std::io::Read as _;
    let file = std::fs::File::open(path).ok()?;
    let mut text = String::new();
    file.take(MAX_FILE_BYTES).read_to_string(&mut text).ok()?;
    Some(csv::parse(&text))
}

/// `(x, y)` of the columns named `x` and `y`, rows with a non-number skipped, and the
/// column `key` of each row (empty when absent).
fn columns(records: &[Vec<String>], x: &str, y: &str, key: &str) -> Vec<(String, f64, f64)> {
    let Some((header, rows)) = records.split_first() else {
        return Vec::new();
    };
    let col = |n: &str| header.iter().position(|h| h == n);
    let (Some(xc), Some(yc)) = (col(x), col(y)) else {
        return Vec::new();
    };
    let kc = col(key);
    rows.iter()
        .filter_map(|r| {
            let num = |c: usize| r.get(c)?.parse::<f64>().ok().filter(|v| v.is_finite());
            let k = kc.and_then(|c| r.get(c)).cloned().unwrap_or_default();
            Some((k, num(xc)?, num(yc)?))
        })
        .collect()
}

/// The timelines under `dir/trace/`, at most [`MAX_RUNS`]; none when it does not exist.
pub fn load(dir: &Path) -> Vec<Timeline> {
    let Ok(entries) = std::fs::read_dir(dir.join("trace")) else {
        return Vec::new();
    };
    let mut runs: Vec<_> = entries
        .filter_map(Result::ok)
        .filter(|e| e.path().is_dir())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    runs.sort();
    runs.into_iter()
        .take(MAX_RUNS)
        .filter_map(|run| {
            let base = dir.join("trace").join(&run);
            let mut per_flow: BTreeMap<u64, Vec<(f64, f64)>> = BTreeMap::new();
            if let Some(events) = read_table(&base, "events") {
                for (flow, t, rto) in columns(&events, "time_s", "rto_s", "flow") {
                    let flow: u64 = flow.parse().unwrap_or(0);
                    if per_flow.len() < MAX_FLOWS || per_flow.contains_key(&flow) {
                        per_flow.entry(flow).or_default().push((t, rto));
                    }
                }
            }
            let queue: Vec<(f64, f64)> = read_table(&base, "queue")
                .map(|q| {
                    columns(&q, "time_s", "queue_bytes", "")
                        .into_iter()
                        .map(|(_, t, b)| (t, b))
                        .collect()
                })
                .unwrap_or_default();
            let rto: Vec<Series> = per_flow
                .into_iter()
                .map(|(flow, points)| Series {
                    label: format!("flow {flow}"),
                    points,
                })
                .collect();
            (!rto.is_empty() || !queue.is_empty()).then_some(Timeline { run, rto, queue })
        })
        .collect()
}
