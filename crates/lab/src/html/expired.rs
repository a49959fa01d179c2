//! The expired retransmission timers of `timers.csv` (`[output] timers = true`): the armed
//! value of every expired CoAP timer, per cell, as a histogram on a log scale (the FASOR
//! paper's CDF of expired RTO values, Fig. 10). A sweep writes millions of rows (the FASOR
//! matrix: 15 million, 0.5 GB), so the file is streamed and each value is counted in one of
//! [`BINS_PER_DECADE`] bins per decade: the CDF is exact to 1.2 % of the value.

use std::collections::HashMap;
use std::path::Path;

use crate::files::{self, Input};

/// Histogram bins per decade of seconds.
pub const BINS_PER_DECADE: usize = 200;
/// The smallest value binned (1 ms); smaller values count in the first bin.
const LOW_DECADE: i32 = -3;
/// Decades binned: 1 ms to 10,000 s; larger values count in the last bin.
const DECADES: usize = 7;

/// Expired timer values of one cell, binned.
#[derive(Debug, Clone, Default)]
pub struct Histogram {
    /// Counts per bin; empty until the first value.
    pub counts: Vec<u64>,
    /// Values counted.
    pub total: u64,
}

impl Histogram {
    /// Counts `x` seconds.
    pub fn push(&mut self, x: f64) {
        if self.counts.is_empty() {
            self.counts = vec![0; BINS_PER_DECADE * DECADES];
        }
        let b = ((x.log10() - f64::from(LOW_DECADE)) * BINS_PER_DECADE as f64).floor();
        let b = if b.is_nan() { 0.0 } else { b };
        let i = (b.max(0.0) as usize).min(self.counts.len() - 1);
        self.counts[i] += 1;
        self.total += 1;
    }

    /// Adds `other`'s counts.
    pub fn merge(&mut self, other: &Histogram) {
        if other.total == 0 {
            return;
        }
        if self.counts.is_empty() {
            self.counts = vec![0; other.counts.len()];
        }
        for (a, b) in self.counts.iter_mut().zip(&other.counts) {
            *a += b;
        }
        self.total += other.total;
    }

    /// The CDF as a step line: (upper edge of each non-empty bin, fraction ≤ it).
    pub fn cdf(&self) -> Vec<(f64, f64)> {
        let mut out = Vec::new();
        let mut seen = 0u64;
        let mut last = 0.0;
        for (i, &c) in self.counts.iter().enumerate() {
            if c == 0 {
                continue;
            }
            let edge = 10f64.powf(f64::from(LOW_DECADE) + (i + 1) as f64 / BINS_PER_DECADE as f64);
            out.push((edge, last));
            seen += c;
            last = seen as f64 / self.total as f64;
            out.push((edge, last));
        }
        out
    }
}

/// The histograms of `dir/timers.csv` per summary row (`flow_cell`: `(run, flow)` → row
/// index), or `None` when the file does not exist or has no `run`, `flow`, `rto_s` column.
pub fn load(
    dir: &Path,
    flow_cell: &HashMap<(u64, u64), usize>,
    rows: usize,
) -> Option<Vec<Histogram>> {
    load_column(dir, "timers.csv", "rto_s", flow_cell, rows)
}

/// The histograms of column `column` of `dir/file` (a results CSV with `run` and `flow`
/// columns, such as `timers.csv` or a mesh's `exchanges.csv`) per summary row, streamed; rows
/// with an empty or non-numeric value are skipped. `None` when the file or a column is missing.
pub fn load_column(
    dir: &Path,
    file: &str,
    column: &str,
    flow_cell: &HashMap<(u64, u64), usize>,
    rows: usize,
) -> Option<Vec<Histogram>> {
    let file = files::open(&dir.join(file), Input::SideTable).ok()?;
    let mut reader = std::io::BufReader::with_capacity(1 << 20, file);
    let mut line = String::new();
    files::read_line(&mut reader, &mut line).ok()?;
    let header: Vec<&str> = line.trim_end().split(',').collect();
    let col = |n: &str| header.iter().position(|h| *h == n);
    let (run, flow, rto) = (col("run")?, col("flow")?, col(column)?);
    let mut out = vec![Histogram::default(); rows];
    let mut last: Option<((u64, u64), Option<usize>)> = None;
    loop {
        match files::read_line(&mut reader, &mut line) {
            Ok(true) => {}
            Ok(false) => break,
            // Past the limit of a side table, or a line past the line limit: no histogram
            // rather than part of one.
            Err(_) => return None,
        }
        let (mut r, mut f, mut v) = (None, None, None);
        for (i, field) in line.trim_end().split(',').enumerate() {
            if i == run {
                r = field.parse::<u64>().ok();
            } else if i == flow {
                f = field.parse::<u64>().ok();
            } else if i == rto {
                v = field.parse::<f64>().ok();
            }
        }
        let (Some(r), Some(f), Some(v)) = (r, f, v) else {
            continue;
        };
        let cell = match last {
            Some((key, cell)) if key == (r, f) => cell,
            _ => {
                let cell = flow_cell.get(&(r, f)).copied();
                last = Some(((r, f), cell));
                cell
            }
        };
        if let Some(c) = cell {
            out[c].push(v);
        }
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_histogram_cdf_is_within_a_bin_of_the_values() {
        let mut h = Histogram::default();
        for x in [1.0, 2.0, 2.0, 4.0] {
            h.push(x);
        }
        let cdf = h.cdf();
        assert_eq!(cdf.len(), 6);
        assert_eq!(cdf.last().unwrap().1, 1.0);
        // 2 s lands in the bin [2, 2.023).
        let (edge, frac) = cdf[3];
        assert!((edge / 2.0 - 1.0).abs() < 0.012, "{edge}");
        assert_eq!(frac, 0.75);
        let mut g = Histogram::default();
        g.merge(&h);
        g.merge(&Histogram::default());
        assert_eq!(g.total, 4);
        h.push(0.0);
        h.push(1e9);
        assert_eq!(h.total, 6);
    }
}
