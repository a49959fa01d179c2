//! Issue 29, item 3: an unfinished flow is a censored observation. A flow that gave up or was
//! cut by `max_sim_time_s` keeps its real counts in flows.csv, is counted by reason in
//! summary.csv and ranks above every finished FCT, so that a percentile reading it is unbounded
//! (`>=X`), never a number that looks finished; on a mesh the same holds for `fct50_s`.

use coaplab_lab::exec::{execute, Progress};
use coaplab_lab::report;
use coaplab_lab::results::{csv, Manifest, ResultsDir, SummaryRow, RESULTS_FORMAT};
use coaplab_lab::scenario::Scenario;
use coaplab_lab::sim::run_one;
use coaplab_lab::stats::{quantile_sorted, Quantile, SUMMARY_QUANTILES};

/// A finished plan: its summary rows and its files.
struct Ran {
    summary: Vec<SummaryRow>,
    /// flows.csv records, header first.
    flows: Vec<Vec<String>>,
    /// summary.csv records, header first.
    summary_csv: Vec<Vec<String>>,
    manifest: String,
}

fn run(text: &str) -> Ran {
    let s = Scenario::parse(text, "censored.toml").unwrap();
    let tmp = tempfile::tempdir().unwrap();
    let plan = s.plan(Some(1), None);
    let manifest = Manifest::new(&plan);
    let dir = ResultsDir::open(tmp.path(), &manifest, false).unwrap();
    let out = execute(&plan, &dir, manifest, 1, run_one, &mut |_: &Progress| {}).unwrap();
    assert_eq!(out.failed, 0);
    let read = |f: &str| std::fs::read_to_string(tmp.path().join(f)).unwrap();
    Ran {
        summary: out.summary,
        flows: csv::parse(&read("flows.csv")),
        summary_csv: csv::parse(&read("summary.csv")),
        manifest: read("manifest.json"),
    }
}

/// The cell of record `r` (header `h`) in column `c`.
fn cell<'a>(h: &[String], r: &'a [String], c: &str) -> &'a str {
    let i = h
        .iter()
        .position(|x| x == c)
        .unwrap_or_else(|| panic!("no {c}"));
    &r[i]
}

fn num(h: &[String], r: &[String], c: &str) -> f64 {
    cell(h, r, c)
        .parse()
        .unwrap_or_else(|_| panic!("{c}: {:?}", cell(h, r, c)))
}

/// The flows.csv rows of workload `w`.
fn rows_of<'a>(ran: &'a Ran, w: &str) -> Vec<&'a Vec<String>> {
    let h = &ran.flows[0];
    ran.flows[1..]
        .iter()
        .filter(|r| cell(h, r, "workload") == w)
        .collect()
}

/// Row `r` is of a flow unfinished for reason `why` (`gave_up`, `time_cap`): no FCT, and
/// its real counts: `exchanges` is the number of answered exchanges (the histogram's total),
/// not 0.
fn assert_unfinished(h: &[String], r: &[String], why: &str) {
    let outcome = ["completed", "unfinished", "fct_s"].map(|c| cell(h, r, c));
    assert_eq!(outcome, ["false", why, ""], "{r:?}");
    let histogram: u64 = cell(h, r, "transmission_counts")
        .split_whitespace()
        .map(|k| k.parse::<u64>().unwrap())
        .sum();
    assert_eq!(num(h, r, "exchanges") as u64, histogram, "{r:?}");
}

#[test]
fn transfers_that_give_up_are_unfinished_with_their_real_counts() {
    // 20 % loss each way and MAX_RETRANSMIT 1: a copy is answered with probability 0.64, an
    // exchange fails with probability 0.36² ≈ 13 %, so each 400-block transfer gives up after
    // a few blocks (about 8 on average) and none completes.
    let ran = run(r#"name = "gives-up"
seed = 7
[network]
loss = { model = "bernoulli", p = 0.2 }
[[flows]]
count = 4
cc = "default"
workload = "long-transfer"
[flows.params]
max_retransmit = 1
"#);
    let h = &ran.flows[0];
    let rows = rows_of(&ran, "long-transfer");
    assert_eq!(rows.len(), 4);
    let mut elapsed = Vec::new();
    for r in &rows {
        assert_unfinished(h, r, "gave_up");
        // It gave up after one exchange exhausted its one retransmission.
        assert_eq!(num(h, r, "failed_exchanges"), 1.0);
        assert!(num(h, r, "retransmissions") >= 1.0, "{r:?}");
        elapsed.push(num(h, r, "elapsed_s"));
    }
    elapsed.sort_by(f64::total_cmp);
    assert!(elapsed[0] > 0.0);
    // Blocks were answered before the transfers gave up: flows.csv used to say 0.
    assert!(rows.iter().any(|r| num(h, r, "exchanges") > 0.0));
    // Nothing finished: every quantile is unbounded, bounded below by the elapsed times'.
    let s = &ran.summary[0];
    assert_eq!(
        (s.flows, s.n, s.unfinished_gave_up, s.unfinished_time_cap),
        (4, 0, 4, 0)
    );
    let expected: Vec<Quantile> = SUMMARY_QUANTILES
        .iter()
        .map(|&(_, p)| Quantile::AtLeast(quantile_sorted(&elapsed, p).unwrap()))
        .collect();
    assert_eq!(s.fct_s.unwrap().to_vec(), expected);
    assert_eq!((s.fct_mean_s, s.fct_sd_s), (None, None));
    // summary.csv: the counts; no quantile, mean or deviation; the median's lower bound.
    let (sh, sr) = (&ran.summary_csv[0], &ran.summary_csv[1]);
    assert_eq!(
        ["incomplete", "unfinished_gave_up", "unfinished_time_cap"].map(|c| cell(sh, sr, c)),
        ["4", "4", "0"]
    );
    for (name, _) in SUMMARY_QUANTILES {
        assert_eq!(cell(sh, sr, &format!("fct_{name}_s")), "", "{name}");
    }
    assert_eq!(
        num(sh, sr, "fct_p50_at_least_s"),
        expected[3].at_least().unwrap()
    );
    for c in ["fct_mean_s", "fct_sd_s", "fct_p50_ci95_hi_s"] {
        assert_eq!(cell(sh, sr, c), "", "{c}");
    }
    // The run warns; the results record the format that has these columns.
    let warning = report::unfinished_warning(&ran.summary).unwrap();
    assert!(
        warning.starts_with("warning: 4 unfinished flows in 1 of 1 cells (4 gave up, 0 cut"),
        "{warning}"
    );
    assert!(ran
        .manifest
        .contains(&format!("\"results_format\": {RESULTS_FORMAT}")));
}

#[test]
fn flows_cut_by_the_time_cap_are_censored_at_the_run_end() {
    // No loss, every flow starting at 0: flows 0 and 1 finish (one and two exchanges), flows
    // 2 and 3 (1000 exchanges) and the long transfer (about 285 s alone) are cut at 10 s.
    let ran = run(r#"name = "cut"
max_sim_time_s = 10
[[flows]]
cc = "default"
exchanges = 1
start_jitter_s = 0
[[flows]]
cc = "default"
exchanges = 2
start_jitter_s = 0
[[flows]]
count = 2
cc = "default"
exchanges = 1000
start_jitter_s = 0
[[flows]]
cc = "default"
workload = "long-transfer"
start_jitter_s = 0
"#);
    let h = &ran.flows[0];
    let continuous = rows_of(&ran, "continuous");
    let fct: Vec<f64> = continuous[..2].iter().map(|r| num(h, r, "fct_s")).collect();
    assert!(0.0 < fct[0] && fct[0] < fct[1] && fct[1] < 10.0, "{fct:?}");
    for r in &continuous[..2] {
        assert_eq!(cell(h, r, "unfinished"), "");
        assert_eq!(num(h, r, "elapsed_s"), num(h, r, "fct_s"));
    }
    // The cut flows: elapsed from their first request (at 0) to the end of the run, and the
    // exchanges they did complete.
    for r in continuous[2..]
        .iter()
        .chain(&rows_of(&ran, "long-transfer"))
    {
        assert_unfinished(h, r, "time_cap");
        assert_eq!(num(h, r, "elapsed_s"), 10.0);
        assert!(num(h, r, "exchanges") >= 5.0, "{r:?}");
    }
    // Continuous cell: 2 finished of 4; n = 4, h = 3p. The median (h = 1.5) reads the
    // 3rd order statistic, censored at 10 s: unbounded, at least fct[1] + 0.5 (10 − fct[1]).
    let s = &ran.summary[0];
    assert_eq!(s.workload, "continuous");
    assert_eq!(
        (s.flows, s.n, s.unfinished_gave_up, s.unfinished_time_cap),
        (4, 2, 0, 2)
    );
    let (a, b) = (fct[0], fct[1]);
    assert_eq!(
        s.fct_s.unwrap(),
        [
            Quantile::Exact(a),
            Quantile::Exact(a + 3.0 * 0.1 * (b - a)), // h = 0.3
            Quantile::Exact(a + 0.75 * (b - a)),      // h = 0.75
            Quantile::AtLeast(b + 0.5 * (10.0 - b)),  // h = 1.5
            Quantile::AtLeast(10.0),                  // h = 2.25
            Quantile::AtLeast(10.0),
            Quantile::AtLeast(10.0),
            Quantile::AtLeast(10.0),
        ]
    );
    assert_eq!(s.fct_mean_s, None);
    // Long-transfer cell: its one flow cut, every quantile at least 10 s.
    let t = &ran.summary[1];
    assert_eq!(t.workload, "long-transfer");
    assert_eq!((t.flows, t.n, t.unfinished_time_cap), (1, 0, 1));
    assert_eq!(t.fct_s.unwrap(), [Quantile::AtLeast(10.0); 8]);
    // summary.csv: the exact quantiles, the unbounded ones empty, the median's bound.
    let sh = &ran.summary_csv[0];
    let sr = &ran.summary_csv[1];
    assert_eq!(
        ["incomplete", "unfinished_gave_up", "unfinished_time_cap"].map(|c| cell(sh, sr, c)),
        ["2", "0", "2"]
    );
    assert_eq!(num(sh, sr, "fct_min_s"), a);
    assert_eq!(num(sh, sr, "fct_p25_s"), a + 0.75 * (b - a));
    for c in [
        "fct_p50_s",
        "fct_p75_s",
        "fct_max_s",
        "fct_mean_s",
        "fct_sd_s",
    ] {
        assert_eq!(cell(sh, sr, c), "", "{c}");
    }
    assert_eq!(num(sh, sr, "fct_p50_at_least_s"), b + 0.5 * (10.0 - b));
    // The terminal table says it too.
    let table = report::table(&ran.summary);
    assert!(table.contains(">=10.000"), "{table}");
    assert!(
        table.contains(
            "warning: 3 unfinished flows in 2 of 2 cells (0 gave up, 3 cut by the time cap)"
        ),
        "{table}"
    );
    assert!(
        table.contains("median FCT unbounded in: combination 0 default continuous, combination 0 default long-transfer"),
        "{table}"
    );
}

#[test]
fn a_mesh_flow_short_of_50_answers_censors_the_fct50_median() {
    // Two clients one hop from the server: flow 0 completes 60 exchanges (its fct50_s is
    // known), flow 1 completes its 30 and never gets 50 answers.
    let ran = run(r#"name = "mesh-short"
[topology]
kind = "mesh"
shape = "nodes"
routing = "static"
[[topology.nodes]]
x_m = 0
y_m = 0
role = "border-router"
[[topology.nodes]]
x_m = 8
y_m = 0
role = "server"
[[topology.nodes]]
x_m = 16
y_m = 0
[[topology.nodes]]
x_m = 8
y_m = 8
[[flows]]
cc = "default"
exchanges = 60
[[flows]]
cc = "default"
exchanges = 30
"#);
    let h = &ran.flows[0];
    let rows = rows_of(&ran, "continuous");
    assert_eq!(rows.len(), 2);
    let fct50 = num(h, rows[0], "fct50_s");
    assert_eq!(cell(h, rows[1], "fct50_s"), "");
    // Both flows finished their quota: the FCT is not censored, fct50_s is.
    assert!(rows.iter().all(|r| cell(h, r, "unfinished").is_empty()));
    let short_elapsed = num(h, rows[1], "elapsed_s");
    let s = &ran.summary[0];
    assert_eq!((s.n, s.unfinished_gave_up + s.unfinished_time_cap), (2, 0));
    // n = 2, h = 0.5: the median reads the censored flow, at least halfway from fct50 to
    // max(its elapsed time, fct50).
    let bound = fct50 + 0.5 * (short_elapsed.max(fct50) - fct50);
    assert_eq!(s.fct50, Some((Some(Quantile::AtLeast(bound)), 1)));
    let (sh, sr) = (&ran.summary_csv[0], &ran.summary_csv[1]);
    assert_eq!(cell(sh, sr, "fct50_s_median"), "");
    assert_eq!(num(sh, sr, "fct50_s_median_at_least"), bound);
    assert_eq!(cell(sh, sr, "fct50_unfinished"), "1");
    let warning = report::unfinished_warning(&ran.summary).unwrap();
    assert_eq!(
        warning,
        "warning: 1 mesh flows never got 50 answers: their fct50 counts as at least their \
         elapsed time; median fct50 unbounded in: combination 0 default continuous"
    );
}
