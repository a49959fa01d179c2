//! `coaplab run` end to end, as the built binary: a tiny scenario simulated for real.

use std::path::Path;
use std::process::Command;

use crate::run_support;
use run_support::{coaplab, text, TempDir};

const TINY: &str = "# tiny\nname = \"tiny\"\nseed = 5\nreplications = 2\n[[flows]]\ncount = 2\n\
                    cc = [\"default\", \"fasor\"]\nexchanges = 3\n";

fn write(dir: &Path, name: &str, body: &str) -> String {
    let path = dir.join(name);
    std::fs::write(&path, body).unwrap();
    path.display().to_string()
}

#[test]
fn run_writes_results_prints_the_table_and_resumes() {
    let tmp = TempDir::new("run");
    let scenario = write(&tmp.0, "tiny.toml", TINY);
    let out = tmp.0.join("out").display().to_string();
    let o = coaplab(&["run", &scenario, "--out", &out, "--jobs", "2"]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let table = text(&o.stdout);
    let lines: Vec<&str> = table.lines().collect();
    assert_eq!(lines.len(), 3, "{table}");
    assert!(lines[0].split_whitespace().eq([
        "cc", "workload", "n", "min", "p10", "p25", "p50", "p75", "p90", "p95", "max", "rexmit",
        "unnec"
    ]));
    assert!(
        lines[1].trim_start().starts_with("default  continuous  4 "),
        "{table}"
    );
    let flows = std::fs::read_to_string(tmp.0.join("out/flows.csv")).unwrap();
    assert_eq!(flows.lines().count(), 1 + 4 * 2);
    assert!(tmp.0.join("out/summary.csv").exists());
    let manifest = std::fs::read_to_string(tmp.0.join("out/manifest.json")).unwrap();
    assert_eq!(manifest.matches("\"status\": \"ok\"").count(), 4);

    // The directory is not overwritten; --resume runs nothing new and prints the same table.
    let again = coaplab(&["run", &scenario, "--out", &out]);
    assert!(!again.status.success());
    assert!(text(&again.stderr).contains("already holds results; pass --resume"));
    let resumed = coaplab(&["run", &scenario, "--out", &out, "--resume"]);
    assert!(resumed.status.success(), "{}", text(&resumed.stderr));
    assert!(text(&resumed.stderr).contains("0 finished, 4 skipped"));
    assert_eq!(text(&resumed.stdout), table);
}

/// Issue 29: a run with unfinished flows exits 0 (they are results, not errors) but says so
/// on stderr and under its table, where an unbounded percentile reads `>=X`; an older
/// results directory is not resumed into the new format.
#[test]
fn unfinished_flows_are_warned_about_and_keep_the_exit_status() {
    let tmp = TempDir::new("unfinished");
    let scenario = write(
        &tmp.0,
        "cut.toml",
        "name = \"cut\"\nmax_sim_time_s = 10\n[[flows]]\ncc = \"default\"\nexchanges = 1\n\
         start_jitter_s = 0\n[[flows]]\ncount = 2\ncc = \"default\"\nexchanges = 1000\n\
         start_jitter_s = 0\n",
    );
    let out = tmp.0.join("out").display().to_string();
    let o = coaplab(&["run", &scenario, "--out", &out]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let (table, err) = (text(&o.stdout), text(&o.stderr));
    let lines: Vec<&str> = table.lines().collect();
    assert!(lines[0].split_whitespace().eq([
        "cc", "workload", "n", "gave_up", "time_cap", "min", "p10", "p25", "p50", "p75", "p90",
        "p95", "max", "rexmit", "unnec"
    ]));
    // 1 of 3 finished: from the median up, at least 10 s (the cap; every flow started at 0).
    let cells: Vec<&str> = lines[1].split_whitespace().collect();
    assert_eq!(cells[2..5], ["1/3", "0", "2"]);
    assert_eq!(cells[8..13], [">=10.000"; 5], "{table}");
    let warning = "warning: 2 unfinished flows in 1 of 1 cells (0 gave up, 2 cut by the time cap)";
    assert!(lines[2].starts_with(warning), "{table}");
    assert!(err.contains(&format!("coaplab run: {warning}")), "{err}");
    // A directory of results format 1 (before these columns) is not resumed.
    let manifest = tmp.0.join("out/manifest.json");
    let old = std::fs::read_to_string(&manifest)
        .unwrap()
        .replace("\"results_format\": 3,", "");
    std::fs::write(&manifest, old).unwrap();
    let resumed = coaplab(&["run", &scenario, "--out", &out, "--resume"]);
    assert!(!resumed.status.success());
    assert!(
        text(&resumed.stderr).contains("written in results format 1"),
        "{}",
        text(&resumed.stderr)
    );
}

#[test]
fn scenario_errors_name_the_file_line_and_key() {
    let tmp = TempDir::new("bad");
    let bad = write(&tmp.0, "bad.toml", &TINY.replace("exchanges", "exchange"));
    let o = coaplab(&[
        "run",
        &bad,
        "--out",
        &tmp.0.join("out").display().to_string(),
    ]);
    assert!(!o.status.success());
    let err = text(&o.stderr);
    assert!(
        err.starts_with(&format!(
            "coaplab run: {bad}:8: unknown key 'flows[0].exchange'; allowed here: count, cc,"
        )),
        "{err}"
    );
    assert!(
        !tmp.0.join("out").exists(),
        "nothing is written for a bad scenario"
    );
}

#[test]
fn dry_run_prints_the_plan() {
    let tmp = TempDir::new("dry");
    let scenario = write(&tmp.0, "tiny.toml", TINY);
    let o = coaplab(&["run", &scenario, "--dry-run", "--reps", "3"]);
    assert!(o.status.success());
    assert_eq!(
        text(&o.stdout),
        format!(
            "scenario tiny ({scenario}): seed 5, 2 combinations x 3 replications = 6 runs\n  \
             flows[0].cc (line 7): default, fasor\n"
        )
    );
}

#[test]
fn a_mesh_tcp_flow_whose_segments_cannot_fit_the_mac_queue_is_warned_about() {
    let tmp = TempDir::new("mss-warn");
    let body = "name = \"m\"\nseed = 1\nreplications = 1\n[topology]\nkind = \"mesh\"\n\
                shape = \"grid\"\nrows = 3\ncols = 3\nspacing_m = 10\n[[flows]]\ncount = 1\n\
                cc = \"tcp-newreno\"\nworkload = \"long-transfer\"\nobject_bytes = 1000\n\
                mss_bytes = [244, 1212]\n";
    let scenario = write(&tmp.0, "m.toml", body);
    let o = coaplab(&["run", &scenario, "--dry-run"]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    assert_eq!(
        text(&o.stderr),
        "coaplab run: warning: combination 1: flows[0] (tcp-newreno, mss_bytes = 1212): a full \
         segment is 13 frames on this mesh, more than a node's MAC queue holds \
         (topology.params.queue_frames = 8); a datagram enters the queue whole or not at all, \
         so no full segment can leave its sender and a flow that sends one stalls until the \
         time cap (the largest MSS that fits on every hop is 724 B)\n"
    );
}

/// 12 runs of about 0.2 s each (debug build): long enough to kill the sweep midway.
const SLOW: &str = "name = \"slow\"\nseed = 9\nreplications = 6\n[[flows]]\ncount = 200\n\
                    cc = [\"default\", \"fasor\"]\nexchanges = 50\n";

/// The status files in `out/runs`.
fn ended_runs(out: &Path) -> usize {
    std::fs::read_dir(out.join("runs"))
        .map(|d| {
            d.filter_map(Result::ok)
                .filter(|e| e.file_name().to_string_lossy().ends_with(".json"))
                .count()
        })
        .unwrap_or(0)
}

#[test]
fn a_locked_directory_a_kill_9_and_a_resume_give_the_same_files() {
    let tmp = TempDir::new("kill");
    let scenario = write(&tmp.0, "slow.toml", SLOW);
    let whole = tmp.0.join("whole");
    let o = coaplab(&["run", &scenario, "--out", &whole.display().to_string()]);
    assert!(o.status.success(), "{}", text(&o.stderr));

    let out = tmp.0.join("out");
    let out_arg = out.display().to_string();
    let mut first = Command::new(env!("CARGO_BIN_EXE_coaplab"))
        .args(["run", &scenario, "--out", &out_arg, "--jobs", "1"])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    while ended_runs(&out) < 2 {
        assert!(std::time::Instant::now() < deadline, "no run ended");
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    // A second invocation into the same directory fails at once, while the first runs.
    let second = coaplab(&["run", &scenario, "--out", &out_arg, "--resume"]);
    assert_eq!(second.status.code(), Some(1));
    assert_eq!(
        text(&second.stderr),
        format!(
            "coaplab run: {out_arg} is in use by another coaplab run (it holds \
             {out_arg}/.lock); wait for it to end or use another --out\n"
        )
    );
    assert_eq!(
        first.try_wait().unwrap(),
        None,
        "the first run ended too soon"
    );
    first.kill().unwrap(); // SIGKILL: the lock dies with the process
    first.wait().unwrap();
    let ended = ended_runs(&out);
    assert!(ended < 12, "killed after {ended} runs of 12");

    // What a kill in the middle of writing leaves, and a finished run's rows cut short.
    std::fs::write(out.join("runs/000011.csv.tmp99999"), "1").unwrap();
    let rows = std::fs::read(out.join("runs/000000.csv")).unwrap();
    std::fs::write(out.join("runs/000000.csv"), &rows[..rows.len() - 1]).unwrap();

    // The kill may also have landed while the first invocation wrote a file of its own.
    let temporaries: usize = [out.clone(), out.join("runs")]
        .iter()
        .map(|dir| {
            std::fs::read_dir(dir)
                .unwrap()
                .filter_map(Result::ok)
                .filter(|e| e.file_name().to_string_lossy().contains(".tmp"))
                .count()
        })
        .sum();
    assert!(temporaries >= 1);

    let resumed = coaplab(&["run", &scenario, "--out", &out_arg, "--resume"]);
    let err = text(&resumed.stderr);
    assert!(resumed.status.success(), "{err}");
    assert!(
        err.contains(&format!(
            "removed {temporaries} temporary files of a killed invocation"
        )),
        "{err}"
    );
    assert!(
        err.contains(&format!(
            "redoing 1 runs whose files did not verify: run 0 (rows file has {} bytes, its \
             status file says {})\n",
            rows.len() - 1,
            rows.len()
        )),
        "{err}"
    );
    assert!(!out.join("runs/000011.csv.tmp99999").exists());
    assert_eq!(text(&resumed.stdout), text(&o.stdout));
    for file in ["flows.csv", "summary.csv"] {
        assert_eq!(
            std::fs::read(out.join(file)).unwrap(),
            std::fs::read(whole.join(file)).unwrap(),
            "{file}"
        );
    }
}

#[test]
fn dry_run_counts_a_huge_plan_without_expanding_it() {
    let tmp = TempDir::new("huge");
    // 100 combinations x a million replications: 10^8 runs, never built.
    let counts: Vec<String> = (1..=100).map(|n| n.to_string()).collect();
    let body = format!(
        "name = \"huge\"\nreplications = 1000000\n[[flows]]\ncount = [{}]\ncc = \"default\"\n",
        counts.join(", ")
    );
    let scenario = write(&tmp.0, "huge.toml", &body);
    let o = coaplab(&["run", &scenario, "--dry-run"]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    assert!(
        text(&o.stdout).starts_with(&format!(
            "scenario huge ({scenario}): seed 1, 100 combinations x 1000000 replications = \
             100000000 runs\n"
        )),
        "{}",
        text(&o.stdout)
    );
    let tiny = write(&tmp.0, "tiny.toml", TINY);
    let o = coaplab(&["run", &tiny, "--dry-run", "--reps", "500000"]);
    assert!(
        text(&o.stdout).contains(" = 1000000 runs\n"),
        "{}",
        text(&o.stdout)
    );
    // 10^4 combinations, each checked when the scenario is read, x 100 replications.
    let o = coaplab(&[
        "run",
        &axes_scenario(&tmp.0, 2),
        "--dry-run",
        "--reps",
        "100",
    ]);
    assert!(
        text(&o.stdout)
            .contains(": seed 1, 10000 combinations x 100 replications = 1000000 runs\n"),
        "{}",
        text(&o.stdout)
    );
}

/// A scenario of `axes` sweep axes of 100 values each (10^(2·axes) combinations).
fn axes_scenario(dir: &Path, axes: usize) -> String {
    let list = |from: u32| {
        let values: Vec<String> = (from..from + 100).map(|n| n.to_string()).collect();
        format!("[{}]", values.join(", "))
    };
    let keys = ["buffer_bytes", "count", "exchanges"];
    let value = |k: usize, key: &str| {
        let from = if key == "buffer_bytes" { 2000 } else { 1 };
        if k < axes {
            list(from)
        } else {
            from.to_string()
        }
    };
    let body = format!(
        "name = \"axes\"\n[network]\nbuffer_bytes = {}\n[[flows]]\ncc = \"default\"\ncount = {}\n\
         exchanges = {}\n",
        value(0, keys[0]),
        value(1, keys[1]),
        value(2, keys[2])
    );
    write(dir, &format!("axes{axes}.toml"), &body)
}

/// A million combinations, each checked when the scenario is read (about 5 s in a release
/// build, far longer in a debug one: run by `./scripts/test.sh --long`).
#[test]
#[ignore]
fn dry_run_of_a_million_combinations() {
    let tmp = TempDir::new("million");
    let o = coaplab(&["run", &axes_scenario(&tmp.0, 3), "--dry-run"]);
    assert!(
        text(&o.stdout)
            .contains(": seed 1, 1000000 combinations x 1 replications = 1000000 runs\n"),
        "{}",
        text(&o.stdout)
    );
}

#[test]
fn reps_and_seed_have_the_limits_of_the_file() {
    let tmp = TempDir::new("limits");
    let tiny = write(&tmp.0, "tiny.toml", TINY);
    for (flag, value, expected) in [
        ("--reps", "1000001", "an integer in [1, 1000000]"),
        ("--reps", "0", "an integer in [1, 1000000]"),
        (
            "--seed",
            "9223372036854775808",
            "an integer in [0, 9223372036854775807]",
        ),
    ] {
        let o = coaplab(&["run", &tiny, "--dry-run", flag, value]);
        assert_eq!(o.status.code(), Some(2), "{flag} {value}");
        assert!(
            text(&o.stderr).contains(&format!("invalid value '{value}' for '{flag} <")),
            "{}",
            text(&o.stderr)
        );
        assert!(text(&o.stderr).contains(expected), "{}", text(&o.stderr));
    }
    let o = coaplab(&[
        "run",
        &tiny,
        "--dry-run",
        "--reps",
        "1000000",
        "--seed",
        "9223372036854775807",
    ]);
    assert!(o.status.success(), "{}", text(&o.stderr));
}

/// `[output] timers = true` writes `timers.csv`: one row per expired timer, as many as the
/// `expired_rtos` of `flows.csv` add up to, each naming its run and flow; without it, none.
#[test]
fn timers_csv_lists_every_expired_timer() {
    let tmp = TempDir::new("timers");
    let lossy = TINY.replace(
        "[[flows]]",
        "[network]\nloss = \"high\"\n[output]\ntimers = true\n[[flows]]",
    );
    let scenario = write(&tmp.0, "timers.toml", &lossy);
    let out = tmp.0.join("out");
    let o = coaplab(&["run", &scenario, "--out", &out.display().to_string()]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let flows = std::fs::read_to_string(out.join("flows.csv")).unwrap();
    let mut lines = flows.lines();
    let header: Vec<&str> = lines.next().unwrap().split(',').collect();
    let col = |name: &str| header.iter().position(|h| *h == name).unwrap();
    let (run, flow, expired) = (col("run"), col("flow"), col("expired_rtos"));
    let mut expected = Vec::new();
    for l in lines {
        let f: Vec<&str> = l.split(',').collect();
        let n: usize = f[expired].parse().unwrap();
        expected.extend(std::iter::repeat_n(format!("{},{}", f[run], f[flow]), n));
    }
    assert!(!expected.is_empty(), "high loss expires some timer");
    let timers = std::fs::read_to_string(out.join("timers.csv")).unwrap();
    let mut rows = timers.lines();
    assert_eq!(rows.next(), Some("run,flow,time_s,rto_s,ordinal"));
    let got: Vec<String> = rows
        .map(|r| r.splitn(3, ',').take(2).collect::<Vec<_>>().join(","))
        .collect();
    assert_eq!(got, expected);
    let plain = write(&tmp.0, "plain.toml", TINY);
    let out2 = tmp.0.join("out2");
    assert!(
        coaplab(&["run", &plain, "--out", &out2.display().to_string()])
            .status
            .success()
    );
    assert!(!out2.join("timers.csv").exists());
}

/// Issue 15 item 7: with stderr not a terminal, `run` prints progress lines (here one after
/// every run, COAPLAB_PROGRESS_INTERVAL_MS=0), and `--quiet` silences them.
#[test]
fn progress_lines_when_stderr_is_not_a_terminal_and_quiet_silences_them() {
    let tmp = TempDir::new("progress");
    let scenario = write(&tmp.0, "tiny.toml", TINY);
    let run = |out: &str, quiet: bool| {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_coaplab"));
        cmd.args(["run", &scenario, "--out", out, "--jobs", "1"])
            .env("COAPLAB_PROGRESS_INTERVAL_MS", "0");
        if quiet {
            cmd.arg("--quiet");
        }
        cmd.output().expect("run coaplab")
    };
    let o = run(&tmp.0.join("a").display().to_string(), false);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let err = text(&o.stderr);
    let progress: Vec<&str> = err.lines().filter(|l| l.contains(" runs/s, ")).collect();
    assert_eq!(progress.len(), 4, "{err}");
    for (i, line) in progress.iter().enumerate() {
        let prefix = format!("coaplab run: {}/4 runs, ", i + 1);
        assert!(line.starts_with(&prefix), "{line}");
        let end = if i == 3 { " runs/s, done" } else { " s" };
        assert!(line.ends_with(end), "{line}");
    }
    let o = run(&tmp.0.join("b").display().to_string(), true);
    assert!(o.status.success(), "{}", text(&o.stderr));
    assert!(!text(&o.stderr).contains("runs/s"), "{}", text(&o.stderr));
}

#[test]
fn runs_without_out_in_one_second_get_a_directory_each() {
    let tmp = TempDir::new("run-default-out");
    let scenario = write(&tmp.0, "tiny.toml", TINY);
    // Three runs back to back finish well within a second or two: the later ones find the
    // time-stamped directory taken and append -2, -3 instead of being refused.
    for _ in 0..3 {
        let o = Command::new(env!("CARGO_BIN_EXE_coaplab"))
            .args(["run", &scenario, "--reps", "1"])
            .current_dir(&tmp.0)
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", text(&o.stderr));
    }
    let dirs: Vec<String> = std::fs::read_dir(tmp.0.join("results"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(dirs.len(), 3, "{dirs:?}");
    assert!(dirs.iter().all(|d| d.starts_with("tiny-")), "{dirs:?}");
}
