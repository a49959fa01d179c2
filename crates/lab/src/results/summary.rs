//! `summary.csv`: one row per (parameter combination, cc, workload), all replications pooled,
//! each flow one sample (spec §7).

use std::collections::BTreeMap;

use super::csv;
use super::flows::FLOW_COLUMNS;
use crate::stats::{self, SUMMARY_QUANTILES};

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
    /// Flows that completed; the FCT sample size.
    pub n: usize,
    /// FCT min, p10, p25, p50, p75, p90, p95, max over completed flows.
    pub fct_s: Option<[f64; 8]>,
    /// Median per flow of retransmissions.
    pub retransmissions_median: Option<f64>,
    /// Median per flow of unnecessary retransmissions.
    pub unnecessary_retransmissions_median: Option<f64>,
    /// Frequency of transmissions over every successful exchange of the group.
    pub transmission_counts: Vec<u64>,
}

/// Groups the records of `flows.csv` (header first) into summary rows, ordered by
/// combination, then by first appearance of (cc, workload).
pub fn summarize(records: &[Vec<String>]) -> Vec<SummaryRow> {
    let Some((header, rows)) = records.split_first() else {
        return Vec::new();
    };
    let col = |name: &str| header.iter().position(|h| h == name);
    let idx = |name: &str| col(name).unwrap_or(usize::MAX);
    let get = |row: &Vec<String>, i: usize| row.get(i).cloned().unwrap_or_default();
    let (combination, cc, workload) = (idx("combination"), idx("cc"), idx("workload"));
    let (fct, rexmit, unnec) = (
        idx("fct_s"),
        idx("retransmissions"),
        idx("unnecessary_retransmissions"),
    );
    let counts = idx("transmission_counts");
    let (completed, clients, buffer, loss) = (
        idx("completed"),
        idx("clients"),
        idx("buffer_bytes"),
        idx("loss"),
    );
    let extra: Vec<usize> = (0..header.len())
        .filter(|i| !FLOW_COLUMNS.contains(&header[*i].as_str()))
        .collect();
    struct Acc {
        first: Vec<String>,
        flows: usize,
        fct: Vec<f64>,
        rexmit: Vec<f64>,
        unnec: Vec<f64>,
        counts: Vec<u64>,
    }
    let mut groups: BTreeMap<(usize, usize), Acc> = BTreeMap::new();
    let mut order: BTreeMap<(String, String), usize> = BTreeMap::new();
    for row in rows {
        let c: usize = get(row, combination).parse().unwrap_or(0);
        let next = order.len();
        let o = *order
            .entry((get(row, cc), get(row, workload)))
            .or_insert(next);
        let acc = groups.entry((c, o)).or_insert_with(|| Acc {
            first: row.clone(),
            flows: 0,
            fct: Vec::new(),
            rexmit: Vec::new(),
            unnec: Vec::new(),
            counts: Vec::new(),
        });
        acc.flows += 1;
        let num = |i: usize| get(row, i).parse::<f64>().ok();
        if get(row, completed) == "true" {
            if let Some(x) = num(fct) {
                acc.fct.push(x);
            }
        }
        acc.rexmit.extend(num(rexmit));
        acc.unnec.extend(num(unnec));
        super::flows::add_counts(&mut acc.counts, &get(row, counts));
    }
    groups
        .into_iter()
        .map(|((c, _), mut acc)| {
            let first = &acc.first;
            SummaryRow {
                combination: c,
                sweep: extra
                    .iter()
                    .map(|&i| (header[i].clone(), get(first, i)))
                    .collect(),
                clients: get(first, clients),
                buffer_bytes: get(first, buffer),
                loss: get(first, loss),
                cc: get(first, cc),
                workload: get(first, workload),
                flows: acc.flows,
                n: acc.fct.len(),
                fct_s: stats::summary(&mut acc.fct),
                retransmissions_median: stats::median(&mut acc.rexmit),
                unnecessary_retransmissions_median: stats::median(&mut acc.unnec),
                transmission_counts: acc.counts,
            }
        })
        .collect()
}

/// `summary.csv` text.
pub fn to_csv(rows: &[SummaryRow]) -> String {
    let mut header: Vec<String> = rows
        .first()
        .map(|r| r.sweep.iter().map(|(c, _)| c.clone()).collect())
        .unwrap_or_default();
    for c in [
        "clients",
        "buffer_bytes",
        "loss",
        "cc",
        "workload",
        "flows",
        "n",
    ] {
        header.push(c.to_string());
    }
    for (name, _) in SUMMARY_QUANTILES {
        header.push(format!("fct_{name}_s"));
    }
    header.push("retransmissions_median".to_string());
    header.push("unnecessary_retransmissions_median".to_string());
    header.push("transmission_counts".to_string());
    let mut out = csv::line(header.iter().map(String::as_str));
    out.push('\n');
    for r in rows {
        let mut fields: Vec<String> = r.sweep.iter().map(|(_, v)| v.clone()).collect();
        fields.extend([
            r.clients.clone(),
            r.buffer_bytes.clone(),
            r.loss.clone(),
            r.cc.clone(),
            r.workload.clone(),
            r.flows.to_string(),
            r.n.to_string(),
        ]);
        for i in 0..SUMMARY_QUANTILES.len() {
            fields.push(csv::float(r.fct_s.map(|q| q[i])));
        }
        fields.push(csv::float(r.retransmissions_median));
        fields.push(csv::float(r.unnecessary_retransmissions_median));
        fields.push(
            r.transmission_counts
                .iter()
                .map(u64::to_string)
                .collect::<Vec<_>>()
                .join(" "),
        );
        out.push_str(&csv::line(fields.iter().map(String::as_str)));
        out.push('\n');
    }
    out
}
