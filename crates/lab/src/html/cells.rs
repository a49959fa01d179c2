//! The per-flow samples of each summary cell, read from `flows.csv`, grouped into panels
//! (the cells that differ only in the algorithm).

use std::collections::HashMap;

use crate::results::{csv, summary, SummaryRow};

/// The samples of one (combination, cc, workload) cell.
pub struct Cell {
    /// Its row of `summary.csv`.
    pub row: SummaryRow,
    /// FCT of the completed flows, ascending.
    pub fct_s: Vec<f64>,
    /// `elapsed_s` of the unfinished flows (their censored FCT's lower bound), ascending.
    pub censored_s: Vec<f64>,
    /// Retransmissions per flow, ascending.
    pub retransmissions: Vec<f64>,
    /// Unnecessary retransmissions per flow, ascending.
    pub unnecessary: Vec<f64>,
    /// Expired retransmission timers per flow (`expired_rtos`), ascending.
    pub expired: Vec<f64>,
    /// The largest expired timer of each flow that had one (`rto_max_s`), in file order.
    pub rto_max: Vec<f64>,
    /// `(retransmissions, FCT)` of each completed flow, in file order.
    pub pairs: Vec<(f64, f64)>,
    /// `((replication, flow), FCT)` of every flow, `None` when unfinished: pairs a flow with
    /// the same flow of the same replication in another results directory of the plan.
    pub keyed: Vec<((u64, u64), Option<f64>)>,
    /// The cell's index in the summary rows.
    pub index: usize,
}

/// The samples of a `flows.csv` text: the summary rows, the panels, and the row index of
/// each `(run, flow)`.
pub struct Samples {
    /// The rows of `summary.csv`.
    pub rows: Vec<SummaryRow>,
    /// The cells grouped by settings.
    pub panels: Vec<Panel>,
    /// `(run, flow)` → index of its cell's row.
    pub flow_cell: HashMap<(u64, u64), usize>,
    /// Run id → its seed.
    pub run_seed: HashMap<u64, String>,
}

/// Cells that share every setting but the algorithm: one chart each.
pub struct Panel {
    /// What the cells share, e.g. `buffer_bytes=2500 · workload=continuous`; empty when the
    /// results hold one such group.
    pub title: String,
    /// In order of first appearance.
    pub cells: Vec<Cell>,
}

/// The summary rows and the panels of `flows.csv` text.
pub fn panels(flows_csv: &str) -> (Vec<SummaryRow>, Vec<Panel>) {
    let s = samples(flows_csv);
    (s.rows, s.panels)
}

/// The [`Samples`] of `flows.csv` text.
pub fn samples(flows_csv: &str) -> Samples {
    samples_of(&csv::parse(flows_csv))
}

/// The [`Samples`] of the records of `flows.csv` (header first).
pub fn samples_of(records: &[Vec<String>]) -> Samples {
    let rows = summary::summarize(records);
    let Some((header, flows)) = records.split_first() else {
        return Samples {
            rows,
            panels: Vec::new(),
            flow_cell: HashMap::new(),
            run_seed: HashMap::new(),
        };
    };
    let col = |name: &str| header.iter().position(|h| h == name);
    let elapsed = col("elapsed_s");
    let (comb, cc, workload, fct, completed, rexmit, unnec) = (
        col("combination"),
        col("cc"),
        col("workload"),
        col("fct_s"),
        col("completed"),
        col("retransmissions"),
        col("unnecessary_retransmissions"),
    );
    let rto_max = col("rto_max_s");
    let (seed, run, flow, replication, expired) = (
        col("seed"),
        col("run"),
        col("flow"),
        col("replication"),
        col("expired_rtos"),
    );
    let get = |r: &[String], c: Option<usize>| -> String {
        c.and_then(|c| r.get(c)).cloned().unwrap_or_default()
    };
    let mut cells: Vec<Cell> = rows
        .iter()
        .map(|row| Cell {
            row: row.clone(),
            fct_s: Vec::new(),
            censored_s: Vec::new(),
            retransmissions: Vec::new(),
            unnecessary: Vec::new(),
            expired: Vec::new(),
            rto_max: Vec::new(),
            pairs: Vec::new(),
            keyed: Vec::new(),
            index: 0,
        })
        .collect();
    for (i, c) in cells.iter_mut().enumerate() {
        c.index = i;
    }
    let mut flow_cell = HashMap::new();
    let mut run_seed = HashMap::new();
    let by_cell: HashMap<(usize, &str, &str), usize> = rows
        .iter()
        .enumerate()
        .map(|(i, r)| ((r.combination, r.cc.as_str(), r.workload.as_str()), i))
        .collect();
    let index = |r: &[String]| {
        let c: usize = get(r, comb).parse().unwrap_or(0);
        let (a, w) = (get(r, cc), get(r, workload));
        by_cell.get(&(c, a.as_str(), w.as_str())).copied()
    };
    for r in flows {
        let Some(i) = index(r) else { continue };
        let num = |c| get(r, c).parse::<f64>().ok().filter(|x| !x.is_nan());
        let int = |c| get(r, c).parse::<u64>().unwrap_or(0);
        flow_cell.insert((int(run), int(flow)), i);
        run_seed.entry(int(run)).or_insert_with(|| get(r, seed));
        let key = (int(replication), int(flow));
        if get(r, completed) == "true" {
            cells[i].fct_s.extend(num(fct));
            if let (Some(x), Some(y)) = (num(rexmit), num(fct)) {
                cells[i].pairs.push((x, y));
            }
            cells[i].keyed.push((key, num(fct)));
        } else {
            cells[i].censored_s.push(num(elapsed).unwrap_or(0.0));
            cells[i].keyed.push((key, None));
        }
        cells[i].retransmissions.extend(num(rexmit));
        cells[i].unnecessary.extend(num(unnec));
        cells[i].expired.extend(num(expired));
        cells[i].rto_max.extend(num(rto_max));
    }
    for c in &mut cells {
        for v in [
            &mut c.fct_s,
            &mut c.censored_s,
            &mut c.retransmissions,
            &mut c.unnecessary,
            &mut c.expired,
        ] {
            v.sort_by(f64::total_cmp);
        }
    }
    Samples {
        rows,
        panels: group(cells),
        flow_cell,
        run_seed,
    }
}

/// `(name, value)` of everything but the algorithm that identifies a cell.
pub fn settings(row: &SummaryRow) -> Vec<(String, String)> {
    let mut out = row.sweep.clone();
    out.extend([
        ("clients".to_string(), row.clients.clone()),
        ("buffer_bytes".to_string(), row.buffer_bytes.clone()),
        ("loss".to_string(), row.loss.clone()),
        ("workload".to_string(), row.workload.clone()),
    ]);
    out
}

/// Groups cells by their settings, naming each group by the settings that vary.
fn group(cells: Vec<Cell>) -> Vec<Panel> {
    let all: Vec<Vec<(String, String)>> = cells.iter().map(|c| settings(&c.row)).collect();
    let varies = |k: usize| all.iter().any(|s| s.get(k) != all[0].get(k));
    let sweep = cells.first().map_or(0, |c| c.row.sweep.len());
    let keys = all.first().map_or(0, Vec::len);
    // A sweep column saying what a named setting says (`count` and `clients`) is left out.
    let repeats =
        |k: usize| k < sweep && (sweep..keys).any(|j| all.iter().all(|s| s[k].1 == s[j].1));
    let shown: Vec<usize> = (0..keys).filter(|&k| varies(k) && !repeats(k)).collect();
    let mut panels: Vec<(Vec<(String, String)>, Panel)> = Vec::new();
    for (cell, s) in cells.into_iter().zip(all.iter()) {
        match panels.iter_mut().find(|(key, _)| key == s) {
            Some((_, p)) => p.cells.push(cell),
            None => {
                let title = shown
                    .iter()
                    .map(|&k| format!("{}={}", s[k].0, s[k].1))
                    .collect::<Vec<_>>()
                    .join(" · ");
                panels.push((
                    s.clone(),
                    Panel {
                        title,
                        cells: vec![cell],
                    },
                ));
            }
        }
    }
    panels.into_iter().map(|(_, p)| p).collect()
}
