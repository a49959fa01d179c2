//! `[topology] server = "off-mesh"`: a mesh whose server sits behind the border router on
//! the wired link of `[network]` runs end to end with one replication; a bad value is named.

use coaplab_lab::exec::{execute, Progress};
use coaplab_lab::results::{Manifest, ResultsDir};
use coaplab_lab::scenario::Scenario;
use coaplab_lab::sim::run_one;

const SCENARIO: &str = r#"name = "off-mesh"
max_sim_time_s = 60
[topology]
kind = "mesh"
shape = "chain"
nodes = 3
server = "off-mesh"
[network]
preset = "zigbee"
rate_bps = 100000
delay_ms = 10
rest_delay_ms = 0
[[flows]]
count = "all"
cc = ["default", "cocoa"]
exchanges = 5
"#;

#[test]
fn an_off_mesh_server_runs_with_one_replication() {
    let s = Scenario::parse(SCENARIO, "off-mesh.toml").unwrap();
    let tmp = tempfile::tempdir().unwrap();
    let plan = s.plan(Some(1), None);
    let manifest = Manifest::new(&plan);
    let dir = ResultsDir::open(tmp.path(), &manifest, false).unwrap();
    let out = execute(&plan, &dir, manifest, 1, run_one, &mut |_: &Progress| {}).unwrap();
    assert_eq!((out.ok, out.failed), (2, 0));
    let manifest = std::fs::read_to_string(tmp.path().join("manifest.json")).unwrap();
    assert!(manifest.contains("\"server\": \"off-mesh\""));
    for spec in s.expand(Some(1), None) {
        let r = run_one(&spec).unwrap();
        // Both clients (the chain's nodes 1 and 2) finish their exchanges over the mesh and
        // the wired link; the server is on no node.
        assert_eq!(r.flows.len(), 2, "{}", spec.run);
        for f in &r.flows {
            assert!(f.completed, "{}", spec.run);
            assert_eq!((f.exchanges, f.failed_exchanges), (5, 0), "{}", spec.run);
            assert_eq!(f.mesh.as_ref().unwrap().server_node, None);
        }
        // The same seed, the same run.
        assert_eq!(r.flows, run_one(&spec).unwrap().flows);
    }
}

#[test]
fn a_bad_server_value_is_named() {
    let text = SCENARIO.replace("\"off-mesh\"", "\"offmesh\"");
    let e = Scenario::parse(&text, "off-mesh.toml")
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("topology.server") && e.contains("off-mesh"),
        "{e}"
    );
}
