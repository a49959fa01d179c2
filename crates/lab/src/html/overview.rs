//! The overview: each metric across the swept axes, one line per algorithm, as the papers
//! draw them (e.g. FCT against the number of clients, one panel per buffer size).
//!
//! The x axis is the numeric sweep axis with the most values (`clients`, `buffer_bytes`, a
//! swept parameter); the other axes that vary make the small multiples (one chart per
//! combination of their values).

use std::collections::HashMap;

use super::cells::settings;
use super::plot::Value;
use crate::results::SummaryRow;
use crate::stats::Quantile;

/// Small multiples drawn per metric at most (the rest are in the summary table).
pub const MAX_FACETS: usize = 24;

/// How the cells are laid out: the x axis and the facets.
#[derive(Debug, Clone, PartialEq)]
pub struct Layout {
    /// The x axis's name; `None` when nothing but the algorithm varies (the x positions are
    /// then the algorithms).
    pub x: Option<String>,
    /// The x positions' values.
    pub x_values: Vec<String>,
    /// The facet axes' names.
    pub facet_axes: Vec<String>,
    /// The facets: their axes' values, in order of first appearance.
    pub facets: Vec<Vec<String>>,
    /// The algorithms, in order of first appearance (their colour index is their position).
    pub algorithms: Vec<String>,
}

/// The x axis's description with its unit.
pub fn axis_desc(name: &str) -> String {
    match name {
        "clients" => "clients (flows)".to_string(),
        "buffer_bytes" => "buffer (bytes)".to_string(),
        "loss" => "loss".to_string(),
        other => other.to_string(),
    }
}

/// Whether every value of `values` reads as a number.
fn numeric(values: &[&str]) -> bool {
    values.iter().all(|v| v.parse::<f64>().is_ok())
}

/// The layout of `rows`: the axes that vary (one of each set of axes that always vary
/// together: `clients` rather than a swept `count`), the numeric one with the most values as x.
pub fn layout(rows: &[SummaryRow]) -> Layout {
    let all: Vec<Vec<(String, String)>> = rows.iter().map(settings).collect();
    let keys = all.first().map_or(0, Vec::len);
    // The sweep columns first (what the scenario varies, e.g. `shape` rather than the
    // `clients` it implies), then the named settings; a named setting with the very values of
    // a sweep column takes its place below (`clients` for a swept `count`).
    let sweep = rows.first().map_or(0, |r| r.sweep.len());
    let order: Vec<usize> = (0..sweep).chain(sweep..keys).collect();
    let value = |r: usize, k: usize| all[r][k].1.as_str();
    let same_partition = |a: usize, b: usize| {
        let mut ab: HashMap<&str, &str> = HashMap::new();
        let mut ba: HashMap<&str, &str> = HashMap::new();
        (0..all.len()).all(|r| {
            let (x, y) = (value(r, a), value(r, b));
            *ab.entry(x).or_insert(y) == y && *ba.entry(y).or_insert(x) == x
        })
    };
    let mut kept: Vec<usize> = Vec::new();
    for &k in &order {
        let varies = (0..all.len()).any(|r| value(r, k) != value(0, k));
        if !varies {
            continue;
        }
        match kept.iter().position(|&j| same_partition(j, k)) {
            None => kept.push(k),
            Some(i) if (0..all.len()).all(|r| value(r, kept[i]) == value(r, k)) => kept[i] = k,
            Some(_) => {}
        }
    }
    let distinct = |k: usize| -> Vec<String> {
        let mut v: Vec<String> = Vec::new();
        for r in 0..all.len() {
            if !v.iter().any(|x| x == value(r, k)) {
                v.push(value(r, k).to_string());
            }
        }
        v
    };
    let x = kept
        .iter()
        .copied()
        .filter(|&k| numeric(&distinct(k).iter().map(String::as_str).collect::<Vec<_>>()))
        .max_by_key(|&k| (distinct(k).len(), std::cmp::Reverse(k_rank(&order, k))))
        .or_else(|| {
            kept.iter()
                .copied()
                .max_by_key(|&k| (distinct(k).len(), std::cmp::Reverse(k_rank(&order, k))))
        });
    let mut algorithms: Vec<String> = Vec::new();
    for r in rows {
        if !algorithms.contains(&r.cc) {
            algorithms.push(r.cc.clone());
        }
    }
    // Nothing but the algorithm varies: the algorithms are the x positions.
    let mut x_values = x.map(distinct).unwrap_or_else(|| algorithms.clone());
    if x_values.iter().all(|v| v.parse::<f64>().is_ok()) {
        x_values.sort_by(|a, b| {
            a.parse::<f64>()
                .unwrap_or(0.0)
                .total_cmp(&b.parse::<f64>().unwrap_or(0.0))
        });
    }
    let facet_keys: Vec<usize> = kept.iter().copied().filter(|&k| Some(k) != x).collect();
    let mut facets: Vec<Vec<String>> = Vec::new();
    for r in 0..all.len() {
        let f: Vec<String> = facet_keys
            .iter()
            .map(|&k| value(r, k).to_string())
            .collect();
        if !facets.contains(&f) {
            facets.push(f);
        }
    }
    Layout {
        x: x.map(|k| all[0][k].0.clone()),
        x_values,
        facet_axes: facet_keys.iter().map(|&k| all[0][k].0.clone()).collect(),
        facets,
        algorithms,
    }
}

fn k_rank(order: &[usize], k: usize) -> usize {
    order.iter().position(|&o| o == k).unwrap_or(usize::MAX)
}

impl Layout {
    /// The title of facet `f`, e.g. `buffer_bytes=2500 · workload=continuous`.
    pub fn facet_title(&self, f: usize) -> String {
        self.facet_axes
            .iter()
            .zip(&self.facets[f])
            .map(|(a, v)| format!("{a}={v}"))
            .collect::<Vec<_>>()
            .join(" · ")
    }

    /// `(facet, x position, algorithm)` of a row.
    pub fn place(&self, row: &SummaryRow) -> Option<(usize, usize, usize)> {
        let s = settings(row);
        let get = |name: &str| s.iter().find(|(k, _)| k == name).map(|(_, v)| v.as_str());
        let a = self.algorithms.iter().position(|c| *c == row.cc)?;
        let x = match &self.x {
            None => a,
            Some(name) => self
                .x_values
                .iter()
                .position(|v| Some(v.as_str()) == get(name))?,
        };
        let facet: Vec<&str> = self
            .facet_axes
            .iter()
            .map(|a| get(a).unwrap_or(""))
            .collect();
        let f = self
            .facets
            .iter()
            .position(|v| v.iter().map(String::as_str).eq(facet.iter().copied()))?;
        Some((f, x, a))
    }

    /// For each facet, one series per algorithm of `metric`'s value at each x position
    /// (`values[row index]`).
    pub fn grid(&self, rows: &[SummaryRow], values: &[Value]) -> Vec<Vec<super::plot::XSeries>> {
        let mut out: Vec<Vec<super::plot::XSeries>> = (0..self.facets.len())
            .map(|_| {
                self.algorithms
                    .iter()
                    .enumerate()
                    .map(|(i, a)| super::plot::XSeries {
                        label: a.clone(),
                        colour: i,
                        values: vec![Value::Missing; self.x_values.len()],
                    })
                    .collect()
            })
            .collect();
        for (row, v) in rows.iter().zip(values) {
            if let Some((f, x, a)) = self.place(row) {
                let slot = &mut out[f][a].values[x];
                if *slot == Value::Missing {
                    *slot = *v;
                }
            }
        }
        // Algorithms absent from a facet draw nothing there.
        for series in &mut out {
            series.retain(|s| s.values.iter().any(|v| *v != Value::Missing));
        }
        out
    }
}

/// The median FCT with its 95 % interval, unbounded when censored.
pub fn fct_median(row: &SummaryRow) -> Value {
    quantile_value(row.fct_s.map(|q| q[3]), row.fct_p50_ci95_s)
}

/// A quantile as a [`Value`], with an interval whose `+∞` end is unbounded.
pub fn quantile_value(q: Option<Quantile>, ci: Option<(f64, f64)>) -> Value {
    match q {
        None => Value::Missing,
        Some(Quantile::AtLeast(x)) => Value::AtLeast(x),
        Some(Quantile::Exact(y)) => Value::Exact {
            y,
            ci: ci
                .filter(|(lo, _)| lo.is_finite())
                .map(|(lo, hi)| (lo, hi.is_finite().then_some(hi))),
        },
    }
}

/// The mean of a sample, `Missing` when empty.
pub fn mean(sample: &[f64]) -> Value {
    if sample.is_empty() {
        return Value::Missing;
    }
    Value::Exact {
        y: sample.iter().sum::<f64>() / sample.len() as f64,
        ci: None,
    }
}

/// A plain number as a [`Value`].
pub fn exact(x: Option<f64>) -> Value {
    x.filter(|x| x.is_finite())
        .map_or(Value::Missing, |y| Value::Exact { y, ci: None })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(clients: &str, buffer: &str, cc: &str) -> SummaryRow {
        SummaryRow {
            observe: None,
            combination: 0,
            sweep: vec![("count".into(), clients.into())],
            clients: clients.into(),
            buffer_bytes: buffer.into(),
            loss: "none".into(),
            cc: cc.into(),
            workload: "continuous".into(),
            flows: 10,
            n: 10,
            unfinished_gave_up: 0,
            unfinished_time_cap: 0,
            fct_s: None,
            fct_mean_s: None,
            fct_sd_s: None,
            fct_p50_ci95_s: None,
            retransmissions_median: None,
            unnecessary_retransmissions_median: None,
            transmission_counts: vec![],
            mesh: Vec::new(),
            fct50: None,
        }
    }

    /// Clients (three values, a swept `count` saying the same) on x, buffers (two) as facets.
    #[test]
    fn the_numeric_axis_with_most_values_is_x() {
        let mut rows = Vec::new();
        for b in ["28200", "2500"] {
            for c in ["100", "10", "50"] {
                for cc in ["default", "fasor"] {
                    rows.push(row(c, b, cc));
                }
            }
        }
        let l = layout(&rows);
        assert_eq!(l.x.as_deref(), Some("clients"));
        assert_eq!(l.x_values, ["10", "50", "100"]);
        assert_eq!(l.facet_axes, ["buffer_bytes"]);
        assert_eq!(
            l.facets,
            [vec!["28200".to_string()], vec!["2500".to_string()]]
        );
        assert_eq!(l.algorithms, ["default", "fasor"]);
        assert_eq!(l.place(&rows[3]), Some((0, 0, 1)));
        assert_eq!(l.facet_title(1), "buffer_bytes=2500");
        let values: Vec<Value> = (0..rows.len()).map(|i| exact(Some(i as f64))).collect();
        let grid = l.grid(&rows, &values);
        assert_eq!(grid.len(), 2);
        assert_eq!(grid[1][0].values[0], exact(Some(8.0)));
        // A swept `shape` implying the number of clients: the facets are the shapes.
        let mut shaped = rows.clone();
        for r in &mut shaped {
            let shape = match r.clients.as_str() {
                "10" => "chain",
                "50" => "flower",
                _ => "grid",
            };
            r.sweep = vec![("shape".into(), shape.into())];
        }
        let l2 = layout(&shaped);
        assert_eq!(l2.x.as_deref(), Some("buffer_bytes"));
        assert_eq!(l2.facet_axes, ["shape"]);
        // Only the algorithm varies: the algorithms are the x positions.
        let l = layout(&rows[..2]);
        assert_eq!((l.x.clone(), l.facets.len()), (None, 1));
        assert_eq!(l.x_values, ["default", "fasor"]);
        assert_eq!(l.place(&rows[1]), Some((0, 1, 1)));
    }

    #[test]
    fn an_unbounded_median_stays_unbounded() {
        assert_eq!(
            quantile_value(Some(Quantile::AtLeast(30.0)), Some((10.0, f64::INFINITY))),
            Value::AtLeast(30.0)
        );
        assert_eq!(
            quantile_value(Some(Quantile::Exact(3.0)), Some((2.0, f64::INFINITY))),
            Value::Exact {
                y: 3.0,
                ci: Some((2.0, None))
            }
        );
    }
}
