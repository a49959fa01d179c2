//! `coaplab run scenarios/observe-cocoa-fasor.toml --reps 1` (issue 16): the `observe` workload
//! end to end, its notification columns in flows.csv and summary.csv, and a bad key named.

use crate::run_support;
use run_support::{coaplab, text, TempDir};

fn scenario() -> String {
    format!(
        "{}/../../scenarios/observe-cocoa-fasor.toml",
        env!("CARGO_MANIFEST_DIR")
    )
}

#[test]
fn the_observe_scenario_runs_with_one_replication() {
    let tmp = TempDir::new("observe-run");
    let out = tmp.path("out");
    let o = coaplab(&["run", &scenario(), "--reps", "1", "--out", &out]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let flows = std::fs::read_to_string(tmp.path("out/flows.csv")).unwrap();
    let mut lines = flows.lines();
    let header: Vec<&str> = lines.next().unwrap().split(',').collect();
    assert_eq!(
        header[header.len() - 8..],
        [
            "notifications_sent",
            "notifications_received",
            "notifications_lost",
            "notification_delay_mean_s",
            "notification_delay_p50_s",
            "notification_delay_p95_s",
            "notification_delay_max_s",
            "notification_retransmissions",
        ]
    );
    let rows: Vec<Vec<&str>> = lines.map(|l| l.split(',').collect()).collect();
    // Three algorithms x 20 observers, each told of about 60 changes (300 s, a change every 5 s).
    assert_eq!(rows.len(), 60);
    let col = |name: &str| header.iter().position(|h| *h == name).unwrap();
    for r in &rows {
        let n = |c: &str| r[col(c)].parse::<u64>().unwrap();
        let sent = n("notifications_sent");
        assert!((59..=60).contains(&sent), "{r:?}");
        assert_eq!(sent, n("notifications_received") + n("notifications_lost"));
        assert_eq!(r[col("workload")], "observe");
        assert_eq!(r[col("completed")], "true");
    }
    let summary = std::fs::read_to_string(tmp.path("out/summary.csv")).unwrap();
    let head = summary.lines().next().unwrap();
    assert!(
        head.ends_with(
            "notifications_sent,notifications_lost,notification_loss_ratio,\
notification_delay_p50_median_s,notification_delay_p95_median_s,notification_delay_max_s,\
notification_retransmissions_median"
        ),
        "{head}"
    );
    assert_eq!(summary.lines().count(), 1 + 3);
}

#[test]
fn observe_keys_belong_to_the_observe_workload() {
    let tmp = TempDir::new("observe-keys");
    let path = tmp.path("bad.toml");
    std::fs::write(
        &path,
        "name = \"bad\"\n[[flows]]\ncc = \"default\"\nworkload = \"continuous\"\nperiod_s = 2\n",
    )
    .unwrap();
    let o = coaplab(&["run", &path, "--reps", "1", "--out", &tmp.path("out")]);
    assert!(!o.status.success());
    let err = text(&o.stderr);
    assert!(err.contains("flows[0].period_s"), "{err}");
    assert!(err.contains("only with workload = \"observe\""), "{err}");
}
