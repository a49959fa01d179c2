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

/// Runs TINY, adds a traced run's timelines, writes the page; returns the page's path.
fn page(tmp: &Path) -> PathBuf {
    let scenario = tmp.join("tiny.toml");
    std::fs::write(&scenario, TINY).unwrap();
    let out = tmp.join("out");
    let o = coaplab(&[
        "run",
        scenario.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
        "--quiet",
    ]);
    assert!(o.status.success(), "{}", text(&o.stderr));
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
    // The overview (five metrics, buffers on x, one chart each), two panels (buffers) of
    // five charts, plus two trace charts.
    assert_eq!(html.matches("<svg ").count(), 5 + 2 * 5 + 2, "{html}");
    for part in [
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

#[test]
fn chromium_loads_the_page_without_console_errors_and_it_is_not_blank() {
    let Some(chromium) = chromium() else {
        assert!(
            std::env::var("CI").as_deref() != Ok("true"),
            "chromium is missing in CI: scripts/test.sh installs it (apt-get install chromium)"
        );
        eprintln!("skipped: chromium is not installed (apt-get install chromium)");
        return;
    };
    let tmp = TempDir::new("report-chromium");
    let html = page(&tmp.0);
    let shot = tmp.0.join("shot.png");
    let o = Command::new(chromium)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--hide-scrollbars",
            "--enable-logging=stderr",
            "--v=0",
            "--window-size=1280,1600",
        ])
        .arg(format!(
            "--user-data-dir={}",
            tmp.0.join("profile").display()
        ))
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
    assert_eq!((info.width, info.height), (1280, 1600));
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
}

/// A run traced by `coaplab run --trace` (Parquet, the default format, into OUT/trace) gets its
/// RTO and queue timelines in the page, read from the Parquet tables themselves.
#[test]
fn a_parquet_trace_of_run_gets_its_timelines() {
    let tmp = TempDir::new("report-parquet");
    let scenario = tmp.0.join("tiny.toml");
    std::fs::write(&scenario, TINY).unwrap();
    let out = tmp.0.join("out");
    let o = coaplab(&[
        "run",
        scenario.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
        "--quiet",
        "--trace-runs",
        "0",
    ]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    assert!(out.join("trace/run000000/events.parquet").exists());
    let o = coaplab(&["report", out.to_str().unwrap()]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let html = std::fs::read_to_string(out.join("report.html")).unwrap();
    assert!(html.contains("RTO over time"), "no RTO timeline");
    assert!(html.contains("Bottleneck queue"), "no queue timeline");
    // The overview's five charts, two panels (buffers) of five charts, plus the traced
    // run's two.
    assert_eq!(html.matches("<svg ").count(), 5 + 2 * 5 + 2);
}
