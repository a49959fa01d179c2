//! The suite format: the repository's suites load, bad keys are named, cells are built.

use std::path::{Path, PathBuf};

use super::{Suite, SuiteError, SuiteRunError};

/// The repository's `suites/`.
fn suites() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../suites")
}

/// `text` as a suite file in `suites/` (its scenarios are the repository's).
fn parse(text: &str) -> Result<Suite, SuiteError> {
    Suite::parse(text, "t.toml", &suites())
}

const QUICK: &str = "name = \"t\"\n[[experiment]]\nname = \"q\"\nscenario = \"quickstart.toml\"\n\
                     set = [\"network.buffer_bytes=[2500]\", \"flows.0.count=4\"]\n";

#[test]
fn suite_files_of_the_repository_load() {
    for name in ["smoke.toml", "standard.toml"] {
        let suite = Suite::load(&suites().join(name)).unwrap_or_else(|e| panic!("{e}"));
        assert!(!suite.experiments.is_empty());
        let cells = suite.cells(&["default".into(), "fasor".into()]).unwrap();
        assert_eq!(cells.len(), 2 * suite.experiments.len());
    }
    let smoke = Suite::load(&suites().join("smoke.toml")).unwrap();
    assert_eq!(smoke.name, "smoke");
    let names: Vec<&str> = smoke.experiments.iter().map(|e| e.name.as_str()).collect();
    assert_eq!(names, ["nbiot-congested", "nbiot-high-errors", "mesh-grid"]);
    // Reduced: 2 replications of one combination.
    assert_eq!(
        (smoke.experiments[0].runs, smoke.experiments[0].seed),
        (2, 1)
    );
}

#[test]
fn suite_cells_replace_the_groups_under_test() {
    let suite = parse(QUICK).unwrap();
    assert_eq!(suite.experiments[0].under_test, [0]);
    let cells = suite.cells(&["cocoa".into()]).unwrap();
    assert_eq!(
        cells[0].sets,
        [
            "network.buffer_bytes=[2500]",
            "flows.0.count=4",
            "flows.0.cc=cocoa"
        ]
    );
    assert_eq!(
        cells[0].dir(&suite, Path::new("out")),
        Path::new("out/q/cocoa")
    );
    // A competing scenario: by default every UDP group is under test; `under_test` names them.
    let competing = "name = \"t\"\n[[experiment]]\nname = \"c\"\n\
                     scenario = \"kojo-zigbee-competing.toml\"\n";
    assert_eq!(parse(competing).unwrap().experiments[0].under_test, [0, 1]);
    let one = format!("{competing}under_test = [1]\n");
    let suite = parse(&one).unwrap();
    assert_eq!(suite.experiments[0].under_test, [1]);
    let cells = suite.cells(&["fasor".into()]).unwrap();
    assert_eq!(cells[0].sets, ["flows.1.cc=fasor"]);
}

#[test]
fn suite_errors_name_the_bad_key() {
    let err = |text: &str| parse(text).unwrap_err();
    let e = err(&format!("{QUICK}sett = []\n"));
    assert_eq!(e.key(), Some("experiment[0].sett"));
    assert!(
        e.to_string()
            .starts_with("t.toml:6: unknown key 'experiment[0].sett'"),
        "{e}"
    );
    let e = err("name = \"t\"\nsuite = 1\n");
    assert_eq!(e.key(), Some("suite"));
    let e = err("name = \"t\"\n");
    assert_eq!(e.key(), Some("experiment"));
    let e = err("name = \"t\"\n[[experiment]]\nname = \"q\"\n");
    assert_eq!(e.key(), Some("experiment[0].scenario"));
    // A reduction the scenario format refuses: the scenario reader's key.
    let e = err(&QUICK.replace("flows.0.count=4", "network.bufer_bytes=1"));
    assert_eq!(e.key(), Some("network.bufer_bytes"));
    assert!(e.to_string().starts_with("t.toml: experiment 'q': "), "{e}");
    let e = err(&QUICK.replace("flows.0.count=4", "flows.3.cc=x"));
    assert!(e.to_string().contains("--set flows.3.cc=x"), "{e}");
    let e = err(&QUICK.replace("\"flows.0.count=4\"", "4"));
    assert_eq!(e.key(), Some("experiment[0].set"));
    let e = err(&format!("{QUICK}under_test = [1]\n"));
    assert_eq!(e.key(), Some("experiment[0].under_test"));
    assert!(e.to_string().contains("0 to 0"), "{e}");
    let e = err(&format!(
        "{QUICK}[[experiment]]\nname = \"q\"\nscenario = \"quickstart.toml\"\n"
    ));
    assert_eq!(e.key(), Some("experiment[1].name"));
    let e = err(&QUICK.replace("name = \"q\"", "name = \"../q\""));
    assert_eq!(e.key(), Some("experiment[0].name"));
    let e = err(&QUICK.replace("quickstart.toml", "nope.toml"));
    assert!(e.to_string().contains("nope.toml"), "{e}");
    // Algorithms are checked when the cells are made.
    let suite = parse(QUICK).unwrap();
    let e = suite.cells(&["fasr".into()]).unwrap_err();
    assert!(matches!(e, SuiteError::UnknownAlgorithm { .. }), "{e}");
    let e = suite.cells(&["tcp-newreno".into()]).unwrap_err();
    assert!(matches!(e, SuiteError::UnknownAlgorithm { .. }), "{e}");
}

#[test]
fn suite_record_names_version_file_and_seeds() {
    let suite = parse(QUICK).unwrap();
    let r = suite.record(&["default".into()]);
    assert_eq!(r["suite"], "t");
    assert_eq!(r["file"], "t.toml");
    assert_eq!(r["experiments"][0]["seed"], 1);
    assert_eq!(r["experiments"][0]["replications"], 10);
    assert!(r["code_version"]
        .as_str()
        .unwrap()
        .starts_with("coaplab 0."));
}

#[test]
fn suite_run_runs_skips_finished_cells_and_scores_cells_of_unknown_algorithms() {
    use super::run::{self, RunOptions, RunOutcome};
    let out = std::env::temp_dir().join(format!("coaplab-suite-run-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&out);
    let suite = parse(QUICK).unwrap();
    let opts = RunOptions {
        out: &out,
        jobs: 1,
        shard: None,
    };
    let algorithms = ["default".to_string()];
    let mut lines = Vec::new();
    let mut log = |l: &str| lines.push(l.to_string());
    let first = run::run(
        &suite,
        &algorithms,
        opts,
        &crate::sim::run_one,
        &mut log,
        None,
    )
    .unwrap();
    assert_eq!(
        first,
        RunOutcome {
            cells: 1,
            skipped: 0,
            failed: 0,
            interrupted: false
        }
    );
    let again = run::run(
        &suite,
        &algorithms,
        opts,
        &crate::sim::run_one,
        &mut log,
        None,
    )
    .unwrap();
    assert_eq!((again.cells, again.skipped), (1, 1));
    assert!(lines[0].starts_with("[1/1] q / default: "), "{lines:?}");
    assert_eq!(lines[1], "[1/1] q / default: finished earlier, skipped");
    run::write_scores(&out).unwrap();
    let board = std::fs::read_to_string(out.join("leaderboard.csv")).unwrap();
    // The same cell as if an algorithm of another process (one written in Python) had run it:
    // its name is unknown here, and the cell is scored all the same, with the same numbers.
    std::fs::rename(out.join("q/default"), out.join("q/py-x")).unwrap();
    for (file, from, to) in [
        (
            "q/py-x/manifest.json",
            "cc = \\\"default\\\"",
            "cc = \\\"py-x\\\"",
        ),
        ("suite.json", "\"default\"", "\"py-x\""),
    ] {
        let path = out.join(file);
        let text = std::fs::read_to_string(&path).unwrap();
        assert_eq!(text.matches(from).count(), 1, "{file}");
        std::fs::write(&path, text.replace(from, to)).unwrap();
    }
    assert!(coaplab_cc::registry::lookup("py-x").is_err());
    assert!(run::write_scores(&out).unwrap().contains("py-x"));
    let renamed = std::fs::read_to_string(out.join("leaderboard.csv")).unwrap();
    assert!(board.contains("\nq,default,1,"), "{board}");
    assert_eq!(renamed, board.replace("\nq,default,", "\nq,py-x,"));
    std::fs::remove_dir_all(&out).unwrap();
}

#[test]
fn suite_directory_errors_name_the_directory() {
    let dir = tempfile::tempdir().unwrap();
    let first = parse(QUICK).unwrap();
    assert_eq!(
        first.write_record(dir.path(), &["fasor".into()]).unwrap(),
        ["fasor"]
    );
    // Another suite text into the same directory is refused, naming it and the file.
    let other = parse(&QUICK.replace("count=4", "count=5")).unwrap();
    let e = other
        .write_record(dir.path(), &["fasor".into()])
        .unwrap_err();
    assert!(
        matches!(&e, SuiteRunError::OtherSuite { out, file } if out == dir.path() && file == "t.toml"),
        "{e}"
    );
    assert!(matches!(
        super::merge(&dir.path().join("m"), &[]),
        Err(SuiteRunError::NothingToMerge)
    ));
    // A directory already holding a suite run is no merge target.
    let e = super::merge(dir.path(), &[dir.path().to_path_buf()]).unwrap_err();
    assert!(
        matches!(&e, SuiteRunError::AlreadyMerged(p) if p == dir.path()),
        "{e}"
    );
    // A suite.json that is not JSON names its path.
    std::fs::write(dir.path().join("suite.json"), "{").unwrap();
    let e = first.write_record(dir.path(), &[]).unwrap_err();
    assert!(
        matches!(&e, SuiteRunError::Record { path, .. } if path.ends_with("suite.json")),
        "{e}"
    );
}
