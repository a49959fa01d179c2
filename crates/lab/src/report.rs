//! The compact percentile table printed at the end of `coaplab run`.

use crate::results::SummaryRow;

/// Formats `rows` as an aligned text table: the sweep columns, cc, workload, the number of
/// completed flows, FCT percentiles in seconds and the median retransmissions per flow.
pub fn table(rows: &[SummaryRow]) -> String {
    let Some(first) = rows.first() else {
        return "no finished runs\n".to_string();
    };
    let mut header: Vec<String> = first.sweep.iter().map(|(c, _)| c.clone()).collect();
    let fixed = [
        "cc", "workload", "n", "min", "p10", "p25", "p50", "p75", "p90", "p95", "max", "rexmit",
        "unnec",
    ];
    header.extend(fixed.iter().map(|s| s.to_string()));
    let mut lines: Vec<Vec<String>> = vec![header];
    for r in rows {
        let mut line: Vec<String> = r.sweep.iter().map(|(_, v)| v.clone()).collect();
        line.push(r.cc.clone());
        line.push(r.workload.clone());
        line.push(if r.n == r.flows {
            r.n.to_string()
        } else {
            format!("{}/{}", r.n, r.flows)
        });
        for i in 0..8 {
            line.push(match r.fct_s {
                Some(q) => format!("{:.3}", q[i]),
                None => "-".to_string(),
            });
        }
        for m in [
            r.retransmissions_median,
            r.unnecessary_retransmissions_median,
        ] {
            line.push(m.map(|x| format!("{x}")).unwrap_or_else(|| "-".to_string()));
        }
        lines.push(line);
    }
    let widths: Vec<usize> = (0..lines[0].len())
        .map(|c| lines.iter().map(|l| l[c].len()).max().unwrap_or(0))
        .collect();
    let mut out = String::new();
    for line in &lines {
        let cells: Vec<String> = line
            .iter()
            .zip(&widths)
            .map(|(cell, w)| format!("{cell:>w$}"))
            .collect();
        out.push_str(cells.join("  ").trim_end());
        out.push('\n');
    }
    out
}
