//! Every file in scenarios/ parses, and the published matrices expand to their cell counts.

use std::path::PathBuf;

use crate::scenarios_dir;
use coaplab_cc::time::Duration;
use coaplab_lab::scenario::{RunConfig, Scenario, Topology};
use coaplab_netsim::mesh::Routing;

/// A mesh run's fixed RPL warm-up (`[topology] warm_up_s`); `None`: start once formed.
fn fixed_warm_up(config: &RunConfig) -> Option<Duration> {
    match &config.topology {
        Topology::Mesh(m) => match m.params.routing {
            Routing::Rpl { warmup, .. } => warmup,
            Routing::Static => None,
        },
        _ => None,
    }
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
    // docs/experiments.md §8b: 150 cells x 20 error-free, 20 cells x 40 with link errors.
    assert_eq!(cells_and_runs("fasor-globecom18.toml"), (150, 3000));
    assert_eq!(cells_and_runs("fasor-globecom18-errors.toml"), (20, 800));
    // docs/experiments.md §8a: 4 buffers x 4 profiles x 2 client counts x 4 stacks (default, cocoa,
    // tcp-newreno, tcp-bbr).
    assert_eq!(cells_and_runs("pesola-long-lived.toml"), (128, 2560));
    // docs/experiments.md §8c: 5 x (3 x 4 + 2 x 3) = 90 cells: simple 40, mixed 20, competing 30.
    assert_eq!(cells_and_runs("kojo-zigbee-simple.toml"), (40, 800));
    assert_eq!(cells_and_runs("kojo-zigbee-mixed.toml"), (20, 400));
    assert_eq!(cells_and_runs("kojo-zigbee-competing.toml"), (30, 600));
    assert_eq!(cells_and_runs("pesola-calibration.toml"), (2, 40));
    // docs/experiments.md §8d: 5 x 3 x 2 x 3 error-free cells x 20; 2 x 2 x 3 with link errors
    // x 40.
    assert_eq!(cells_and_runs("pesola-short-tcp-vs-udp.toml"), (90, 1800));
    assert_eq!(
        cells_and_runs("pesola-short-tcp-vs-udp-errors.toml"),
        (12, 480)
    );
    // docs/experiments.md §8f: Ch. 3 and 5, 4 algorithms x 5; Ch. 4, 2 x 5; Ch. 6 static, 4
    // topologies x 2 algorithms x 5 loads x 30.
    assert_eq!(cells_and_runs("rathod-ch3-grid.toml"), (4, 20));
    assert_eq!(cells_and_runs("rathod-ch4-half-dumbbell.toml"), (2, 10));
    assert_eq!(cells_and_runs("rathod-ch5-grid.toml"), (4, 20));
    assert_eq!(cells_and_runs("rathod-ch6-static.toml"), (40, 1200));
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
fn every_rathod_mesh_scenario_runs_with_one_replication() {
    // Every scenarios/rathod-*.toml, each cell once (`coaplab run --reps 1`), with the
    // simulated time cut to 60 s by the override `coaplab run --set max_sim_time_s=60` uses,
    // so that the whole set stays within seconds in a debug build (the full files: release
    // timings in docs/BENCHMARKS.md, "Mesh").
    const SIM_S: f64 = 60.0;
    let mut files: Vec<PathBuf> = std::fs::read_dir(scenarios_dir())
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| {
            let name = p.file_name().and_then(|n| n.to_str()).unwrap_or("");
            name.starts_with("rathod-") && name.ends_with(".toml")
        })
        .collect();
    files.sort();
    assert!(files.len() >= 4, "{files:?}");
    let cut = [format!("max_sim_time_s={SIM_S}")];
    for path in &files {
        let name = path.file_name().unwrap().to_string_lossy().to_string();
        let s = Scenario::load_with(path, &cut).unwrap_or_else(|e| panic!("{e}"));
        for spec in s.expand(Some(1), None) {
            assert!(spec.config.is_mesh(), "{name}");
            let result = coaplab_lab::sim::run_one(&spec)
                .unwrap_or_else(|e| panic!("{name} run {}: {e}", spec.run));
            assert_eq!(result.flows.len() as u32, spec.config.total_flows());
            assert!(
                result.sim_time_s > SIM_S / 2.0 && result.sim_time_s <= SIM_S,
                "{name}: {}",
                result.sim_time_s
            );
            for f in &result.flows {
                let m = f.mesh.as_ref().expect("mesh runs keep the mesh metrics");
                // Every request is an original copy, and at most one starts per interval.
                assert_eq!(m.requests, f.transmissions - f.retransmissions, "{name}");
                assert!(
                    m.requests > 0 && m.requests <= 2 * SIM_S as u64 * 10,
                    "{name}"
                );
                assert!(
                    m.coap_pdr.is_some_and(|p| (0.0..=1.0).contains(&p)),
                    "{name}"
                );
            }
            let net = result.network.unwrap();
            // RPL (the mesh default) ran before the clients started and its control traffic is
            // counted; without a fixed warm_up_s the clients start at the formation instant
            // (Ch. 3-5), with one (Ch. 6: 50 % ratios) after exactly that long, formed or not.
            let rpl = net.rpl.expect("routing defaults to rpl");
            match fixed_warm_up(&spec.config) {
                Some(w) => assert_eq!(rpl.warm_up_s, w.as_secs_f64(), "{name}"),
                None => assert_eq!(rpl.formed_after_s, Some(rpl.warm_up_s), "{name}"),
            }
            assert!(rpl.warm_up.dio_frames > 0, "{name}");
            let channel = net.mesh.expect("mesh runs count the channel");
            assert!(net.up.offered_packets > 0, "{name}");
            assert!(channel.frames_on_air >= channel.data_frames + channel.ack_frames);
            assert!(channel.data_frames_acked <= channel.data_frames);
        }
    }
    // Ch. 6: one flow per client node of each shape (`count = "all"`): the 6x6 grid's 33 (two
    // servers), the flower's 34, the dumbbell's 19 and the chain's 18 (docs/experiments.md §8f).
    let ch6 = Scenario::load(&scenarios_dir().join("rathod-ch6-static.toml")).unwrap();
    assert_eq!(ch6.combinations(), 40);
    assert_eq!(ch6.expand(None, None).len(), 1200);
    let counts: Vec<u32> = (0..4)
        .map(|shape| ch6.config(shape * 10).unwrap().total_flows())
        .collect();
    assert_eq!(counts, [33, 34, 19, 18]);
    // One seed, one result: the mesh's draws come from the run's named streams.
    let s = Scenario::load_with(&scenarios_dir().join("rathod-ch3-grid.toml"), &cut).unwrap();
    let runs = s.expand(Some(1), None);
    let once = coaplab_lab::sim::run_one(&runs[0]).unwrap();
    let twice = coaplab_lab::sim::run_one(&runs[0]).unwrap();
    assert_eq!(once, twice);
    // A traced run is the same run (before the fix it ran on the star: no mesh records).
    let (traced, _) = coaplab_lab::sim::run_traced(&runs[0]).unwrap();
    assert_eq!(traced, once);
}

#[test]
fn the_mesh_tcp_vs_udp_scenario_runs_with_one_replication() {
    // scenarios/mesh-tcp-vs-udp.toml, every cell but the 6x6 grid's once (`coaplab run --reps
    // 1`; the 6x6 grid is the same code with more nodes), simulated time cut to 60 s as for
    // the Rathod files above: ~10 s in a debug build.
    let path = scenarios_dir().join("mesh-tcp-vs-udp.toml");
    let s = Scenario::load(&path).unwrap_or_else(|e| panic!("{e}"));
    // 2 sizes x 2 shapes x 2 spacings x 5 cc x 3 MSS.
    assert_eq!(s.combinations(), 120);
    let s = Scenario::load_with(&path, &["max_sim_time_s=60".to_string()]).unwrap();
    let mut ran = 0;
    for spec in s.expand(Some(1), None) {
        let (nodes, one_hop) = match &spec.config.topology {
            Topology::Mesh(m) => (m.layout.nodes.len(), m.layout.nodes.len() == 3),
            Topology::Star => panic!("a mesh file"),
        };
        if nodes > 9 {
            continue;
        }
        let flow = &spec.config.flows[0];
        let r =
            coaplab_lab::sim::run_one(&spec).unwrap_or_else(|e| panic!("run {}: {e}", spec.run));
        let done = r.flows.iter().filter(|f| f.completed).count();
        if !flow.transport.is_coap_over_tcp() {
            // CoAP over UDP fetches every object, in every cell.
            assert_eq!(done, r.flows.len(), "run {}", spec.run);
        } else if flow.mss_bytes == Some(1212) {
            // 14-frame segments never fit the 8-frame MAC queue.
            assert_eq!(done, 0, "run {}", spec.run);
        }
        if one_hop && flow.transport.is_coap_over_tcp() {
            // The one-hop chain: TCP delivers with segments that fit the queue.
            assert_eq!(done == 1, flow.mss_bytes != Some(1212), "run {}", spec.run);
        }
        assert!(r.network.unwrap().mesh.is_some());
        ran += 1;
    }
    assert_eq!(ran, 90);
}
