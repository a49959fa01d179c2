//! The netem forms of the error profiles deliver Table 5's average loss per packet sent, to a
//! flow as well as to the chain (docs/experiments.md §3 revised, issue 12): unlike the time-based
//! chain, whose bursts a flow sits out idle, a per-packet chain cannot be dodged.

use coaplab_lab::exec::{execute, Progress};
use coaplab_lab::results::{Manifest, ResultsDir};
use coaplab_lab::scenario::Scenario;
use coaplab_lab::sim::run_one;

/// The FASOR Globecom'18 error cells, `default` flows only, 40 replications per cell.
const SCENARIO: &str = r#"name = "netem-effective"
seed = 2018
replications = 40
[network]
preset = "nbiot"
buffer_bytes = 2500
error_model = ["netem-state", "netem-gemodel"]
loss = ["medium", "high"]
[protocol]
cc_preset = "fasor18"
max_retransmit = 20
[[flows]]
count = 10
cc = "default"
workload = "continuous"
exchanges = 50
"#;

#[test]
fn netem_profiles_deliver_their_average_loss_to_flows() {
    let tmp = tempfile::tempdir().unwrap();
    let scenario = Scenario::parse(SCENARIO, "netem.toml").unwrap();
    let plan = scenario.plan(None, None);
    let manifest = Manifest::new(&plan);
    let dir = ResultsDir::open(tmp.path(), &manifest, false).unwrap();
    let out = execute(&plan, &dir, manifest, 2, run_one, &mut |_: &Progress| {}).unwrap();
    assert_eq!((out.ok, out.failed), (160, 0));
    let text = std::fs::read_to_string(tmp.path().join("runs.csv")).unwrap();
    let mut lines = text.lines();
    let header: Vec<&str> = lines.next().unwrap().split(',').collect();
    let col = |name: &str| header.iter().position(|h| *h == name).unwrap();
    let (model, loss) = (col("error_model"), col("loss"));
    let counts = [
        col("down_link_error_drops"),
        col("up_link_error_drops"),
        col("down_sent_packets"),
        col("up_sent_packets"),
    ];
    let mut cells: std::collections::BTreeMap<(String, String), [u64; 4]> = Default::default();
    for line in lines {
        let f: Vec<&str> = line.split(',').collect();
        let cell = cells.entry((f[model].into(), f[loss].into())).or_default();
        for (sum, &c) in cell.iter_mut().zip(&counts) {
            *sum += f[c].parse::<u64>().unwrap();
        }
    }
    assert_eq!(cells.len(), 4);
    for ((model, loss), [down_lost, up_lost, down_sent, up_sent]) in cells {
        let rate = (down_lost + up_lost) as f64 / (down_sent + up_sent) as f64;
        let nominal = if loss == "medium" { 0.10 } else { 0.18 };
        // ~47,000 packets per medium cell, ~54,000 per high, in bursts of 10: one standard
        // error from the run-to-run spread is 0.35–0.5 % (docs/scenarios.md measured 0.16–0.23 %
        // over 200 replications); bound 1.5 %, three to four of them. The time-based chain
        // delivers 8.05 % and 13.91 % on these cells, outside the bound.
        assert!(
            (rate - nominal).abs() < 0.015,
            "{model} {loss}: {rate} lost per packet sent"
        );
        eprintln!("{model} {loss}: {:.2} % lost per packet sent", rate * 100.0);
    }
}
