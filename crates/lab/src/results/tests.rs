use std::sync::atomic::{AtomicUsize, Ordering};

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
            cc: spec.config.flows[0].cc.clone(),
            workload: "continuous".to_string(),
            fct_s: Some(10.0 * (spec.run + 1) as f64 + f64::from(i)),
            exchanges: 50,
            failed_exchanges: 0,
            transmissions: 50 + u64::from(i),
            retransmissions: u64::from(i),
            unnecessary_retransmissions: 0,
            timeouts: u64::from(i),
            rto_max_s: (i > 0).then_some(2.5),
            coap_rtt_median_s: Some(0.7145),
            bytes_up: 4400,
            bytes_down: 4400,
            completed: true,
            transmission_counts: vec![50 - i, i],
            tcp: None,
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
         setup_s,segments_sent,segments_retransmitted,rto_count,syn_retransmissions"
    );
    let seed = plan.run_seed(3);
    assert_eq!(
        lines[8],
        format!(
            "3,1,1,{seed},1,cocoa,continuous,2,2500,none,41,50,0,51,1,0,1,2.5,0.7145,4400,4400,true,49 1,,,,,"
        )
    );
    // Pooled over 2 replications × 2 flows: run 2 (rep 0) gives 30, 31; run 3 gives 40, 41.
    let summary = std::fs::read_to_string(tmp.path().join("summary.csv")).unwrap();
    let s: Vec<&str> = summary.lines().collect();
    assert_eq!(
        s[0],
        "clients,buffer_bytes,loss,cc,workload,flows,n,fct_min_s,fct_p10_s,fct_p25_s,fct_p50_s,\
         fct_p75_s,fct_p90_s,fct_p95_s,fct_max_s,retransmissions_median,\
         unnecessary_retransmissions_median,transmission_counts"
    );
    assert_eq!(
        s[2],
        "2,2500,none,cocoa,continuous,4,4,30,30.3,30.75,35.5,40.25,40.7,40.85,41,0.5,0,198 2"
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
