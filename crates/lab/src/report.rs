//! The compact percentile table printed at the end of `coaplab run`.

use crate::results::SummaryRow;
use crate::stats::Quantile;

/// Reads one column of a summary row.
type Field = fn(&SummaryRow) -> &str;

/// Formats `rows` as an aligned text table: the sweep columns, clients / buffer / loss when
/// they vary, cc, workload, the number of completed flows (`n/flows` when some did not
/// complete), the unfinished flows by reason (`gave_up`, `time_cap`; when any cell has one),
/// FCT percentiles in seconds (`>=X` when unbounded: the interpolation reads an unfinished
/// flow), on a mesh the median `fct50_s` (censored alike), and the median retransmissions
/// and unnecessary retransmissions per flow; then [`unfinished_warning`], if any.
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
    let unfinished = rows.iter().any(|r| r.n < r.flows);
    let mesh = rows.iter().any(|r| r.fct50.is_some());
    header.extend(["cc", "workload", "n"].map(String::from));
    if unfinished {
        header.extend(["gave_up", "time_cap"].map(String::from));
    }
    header.extend(["min", "p10", "p25", "p50", "p75", "p90", "p95", "max"].map(String::from));
    if mesh {
        header.push("fct50".to_string());
    }
    header.extend(["rexmit", "unnec"].map(String::from));
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
        if unfinished {
            line.push(r.unfinished_gave_up.to_string());
            line.push(r.unfinished_time_cap.to_string());
        }
        let text = |q: Option<Quantile>| q.map_or_else(|| "-".to_string(), |q| q.text(3));
        for i in 0..8 {
            line.push(text(r.fct_s.map(|q| q[i])));
        }
        if mesh {
            line.push(text(r.fct50.and_then(|(m, _)| m)));
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
    if let Some(warning) = unfinished_warning(rows) {
        out.push_str(&warning);
        out.push('\n');
    }
    out
}

/// The warning of a summary with unfinished flows (`None` when every flow finished): how many
/// flows in how many cells gave up or were cut by the time cap, and, on a mesh, how many never
/// got 50 answers; that their FCT is censored; and the cells whose median is unbounded.
pub fn unfinished_warning(rows: &[SummaryRow]) -> Option<String> {
    let cells = rows.iter().filter(|r| r.n < r.flows).count();
    let gave_up: usize = rows.iter().map(|r| r.unfinished_gave_up).sum();
    let time_cap: usize = rows.iter().map(|r| r.unfinished_time_cap).sum();
    let short: usize = rows.iter().filter_map(|r| r.fct50.map(|(_, k)| k)).sum();
    // The cells whose median a censored value leaves unbounded.
    let unbounded = |median: fn(&SummaryRow) -> Option<Quantile>| -> String {
        rows.iter()
            .filter(|r| median(r).is_some_and(|m| m.exact().is_none()))
            .map(|r| format!("combination {} {} {}", r.combination, r.cc, r.workload))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let mut parts = Vec::new();
    if cells > 0 {
        let mut part = format!(
            "{} unfinished flows in {cells} of {} cells ({gave_up} gave up, {time_cap} cut by \
             the time cap): an unfinished flow's FCT counts as at least its elapsed time, above \
             every finished one; a percentile that reads one is unbounded (>=X)",
            gave_up + time_cap,
            rows.len()
        );
        let cells = unbounded(|r| r.fct_s.map(|q| q[3]));
        if !cells.is_empty() {
            part.push_str(&format!("; median FCT unbounded in: {cells}"));
        }
        parts.push(part);
    }
    if short > 0 {
        let mut part = format!(
            "{short} mesh flows never got 50 answers: their fct50 counts as at least their \
             elapsed time"
        );
        let cells = unbounded(|r| r.fct50.and_then(|(m, _)| m));
        if !cells.is_empty() {
            part.push_str(&format!("; median fct50 unbounded in: {cells}"));
        }
        parts.push(part);
    }
    (!parts.is_empty()).then(|| format!("warning: {}", parts.join("; ")))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(buffer: &str, cc: &str, fct: Option<[f64; 8]>) -> SummaryRow {
        let fct = fct.map(|q| q.map(Quantile::Exact));
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
            unfinished_gave_up: 0,
            unfinished_time_cap: if fct.is_some() { 0 } else { 20 },
            fct_s: fct,
            fct_mean_s: None,
            fct_sd_s: None,
            fct_p50_ci95_s: None,
            retransmissions_median: Some(1.5),
            unnecessary_retransmissions_median: Some(0.0),
            transmission_counts: vec![20],
            mesh: Vec::new(),
            fct50: None,
        }
    }

    #[test]
    fn the_table_shows_varying_columns_and_aligns() {
        let q = [1.0, 1.1, 1.25, 1.5, 1.75, 1.9, 1.95, 2.0];
        let text = table(&[
            row("2500", "default", Some(q)),
            row("28200", "fast", Some(q)),
        ]);
        assert_eq!(
            text,
            "buffer       cc    workload   n    min    p10    p25    p50    p75    p90    p95    max  rexmit  unnec\n  \
             2500  default  continuous  20  1.000  1.100  1.250  1.500  1.750  1.900  1.950  2.000     1.5      0\n \
             28200     fast  continuous  20  1.000  1.100  1.250  1.500  1.750  1.900  1.950  2.000     1.5      0\n"
        );
        assert_eq!(table(&[]), "no finished runs\n");
    }

    /// Unfinished flows: their counts by reason, `>=X` for an unbounded percentile, `-` for a
    /// cell without any flow that finished and sent a request, and the warning under the table.
    #[test]
    fn unfinished_flows_are_counted_and_their_percentiles_unbounded() {
        let mut censored = row("2500", "default", None);
        censored.n = 18;
        censored.unfinished_gave_up = 1;
        censored.unfinished_time_cap = 1;
        censored.fct_s = crate::stats::censored_summary(
            &(1..=18).map(f64::from).collect::<Vec<_>>(),
            &[30.0, 40.0],
        );
        let text = table(&[censored, row("28200", "fasor", None)]);
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(
            lines[0],
            "buffer       cc    workload      n  gave_up  time_cap    min    \
             p10    p25     p50     p75       p90       p95       max  rexmit  unnec"
        );
        // n = 20, h = 19p: p90 (h = 17.1) reads the 19th value, censored: at least
        // 18 + 0.1 · (max(30, 18) − 18); p95 (h = 18.05): 30 + 0.05 · (40 − 30).
        assert_eq!(
            lines[1],
            "  2500  default  continuous  18/20        1         1  1.000  \
             2.900  5.750  10.500  15.250  >=19.200  >=30.500  >=40.000     1.5      0"
        );
        assert_eq!(
            lines[2],
            " 28200    fasor  continuous   0/20        0        20      -      \
             -      -       -       -         -         -         -     1.5      0"
        );
        assert_eq!(
            lines[3],
            "warning: 22 unfinished flows in 2 of 2 cells (1 gave up, 21 cut by the time cap): \
             an unfinished flow's FCT counts as at least its elapsed time, above every finished \
             one; a percentile that reads one is unbounded (>=X)"
        );
        assert_eq!(lines.len(), 4);
    }
}
