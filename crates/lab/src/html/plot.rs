//! The report's charts as SVG text (plotters' SVG backend; text is SVG `<text>`, so no font
//! file is loaded and the page needs nothing from the network).

use plotters::coord::ranged1d::{IntoSegmentedCoord, SegmentValue};
use plotters::coord::types::RangedCoordf64;
use plotters::coord::{CoordTranslate, Shift};
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
    /// Its [`colour`] index (the algorithm's, the same across the page).
    pub colour: usize,
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
    /// Its [`colour`] index.
    pub colour: usize,
    /// `(x, y)` points in order of x.
    pub points: Vec<(f64, f64)>,
}

/// A chart that plotters could not draw (its SVG backend writes to memory, so in practice a
/// degenerate range or an empty series).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("plot: {0}")]
pub struct PlotError(pub String);

fn err(e: impl std::fmt::Display) -> PlotError {
    PlotError(e.to_string())
}

/// The chart's legend (its series' labels) in a white box at `position`.
pub(crate) fn legend<'a, 'b: 'a, CT: CoordTranslate>(
    chart: &mut ChartContext<'a, SVGBackend<'b>, CT>,
    position: SeriesLabelPosition,
) -> Result<(), PlotError> {
    chart
        .configure_series_labels()
        .position(position)
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK)
        .draw()
        .map_err(err)
}

/// A chart on linear axes `xs` × `ys` with a title, light grid and axis descriptions.
fn xy_chart<'a, 'b>(
    root: &'a DrawingArea<SVGBackend<'b>, Shift>,
    title: &str,
    (x_desc, y_desc): (&str, &str),
    xs: std::ops::Range<f64>,
    ys: std::ops::Range<f64>,
) -> Result<ChartContext<'a, SVGBackend<'b>, Cartesian2d<RangedCoordf64, RangedCoordf64>>, PlotError>
{
    let mut chart = ChartBuilder::on(root)
        .caption(title, ("sans-serif", 15))
        .margin(8)
        .x_label_area_size(34)
        .y_label_area_size(56)
        .build_cartesian_2d(xs, ys)
        .map_err(err)?;
    chart
        .configure_mesh()
        .max_light_lines(1)
        .x_desc(x_desc)
        .y_desc(y_desc)
        .draw()
        .map_err(err)?;
    Ok(chart)
}

/// The Okabe–Ito palette (colour-blind safe), in the order series take it; yellow last, as it
/// reads poorly on white.
pub const OKABE_ITO: [(u8, u8, u8); 8] = [
    (0x00, 0x72, 0xB2), // blue
    (0xD5, 0x5E, 0x00), // vermillion
    (0x00, 0x9E, 0x73), // bluish green
    (0xCC, 0x79, 0xA7), // reddish purple
    (0xE6, 0x9F, 0x00), // orange
    (0x56, 0xB4, 0xE9), // sky blue
    (0x00, 0x00, 0x00), // black
    (0xF0, 0xE4, 0x42), // yellow
];

/// The colour of series (algorithm) number `i`: Okabe–Ito, cycling.
pub fn colour(i: usize) -> RGBColor {
    let (r, g, b) = OKABE_ITO[i % OKABE_ITO.len()];
    RGBColor(r, g, b)
}

/// `#rrggbb` of [`colour`] `i`, for the page's legends.
pub fn colour_hex(i: usize) -> String {
    let (r, g, b) = OKABE_ITO[i % OKABE_ITO.len()];
    format!("#{r:02x}{g:02x}{b:02x}")
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
pub fn boxes(title: &str, y_desc: &str, items: &[Box<'_>]) -> Result<String, PlotError> {
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
            let c = colour(b.colour);
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
) -> Result<String, PlotError> {
    lines_marked(title, x_desc, y_desc, series, &[], unit_y)
}

/// Points marked on a line chart (e.g. drops by cause): a cross each.
pub struct Marks {
    /// Shown in the legend.
    pub label: String,
    /// Its [`colour`] index.
    pub colour: usize,
    /// `(x, y)` of each mark.
    pub points: Vec<(f64, f64)>,
}

/// [`lines`] with marks drawn over the lines (at most [`MAX_POINTS`] per set, evenly taken).
pub fn lines_marked(
    title: &str,
    x_desc: &str,
    y_desc: &str,
    series: &[Series],
    marks: &[Marks],
    unit_y: bool,
) -> Result<String, PlotError> {
    line_chart(Size::Full, title, (x_desc, y_desc), series, marks, unit_y)
}

/// Chart sizes: a full chart, or a small multiple (without a legend of its own: the page has
/// one above the small multiples).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Size {
    /// [`WIDTH_PX`] × [`HEIGHT_PX`].
    Full,
    /// A small multiple.
    Small,
}

/// A line chart of `series` with `marks` over it, at `size` (see [`lines`], [`lines_marked`]).
pub fn line_chart(
    size: Size,
    title: &str,
    (x_desc, y_desc): (&str, &str),
    series: &[Series],
    marks: &[Marks],
    unit_y: bool,
) -> Result<String, PlotError> {
    let mut svg = String::new();
    {
        let pixels = match size {
            Size::Full => (WIDTH_PX, HEIGHT_PX),
            Size::Small => (SMALL_WIDTH_PX, SMALL_HEIGHT_PX),
        };
        let root = SVGBackend::with_string(&mut svg, pixels).into_drawing_area();
        root.fill(&WHITE).map_err(err)?;
        let all = || {
            series
                .iter()
                .flat_map(|s| s.points.iter())
                .chain(marks.iter().flat_map(|m| m.points.iter()))
        };
        let x_max = all().map(|p| p.0).fold(0.0, f64::max);
        let y_max = if unit_y {
            1.0
        } else {
            top(all().map(|p| p.1).fold(0.0, f64::max))
        };
        let mut chart = xy_chart(&root, title, (x_desc, y_desc), 0.0..top(x_max), 0.0..y_max)?;
        for s in series {
            let c = colour(s.colour);
            chart
                .draw_series(LineSeries::new(thin(&s.points), c.stroke_width(2)))
                .map_err(err)?
                .label(s.label.clone())
                .legend(move |(x, y)| {
                    PathElement::new(vec![(x, y), (x + 18, y)], c.stroke_width(2))
                });
        }
        for m in marks {
            let c = colour(m.colour);
            chart
                .draw_series(
                    thin(&m.points)
                        .into_iter()
                        .map(|p| Cross::new(p, 4, c.stroke_width(2))),
                )
                .map_err(err)?
                .label(m.label.clone())
                .legend(move |(x, y)| Cross::new((x + 9, y), 4, c.stroke_width(2)));
        }
        if (!series.is_empty() || !marks.is_empty()) && size == Size::Full {
            legend(&mut chart, SeriesLabelPosition::LowerRight)?;
        }
        root.present().map_err(err)?;
    }
    Ok(svg)
}

/// Width of a small-multiple chart (one facet of the overview) in pixels.
const SMALL_WIDTH_PX: u32 = 400;
/// Height of a small-multiple chart in pixels.
const SMALL_HEIGHT_PX: u32 = 270;

/// One value of a metric at one x position.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Value {
    /// No value (no such cell, or the statistic is undefined).
    Missing,
    /// A finished value, with its 95 % interval when it has one (`hi` `None`: unbounded).
    Exact {
        /// The value.
        y: f64,
        /// `(lo, hi)`; `hi` `None` when the upper end is unbounded.
        ci: Option<(f64, Option<f64>)>,
    },
    /// Unbounded (censored by unfinished flows): at least this.
    AtLeast(f64),
}

/// One line of a [`by_x`] chart: a value per x position.
pub struct XSeries {
    /// Shown in the legend.
    pub label: String,
    /// Its [`colour`] index.
    pub colour: usize,
    /// One per x label.
    pub values: Vec<Value>,
}

/// A small-multiple line chart over categorical x positions (evenly spaced, labelled with
/// `x_labels`): a line with dots per series, a vertical bar for each interval, lines slightly
/// offset per series so that the intervals stay apart. An unbounded value is drawn as a hollow
/// triangle at the top edge with a dashed line from its lower bound up, and breaks the line:
/// it is never drawn as a number. An unbounded interval end reaches the top edge.
pub fn by_x(
    title: &str,
    x_desc: &str,
    x_labels: &[String],
    y_desc: &str,
    series: &[XSeries],
) -> Result<String, PlotError> {
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (SMALL_WIDTH_PX, SMALL_HEIGHT_PX))
            .into_drawing_area();
        root.fill(&WHITE).map_err(err)?;
        let n = x_labels.len().max(1);
        let max = series
            .iter()
            .flat_map(|s| s.values.iter())
            .map(|v| match *v {
                Value::Missing => 0.0,
                Value::Exact { y, ci } => {
                    ci.and_then(|(_, hi)| hi)
                        .map_or(y, |hi| if hi.is_finite() { hi.max(y) } else { y })
                }
                Value::AtLeast(x) => x,
            })
            .fold(0.0, f64::max);
        let unbounded = series.iter().flat_map(|s| s.values.iter()).any(|v| {
            matches!(v, Value::AtLeast(_))
                || matches!(
                    v,
                    Value::Exact {
                        ci: Some((_, None)),
                        ..
                    }
                )
        });
        // Differences may be negative: the axis then starts below 0.
        let min = series
            .iter()
            .flat_map(|s| s.values.iter())
            .map(|v| match *v {
                Value::Exact { y, ci } => ci.map_or(y, |(lo, _)| lo.min(y)),
                _ => 0.0,
            })
            .fold(0.0, f64::min);
        let y_bottom = if min < 0.0 { min * 1.05 } else { 0.0 };
        // Room above the largest value for the unbounded marks.
        let y_top = if unbounded { top(max) * 1.1 } else { top(max) };
        let mut chart = ChartBuilder::on(&root)
            .caption(title, ("sans-serif", 13))
            .margin(6)
            .x_label_area_size(40)
            .y_label_area_size(52)
            .build_cartesian_2d(-0.5..(n as f64 - 0.5), y_bottom..y_top)
            .map_err(err)?;
        chart
            .configure_mesh()
            .max_light_lines(1)
            .disable_x_mesh()
            .x_labels(2)
            .x_label_formatter(&|_| String::new())
            .y_desc(y_desc)
            .label_style(("sans-serif", 11))
            .draw()
            .map_err(err)?;
        if y_bottom < 0.0 {
            chart
                .draw_series([PathElement::new(
                    vec![(-0.5, 0.0), (n as f64 - 0.5, 0.0)],
                    BLACK.stroke_width(1),
                )])
                .map_err(err)?;
        }
        let font = ("sans-serif", 11).into_font().color(&BLACK);
        for (i, label) in x_labels.iter().enumerate() {
            let (x, y) = chart.backend_coord(&(i as f64, y_bottom));
            root.draw(&Text::new(
                label.clone(),
                (x - 3 * label.chars().count() as i32, y + 6),
                font.clone(),
            ))
            .map_err(err)?;
        }
        let (x, y) = chart.backend_coord(&((n as f64 - 1.0) / 2.0, y_bottom));
        root.draw(&Text::new(
            x_desc.to_string(),
            (x - 3 * x_desc.chars().count() as i32, y + 22),
            ("sans-serif", 12).into_font().color(&BLACK),
        ))
        .map_err(err)?;
        // Offset only where several series share an x position.
        let crowded = (0..n).any(|i| {
            series
                .iter()
                .filter(|s| s.values.get(i).is_some_and(|v| *v != Value::Missing))
                .count()
                > 1
        });
        let k = if crowded {
            series.len().max(1) as f64
        } else {
            1.0
        };
        let width = 0.3_f64.min(0.08 * k);
        for (j, s) in series.iter().enumerate() {
            let c = colour(s.colour);
            let dx = if k > 1.0 {
                -width / 2.0 + width * j as f64 / (k - 1.0)
            } else {
                0.0
            };
            // Lines between consecutive exact values.
            let mut run: Vec<(f64, f64)> = Vec::new();
            let mut runs: Vec<Vec<(f64, f64)>> = Vec::new();
            for (i, v) in s.values.iter().enumerate() {
                match *v {
                    Value::Exact { y, .. } => run.push((i as f64 + dx, y)),
                    _ => runs.push(std::mem::take(&mut run)),
                }
            }
            runs.push(run);
            for r in runs.into_iter().filter(|r| r.len() > 1) {
                chart
                    .draw_series(LineSeries::new(r, c.stroke_width(2)))
                    .map_err(err)?;
            }
            for (i, v) in s.values.iter().enumerate() {
                let x = i as f64 + dx;
                match *v {
                    Value::Missing => {}
                    Value::Exact { y, ci } => {
                        if let Some((lo, hi)) = ci {
                            let hi = hi.filter(|h| h.is_finite()).unwrap_or(y_top);
                            chart
                                .draw_series([PathElement::new(
                                    vec![(x, lo), (x, hi)],
                                    c.stroke_width(1),
                                )])
                                .map_err(err)?;
                        }
                        chart
                            .draw_series([Circle::new((x, y), 3, c.filled())])
                            .map_err(err)?;
                    }
                    Value::AtLeast(lo) => {
                        let dashes = dashed(lo, y_top);
                        chart
                            .draw_series(dashes.into_iter().map(|(a, b)| {
                                PathElement::new(vec![(x, a), (x, b)], c.stroke_width(1))
                            }))
                            .map_err(err)?;
                        chart
                            .draw_series([TriangleMarker::new((x, y_top), 5, c.stroke_width(2))])
                            .map_err(err)?;
                    }
                }
            }
        }
        root.present().map_err(err)?;
    }
    Ok(svg)
}

/// Dashes from `lo` up to `hi` (ten dashes with gaps).
fn dashed(lo: f64, hi: f64) -> Vec<(f64, f64)> {
    let step = (hi - lo) / 20.0;
    (0..10)
        .map(|k| {
            let a = lo + step * (2 * k) as f64;
            (a, a + step)
        })
        .collect()
}

/// One algorithm in a [`scatter`]: its point and its ellipse.
pub struct Spot {
    /// Shown in the legend.
    pub label: String,
    /// Its [`colour`] index.
    pub colour: usize,
    /// `(x, y)` of the point (e.g. the medians); `None`: not drawn (e.g. unbounded), the
    /// label says why.
    pub point: Option<(f64, f64)>,
    /// The 1-sigma covariance ellipse of the sample: its mean, the variances and covariance
    /// `(mean_x, mean_y, var_x, var_y, cov_xy)`; `None` below two samples.
    pub ellipse: Option<(f64, f64, f64, f64, f64)>,
}

/// The 1-sigma covariance ellipse of `(x, y)` samples (see [`Spot::ellipse`]).
pub fn covariance(samples: &[(f64, f64)]) -> Option<(f64, f64, f64, f64, f64)> {
    if samples.len() < 2 {
        return None;
    }
    let n = samples.len() as f64;
    let mx = samples.iter().map(|p| p.0).sum::<f64>() / n;
    let my = samples.iter().map(|p| p.1).sum::<f64>() / n;
    let (mut vx, mut vy, mut c) = (0.0, 0.0, 0.0);
    for &(x, y) in samples {
        vx += (x - mx) * (x - mx);
        vy += (y - my) * (y - my);
        c += (x - mx) * (y - my);
    }
    Some((mx, my, vx / (n - 1.0), vy / (n - 1.0), c / (n - 1.0)))
}

/// Points of the 1-sigma ellipse of a covariance (72 points, closed).
fn ellipse_points((mx, my, vx, vy, c): (f64, f64, f64, f64, f64)) -> Vec<(f64, f64)> {
    // Eigen-decomposition of [[vx, c], [c, vy]].
    let tr = (vx + vy) / 2.0;
    let d = (((vx - vy) / 2.0).powi(2) + c * c).sqrt();
    let (l1, l2) = ((tr + d).max(0.0), (tr - d).max(0.0));
    let theta = if c == 0.0 && vx >= vy {
        0.0
    } else if c == 0.0 {
        std::f64::consts::FRAC_PI_2
    } else {
        (l1 - vx).atan2(c)
    };
    let (a, b) = (l1.sqrt(), l2.sqrt());
    (0..=72)
        .map(|k| {
            let t = f64::from(k) / 72.0 * std::f64::consts::TAU;
            let (u, v) = (a * t.cos(), b * t.sin());
            (
                mx + u * theta.cos() - v * theta.sin(),
                my + u * theta.sin() + v * theta.cos(),
            )
        })
        .collect()
}

/// A Pantheon-style scatter: per algorithm one point and its 1-sigma ellipse, axes from 0.
pub fn scatter(
    title: &str,
    x_desc: &str,
    y_desc: &str,
    spots: &[Spot],
) -> Result<String, PlotError> {
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (WIDTH_PX, HEIGHT_PX)).into_drawing_area();
        root.fill(&WHITE).map_err(err)?;
        let ellipses: Vec<Vec<(f64, f64)>> = spots
            .iter()
            .map(|s| s.ellipse.map(ellipse_points).unwrap_or_default())
            .collect();
        let all = || {
            spots
                .iter()
                .filter_map(|s| s.point)
                .chain(ellipses.iter().flatten().copied())
        };
        // The axes span the points and ellipses with 8 % room, from 0 at the lowest
        // (counts and times are never negative).
        let span = |v: &dyn Fn((f64, f64)) -> f64| {
            let (lo, hi) = all()
                .map(v)
                .fold((f64::MAX, f64::MIN), |(a, b), x| (a.min(x), b.max(x)));
            if lo > hi {
                return 0.0..1.0;
            }
            let pad = ((hi - lo) * 0.08).max(hi.abs() * 0.02).max(0.5);
            (lo - pad).max(0.0)..(hi + pad)
        };
        let (xs, ys) = (span(&|p| p.0), span(&|p| p.1));
        let mut chart = xy_chart(&root, title, (x_desc, y_desc), xs.clone(), ys.clone())?;
        let font = ("sans-serif", 12).into_font();
        let mut unplaced = 0;
        for (s, e) in spots.iter().zip(&ellipses) {
            let c = colour(s.colour);
            let e: Vec<(f64, f64)> = e
                .iter()
                .map(|&(x, y)| (x.clamp(xs.start, xs.end), y.clamp(ys.start, ys.end)))
                .collect();
            if !e.is_empty() {
                chart
                    .draw_series([Polygon::new(e.clone(), c.mix(0.15).filled())])
                    .map_err(err)?;
                chart
                    .draw_series([PathElement::new(e, c.stroke_width(1))])
                    .map_err(err)?;
            }
            match s.point {
                // Each point named next to it, as Pantheon labels its schemes.
                Some(p) => {
                    chart
                        .draw_series([EmptyElement::at(p)
                            + Circle::new((0, 0), 4, c.filled())
                            + Text::new(s.label.clone(), (6, -14), font.clone().color(&c))])
                        .map_err(err)?;
                }
                // Not drawn (e.g. an unbounded median): said in the chart's top left corner.
                None => {
                    let (x, y) = chart.backend_coord(&(xs.start, ys.end));
                    root.draw(&Text::new(
                        s.label.clone(),
                        (x + 6, y + 4 + 14 * unplaced),
                        font.clone().color(&c),
                    ))
                    .map_err(err)?;
                    unplaced += 1;
                }
            }
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
                    colour: 0,
                    sorted: &a,
                    censored: &[],
                },
                Box {
                    label: "fasor",
                    colour: 1,
                    sorted: &[],
                    censored: &[],
                },
                Box {
                    label: "cocoa",
                    colour: 2,
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
                colour: 0,
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

    #[test]
    fn the_scatter_names_its_points_and_says_which_are_not_drawn() {
        // x and y perfectly correlated: the ellipse is a segment along the diagonal.
        let samples = [(1.0, 2.0), (2.0, 4.0), (3.0, 6.0)];
        let (mx, my, vx, vy, c) = covariance(&samples).unwrap();
        assert_eq!((mx, my, vx, vy, c), (2.0, 4.0, 1.0, 4.0, 2.0));
        let e = ellipse_points((mx, my, vx, vy, c));
        assert!(e.iter().all(|&(x, y)| (y - 2.0 * x).abs() < 1e-9), "{e:?}");
        assert_eq!(covariance(&samples[..1]), None);
        let svg = scatter(
            "FCT vs retransmissions",
            "retransmissions per flow",
            "FCT (s)",
            &[
                Spot {
                    label: "fasor".into(),
                    colour: 0,
                    point: Some((2.0, 4.0)),
                    ellipse: covariance(&samples),
                },
                Spot {
                    label: "default: median FCT unbounded (≥30.0 s)".into(),
                    colour: 1,
                    point: None,
                    ellipse: None,
                },
            ],
        )
        .unwrap();
        assert!(svg.contains(">\nfasor\n<"), "{svg}");
        assert!(svg.contains("median FCT unbounded (≥30.0 s)"), "{svg}");
        assert_eq!(svg.matches("<circle").count(), 1, "{svg}");
    }
}
