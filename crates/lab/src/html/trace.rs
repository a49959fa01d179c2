//! Timelines of traced runs, when the results directory has them (what `coaplab run --trace`
//! writes into `OUT/trace/`, in either `--trace-format`):
//!
//! - `trace/<run>/events.parquet` or `events.csv`, columns `time_s, flow, rto_s`: the RTO of
//!   each flow over time, as steps (a value holds until it changes; rows with an empty `rto_s`
//!   are skipped);
//! - `trace/<run>/queue.parquet` or `queue.csv`, columns `time_s, queue_bytes` and, when
//!   present, `link` (one line per direction), `event` and `drop_cause` (drops marked by
//!   cause);
//! - `trace/<run>/tcp.parquet` or `tcp.csv`, columns `time_s, flow, connection, side,
//!   cwnd_segments`: the congestion window per ACK of CoAP over TCP runs.
//!
//! Any file may be absent; a directory without `trace/` has no timelines.

use std::collections::BTreeMap;
use std::path::Path;

use super::plot::{Marks, Series};
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
    /// The run id (`runNNNNNN`), when the name is one.
    pub run_id: Option<u64>,
    /// RTO (s) over time (s), one step series per flow: a value holds until it changes.
    pub rto: Vec<Series>,
    /// Queue (bytes) over time (s), one series per link direction (`up`, `down`), as steps.
    pub queue: Vec<Series>,
    /// Drops: `(time, backlog)` per link direction and cause (`down buffer_overflow`).
    pub drops: Vec<Marks>,
    /// TCP congestion window (segments) per ACK, one series per flow's connection end.
    pub cwnd: Vec<Series>,
}

/// Time buckets of a queue line: its minimum and maximum in each, so that a burst stays
/// visible however many changes the FIFO had.
pub const ENVELOPE_BUCKETS: usize = 200;

/// The min/max envelope of a step line over `buckets` equal time buckets of [0, `end`]: per
/// bucket with points, its minimum then its maximum (in time order of their first
/// occurrence); the line as it is when it has at most 2 × `buckets` points.
pub fn envelope(points: &[(f64, f64)], end: f64, buckets: usize) -> Vec<(f64, f64)> {
    if points.len() <= 2 * buckets || end <= 0.0 {
        return points.to_vec();
    }
    let width = end / buckets as f64;
    let mut out = Vec::with_capacity(2 * buckets);
    let mut i = 0;
    while i < points.len() {
        let b = ((points[i].0 / width) as usize).min(buckets - 1);
        let mut j = i;
        let (mut lo, mut hi) = (points[i], points[i]);
        while j < points.len() && ((points[j].0 / width) as usize).min(buckets - 1) == b {
            if points[j].1 < lo.1 {
                lo = points[j];
            }
            if points[j].1 > hi.1 {
                hi = points[j];
            }
            j += 1;
        }
        if lo.0 <= hi.0 {
            out.extend([lo, hi]);
        } else {
            out.extend([hi, lo]);
        }
        i = j;
    }
    out
}

/// `points` as steps: each value holds until the next one, the last until `end`.
pub fn steps(points: &[(f64, f64)], end: f64) -> Vec<(f64, f64)> {
    let mut out = Vec::with_capacity(2 * points.len() + 1);
    for (i, &(t, v)) in points.iter().enumerate() {
        if i > 0 {
            out.push((t, points[i - 1].1));
        }
        out.push((t, v));
    }
    if let Some(&(t, v)) = points.last() {
        if end > t {
            out.push((end, v));
        }
    }
    out
}

/// The table `stem`.parquet, else `stem`.csv, as rows of text (header first).
pub(crate) fn read_table(base: &Path, stem: &str) -> Option<Vec<Vec<String>>> {
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

/// `(key, x, y)` of the columns named `x` and `y`, rows with a non-number skipped, `key`
/// the columns `keys` of the row joined by a space (empty when absent).
fn columns(records: &[Vec<String>], x: &str, y: &str, keys: &[&str]) -> Vec<(String, f64, f64)> {
    let Some((header, rows)) = records.split_first() else {
        return Vec::new();
    };
    let col = |n: &str| header.iter().position(|h| h == n);
    let (Some(xc), Some(yc)) = (col(x), col(y)) else {
        return Vec::new();
    };
    let kcs: Vec<Option<usize>> = keys.iter().map(|k| col(k)).collect();
    rows.iter()
        .filter_map(|r| {
            let num = |c: usize| r.get(c)?.parse::<f64>().ok().filter(|v| v.is_finite());
            let k = kcs
                .iter()
                .map(|c| c.and_then(|c| r.get(c)).cloned().unwrap_or_default())
                .collect::<Vec<_>>()
                .join(" ");
            Some((k, num(xc)?, num(yc)?))
        })
        .collect()
}

/// Series of `(key, x, y)` rows, one per key (at most [`MAX_FLOWS`], the first by key order),
/// as steps to `end`, labelled `prefix key`.
fn step_series(rows: Vec<(String, f64, f64)>, end: f64, prefix: &str) -> Vec<Series> {
    let mut per_key: BTreeMap<String, Vec<(f64, f64)>> = BTreeMap::new();
    for (k, t, v) in rows {
        per_key.entry(k).or_default().push((t, v));
    }
    per_key
        .into_iter()
        .take(MAX_FLOWS)
        .enumerate()
        .map(|(i, (k, points))| Series {
            label: format!("{prefix}{k}").trim().to_string(),
            // Yellow (the palette's eighth) reads poorly as a thin line on white.
            colour: i % 7,
            points: steps(&points, end),
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
            let events = read_table(&base, "events").unwrap_or_default();
            let queue = read_table(&base, "queue").unwrap_or_default();
            let tcp = read_table(&base, "tcp").unwrap_or_default();
            let rto_rows = columns(&events, "time_s", "rto_s", &["flow"]);
            let end = [&events, &queue, &tcp]
                .iter()
                .flat_map(|t| columns(t, "time_s", "time_s", &[]))
                .map(|(_, t, _)| t)
                .fold(0.0, f64::max);
            // Flows in numeric order: keys padded to equal width.
            let padded: Vec<(String, f64, f64)> = rto_rows
                .into_iter()
                .map(|(k, t, v)| (format!("{k:>10}"), t, v))
                .collect();
            let mut rto = step_series(padded, end, "flow ");
            for s in &mut rto {
                s.label = s.label.split_whitespace().collect::<Vec<_>>().join(" ");
            }
            let queue_rows = columns(&queue, "time_s", "queue_bytes", &["link"]);
            let mut queue_series = step_series(queue_rows, end, "");
            for s in &mut queue_series {
                s.points = envelope(&s.points, end, ENVELOPE_BUCKETS);
            }
            let mut drops: Vec<Marks> = Vec::new();
            for (k, t, b) in columns(
                &queue,
                "time_s",
                "queue_bytes",
                &["link", "event", "drop_cause"],
            ) {
                let mut parts = k.split(' ');
                let (link, event, cause) = (
                    parts.next().unwrap_or(""),
                    parts.next().unwrap_or(""),
                    parts.next().unwrap_or(""),
                );
                if event != "drop" {
                    continue;
                }
                let label = format!("{link} drop: {cause}");
                match drops.iter_mut().find(|m| m.label == label) {
                    Some(m) => m.points.push((t, b)),
                    None => drops.push(Marks {
                        // Apart from the queue lines' colours (blue, vermillion).
                        colour: match (cause, link) {
                            ("link_error", "up") => 5,
                            ("link_error", _) => 2,
                            (_, "up") => 3,
                            _ => 6,
                        },
                        label,
                        points: vec![(t, b)],
                    }),
                }
            }
            let tcp_rows: Vec<(String, f64, f64)> = columns(
                &tcp,
                "time_s",
                "cwnd_segments",
                &["flow", "connection", "side"],
            )
            .into_iter()
            .map(|(k, t, v)| {
                let mut p = k.split(' ');
                let (f, c, side) = (
                    p.next().unwrap_or(""),
                    p.next().unwrap_or(""),
                    p.next().unwrap_or(""),
                );
                let f: u64 = f.parse().unwrap_or(0);
                (format!("{f:>10} conn {c} {side}"), t, v)
            })
            .collect();
            let mut cwnd = step_series(tcp_rows, end, "flow ");
            for s in &mut cwnd {
                s.label = s.label.split_whitespace().collect::<Vec<_>>().join(" ");
            }
            let run_id = run.strip_prefix("run").and_then(|n| n.parse().ok());
            (!rto.is_empty() || !queue_series.is_empty() || !cwnd.is_empty()).then_some(Timeline {
                run,
                run_id,
                rto,
                queue: queue_series,
                drops,
                cwnd,
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_hold_until_they_change() {
        assert_eq!(
            steps(&[(0.0, 2.0), (1.0, 4.0)], 3.0),
            [(0.0, 2.0), (1.0, 2.0), (1.0, 4.0), (3.0, 4.0)]
        );
        assert!(steps(&[], 1.0).is_empty());
    }

    #[test]
    fn the_envelope_keeps_each_buckets_extremes() {
        let points: Vec<(f64, f64)> = (0..1000)
            .map(|i| {
                (
                    f64::from(i) / 100.0,
                    if i == 555 { 9000.0 } else { f64::from(i % 3) },
                )
            })
            .collect();
        let e = envelope(&points, 10.0, 10);
        assert_eq!(e.len(), 20);
        assert!(e.contains(&(5.55, 9000.0)));
        assert_eq!(e.iter().map(|p| p.1).fold(f64::MAX, f64::min), 0.0);
        assert_eq!(envelope(&points[..5], 10.0, 10).len(), 5);
    }
}
