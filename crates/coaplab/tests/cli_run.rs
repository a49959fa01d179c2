//! `coaplab run` end to end, as the built binary: a tiny scenario simulated for real.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn coaplab(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_coaplab"))
        .args(args)
        .output()
        .expect("run coaplab")
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// A fresh directory under the system temp dir, removed when dropped.
struct TempDir(PathBuf);

impl TempDir {
    fn new(name: &str) -> TempDir {
        let dir = std::env::temp_dir().join(format!("coaplab-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        TempDir(dir)
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

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
