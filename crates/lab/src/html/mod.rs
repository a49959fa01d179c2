//! `coaplab report`: one self-contained HTML page of a results directory: an overview of each
//! metric across the swept axes (one line per algorithm, small multiples per remaining axis),
//! the CDF of the expired RTO values, per group of cells FCT box plots and CDFs,
//! retransmissions and unnecessary retransmissions per flow and an FCT–retransmissions
//! scatter, timelines of traced runs, a mesh's topology, a comparison with reference numbers,
//! and the summary table last; or ([`compare`]) two results directories side by side. Charts
//! are inline SVG; the page loads nothing (no script, no style sheet, no font, no image file).

pub mod cells;
pub mod compare;
pub mod expired;
pub mod overview;
pub mod plot;
pub mod reference;
pub mod topology;
pub mod trace;

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use crate::files::{self, Input, InputError};
use crate::results::{csv, flows, summary, SummaryRow};
use crate::stats::{Quantile, SUMMARY_QUANTILES};

/// Panels (groups of cells differing only in the algorithm) drawn at most; the summary
/// table still lists every cell.
pub const MAX_PANELS: usize = 48;
/// Summary rows listed in the page's table at most.
pub const MAX_TABLE_ROWS: usize = 2000;

/// Why no page could be made.
#[derive(Debug, thiserror::Error)]
pub enum ReportError {
    /// A file could not be read, or is larger than its kind's limit ([`crate::files`]).
    #[error(transparent)]
    Input(#[from] InputError),
    /// The reference file is not in the documented format.
    #[error("{}: {1}", .0.display())]
    Reference(PathBuf, reference::ReferenceError),
    /// A value of `flows.csv` that coaplab does not write ([`verify_flows`]).
    #[error(
        "{}: line {line}, column {column}: {value:?} is {why}; this file is not as coaplab \
         wrote it (coaplab run SCENARIO --out DIR --resume assembles it again from DIR/runs/)",
        path.display()
    )]
    Corrupt {
        /// The file.
        path: PathBuf,
        /// 1-based line of the file (the header is line 1).
        line: usize,
        /// The column's name.
        column: String,
        /// The value found.
        value: String,
        /// What is wrong with it.
        why: &'static str,
    },
    /// A chart could not be drawn (a bug).
    #[error(transparent)]
    Plot(#[from] plot::PlotError),
}

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
.wide{overflow-x:auto}.charts{display:flex;flex-wrap:wrap;gap:8px}h2{margin-top:1.5em}.note{color:#555;font-size:13px}.legend span{margin-right:1em}";

/// Reads `dir/flows.csv` (at most [`Input::ResultsTable`]'s limit), verified by
/// [`verify_flows`], and the scenario's name: the records of `flows.csv` (header first).
fn read_results(dir: &Path) -> Result<(Vec<Vec<String>>, String), ReportError> {
    let flows_path = dir.join("flows.csv");
    let records = csv::parse(&files::read_text(&flows_path, Input::ResultsTable)?);
    verify_flows(&flows_path, &records)?;
    let name = read_manifest(dir)
        .and_then(|m| {
            m.get("scenario")
                .and_then(|s| s.as_str())
                .map(str::to_string)
        })
        .unwrap_or_else(|| dir.display().to_string());
    Ok((records, name))
}

/// `dir/manifest.json` as JSON, at most [`Input::Manifest`]'s limit; `None` when it is
/// missing, too large or not JSON (the page then does without it).
pub(crate) fn read_manifest(dir: &Path) -> Option<serde_json::Value> {
    let text = files::read_text(&dir.join("manifest.json"), Input::Manifest).ok()?;
    serde_json::from_str(&text).ok()
}

/// The columns of `flows.csv` that are not numbers.
const TEXT_COLUMNS: &[&str] = &[
    "cc",
    "workload",
    "loss",
    "completed",
    "transmission_counts",
    "unfinished",
];

/// Checks the records of `flows.csv` (`path`) as coaplab writes them, as `coaplab merge`
/// checks the files it joins before it writes anything: every row has the header's number of
/// fields, and every value of a numeric column of coaplab's ([`flows::FLOW_COLUMNS`],
/// [`flows::MESH_FLOW_COLUMNS`], [`flows::OBSERVE_COLUMNS`]; sweep columns are free text) is
/// empty or a finite number ≥ 0, `completed` is `true` or `false`, `transmission_counts`
/// whole numbers. The first value that is not is [`ReportError::Corrupt`], naming the line
/// and the column: a page is never drawn from NaN, infinite or negative figures.
pub fn verify_flows(path: &Path, records: &[Vec<String>]) -> Result<(), ReportError> {
    let Some((header, rows)) = records.split_first() else {
        return Ok(());
    };
    let ours = |c: &str| {
        flows::FLOW_COLUMNS.contains(&c)
            || flows::MESH_FLOW_COLUMNS.contains(&c)
            || flows::OBSERVE_COLUMNS.contains(&c)
    };
    let numeric: Vec<bool> = header
        .iter()
        .map(|c| ours(c) && !TEXT_COLUMNS.contains(&c.as_str()))
        .collect();
    for (i, row) in rows.iter().enumerate() {
        let corrupt = |column: &str, value: &str, why: &'static str| ReportError::Corrupt {
            path: path.to_path_buf(),
            line: i + 2,
            column: column.to_string(),
            value: value.to_string(),
            why,
        };
        if row.len() != header.len() {
            let last = header.get(row.len().min(header.len().saturating_sub(1)));
            return Err(corrupt(
                last.map_or("", String::as_str),
                &row.join(","),
                if row.len() < header.len() {
                    "a row with fewer fields than the header"
                } else {
                    "a row with more fields than the header"
                },
            ));
        }
        for ((column, value), &numeric) in header.iter().zip(row).zip(&numeric) {
            if numeric && !value.is_empty() {
                match value.parse::<f64>() {
                    Ok(x) if x.is_nan() => return Err(corrupt(column, value, "not a number")),
                    Ok(x) if x.is_infinite() => return Err(corrupt(column, value, "infinite")),
                    Ok(x) if x < 0.0 => return Err(corrupt(column, value, "negative")),
                    Ok(_) => {}
                    Err(_) => return Err(corrupt(column, value, "not a number")),
                }
            } else if column == "completed" && value != "true" && value != "false" {
                return Err(corrupt(column, value, "neither true nor false"));
            } else if column == "transmission_counts"
                && value.split(' ').any(|n| n.parse::<u64>().is_err())
                && !value.is_empty()
            {
                return Err(corrupt(column, value, "not whole numbers"));
            }
        }
    }
    Ok(())
}

/// The page's head and title.
pub(crate) fn head(title: &str) -> String {
    format!(
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
         <title>{t}</title><style>{STYLE}</style></head><body>\n<h1>{t}</h1>\n",
        t = escape(title)
    )
}

/// The legend of the algorithms' colours (the same in every chart of the page).
fn legend(algorithms: &[String]) -> String {
    let mut out = String::from("<p class=\"legend\">");
    for (i, a) in algorithms.iter().enumerate() {
        let _ = write!(
            out,
            "<span><b style=\"color:{}\">&#9632;</b> {}</span> ",
            plot::colour_hex(i),
            escape(a)
        );
    }
    out.push_str("</p>\n");
    out
}

/// The charts of `metrics` (title, y axis, value per summary row) across the layout: a
/// heading, then one small multiple per facet.
fn overview_section(
    page: &mut String,
    layout: &overview::Layout,
    rows: &[SummaryRow],
    metrics: &[(String, String, Vec<plot::Value>)],
) -> Result<(), ReportError> {
    let x_desc = layout
        .x
        .as_deref()
        .map_or_else(|| "algorithm".to_string(), overview::axis_desc);
    // One chart per metric (no facets): the charts side by side, each titled by its metric.
    let single = layout.facets.len() <= 1;
    if single {
        page.push_str("<div class=\"charts\">\n");
    }
    for (title, y_desc, values) in metrics {
        if !single {
            let _ = write!(page, "<h3>{}</h3>\n<div class=\"charts\">\n", escape(title));
        }
        let grid = layout.grid(rows, values);
        for (f, series) in grid.iter().enumerate().take(overview::MAX_FACETS) {
            let facet = layout.facet_title(f);
            // The metric is the section's heading and the y axis: the facet titles the chart
            // (a longer title would not fit a small multiple).
            let chart_title = if facet.is_empty() {
                title.clone()
            } else {
                facet
            };
            page.push_str(
                &plot::by_x(&chart_title, &x_desc, &layout.x_values, y_desc, series)
                    .map_err(ReportError::Plot)?,
            );
        }
        if !single {
            page.push_str("</div>\n");
        }
        if grid.len() > overview::MAX_FACETS {
            let _ = writeln!(
                page,
                "<p class=\"note\">{} more panels are in the summary table only.</p>",
                grid.len() - overview::MAX_FACETS
            );
        }
    }
    if single {
        page.push_str("</div>\n");
    }
    Ok(())
}

/// The overview's metrics: per summary row, the median FCT with its interval, the means per
/// flow of retransmissions, unnecessary retransmissions and expired timers, the unfinished
/// flows, and on a mesh the thesis's metrics.
fn overview_metrics(
    rows: &[SummaryRow],
    panels: &[cells::Panel],
) -> Vec<(String, String, Vec<plot::Value>)> {
    let mut by_index: Vec<Option<&cells::Cell>> = vec![None; rows.len()];
    for c in panels.iter().flat_map(|p| p.cells.iter()) {
        by_index[c.index] = Some(c);
    }
    let per_cell = |f: &dyn Fn(&cells::Cell) -> plot::Value| -> Vec<plot::Value> {
        by_index
            .iter()
            .map(|c| c.map_or(plot::Value::Missing, f))
            .collect()
    };
    let mesh = rows.iter().any(|r| r.fct50.is_some());
    let mut metrics = vec![(
        "FCT median, 95 % CI".to_string(),
        "FCT (s)".to_string(),
        rows.iter().map(overview::fct_median).collect(),
    )];
    if mesh {
        metrics.push((
            "FCT for 50 exchanges (fct50), median".to_string(),
            "fct50 (s)".to_string(),
            rows.iter()
                .map(|r| overview::quantile_value(r.fct50.and_then(|(m, _)| m), None))
                .collect(),
        ));
    }
    metrics.extend([
        (
            "Retransmissions per flow (mean)".to_string(),
            "retransmissions".to_string(),
            per_cell(&|c| overview::mean(&c.retransmissions)),
        ),
        (
            "Unnecessary retransmissions per flow (mean)".to_string(),
            "unnecessary retransmissions".to_string(),
            per_cell(&|c| overview::mean(&c.unnecessary)),
        ),
        (
            "Expired RTOs per flow (mean)".to_string(),
            "expired timers".to_string(),
            per_cell(&|c| overview::mean(&c.expired)),
        ),
        (
            "Unfinished flows".to_string(),
            "unfinished (% of flows)".to_string(),
            rows.iter()
                .map(|r| {
                    overview::exact(
                        (r.flows > 0).then(|| (r.flows - r.n) as f64 * 100.0 / r.flows as f64),
                    )
                })
                .collect(),
        ),
    ]);
    if mesh {
        for (column, title, unit) in [
            (
                "coap_pdr_median",
                "CoAP packet delivery ratio (median)",
                "PDR (0–1)",
            ),
            (
                "transactions_per_s_median",
                "Transactions per second (median)",
                "transactions/s",
            ),
            ("delay_p50_s_median", "CoAP delay p50 (median)", "delay (s)"),
            ("rto_base_p50_s_median", "Base RTO p50 (median)", "RTO (s)"),
            (
                "retransmissions_per_run",
                "Retransmissions per run (mean)",
                "retransmissions",
            ),
        ] {
            metrics.push((
                title.to_string(),
                unit.to_string(),
                rows.iter()
                    .map(|r| {
                        overview::exact(
                            r.mesh
                                .iter()
                                .find(|(c, _)| c == column)
                                .and_then(|(_, v)| *v),
                        )
                    })
                    .collect(),
            ));
        }
    }
    metrics
}

/// The page for results directory `dir`, compared with the reference file `against`.
pub fn render(dir: &Path, against: Option<&Path>) -> Result<String, ReportError> {
    let (flows, name) = read_results(dir)?;
    let references = match against {
        None => None,
        Some(p) => {
            let text = files::read_text(p, Input::Reference)?;
            Some(reference::parse(&text).map_err(|e| ReportError::Reference(p.to_path_buf(), e))?)
        }
    };
    let cells::Samples {
        rows,
        panels,
        flow_cell,
        run_seed,
    } = cells::samples_of(&flows);
    drop(flows);
    let layout = overview::layout(&rows);
    let colour_of = |cc: &str| layout.algorithms.iter().position(|a| a == cc).unwrap_or(0);
    let mut page = head(&format!("coaplab report: {name}"));
    let _ = writeln!(
        page,
        "<p class=\"note\">Results directory <code>{d}</code>: {c} cells, {f} flows. \
         FCT in seconds over every flow, replications pooled; an unfinished flow (gave up, or \
         cut by the time cap) counts as a censored value: at least its elapsed time, above \
         every finished FCT, so a percentile that reads one is unbounded (shown ≥X, drawn at \
         the top of its chart as a hollow triangle over a dashed line from its lower bound). \
         Boxes span p25–p75 with the median, whiskers p10–p90, dots min and max; a CDF ends \
         at the fraction of flows that finished. The full table is at the end.</p>",
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
    let plot_err = ReportError::Plot;
    // 1. The overview.
    let _ = write!(
        page,
        "<h2 id=\"overview\">Overview</h2>\n<p class=\"note\">x: {x}; {facets}one line per algorithm; \
         bars: 95 % bootstrap interval of the median (summary.csv).</p>\n",
        x = escape(&layout.x.clone().unwrap_or_else(|| "the algorithm".into())),
        facets = if layout.facet_axes.is_empty() {
            String::new()
        } else {
            format!("one chart per {}; ", escape(&layout.facet_axes.join(" × ")))
        },
    );
    page.push_str(&legend(&layout.algorithms));
    overview_section(&mut page, &layout, &rows, &overview_metrics(&rows, &panels))?;
    if let Some(t) = topology::load(dir) {
        page.push_str(
            "<h3>Topology</h3>\n<p class=\"note\">Node positions of the first combination \
             (manifest.json; a mobile mesh's start positions), radio links within tx_range_m \
             (grey), and the hops data frames took in the first traced run (blue, wider with \
             more frames).</p>\n",
        );
        page.push_str(&topology::draw(&t).map_err(plot_err)?);
    }
    // 2. The expired timers' CDF.
    page.push_str("<h2 id=\"expired\">Expired RTO values</h2>\n");
    // From timers.csv (every expiry), else the largest expiry of each flow (flows.csv).
    let (hists, note, x_desc, y_desc) = match expired::load(dir, &flow_cell, rows.len()) {
        Some(hists) => (
            hists,
            "CDF of the armed value (after dithering, backoff and caps) of every expired CoAP \
             retransmission timer (timers.csv), per algorithm, as in the FASOR paper's Fig. 10; \
             values binned to 1.2 %.",
            "expired RTO (s)",
            "fraction of expiries",
        ),
        None => {
            let mut hists = vec![expired::Histogram::default(); rows.len()];
            for c in panels.iter().flat_map(|p| p.cells.iter()) {
                c.rto_max.iter().for_each(|&x| hists[c.index].push(x));
            }
            (
                hists,
                "No <code>timers.csv</code> (run with <code>[output] timers = true</code>, or \
                 <code>--set output.timers=true</code>, for every expiry): the CDF of the largest \
                 expired timer of each flow that had one (<code>rto_max_s</code> of flows.csv; \
                 TCP flows too), per algorithm; values binned to 1.2 %.",
                "largest expired RTO per flow (s)",
                "fraction of flows with one",
            )
        }
    };
    let _ = writeln!(page, "<p class=\"note\">{note}</p>");
    page.push_str(&legend(&layout.algorithms));
    let drawn = cdf_charts(&mut page, &panels, &hists, (x_desc, y_desc), &colour_of)?;
    if drawn == 0 {
        page.push_str("<p class=\"note\">No timer expired.</p>\n");
    }
    // A mesh's exchanges.csv: the thesis's delay and base-RTO CDFs.
    let delays = expired::load_column(dir, "exchanges.csv", "delay_s", &flow_cell, rows.len());
    let bases = expired::load_column(dir, "exchanges.csv", "rto_base_s", &flow_cell, rows.len());
    if let (Some(delays), Some(bases)) = (delays, bases) {
        page.push_str(
            "<h2 id=\"exchanges\">CoAP delay and base RTO</h2>\n<p class=\"note\">CDFs over \
             every ended exchange (exchanges.csv), per algorithm: the CoAP delay (original sent \
             → first answer; failed exchanges have none) and the base RTO right after the \
             exchange; values binned to 1.2 %.</p>\n",
        );
        page.push_str(&legend(&layout.algorithms));
        cdf_charts(
            &mut page,
            &panels,
            &delays,
            ("CoAP delay (s)", "fraction of exchanges"),
            &colour_of,
        )?;
        cdf_charts(
            &mut page,
            &panels,
            &bases,
            ("base RTO (s)", "fraction of exchanges"),
            &colour_of,
        )?;
    }
    // 3. Per group of cells.
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
                        colour: colour_of(&c.row.cc),
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
                colour: colour_of(&c.row.cc),
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
        page.push_str(&scatter(panel, &colour_of).map_err(plot_err)?);
        page.push_str("</div>\n");
    }
    if panels.len() > MAX_PANELS {
        let _ = writeln!(
            page,
            "<p class=\"note\">{} more groups of cells are in the summary table only.</p>",
            panels.len() - MAX_PANELS
        );
    }
    // 4. Traced runs.
    if dir.join("trace").is_dir() {
        page.push_str(&traced_runs(dir, &run_cells(&rows, &flow_cell, &run_seed))?);
    }
    // 5. The full table.
    page.push_str("<h2 id=\"summary\">Summary</h2>\n");
    page.push_str(&records_table(&display_records(&rows), MAX_TABLE_ROWS));
    page.push_str("</body></html>\n");
    Ok(page)
}

/// One small CDF chart per group of cells of the histograms `hists` (per summary row), one
/// line per algorithm, in a row of charts; returns how many were drawn (groups without values
/// are left out).
fn cdf_charts(
    page: &mut String,
    panels: &[cells::Panel],
    hists: &[expired::Histogram],
    (x_desc, y_desc): (&str, &str),
    colour_of: &dyn Fn(&str) -> usize,
) -> Result<usize, ReportError> {
    page.push_str("<div class=\"charts\">\n");
    let mut drawn = 0;
    for panel in panels.iter().take(MAX_PANELS) {
        let series: Vec<plot::Series> = panel
            .cells
            .iter()
            .filter(|c| hists[c.index].total > 0)
            .map(|c| plot::Series {
                label: c.row.cc.clone(),
                colour: colour_of(&c.row.cc),
                points: hists[c.index].cdf(),
            })
            .collect();
        if series.is_empty() {
            continue;
        }
        drawn += 1;
        let title = if panel.title.is_empty() {
            x_desc.to_string()
        } else {
            panel.title.clone()
        };
        page.push_str(
            &plot::line_chart(
                plot::Size::Small,
                &title,
                (x_desc, y_desc),
                &series,
                &[],
                true,
            )
            .map_err(ReportError::Plot)?,
        );
    }
    page.push_str("</div>\n");
    Ok(drawn)
}

/// The FCT–retransmissions scatter of a group of cells: per algorithm the medians and the
/// 1-sigma covariance ellipse over its completed flows (Pantheon's summary of schemes). A
/// median FCT that unfinished flows leave unbounded is not drawn as a point: the legend says
/// `median FCT unbounded (≥X s)`.
fn scatter(
    panel: &cells::Panel,
    colour_of: &dyn Fn(&str) -> usize,
) -> Result<String, plot::PlotError> {
    let mut spots = Vec::new();
    for c in &panel.cells {
        let rexmit = crate::stats::quantile_sorted(&c.retransmissions, 0.5);
        let median = c.row.fct_s.map(|q| q[3]);
        let (label, point) = match (median, rexmit) {
            (Some(crate::stats::Quantile::Exact(y)), Some(x)) => (c.row.cc.clone(), Some((x, y))),
            (Some(crate::stats::Quantile::AtLeast(y)), _) => (
                format!("{}: median FCT unbounded (≥{y:.1} s)", c.row.cc),
                None,
            ),
            _ => (format!("{}: no completed flow", c.row.cc), None),
        };
        spots.push(plot::Spot {
            label,
            colour: colour_of(&c.row.cc),
            point,
            ellipse: plot::covariance(&c.pairs),
        });
    }
    plot::scatter(
        "FCT vs retransmissions (median, 1σ ellipse over flows)",
        "retransmissions per flow",
        "FCT (s)",
        &spots,
    )
}

/// The traced runs' section (empty without `trace/`): each run titled with its cell
/// (`run_cells`: run id → algorithm, buffer, clients, seed).
fn traced_runs(
    dir: &Path,
    run_cells: &std::collections::HashMap<u64, String>,
) -> Result<String, ReportError> {
    let timelines = trace::load(dir);
    let mut page = String::new();
    if !timelines.is_empty() {
        page.push_str(
            "<h2 id=\"traced\">Traced runs</h2>\n<p class=\"note\">RTO and cwnd as steps (a value holds \
             until it changes); the queue of each bottleneck direction, drops marked by cause \
             at the backlog they met.</p>\n",
        );
    }
    let err = ReportError::Plot;
    for t in &timelines {
        let cell = t
            .run_id
            .and_then(|r| run_cells.get(&r))
            .map(|c| format!(": {c}"))
            .unwrap_or_default();
        let _ = write!(
            page,
            "<h3>{}{}</h3>\n<div class=\"charts\">\n",
            escape(&t.run),
            escape(&cell)
        );
        let none: &[plot::Marks] = &[];
        for (name, y_desc, series, marks) in [
            ("RTO over time", "RTO (s)", &t.rto, none),
            ("Bottleneck queue", "queue (bytes)", &t.queue, &t.drops[..]),
            ("TCP cwnd per ACK", "cwnd (segments)", &t.cwnd, none),
        ] {
            if series.is_empty() {
                continue;
            }
            let title = format!("{name} · {}", t.run);
            page.push_str(
                &plot::lines_marked(&title, "time (s)", y_desc, series, marks, false)
                    .map_err(err)?,
            );
        }
        page.push_str("</div>\n");
    }
    Ok(page)
}

/// Run id → `cc=… · buffer_bytes=… · clients=… · seed=…` of the run's flows.
fn run_cells(
    samples_rows: &[SummaryRow],
    flow_cell: &std::collections::HashMap<(u64, u64), usize>,
    seeds: &std::collections::HashMap<u64, String>,
) -> std::collections::HashMap<u64, String> {
    let mut per_run: std::collections::BTreeMap<u64, Vec<usize>> =
        std::collections::BTreeMap::new();
    for (&(run, _), &cell) in flow_cell {
        let v = per_run.entry(run).or_default();
        if !v.contains(&cell) {
            v.push(cell);
        }
    }
    per_run
        .into_iter()
        .map(|(run, mut cells)| {
            cells.sort_unstable();
            let ccs: Vec<&str> = cells.iter().map(|&c| samples_rows[c].cc.as_str()).collect();
            let r = &samples_rows[cells[0]];
            let mut text = format!(
                "cc={} · buffer_bytes={} · clients={}",
                ccs.join("+"),
                r.buffer_bytes,
                r.clients
            );
            if r.loss != "none" {
                text.push_str(&format!(" · loss={}", r.loss));
            }
            if let Some(seed) = seeds.get(&run) {
                text.push_str(&format!(" · seed={seed}"));
            }
            (run, text)
        })
        .collect()
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
            (Err(why), _) => (why.to_string(), String::new(), String::new()),
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
    fn flows_are_verified_column_by_column() {
        let path = Path::new("d/flows.csv");
        let records = |row: &str| csv::parse(&format!("run,cc,fct_s,completed,speed\n{row}\n"));
        let ok = |row: &str| verify_flows(path, &records(row)).is_ok();
        // Empty numbers, and sweep columns (free text, negative too), are accepted.
        assert!(ok("0,default,,false,-1"));
        assert!(ok("0,default,1.5,true,fast"));
        for (row, column, why) in [
            ("0,default,NaN,true,1", "fct_s", "not a number"),
            ("0,default,inf,true,1", "fct_s", "infinite"),
            ("-1,default,1,true,1", "run", "negative"),
            ("0,default,1,yes,1", "completed", "neither true nor false"),
        ] {
            match verify_flows(path, &records(row)) {
                Err(ReportError::Corrupt {
                    line,
                    column: c,
                    why: w,
                    ..
                }) => assert_eq!((line, c.as_str(), w), (2, column, why), "{row}"),
                other => panic!("{row}: {other:?}"),
            }
        }
        let e = verify_flows(path, &records("0,default,1")).unwrap_err();
        assert!(e.to_string().contains("fewer fields"), "{e}");
        assert!(e.to_string().starts_with("d/flows.csv: line 2"), "{e}");
    }

    #[test]
    fn escaping() {
        assert_eq!(
            escape("<a href=\"x\">&'"),
            "&lt;a href=&quot;x&quot;&gt;&amp;&#39;"
        );
    }
}
