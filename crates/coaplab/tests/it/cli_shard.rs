//! `coaplab run --shard K/N`, `coaplab merge` and `coaplab run --set`, as the built binary.

use std::path::Path;
use std::process::Output;

use crate::run_support;
use run_support::{coaplab, text, TempDir};

/// Two buffer sizes x two algorithms x 2 replications: 8 runs of 3 flows.
const SMALL: &str =
    "name = \"small\"\nseed = 11\nreplications = 2\n[network]\npreset = \"nbiot\"\n\
                     buffer_bytes = [2500, 28200]\nloss = \"high\"\n[[flows]]\ncount = 3\n\
                     cc = [\"default\", \"cocoa\"]\nexchanges = 4\n\
                     [output]\ntimers = true\n";

fn ok(o: &Output) {
    assert!(o.status.success(), "{}", text(&o.stderr));
}

fn read(dir: &str, file: &str) -> String {
    std::fs::read_to_string(Path::new(dir).join(file)).unwrap()
}

/// `manifest.json` with every wall and CPU time zeroed: the measured fields, in which two
/// runs of one plan differ.
fn without_wall_times(manifest: &str) -> String {
    manifest
        .lines()
        .map(
            |l| match ["\"wall_s\": ", "\"cpu_s\": "].map(|k| (k, l.find(k))) {
                [(k, Some(at)), _] | [_, (k, Some(at))] => format!(
                    "{}{k}0{}",
                    &l[..at],
                    if l.ends_with(',') { "," } else { "" }
                ),
                _ => l.to_string(),
            },
        )
        .collect::<Vec<_>>()
        .join("\n")
}

/// `runs.csv` without its `wall_s` column.
fn runs_without_wall_times(runs: &str) -> String {
    let header: Vec<&str> = runs.lines().next().unwrap().split(',').collect();
    let col = header
        .iter()
        .position(|c| *c == "wall_s")
        .expect("a wall_s column");
    runs.lines()
        .map(|l| {
            let mut cells: Vec<&str> = l.split(',').collect();
            cells[col] = "";
            cells.join(",")
        })
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn merged_shards_equal_a_single_machine_run() {
    let tmp = TempDir::new("shard");
    std::fs::write(tmp.0.join("small.toml"), SMALL).unwrap();
    let scenario = tmp.path("small.toml");
    let whole = tmp.path("whole");
    ok(&coaplab(&[
        "run", &scenario, "--out", &whole, "--jobs", "2",
    ]));
    let shards: Vec<String> = (1..=3).map(|k| tmp.path(&format!("s{k}"))).collect();
    for (k, dir) in shards.iter().enumerate() {
        let shard = format!("{}/3", k + 1);
        let o = coaplab(&[
            "run", &scenario, "--shard", &shard, "--out", dir, "--jobs", "1",
        ]);
        ok(&o);
        // Round robin: shard 1 holds runs 0, 3, 6; 2 holds 1, 4, 7; 3 holds 2, 5.
        let runs = if k == 2 { 2 } else { 3 };
        assert!(
            text(&o.stderr).contains(&format!("(shard {shard}: {runs} runs)")),
            "{}",
            text(&o.stderr)
        );
        assert!(read(dir, "manifest.json").contains(&format!("\"shard\": \"{shard}\"")));
        assert_eq!(read(dir, "flows.csv").lines().count(), 1 + runs * 3);
    }

    // A missing shard: refused, naming each missing run and its shard; nothing written.
    let merged = tmp.path("merged");
    let o = coaplab(&["merge", "--out", &merged, &shards[0], &shards[2]]);
    assert!(!o.status.success());
    assert_eq!(
        text(&o.stderr),
        "coaplab merge: 3 of the plan's 8 runs are missing or do not verify in any directory \
         (run the missing shards, or --resume them):\n  run 1: shard 2/3 has not run it\n  \
         run 4: shard 2/3 has not run it\n  run 7: shard 2/3 has not run it\n"
    );
    assert!(!Path::new(&merged).exists());

    let o = coaplab(&[
        "merge", "--out", &merged, &shards[2], &shards[0], &shards[1],
    ]);
    ok(&o);
    assert_eq!(
        text(&o.stderr),
        format!("coaplab merge: 8 runs from 3 directories (0 failed) -> {merged}\n")
    );
    for file in ["flows.csv", "summary.csv", "timers.csv"] {
        assert_eq!(read(&merged, file), read(&whole, file), "{file}");
    }
    assert!(
        read(&whole, "timers.csv").lines().count() > 1,
        "some timer expired"
    );
    assert_eq!(
        without_wall_times(&read(&merged, "manifest.json")),
        without_wall_times(&read(&whole, "manifest.json"))
    );
    assert_eq!(
        runs_without_wall_times(&read(&merged, "runs.csv")),
        runs_without_wall_times(&read(&whole, "runs.csv"))
    );
    // The merged directory is an ordinary one: --resume finds every run finished.
    let o = coaplab(&["run", &scenario, "--out", &merged, "--resume"]);
    ok(&o);
    assert!(
        text(&o.stderr).contains("0 finished, 8 skipped"),
        "{}",
        text(&o.stderr)
    );

    // A shard resumed as another shard is refused.
    let o = coaplab(&[
        "run", &scenario, "--out", &shards[0], "--resume", "--shard", "2/3",
    ]);
    assert!(!o.status.success());
    assert!(
        text(&o.stderr).contains("holds shard 1/3 and this invocation runs shard 2/3"),
        "{}",
        text(&o.stderr)
    );
}

#[test]
fn merge_refuses_directories_of_different_plans() {
    let tmp = TempDir::new("mixed");
    std::fs::write(tmp.0.join("small.toml"), SMALL).unwrap();
    let scenario = tmp.path("small.toml");
    let (a, b) = (tmp.path("a"), tmp.path("b"));
    ok(&coaplab(&["run", &scenario, "--shard", "1/2", "--out", &a]));
    ok(&coaplab(&[
        "run", &scenario, "--shard", "2/2", "--out", &b, "--seed", "12",
    ]));
    let out = tmp.path("out");
    let o = coaplab(&["merge", "--out", &out, &a, &b]);
    assert!(!o.status.success());
    let err = text(&o.stderr);
    assert!(
        err.starts_with(
            "coaplab merge: the directories hold results of different plans (scenario text, \
             --reps or --seed):\n"
        ),
        "{err}"
    );
    assert!(err.contains(&format!("{a}: plan ")) && err.contains(&format!("{b}: plan ")));
    assert!(!Path::new(&out).exists());
}

#[test]
fn set_overrides_scenario_keys_and_is_recorded() {
    let tmp = TempDir::new("set");
    std::fs::write(tmp.0.join("small.toml"), SMALL).unwrap();
    let scenario = tmp.path("small.toml");
    let out = tmp.path("out");
    let o = coaplab(&[
        "run",
        &scenario,
        "--out",
        &out,
        "--set",
        "network.buffer_bytes=2500",
        "--set",
        "flows.0.cc=[\"fasor\"]",
        "--set",
        "flows.0.count=2",
    ]);
    ok(&o);
    // One combination (the lists were replaced by a single value and a one-element axis).
    let flows = read(&out, "flows.csv");
    assert_eq!(flows.lines().count(), 1 + 2 * 2, "{flows}");
    assert!(
        flows.lines().skip(1).all(|l| l.contains(",fasor,")),
        "{flows}"
    );
    let manifest = read(&out, "manifest.json");
    assert!(manifest.contains(
        "\"overrides\": [\n    \"network.buffer_bytes=2500\",\n    \"flows.0.cc=[\\\"fasor\\\"]\",\n    \
         \"flows.0.count=2\"\n  ]"
    ));
    assert!(manifest.contains("buffer_bytes = 2500\\n"));

    // Errors name the key as for the file.
    let o = coaplab(&[
        "run",
        &scenario,
        "--dry-run",
        "--set",
        "network.bufer_bytes=1",
    ]);
    assert!(!o.status.success());
    assert!(
        text(&o.stderr).contains("unknown key 'network.bufer_bytes'"),
        "{}",
        text(&o.stderr)
    );
    let o = coaplab(&["run", &scenario, "--dry-run", "--set", "flows.1.cc=fasor"]);
    assert_eq!(
        text(&o.stderr),
        "coaplab run: --set flows.1.cc=fasor: 'flows' has 1 tables; index 1 is out of range\n"
    );
    // A list makes a sweep axis.
    let o = coaplab(&[
        "run",
        &scenario,
        "--dry-run",
        "--set",
        "network.loss=[\"none\", \"high\"]",
    ]);
    ok(&o);
    assert!(
        text(&o.stdout).contains("8 combinations x 2 replications = 16 runs"),
        "{}",
        text(&o.stdout)
    );
}
