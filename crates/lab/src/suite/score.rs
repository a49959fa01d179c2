//! The suite's score: per experiment × algorithm the metrics of the flows under test, a rank
//! per experiment, and the overall rank aggregate (docs/suite.md, "Score").
//!
//! Per cell, over the flows of the groups under test, every run and combination pooled:
//!
//! - `fct_p50_s`, `fct_p95_s`: type-7 percentiles of the FCT, an unfinished flow a censored
//!   value above every finished one (as `summary.csv`): unbounded percentiles are `>=X`.
//! - `retransmissions_per_message`: retransmissions / successful exchanges, summed over flows.
//! - `unnecessary_per_flow`: mean unnecessary retransmissions per flow.
//! - `unfinished`: flows that did not complete (of `flows`).
//! - `jain`: Jain's index (Σx)² / (n·Σx²) of the flows' exchange rates x = exchanges /
//!   elapsed_s within each run, averaged over runs.
//! - `competitor_fct_p50_s`: the same median over the other groups (competing scenarios);
//!   `harm`: that median over the lowest competitor median of the experiment's algorithms,
//!   minus 1 (0: the least harmful of those compared).
//!
//! Observe experiments (the flows under test run the `observe` workload) are scored on what an
//! observer waits for instead of the observation time, which is fixed: `metric` is
//! `notification_delay`, `fct_p50_s` the median over the observers of each observer's median
//! notification delay (generation at the server → reception), `fct_p95_s` the 95th percentile
//! over the observers of each one's 95th-percentile delay (an observer that received nothing
//! is censored at its observation time), `retransmissions_per_message` CON notification
//! retransmissions per received notification, and `notifications_sent`/`notifications_lost`
//! count the notifications (flows.csv keeps per-observer percentiles only, so the pooled
//! per-notification percentile is not available).
//!
//! Rank per experiment: by `fct_p50_s` (an unbounded median after every exact one), ties by
//! `fct_p95_s`; equal keys share the mean of their positions. Overall: the mean normalised
//! rank (rank − 1)/(n − 1) over the experiments (0: first everywhere, 1: last everywhere),
//! and the experiments won (the lowest rank of the experiment, shared wins counted for each).

use std::collections::HashMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use crate::files::{self, Input};
use crate::results::{csv, Manifest};
use crate::scenario::Scenario;
use crate::stats::{censored_quantile, Quantile};

/// Why a suite's results cannot be scored.
#[derive(Debug, thiserror::Error)]
pub enum ScoreError {
    /// A file could not be read.
    #[error(transparent)]
    Input(#[from] files::InputError),
    /// A file is not as `coaplab suite run` writes it.
    #[error("{}: {message}", path.display())]
    Format {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        message: String,
    },
}

/// The score of one experiment × algorithm.
#[derive(Debug, Clone, PartialEq)]
pub struct CellScore {
    /// The experiment's name.
    pub experiment: String,
    /// The algorithm.
    pub cc: String,
    /// Runs with flows under test.
    pub runs: usize,
    /// Flows under test.
    pub flows: usize,
    /// Of them, unfinished.
    pub unfinished: usize,
    /// FCT median (censored).
    pub fct_p50: Option<Quantile>,
    /// FCT 95th percentile (censored).
    pub fct_p95: Option<Quantile>,
    /// Retransmissions per successful exchange.
    pub retransmissions_per_message: Option<f64>,
    /// Mean unnecessary retransmissions per flow.
    pub unnecessary_per_flow: Option<f64>,
    /// Jain's index of exchange rates, the mean over runs.
    pub jain: Option<f64>,
    /// The competing flows' FCT median (censored); `None` without competitors.
    pub competitor_fct_p50: Option<Quantile>,
    /// Competitor median / the experiment's lowest competitor median − 1.
    pub harm: Option<f64>,
    /// What `fct_p50`/`fct_p95` measure: [`Metric::Fct`], or the observers' notification
    /// delays.
    pub metric: Metric,
    /// Observe experiments: notifications sent to the observers under test, and of them lost.
    pub notifications: Option<(u64, u64)>,
    /// Rank in the experiment, 1 = best (ties share the mean position).
    pub rank: f64,
    /// Per run: (retransmissions per message, FCT median) where both are exact: the
    /// report's ellipse.
    pub per_run: Vec<(f64, f64)>,
}

/// What a cell's `fct_p50`/`fct_p95` are percentiles of.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Metric {
    /// The flows' completion times.
    Fct,
    /// Per observer its notification delay percentile (the `observe` workload).
    NotificationDelay,
}

impl Metric {
    /// The name in `leaderboard.csv`.
    pub fn name(self) -> &'static str {
        match self {
            Metric::Fct => "fct",
            Metric::NotificationDelay => "notification_delay",
        }
    }
}

/// One algorithm's line of the overall ranking.
#[derive(Debug, Clone, PartialEq)]
pub struct Overall {
    /// The algorithm.
    pub cc: String,
    /// Mean of (rank − 1)/(n − 1) over the experiments scored.
    pub mean_normalised_rank: f64,
    /// Experiments where it has the lowest rank.
    pub wins: usize,
    /// Its rank per experiment, in suite order (`None`: not scored there).
    pub ranks: Vec<Option<f64>>,
}

/// Everything a suite's results directory scores to.
#[derive(Debug, Clone, PartialEq)]
pub struct Leaderboard {
    /// The experiments in suite order.
    pub experiments: Vec<String>,
    /// Per experiment × algorithm, experiment-major, algorithms in rank order.
    pub cells: Vec<CellScore>,
    /// Cells without results (`EXPERIMENT/ALG`).
    pub missing: Vec<String>,
    /// The algorithms, best first.
    pub overall: Vec<Overall>,
}

/// What [`score_cell`] pools.
#[derive(Default)]
struct Pool {
    finished: Vec<f64>,
    censored: Vec<f64>,
}

impl Pool {
    fn push(&mut self, fct: Option<f64>, elapsed: f64) {
        match fct {
            Some(x) => self.finished.push(x),
            None => self.censored.push(elapsed),
        }
    }
    fn quantile(&mut self, p: f64) -> Option<Quantile> {
        self.finished.sort_by(f64::total_cmp);
        self.censored.sort_by(f64::total_cmp);
        censored_quantile(&self.finished, &self.censored, p)
    }
}

/// Jain's fairness index of `x` (`None` when empty or all zero).
pub fn jain(x: &[f64]) -> Option<f64> {
    let sum: f64 = x.iter().sum();
    let squares: f64 = x.iter().map(|v| v * v).sum();
    (!x.is_empty() && squares > 0.0).then(|| sum * sum / (x.len() as f64 * squares))
}

/// Scores the cell in `dir` (a results directory of `coaplab run`): the flows of the groups
/// `under_test` against the rest ([`score_flows`]). Rank and harm are set by [`rank`].
pub fn score_cell(
    dir: &Path,
    experiment: &str,
    cc: &str,
    under_test: &[usize],
) -> Result<CellScore, ScoreError> {
    let manifest_path = dir.join("manifest.json");
    let format = |message: String| ScoreError::Format {
        path: manifest_path.clone(),
        message,
    };
    let manifest: Manifest =
        serde_json::from_str(&files::read_text(&manifest_path, Input::Manifest)?)
            .map_err(|e| format(e.to_string()))?;
    let scenario = scenario_as_run(&manifest, cc, under_test).map_err(format)?;
    let flows_path = dir.join("flows.csv");
    let records = csv::parse(&files::read_text(&flows_path, Input::ResultsTable)?);
    // The flow counts of the groups, per combination, from the scenario as run.
    let mut counts = |combination: usize| -> Result<Vec<u32>, String> {
        let last = scenario.combinations().saturating_sub(1);
        let config = scenario
            .config(combination.min(last))
            .map_err(|e| e.to_string())?;
        Ok(config.flows.iter().map(|f| f.count).collect())
    };
    let mut score =
        score_flows(&records, &mut counts, under_test).map_err(|message| ScoreError::Format {
            path: flows_path.clone(),
            message,
        })?;
    score.experiment = experiment.to_string();
    score.cc = cc.to_string();
    Ok(score)
}

/// The scenario of a cell as run, for its flow counts. A cell of an algorithm this process
/// does not know (one written in Python, registered in the `coaplab` Python package's process
/// that ran the cell) is read with Default CoAP in the groups under test: the flow counts do
/// not depend on the algorithm, so `coaplab suite report` and `merge` score such a suite too.
fn scenario_as_run(
    manifest: &Manifest,
    cc: &str,
    under_test: &[usize],
) -> Result<Scenario, String> {
    let parsed = Scenario::parse(&manifest.scenario_text, &manifest.file);
    match parsed {
        Err(e) if coaplab_cc::registry::lookup(cc).is_err() => {
            let sets: Vec<String> = under_test
                .iter()
                .map(|g| format!("flows.{g}.cc=default"))
                .collect();
            crate::scenario::apply_overrides(&manifest.scenario_text, &manifest.file, &sets)
                .and_then(|text| Scenario::parse(&text, &manifest.file))
                .map_err(|_| e.to_string())
        }
        other => other.map_err(|e| e.to_string()),
    }
}

/// The score of the records of a `flows.csv` (header first): `counts(combination)` gives
/// the flow count of each group of that combination (flows are numbered group by group), the
/// flows of the groups `under_test` are scored, the others are competitors. `experiment` and
/// `cc` are left empty, rank and harm unset. An error names the line and column.
pub fn score_flows(
    records: &[Vec<String>],
    counts: &mut dyn FnMut(usize) -> Result<Vec<u32>, String>,
    under_test: &[usize],
) -> Result<CellScore, String> {
    let Some((header, rows)) = records.split_first() else {
        return Err("empty".into());
    };
    let col = |name: &str| {
        header
            .iter()
            .position(|h| h == name)
            .ok_or_else(|| format!("no column {name}"))
    };
    let [c_run, c_comb, c_flow, c_fct, c_elapsed, c_rexmit, c_unnec, c_exch] = [
        "run",
        "combination",
        "flow",
        "fct_s",
        "elapsed_s",
        "retransmissions",
        "unnecessary_retransmissions",
        "exchanges",
    ]
    .map(col);
    let (c_run, c_comb, c_flow, c_fct, c_elapsed, c_rexmit, c_unnec, c_exch) = (
        c_run?, c_comb?, c_flow?, c_fct?, c_elapsed?, c_rexmit?, c_unnec?, c_exch?,
    );
    // The observe workload's columns, present when some flow observed.
    let observe = [
        "workload",
        "notification_delay_p50_s",
        "notification_delay_p95_s",
        "notifications_sent",
        "notifications_received",
        "notifications_lost",
        "notification_retransmissions",
    ]
    .map(|n| col(n).ok());
    let observe = match observe {
        [Some(w), Some(p50), Some(p95), Some(sent), Some(received), Some(lost), Some(rexmit)] => {
            Some((w, p50, p95, sent, received, lost, rexmit))
        }
        _ => None,
    };
    let mut metric = Metric::Fct;
    let mut notifications = (0u64, 0u64);
    // The observers' 95th-percentile delays (the FCT pool's p95 is read from `tested`).
    let mut tested_p95 = Pool::default();
    // The flow group of each flow index, per combination: flows are numbered group by group.
    let mut groups: HashMap<usize, Vec<usize>> = HashMap::new();
    let (mut tested, mut competing) = (Pool::default(), Pool::default());
    let (mut flows, mut unfinished) = (0, 0);
    let (mut rexmit, mut messages, mut unnecessary) = (0.0, 0.0, 0.0);
    // Per run: exchange rates, retransmissions, messages, its own FCT pool.
    let mut runs: Vec<(usize, Vec<f64>, f64, f64, Pool)> = Vec::new();
    for (i, row) in rows.iter().enumerate() {
        let bad = |column: usize| {
            format!(
                "line {}: column {}: {:?} is not a number",
                i + 2,
                header[column],
                row.get(column).map_or("", String::as_str)
            )
        };
        let num = |c: usize| -> Result<f64, String> {
            let text = row.get(c).map_or("", String::as_str);
            if text.is_empty() {
                return Ok(0.0);
            }
            text.parse::<f64>()
                .ok()
                .filter(|x| x.is_finite() && *x >= 0.0)
                .ok_or_else(|| bad(c))
        };
        let index = |c: usize| -> Result<usize, String> {
            row.get(c)
                .and_then(|t| t.parse::<usize>().ok())
                .ok_or_else(|| bad(c))
        };
        let combination = index(c_comb)?;
        if let std::collections::hash_map::Entry::Vacant(slot) = groups.entry(combination) {
            let mut of = Vec::new();
            for (g, count) in counts(combination)?.into_iter().enumerate() {
                of.resize(of.len() + count as usize, g);
            }
            slot.insert(of);
        }
        let flow = index(c_flow)?;
        let group = groups[&combination].get(flow).copied().unwrap_or(0);
        let fct = match row.get(c_fct).map_or("", String::as_str) {
            "" => None,
            _ => Some(num(c_fct)?),
        };
        let elapsed = num(c_elapsed)?;
        let finished = fct.is_some();
        // An observer: its notification delays stand for the FCT (`None`: none received).
        let observer = match observe {
            Some((w, p50, p95, sent, received, lost, rexmit))
                if row.get(w).map(String::as_str) == Some("observe") =>
            {
                let got = num(received)?;
                let delay =
                    |c| -> Result<Option<f64>, String> { Ok((got > 0.0).then_some(num(c)?)) };
                Some((
                    delay(p50)?,
                    delay(p95)?,
                    num(sent)?,
                    num(lost)?,
                    num(rexmit)?,
                    got,
                ))
            }
            _ => None,
        };
        let fct = observer.map_or(fct, |o| o.0);
        if !under_test.contains(&group) {
            competing.push(fct, elapsed);
            continue;
        }
        flows += 1;
        unfinished += usize::from(!finished);
        tested.push(fct, elapsed);
        let (r, u, m) = match observer {
            Some((_, p95, sent, lost, rexmit, got)) => {
                metric = Metric::NotificationDelay;
                notifications.0 += sent as u64;
                notifications.1 += lost as u64;
                tested_p95.push(p95, elapsed);
                (rexmit, 0.0, got)
            }
            None => {
                tested_p95.push(fct, elapsed);
                (num(c_rexmit)?, num(c_unnec)?, num(c_exch)?)
            }
        };
        rexmit += r;
        unnecessary += u;
        messages += m;
        let run = index(c_run)?;
        if !matches!(runs.last(), Some(l) if l.0 == run) {
            runs.push((run, Vec::new(), 0.0, 0.0, Pool::default()));
        }
        let last = runs.last_mut().expect("pushed");
        if elapsed > 0.0 {
            last.1.push(m / elapsed);
        }
        last.2 += r;
        last.3 += m;
        last.4.push(fct, elapsed);
    }
    let jains: Vec<f64> = runs.iter().filter_map(|r| jain(&r.1)).collect();
    let per_run = runs
        .iter_mut()
        .filter_map(|r| {
            let x = (r.3 > 0.0).then(|| r.2 / r.3)?;
            let y = r.4.quantile(0.5)?.exact()?;
            Some((x, y))
        })
        .collect();
    Ok(CellScore {
        experiment: String::new(),
        cc: String::new(),
        runs: runs.len(),
        flows,
        unfinished,
        fct_p50: tested.quantile(0.5),
        fct_p95: tested_p95.quantile(0.95),
        retransmissions_per_message: (messages > 0.0).then(|| rexmit / messages),
        unnecessary_per_flow: (flows > 0).then(|| unnecessary / flows as f64),
        jain: (!jains.is_empty()).then(|| jains.iter().sum::<f64>() / jains.len() as f64),
        competitor_fct_p50: competing.quantile(0.5),
        harm: None,
        metric,
        notifications: (metric == Metric::NotificationDelay).then_some(notifications),
        rank: 0.0,
        per_run,
    })
}

/// The sort key of a censored quantile: exact values first, ascending; then unbounded ones
/// by their bound; missing last.
fn key(q: Option<Quantile>) -> (u8, f64) {
    match q {
        Some(Quantile::Exact(x)) => (0, x),
        Some(Quantile::AtLeast(x)) => (1, x),
        None => (2, 0.0),
    }
}

/// Ranks the cells of one experiment in place (by FCT median, ties by p95; equal keys share
/// the mean of their positions), sets `harm`, and sorts them by rank.
pub fn rank(cells: &mut [CellScore]) {
    let order = |c: &CellScore| (key(c.fct_p50), key(c.fct_p95));
    cells.sort_by(|a, b| {
        let (a, b) = (order(a), order(b));
        (a.0 .0, a.0 .1, a.1 .0, a.1 .1)
            .partial_cmp(&(b.0 .0, b.0 .1, b.1 .0, b.1 .1))
            .unwrap_or(std::cmp::Ordering::Equal)
    });
    let mut i = 0;
    while i < cells.len() {
        let mut j = i + 1;
        while j < cells.len() && order(&cells[j]) == order(&cells[i]) {
            j += 1;
        }
        // Positions i+1 ..= j share their mean.
        let shared = (i + 1 + j) as f64 / 2.0;
        for c in &mut cells[i..j] {
            c.rank = shared;
        }
        i = j;
    }
    let least = cells
        .iter()
        .filter_map(|c| c.competitor_fct_p50.and_then(Quantile::exact))
        .fold(f64::INFINITY, f64::min);
    for c in cells.iter_mut() {
        c.harm = c
            .competitor_fct_p50
            .and_then(Quantile::exact)
            .filter(|_| least > 0.0 && least.is_finite())
            .map(|m| m / least - 1.0);
    }
}

/// The overall ranking of ranked cells (experiment-major, `experiments` in suite order).
pub fn overall(experiments: &[String], cells: &[CellScore]) -> Vec<Overall> {
    let mut names: Vec<String> = Vec::new();
    for c in cells {
        if !names.contains(&c.cc) {
            names.push(c.cc.clone());
        }
    }
    let mut out: Vec<Overall> = names
        .iter()
        .map(|cc| {
            let mut sum = 0.0;
            let mut scored = 0;
            let mut wins = 0;
            let ranks: Vec<Option<f64>> = experiments
                .iter()
                .map(|e| {
                    let here: Vec<&CellScore> =
                        cells.iter().filter(|c| &c.experiment == e).collect();
                    let mine = here.iter().find(|c| &c.cc == cc)?;
                    let n = here.len();
                    sum += if n > 1 {
                        (mine.rank - 1.0) / (n - 1) as f64
                    } else {
                        0.0
                    };
                    scored += 1;
                    let best = here.iter().map(|c| c.rank).fold(f64::INFINITY, f64::min);
                    wins += usize::from(mine.rank == best);
                    Some(mine.rank)
                })
                .collect();
            Overall {
                cc: cc.clone(),
                mean_normalised_rank: if scored > 0 { sum / scored as f64 } else { 1.0 },
                wins,
                ranks,
            }
        })
        .collect();
    out.sort_by(|a, b| {
        a.mean_normalised_rank
            .total_cmp(&b.mean_normalised_rank)
            .then(b.wins.cmp(&a.wins))
            .then(a.cc.cmp(&b.cc))
    });
    out
}

/// Scores a suite's results directory `out` from its `suite.json` (written by `coaplab suite
/// run`): every cell found, ranked, and the overall ranking. Also returns `suite.json`.
pub fn load(out: &Path) -> Result<(serde_json::Value, Leaderboard), ScoreError> {
    let path = out.join("suite.json");
    let record: serde_json::Value =
        serde_json::from_str(&files::read_text(&path, Input::Manifest)?).map_err(|e| {
            ScoreError::Format {
                path: path.clone(),
                message: e.to_string(),
            }
        })?;
    let format = |message: &str| ScoreError::Format {
        path: path.clone(),
        message: message.to_string(),
    };
    let algorithms: Vec<String> = record["algorithms"]
        .as_array()
        .ok_or_else(|| format("no algorithms"))?
        .iter()
        .filter_map(|a| a.as_str().map(str::to_string))
        .collect();
    let mut experiments = Vec::new();
    let mut cells = Vec::new();
    let mut missing = Vec::new();
    for e in record["experiments"]
        .as_array()
        .ok_or_else(|| format("no experiments"))?
    {
        let name = e["name"]
            .as_str()
            .ok_or_else(|| format("an experiment without a name"))?;
        let under_test: Vec<usize> = e["under_test"]
            .as_array()
            .map(|a| {
                a.iter()
                    .filter_map(|g| g.as_u64())
                    .map(|g| g as usize)
                    .collect()
            })
            .unwrap_or_default();
        experiments.push(name.to_string());
        let mut here = Vec::new();
        for cc in &algorithms {
            let dir = out.join(name).join(cc);
            if !dir.join("flows.csv").exists() {
                missing.push(format!("{name}/{cc}"));
                continue;
            }
            here.push(score_cell(&dir, name, cc, &under_test)?);
        }
        rank(&mut here);
        cells.extend(here);
    }
    let overall = overall(&experiments, &cells);
    Ok((
        record,
        Leaderboard {
            experiments,
            cells,
            missing,
            overall,
        },
    ))
}

/// A censored quantile as text: `12.345`, `>=12.345`, or empty.
fn q_text(q: Option<Quantile>, decimals: usize) -> String {
    q.map(|q| q.text(decimals)).unwrap_or_default()
}

/// A number as text with `decimals` digits, empty for `None`.
fn f_text(x: Option<f64>, decimals: usize) -> String {
    x.map(|x| format!("{x:.decimals$}")).unwrap_or_default()
}

/// The header of `leaderboard.csv`.
pub const LEADERBOARD_COLUMNS: &[&str] = &[
    "experiment",
    "cc",
    "rank",
    "normalised_rank",
    "runs",
    "flows",
    "unfinished",
    "fct_p50_s",
    "fct_p50_at_least_s",
    "fct_p95_s",
    "fct_p95_at_least_s",
    "retransmissions_per_message",
    "unnecessary_per_flow",
    "jain",
    "competitor_fct_p50_s",
    "competitor_fct_p50_at_least_s",
    "harm",
    "metric",
    "notifications_sent",
    "notifications_lost",
];

/// `leaderboard.csv`: one row per experiment × algorithm (columns [`LEADERBOARD_COLUMNS`]),
/// experiments in suite order, algorithms by rank; an unbounded percentile is empty, its
/// bound in the `_at_least_s` column (as `summary.csv`).
pub fn leaderboard_csv(board: &Leaderboard) -> String {
    let mut out = csv::Text::with_header(LEADERBOARD_COLUMNS.iter().copied());
    for c in &board.cells {
        let n = board
            .cells
            .iter()
            .filter(|o| o.experiment == c.experiment)
            .count();
        let norm = if n > 1 {
            (c.rank - 1.0) / (n - 1) as f64
        } else {
            0.0
        };
        let exact = |q: Option<Quantile>| csv::float(q.and_then(Quantile::exact));
        let bound = |q: Option<Quantile>| csv::float(q.and_then(Quantile::at_least));
        let fields = [
            c.experiment.clone(),
            c.cc.clone(),
            csv::float(Some(c.rank)),
            csv::float(Some(norm)),
            c.runs.to_string(),
            c.flows.to_string(),
            c.unfinished.to_string(),
            exact(c.fct_p50),
            bound(c.fct_p50),
            exact(c.fct_p95),
            bound(c.fct_p95),
            csv::float(c.retransmissions_per_message),
            csv::float(c.unnecessary_per_flow),
            csv::float(c.jain),
            exact(c.competitor_fct_p50),
            bound(c.competitor_fct_p50),
            csv::float(c.harm),
            c.metric.name().to_string(),
            c.notifications.map_or(String::new(), |n| n.0.to_string()),
            c.notifications.map_or(String::new(), |n| n.1.to_string()),
        ];
        out.record(fields.iter().map(String::as_str));
    }
    out.finish()
}

/// `ranking.csv`: the overall ranking, best first: `cc, mean_normalised_rank, wins`, then
/// the rank in each experiment (a column per experiment, by name).
pub fn ranking_csv(board: &Leaderboard) -> String {
    let mut header = vec!["cc", "mean_normalised_rank", "wins"];
    header.extend(board.experiments.iter().map(String::as_str));
    let mut out = csv::Text::with_header(header);
    for o in &board.overall {
        let mut fields = vec![
            o.cc.clone(),
            csv::float(Some(o.mean_normalised_rank)),
            o.wins.to_string(),
        ];
        fields.extend(o.ranks.iter().map(|r| csv::float(*r)));
        out.record(fields.iter().map(String::as_str));
    }
    out.finish()
}

/// Columns of text right-aligned to their widest cell.
fn align(rows: &[Vec<String>]) -> String {
    let cols = rows.iter().map(Vec::len).max().unwrap_or(0);
    let width: Vec<usize> = (0..cols)
        .map(|i| {
            rows.iter()
                .filter_map(|r| r.get(i))
                .map(|s| s.chars().count())
                .max()
                .unwrap_or(0)
        })
        .collect();
    let mut out = String::new();
    for r in rows {
        let line: Vec<String> = r
            .iter()
            .enumerate()
            .map(|(i, s)| {
                if i == 0 {
                    format!("{s:<w$}", w = width[i])
                } else {
                    format!("{s:>w$}", w = width[i])
                }
            })
            .collect();
        let _ = writeln!(out, "{}", line.join("  ").trim_end());
    }
    out
}

/// The terminal table: per experiment its algorithms by rank, then the overall ranking.
pub fn table(board: &Leaderboard) -> String {
    let mut out = String::new();
    for e in &board.experiments {
        let _ = writeln!(out, "{e}");
        let competing = board
            .cells
            .iter()
            .any(|c| &c.experiment == e && c.competitor_fct_p50.is_some());
        let observe = board
            .cells
            .iter()
            .any(|c| &c.experiment == e && c.metric == Metric::NotificationDelay);
        let (p50, p95) = if observe {
            ("delay_p50", "delay_p95")
        } else {
            ("fct_p50", "fct_p95")
        };
        let mut head = vec![
            "  cc", "rank", "flows", "unfin", p50, p95, "rx/msg", "unnec", "jain",
        ]
        .into_iter()
        .map(String::from)
        .collect::<Vec<_>>();
        if observe {
            head.push("lost/sent".to_string());
        }
        if competing {
            head.extend(["comp_p50".to_string(), "harm".to_string()]);
        }
        let mut rows = vec![head];
        for c in board.cells.iter().filter(|c| &c.experiment == e) {
            let mut r = vec![
                format!("  {}", c.cc),
                format!("{}", c.rank),
                c.flows.to_string(),
                c.unfinished.to_string(),
                q_text(c.fct_p50, 3),
                q_text(c.fct_p95, 3),
                f_text(c.retransmissions_per_message, 3),
                f_text(c.unnecessary_per_flow, 2),
                f_text(c.jain, 3),
            ];
            if observe {
                r.push(
                    c.notifications
                        .map_or(String::new(), |(s, l)| format!("{l}/{s}")),
                );
            }
            if competing {
                r.push(q_text(c.competitor_fct_p50, 3));
                r.push(f_text(c.harm, 3));
            }
            rows.push(r);
        }
        out.push_str(&align(&rows));
    }
    let _ = writeln!(
        out,
        "overall (mean normalised rank: 0 = first in every experiment, 1 = last)"
    );
    let mut rows = vec![vec![
        "  cc".to_string(),
        "mean_norm_rank".to_string(),
        "wins".to_string(),
    ]];
    rows[0].extend(board.experiments.iter().cloned());
    for o in &board.overall {
        let mut r = vec![
            format!("  {}", o.cc),
            format!("{:.3}", o.mean_normalised_rank),
            format!("{}/{}", o.wins, board.experiments.len()),
        ];
        r.extend(
            o.ranks
                .iter()
                .map(|r| r.map_or("-".into(), |r| r.to_string())),
        );
        rows.push(r);
    }
    out.push_str(&align(&rows));
    if !board.missing.is_empty() {
        let _ = writeln!(out, "not run yet: {}", board.missing.join(", "));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cell(experiment: &str, cc: &str, p50: Option<Quantile>, p95: f64) -> CellScore {
        CellScore {
            experiment: experiment.into(),
            cc: cc.into(),
            runs: 1,
            flows: 2,
            unfinished: 0,
            fct_p50: p50,
            fct_p95: Some(Quantile::Exact(p95)),
            retransmissions_per_message: None,
            unnecessary_per_flow: None,
            jain: None,
            competitor_fct_p50: None,
            harm: None,
            metric: Metric::Fct,
            notifications: None,
            rank: 0.0,
            per_run: Vec::new(),
        }
    }

    /// A `flows.csv` of `(run, flow, fct_s, elapsed_s, retransmissions, unnecessary,
    /// exchanges)` rows, combination 0.
    fn flows(rows: &[(usize, usize, &str, f64, u32, u32, u32)]) -> Vec<Vec<String>> {
        let mut out = vec!["run,combination,flow,fct_s,elapsed_s,retransmissions,\
                            unnecessary_retransmissions,exchanges"
            .split(',')
            .map(String::from)
            .collect::<Vec<_>>()];
        for &(run, flow, fct, elapsed, r, u, x) in rows {
            out.push(
                [run.to_string(), "0".into(), flow.to_string(), fct.into()]
                    .into_iter()
                    .chain([elapsed, r.into(), u.into(), x.into()].map(|v| v.to_string()))
                    .collect(),
            );
        }
        out
    }

    #[test]
    fn suite_cell_score_of_tested_flows_with_a_censored_one_and_competitors() {
        // Group 0: flow 0, a competitor; group 1: flows 1 and 2, under test. Run 0's flow 2 is
        // unfinished after 4 s.
        let records = flows(&[
            (0, 0, "5", 5.0, 0, 0, 10),
            (0, 1, "1", 1.0, 2, 1, 10),
            (0, 2, "", 4.0, 3, 0, 5),
            (1, 0, "7", 7.0, 0, 0, 10),
            (1, 1, "2", 2.0, 0, 0, 10),
            (1, 2, "3", 3.0, 0, 0, 10),
        ]);
        let mut counts = |_| Ok(vec![1, 2]);
        let s = score_flows(&records, &mut counts, &[1]).unwrap();
        assert_eq!((s.runs, s.flows, s.unfinished), (2, 4, 1));
        // FCTs 1, 2, 3 and >= 4: the median between 2 and 3; p95 reads the censored one.
        assert_eq!(s.fct_p50, Some(Quantile::Exact(2.5)));
        assert_eq!(
            s.fct_p95,
            Some(Quantile::AtLeast(3.0 + (3.0 * 0.95 - 2.0) * (4.0 - 3.0)))
        );
        assert_eq!(s.retransmissions_per_message, Some(5.0 / 35.0));
        assert_eq!(s.unnecessary_per_flow, Some(0.25));
        // Rates 10/1 and 5/4 in run 0, 10/2 and 10/3 in run 1.
        let expected = (jain(&[10.0, 1.25]).unwrap() + jain(&[5.0, 10.0 / 3.0]).unwrap()) / 2.0;
        assert_eq!(s.jain, Some(expected));
        assert_eq!(s.competitor_fct_p50, Some(Quantile::Exact(6.0)));
        // Run 1 alone has an exact median (2.5); run 0's reads the censored flow.
        assert_eq!(s.per_run, [(0.0, 2.5)]);
        let bad = flows(&[(0, 0, "x", 1.0, 0, 0, 1)]);
        assert_eq!(
            score_flows(&bad, &mut counts, &[0]).unwrap_err(),
            "line 2: column fct_s: \"x\" is not a number"
        );
    }

    #[test]
    fn suite_observe_cells_score_the_observers_notification_delays() {
        // Observers 0 and 1 under test (group 0), observer 2 a competitor (group 1); observer
        // 1 received nothing, so its delays are censored at its 60-s observation.
        let header = "run,combination,flow,workload,fct_s,elapsed_s,retransmissions,\
                      unnecessary_retransmissions,exchanges,notifications_sent,\
                      notifications_received,notifications_lost,notification_delay_p50_s,\
                      notification_delay_p95_s,notification_retransmissions";
        let rows = [
            "0,0,0,observe,60,60,1,0,1,12,10,2,0.5,3,4",
            "0,0,1,observe,60,60,0,0,1,12,0,12,,,1",
            "0,0,2,observe,60,60,0,0,1,12,12,0,0.25,0.25,0",
        ];
        let records: Vec<Vec<String>> = std::iter::once(header)
            .chain(rows)
            .map(|l| l.split(',').map(String::from).collect())
            .collect();
        let mut counts = |_| Ok(vec![2, 1]);
        let s = score_flows(&records, &mut counts, &[0]).unwrap();
        assert_eq!(s.metric, Metric::NotificationDelay);
        assert_eq!((s.flows, s.unfinished), (2, 0));
        assert_eq!(s.notifications, Some((24, 14)));
        // Per-observer medians 0.5 and >= 60: the median reads the censored one.
        assert_eq!(s.fct_p50, Some(Quantile::AtLeast(0.5 + 0.5 * (60.0 - 0.5))));
        assert_eq!(s.retransmissions_per_message, Some(5.0 / 10.0));
        assert_eq!(s.competitor_fct_p50, Some(Quantile::Exact(0.25)));
        // Without the observe columns, nothing changes: the FCT is scored.
        let plain = flows(&[(0, 0, "5", 5.0, 0, 0, 10)]);
        let p = score_flows(&plain, &mut |_| Ok(vec![1]), &[0]).unwrap();
        assert_eq!((p.metric, p.notifications), (Metric::Fct, None));
    }

    #[test]
    fn suite_jain_index_of_equal_and_skewed_rates() {
        assert_eq!(jain(&[2.0, 2.0, 2.0]), Some(1.0));
        // One flow takes everything: 1/n.
        assert_eq!(jain(&[3.0, 0.0, 0.0, 0.0]), Some(0.25));
        assert_eq!(jain(&[]), None);
    }

    #[test]
    fn suite_ranks_by_median_then_p95_with_shared_ties_and_unbounded_last() {
        let mut cells = vec![
            cell("e", "a", Some(Quantile::AtLeast(1.0)), 9.0),
            cell("e", "b", Some(Quantile::Exact(2.0)), 5.0),
            cell("e", "c", Some(Quantile::Exact(2.0)), 4.0),
            cell("e", "d", Some(Quantile::Exact(3.0)), 4.0),
            cell("e", "f", Some(Quantile::Exact(3.0)), 4.0),
        ];
        rank(&mut cells);
        let got: Vec<(&str, f64)> = cells.iter().map(|c| (c.cc.as_str(), c.rank)).collect();
        assert_eq!(
            got,
            [("c", 1.0), ("b", 2.0), ("d", 3.5), ("f", 3.5), ("a", 5.0)]
        );
    }

    #[test]
    fn suite_overall_is_the_mean_normalised_rank_with_wins() {
        let mut e1 = vec![
            cell("e1", "a", Some(Quantile::Exact(1.0)), 1.0),
            cell("e1", "b", Some(Quantile::Exact(2.0)), 2.0),
            cell("e1", "c", Some(Quantile::Exact(3.0)), 3.0),
        ];
        let mut e2 = vec![
            cell("e2", "a", Some(Quantile::Exact(3.0)), 3.0),
            cell("e2", "b", Some(Quantile::Exact(1.0)), 1.0),
            cell("e2", "c", Some(Quantile::Exact(2.0)), 2.0),
        ];
        rank(&mut e1);
        rank(&mut e2);
        let cells: Vec<CellScore> = e1.into_iter().chain(e2).collect();
        let o = overall(&["e1".into(), "e2".into()], &cells);
        let got: Vec<(&str, f64, usize)> = o
            .iter()
            .map(|o| (o.cc.as_str(), o.mean_normalised_rank, o.wins))
            .collect();
        // a: (0 + 1)/2, b: (0.5 + 0)/2, c: (1 + 0.5)/2.
        assert_eq!(got, [("b", 0.25, 1), ("a", 0.5, 1), ("c", 0.75, 0)]);
        assert_eq!(o[0].ranks, [Some(2.0), Some(1.0)]);
    }

    #[test]
    fn suite_harm_is_relative_to_the_least_harmful() {
        let mut cells = vec![
            cell("e", "a", Some(Quantile::Exact(1.0)), 1.0),
            cell("e", "b", Some(Quantile::Exact(2.0)), 2.0),
        ];
        cells[0].competitor_fct_p50 = Some(Quantile::Exact(15.0));
        cells[1].competitor_fct_p50 = Some(Quantile::Exact(10.0));
        rank(&mut cells);
        assert_eq!(cells[0].harm, Some(0.5));
        assert_eq!(cells[1].harm, Some(0.0));
    }
}
