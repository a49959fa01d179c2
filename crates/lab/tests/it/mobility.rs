//! `[mobility]`: the Ch. 6 mobile scenario runs end to end with one replication, and bad
//! `[mobility]` keys and position files fail with the key, the line and the reason.

use crate::scenarios_dir;
use coaplab_lab::exec::{execute, Progress};
use coaplab_lab::results::{Manifest, ResultsDir};
use coaplab_lab::scenario::Scenario;
use coaplab_lab::sim::run_one;

#[test]
fn the_ch6_mobile_scenario_runs_every_model_with_one_replication() {
    // 4 models x 2 algorithms at the lowest load, the first 20 of the 1,080 simulated seconds
    // in this debug-build test (trajectories are generated over the capped run).
    let path = scenarios_dir().join("rathod-ch6-mobile.toml");
    let full = Scenario::load(&path).unwrap();
    assert_eq!(full.combinations(), 40);
    let s = Scenario::load_with(
        &path,
        &[
            "max_sim_time_s=20".to_string(),
            "flows.0.payload_bytes=25".to_string(),
        ],
    )
    .unwrap();
    assert_eq!(s.combinations(), 8);
    let tmp = tempfile::tempdir().unwrap();
    let plan = s.plan(Some(1), None);
    let manifest = Manifest::new(&plan);
    let dir = ResultsDir::open(tmp.path(), &manifest, false).unwrap();
    let out = execute(&plan, &dir, manifest, 1, run_one, &mut |_: &Progress| {}).unwrap();
    assert_eq!((out.ok, out.failed), (8, 0));
    for file in ["flows.csv", "summary.csv", "runs.csv", "manifest.json"] {
        assert!(tmp.path().join(file).exists(), "{file}");
    }
    let flows = std::fs::read_to_string(tmp.path().join("flows.csv")).unwrap();
    // Every flow of every run has its row: completed or counted as not completed.
    assert_eq!(flows.lines().count(), 1 + 8 * 33);
    let manifest = std::fs::read_to_string(tmp.path().join("manifest.json")).unwrap();
    for model in [
        "random-waypoint",
        "gauss-markov",
        "pursue",
        "manhattan-grid",
    ] {
        assert!(
            manifest.contains(&format!("\"model\": \"{model}\"")),
            "{model}"
        );
    }
    // One seed gives one result, and movement changes it (the same run with nobody moving).
    // (Few datagrams arrive: every grid link sits at exactly the 10-m range, so the corner
    // server loses its two client neighbours as soon as they move; docs/mesh-model.md.)
    let runs = s.expand(Some(1), None);
    for spec in runs.iter().step_by(2) {
        let r = run_one(spec).unwrap();
        let net = r.network.unwrap();
        assert!(net.up.offered_packets > 0, "{}", spec.run);
        let again = run_one(spec).unwrap();
        assert_eq!((&r.flows, &r.network), (&again.flows, &again.network));
        let mut still = spec.clone();
        still.config.mobility = None;
        let s = run_one(&still).unwrap();
        assert_ne!(r.network, s.network, "{}", spec.run);
    }
}

fn parse_err(mobility: &str) -> String {
    let text = format!(
        "name = \"m\"\n[topology]\nkind = \"mesh\"\nrows = 6\ncols = 6\n[mobility]\n{mobility}\n[[flows]]\ncount = 2\ncc = \"cocoa\"\nexchanges = 5\n"
    );
    match Scenario::parse(&text, "m.toml") {
        Ok(_) => panic!("accepted: {mobility}"),
        Err(e) => e.to_string(),
    }
}

#[test]
fn bad_mobility_keys_are_named() {
    let e = parse_err("model = \"random-waypoint\"\nalpha = 0.5");
    assert!(e.contains("mobility.alpha") && e.contains(":8:"), "{e}");
    let e = parse_err("min_speed = 1");
    assert!(e.contains("mobility.min_speed"), "{e}");
    let e = parse_err("model = \"walk\"");
    assert!(
        e.contains("mobility.model") && e.contains("random-waypoint"),
        "{e}"
    );
    let e = parse_err("model = \"pursue\"\naggressiveness = 2");
    assert!(
        e.contains("mobility.aggressiveness") && e.contains(":8:"),
        "{e}"
    );
    let e = parse_err("model = \"random-waypoint\"\nmin_speed = 3");
    assert!(
        e.contains("mobility.min_speed") && e.contains("max_speed"),
        "{e}"
    );
    let e = parse_err("model = \"random-waypoint\"\nroles = [\"border-router\"]");
    assert!(
        e.contains("mobility.roles") && e.contains("border router"),
        "{e}"
    );
    let e = parse_err("model = \"gauss-markov\"\nfile = \"x.movements\"");
    assert!(
        e.contains("mobility.file") && e.contains("only with model"),
        "{e}"
    );
    let e = parse_err("model = \"file\"");
    assert!(e.contains("mobility.file"), "{e}");
    // A street grid whose streets miss the clients' places.
    let e = parse_err("model = \"manhattan-grid\"\nx_blocks = 3\ny_blocks = 3");
    assert!(e.contains("on no street"), "{e}");
    // [mobility] needs a mesh.
    let star = "name = \"s\"\n[mobility]\nmodel = \"pursue\"\n[[flows]]\ncount = 1\ncc = \"cocoa\"\nexchanges = 5\n";
    let e = Scenario::parse(star, "s.toml").unwrap_err().to_string();
    assert!(e.contains("mobility") && e.contains("mesh"), "{e}");
}

#[test]
fn position_files_are_read_relative_to_the_scenario_and_checked() {
    let tmp = tempfile::tempdir().unwrap();
    // 3×3 grid: client 0 is node 0 at (0, 0); it walks to (10, 0) (next to the server's
    // column) and back, in Cooja's format.
    std::fs::write(
        tmp.path().join("walk.dat"),
        "# node time x y\n0 0 0 0\n0 5 5 0\n0 10 0 0\n",
    )
    .unwrap();
    std::fs::write(tmp.path().join("bad.movements"), "0 0 0 1 2 y\n").unwrap();
    let scenario = |file: &str, format: &str| {
        format!(
            "name = \"f\"\nmax_sim_time_s = 20\n[topology]\nkind = \"mesh\"\n[mobility]\nmodel = \"file\"\nfile = \"{file}\"\nformat = \"{format}\"\n[[flows]]\ncount = 1\ncc = \"cocoa\"\nexchanges = 5\n"
        )
    };
    let path = tmp.path().join("f.toml");
    std::fs::write(&path, scenario("walk.dat", "cooja")).unwrap();
    let s = Scenario::load(&path).unwrap();
    let r = run_one(&s.expand(Some(1), None)[0]).unwrap();
    assert_eq!(r.flows[0].exchanges, 5);
    std::fs::write(&path, scenario("bad.movements", "bonnmotion")).unwrap();
    let e = Scenario::load(&path).unwrap_err().to_string();
    assert!(
        e.contains("mobility.file") && e.contains("line 1, column 11: 'y' is not a number"),
        "{e}"
    );
    std::fs::write(&path, scenario("missing.movements", "bonnmotion")).unwrap();
    let e = Scenario::load(&path).unwrap_err().to_string();
    assert!(e.contains("cannot read"), "{e}");
}
