//! The files coaplab reads and writes (issue 32, hardening round two): `coaplab report`
//! replaces a symbolic link planted at its page instead of writing through it; every input
//! has a size limit, so `/dev/zero` (or any endless input) is refused promptly with the file
//! and the limit named; a `flows.csv` with NaN, infinite or negative figures is refused,
//! naming the file, the line and the column.

use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use crate::run_support::{coaplab, text, TempDir};
use crate::support::{run_bounded, wait_exit};

/// Bound of every refusal: an endless input was read for 15 s and more (5.4 GB) before; the
/// 256-MiB limit of flows.csv is met in about 3 s by a debug build on a loaded machine.
const LIMIT: Duration = Duration::from_secs(60);

const TINY: &str = "name = \"tiny\"\nseed = 5\nreplications = 1\n[network]\n\
                    buffer_bytes = 2500\n[[flows]]\ncount = 2\n\
                    cc = [\"default\", \"fasor\"]\nexchanges = 3\n";

/// `coaplab ARGS`, killed after [`LIMIT`].
fn bounded(args: &[&str]) -> Output {
    run_bounded(
        Command::new(env!("CARGO_BIN_EXE_coaplab")).args(args),
        None,
        LIMIT,
    )
}

/// Asserts `o` failed (exit 1) within `max`, its message naming each of `parts`.
fn refused(o: &Output, started: Instant, max: Duration, parts: &[&str]) {
    let err = text(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    for part in parts {
        assert!(err.contains(part), "{part} not in: {err}");
    }
    assert!(
        started.elapsed() < max,
        "took {:?}: {err}",
        started.elapsed()
    );
}

/// TINY run into `tmp/out`.
fn results(tmp: &TempDir) -> std::path::PathBuf {
    let scenario = tmp.0.join("tiny.toml");
    std::fs::write(&scenario, TINY).unwrap();
    let out = tmp.0.join("out");
    let o = coaplab(&[
        "run",
        scenario.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
        "--quiet",
    ]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    out
}

/// Asserts `path` is a regular file (not a symbolic link) holding an HTML page.
fn is_page(path: &Path) {
    let meta = std::fs::symlink_metadata(path).unwrap();
    assert!(
        meta.file_type().is_file(),
        "{} is not a regular file",
        path.display()
    );
    assert!(std::fs::read_to_string(path)
        .unwrap()
        .starts_with("<!DOCTYPE html>"));
}

#[test]
fn report_replaces_a_symlink_planted_at_its_page_and_never_writes_through_it() {
    let tmp = TempDir::new("files-symlink");
    let out = results(&tmp);
    let outside = tmp.0.join("outside.txt");
    std::fs::write(&outside, "precious").unwrap();
    let plant = |name: &str| {
        let link = out.join(name);
        let _ = std::fs::remove_file(&link);
        std::os::unix::fs::symlink(&outside, &link).unwrap();
        link
    };
    // One directory: DIR/report.html.
    let link = plant("report.html");
    let o = coaplab(&["report", out.to_str().unwrap()]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    assert_eq!(std::fs::read_to_string(&outside).unwrap(), "precious");
    is_page(&link);
    // Two directories: DIR/compare.html.
    let link = plant("compare.html");
    let o = coaplab(&["report", out.to_str().unwrap(), out.to_str().unwrap()]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    assert_eq!(std::fs::read_to_string(&outside).unwrap(), "precious");
    is_page(&link);
    // --out FILE: the page replaces the link there too.
    let link = tmp.0.join("page.html");
    std::os::unix::fs::symlink(&outside, &link).unwrap();
    let o = coaplab(&[
        "report",
        out.to_str().unwrap(),
        "-o",
        link.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    assert_eq!(std::fs::read_to_string(&outside).unwrap(), "precious");
    is_page(&link);
    // No temporary is left behind.
    let left: Vec<_> = std::fs::read_dir(&out)
        .unwrap()
        .filter_map(|e| e.ok())
        .filter(|e| e.file_name().to_string_lossy().contains(".tmp"))
        .collect();
    assert!(left.is_empty(), "{left:?}");
}

#[test]
fn a_scenario_from_dev_zero_is_refused_at_once() {
    let t = Instant::now();
    let o = bounded(&["run", "/dev/zero", "--dry-run"]);
    refused(
        &o,
        t,
        Duration::from_secs(20),
        &["/dev/zero", "1 MiB", "scenario file"],
    );
}

#[test]
fn a_position_file_from_dev_zero_is_refused_at_once() {
    let tmp = TempDir::new("files-mobility");
    let scenario = tmp.0.join("m.toml");
    std::fs::write(
        &scenario,
        "name = \"m\"\n[topology]\nkind = \"mesh\"\n[mobility]\nmodel = \"file\"\n\
         file = \"/dev/zero\"\n[[flows]]\ncount = 1\ncc = \"cocoa\"\nexchanges = 5\n",
    )
    .unwrap();
    let t = Instant::now();
    let o = bounded(&["run", scenario.to_str().unwrap(), "--dry-run"]);
    refused(
        &o,
        t,
        Duration::from_secs(30),
        &["mobility.file", "/dev/zero", "64 MiB", "position file"],
    );
}

#[test]
fn a_reference_file_from_dev_zero_is_refused_at_once() {
    let tmp = TempDir::new("files-reference");
    let out = results(&tmp);
    let t = Instant::now();
    let o = bounded(&["report", out.to_str().unwrap(), "--against", "/dev/zero"]);
    refused(
        &o,
        t,
        Duration::from_secs(20),
        &["/dev/zero", "1 MiB", "reference file"],
    );
    assert!(!out.join("report.html").exists());
}

#[test]
fn a_trace_script_from_dev_zero_is_refused_at_once() {
    let t = Instant::now();
    let o = bounded(&["trace", "--cc", "default", "/dev/zero"]);
    refused(
        &o,
        t,
        Duration::from_secs(20),
        &["/dev/zero", "16 MiB", "trace script"],
    );
    // Standard input from /dev/zero.
    let t = Instant::now();
    let mut child = Command::new(env!("CARGO_BIN_EXE_coaplab"))
        .args(["trace", "--cc", "default", "-"])
        .stdin(std::fs::File::open("/dev/zero").unwrap())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let status = wait_exit(&mut child, LIMIT).unwrap_or_else(|| {
        let _ = child.kill();
        child.wait().unwrap()
    });
    let mut stderr = Vec::new();
    std::io::Read::read_to_end(&mut child.stderr.take().unwrap(), &mut stderr).unwrap();
    let o = Output {
        status,
        stdout: Vec::new(),
        stderr,
    };
    refused(
        &o,
        t,
        Duration::from_secs(20),
        &["standard input", "16 MiB"],
    );
}

#[test]
fn results_files_from_dev_zero_are_refused() {
    let tmp = TempDir::new("files-results");
    let out = results(&tmp);
    // flows.csv: report and compare.
    let flows = out.join("flows.csv");
    let kept = std::fs::read(&flows).unwrap();
    std::fs::remove_file(&flows).unwrap();
    std::os::unix::fs::symlink("/dev/zero", &flows).unwrap();
    let t = Instant::now();
    let o = bounded(&["report", out.to_str().unwrap()]);
    refused(&o, t, LIMIT, &["flows.csv", "256 MiB", "results table"]);
    std::fs::remove_file(&flows).unwrap();
    std::fs::write(&flows, &kept).unwrap();
    let flows_kept = kept;
    // manifest.json: merge and run --resume refuse it, and leave the results as they were.
    let manifest = out.join("manifest.json");
    let kept = std::fs::read(&manifest).unwrap();
    std::fs::remove_file(&manifest).unwrap();
    std::os::unix::fs::symlink("/dev/zero", &manifest).unwrap();
    let merged = tmp.0.join("merged");
    let t = Instant::now();
    let o = bounded(&[
        "merge",
        "--out",
        merged.to_str().unwrap(),
        out.to_str().unwrap(),
    ]);
    refused(&o, t, LIMIT, &["manifest.json", "64 MiB"]);
    assert!(!merged.exists());
    let scenario = tmp.0.join("tiny.toml");
    let t = Instant::now();
    let o = bounded(&[
        "run",
        scenario.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
        "--resume",
        "--quiet",
    ]);
    refused(&o, t, LIMIT, &["manifest.json", "64 MiB"]);
    assert_eq!(std::fs::read(&flows).unwrap(), flows_kept);
    std::fs::remove_file(&manifest).unwrap();
    std::fs::write(&manifest, &kept).unwrap();
    // A run's rows file from /dev/zero: --resume refuses it rather than rerunning the run.
    let rows = out.join("runs").join("000000.csv");
    let kept_rows = std::fs::read(&rows).unwrap();
    std::fs::remove_file(&rows).unwrap();
    std::os::unix::fs::symlink("/dev/zero", &rows).unwrap();
    let t = Instant::now();
    let o = bounded(&[
        "run",
        scenario.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
        "--resume",
        "--quiet",
    ]);
    refused(&o, t, LIMIT, &["000000.csv", "256 MiB"]);
    std::fs::remove_file(&rows).unwrap();
    std::fs::write(&rows, &kept_rows).unwrap();
    // Restored, the directory resumes and reports as before.
    let o = bounded(&[
        "run",
        scenario.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
        "--resume",
        "--quiet",
    ]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let o = coaplab(&["report", out.to_str().unwrap()]);
    assert!(o.status.success(), "{}", text(&o.stderr));
}

#[test]
fn report_refuses_nan_infinite_and_negative_figures_naming_line_and_column() {
    let tmp = TempDir::new("files-corrupt");
    let out = results(&tmp);
    let flows = out.join("flows.csv");
    let good = std::fs::read_to_string(&flows).unwrap();
    let header: Vec<&str> = good.lines().next().unwrap().split(',').collect();
    let col = |n: &str| header.iter().position(|h| *h == n).unwrap();
    // Line 3 (the second flow), one column at a time.
    let corrupt = |column: &str, value: &str| {
        let mut lines: Vec<String> = good.lines().map(str::to_string).collect();
        let mut fields: Vec<&str> = lines[2].split(',').collect();
        fields[col(column)] = value;
        lines[2] = fields.join(",");
        std::fs::write(&flows, lines.join("\n") + "\n").unwrap();
    };
    for (column, value, why) in [
        ("fct_s", "NaN", "not a number"),
        ("fct_s", "inf", "infinite"),
        ("retransmissions", "-3", "negative"),
        ("coap_rtt_median_s", "-inf", "infinite"),
        ("bytes_up", "lots", "not a number"),
        ("completed", "maybe", "neither true nor false"),
    ] {
        corrupt(column, value);
        let o = coaplab(&["report", out.to_str().unwrap()]);
        let err = text(&o.stderr);
        assert_eq!(o.status.code(), Some(1), "{column}={value}: {err}");
        for part in [
            "flows.csv",
            "line 3",
            &format!("column {column}"),
            &format!("\"{value}\""),
            why,
            "--resume",
        ] {
            assert!(err.contains(part), "{part} not in: {err}");
        }
        assert!(!out.join("report.html").exists(), "{err}");
        // Compared with a sound copy, too.
        let o = coaplab(&["report", out.to_str().unwrap(), out.to_str().unwrap()]);
        assert_eq!(o.status.code(), Some(1));
        assert!(text(&o.stderr).contains("line 3"), "{}", text(&o.stderr));
    }
    // A row cut short.
    let mut cut = good.clone();
    cut.truncate(good.trim_end().rfind(',').unwrap());
    cut.push('\n');
    std::fs::write(&flows, &cut).unwrap();
    let o = coaplab(&["report", out.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1));
    assert!(
        text(&o.stderr).contains("fewer fields than the header"),
        "{}",
        text(&o.stderr)
    );
    // `--resume` writes flows.csv again from runs/, as the message says; then report works.
    let scenario = tmp.0.join("tiny.toml");
    let o = coaplab(&[
        "run",
        scenario.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
        "--resume",
        "--quiet",
    ]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    assert_eq!(std::fs::read_to_string(&flows).unwrap(), good);
    let o = coaplab(&["report", out.to_str().unwrap()]);
    assert!(o.status.success(), "{}", text(&o.stderr));
}
