//! Every file in scenarios/ parses, and the published matrices expand to their cell counts.

use std::path::PathBuf;

use coaplab_lab::scenario::Scenario;

fn scenarios_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../scenarios")
}

#[test]
fn every_ready_scenario_parses_and_names_its_source() {
    let mut count = 0;
    for entry in std::fs::read_dir(scenarios_dir()).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().and_then(|e| e.to_str()) != Some("toml") {
            continue;
        }
        let s = Scenario::load(&path).unwrap_or_else(|e| panic!("{e}"));
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(
            text.starts_with('#'),
            "{}: header comment first",
            path.display()
        );
        assert!(
            text.contains("source") || text.contains("Quick start"),
            "{}",
            path.display()
        );
        assert!(!s.expand(None, None).is_empty());
        count += 1;
    }
    assert!(count >= 8, "{count} scenarios");
}

fn cells_and_runs(name: &str) -> (usize, usize) {
    let s = Scenario::load(&scenarios_dir().join(name)).unwrap();
    (s.combinations(), s.expand(None, None).len())
}

#[test]
fn the_published_matrices_have_their_cell_counts() {
    // spec §8b: 150 cells x 20 error-free, 20 cells x 40 with link errors.
    assert_eq!(cells_and_runs("fasor-globecom18.toml"), (150, 3000));
    assert_eq!(cells_and_runs("fasor-globecom18-errors.toml"), (20, 800));
    // spec §8a: 4 buffers x 4 profiles x 2 client counts x 4 stacks (default, cocoa,
    // tcp-newreno, tcp-bbr).
    assert_eq!(cells_and_runs("pesola-long-lived.toml"), (128, 2560));
    // spec §8c: 5 x (3 x 4 + 2 x 3) = 90 cells: simple 40, mixed 20, competing 30.
    assert_eq!(cells_and_runs("kojo-zigbee-simple.toml"), (40, 800));
    assert_eq!(cells_and_runs("kojo-zigbee-mixed.toml"), (20, 400));
    assert_eq!(cells_and_runs("kojo-zigbee-competing.toml"), (30, 600));
    assert_eq!(cells_and_runs("pesola-calibration.toml"), (2, 40));
    // spec §8d: 5 x 3 x 2 x 3 error-free cells x 20; 2 x 2 x 3 with link errors x 40.
    assert_eq!(cells_and_runs("pesola-short-tcp-vs-udp.toml"), (90, 1800));
    assert_eq!(
        cells_and_runs("pesola-short-tcp-vs-udp-errors.toml"),
        (12, 480)
    );
}

#[test]
fn the_short_tcp_vs_udp_matrices_run_with_one_replication() {
    // Every cell of the link-error file, and the 10-client cells of the error-free one (the
    // others are the same code at more clients; `coaplab run --reps 1` runs all 90 in
    // seconds in a release build).
    for (name, max_clients, cells) in [
        ("pesola-short-tcp-vs-udp-errors.toml", u32::MAX, 12),
        ("pesola-short-tcp-vs-udp.toml", 10, 18),
    ] {
        let s = Scenario::load(&scenarios_dir().join(name)).unwrap();
        let runs = s.expand(Some(1), None);
        let mut ran = 0;
        for spec in runs
            .iter()
            .filter(|r| r.config.total_flows() <= max_clients)
        {
            let result = coaplab_lab::sim::run_one(spec).unwrap_or_else(|e| panic!("{name}: {e}"));
            assert!(
                result
                    .flows
                    .iter()
                    .all(|f| f.completed && f.exchanges == 50),
                "{name}: {:?}",
                result.flows
            );
            ran += 1;
        }
        assert_eq!(ran, cells, "{name}");
    }
}

#[test]
fn the_rathod_mesh_scenarios_run_with_one_replication() {
    // Ch. 3 on the 3×3 grid, every algorithm, a request every 100 ms: the first 150 of the
    // 600 simulated seconds in this debug-build test (`coaplab run --reps 1` runs the whole
    // file in about half a second in a release build, docs/BENCHMARKS.md).
    let s = Scenario::load(&scenarios_dir().join("rathod-ch3-grid.toml")).unwrap();
    assert_eq!(s.combinations(), 4);
    let mut runs = s.expand(Some(1), None);
    for spec in &mut runs {
        spec.config.max_sim_time = coaplab_cc::time::Duration::from_secs(150);
        let result = coaplab_lab::sim::run_one(spec).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(result.flows.len(), 7);
        assert!(result.sim_time_s > 149.0, "{}", result.sim_time_s);
        // At most one request per 100 ms and flow, and a good share of them answered. Under
        // RPL the whole load may cross one relay beside the server (the parent the server
        // happened to join through), whose own client then stalls in CoAP's backoff: seed
        // 2022's default-fb2 cell answers 1,516 in these 150 s.
        let exchanges: u64 = result.flows.iter().map(|f| u64::from(f.exchanges)).sum();
        assert!(
            (1_000..=7 * 1_500).contains(&exchanges),
            "{}: {exchanges}",
            spec.run
        );
        let net = result.network.unwrap();
        assert!(net.up.sent_packets > 0 && net.down.sent_packets > 0);
        // RPL formed before the clients started, and its control traffic is counted.
        let rpl = net.rpl.expect("routing = \"rpl\"");
        assert_eq!(rpl.formed_after_s, Some(rpl.warm_up_s));
        assert!(rpl.warm_up.dio_frames > 0 && rpl.measured.dao_frames > 0);
    }
    // One seed, one result: the mesh's draws come from the run's named streams.
    let once = coaplab_lab::sim::run_one(&runs[0]).unwrap();
    let twice = coaplab_lab::sim::run_one(&runs[0]).unwrap();
    assert_eq!(once.flows, twice.flows);
    assert_eq!(once.network, twice.network);
}
