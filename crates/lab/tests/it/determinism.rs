//! A run is a pure function of (scenario, seed): the results files do not depend on the number
//! of threads or on the order runs finish in.

use coaplab_lab::exec::{execute, Progress};
use coaplab_lab::results::{Manifest, ResultsDir};
use coaplab_lab::scenario::Scenario;
use coaplab_lab::sim::run_one;

const SCENARIO: &str = r#"name = "det"
seed = 11
replications = 3
[network]
buffer_bytes = [2500, 28200]
loss = "medium"
[protocol]
cc_preset = "fasor18"
[[flows]]
count = 8
cc = ["default", "fasor-token"]
workload = "random"
exchanges = 10
"#;

fn results(jobs: usize) -> (String, String) {
    let tmp = tempfile::tempdir().unwrap();
    let scenario = Scenario::parse(SCENARIO, "det.toml").unwrap();
    let plan = scenario.plan(None, None);
    let manifest = Manifest::new(&plan);
    let dir = ResultsDir::open(tmp.path(), &manifest, false).unwrap();
    let out = execute(&plan, &dir, manifest, jobs, run_one, &mut |_: &Progress| {}).unwrap();
    assert_eq!((out.ok, out.failed), (12, 0));
    let read = |f: &str| std::fs::read_to_string(tmp.path().join(f)).unwrap();
    (read("flows.csv"), read("summary.csv"))
}

#[test]
fn results_are_byte_identical_whatever_the_parallelism() {
    let one = results(1);
    let three = results(3);
    assert_eq!(one, three);
    assert_eq!(one.0.lines().count(), 1 + 12 * 8);
}
