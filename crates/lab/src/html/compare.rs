//! `coaplab report A B`: two results directories of the same plan side by side. Cells are
//! paired by (combination, cc, workload), flows by (replication, flow): the same seed in both
//! directories. Per cell: the median FCT of each, the difference B − A and its 95 % paired
//! bootstrap interval.

use std::collections::HashMap;
use std::fmt::Write as _;
use std::path::Path;

use super::{cells, escape, head, legend, overview, plot, read_results, ReportError};
use crate::results::SummaryRow;
use crate::stats::{quantile_sorted, Quantile};

/// `((replication, flow), FCT)` of a flow, `None` when unfinished.
type KeyedFlow = ((u64, u64), Option<f64>);

/// Resamples of the paired bootstrap.
pub const RESAMPLES: usize = 1000;

/// One paired cell.
pub struct Pair {
    /// A's summary row.
    pub a: SummaryRow,
    /// B's summary row.
    pub b: SummaryRow,
    /// Flows present in both (same replication and flow number).
    pub paired: usize,
    /// Median FCT of B minus that of A over every flow of each (censored: `None` when a
    /// median is unbounded or missing).
    pub difference: Option<f64>,
    /// The 95 % paired-bootstrap interval of the difference; an end is `None` when unbounded.
    pub ci: Option<(Option<f64>, Option<f64>)>,
}

/// Type-7 median of the values `v` weighted by `counts` (`order`: indices of `v` ascending).
fn weighted_median(v: &[f64], order: &[usize], counts: &[u32], n: usize) -> f64 {
    let (lo_rank, hi_rank) = ((n - 1) / 2, n / 2);
    let (mut lo, mut seen) = (None, 0usize);
    for &i in order {
        seen += counts[i] as usize;
        if lo.is_none() && seen > lo_rank {
            lo = Some(v[i]);
        }
        if seen > hi_rank {
            let (lo, hi) = (lo.unwrap_or(v[i]), v[i]);
            return if lo == hi { lo } else { lo + 0.5 * (hi - lo) };
        }
    }
    f64::NAN
}

/// The 95 % percentile-bootstrap interval of median(b) − median(a) over paired samples
/// (`+∞` for an unfinished flow): `resamples` resamples of the n pairs drawn with
/// replacement (splitmix64 from `seed`). An end that is not finite (a resample's median
/// read an unfinished flow) is `None`: unbounded.
pub fn paired_median_difference_ci(
    pairs: &[(f64, f64)],
    resamples: usize,
    seed: u64,
) -> Option<(Option<f64>, Option<f64>)> {
    let n = pairs.len();
    if n == 0 || resamples == 0 {
        return None;
    }
    let a: Vec<f64> = pairs.iter().map(|p| p.0).collect();
    let b: Vec<f64> = pairs.iter().map(|p| p.1).collect();
    let order = |v: &[f64]| {
        let mut o: Vec<usize> = (0..v.len()).collect();
        o.sort_by(|&i, &j| v[i].total_cmp(&v[j]));
        o
    };
    let (oa, ob) = (order(&a), order(&b));
    let mut counts = vec![0u32; n];
    let mut state = seed;
    let mut diffs = Vec::with_capacity(resamples);
    for _ in 0..resamples {
        counts.iter_mut().for_each(|c| *c = 0);
        for _ in 0..n {
            state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
            let r = crate::seed::splitmix64(state);
            counts[((u128::from(r) * n as u128) >> 64) as usize] += 1;
        }
        let (ma, mb) = (
            weighted_median(&a, &oa, &counts, n),
            weighted_median(&b, &ob, &counts, n),
        );
        // Both unbounded: the difference is unknown (NaN sorts above +∞).
        diffs.push(if ma.is_infinite() && mb.is_infinite() {
            f64::NAN
        } else {
            mb - ma
        });
    }
    diffs.sort_by(f64::total_cmp);
    let end = |p: f64| quantile_sorted(&diffs, p).filter(|x| x.is_finite());
    Some((end(0.025), end(0.975)))
}

/// The cells of A and B paired, and the cells of either without a partner (`(dir, row)`).
pub fn pair(a: &cells::Samples, b: &cells::Samples) -> (Vec<Pair>, Vec<(char, SummaryRow)>) {
    let key = |r: &SummaryRow| (r.combination, r.cc.clone(), r.workload.clone());
    let cells_of = |s: &cells::Samples| -> HashMap<(usize, String, String), usize> {
        s.rows
            .iter()
            .enumerate()
            .map(|(i, r)| (key(r), i))
            .collect()
    };
    let flows_of = |s: &cells::Samples| -> Vec<Vec<KeyedFlow>> {
        let mut out = vec![Vec::new(); s.rows.len()];
        for c in s.panels.iter().flat_map(|p| p.cells.iter()) {
            out[c.index] = c.keyed.clone();
        }
        out
    };
    let (fa, fb) = (flows_of(a), flows_of(b));
    let in_b = cells_of(b);
    let in_a = cells_of(a);
    let mut pairs = Vec::new();
    let mut alone = Vec::new();
    for (i, ra) in a.rows.iter().enumerate() {
        let Some(&j) = in_b.get(&key(ra)) else {
            alone.push(('A', ra.clone()));
            continue;
        };
        let rb = &b.rows[j];
        let b_flows: HashMap<(u64, u64), Option<f64>> = fb[j].iter().copied().collect();
        let inf = |x: Option<f64>| x.unwrap_or(f64::INFINITY);
        let mut samples: Vec<(f64, f64)> = fa[i]
            .iter()
            .filter_map(|(k, x)| b_flows.get(k).map(|y| (inf(*x), inf(*y))))
            .collect();
        samples.sort_by(|p, q| p.0.total_cmp(&q.0).then(p.1.total_cmp(&q.1)));
        let median = |r: &SummaryRow| r.fct_s.and_then(|q| q[3].exact());
        let difference = median(ra)
            .zip(median(rb))
            .map(|(x, y)| y - x)
            .filter(|d| d.is_finite());
        let seed = crate::results::summary::cell_seed(ra.combination, &ra.cc, &ra.workload);
        pairs.push(Pair {
            a: ra.clone(),
            b: rb.clone(),
            paired: samples.len(),
            difference,
            ci: paired_median_difference_ci(&samples, RESAMPLES, seed),
        });
    }
    for rb in &b.rows {
        if !in_a.contains_key(&key(rb)) {
            alone.push(('B', rb.clone()));
        }
    }
    (pairs, alone)
}

/// A median FCT for the table: `12.345`, `≥12.345` (unbounded) or `–`.
fn median_text(r: &SummaryRow) -> String {
    match r.fct_s.map(|q| q[3]) {
        Some(Quantile::Exact(x)) => format!("{x:.3}"),
        Some(Quantile::AtLeast(x)) => format!("≥{x:.3}"),
        None => "–".to_string(),
    }
}

/// The scenario's fingerprint in `dir/manifest.json`.
fn fingerprint(dir: &Path) -> Option<String> {
    let m = super::read_manifest(dir)?;
    m.get("fingerprint")?.as_str().map(str::to_string)
}

/// The page comparing results directories `a` and `b`.
pub fn render(a: &Path, b: &Path) -> Result<String, ReportError> {
    let (flows_a, name) = read_results(a)?;
    let (flows_b, _) = read_results(b)?;
    let (sa, sb) = (cells::samples_of(&flows_a), cells::samples_of(&flows_b));
    drop((flows_a, flows_b));
    let (pairs, alone) = pair(&sa, &sb);
    let mut page = head(&format!("coaplab report: {name}, A vs B"));
    let (da, db) = (a.display().to_string(), b.display().to_string());
    let _ = writeln!(
        page,
        "<p class=\"note\">A: <code>{}</code>, B: <code>{}</code>. Cells are paired by \
         (combination, cc, workload), flows by (replication, flow): the same seeds. Per cell \
         the median FCT of each (every flow, an unfinished flow a censored value, ≥X when the \
         median is unbounded), the difference B − A (negative: B is faster) and its 95 % \
         paired bootstrap interval ({RESAMPLES} resamples of the paired flows, an unfinished \
         flow as +∞; an end is unbounded when resamples' medians read unfinished flows).</p>",
        escape(&da),
        escape(&db)
    );
    match (fingerprint(a), fingerprint(b)) {
        (Some(x), Some(y)) if x != y => {
            let _ = writeln!(
                page,
                "<p class=\"note\">The plans differ (fingerprints {} and {}): cells are paired \
                 by combination number; the table shows A's settings and marks B's where they \
                 differ.</p>",
                escape(&x),
                escape(&y)
            );
        }
        _ => {}
    }
    let rows_a: Vec<SummaryRow> = pairs.iter().map(|p| p.a.clone()).collect();
    let layout = overview::layout(&rows_a);
    let values: Vec<plot::Value> = pairs
        .iter()
        .map(|p| {
            match (
                p.difference,
                p.a.fct_s.map(|q| q[3]),
                p.b.fct_s.map(|q| q[3]),
            ) {
                (Some(y), _, _) => plot::Value::Exact {
                    y,
                    ci: p.ci.and_then(|(lo, hi)| lo.map(|lo| (lo, hi))),
                },
                // B unbounded, A finished: at least B's bound minus A's median.
                (None, Some(Quantile::Exact(x)), Some(Quantile::AtLeast(y))) => {
                    plot::Value::AtLeast(y - x)
                }
                _ => plot::Value::Missing,
            }
        })
        .collect();
    page.push_str("<h2>Difference of the median FCT, B − A</h2>\n");
    page.push_str(&legend(&layout.algorithms));
    super::overview_section(
        &mut page,
        &layout,
        &rows_a,
        &[(
            "Median FCT, B − A, 95 % paired CI".to_string(),
            "difference (s)".to_string(),
            values,
        )],
    )?;
    page.push_str(
        "<h2>Cells</h2>\n<div class=\"wide\"><table>\n<tr><th>combination</th><th>settings</th>\
         <th>cc</th><th>workload</th><th>paired flows</th><th>median A (s)</th>\
         <th>median B (s)</th><th>B − A (s)</th><th>95 % CI</th><th>differs</th></tr>\n",
    );
    let settings_text = |r: &SummaryRow| {
        cells::settings(r)
            .into_iter()
            .filter(|(k, _)| k != "workload")
            .map(|(k, v)| format!("{k}={v}"))
            .collect::<Vec<_>>()
            .join(" ")
    };
    for p in &pairs {
        let (sa, sb) = (settings_text(&p.a), settings_text(&p.b));
        let settings = if sa == sb {
            sa
        } else {
            format!("{sa} (B: {sb})")
        };
        let end =
            |x: Option<f64>| x.map_or_else(|| "unbounded".to_string(), |x| format!("{x:+.3}"));
        let ci = p.ci.map_or_else(String::new, |(lo, hi)| {
            format!("[{}, {}]", end(lo), end(hi))
        });
        let (class, verdict) = match p.ci {
            Some((Some(lo), _)) if lo > 0.0 => ("bad", "B slower"),
            Some((_, Some(hi))) if hi < 0.0 => ("ok", "B faster"),
            Some(_) => ("na", "no"),
            None => ("na", "–"),
        };
        let _ = writeln!(
            page,
            "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td>\
             <td>{}</td><td>{}</td><td class=\"{class}\">{verdict}</td></tr>",
            p.a.combination,
            escape(&settings),
            escape(&p.a.cc),
            escape(&p.a.workload),
            p.paired,
            escape(&median_text(&p.a)),
            escape(&median_text(&p.b)),
            p.difference
                .map_or_else(|| "unbounded".to_string(), |d| format!("{d:+.3}")),
            escape(&ci),
        );
    }
    page.push_str("</table></div>\n");
    if !alone.is_empty() {
        let _ = writeln!(
            page,
            "<p class=\"note\">Without a partner: {}.</p>",
            escape(
                &alone
                    .iter()
                    .map(|(d, r)| format!(
                        "{d}: combination {} {} {}",
                        r.combination, r.cc, r.workload
                    ))
                    .collect::<Vec<_>>()
                    .join(", ")
            )
        );
    }
    page.push_str("</body></html>\n");
    Ok(page)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_paired_interval_holds_a_constant_shift_and_censoring_is_unbounded() {
        let pairs: Vec<(f64, f64)> = (0..101)
            .map(|i| (f64::from(i), f64::from(i) - 2.0))
            .collect();
        let (lo, hi) = paired_median_difference_ci(&pairs, 200, 1).unwrap();
        assert!(lo.unwrap() <= -2.0 + 1e-9 && hi.unwrap() >= -2.0 - 1e-9);
        // Every flow of B unfinished: B − A is +∞, unbounded.
        let pairs: Vec<(f64, f64)> = (0..5).map(|i| (f64::from(i), f64::INFINITY)).collect();
        assert_eq!(
            paired_median_difference_ci(&pairs, 50, 1),
            Some((None, None))
        );
        assert_eq!(paired_median_difference_ci(&[], 50, 1), None);
        let v = [3.0, 1.0, 2.0];
        assert_eq!(weighted_median(&v, &[1, 2, 0], &[1, 1, 1], 3), 2.0);
        assert_eq!(weighted_median(&v, &[1, 2, 0], &[2, 2, 0], 4), 2.0);
        assert_eq!(weighted_median(&v, &[1, 2, 0], &[0, 2, 2], 4), 1.5);
    }
}
