//! The compact percentile table printed at the end of `coaplab run`.

use crate::results::SummaryRow;

/// Reads one column of a summary row.
type Field = fn(&SummaryRow) -> &str;

/// Formats `rows` as an aligned text table: the sweep columns, clients / buffer / loss when
/// they vary, cc, workload, the number of completed flows (`n/flows` when some did not
/// complete), FCT percentiles in seconds and the median retransmissions and unnecessary
/// retransmissions per flow.
pub fn table(rows: &[SummaryRow]) -> String {
    let Some(first) = rows.first() else {
        return "no finished runs\n".to_string();
    };
    let varies = |f: Field| rows.iter().any(|r| f(r) != f(first));
    let shown: Vec<(&str, Field)> = [
        ("clients", (|r: &SummaryRow| r.clients.as_str()) as Field),
        ("buffer", |r: &SummaryRow| r.buffer_bytes.as_str()),
        ("loss", |r: &SummaryRow| r.loss.as_str()),
    ]
    .into_iter()
    .filter(|(_, f)| varies(*f))
    // A sweep column already saying the same thing (e.g. `count` with one flow table).
    .filter(|(_, f)| !(0..first.sweep.len()).any(|i| rows.iter().all(|r| r.sweep[i].1 == f(r))))
    .collect();
    let mut header: Vec<String> = first.sweep.iter().map(|(c, _)| c.clone()).collect();
    header.extend(shown.iter().map(|(name, _)| name.to_string()));
    let fixed = [
        "cc", "workload", "n", "min", "p10", "p25", "p50", "p75", "p90", "p95", "max", "rexmit",
        "unnec",
    ];
    header.extend(fixed.iter().map(|s| s.to_string()));
    let mut lines: Vec<Vec<String>> = vec![header];
    for r in rows {
        let mut line: Vec<String> = r.sweep.iter().map(|(_, v)| v.clone()).collect();
        line.extend(shown.iter().map(|(_, f)| f(r).to_string()));
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

#[cfg(test)]
mod tests {
    use super::*;

    fn row(buffer: &str, cc: &str, fct: Option<[f64; 8]>) -> SummaryRow {
        SummaryRow {
            observe: None,
            combination: 0,
            sweep: Vec::new(),
            clients: "10".into(),
            buffer_bytes: buffer.into(),
            loss: "none".into(),
            cc: cc.into(),
            workload: "continuous".into(),
            flows: 20,
            n: if fct.is_some() { 20 } else { 0 },
            fct_s: fct,
            fct_mean_s: None,
            fct_sd_s: None,
            fct_p50_ci95_s: None,
            retransmissions_median: Some(1.5),
            unnecessary_retransmissions_median: Some(0.0),
            transmission_counts: vec![20],
            mesh: Vec::new(),
        }
    }

    #[test]
    fn the_table_shows_varying_columns_and_aligns() {
        let q = [1.0, 1.1, 1.25, 1.5, 1.75, 1.9, 1.95, 2.0];
        let text = table(&[row("2500", "default", Some(q)), row("28200", "fasor", None)]);
        assert_eq!(
            text,
            "buffer       cc    workload     n    min    p10    p25    p50    p75    p90    p95    max  rexmit  unnec\n  \
             2500  default  continuous    20  1.000  1.100  1.250  1.500  1.750  1.900  1.950  2.000     1.5      0\n \
             28200    fasor  continuous  0/20      -      -      -      -      -      -      -      -     1.5      0\n"
        );
        assert_eq!(table(&[]), "no finished runs\n");
    }
}
