//! A drawing of trajectories as SVG (docs/mesh/mobility-*.svg): the area, every node's start as
//! a dot, and the paths of chosen nodes up to a time, 10 px per metre.

use std::fmt::Write as _;

use super::{Area, Motion};

/// Stroke colours of the traced paths, in turn.
const COLOURS: [&str; 4] = ["#c00", "#06c", "#080", "#c60"];

impl Motion {
    /// `nodes`' paths over `[0, until_s]` inside `area`, with a title line.
    pub fn svg(&self, area: Area, nodes: &[u16], until_s: f64, title: &str) -> String {
        let scale = 10.0;
        let margin = 20.0;
        let px = |v: f64| v * scale + margin;
        let mut out = String::new();
        let _ = writeln!(
            out,
            "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{:.0}\" height=\"{:.0}\" font-family=\"sans-serif\" font-size=\"10\">",
            area.x * scale + 2.0 * margin,
            area.y * scale + 2.0 * margin + 14.0
        );
        let _ = writeln!(
            out,
            "  <rect x=\"{m:.1}\" y=\"{m:.1}\" width=\"{:.1}\" height=\"{:.1}\" fill=\"none\" stroke=\"#999\"/>",
            area.x * scale,
            area.y * scale,
            m = margin
        );
        for (i, &(x, y)) in self.fixed.iter().enumerate() {
            let fill = if self.paths[i].is_some() {
                "#bbb"
            } else {
                "black"
            };
            let _ = writeln!(
                out,
                "  <circle cx=\"{:.1}\" cy=\"{:.1}\" r=\"3\" fill=\"{fill}\"/>",
                px(x),
                px(y)
            );
        }
        for (k, &node) in nodes.iter().enumerate() {
            let Some(path) = self.trajectory(node) else {
                continue;
            };
            let mut points: Vec<(f64, f64)> = path
                .points()
                .iter()
                .take_while(|w| w.t_s < until_s)
                .map(|w| (w.x_m, w.y_m))
                .collect();
            points.push(path.position_at(until_s));
            let list: Vec<String> = points
                .iter()
                .map(|&(x, y)| format!("{:.1},{:.1}", px(x), px(y)))
                .collect();
            let _ = writeln!(
                out,
                "  <polyline points=\"{}\" fill=\"none\" stroke=\"{}\"><title>node {node}</title></polyline>",
                list.join(" "),
                COLOURS[k % COLOURS.len()]
            );
        }
        let _ = writeln!(
            out,
            "  <text x=\"{margin:.1}\" y=\"{:.1}\">{title}</text>",
            area.y * scale + 2.0 * margin + 8.0
        );
        out.push_str("</svg>\n");
        out
    }
}
