use std::sync::atomic::{AtomicUsize, Ordering};

use super::store::Pending;
use super::*;
use crate::exec::{execute, Progress};
use crate::scenario::{Plan, RunSpec, Scenario};

const SCENARIO: &str = r#"name = "t"
seed = 3
replications = 2
[network]
buffer_bytes = [2500, 28200]
[[flows]]
count = 2
cc = ["default", "cocoa"]
"#;

/// A fake simulator: flow i of run r finishes at 10·(r + 1) + i seconds.
fn fake(spec: &RunSpec) -> Result<RunResult, RunError> {
    let flows = (0..spec.config.total_flows())
        .map(|i| FlowRecord {
            flow: i,
            cc: spec.config.flows[0].cc().to_string(),
            workload: "continuous".to_string(),
            fct_s: Some(10.0 * (spec.run + 1) as f64 + f64::from(i)),
            exchanges: 50,
            failed_exchanges: 0,
            transmissions: 50 + u64::from(i),
            retransmissions: u64::from(i),
            unnecessary_retransmissions: 0,
            timeouts: u64::from(i),
            rto_max_s: (i > 0).then_some(2.5),
            expired_rtos: u64::from(i),
            expiries: Vec::new(),
            coap_rtt_median_s: Some(0.7145),
            bytes_up: 4400,
            bytes_down: 4400,
            completed: true,
            unfinished: None,
            elapsed_s: Some(10.0 * (spec.run + 1) as f64 + f64::from(i)),
            transmission_counts: vec![50 - i, i],
            tcp: None,
            observe: None,
            mesh: None,
        })
        .collect();
    Ok(RunResult {
        flows,
        events: 100,
        sim_time_s: 1.0,
        network: None,
    })
}

/// The plan of `text`, whose scenario lives as long as the test.
fn plan_of(text: &str, reps: Option<u32>, seed: Option<u64>) -> Plan<'static> {
    let scenario: &'static Scenario = Box::leak(Box::new(Scenario::parse(text, "t.toml").unwrap()));
    scenario.plan(reps, seed)
}

fn setup(dir: &std::path::Path, resume: bool) -> (Plan<'static>, ResultsDir, Manifest) {
    let plan = plan_of(SCENARIO, None, None);
    let manifest = Manifest::new(&plan);
    let results = ResultsDir::open(dir, &manifest, resume).unwrap();
    (plan, results, manifest)
}

#[test]
fn flows_summary_and_manifest_round_trip() {
    let tmp = tempfile::tempdir().unwrap();
    let (plan, dir, manifest) = setup(tmp.path(), false);
    let mut seen = Vec::new();
    let out = execute(&plan, &dir, manifest, 2, fake, &mut |p: &Progress| {
        seen.push(p.done)
    })
    .unwrap();
    assert_eq!((out.total, out.skipped, out.ok, out.failed), (8, 0, 8, 0));
    assert_eq!(seen, [1, 2, 3, 4, 5, 6, 7, 8]);
    let flows = std::fs::read_to_string(tmp.path().join("flows.csv")).unwrap();
    let lines: Vec<&str> = flows.lines().collect();
    assert_eq!(lines.len(), 1 + 8 * 2);
    assert_eq!(
        lines[0],
        "run,combination,replication,seed,flow,cc,workload,clients,buffer_bytes,loss,fct_s,\
         exchanges,failed_exchanges,transmissions,retransmissions,unnecessary_retransmissions,\
         timeouts,rto_max_s,coap_rtt_median_s,bytes_up,bytes_down,completed,transmission_counts,\
         setup_s,segments_sent,segments_retransmitted,rto_count,syn_retransmissions,expired_rtos,\
         unfinished,elapsed_s"
    );
    let seed = plan.run_seed(3);
    assert_eq!(
        lines[8],
        format!(
            "3,1,1,{seed},1,cocoa,continuous,2,2500,none,41,50,0,51,1,0,1,2.5,0.7145,4400,4400,true,49 1,,,,,,1,,41"
        )
    );
    // Pooled over 2 replications × 2 flows: run 2 (rep 0) gives 30, 31; run 3 gives 40, 41.
    let summary = std::fs::read_to_string(tmp.path().join("summary.csv")).unwrap();
    let s: Vec<&str> = summary.lines().collect();
    assert_eq!(
        s[0],
        "combination,clients,buffer_bytes,loss,cc,workload,flows,n,incomplete,\
         unfinished_gave_up,unfinished_time_cap,fct_min_s,fct_p10_s,fct_p25_s,fct_p50_s,\
         fct_p75_s,fct_p90_s,fct_p95_s,fct_max_s,fct_p50_at_least_s,fct_mean_s,fct_sd_s,fct_p50_ci95_lo_s,fct_p50_ci95_hi_s,retransmissions_median,\
         unnecessary_retransmissions_median,exchanges_tx1,exchanges_tx2"
    );
    // Mean 35.5; deviations ±4.5, ±5.5: sd = sqrt(101 / 3). A resample's median is 30 when
    // 3 or 4 of its 4 draws are 30: probability 13/256 ≈ 5.1 % > 2.5 %, so the interval's
    // ends are the extremes 30 and 41.
    assert_eq!(
        s[2],
        "1,2,2500,none,cocoa,continuous,4,4,0,0,0,30,30.3,30.75,35.5,40.25,40.7,40.85,41,,35.5,\
         5.802298395176403,30,41,0.5,0,198,2"
    );
    assert_eq!(s.len(), 1 + 4);
    // Summarized run by run as flows.csv is streamed out, the same as from the whole file.
    assert_eq!(out.summary, summary::summarize(&csv::parse(&flows)));
    let text = std::fs::read_to_string(tmp.path().join("manifest.json")).unwrap();
    let back: Manifest = serde_json::from_str(&text).unwrap();
    assert_eq!(back, out.manifest);
    assert_eq!(back.runs.len(), 8);
    assert!(back
        .runs
        .iter()
        .all(|r| r.status == Status::Ok && r.events == 100));
    assert_eq!(back.runs[3].seed, seed);
    assert_eq!(back.runs[3].parameters["cc"], "cocoa");
    assert_eq!(back.axes[0].values, ["2500", "28200"]);
}

static CALLS: AtomicUsize = AtomicUsize::new(0);

/// Fails run 5, panics in run 6, counts every call.
fn flaky(spec: &RunSpec) -> Result<RunResult, RunError> {
    CALLS.fetch_add(1, Ordering::SeqCst);
    match spec.run {
        5 => Err(RunError::Setup("no route".to_string())),
        6 => panic!("boom"),
        _ => fake(spec),
    }
}

#[test]
fn failures_are_recorded_and_resume_skips_finished_runs() {
    let tmp = tempfile::tempdir().unwrap();
    let (plan, dir, manifest) = setup(tmp.path(), false);
    let out = execute(&plan, &dir, manifest, 2, flaky, &mut |_: &Progress| {}).unwrap();
    assert_eq!((out.ok, out.failed), (6, 2));
    assert_eq!(out.manifest.runs[5].status, Status::Failed);
    assert_eq!(
        out.manifest.runs[5].error.as_deref(),
        Some("cannot set up the run: no route")
    );
    assert_eq!(
        out.manifest.runs[6].error.as_deref(),
        Some("the simulator panicked: boom")
    );
    let flows = std::fs::read_to_string(tmp.path().join("flows.csv")).unwrap();
    assert_eq!(flows.lines().count(), 1 + 6 * 2);
    let runs_csv = std::fs::read_to_string(tmp.path().join("runs.csv")).unwrap();
    let runs_lines: Vec<&str> = runs_csv.lines().collect();
    assert_eq!(runs_lines.len(), 1 + 8);
    assert!(runs_lines[0].ends_with("up_queue_high_water_bytes,buffer_bytes,cc"));
    assert!(
        runs_lines[6].starts_with(&format!(
            "5,2,1,{},failed,cannot set up the run: no route,",
            plan.run_seed(5)
        )),
        "{}",
        runs_lines[6]
    );
    assert!(
        runs_lines[6].ends_with(",0,,,,,,,,,,,,,,,,28200,default"),
        "{}",
        runs_lines[6]
    );

    // Without --resume the directory is refused; with it only the two failed runs run again.
    drop(dir);
    let fresh = Manifest::new(&plan);
    assert!(matches!(
        ResultsDir::open(tmp.path(), &fresh, false),
        Err(ResultsError::Exists(_))
    ));
    let before = CALLS.load(Ordering::SeqCst);
    let (plan, dir, manifest) = setup(tmp.path(), true);
    let out = execute(&plan, &dir, manifest, 1, fake, &mut |_: &Progress| {}).unwrap();
    assert_eq!(CALLS.load(Ordering::SeqCst), before);
    assert_eq!((out.skipped, out.ok, out.failed), (6, 2, 0));
    let flows = std::fs::read_to_string(tmp.path().join("flows.csv")).unwrap();
    assert_eq!(flows.lines().count(), 1 + 8 * 2);

    // Another seed is another plan.
    drop(dir);
    let other = Manifest::new(&plan_of(SCENARIO, Some(2), Some(4)));
    assert!(matches!(
        ResultsDir::open(tmp.path(), &other, true),
        Err(ResultsError::Mismatch { .. })
    ));
}

#[test]
fn the_manifest_holds_every_resolved_parameter() {
    let m = Manifest::new(&plan_of(SCENARIO, None, None));
    assert_eq!(m.combinations.len(), 4);
    assert_eq!(m.scenario_text, SCENARIO);
    let c = &m.combinations[3];
    assert_eq!(c["combination"], 3);
    assert_eq!(c["parameters"]["buffer_bytes"], "28200");
    assert_eq!(c["parameters"]["cc"], "cocoa");
    let config = &c["config"];
    assert_eq!(config["network"]["down"]["buffer_bytes"], 28200);
    assert_eq!(config["network"]["down"]["delay_ms"], 400.0);
    assert_eq!(config["network"]["up"]["rate_bps"], 60000);
    assert_eq!(config["flows"][0]["cc"], "cocoa");
    assert_eq!(config["flows"][0]["params"]["initial_rto_s"], "2");
    assert_eq!(config["flows"][0]["params"]["max_retransmit"], "4");
    assert_eq!(config["flows"][0]["workload"]["kind"], "continuous");
}

#[test]
fn the_manifest_holds_every_tcp_parameter() {
    let text = "name = \"t\"\n[[flows]]\ncc = \"tcp-bbr\"\nworkload = \"long-transfer\"\n\
                params = { rto_backoff_reset = [\"rtt-sample\", \"new-ack\"], \
                cycle_rand = 3 }\n";
    let m = Manifest::new(&plan_of(text, None, None));
    let params = |c: usize| m.combinations[c]["config"]["flows"][0]["params"].clone();
    assert_eq!(params(0)["rto_backoff_reset"], "rtt-sample");
    assert_eq!(params(1)["rto_backoff_reset"], "new-ack");
    // Every TCP key at its resolved value, and the BBR constants the scenario sets.
    for spec in coaplab_netsim::tcp::TCP_PARAMS {
        assert!(params(0).get(spec.key).is_some(), "{}", spec.key);
    }
    assert_eq!(params(0)["iw"], "4");
    assert_eq!(params(0)["rto_initial_s"], "2");
    assert_eq!(params(0)["recovery"], "prr");
    assert_eq!(params(0)["slow_start_after_idle"], "true");
    assert_eq!(params(0)["cycle_rand"], "3");
}

/// Runs `plan` in a fresh directory under `root` with [`fake`]; returns `flows.csv` and
/// `summary.csv`.
fn fresh_results(plan: &Plan<'static>, root: &std::path::Path) -> (Vec<u8>, Vec<u8>) {
    let manifest = Manifest::new(plan);
    let dir = ResultsDir::open(root, &manifest, false).unwrap();
    execute(plan, &dir, manifest, 2, fake, &mut |_: &Progress| {}).unwrap();
    let read = |f: &str| std::fs::read(root.join(f)).unwrap();
    (read("flows.csv"), read("summary.csv"))
}

#[test]
fn a_locked_directory_is_refused_until_its_holder_ends() {
    let tmp = tempfile::tempdir().unwrap();
    let (plan, dir, manifest) = setup(tmp.path(), false);
    // A second invocation (here a second open file: flock(2) locks belong to open files)
    // fails at once, with or without --resume.
    let second = ResultsDir::open(tmp.path(), &manifest, true).unwrap_err();
    assert!(matches!(&second, ResultsError::Locked(p) if p == tmp.path()));
    assert_eq!(
        second.to_string(),
        format!(
            "{} is in use by another coaplab run (it holds {}/.lock); wait for it to end or use \
             another --out",
            tmp.path().display(),
            tmp.path().display()
        )
    );
    let clone = dir.clone();
    drop(dir);
    assert!(
        matches!(
            ResultsDir::open(tmp.path(), &manifest, true),
            Err(ResultsError::Locked(_))
        ),
        "every clone holds the lock"
    );
    drop(clone);
    let again = ResultsDir::open(tmp.path(), &manifest, true).unwrap();
    let out = execute(&plan, &again, manifest, 1, fake, &mut |_: &Progress| {}).unwrap();
    assert_eq!(out.ok, 8);
}

#[test]
fn resume_redoes_runs_whose_files_do_not_verify_and_removes_temporaries() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("a");
    let plan = plan_of(SCENARIO, None, None);
    let (flows, summary) = fresh_results(&plan, &root);
    // Another plan's files for run 6 (another seed).
    let other = tmp.path().join("b");
    fresh_results(&plan_of(SCENARIO, None, Some(4)), &other);

    let runs = root.join("runs");
    let path = |run: usize, ext: &str| runs.join(format!("{run:06}.{ext}"));
    // 0: one digit of the rows changed.
    let text = std::fs::read_to_string(path(0, "csv")).unwrap();
    std::fs::write(path(0, "csv"), text.replacen("4400", "4401", 1)).unwrap();
    // 1: rows truncated.
    let rows = std::fs::read(path(1, "csv")).unwrap();
    std::fs::write(path(1, "csv"), &rows[..rows.len() / 2]).unwrap();
    // 2: one digit of the status file changed.
    let text = std::fs::read_to_string(path(2, "json")).unwrap();
    std::fs::write(
        path(2, "json"),
        text.replacen("\"events\": 100", "\"events\": 900", 1),
    )
    .unwrap();
    // 3 and 4: rows swapped.
    let (r3, r4) = (
        std::fs::read(path(3, "csv")).unwrap(),
        std::fs::read(path(4, "csv")).unwrap(),
    );
    std::fs::write(path(3, "csv"), &r4).unwrap();
    std::fs::write(path(4, "csv"), &r3).unwrap();
    // 5: rows missing, status present.
    std::fs::remove_file(path(5, "csv")).unwrap();
    // 6: another plan's files.
    for ext in ["csv", "json"] {
        std::fs::copy(other.join(format!("runs/000006.{ext}")), path(6, ext)).unwrap();
    }
    // 7: run 0's status file under run 7's name.
    std::fs::copy(path(0, "json"), path(7, "json")).unwrap();
    // Temporaries of a killed invocation.
    std::fs::write(runs.join("000000.csv.tmp4242"), "half a row").unwrap();
    std::fs::write(root.join("flows.csv.tmp4242"), "").unwrap();

    let manifest = Manifest::new(&plan);
    let dir = ResultsDir::open(&root, &manifest, true).unwrap();
    assert_eq!(dir.removed_temporaries(), 2);
    assert!(!runs.join("000000.csv.tmp4242").exists());
    assert!(!root.join("flows.csv.tmp4242").exists());
    let mut reported = Vec::new();
    let out = execute(&plan, &dir, manifest, 2, fake, &mut |p: &Progress| {
        if !p.unverified.is_empty() {
            reported = p.unverified.clone();
        }
    })
    .unwrap();
    let b_plan = fingerprint_of(&other);
    let why: Vec<(usize, &str)> = reported.iter().map(|(r, w)| (*r, w.as_str())).collect();
    assert_eq!(
        why,
        [
            (0, "rows file checksum mismatch"),
            (
                1,
                &*format!(
                    "rows file has {} bytes, its status file says {}",
                    rows.len() / 2,
                    rows.len()
                )
            ),
            (2, "status file checksum mismatch (truncated or altered)"),
            (
                3,
                &*format!(
                    "rows file has {} bytes, its status file says {}",
                    r4.len(),
                    r3.len()
                )
            ),
            (
                4,
                &*format!(
                    "rows file has {} bytes, its status file says {}",
                    r3.len(),
                    r4.len()
                )
            ),
            (5, "rows file missing"),
            (6, &*format!("status file is of another plan ({b_plan})")),
            (7, "status file is run 0's"),
        ]
    );
    assert_eq!(
        (out.skipped, out.unverified, out.ok, out.failed),
        (0, 8, 8, 0)
    );
    assert_eq!(std::fs::read(root.join("flows.csv")).unwrap(), flows);
    assert_eq!(std::fs::read(root.join("summary.csv")).unwrap(), summary);
    drop(dir);
    // Everything verifies now.
    let dir = ResultsDir::open(&root, &Manifest::new(&plan), true).unwrap();
    assert_eq!(dir.pending(plan.len()).unwrap(), Pending::default());
}

fn fingerprint_of(root: &std::path::Path) -> String {
    let text = std::fs::read_to_string(root.join("manifest.json")).unwrap();
    serde_json::from_str::<Manifest>(&text).unwrap().fingerprint
}

#[test]
fn without_its_manifest_a_directory_of_another_plan_is_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let plan = plan_of(SCENARIO, None, None);
    let (flows, _) = fresh_results(&plan, tmp.path());
    let found = fingerprint_of(tmp.path());
    std::fs::remove_file(tmp.path().join("manifest.json")).unwrap();
    // The runs are still there: not a fresh directory.
    assert!(matches!(
        ResultsDir::open(tmp.path(), &Manifest::new(&plan), false),
        Err(ResultsError::Exists(_))
    ));
    // Another seed: refused, naming both plans.
    let other = Manifest::new(&plan_of(SCENARIO, None, Some(4)));
    match ResultsDir::open(tmp.path(), &other, true) {
        Err(ResultsError::Mismatch {
            found: f, expected, ..
        }) => {
            assert_eq!((f, expected), (found, other.fingerprint.clone()));
        }
        r => panic!("{r:?}"),
    }
    // The same plan adopts its own runs.
    let manifest = Manifest::new(&plan);
    let dir = ResultsDir::open(tmp.path(), &manifest, true).unwrap();
    let out = execute(&plan, &dir, manifest, 1, fake, &mut |_: &Progress| {}).unwrap();
    assert_eq!((out.skipped, out.ok), (8, 0));
    assert_eq!(std::fs::read(tmp.path().join("flows.csv")).unwrap(), flows);
}

/// A fake simulator that uses 2 ms of its thread's CPU time before answering as [`fake`].
fn busy(spec: &RunSpec) -> Result<RunResult, RunError> {
    let start_s = crate::exec::thread_cpu_s();
    while crate::exec::thread_cpu_s() - start_s < 0.002 {
        std::hint::black_box(start_s);
    }
    fake(spec)
}

#[test]
fn each_run_records_its_own_thread_cpu_time() {
    let tmp = tempfile::tempdir().unwrap();
    let (plan, dir, manifest) = setup(tmp.path(), false);
    let out = execute(&plan, &dir, manifest, 2, busy, &mut |_: &Progress| {}).unwrap();
    let text = std::fs::read_to_string(tmp.path().join("manifest.json")).unwrap();
    let back: Manifest = serde_json::from_str(&text).unwrap();
    assert_eq!(back, out.manifest);
    for r in &back.runs {
        // At least what the run used; and a thread cannot use more CPU than time passed.
        assert!(r.cpu_s >= 0.002, "run {}: cpu_s {}", r.run, r.cpu_s);
        assert!(
            r.cpu_s <= r.wall_s + 1e-3,
            "run {}: {} > {}",
            r.run,
            r.cpu_s,
            r.wall_s
        );
    }
    // Measured, so not a runs.csv column (results compared byte for byte leave it out).
    let runs = std::fs::read_to_string(tmp.path().join("runs.csv")).unwrap();
    assert!(!runs.lines().next().unwrap().contains("cpu_s"));
}

/// [`fake`], slow from run 3 on: the worker, which runs ahead of the thread polling the stop,
/// is then at most one run ahead.
fn slow_from_3(spec: &RunSpec) -> Result<RunResult, RunError> {
    if spec.run >= 3 {
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    fake(spec)
}

#[test]
fn a_stopped_sweep_records_the_runs_it_ran_and_resumes() {
    let tmp = tempfile::tempdir().unwrap();
    let (plan, dir, manifest) = setup(tmp.path(), false);
    // One job, stopped once three runs have ended: the stop is polled after each run.
    let ended = std::cell::Cell::new(0);
    let out = crate::exec::execute_until(
        &plan,
        crate::shard::Shard::WHOLE,
        &dir,
        manifest,
        1,
        &slow_from_3,
        &mut |_: &Progress| ended.set(ended.get() + 1),
        Some(&mut || ended.get() >= 3),
    )
    .unwrap();
    assert!(out.interrupted);
    // The run under way when the stop came (run 3, if the worker had taken it) is recorded.
    assert!((3..=4).contains(&out.ok), "{}", out.ok);
    assert_eq!((out.total, out.failed), (8, 0));
    let flows = std::fs::read_to_string(tmp.path().join("flows.csv")).unwrap();
    assert_eq!(flows.lines().count(), 1 + out.ok * 2);
    drop(dir);
    let (plan, dir, manifest) = setup(tmp.path(), true);
    let again = execute(&plan, &dir, manifest, 2, fake, &mut |_: &Progress| {}).unwrap();
    assert!(!again.interrupted);
    assert_eq!((again.skipped, again.ok), (out.ok, 8 - out.ok));
}

#[test]
fn write_atomic_replaces_links_at_the_target_and_at_the_temporary() {
    let tmp = tempfile::tempdir().unwrap();
    let outside = tmp.path().join("outside");
    std::fs::write(&outside, "precious").unwrap();
    let target = tmp.path().join("report.html");
    std::os::unix::fs::symlink(&outside, &target).unwrap();
    // A link where the temporary goes, as a killed process with this id would leave a file.
    let temporary = tmp
        .path()
        .join(format!("report.html.tmp{}", std::process::id()));
    std::os::unix::fs::symlink(&outside, &temporary).unwrap();
    store::write_atomic(&target, b"page").unwrap();
    assert_eq!(std::fs::read_to_string(&outside).unwrap(), "precious");
    assert!(std::fs::symlink_metadata(&target)
        .unwrap()
        .file_type()
        .is_file());
    assert_eq!(std::fs::read_to_string(&target).unwrap(), "page");
    assert!(std::fs::symlink_metadata(&temporary).is_err());
}

#[test]
fn a_runs_file_past_the_limit_is_an_error_not_a_rerun() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("a");
    let plan = plan_of(SCENARIO, None, None);
    fresh_results(&plan, &root);
    let fingerprint = fingerprint_of(&root);
    // A sparse rows file one byte past the limit: refused from its size, nothing read.
    let rows = root.join("runs").join("000000.csv");
    let file = std::fs::OpenOptions::new().write(true).open(&rows).unwrap();
    file.set_len(crate::files::Input::ResultsTable.limit() + 1)
        .unwrap();
    let e = check_run(&root, &fingerprint, 0).unwrap_err();
    assert!(
        matches!(
            e,
            ResultsError::Input(crate::files::InputError::TooLarge { .. })
        ),
        "{e}"
    );
    assert!(e.to_string().contains("000000.csv"), "{e}");
    assert!(e.to_string().contains("256 MiB"), "{e}");
}
