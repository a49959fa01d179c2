//! `coaplab suite report DIR` → `DIR/suite.html`: the overall ranking and every experiment's
//! scores first, then per experiment a Pantheon-style scatter (retransmissions per delivered
//! message against the FCT median, one point per algorithm with its 1-sigma ellipse over its
//! runs). Self-contained, as `coaplab report`'s page: inline SVG, nothing loaded.

use std::fmt::Write as _;

use super::score::{CellScore, Leaderboard, Metric};
use crate::html::{escape, plot};
use crate::stats::Quantile;

/// A censored quantile for reading: `1.234`, `≥1.234`, or `–`.
fn q(q: Option<Quantile>) -> String {
    match q {
        Some(Quantile::Exact(x)) => format!("{x:.3}"),
        Some(Quantile::AtLeast(x)) => format!("≥{x:.3}"),
        None => "–".into(),
    }
}

/// A number with `d` decimals, or `–`.
fn f(x: Option<f64>, d: usize) -> String {
    x.map_or_else(|| "–".into(), |x| format!("{x:.d$}"))
}

/// A table of rows of cells (header first).
fn table(rows: &[Vec<String>]) -> String {
    let mut out = String::from("<div class=\"wide\"><table>\n");
    for (i, r) in rows.iter().enumerate() {
        let tag = if i == 0 { "th" } else { "td" };
        out.push_str("<tr>");
        for c in r {
            let _ = write!(out, "<{tag}>{}</{tag}>", escape(c));
        }
        out.push_str("</tr>\n");
    }
    out.push_str("</table></div>\n");
    out
}

/// The experiment's scatter: per algorithm the FCT median against retransmissions per
/// delivered message, and the 1-sigma ellipse of the per-run pairs.
fn scatter(title: &str, cells: &[&CellScore], colour_of: &dyn Fn(&str) -> usize) -> String {
    let observe = cells.iter().any(|c| c.metric == Metric::NotificationDelay);
    let (what, y_label) = if observe {
        (
            "median notification delay",
            "median observer's median notification delay (s)",
        )
    } else {
        ("median FCT", "FCT median (s)")
    };
    let spots: Vec<plot::Spot> = cells
        .iter()
        .map(|c| {
            let (label, point) = match (c.fct_p50, c.retransmissions_per_message) {
                (Some(Quantile::Exact(y)), Some(x)) => (c.cc.clone(), Some((x, y))),
                (Some(Quantile::AtLeast(y)), _) => {
                    (format!("{}: {what} unbounded (≥{y:.1} s)", c.cc), None)
                }
                _ => (format!("{}: no delivered message", c.cc), None),
            };
            plot::Spot {
                label,
                colour: colour_of(&c.cc),
                point,
                ellipse: plot::covariance(&c.per_run),
            }
        })
        .collect();
    plot::scatter(
        title,
        "retransmissions per delivered message",
        y_label,
        &spots,
    )
    .unwrap_or_else(|e| format!("<p class=\"bad\">{}</p>", escape(&e.to_string())))
}

/// The page of a scored suite; `record` is the run's `suite.json`.
pub fn render(record: &serde_json::Value, board: &Leaderboard) -> String {
    let name = record["suite"].as_str().unwrap_or("?");
    let mut page = crate::html::head(&format!("coaplab suite: {name}"));
    let algorithms: Vec<String> = board.overall.iter().map(|o| o.cc.clone()).collect();
    let colour_of = |cc: &str| algorithms.iter().position(|a| a == cc).unwrap_or(0);
    let _ = writeln!(
        page,
        "<p class=\"note\">Suite <b>{name}</b> (file <code>{file}</code>), run by {version}; \
         {n} experiments × {a} algorithms. {desc}</p>",
        name = escape(name),
        file = escape(record["file"].as_str().unwrap_or("?")),
        version = escape(record["code_version"].as_str().unwrap_or("?")),
        n = board.experiments.len(),
        a = algorithms.len(),
        desc = escape(record["description"].as_str().unwrap_or("")),
    );
    // 1. The overall ranking.
    page.push_str(
        "<h2 id=\"leaderboard\">Leaderboard</h2>\n<p class=\"note\">Rank per experiment by FCT \
         median (ties by p95; equal keys share the mean position); mean normalised rank = the \
         mean over experiments of (rank − 1)/(n − 1): 0 is first in every experiment, 1 last \
         in every one; wins: experiments where the algorithm ranks first (docs/suite.md).</p>\n",
    );
    let mut rows = vec![vec![
        "#".to_string(),
        "cc".to_string(),
        "mean normalised rank".to_string(),
        "wins".to_string(),
    ]];
    rows[0].extend(board.experiments.iter().cloned());
    for (i, o) in board.overall.iter().enumerate() {
        let mut r = vec![
            (i + 1).to_string(),
            o.cc.clone(),
            format!("{:.3}", o.mean_normalised_rank),
            format!("{}/{}", o.wins, board.experiments.len()),
        ];
        r.extend(
            o.ranks
                .iter()
                .map(|r| r.map_or("–".into(), |r| r.to_string())),
        );
        rows.push(r);
    }
    page.push_str(&table(&rows));
    if !board.missing.is_empty() {
        let _ = writeln!(
            page,
            "<p class=\"bad\">Not run yet: {}</p>",
            escape(&board.missing.join(", "))
        );
    }
    // 2. Every experiment: its scores, its scatter.
    let experiments = record["experiments"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    for e in &board.experiments {
        let info = experiments
            .iter()
            .find(|x| x["name"].as_str() == Some(e.as_str()));
        let _ = writeln!(page, "<h2 id=\"{0}\">{0}</h2>", escape(e));
        if let Some(info) = info {
            let sets: Vec<String> = info["set"]
                .as_array()
                .map(|a| {
                    a.iter()
                        .filter_map(|s| s.as_str().map(str::to_string))
                        .collect()
                })
                .unwrap_or_default();
            let _ = writeln!(
                page,
                "<p class=\"note\">{desc} Scenario <code>{scenario}</code>, reduced by \
                 <code>{sets}</code>; flow groups under test {groups}; seed {seed}, \
                 {reps} replications, {runs} runs per algorithm.</p>",
                desc = escape(info["description"].as_str().unwrap_or("")),
                scenario = escape(info["scenario"].as_str().unwrap_or("?")),
                sets = escape(&if sets.is_empty() {
                    "nothing".to_string()
                } else {
                    sets.join(" ")
                }),
                groups = escape(&info["under_test"].to_string()),
                seed = info["seed"],
                reps = info["replications"],
                runs = info["runs_per_algorithm"],
            );
        }
        let cells: Vec<&CellScore> = board.cells.iter().filter(|c| &c.experiment == e).collect();
        let competing = cells.iter().any(|c| c.competitor_fct_p50.is_some());
        let observe = cells.iter().any(|c| c.metric == Metric::NotificationDelay);
        let (p50, p95) = if observe {
            (
                "notification delay p50 (s), median observer",
                "notification delay p95 (s), p95 observer",
            )
        } else {
            ("FCT p50 (s)", "FCT p95 (s)")
        };
        let mut rows = vec![[
            "rank",
            "cc",
            "flows",
            "unfinished",
            p50,
            p95,
            "retransmissions / message",
            "unnecessary / flow",
            "Jain's index",
        ]
        .map(String::from)
        .to_vec()];
        if observe {
            rows[0].push("notifications lost / sent".into());
        }
        if competing {
            rows[0].extend(["competitors' FCT p50 (s)".into(), "harm".into()]);
        }
        for c in &cells {
            let mut r = vec![
                c.rank.to_string(),
                c.cc.clone(),
                c.flows.to_string(),
                c.unfinished.to_string(),
                q(c.fct_p50),
                q(c.fct_p95),
                f(c.retransmissions_per_message, 3),
                f(c.unnecessary_per_flow, 2),
                f(c.jain, 3),
            ];
            if observe {
                r.push(
                    c.notifications
                        .map_or(String::new(), |(s, l)| format!("{l} / {s}")),
                );
            }
            if competing {
                r.push(q(c.competitor_fct_p50));
                r.push(f(c.harm, 3));
            }
            rows.push(r);
        }
        page.push_str(&table(&rows));
        page.push_str(&scatter(
            &format!(
                "{e}: {} vs retransmission cost (1σ ellipse over runs)",
                if observe { "notification delay" } else { "FCT" }
            ),
            &cells,
            &colour_of,
        ));
    }
    // 3. What reproduces it.
    let _ = writeln!(
        page,
        "<h2 id=\"suite-file\">Suite file</h2>\n<pre>{}</pre>\n</body></html>",
        escape(record["suite_text"].as_str().unwrap_or(""))
    );
    page
}
