//! `coaplab suite run | report` end to end (issue 36): the smoke suite for three algorithms,
//! every experiment × algorithm scored and ranked, a rerun that skips every finished cell, and
//! the page naming the suite file, the version and the seeds.

use std::path::{Path, PathBuf};

use crate::run_support::{coaplab, text, TempDir};

/// The repository's `suites/NAME`.
fn suite_file(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../suites")
        .join(name)
}

/// The records of a CSV file without quoted fields, header first.
fn records(path: &Path) -> Vec<Vec<String>> {
    std::fs::read_to_string(path)
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
        .lines()
        .map(|l| l.split(',').map(str::to_string).collect())
        .collect()
}

#[test]
fn suite_smoke_ranks_every_algorithm_in_every_experiment_and_reports() {
    let tmp = TempDir::new("suite-smoke");
    let out = tmp.path("smoke");
    let smoke = suite_file("smoke.toml");
    let smoke = smoke.to_str().unwrap();
    let algorithms = ["default", "cocoa", "fasor"];
    let mut args = vec!["suite", "run", smoke, "--out", &out, "--jobs", "2", "--cc"];
    args.extend(algorithms);
    let o = coaplab(&args);
    let (stdout, stderr) = (text(&o.stdout), text(&o.stderr));
    assert!(o.status.success(), "{stderr}");
    let experiments = ["nbiot-congested", "nbiot-high-errors", "mesh-grid"];
    // The terminal table: each experiment, then the overall ranking.
    for e in experiments {
        assert!(stdout.contains(&format!("{e}\n")), "{stdout}");
    }
    assert!(stdout.contains("overall (mean normalised rank"), "{stdout}");
    let board = records(&Path::new(&out).join("leaderboard.csv"));
    let header = &board[0];
    let col = |n: &str| header.iter().position(|h| h == n).unwrap();
    assert_eq!(board.len(), 1 + experiments.len() * algorithms.len());
    for e in experiments {
        let rows: Vec<&Vec<String>> = board[1..]
            .iter()
            .filter(|r| r[col("experiment")] == e)
            .collect();
        let mut ccs: Vec<&str> = rows.iter().map(|r| r[col("cc")].as_str()).collect();
        ccs.sort_unstable();
        assert_eq!(ccs, ["cocoa", "default", "fasor"], "{e}");
        // Ranks 1..n, ties sharing the mean of their positions: they sum to 1 + 2 + 3.
        let ranks: Vec<f64> = rows
            .iter()
            .map(|r| r[col("rank")].parse().unwrap())
            .collect();
        assert!(
            ranks.iter().all(|r| (1.0..=3.0).contains(r)),
            "{e}: {ranks:?}"
        );
        assert_eq!(ranks.iter().sum::<f64>(), 6.0, "{e}: {ranks:?}");
        // Every cell has flows and a median (exact or a bound).
        for r in rows {
            assert!(r[col("flows")].parse::<usize>().unwrap() > 0);
            assert!(!(r[col("fct_p50_s")].is_empty() && r[col("fct_p50_at_least_s")].is_empty()));
        }
    }
    let ranking = records(&Path::new(&out).join("ranking.csv"));
    assert_eq!(ranking[0][..3], ["cc", "mean_normalised_rank", "wins"]);
    assert_eq!(ranking.len(), 1 + algorithms.len());
    let wins: usize = ranking[1..]
        .iter()
        .map(|r| r[2].parse::<usize>().unwrap())
        .sum();
    assert!(wins >= experiments.len());
    // A rerun skips every finished cell and prints the same table.
    let again = coaplab(&args);
    assert!(again.status.success(), "{}", text(&again.stderr));
    assert_eq!(
        text(&again.stderr)
            .matches("finished earlier, skipped")
            .count(),
        9
    );
    assert_eq!(text(&again.stdout), stdout);
    // The page: the leaderboard first, every experiment, the suite file, version and seeds.
    let o = coaplab(&["suite", "report", &out]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let page = std::fs::read_to_string(Path::new(&out).join("suite.html")).unwrap();
    assert!(page.contains("coaplab suite: smoke"));
    assert!(page.contains(&format!("<code>{smoke}</code>")));
    assert!(page.contains(&format!("run by coaplab {}", env!("CARGO_PKG_VERSION"))));
    assert!(page.contains("seed 2018, 2 replications"));
    let board_at = page.find("id=\"leaderboard\"").unwrap();
    for e in experiments {
        assert!(page.find(&format!("id=\"{e}\"")).unwrap() > board_at, "{e}");
    }
    assert_eq!(page.matches("<svg").count(), experiments.len());
}

#[test]
fn suite_errors_name_the_algorithm_and_the_key() {
    let tmp = TempDir::new("suite-errors");
    let smoke = suite_file("smoke.toml");
    let o = coaplab(&[
        "suite",
        "run",
        smoke.to_str().unwrap(),
        "--cc",
        "fasr",
        "--out",
        &tmp.path("o"),
    ]);
    assert!(!o.status.success());
    assert!(
        text(&o.stderr).contains("unknown algorithm 'fasr'"),
        "{}",
        text(&o.stderr)
    );
    // A suite file elsewhere, its scenarios the repository's, with a bad reduction.
    let scenarios = suite_file("../scenarios");
    let bad = tmp.0.join("bad.toml");
    std::fs::write(
        &bad,
        format!(
            "name = \"bad\"\nscenarios_dir = {:?}\n[[experiment]]\nname = \"q\"\n\
             scenario = \"quickstart.toml\"\nset = [\"network.bufer_bytes=1\"]\n",
            scenarios.to_str().unwrap()
        ),
    )
    .unwrap();
    let o = coaplab(&[
        "suite",
        "run",
        bad.to_str().unwrap(),
        "--cc",
        "default",
        "--out",
        &tmp.path("o"),
    ]);
    assert!(!o.status.success());
    let err = text(&o.stderr);
    assert!(
        err.contains("experiment 'q'") && err.contains("'network.bufer_bytes'"),
        "{err}"
    );
}

#[test]
fn suite_competing_groups_are_scored_as_competitors_with_harm() {
    let tmp = TempDir::new("suite-competing");
    let file = tmp.0.join("competing.toml");
    std::fs::write(
        &file,
        format!(
            "name = \"competing\"\nscenarios_dir = {:?}\n[[experiment]]\nname = \"z\"\n\
             scenario = \"kojo-zigbee-competing.toml\"\nunder_test = [1]\n\
             set = [\"vars.half=[4]\", \"vars.workload=[\\\"continuous\\\"]\", \
             \"flows.0.exchanges=10\", \"flows.1.exchanges=10\", \"replications=2\"]\n",
            suite_file("../scenarios").to_str().unwrap()
        ),
    )
    .unwrap();
    let out = tmp.path("out");
    let file = file.to_str().unwrap();
    let args = [
        "suite", "run", file, "--out", &out, "--cc", "default", "fasor",
    ];
    // The plan first: 1 combination x 2 replications per algorithm.
    let o = coaplab(&[&args[..], &["--dry-run"]].concat());
    assert!(o.status.success(), "{}", text(&o.stderr));
    let plan = text(&o.stdout);
    assert!(
        plan.contains("1 experiments x 2 algorithms, 2 runs per algorithm, 4 runs"),
        "{plan}"
    );
    assert!(
        plan.contains("flow groups under test [1]; seed 2016, 2 replications"),
        "{plan}"
    );
    assert!(!Path::new(&out).exists());
    let o = coaplab(&args);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let board = records(&Path::new(&out).join("leaderboard.csv"));
    let col = |n: &str| board[0].iter().position(|h| h == n).unwrap();
    assert_eq!(board.len(), 3);
    let mut harms = Vec::new();
    for r in &board[1..] {
        // 4 flows under test (group 1) per run; group 0's 4 are the competitors.
        assert_eq!(r[col("flows")], "8");
        assert!(!r[col("competitor_fct_p50_s")].is_empty());
        harms.push(r[col("harm")].parse::<f64>().unwrap());
    }
    // Harm is relative to the least harmful algorithm compared.
    assert_eq!(harms.iter().copied().fold(f64::INFINITY, f64::min), 0.0);
    assert!(harms.iter().all(|h| *h >= 0.0));
}

#[test]
fn suite_shards_merge_into_the_single_machine_files() {
    let tmp = TempDir::new("suite-shards");
    let smoke = suite_file("smoke.toml");
    let smoke = smoke.to_str().unwrap();
    let run = |out: &str, extra: &[&str]| {
        let mut args = vec![
            "suite", "run", smoke, "--out", out, "--jobs", "1", "--quiet",
        ];
        args.extend(extra);
        args.extend(["--cc", "default", "fasor"]);
        let o = coaplab(&args);
        assert!(o.status.success(), "{}", text(&o.stderr));
        text(&o.stdout)
    };
    let whole = run(&tmp.path("whole"), &[]);
    // A shard prints no table: its cells are incomplete.
    assert_eq!(run(&tmp.path("s1"), &["--shard", "1/2"]), "");
    assert_eq!(run(&tmp.path("s2"), &["--shard", "2/2"]), "");
    let o = coaplab(&[
        "suite",
        "merge",
        "--out",
        &tmp.path("m"),
        &tmp.path("s1"),
        &tmp.path("s2"),
    ]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    assert_eq!(text(&o.stdout), whole);
    let read = |dir: &str, file: &str| std::fs::read(tmp.0.join(dir).join(file)).unwrap();
    for file in [
        "leaderboard.csv",
        "ranking.csv",
        "mesh-grid/fasor/flows.csv",
        "nbiot-congested/default/summary.csv",
    ] {
        assert!(read("whole", file) == read("m", file), "{file}");
    }
    // Shards of different algorithm lists are refused.
    run(&tmp.path("other"), &["--shard", "1/2", "--cc", "cocoa"]);
    let o = coaplab(&[
        "suite",
        "merge",
        "--out",
        &tmp.path("m2"),
        &tmp.path("s1"),
        &tmp.path("other"),
    ]);
    assert!(!o.status.success());
    assert!(
        text(&o.stderr).contains("not shards of one suite run"),
        "{}",
        text(&o.stderr)
    );
}

/// `--cc-from` hands the command over to `python3 -m coaplab` (python/tests runs that with the
/// package installed); without the package, or with a file that is not Python, it says why.
#[test]
fn suite_cc_from_refuses_non_python_files_and_names_the_missing_package() {
    let smoke = suite_file("smoke.toml");
    let smoke = smoke.to_str().unwrap();
    let example =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/python-algorithm/rfc6298.py");
    let example = example.to_str().unwrap();
    let o = coaplab(&["suite", "run", smoke, "--cc-from", "linear.so"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        text(&o.stderr).contains("--cc-from linear.so: not a Python file (.py)"),
        "{}",
        text(&o.stderr)
    );
    let o = coaplab(&["suite", "run", smoke, "--cc-from", "missing.py"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(text(&o.stderr).contains("--cc-from missing.py: no such file"));
    // `coaplab run` the same way.
    let o = coaplab(&["run", "quickstart.toml", "--cc-from", "linear.so"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(text(&o.stderr).contains("coaplab run: --cc-from linear.so: not a Python file"));
    let o = std::process::Command::new(env!("CARGO_BIN_EXE_coaplab"))
        .args([
            "suite",
            "run",
            smoke,
            "--cc",
            "default",
            "--cc-from",
            example,
        ])
        .env("COAPLAB_PYTHON", "/nonexistent/python3")
        .output()
        .expect("run coaplab");
    assert_eq!(o.status.code(), Some(1));
    let stderr = text(&o.stderr);
    assert!(
        stderr.contains("--cc-from needs the coaplab Python package, which /nonexistent/python3")
            && stderr.contains("pip install ./python"),
        "{stderr}"
    );
}
