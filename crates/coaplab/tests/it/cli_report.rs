//! `coaplab report` end to end (issue 15 item 3): a tiny scenario run, a fake trace, a
//! reference file; the page is self-contained, and headless Chromium loads it without console
//! errors and renders something that is not blank.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::run_support;
use run_support::{coaplab, text, TempDir};

const TINY: &str = "# tiny\nname = \"tiny\"\nseed = 5\nreplications = 2\n[network]\n\
                    buffer_bytes = [2500, 28200]\n[[flows]]\ncount = 3\n\
                    cc = [\"default\", \"fasor\"]\nexchanges = 5\n";

/// The value of `column` in the summary.csv row of `cc` at `buffer`.
fn summary_value(dir: &Path, cc: &str, buffer: &str, column: &str) -> String {
    let text = std::fs::read_to_string(dir.join("summary.csv")).unwrap();
    let mut lines = text.lines();
    let header: Vec<&str> = lines.next().unwrap().split(',').collect();
    let col = |n: &str| header.iter().position(|h| *h == n).unwrap();
    lines
        .map(|l| l.split(',').collect::<Vec<_>>())
        .find(|f| f[col("cc")] == cc && f[col("buffer_bytes")] == buffer)
        .map(|f| f[col(column)].to_string())
        .unwrap()
}

/// Writes `scenario` into `tmp`, runs it into `out` with `extra` arguments (quietly).
fn run_scenario(tmp: &Path, scenario: &str, out: &Path, extra: &[&str]) {
    let file = tmp.join("scenario.toml");
    std::fs::write(&file, scenario).unwrap();
    let mut args = vec![
        "run",
        file.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
        "--quiet",
    ];
    args.extend_from_slice(extra);
    let o = coaplab(&args);
    assert!(o.status.success(), "{}", text(&o.stderr));
}

/// `coaplab report DIRS...`; the page written (`page` in the first directory).
fn report(dirs: &[&Path], page: &str) -> String {
    let mut args = vec!["report"];
    args.extend(dirs.iter().map(|d| d.to_str().unwrap()));
    let o = coaplab(&args);
    assert!(o.status.success(), "{}", text(&o.stderr));
    std::fs::read_to_string(dirs[0].join(page)).unwrap()
}

/// `scenario` run (with `extra` arguments) in a new temporary directory and its page: the
/// directory, the results directory and the page.
fn run_and_report(name: &str, scenario: &str, extra: &[&str]) -> (TempDir, PathBuf, String) {
    let tmp = TempDir::new(name);
    let out = tmp.0.join("out");
    run_scenario(&tmp.0, scenario, &out, extra);
    let html = report(&[&out], "report.html");
    (tmp, out, html)
}

/// Every one of `parts` is in `html`.
fn assert_holds(html: &str, parts: &[&str]) {
    for part in parts {
        assert!(html.contains(part), "{part} missing");
    }
}

/// Runs TINY, adds a traced run's timelines, writes the page; returns the page's path.
fn page(tmp: &Path) -> PathBuf {
    let out = tmp.join("out");
    run_scenario(tmp, TINY, &out, &[]);
    // The documented trace layout (docs/report.md).
    let trace = out.join("trace").join("run000001");
    std::fs::create_dir_all(&trace).unwrap();
    std::fs::write(
        trace.join("events.csv"),
        "time_s,flow,event,rto_s\n0,0,send,2.5\n2.5,0,expiry,5\n3,1,send,2\n4,1,ack,\n",
    )
    .unwrap();
    std::fs::write(
        trace.join("queue.csv"),
        "time_s,queue_bytes\n0,0\n1,1200\n2,2400\n3,600\n",
    )
    .unwrap();
    // Expired timers of two flows of run 0 (the documented timers.csv columns).
    std::fs::write(
        out.join("timers.csv"),
        "run,flow,time_s,rto_s,ordinal\n0,0,2.1,2.1,0\n0,0,6.3,4.2,1\n0,1,2.4,2.4,0\n",
    )
    .unwrap();
    let p50 = summary_value(&out, "default", "2500", "fct_p50_s");
    let reference = tmp.join("published.toml");
    std::fs::write(
        &reference,
        format!(
            "[[reference]]\nsource = \"ours\"\nmetric = \"fct_p50_s\"\nvalue = {p50}\n\
             tolerance_pct = 1\n[reference.cell]\ncc = \"default\"\nbuffer_bytes = 2500\n\
             [[reference]]\nsource = \"far\"\nmetric = \"fct_p50_s\"\nvalue = 1e6\n\
             tolerance_pct = 1\n[reference.cell]\ncc = \"fasor\"\nbuffer_bytes = 2500\n\
             [[reference]]\nsource = \"absent\"\nmetric = \"fct_p50_s\"\nvalue = 1\n\
             range = [0, 2]\n[reference.cell]\ncc = \"cocoa\"\n"
        ),
    )
    .unwrap();
    let o = coaplab(&[
        "report",
        out.to_str().unwrap(),
        "--against",
        reference.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    out.join("report.html")
}

#[test]
fn the_page_is_self_contained_and_holds_every_part() {
    let tmp = TempDir::new("report");
    let html = std::fs::read_to_string(page(&tmp.0)).unwrap();
    // The overview (five metrics, buffers on x, one chart each), the expired-RTO CDF of the
    // one panel with expiries, two panels (buffers) of five charts, plus two trace charts.
    assert_eq!(html.matches("<svg ").count(), 5 + 1 + 2 * 5 + 2, "{html}");
    // The overview comes first and the full table last.
    let at = |part: &str| html.find(part).unwrap_or_else(|| panic!("{part} missing"));
    assert!(at(">Overview</h2>") < at(">Expired RTO values</h2>"));
    assert!(at(">Expired RTO values</h2>") < at("<h2>buffer_bytes=2500</h2>"));
    assert!(at(">Traced runs</h2>") < at(">Summary</h2>"));
    for part in [
        "FCT median, 95 % CI",
        "Expired RTOs per flow (mean)",
        "Unfinished flows",
        "buffer (bytes)",
        "FCT vs retransmissions",
        // The traced run is titled with its cell.
        "run000001: cc=default · buffer_bytes=2500 · clients=3 · seed=",
        "<h2>buffer_bytes=2500</h2>",
        "<h2>buffer_bytes=28200</h2>",
        "CDF of FCT",
        "Unnecessary retransmissions per flow",
        "RTO over time",
        "Bottleneck queue",
        "<th>fct_p50_ci95_lo_s</th>",
        "<td class=\"ok\">yes</td>",
        "<td class=\"bad\">no</td>",
        "no cell of these results matches",
        "1 of 3 within tolerance.",
    ] {
        assert!(html.contains(part), "{part} missing");
    }
    // Nothing is loaded from anywhere: no script, link, image or style sheet reference.
    for forbidden in [
        "<script", "<link", "<img", "src=", "href=", "url(", "@import",
    ] {
        assert!(!html.contains(forbidden), "{forbidden} in the page");
    }
    // A bad reference file is a clear error.
    let bad = tmp.0.join("bad.toml");
    std::fs::write(&bad, "[[reference]]\nmetric = \"fct_p50_s\"\nvalue = 1\n").unwrap();
    let o = coaplab(&[
        "report",
        tmp.0.join("out").to_str().unwrap(),
        "--against",
        bad.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(1));
    assert!(
        text(&o.stderr)
            .contains("[[reference]] 1: give exactly one of `tolerance_pct` and `range`"),
        "{}",
        text(&o.stderr)
    );
    let o = coaplab(&["report", tmp.0.join("nothing").to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1));
    assert!(
        text(&o.stderr).contains("cannot read"),
        "{}",
        text(&o.stderr)
    );
}

/// Debian's `chromium`, or `None` (then the test is skipped outside CI and fails in CI).
fn chromium() -> Option<PathBuf> {
    std::env::var_os("PATH").and_then(|paths| {
        std::env::split_paths(&paths)
            .map(|p| p.join("chromium"))
            .find(|p| p.is_file())
    })
}

/// Loads `html` in headless Chromium (1280 × `height` px): no console message, no failed
/// load, and a screenshot that is not blank. `false` when chromium is missing (skipped
/// outside CI; a failure in CI).
fn chromium_renders(html: &Path, tmp: &Path, height: u32) -> bool {
    let Some(chromium) = chromium() else {
        assert!(
            std::env::var("CI").as_deref() != Ok("true"),
            "chromium is missing in CI: scripts/test.sh installs it (apt-get install chromium)"
        );
        eprintln!("skipped: chromium is not installed (apt-get install chromium)");
        return false;
    };
    let shot = tmp.join("shot.png");
    let o = Command::new(chromium)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--hide-scrollbars",
            "--enable-logging=stderr",
            "--v=0",
        ])
        .arg(format!("--window-size=1280,{height}"))
        .arg(format!("--user-data-dir={}", tmp.join("profile").display()))
        .arg(format!("--screenshot={}", shot.display()))
        .arg(format!("file://{}", html.display()))
        .output()
        .expect("start chromium");
    let log = text(&o.stderr);
    assert!(o.status.success(), "{log}");
    // Console messages are logged as `...:CONSOLE(line)] "message", source: ...`; failed
    // loads as `Failed to load resource`. The page must cause neither.
    for bad in ["CONSOLE", "Failed to load resource", "Uncaught"] {
        assert!(!log.contains(bad), "{bad} in chromium's log:\n{log}");
    }
    let file = std::io::BufReader::new(std::fs::File::open(&shot).expect("screenshot written"));
    let mut reader = png::Decoder::new(file).read_info().unwrap();
    let mut buf = vec![0; reader.output_buffer_size().unwrap()];
    let info = reader.next_frame(&mut buf).unwrap();
    assert_eq!((info.width, info.height), (1280, height));
    let channels = info.color_type.samples();
    let pixels = &buf[..info.buffer_size()];
    // Luma per pixel; a blank page is one value everywhere.
    let luma: Vec<f64> = pixels
        .chunks(channels * usize::from(info.bit_depth as u8) / 8)
        .map(|p| p.iter().take(3).map(|&c| f64::from(c)).sum::<f64>() / 3.0)
        .collect();
    let mean = luma.iter().sum::<f64>() / luma.len() as f64;
    let var = luma.iter().map(|l| (l - mean) * (l - mean)).sum::<f64>() / luma.len() as f64;
    let dark = luma.iter().filter(|&&l| l < 128.0).count();
    assert!(var > 100.0, "luma variance {var}: blank?");
    assert!(
        dark > luma.len() / 200,
        "{dark} dark pixels of {}",
        luma.len()
    );
    // Colour: the charts' lines and boxes (Okabe-Ito), not only black text on white.
    let coloured = pixels
        .chunks(channels * usize::from(info.bit_depth as u8) / 8)
        .filter(|p| {
            let (r, g, b) = (i32::from(p[0]), i32::from(p[1]), i32::from(p[2]));
            (r - g).abs().max((g - b).abs()).max((r - b).abs()) > 60
        })
        .count();
    assert!(
        coloured > 200,
        "{coloured} coloured pixels: no chart drawn?"
    );
    true
}

/// The sweep page (overview, expired RTOs, per cell, fake trace, reference table).
#[test]
fn chromium_loads_the_page_without_console_errors_and_it_is_not_blank() {
    let tmp = TempDir::new("report-chromium");
    let html = page(&tmp.0);
    chromium_renders(&html, &tmp.0, 1600);
}

/// `coaplab report A B`: two runs of one plan (B with another buffer in place of 28,200 B)
/// paired cell by cell; the page is drawn by Chromium.
#[test]
fn two_results_directories_are_compared_cell_by_cell() {
    let tmp = TempDir::new("report-compare");
    let (a, b) = (tmp.0.join("a"), tmp.0.join("b"));
    run_scenario(
        &tmp.0,
        TINY,
        &a,
        &["--set", "network.buffer_bytes=[2500, 28200]"],
    );
    run_scenario(
        &tmp.0,
        TINY,
        &b,
        &["--set", "network.buffer_bytes=[2500, 1200]"],
    );
    let html = report(&[&a, &b], "compare.html");
    for part in [
        "A vs B",
        "Difference of the median FCT, B − A",
        "Median FCT, B − A, 95 % paired CI",
        "<th>95 % CI</th>",
        "The plans differ",
        "(B: clients=3 buffer_bytes=1200 loss=none)",
    ] {
        assert!(html.contains(part), "{part} missing");
    }
    // Four cells (two buffers × two algorithms), each paired with its 2 × 3 flows; the
    // same buffer gives the same flows: a difference of 0 within [0, 0].
    assert_eq!(html.matches("<td>6</td>").count(), 4, "{html}");
    assert!(
        html.contains("<td>+0.000</td><td>[+0.000, +0.000]</td>"),
        "{html}"
    );
    for forbidden in [
        "<script", "<link", "<img", "src=", "href=", "url(", "@import",
    ] {
        assert!(!html.contains(forbidden), "{forbidden} in the page");
    }
    // --against is for one directory.
    let o = coaplab(&[
        "report",
        a.to_str().unwrap(),
        b.to_str().unwrap(),
        "--against",
        "x.toml",
    ]);
    assert_eq!(o.status.code(), Some(1));
    chromium_renders(&a.join("compare.html"), &tmp.0, 1000);
}

/// A traced CoAP-over-TCP and UDP run: RTO steps, the queue per direction, cwnd per ACK,
/// each run titled with its cell; drawn by Chromium.
#[test]
fn traced_runs_are_drawn_with_their_cells() {
    let scenario =
        "name = \"traced\"\nseed = 5\nreplications = 1\n[network]\nbuffer_bytes = 2500\n\
                    [[flows]]\ncount = 3\ncc = [\"default\", \"tcp-newreno\"]\nexchanges = 5\n";
    let (tmp, out, html) = run_and_report("report-traced", scenario, &["--trace-runs", "0,1"]);
    assert_holds(
        &html,
        &[
            "<h3>run000000: cc=default · buffer_bytes=2500 · clients=3 · seed=",
            "<h3>run000001: cc=tcp-newreno · buffer_bytes=2500 · clients=3 · seed=",
            "RTO over time · run000000",
            "Bottleneck queue · run000000",
            "TCP cwnd per ACK · run000001",
            ">\nup\n<",
            ">\ndown\n<",
        ],
    );
    chromium_renders(&out.join("report.html"), &tmp.0, 1600);
}

/// A mesh sweep: the thesis's metrics in the overview; drawn by Chromium.
#[test]
fn a_mesh_page_has_the_thesis_metrics() {
    let scenario = "name = \"tiny-mesh\"\nseed = 3\nreplications = 2\nmax_sim_time_s = 60\n\
         [topology]\nkind = \"mesh\"\nshape = \"grid\"\nrows = 3\ncols = 2\nspacing_m = 10\n\
         routing = \"static\"\n[output]\nexchanges = true\n[[flows]]\ncount = [2, 3]\ncc = [\"default\", \"gst\"]\n\
         workload = \"continuous\"\nexchanges = 60\ninterval_s = 0.1\n";
    let (tmp, out, html) = run_and_report("report-mesh", scenario, &[]);
    assert_holds(
        &html,
        &[
            "FCT for 50 exchanges (fct50), median",
            "CoAP packet delivery ratio (median)",
            "Transactions per second (median)",
            "CoAP delay p50 (median)",
            "Base RTO p50 (median)",
            "clients (flows)",
            // Not traced: positions and radio links only.
            "Mesh topology (radio links; trace a run for its hops)",
            // exchanges.csv: the delay and base-RTO CDFs.
            "CoAP delay and base RTO",
            "fraction of exchanges",
            ">\nborder-router\n<",
        ],
    );
    chromium_renders(&out.join("report.html"), &tmp.0, 1600);
}

/// A run traced by `coaplab run --trace` (Parquet, the default format, into OUT/trace) gets its
/// RTO and queue timelines in the page, read from the Parquet tables themselves.
#[test]
fn a_parquet_trace_of_run_gets_its_timelines() {
    let (_tmp, out, html) = run_and_report("report-parquet", TINY, &["--trace-runs", "0"]);
    assert!(out.join("trace/run000000/events.parquet").exists());
    assert!(html.contains("RTO over time"), "no RTO timeline");
    assert!(html.contains("Bottleneck queue"), "no queue timeline");
    // The overview's five charts, two panels (buffers) of five charts, plus the traced
    // run's two (no timers.csv: no expired-RTO chart).
    assert_eq!(html.matches("<svg ").count(), 5 + 2 * 5 + 2);
}
