//! A mesh's topology: its nodes where `manifest.json` places them (the first combination's
//! `topology.nodes`, `x_m`, `y_m`, `role`), the radio links within `tx_range_m`, and the hops
//! data frames took in the first traced run that has `frames.parquet` / `frames.csv` (routes
//! are built during the run and are not in the results otherwise).

use std::collections::BTreeMap;
use std::path::Path;

use plotters::prelude::*;

use super::plot::colour;

/// One node.
pub struct Node {
    /// `client`, `server`, `border-router` or `router`.
    pub role: String,
    /// Position (m).
    pub x: f64,
    /// Position (m).
    pub y: f64,
}

/// A mesh's layout and, when a run was traced, the hops of its data frames.
pub struct Topology {
    /// The nodes, by id.
    pub nodes: Vec<Node>,
    /// The radio range (m), when the manifest gives it.
    pub range_m: Option<f64>,
    /// `(node, node)` (lower id first) → data frames decoded on that hop, either direction.
    pub hops: BTreeMap<(u32, u32), u64>,
    /// The traced run the hops come from.
    pub traced_run: Option<String>,
}

/// The topology of the mesh results in `dir`; `None` for a star or without a manifest.
pub fn load(dir: &Path) -> Option<Topology> {
    let m = super::read_manifest(dir)?;
    let t = m
        .get("combinations")?
        .get(0)?
        .get("config")?
        .get("topology")?;
    if t.get("kind")?.as_str()? != "mesh" {
        return None;
    }
    let nodes: Vec<Node> = t
        .get("nodes")?
        .as_array()?
        .iter()
        .filter_map(|n| {
            Some(Node {
                role: n.get("role")?.as_str()?.to_string(),
                x: n.get("x_m")?.as_f64()?,
                y: n.get("y_m")?.as_f64()?,
            })
        })
        .collect();
    if nodes.is_empty() {
        return None;
    }
    let range_m = t
        .get("params")
        .and_then(|p| p.get("tx_range_m"))
        .and_then(serde_json::Value::as_f64);
    let mut hops = BTreeMap::new();
    let mut traced_run = None;
    if let Ok(entries) = std::fs::read_dir(dir.join("trace")) {
        let mut runs: Vec<String> = entries
            .filter_map(Result::ok)
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .collect();
        runs.sort();
        for run in runs {
            let Some(frames) = super::trace::read_table(&dir.join("trace").join(&run), "frames")
            else {
                continue;
            };
            let Some((header, rows)) = frames.split_first() else {
                continue;
            };
            let col = |n: &str| header.iter().position(|h| h == n);
            let (Some(node), Some(to), Some(kind), Some(decoded)) =
                (col("node"), col("to"), col("kind"), col("decoded"))
            else {
                continue;
            };
            for r in rows {
                if r.get(kind).map(String::as_str) != Some("data")
                    || r.get(decoded).map(String::as_str) != Some("true")
                {
                    continue;
                }
                let id = |c: usize| r.get(c).and_then(|v| v.parse::<u32>().ok());
                if let (Some(a), Some(b)) = (id(node), id(to)) {
                    *hops.entry((a.min(b), a.max(b))).or_insert(0) += 1;
                }
            }
            traced_run = Some(run);
            break;
        }
    }
    Some(Topology {
        nodes,
        range_m,
        hops,
        traced_run,
    })
}

/// The colour index of a role.
fn role_colour(role: &str) -> usize {
    match role {
        "border-router" => 6,
        "server" => 1,
        "client" => 0,
        _ => 2,
    }
}

/// The drawing: radio links grey, hops of data frames blue (wider with more frames), nodes
/// coloured by role and labelled with their id.
pub fn draw(t: &Topology) -> Result<String, super::plot::PlotError> {
    let err = |e: &dyn std::fmt::Display| super::plot::PlotError(e.to_string());
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (560, 420)).into_drawing_area();
        root.fill(&WHITE).map_err(|e| err(&e))?;
        let (mut x0, mut x1, mut y0, mut y1) = (f64::MAX, f64::MIN, f64::MAX, f64::MIN);
        for n in &t.nodes {
            x0 = x0.min(n.x);
            x1 = x1.max(n.x);
            y0 = y0.min(n.y);
            y1 = y1.max(n.y);
        }
        let pad = ((x1 - x0).max(y1 - y0) * 0.1).max(1.0);
        let mut chart = ChartBuilder::on(&root)
            .caption(
                match &t.traced_run {
                    Some(run) => format!("Mesh topology, hops of data frames in {run}"),
                    None => "Mesh topology (radio links; trace a run for its hops)".to_string(),
                },
                ("sans-serif", 15),
            )
            .margin(8)
            .x_label_area_size(34)
            .y_label_area_size(48)
            // Room at the top for the legend.
            .build_cartesian_2d(
                (x0 - pad)..(x1 + pad),
                (y0 - pad)..(y1 + pad + 0.35 * (y1 - y0).max(x1 - x0).max(1.0)),
            )
            .map_err(|e| err(&e))?;
        chart
            .configure_mesh()
            .max_light_lines(1)
            .x_desc("x (m)")
            .y_desc("y (m)")
            .draw()
            .map_err(|e| err(&e))?;
        let at = |i: usize| (t.nodes[i].x, t.nodes[i].y);
        if let Some(range) = t.range_m {
            for i in 0..t.nodes.len() {
                for j in i + 1..t.nodes.len() {
                    let (a, b) = (at(i), at(j));
                    if ((a.0 - b.0).powi(2) + (a.1 - b.1).powi(2)).sqrt() <= range + 1e-9 {
                        chart
                            .draw_series([PathElement::new(
                                vec![a, b],
                                RGBColor(150, 150, 150).stroke_width(2),
                            )])
                            .map_err(|e| err(&e))?;
                    }
                }
            }
        }
        let most = t.hops.values().copied().max().unwrap_or(1).max(1);
        for (&(a, b), &count) in &t.hops {
            let (a, b) = (a as usize, b as usize);
            if a >= t.nodes.len() || b >= t.nodes.len() {
                continue;
            }
            let width = 1 + (4 * count / most) as u32;
            chart
                .draw_series([PathElement::new(
                    vec![at(a), at(b)],
                    colour(5).stroke_width(width),
                )])
                .map_err(|e| err(&e))?;
        }
        for role in ["border-router", "server", "client", "router"] {
            let c = colour(role_colour(role));
            let points: Vec<(f64, f64)> = (0..t.nodes.len())
                .filter(|&i| t.nodes[i].role == role)
                .map(at)
                .collect();
            if points.is_empty() {
                continue;
            }
            chart
                .draw_series(points.into_iter().map(|p| Circle::new(p, 7, c.filled())))
                .map_err(|e| err(&e))?
                .label(role)
                .legend(move |(x, y)| Circle::new((x + 9, y), 5, c.filled()));
        }
        for i in 0..t.nodes.len() {
            chart
                .draw_series([EmptyElement::at(at(i))
                    + Text::new(
                        format!("{i}"),
                        (8, -16),
                        ("sans-serif", 12).into_font().color(&BLACK),
                    )])
                .map_err(|e| err(&e))?;
        }
        super::plot::legend(&mut chart, SeriesLabelPosition::UpperRight)?;
        root.present().map_err(|e| err(&e))?;
    }
    Ok(svg)
}
