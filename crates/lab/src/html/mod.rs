//! `coaplab report`: one self-contained HTML page of a results directory: the summary
//! table, per cell FCT box plots and CDFs, retransmissions and unnecessary retransmissions
//! per flow, timelines of traced runs, and a comparison with reference numbers. Charts are
//! inline SVG; the page loads nothing (no script, no style sheet, no font, no image file).

pub mod cells;
pub mod plot;
pub mod reference;
pub mod trace;

use std::fmt::{self, Write as _};
use std::path::{Path, PathBuf};

use crate::results::{csv, summary, SummaryRow};
use crate::stats::{Quantile, SUMMARY_QUANTILES};

/// Panels (groups of cells differing only in the algorithm) drawn at most; the summary
/// table still lists every cell.
pub const MAX_PANELS: usize = 48;
/// Summary rows listed in the page's table at most.
pub const MAX_TABLE_ROWS: usize = 2000;

/// Why no page could be made.
#[derive(Debug)]
pub enum ReportError {
    /// A file could not be read.
    Read(PathBuf, std::io::Error),
    /// The reference file is not in the documented format.
    Reference(PathBuf, String),
    /// A chart could not be drawn (a bug).
    Plot(String),
}

impl fmt::Display for ReportError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ReportError::Read(p, e) => write!(f, "cannot read {}: {e}", p.display()),
            ReportError::Reference(p, e) => write!(f, "{}: {e}", p.display()),
            ReportError::Plot(e) => write!(f, "{e}"),
        }
    }
}

impl std::error::Error for ReportError {}

/// Text escaped for HTML element content and attribute values.
pub fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            _ => out.push(c),
        }
    }
    out
}

const STYLE: &str = "body{font-family:sans-serif;margin:1.5em;color:#222}\
table{border-collapse:collapse;font-size:12px;margin-bottom:1em}\
td,th{border:1px solid #ccc;padding:2px 6px;text-align:right}th{background:#eee}\
.ok{background:#d9f2d9}.bad{background:#f8d7d7}.na{background:#eee}\
.wide{overflow-x:auto}.charts{display:flex;flex-wrap:wrap;gap:8px}h2{margin-top:1.5em}.note{color:#555;font-size:13px}";

/// The page for results directory `dir`, compared with the reference file `against`.
pub fn render(dir: &Path, against: Option<&Path>) -> Result<String, ReportError> {
    let flows_path = dir.join("flows.csv");
    let flows = std::fs::read_to_string(&flows_path)
        .map_err(|e| ReportError::Read(flows_path.clone(), e))?;
    let references = match against {
        None => None,
        Some(p) => {
            let text =
                std::fs::read_to_string(p).map_err(|e| ReportError::Read(p.to_path_buf(), e))?;
            Some(reference::parse(&text).map_err(|e| ReportError::Reference(p.to_path_buf(), e))?)
        }
    };
    let name = std::fs::read_to_string(dir.join("manifest.json"))
        .ok()
        .and_then(|t| serde_json::from_str::<serde_json::Value>(&t).ok())
        .and_then(|m| {
            m.get("scenario")
                .and_then(|s| s.as_str())
                .map(str::to_string)
        })
        .unwrap_or_else(|| dir.display().to_string());
    let (rows, panels) = cells::panels(&flows);
    let mut page = String::new();
    let title = format!("coaplab report: {name}");
    let _ = write!(
        page,
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
         <title>{t}</title><style>{STYLE}</style></head><body>\n<h1>{t}</h1>\n\
         <p class=\"note\">Results directory <code>{d}</code>: {c} cells, {f} flows. \
         FCT in seconds over every flow, replications pooled; an unfinished flow (gave up, or \
         cut by the time cap) counts as a censored value: at least its elapsed time, above \
         every finished FCT, so a percentile that reads one is unbounded (shown ≥X, drawn at \
         the top of its chart). Boxes span p25–p75 with the median, whiskers p10–p90, dots \
         min and max; a CDF ends at the fraction of flows that finished.</p>\n",
        t = escape(&title),
        d = escape(&dir.display().to_string()),
        c = rows.len(),
        f = rows.iter().map(|r| r.flows).sum::<usize>(),
    );
    if let Some(references) = references {
        page.push_str(&reference_table(&reference::compare(&references, &rows)));
    }
    if let Some(warning) = crate::report::unfinished_warning(&rows) {
        let _ = writeln!(page, "<p class=\"bad\">{}</p>", escape(&warning));
    }
    page.push_str("<h2>Summary</h2>\n");
    page.push_str(&records_table(&display_records(&rows), MAX_TABLE_ROWS));
    let plot_err = ReportError::Plot;
    for panel in panels.iter().take(MAX_PANELS) {
        let heading = if panel.title.is_empty() {
            "All cells".to_string()
        } else {
            panel.title.clone()
        };
        let _ = write!(
            page,
            "<h2>{}</h2>\n<div class=\"charts\">\n",
            escape(&heading)
        );
        // (sample, censored values) of a cell.
        type Pick = fn(&cells::Cell) -> (&[f64], &[f64]);
        let boxes = |pick: Pick| -> Vec<plot::Box<'_>> {
            panel
                .cells
                .iter()
                .map(|c| {
                    let (sorted, censored) = pick(c);
                    plot::Box {
                        label: &c.row.cc,
                        sorted,
                        censored,
                    }
                })
                .collect()
        };
        page.push_str(
            &plot::boxes("FCT", "FCT (s)", &boxes(|c| (&c.fct_s, &c.censored_s)))
                .map_err(plot_err)?,
        );
        let cdfs: Vec<plot::Series> = panel
            .cells
            .iter()
            .map(|c| plot::Series {
                label: c.row.cc.clone(),
                points: plot::cdf_points(&c.fct_s, c.row.flows),
            })
            .collect();
        page.push_str(
            &plot::lines("CDF of FCT", "FCT (s)", "fraction of flows", &cdfs, true)
                .map_err(plot_err)?,
        );
        page.push_str(
            &plot::boxes(
                "Retransmissions per flow",
                "retransmissions",
                &boxes(|c| (&c.retransmissions, &[])),
            )
            .map_err(plot_err)?,
        );
        page.push_str(
            &plot::boxes(
                "Unnecessary retransmissions per flow",
                "unnecessary retransmissions",
                &boxes(|c| (&c.unnecessary, &[])),
            )
            .map_err(plot_err)?,
        );
        page.push_str("</div>\n");
    }
    if panels.len() > MAX_PANELS {
        let _ = writeln!(
            page,
            "<p class=\"note\">{} more groups of cells are in the summary table only.</p>",
            panels.len() - MAX_PANELS
        );
    }
    let timelines = trace::load(dir);
    if !timelines.is_empty() {
        page.push_str("<h2>Traced runs</h2>\n");
    }
    for t in &timelines {
        let _ = write!(
            page,
            "<h3>{}</h3>\n<div class=\"charts\">\n",
            escape(&t.run)
        );
        if !t.rto.is_empty() {
            page.push_str(
                &plot::lines("RTO over time", "time (s)", "RTO (s)", &t.rto, false)
                    .map_err(plot_err)?,
            );
        }
        if !t.queue.is_empty() {
            let q = [plot::Series {
                label: "queue".to_string(),
                points: t.queue.clone(),
            }];
            page.push_str(
                &plot::lines("Bottleneck queue", "time (s)", "queue (bytes)", &q, false)
                    .map_err(plot_err)?,
            );
        }
        page.push_str("</div>\n");
    }
    page.push_str("</body></html>\n");
    Ok(page)
}

/// The records of `summary.csv` for `rows` (header first), each unbounded FCT quantile
/// (empty in the file) written `≥X` with its lower bound, and so `fct50_s_median` on a mesh.
pub fn display_records(rows: &[SummaryRow]) -> Vec<Vec<String>> {
    let mut records = csv::parse(&summary::to_csv(rows));
    let Some(header) = records.first() else {
        return records;
    };
    let col = |name: &str| header.iter().position(|h| h == name);
    let quantile_cols: Vec<Option<usize>> = SUMMARY_QUANTILES
        .iter()
        .map(|(name, _)| col(&format!("fct_{name}_s")))
        .collect();
    let fct50_col = col(summary::FCT50_COLUMNS[0]);
    let at_least = |q: Quantile| q.at_least().map(|x| format!("≥{}", short(&x.to_string())));
    for (row, record) in rows.iter().zip(records.iter_mut().skip(1)) {
        let quantiles = row.fct_s.iter().flatten().copied();
        let mut cells: Vec<(Option<usize>, Quantile)> =
            quantile_cols.iter().copied().zip(quantiles).collect();
        cells.extend(row.fct50.and_then(|(m, _)| m).map(|m| (fct50_col, m)));
        for (c, q) in cells {
            if let (Some(c), Some(text)) = (c, at_least(q)) {
                record[c] = text;
            }
        }
    }
    records
}

/// Records (header first) as an HTML table, at most `max_rows` rows.
fn records_table(records: &[Vec<String>], max_rows: usize) -> String {
    // Wide tables scroll on their own instead of widening the page.
    let mut out = String::from("<div class=\"wide\"><table>\n");
    for (i, r) in records.iter().take(max_rows + 1).enumerate() {
        let tag = if i == 0 { "th" } else { "td" };
        out.push_str("<tr>");
        for f in r {
            let _ = write!(out, "<{tag}>{}</{tag}>", escape(&short(f)));
        }
        out.push_str("</tr>\n");
    }
    out.push_str("</table></div>\n");
    if records.len() > max_rows + 1 {
        let _ = writeln!(
            out,
            "<p class=\"note\">{} more rows in summary.csv.</p>",
            records.len() - 1 - max_rows
        );
    }
    out
}

/// A number with a fraction to 4 decimals, for reading (summary.csv has every digit).
fn short(field: &str) -> String {
    match field.parse::<f64>() {
        Ok(x) if field.contains('.') && x.is_finite() => {
            let s = format!("{x:.4}");
            s.trim_end_matches('0').trim_end_matches('.').to_string()
        }
        _ => field.to_string(),
    }
}

/// "ours vs reference, difference, within tolerance".
fn reference_table(comparisons: &[reference::Comparison]) -> String {
    let mut out = String::from(
        "<h2>Against the reference</h2>\n<table>\n<tr><th>source</th><th>cell</th>\
         <th>metric</th><th>reference</th><th>ours</th><th>difference</th>\
         <th>difference %</th><th>tolerance</th><th>within</th></tr>\n",
    );
    let within = comparisons
        .iter()
        .filter(|c| c.within() == Some(true))
        .count();
    for c in comparisons {
        let r = &c.reference;
        let cell = r
            .cell
            .iter()
            .map(|(k, v)| format!("{k}={v}"))
            .collect::<Vec<_>>()
            .join(" ");
        let tolerance = match r.tolerance {
            reference::Tolerance::Percent(p) => format!("±{p} %"),
            reference::Tolerance::Range(lo, hi) => format!("[{lo}, {hi}]"),
        };
        let (ours, diff, pct) = match (&c.ours, c.difference()) {
            (Ok(o), Some(d)) => (
                format!("{o:.3}"),
                format!("{d:+.3}"),
                if r.value != 0.0 {
                    format!("{:+.2} %", d / r.value * 100.0)
                } else {
                    String::new()
                },
            ),
            (Err(why), _) => (why.clone(), String::new(), String::new()),
            _ => Default::default(),
        };
        let (class, verdict) = match c.within() {
            Some(true) => ("ok", "yes"),
            Some(false) => ("bad", "no"),
            None => ("na", "–"),
        };
        let _ = writeln!(
            out,
            "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td>\
             <td>{}</td><td class=\"{class}\">{verdict}</td></tr>",
            escape(&r.source),
            escape(&cell),
            escape(&r.metric),
            r.value,
            escape(&ours),
            diff,
            pct,
            escape(&tolerance),
        );
    }
    let _ = writeln!(
        out,
        "</table>\n<p class=\"note\">{within} of {} within tolerance.</p>",
        comparisons.len()
    );
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_are_shortened_for_reading() {
        assert_eq!(short("34.825200023"), "34.8252");
        assert_eq!(short("0.5"), "0.5");
        assert_eq!(short("2500"), "2500");
        assert_eq!(short("tcp-bbr"), "tcp-bbr");
    }

    #[test]
    fn escaping() {
        assert_eq!(
            escape("<a href=\"x\">&'"),
            "&lt;a href=&quot;x&quot;&gt;&amp;&#39;"
        );
    }
}
