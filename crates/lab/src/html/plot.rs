//! The report's charts as SVG text (plotters' SVG backend; text is SVG `<text>`, so no font
//! file is loaded and the page needs nothing from the network).

use plotters::coord::ranged1d::{IntoSegmentedCoord, SegmentValue};
use plotters::prelude::*;

use crate::stats::{censored_quantile, Quantile};

/// Chart size in pixels.
const WIDTH_PX: u32 = 560;
/// Chart height in pixels.
const HEIGHT_PX: u32 = 320;
/// Points drawn per CDF or time series at most (quantiles / evenly taken samples), which keeps
/// the page small whatever the number of flows.
const MAX_POINTS: usize = 400;

/// One box of a box plot: a label and its sample, sorted ascending.
pub struct Box<'a> {
    /// Shown under the box.
    pub label: &'a str,
    /// The sample, ascending, no NaN.
    pub sorted: &'a [f64],
    /// Censored values of the sample (unfinished flows' lower bounds), ascending: ranked
    /// above every value of `sorted` ([`censored_quantile`]).
    pub censored: &'a [f64],
}

/// One line of a line chart.
pub struct Series {
    /// Shown in the legend.
    pub label: String,
    /// `(x, y)` points in order of x.
    pub points: Vec<(f64, f64)>,
}

fn err(e: impl std::fmt::Display) -> String {
    format!("plot: {e}")
}

/// A colour per series index (plotters' 99-colour palette).
fn colour(i: usize) -> RGBColor {
    let c = Palette99::pick(i).to_rgba();
    RGBColor(c.0, c.1, c.2)
}

/// Upper end of an axis holding values up to `max`: 5 % headroom, never an empty range.
fn top(max: f64) -> f64 {
    if max > 0.0 && max.is_finite() {
        max * 1.05
    } else {
        1.0
    }
}

/// Box plots in the papers' style: the box spans p25 to p75 with a line at the median, the
/// whiskers reach p10 and p90, and a dot marks the minimum and the maximum. An empty sample
/// leaves its slot blank. A quantile unbounded by censored values is drawn at the top of the
/// chart, and the slot is labelled with the number of censored values (`▲ 3 unfinished`).
pub fn boxes(title: &str, y_desc: &str, items: &[Box<'_>]) -> Result<String, String> {
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (WIDTH_PX, HEIGHT_PX)).into_drawing_area();
        root.fill(&WHITE).map_err(err)?;
        let max = items
            .iter()
            .flat_map(|b| b.sorted.last().into_iter().chain(b.censored.last()))
            .fold(0.0, |a: f64, &b| a.max(b));
        let y_top = top(max);
        let n = items.len().max(1);
        let mut chart = ChartBuilder::on(&root)
            .caption(title, ("sans-serif", 15))
            .margin(8)
            .x_label_area_size(34)
            .y_label_area_size(56)
            // plotters' integer ranges include their end: 0..n − 1 is n segments.
            .build_cartesian_2d((0..n.saturating_sub(1).max(1)).into_segmented(), 0.0..y_top)
            .map_err(err)?;
        let label = |v: &SegmentValue<usize>| {
            match v {
                SegmentValue::CenterOf(i) => items.get(*i).map(|b| b.label.to_string()),
                _ => None,
            }
            .unwrap_or_default()
        };
        chart
            .configure_mesh()
            .max_light_lines(1)
            .disable_x_mesh()
            .x_labels(n)
            .x_label_formatter(&label)
            .y_desc(y_desc)
            .draw()
            .map_err(err)?;
        for (i, b) in items.iter().enumerate() {
            let q = |p: f64| {
                censored_quantile(b.sorted, b.censored, p).map(|q| match q {
                    Quantile::Exact(x) => x,
                    Quantile::AtLeast(_) => y_top,
                })
            };
            let (Some(min), Some(p10), Some(p25), Some(p50), Some(p75), Some(p90), Some(max)) =
                (q(0.0), q(0.1), q(0.25), q(0.5), q(0.75), q(0.9), q(1.0))
            else {
                continue;
            };
            let c = colour(i);
            let (x0, x1, xc) = (
                SegmentValue::Exact(i),
                SegmentValue::Exact(i + 1),
                SegmentValue::CenterOf(i),
            );
            let mut body =
                Rectangle::new([(x0.clone(), p25), (x1.clone(), p75)], c.mix(0.35).filled());
            body.set_margin(0, 0, 12, 12);
            let mut outline =
                Rectangle::new([(x0.clone(), p25), (x1.clone(), p75)], c.stroke_width(1));
            outline.set_margin(0, 0, 12, 12);
            chart.draw_series([body, outline]).map_err(err)?;
            let mut median = Rectangle::new([(x0, p50), (x1, p50)], BLACK.stroke_width(2));
            median.set_margin(0, 0, 12, 12);
            chart.draw_series([median]).map_err(err)?;
            chart
                .draw_series([
                    PathElement::new(vec![(xc.clone(), p10), (xc.clone(), p25)], c),
                    PathElement::new(vec![(xc.clone(), p75), (xc.clone(), p90)], c),
                ])
                .map_err(err)?;
            chart
                .draw_series([min, max].map(|y| Circle::new((xc.clone(), y), 2, c.filled())))
                .map_err(err)?;
            if !b.censored.is_empty() {
                let text = format!("▲ {} unfinished", b.censored.len());
                chart
                    .draw_series([Text::new(
                        text,
                        (SegmentValue::Exact(i), y_top),
                        ("sans-serif", 11).into_font().color(&BLACK),
                    )])
                    .map_err(err)?;
            }
        }
        root.present().map_err(err)?;
    }
    Ok(svg)
}

/// At most [`MAX_POINTS`] points of `points`, evenly taken, the last one kept.
fn thin(points: &[(f64, f64)]) -> Vec<(f64, f64)> {
    if points.len() <= MAX_POINTS {
        return points.to_vec();
    }
    let step = points.len() as f64 / MAX_POINTS as f64;
    let mut out: Vec<(f64, f64)> = (0..MAX_POINTS)
        .map(|k| points[(k as f64 * step) as usize])
        .collect();
    out.extend(points.last().copied());
    out
}

/// The empirical CDF of `sorted` as a step line: (x, fraction of the sample ≤ x), over a
/// sample of `total` values of which `sorted` are observed (the others censored above them:
/// the line ends at `sorted.len() / total`).
pub fn cdf_points(sorted: &[f64], total: usize) -> Vec<(f64, f64)> {
    let n = total.max(sorted.len()) as f64;
    let mut points = Vec::with_capacity(2 * sorted.len());
    for (i, &x) in sorted.iter().enumerate() {
        points.push((x, i as f64 / n));
        points.push((x, (i + 1) as f64 / n));
    }
    points
}

/// A line chart of `series` on linear axes from 0 (the y axis ends at 1 when `unit_y`).
pub fn lines(
    title: &str,
    x_desc: &str,
    y_desc: &str,
    series: &[Series],
    unit_y: bool,
) -> Result<String, String> {
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (WIDTH_PX, HEIGHT_PX)).into_drawing_area();
        root.fill(&WHITE).map_err(err)?;
        let all = || series.iter().flat_map(|s| s.points.iter());
        let x_max = all().map(|p| p.0).fold(0.0, f64::max);
        let y_max = if unit_y {
            1.0
        } else {
            top(all().map(|p| p.1).fold(0.0, f64::max))
        };
        let mut chart = ChartBuilder::on(&root)
            .caption(title, ("sans-serif", 15))
            .margin(8)
            .x_label_area_size(34)
            .y_label_area_size(56)
            .build_cartesian_2d(0.0..top(x_max), 0.0..y_max)
            .map_err(err)?;
        chart
            .configure_mesh()
            .max_light_lines(1)
            .x_desc(x_desc)
            .y_desc(y_desc)
            .draw()
            .map_err(err)?;
        for (i, s) in series.iter().enumerate() {
            let c = colour(i);
            chart
                .draw_series(LineSeries::new(thin(&s.points), c.stroke_width(2)))
                .map_err(err)?
                .label(s.label.clone())
                .legend(move |(x, y)| {
                    PathElement::new(vec![(x, y), (x + 18, y)], c.stroke_width(2))
                });
        }
        if !series.is_empty() {
            chart
                .configure_series_labels()
                .position(SeriesLabelPosition::LowerRight)
                .background_style(WHITE.mix(0.85))
                .border_style(BLACK)
                .draw()
                .map_err(err)?;
        }
        root.present().map_err(err)?;
    }
    Ok(svg)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn charts_are_svg_with_their_labels() {
        let a = [1.0, 2.0, 3.0, 4.0, 10.0];
        let svg = boxes(
            "FCT",
            "s",
            &[
                Box {
                    label: "default",
                    sorted: &a,
                    censored: &[],
                },
                Box {
                    label: "fasor",
                    sorted: &[],
                    censored: &[],
                },
                Box {
                    label: "cocoa",
                    sorted: &a,
                    censored: &[20.0, 30.0],
                },
            ],
        )
        .unwrap();
        assert!(svg.starts_with("<svg"), "{svg}");
        // plotters writes each text on a line of its own.
        assert!(
            svg.contains(">\ndefault\n<") && svg.contains(">\nfasor\n<"),
            "{svg}"
        );
        // Two of seven unfinished: the box says so.
        assert!(svg.contains(">\n▲ 2 unfinished\n<"), "{svg}");
        assert_eq!(svg.matches("unfinished").count(), 1);
        let cdf = cdf_points(&a, 5);
        assert_eq!(cdf[..3], [(1.0, 0.0), (1.0, 0.2), (2.0, 0.2)]);
        assert_eq!(cdf.last(), Some(&(10.0, 1.0)));
        // Five finished of eight flows: the CDF stops at 5/8.
        assert_eq!(cdf_points(&a, 8).last(), Some(&(10.0, 0.625)));
        let svg = lines(
            "CDF",
            "FCT (s)",
            "fraction",
            &[Series {
                label: "default".into(),
                points: cdf,
            }],
            true,
        )
        .unwrap();
        assert!(
            svg.contains("<polyline") && svg.contains(">\ndefault\n<"),
            "{svg}"
        );
        let many: Vec<(f64, f64)> = (0..10_000).map(|i| (f64::from(i), 1.0)).collect();
        let thinned = thin(&many);
        assert_eq!(thinned.len(), MAX_POINTS + 1);
        assert_eq!(thinned.last(), Some(&(9999.0, 1.0)));
    }
}
