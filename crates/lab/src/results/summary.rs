//! `summary.csv`: one row per (parameter combination, cc, workload), all replications pooled,
//! each flow one sample (docs/experiments.md §7).

use std::collections::BTreeMap;

use super::csv;
use super::flows::{is_sweep_column, MESH_FLOW_COLUMNS, OBSERVE_COLUMNS};
use super::record::Unfinished;
use crate::stats::{self, Quantile, Tally, SUMMARY_QUANTILES};

/// One row of `summary.csv`.
#[derive(Debug, Clone, PartialEq)]
pub struct SummaryRow {
    /// The parameter combination.
    pub combination: usize,
    /// `(column, value)` of the sweep columns of `flows.csv`.
    pub sweep: Vec<(String, String)>,
    /// Flows in the run.
    pub clients: String,
    /// Bottleneck buffer (downlink).
    pub buffer_bytes: String,
    /// The loss label.
    pub loss: String,
    /// The algorithm.
    pub cc: String,
    /// The workload.
    pub workload: String,
    /// Flows pooled (all replications).
    pub flows: usize,
    /// Flows that completed (finished FCTs).
    pub n: usize,
    /// Unfinished flows that gave up ([`Unfinished::GaveUp`]).
    pub unfinished_gave_up: usize,
    /// Unfinished flows still running when the run ended ([`Unfinished::TimeCap`]).
    pub unfinished_time_cap: usize,
    /// FCT min, p10, p25, p50, p75, p90, p95, max over every flow, an unfinished flow being a
    /// censored value (at least its `elapsed_s`, above every finished FCT;
    /// [`stats::censored_quantile`]).
    pub fct_s: Option<[Quantile; 8]>,
    /// Mean FCT; `None` when a flow is unfinished (the mean is then unbounded).
    pub fct_mean_s: Option<f64>,
    /// Sample standard deviation (n − 1) of the FCT; `None` below two completed flows or
    /// when a flow is unfinished.
    pub fct_sd_s: Option<f64>,
    /// 95 % confidence interval of the median FCT: percentile bootstrap,
    /// [`stats::BOOTSTRAP_RESAMPLES`] resamples seeded by [`cell_seed`], unfinished flows
    /// resampled as +∞ (an end is +∞ when it is unbounded).
    pub fct_p50_ci95_s: Option<(f64, f64)>,
    /// Median per flow of retransmissions.
    pub retransmissions_median: Option<f64>,
    /// Median per flow of unnecessary retransmissions.
    pub unnecessary_retransmissions_median: Option<f64>,
    /// Frequency of transmissions over every successful exchange of the group.
    pub transmission_counts: Vec<u64>,
    /// Observers only (`workload = "observe"`): the group's notification metrics.
    pub observe: Option<ObserveSummary>,
    /// Mesh runs only (empty otherwise): `(column, median over the cell's flows)` of every
    /// [`MESH_FLOW_COLUMNS`] column (`fct50_s_median` followed by
    /// `fct50_s_median_at_least` and `fct50_unfinished`, see [`FCT50_COLUMNS`]), then
    /// `retransmissions_per_run`: the retransmissions of the cell's flows summed per run,
    /// averaged over its runs.
    pub mesh: Vec<(String, Option<f64>)>,
    /// Mesh runs only: the median of `fct50_s`, a flow short of 50 answers a censored value
    /// (at least its `elapsed_s`); and how many flows are short of 50 answers.
    pub fct50: Option<(Option<Quantile>, usize)>,
}

/// The notification metrics of a group of observers in `summary.csv` (issue 16).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ObserveSummary {
    /// Notifications generated for the group's observers, all replications.
    pub sent: u64,
    /// Of those, lost (never received).
    pub lost: u64,
    /// Median over observers of their median delay (generation → reception), seconds.
    pub delay_p50_median_s: Option<f64>,
    /// Median over observers of their 95th-percentile delay, seconds.
    pub delay_p95_median_s: Option<f64>,
    /// The largest delay of any observer, seconds.
    pub delay_max_s: Option<f64>,
    /// Median over observers of their CON-notification retransmissions.
    pub retransmissions_median: Option<f64>,
}

/// What a group's observe summary needs, row by row.
#[derive(Debug, Default)]
struct ObserveAcc {
    sent: u64,
    lost: u64,
    p50: Tally,
    p95: Tally,
    max: Option<f64>,
    rexmit: Tally,
}

/// The notification columns of `summary.csv`, present when a row has them.
const OBSERVE_SUMMARY_COLUMNS: &[&str] = &[
    "notifications_sent",
    "notifications_lost",
    "notification_loss_ratio",
    "notification_delay_p50_median_s",
    "notification_delay_p95_median_s",
    "notification_delay_max_s",
    "notification_retransmissions_median",
];

/// Groups the records of `flows.csv` (header first) into summary rows, ordered by
/// combination, then by first appearance of (cc, workload).
pub fn summarize(records: &[Vec<String>]) -> Vec<SummaryRow> {
    let Some((header, rows)) = records.split_first() else {
        return Vec::new();
    };
    let mut summarizer = Summarizer::new(header.clone());
    for row in rows {
        summarizer.add(row);
    }
    summarizer.finish()
}

/// What one summary row needs of its flows, accumulated row by row.
struct Acc {
    /// The group's first row: the sweep values, clients, buffer, loss, cc and workload.
    first: Vec<String>,
    flows: usize,
    /// FCT of each completed flow (all needed for the percentiles).
    fct: Vec<f64>,
    /// `elapsed_s` of each unfinished flow: the lower bound of its censored FCT.
    censored: Vec<f64>,
    /// Unfinished flows by reason ([`Unfinished::ALL`] order).
    unfinished: [usize; 2],
    /// Mesh runs: the `fct50_s` of the flows that got 50 answers, and the `elapsed_s` of the
    /// others (censored).
    fct50: Vec<f64>,
    fct50_censored: Vec<f64>,
    rexmit: Tally,
    unnec: Tally,
    counts: Vec<u64>,
    observe: Option<ObserveAcc>,
    /// Per mesh column of the header, the values of the cell's flows.
    mesh: Vec<Tally>,
    /// Sum of the cell's retransmissions and the runs they came from (rows of one run are
    /// contiguous, so a change of `run` starts another).
    rexmit_sum: f64,
    runs: usize,
    last_run: String,
}

/// [`summarize`] one row at a time, so that `flows.csv` need never be held whole: per group
/// it keeps the first row, the FCT of each completed flow and two tallies of small integers.
pub struct Summarizer {
    header: Vec<String>,
    /// Columns of combination, cc, workload, fct_s, retransmissions,
    /// unnecessary_retransmissions, transmission_counts, completed, clients, buffer_bytes,
    /// loss, unfinished, elapsed_s, fct50_s (`usize::MAX` when absent).
    cols: [usize; 14],
    /// The sweep columns that are not fixed columns.
    extra: Vec<usize>,
    /// The mesh columns present (a mesh plan's header), with their index.
    mesh: Vec<(usize, &'static str)>,
    /// Column of `run`.
    run: usize,
    groups: BTreeMap<(usize, usize), Acc>,
    /// (cc, workload) in order of first appearance.
    order: Vec<(String, String)>,
    /// Columns of [`OBSERVE_COLUMNS`] (`usize::MAX` when absent).
    observe_cols: Vec<usize>,
}

const COMBINATION: usize = 0;
const CC: usize = 1;
const WORKLOAD: usize = 2;
const FCT: usize = 3;
const REXMIT: usize = 4;
const UNNEC: usize = 5;
const COUNTS: usize = 6;
const COMPLETED: usize = 7;
const CLIENTS: usize = 8;
const BUFFER: usize = 9;
const LOSS: usize = 10;
const UNFINISHED: usize = 11;
const ELAPSED: usize = 12;
const FCT50: usize = 13;

fn field(row: &[String], i: usize) -> &str {
    row.get(i).map(String::as_str).unwrap_or("")
}

impl Summarizer {
    /// A summarizer for rows under `header` (the fields of the header line of `flows.csv`).
    pub fn new(header: Vec<String>) -> Self {
        let idx = |name: &str| header.iter().position(|h| h == name).unwrap_or(usize::MAX);
        let cols = [
            "combination",
            "cc",
            "workload",
            "fct_s",
            "retransmissions",
            "unnecessary_retransmissions",
            "transmission_counts",
            "completed",
            "clients",
            "buffer_bytes",
            "loss",
            "unfinished",
            "elapsed_s",
            "fct50_s",
        ]
        .map(idx);
        let extra = (0..header.len())
            .filter(|i| is_sweep_column(&header[*i]))
            .collect();
        // A flow's server node is an identity, not a statistic: no median of it.
        let mesh = MESH_FLOW_COLUMNS
            .iter()
            .filter(|&&c| c != "server_node")
            .filter_map(|&c| header.iter().position(|h| h == c).map(|i| (i, c)))
            .collect();
        let observe_cols = OBSERVE_COLUMNS.iter().map(|c| idx(c)).collect();
        Summarizer {
            run: idx("run"),
            header,
            cols,
            extra,
            observe_cols,
            mesh,
            groups: BTreeMap::new(),
            order: Vec::new(),
        }
    }

    /// Adds one row of `flows.csv`.
    pub fn add(&mut self, row: &[String]) {
        let get = |c: usize| field(row, self.cols[c]);
        let c: usize = get(COMBINATION).parse().unwrap_or(0);
        let (cc, workload) = (get(CC), get(WORKLOAD));
        let o = match self
            .order
            .iter()
            .position(|(a, b)| a == cc && b == workload)
        {
            Some(o) => o,
            None => {
                self.order.push((cc.to_string(), workload.to_string()));
                self.order.len() - 1
            }
        };
        let num = |i: usize| get(i).parse::<f64>().ok();
        let (fct, rexmit, unnec) = (num(FCT), num(REXMIT), num(UNNEC));
        let completed = get(COMPLETED) == "true";
        let counts = get(COUNTS);
        let acc = self.groups.entry((c, o)).or_insert_with(|| Acc {
            first: row.to_vec(),
            flows: 0,
            fct: Vec::new(),
            censored: Vec::new(),
            unfinished: [0; 2],
            fct50: Vec::new(),
            fct50_censored: Vec::new(),
            rexmit: Tally::default(),
            unnec: Tally::default(),
            counts: Vec::new(),
            observe: None,
            mesh: vec![Tally::default(); self.mesh.len()],
            rexmit_sum: 0.0,
            runs: 0,
            last_run: String::new(),
        });
        acc.flows += 1;
        if !self.mesh.is_empty() {
            for (tally, &(i, _)) in acc.mesh.iter_mut().zip(&self.mesh) {
                if let Ok(x) = field(row, i).parse::<f64>() {
                    tally.push(x);
                }
            }
            let run = field(row, self.run);
            if acc.runs == 0 || acc.last_run != run {
                acc.runs += 1;
                acc.last_run = run.to_string();
            }
            acc.rexmit_sum += rexmit.unwrap_or(0.0);
        }
        // A flow that never sent a request has no elapsed time: censored at 0.
        let elapsed = num(ELAPSED).unwrap_or(0.0);
        if self.cols[FCT50] != usize::MAX {
            match num(FCT50) {
                Some(x) => acc.fct50.push(x),
                None => acc.fct50_censored.push(elapsed),
            }
        }
        if completed {
            acc.fct.extend(fct);
        } else {
            acc.censored.push(elapsed);
            // Without a known reason (a directory written before the column): the time cap.
            let why = Unfinished::parse(get(UNFINISHED)).unwrap_or(Unfinished::TimeCap);
            acc.unfinished[why as usize] += 1;
        }
        if let Some(x) = rexmit {
            acc.rexmit.push(x);
        }
        if let Some(x) = unnec {
            acc.unnec.push(x);
        }
        super::flows::add_counts(&mut acc.counts, counts);
        // An observer's row: its notification cells are filled (`flows::OBSERVE_COLUMNS`).
        let ocell = |k: usize| field(row, self.observe_cols[k]).parse::<f64>().ok();
        if let Some(sent) = ocell(0) {
            let o = acc.observe.get_or_insert_with(ObserveAcc::default);
            o.sent += sent as u64;
            o.lost += ocell(2).unwrap_or(0.0) as u64;
            if let Some(x) = ocell(4) {
                o.p50.push(x);
            }
            if let Some(x) = ocell(5) {
                o.p95.push(x);
            }
            if let Some(x) = ocell(6) {
                o.max = Some(o.max.map_or(x, |m: f64| m.max(x)));
            }
            if let Some(x) = ocell(7) {
                o.rexmit.push(x);
            }
        }
    }

    /// The summary rows, ordered by combination, then by first appearance of (cc, workload).
    pub fn finish(self) -> Vec<SummaryRow> {
        let Summarizer {
            header,
            cols,
            extra,
            groups,
            mesh,
            ..
        } = self;
        let mut samples: Vec<Vec<f64>> = Vec::with_capacity(groups.len());
        let mut rows: Vec<SummaryRow> = groups
            .into_iter()
            .map(|((c, _), mut acc)| {
                // Sorted here: the mean, deviation and bootstrap below read the sorted sample.
                sort(&mut acc.fct);
                sort(&mut acc.censored);
                let fct_s = stats::censored_summary(&acc.fct, &acc.censored);
                let mean_sd = stats::mean_sd(&acc.fct).filter(|_| acc.censored.is_empty());
                let fct50 = (!mesh.is_empty()).then(|| fct50_median(&mut acc));
                let first = &acc.first;
                let get = |col: usize| field(first, cols[col]).to_string();
                let row = SummaryRow {
                    combination: c,
                    sweep: extra
                        .iter()
                        .map(|&i| (header[i].clone(), field(first, i).to_string()))
                        .collect(),
                    clients: get(CLIENTS),
                    buffer_bytes: get(BUFFER),
                    loss: get(LOSS),
                    cc: get(CC),
                    workload: get(WORKLOAD),
                    flows: acc.flows,
                    n: acc.fct.len(),
                    unfinished_gave_up: acc.unfinished[Unfinished::GaveUp as usize],
                    unfinished_time_cap: acc.unfinished[Unfinished::TimeCap as usize],
                    fct_s,
                    fct_mean_s: mean_sd.map(|(m, _)| m),
                    fct_sd_s: mean_sd.and_then(|(_, sd)| sd),
                    fct_p50_ci95_s: None, // below
                    retransmissions_median: acc.rexmit.median(),
                    unnecessary_retransmissions_median: acc.unnec.median(),
                    mesh: mesh_medians(&mesh, &acc, fct50),
                    fct50,
                    transmission_counts: acc.counts,
                    observe: acc.observe.as_ref().map(|o| ObserveSummary {
                        sent: o.sent,
                        lost: o.lost,
                        delay_p50_median_s: o.p50.median(),
                        delay_p95_median_s: o.p95.median(),
                        delay_max_s: o.max,
                        retransmissions_median: o.rexmit.median(),
                    }),
                };
                // Unfinished flows resampled as +∞, above every finished FCT.
                let mut sample = acc.fct;
                sample.resize(sample.len() + acc.censored.len(), f64::INFINITY);
                samples.push(sample);
                row
            })
            .collect();
        bootstrap_all(&mut rows, &samples);
        rows
    }
}

/// Sorts a sample ascending, NaN dropped.
fn sort(values: &mut Vec<f64>) {
    values.retain(|v| !v.is_nan());
    values.sort_by(f64::total_cmp);
}

/// The columns `summary.csv` has for `fct50_s` on a mesh, in order: the median (empty when
/// unbounded), its lower bound when unbounded, the flows short of 50 answers.
pub const FCT50_COLUMNS: [&str; 3] = [
    "fct50_s_median",
    "fct50_s_median_at_least",
    "fct50_unfinished",
];

/// The censored median of a mesh cell's `fct50_s` and its flows short of 50 answers.
fn fct50_median(acc: &mut Acc) -> (Option<Quantile>, usize) {
    sort(&mut acc.fct50);
    sort(&mut acc.fct50_censored);
    let median = stats::censored_quantile(&acc.fct50, &acc.fct50_censored, 0.5);
    (median, acc.fct50_censored.len())
}

/// The mesh statistics of a cell (empty without mesh columns): the median of each mesh
/// column (`fct50_s` censored, [`FCT50_COLUMNS`]), then `retransmissions_per_run`.
fn mesh_medians(
    columns: &[(usize, &'static str)],
    acc: &Acc,
    fct50: Option<(Option<Quantile>, usize)>,
) -> Vec<(String, Option<f64>)> {
    if columns.is_empty() {
        return Vec::new();
    }
    let mut out: Vec<(String, Option<f64>)> = Vec::new();
    for (&(_, c), tally) in columns.iter().zip(&acc.mesh) {
        if c != "fct50_s" {
            out.push((format!("{c}_median"), tally.median()));
            continue;
        }
        let (median, short) = fct50.unwrap_or((None, 0));
        let values = [
            median.and_then(Quantile::exact),
            median.and_then(Quantile::at_least),
            Some(short as f64),
        ];
        out.extend(FCT50_COLUMNS.iter().map(|c| c.to_string()).zip(values));
    }
    out.push((
        "retransmissions_per_run".to_string(),
        (acc.runs > 0).then(|| acc.rexmit_sum / acc.runs as f64),
    ));
    out
}

/// Sets the bootstrap interval of every row (`samples[i]`: the sorted FCTs of `rows[i]`),
/// cells spread over the cores: the bootstrap is most of the summary's work, and each cell's
/// interval depends on its own sample and seed only, so the result is the same on any number
/// of threads.
fn bootstrap_all(rows: &mut [SummaryRow], samples: &[Vec<f64>]) {
    let threads = std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(1)
        .clamp(1, rows.len().max(1));
    let chunk = rows.len().div_ceil(threads).max(1);
    std::thread::scope(|scope| {
        for (rows, samples) in rows.chunks_mut(chunk).zip(samples.chunks(chunk)) {
            scope.spawn(move || {
                for (row, sample) in rows.iter_mut().zip(samples) {
                    let seed = cell_seed(row.combination, &row.cc, &row.workload);
                    row.fct_p50_ci95_s =
                        stats::bootstrap_median_ci(sample, stats::BOOTSTRAP_RESAMPLES, seed);
                }
            });
        }
    });
}

/// The seed of a cell's bootstrap: FNV-1a of `combination,cc,workload` through splitmix64,
/// so that it depends on the cell only (not on the order of rows or on other cells).
pub fn cell_seed(combination: usize, cc: &str, workload: &str) -> u64 {
    let text = format!("{combination},{cc},{workload}");
    crate::seed::splitmix64(crate::seed::fnv1a(crate::seed::FNV_OFFSET, text.as_bytes()))
}

/// `summary.csv` text: `combination`, the sweep columns, the cell, the sample sizes
/// (`incomplete` = flows − n = `unfinished_gave_up` + `unfinished_time_cap`), the FCT
/// quantiles (empty when unbounded) and the lower bound of an unbounded median, mean,
/// standard deviation and the 95 % bootstrap interval of the median (empty when unbounded),
/// the median retransmissions and unnecessary
/// retransmissions per flow, and the transmission-count histogram as one column per count
/// (`exchanges_tx1`: exchanges that took one transmission, ...; as many as the longest
/// histogram of the file).
pub fn to_csv(rows: &[SummaryRow]) -> String {
    let mut header: Vec<String> = vec!["combination".to_string()];
    header.extend(
        rows.first()
            .map(|r| r.sweep.iter().map(|(c, _)| c.clone()).collect::<Vec<_>>())
            .unwrap_or_default(),
    );
    for c in [
        "clients",
        "buffer_bytes",
        "loss",
        "cc",
        "workload",
        "flows",
        "n",
        "incomplete",
        "unfinished_gave_up",
        "unfinished_time_cap",
    ] {
        header.push(c.to_string());
    }
    for (name, _) in SUMMARY_QUANTILES {
        header.push(format!("fct_{name}_s"));
    }
    for c in [
        "fct_p50_at_least_s",
        "fct_mean_s",
        "fct_sd_s",
        "fct_p50_ci95_lo_s",
        "fct_p50_ci95_hi_s",
        "retransmissions_median",
        "unnecessary_retransmissions_median",
    ] {
        header.push(c.to_string());
    }
    let tx_columns = rows
        .iter()
        .map(|r| r.transmission_counts.len())
        .max()
        .unwrap_or(0);
    header.extend((1..=tx_columns).map(|k| format!("exchanges_tx{k}")));
    let mesh_columns: Vec<String> = rows
        .first()
        .map(|r| r.mesh.iter().map(|(c, _)| c.clone()).collect())
        .unwrap_or_default();
    header.extend(mesh_columns.iter().cloned());
    let observe = rows.iter().any(|r| r.observe.is_some());
    if observe {
        header.extend(OBSERVE_SUMMARY_COLUMNS.iter().map(|c| c.to_string()));
    }
    let mut out = csv::Text::with_header(header.iter().map(String::as_str));
    for r in rows {
        let mut fields: Vec<String> = vec![r.combination.to_string()];
        fields.extend(r.sweep.iter().map(|(_, v)| v.clone()));
        fields.extend([
            r.clients.clone(),
            r.buffer_bytes.clone(),
            r.loss.clone(),
            r.cc.clone(),
            r.workload.clone(),
            r.flows.to_string(),
            r.n.to_string(),
            (r.flows - r.n.min(r.flows)).to_string(),
            r.unfinished_gave_up.to_string(),
            r.unfinished_time_cap.to_string(),
        ]);
        for i in 0..SUMMARY_QUANTILES.len() {
            fields.push(csv::float(r.fct_s.and_then(|q| q[i].exact())));
        }
        fields.push(csv::float(r.fct_s.and_then(|q| q[3].at_least())));
        fields.push(csv::float(r.fct_mean_s));
        fields.push(csv::float(r.fct_sd_s));
        let finite = |x: f64| Some(x).filter(|x| x.is_finite());
        fields.push(csv::float(r.fct_p50_ci95_s.and_then(|c| finite(c.0))));
        fields.push(csv::float(r.fct_p50_ci95_s.and_then(|c| finite(c.1))));
        fields.push(csv::float(r.retransmissions_median));
        fields.push(csv::float(r.unnecessary_retransmissions_median));
        fields.extend((0..tx_columns).map(|k| {
            r.transmission_counts
                .get(k)
                .copied()
                .unwrap_or(0)
                .to_string()
        }));
        fields.extend(
            (0..mesh_columns.len()).map(|k| csv::float(r.mesh.get(k).and_then(|(_, x)| *x))),
        );
        if observe {
            fields.extend(observe_fields(r.observe.as_ref()));
        }
        out.record(fields.iter().map(String::as_str));
    }
    out.finish()
}

/// A row's cells of [`OBSERVE_SUMMARY_COLUMNS`] (empty for a group of other flows).
fn observe_fields(o: Option<&ObserveSummary>) -> Vec<String> {
    let Some(o) = o else {
        return vec![String::new(); OBSERVE_SUMMARY_COLUMNS.len()];
    };
    let ratio = (o.sent > 0).then(|| o.lost as f64 / o.sent as f64);
    vec![
        o.sent.to_string(),
        o.lost.to_string(),
        csv::float(ratio),
        csv::float(o.delay_p50_median_s),
        csv::float(o.delay_p95_median_s),
        csv::float(o.delay_max_s),
        csv::float(o.retransmissions_median),
    ]
}

#[cfg(test)]
mod observe_tests {
    use super::*;
    use crate::results::flows::FLOW_COLUMNS;

    /// Two observers and one continuous flow: only the observers' group gets notification
    /// cells, summed and medianed over its observers.
    #[test]
    fn observers_are_summarised_by_group() {
        let mut header: Vec<String> = FLOW_COLUMNS.iter().map(|c| c.to_string()).collect();
        header.extend(OBSERVE_COLUMNS.iter().map(|c| c.to_string()));
        let row = |cc: &str, workload: &str, observe: [&str; 8]| {
            let mut r: Vec<String> = header
                .iter()
                .map(|h| match h.as_str() {
                    "cc" => cc.to_string(),
                    "workload" => workload.to_string(),
                    "completed" => "true".to_string(),
                    "fct_s" => "300".to_string(),
                    _ => "0".to_string(),
                })
                .collect();
            let n = r.len();
            for (k, v) in observe.iter().enumerate() {
                r[n - 8 + k] = v.to_string();
            }
            r
        };
        let rows = vec![
            header.clone(),
            row(
                "cocoa",
                "observe",
                ["60", "57", "3", "0.5", "0.4", "1.5", "2.0", "4"],
            ),
            row(
                "cocoa",
                "observe",
                ["59", "59", "0", "0.6", "0.5", "0.9", "1.2", "2"],
            ),
            row("default", "continuous", [""; 8]),
        ];
        let s = summarize(&rows);
        assert_eq!(
            s[0].observe,
            Some(ObserveSummary {
                sent: 119,
                lost: 3,
                delay_p50_median_s: Some(0.45),
                delay_p95_median_s: Some(1.2),
                delay_max_s: Some(2.0),
                retransmissions_median: Some(3.0),
            })
        );
        assert_eq!(s[1].observe, None);
        let text = to_csv(&s);
        let mut lines = text.lines();
        assert!(lines.next().unwrap().ends_with(
            ",notifications_sent,notifications_lost,notification_loss_ratio,\
notification_delay_p50_median_s,notification_delay_p95_median_s,notification_delay_max_s,\
notification_retransmissions_median"
        ));
        let loss = 3.0 / 119.0;
        assert!(lines
            .next()
            .unwrap()
            .ends_with(&format!(",119,3,{loss},0.45,1.2,2,3")));
        assert!(lines.next().unwrap().ends_with(",,,,,,,"));
    }
}
