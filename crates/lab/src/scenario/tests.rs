use coaplab_cc::time::Duration;
use coaplab_netsim::{CtmcParams, GeParams, JitterMode, LossModel};

use super::*;

/// The issue's example, as written.
const ISSUE_EXAMPLE: &str = r#"name = "fasor-400-infinite"
seed = 1
replications = 20
[network]
preset = "nbiot"            # nbiot | zigbee; every preset value can be overridden:
buffer_bytes = 1410000      # both bottleneck queues; down_buffer_bytes / up_buffer_bytes override one side
loss = "none"               # none | low | medium | high, or a table { model = "gilbert-elliott", p = .., r = .., loss_good = .., loss_bad = .. }
# down_rate_bps, up_rate_bps, down_delay_ms, up_delay_ms, mtu, overhead_bytes, rest_delay_ms, rest_jitter_ms
[protocol]
max_retransmit = 20
nstart = 1
[[flows]]
count = 400
cc = "fasor"                # a registry name; [flows.params] sets algorithm parameters
workload = "continuous"     # continuous | random | long-transfer
exchanges = 50              # continuous and random
# batch_min = 1, batch_max = 10 (random); object_bytes = 102400, block_bytes = 256 (long-transfer); payload_bytes; start_jitter_s
"#;

fn parse(text: &str) -> Result<Scenario, ScenarioError> {
    Scenario::parse(text, "t.toml")
}

#[test]
fn the_issue_example_parses_as_written() {
    let s = parse(ISSUE_EXAMPLE).unwrap();
    assert_eq!(
        (s.name.as_str(), s.seed, s.replications),
        ("fasor-400-infinite", 1, 20)
    );
    assert!(s.axes.is_empty());
    let c = s.config(0).unwrap();
    assert_eq!(c.network.down.buffer_bytes, 1_410_000);
    assert_eq!(c.network.up.buffer_bytes, 1_410_000);
    assert_eq!(c.network.down.rate_bps, 30_000);
    assert_eq!(c.network.up.rate_bps, 60_000);
    assert_eq!(c.network.down.propagation.delay, Duration::from_millis(400));
    assert_eq!(c.network.rest_up.delay, Duration::from_millis(15));
    assert_eq!(
        (c.network.mtu_bytes, c.network.down.overhead_bytes),
        (296, 0)
    );
    assert_eq!(c.network.down.loss, LossModel::None);
    assert_eq!(c.protocol.max_retransmit, Some(20));
    assert_eq!(c.protocol.nstart, 1);
    assert_eq!(c.flows.len(), 1);
    let f = &c.flows[0];
    assert_eq!((f.count, f.cc()), (400, "fasor"));
    assert_eq!(f.workload, Workload::Continuous { exchanges: 50 });
    assert_eq!(f.settings.get("max_retransmit"), Some("20"));
    assert_eq!(f.start_jitter, Duration::from_secs(1));
    assert_eq!(
        (f.request_payload_bytes, f.response_payload_bytes),
        (51, 53)
    );
    assert_eq!(c.max_sim_time, Duration::from_secs(6 * 3600));
    assert_eq!(s.expand(None, None).len(), 20);
}

#[test]
fn protocol_keys_are_accepted_after_network_and_at_top_level() {
    let text = ISSUE_EXAMPLE.replace("[protocol]\n", "");
    let c = parse(&text).unwrap().config(0).unwrap();
    assert_eq!(
        (c.protocol.max_retransmit, c.protocol.nstart),
        (Some(20), 1)
    );
    let text = "name = \"x\"\nmax_retransmit = 4\nnstart = 2\n[[flows]]\ncc = \"default\"\n";
    let c = parse(text).unwrap().config(0).unwrap();
    assert_eq!((c.protocol.max_retransmit, c.protocol.nstart), (Some(4), 2));
    let twice = "name = \"x\"\nmax_retransmit = 4\n[protocol]\nmax_retransmit = 5\n\
                 [[flows]]\ncc = \"default\"\n";
    let e = parse(twice).unwrap_err();
    assert_eq!((e.line(), e.key()), (4, Some("protocol.max_retransmit")));
}

#[test]
fn an_unknown_key_names_the_key_the_line_and_the_allowed_keys() {
    let text = ISSUE_EXAMPLE.replace("buffer_bytes = 1410000", "bufer_bytes = 1410000");
    let e = parse(&text).unwrap_err();
    assert_eq!((e.line(), e.key()), (6, Some("network.bufer_bytes")));
    let msg = e.to_string();
    assert!(msg.starts_with("t.toml:6: unknown key 'network.bufer_bytes'; allowed here: preset, "));
    assert!(msg.contains("down_buffer_bytes"), "{msg}");
}

#[test]
fn a_bad_value_names_the_key_the_line_and_the_allowed_values() {
    let text = ISSUE_EXAMPLE.replace("workload = \"continuous\"", "workload = \"bulk\"");
    let e = parse(&text).unwrap_err();
    assert_eq!(
        e.to_string(),
        "t.toml:15: bad value \"bulk\" for 'flows[0].workload': expected one of continuous, \
         random, long-transfer, observe"
    );
    let text = ISSUE_EXAMPLE.replace("loss = \"none\"", "loss = \"severe\"");
    let e = parse(&text).unwrap_err();
    assert_eq!((e.line(), e.key()), (7, Some("network.loss")));
    let text = ISSUE_EXAMPLE.replace("cc = \"fasor\"", "cc = \"fasr\"");
    let e = parse(&text).unwrap_err();
    assert_eq!((e.line(), e.key()), (14, Some("flows[0].cc")));
    assert!(
        e.to_string()
            .contains("expected one of default, default-fb1"),
        "{e}"
    );
}

#[test]
fn a_bad_element_of_a_sweep_list_names_its_own_line() {
    let text = "name = \"x\"\n[network]\nbuffer_bytes = [\n  2500,\n  -1,\n]\n\
                [[flows]]\ncc = \"default\"\n";
    let e = parse(text).unwrap_err();
    assert_eq!(
        e.to_string(),
        "t.toml:5: bad value -1 for 'network.buffer_bytes': expected an integer in [1, \
         1099511627776]"
    );
}

#[test]
fn algorithm_parameters_are_checked_against_the_registry_with_their_line() {
    let text = "name = \"x\"\n[[flows]]\ncc = \"fasor\"\n[flows.params]\n\
                ack_random_factor = 1.5\nack_timeout = 3\n";
    let e = parse(text).unwrap_err();
    assert_eq!(
        (e.line(), e.key()),
        (6, Some("flows[0].params.ack_timeout"))
    );
    assert!(e
        .to_string()
        .contains("unknown parameter 'ack_timeout' for algorithm 'fasor'"));
    // Every value of a swept parameter is checked, including the ones not used first.
    let text = "name = \"x\"\n[[flows]]\ncc = \"default\"\n[flows.params]\n\
                ack_timeout_s = [2, 0]\n";
    let e = parse(text).unwrap_err();
    assert_eq!(
        (e.line(), e.key()),
        (5, Some("flows[0].params.ack_timeout_s"))
    );
}

#[test]
fn batch_bounds_are_checked_together() {
    let text = "name = \"x\"\n[[flows]]\ncc = \"default\"\nworkload = \"random\"\n\
                batch_min = 5\nbatch_max = 2\n";
    let e = parse(text).unwrap_err();
    assert_eq!((e.line(), e.key()), (6, Some("flows[0].batch_max")));
}

#[test]
fn syntax_errors_and_missing_keys_have_lines() {
    let e = parse("name = \"x\"\n[network\n").unwrap_err();
    assert_eq!(e.line(), 2);
    let e = parse("name = \"x\"\n").unwrap_err();
    assert_eq!(e.key(), Some("flows"));
    let e = parse("name = \"x\"\n[[flows]]\ncount = 3\n").unwrap_err();
    assert_eq!((e.line(), e.key()), (2, Some("flows[0].cc")));
}

const MATRIX: &str = r#"name = "m"
seed = 7
replications = 20
[network]
buffer_bytes = [2500, 28200, 1410000]
[protocol]
max_retransmit = 20
cc_preset = "fasor18"
[[flows]]
count = [10, 50, 100, 200, 400]
cc = ["default", "cocoa", "cocoa-fb1", "fasor", "fasor-token"]
workload = ["continuous", "random"]
"#;

#[test]
fn sweeps_expand_to_the_cartesian_product_times_replications() {
    let s = parse(MATRIX).unwrap();
    let keys: Vec<&str> = s.axes.iter().map(|a| a.key.as_str()).collect();
    assert_eq!(
        keys,
        [
            "network.buffer_bytes",
            "flows[0].count",
            "flows[0].cc",
            "flows[0].workload"
        ]
    );
    let columns: Vec<&str> = s.axes.iter().map(|a| a.column.as_str()).collect();
    assert_eq!(columns, ["buffer_bytes", "count", "cc", "workload"]);
    assert_eq!(s.axes[0].line, 5);
    assert_eq!(s.combinations(), 150);
    let runs = s.expand(None, None);
    assert_eq!(runs.len(), 3000);
    assert_eq!(s.expand(Some(2), None).len(), 300);
    // The last axis varies fastest; replications innermost.
    let r = &runs[20 * 3 + 1];
    assert_eq!((r.run, r.combination, r.replication), (61, 3, 1));
    assert_eq!(
        r.sweep,
        [
            ("buffer_bytes".to_string(), "2500".to_string()),
            ("count".to_string(), "10".to_string()),
            ("cc".to_string(), "cocoa".to_string()),
            ("workload".to_string(), "random".to_string()),
        ]
    );
    assert_eq!(r.config.flows[0].cc(), "cocoa");
    assert_eq!(r.config.flows[0].settings.get("preset"), Some("fasor18"));
    assert_eq!(
        r.config.flows[0].workload,
        Workload::Random {
            exchanges: 50,
            batch_min: 1,
            batch_max: 10
        }
    );
}

#[test]
fn seeds_are_stable_and_shared_across_algorithms() {
    let s = parse(MATRIX).unwrap();
    let runs = s.expand(None, None);
    // Pinned: a change here changes every published result of every scenario.
    assert_eq!(runs[0].seed, 6_492_822_026_630_330_906);
    // Same network, flows, workload and replication: same seed whatever the algorithm.
    let same: Vec<u64> = (0..5).map(|cc| runs[(cc * 2) * 20 + 3].seed).collect();
    assert!(same.iter().all(|&x| x == same[0]), "{same:?}");
    // Different replications and different workloads differ.
    assert_ne!(runs[0].seed, runs[1].seed);
    assert_ne!(runs[0].seed, runs[20].seed);
    // The seed follows the values, not the position: another scenario listing the buffers in
    // another order gives the 2500-B runs the same seeds.
    let reordered = MATRIX.replace("[2500, 28200, 1410000]", "[1410000, 2500]");
    let other = parse(&reordered).unwrap().expand(None, None);
    assert_eq!(other[50 * 20].sweep[0].1, "2500");
    assert_eq!(other[50 * 20].seed, runs[0].seed);
    // --seed changes everything.
    assert_ne!(s.expand(None, Some(8))[0].seed, runs[0].seed);
}

#[test]
fn loss_profiles_tables_and_sweeps() {
    let text = "name = \"x\"\n[network]\npreset = \"zigbee\"\nerror_model = \"gilbert-elliott\"\n\
                loss = [\"none\", \"medium\", { model = \"bernoulli\", p = 0.1 }]\n\
                [[flows]]\ncc = \"default\"\n";
    let s = parse(text).unwrap();
    assert_eq!(
        s.axes[0].values,
        ["none", "medium", "{ model = \"bernoulli\", p = 0.1 }"]
    );
    let c = s.config(1).unwrap();
    assert_eq!(c.network.mtu_bytes, 128);
    assert_eq!(c.loss_label, "medium");
    // Issue 15: a loss table's label in the results is readable, not inline TOML.
    assert_eq!(s.config(2).unwrap().loss_label, "bernoulli p=0.1");
    assert_eq!(
        c.network.down.loss,
        LossModel::GilbertElliott(GeParams {
            p: 0.025,
            r: 0.1,
            loss_good: 0.0,
            loss_bad: 0.5
        })
    );
    assert_eq!(
        s.config(2).unwrap().network.down.loss,
        LossModel::Bernoulli { p: 0.1 }
    );
    // Profiles are netem's gemodel with the calibrated 1.5-packet bursts by default (issue
    // 29), the time-based chain on request, with its own calibrated 0.2-s bursts or any other.
    let text = "name = \"x\"\n[network]\nloss = \"high\"\n[[flows]]\ncc = \"default\"\n";
    assert_eq!(
        parse(text).unwrap().config(0).unwrap().network.down.loss,
        LossModel::profile_netem_gemodel("high", 1.5).unwrap()
    );
    let text = "name = \"x\"\n[network]\nloss = \"high\"\nerror_model = \"ctmc\"\n\
                [[flows]]\ncc = \"default\"\n";
    assert_eq!(
        parse(text).unwrap().config(0).unwrap().network.down.loss,
        LossModel::Ctmc(CtmcParams {
            good_mean: Duration::from_millis(775),
            burst_mean: Duration::from_millis(200),
            loss_good: 0.02,
            loss_burst: 0.8
        })
    );
    let text = "name = \"x\"\n[network]\nloss = \"high\"\nerror_model = \"ctmc\"\n\
                burst_mean_s = 1\n[[flows]]\ncc = \"default\"\n";
    assert_eq!(
        parse(text).unwrap().config(0).unwrap().network.down.loss,
        LossModel::Ctmc(CtmcParams::HIGH)
    );
    // A burst in the other family's unit names the key and says which family takes it.
    let text = "name = \"x\"\n[network]\nloss = \"high\"\nburst_mean_s = 1\n\
                [[flows]]\ncc = \"default\"\n";
    let e = parse(text).unwrap_err();
    assert_eq!((e.line(), e.key()), (4, Some("network.burst_mean_s")));
    assert!(e.to_string().contains("error_model is ctmc"), "{e}");
    let text = "name = \"x\"\n[network]\nloss = { model = \"ctmc\", p = 1 }\n\
                [[flows]]\ncc = \"default\"\n";
    let e = parse(text).unwrap_err();
    assert_eq!((e.line(), e.key()), (3, Some("network.loss")));
}

#[test]
fn every_preset_value_can_be_overridden() {
    let text = "name = \"x\"\n[network]\ndown_rate_bps = 1000\nup_rate_bps = 2000\n\
                down_delay_ms = 12.4\nup_delay_ms = 1\nmtu = 1280\noverhead_bytes = 14\n\
                buffer_bytes = 100\nup_buffer_bytes = 200\nrest_delay_ms = 15.19\n\
                rest_jitter_ms = 1\nrest_jitter_mode = \"reorder\"\njitter_ms = 0.5\n\
                [[flows]]\ncc = \"default\"\n";
    let n = parse(text).unwrap().config(0).unwrap().network;
    assert_eq!((n.down.rate_bps, n.up.rate_bps), (1000, 2000));
    assert_eq!(n.down.propagation.delay, Duration::from_micros(12_400));
    assert_eq!(n.up.propagation.delay, Duration::from_millis(1));
    assert_eq!((n.mtu_bytes, n.down.overhead_bytes), (1280, 14));
    assert_eq!((n.down.buffer_bytes, n.up.buffer_bytes), (100, 200));
    assert_eq!(n.rest_up.delay, Duration::from_micros(15_190));
    assert_eq!(n.rest_down.jitter, Duration::from_millis(1));
    assert_eq!(n.rest_down.jitter_mode, JitterMode::Reorder);
    assert_eq!(n.up.propagation.jitter, Duration::from_micros(500));
    assert_eq!(n.up.propagation.jitter_mode, JitterMode::Fifo);
    let e = parse(
        "name = \"x\"\n[network]\ndelay_ms = 1\njitter_ms = 2\n[[flows]]\ncc = \"default\"\n",
    )
    .unwrap_err();
    assert_eq!((e.line(), e.key()), (4, Some("network.jitter_ms")));
}

#[test]
fn variables_let_several_keys_follow_one_axis() {
    let text = r#"name = "mixed"
[vars]
cc = ["default", "cocoa"]
half = [5, 20]
[[flows]]
count = "$half"
cc = "$cc"
workload = "continuous"
[[flows]]
count = "$half"
cc = "$cc"
workload = "random"
"#;
    let s = parse(text).unwrap();
    let keys: Vec<&str> = s.axes.iter().map(|a| a.key.as_str()).collect();
    assert_eq!(keys, ["vars.cc", "vars.half"]);
    assert!(s.axes[0].is_algorithm() && !s.axes[1].is_algorithm());
    assert_eq!(s.combinations(), 4);
    let c = s.config(3).unwrap();
    assert_eq!((c.flows[0].count, c.flows[1].count), (20, 20));
    assert_eq!((c.flows[0].cc(), c.flows[1].cc()), ("cocoa", "cocoa"));
    assert_eq!(c.total_flows(), 40);
    let bad = text.replace(
        "count = \"$half\"\ncc = \"$cc\"\nworkload = \"random\"",
        "count = \"$cc\"\ncc = \"$cc\"\nworkload = \"random\"",
    );
    let e = parse(&bad).unwrap_err();
    assert_eq!((e.line(), e.key()), (10, Some("flows[1].count")));
    assert!(
        e.to_string().contains("bad value \"$cc\" (= \"default\")"),
        "{e}"
    );
    let e = parse(&text.replace(
        "cc = \"$cc\"\nworkload = \"random\"",
        "cc = \"$algo\"\nworkload = \"random\"",
    ))
    .unwrap_err();
    assert!(
        e.to_string()
            .contains("a variable defined in [vars] (cc, half)"),
        "{e}"
    );
}

#[test]
fn messages_must_fit_the_mtu() {
    // zigbee: MTU 128. A 128-B block needs 168 B of IP packet.
    let text = "name = \"x\"\n[network]\npreset = \"zigbee\"\n[[flows]]\ncc = \"default\"\n\
                workload = \"long-transfer\"\nblock_bytes = 128\n";
    let e = parse(text).unwrap_err();
    assert_eq!(
        e.to_string(),
        "t.toml:7: bad value 128 for 'flows[0].block_bytes': expected a size whose 168-byte IP \
         packet fits the 128-byte MTU of the network"
    );
    // nbiot: 256-B blocks fit exactly (296 B); the 60-B exchanges fit both presets.
    assert!(parse(
        &text
            .replace("preset = \"zigbee\"", "preset = \"nbiot\"")
            .replace("128\n", "256\n")
    )
    .is_ok());
    let e = parse("name = \"x\"\n[[flows]]\ncc = \"default\"\npayload_bytes = 300\n").unwrap_err();
    assert_eq!((e.line(), e.key()), (4, Some("flows[0].payload_bytes")));
}

#[test]
fn a_plan_is_lazy_and_gives_the_runs_of_the_expansion() {
    let s = parse(MATRIX).unwrap();
    let runs = s.expand(None, None);
    let plan = s.plan(None, None);
    assert_eq!(plan.len(), runs.len());
    for run in [0, 1, 61, 2999] {
        assert_eq!(plan.spec(run), runs[run]);
    }
    // A plan of 150 combinations x a million replications costs nothing until asked for.
    let huge = s.plan(Some(MAX_REPLICATIONS), Some(MAX_SEED));
    assert_eq!(huge.len(), 150_000_000);
    let last = huge.spec(huge.len() - 1);
    assert_eq!(
        (last.run, last.combination, last.replication),
        (149_999_999, 149, 999_999)
    );
    assert_eq!(last.sweep, runs[2999].sweep);
}

#[test]
fn command_line_overrides_have_the_limits_of_the_file() {
    assert_eq!(check_replications("1000000"), Ok(1_000_000));
    assert_eq!(check_seed("9223372036854775807"), Ok(i64::MAX as u64));
    assert_eq!(check_seed("0"), Ok(0));
    for (reps, seed) in [("1000001", "9223372036854775808"), ("0", "-1"), ("x", "x")] {
        let file_error = |key: &str, value: &str| {
            let text = format!("name = \"x\"\n{key} = {value}\n[[flows]]\ncc = \"default\"\n");
            match parse(&text) {
                Err(ScenarioError::BadValue { expected, .. }) => expected,
                other => panic!("{other:?}"),
            }
        };
        let value = |v: &str| {
            if v == "x" {
                "\"x\"".to_string()
            } else {
                v.to_string()
            }
        };
        assert_eq!(
            check_replications(reps),
            Err(file_error("replications", &value(reps)))
        );
        if seed != "9223372036854775808" {
            // (Not an integer TOML can hold.)
            assert_eq!(check_seed(seed), Err(file_error("seed", &value(seed))));
        }
        assert_eq!(
            check_seed(seed),
            Err("an integer in [0, 9223372036854775807]".to_string())
        );
    }
}

#[test]
fn server_duplicates_defaults_to_the_cache_and_takes_reprocess() {
    use coaplab_endpoint::ServerDuplicates;
    let c = parse(ISSUE_EXAMPLE).unwrap().config(0).unwrap();
    assert_eq!(c.protocol.server_duplicates, ServerDuplicates::Cache);
    let text = ISSUE_EXAMPLE.replace(
        "nstart = 1\n",
        "nstart = 1\nserver_duplicates = \"reprocess\"\n",
    );
    let c = parse(&text).unwrap().config(0).unwrap();
    assert_eq!(c.protocol.server_duplicates, ServerDuplicates::Reprocess);
    // A sweep over it is paired like an algorithm sweep: both runs meet the same losses.
    let sweep = ISSUE_EXAMPLE.replace(
        "nstart = 1\n",
        "nstart = 1\nserver_duplicates = [\"cache\", \"reprocess\"]\n",
    );
    let runs = parse(&sweep).unwrap().expand(None, None);
    assert_eq!(runs[0].seed, runs[20].seed);
    assert_eq!(
        runs[20].config.protocol.server_duplicates,
        ServerDuplicates::Reprocess
    );
    let bad = ISSUE_EXAMPLE.replace("nstart = 1\n", "nstart = 1\nserver_duplicates = \"drop\"\n");
    let e = parse(&bad).unwrap_err().to_string();
    assert!(
        e.contains("server_duplicates") && e.contains("cache, reprocess"),
        "{e}"
    );
}

const MESH: &str = r#"name = "m"
[topology]
kind = "mesh"
shape = "grid"
rows = 3
cols = 3
[topology.params]
success_ratio_rx = [1.0, 0.5]
[[flows]]
count = 7
cc = "default"
"#;

#[test]
fn a_mesh_topology_reads_its_shape_roles_and_swept_params() {
    let s = parse(MESH).unwrap();
    assert_eq!(s.combinations(), 2);
    let Topology::Mesh(m) = s.config(1).unwrap().topology else {
        panic!("a mesh")
    };
    assert_eq!(m.layout.nodes.len(), 9);
    assert_eq!(m.params.success_ratio_rx, 0.5);
    assert_eq!(
        parse(ISSUE_EXAMPLE).unwrap().config(0).unwrap().topology,
        Topology::Star
    );
    let explicit = r#"name = "e"
[topology]
kind = "mesh"
shape = "nodes"
[[topology.nodes]]
x_m = 0
y_m = 0
role = "border-router"
[[topology.nodes]]
x_m = 5
y_m = 0
role = "server"
[[topology.nodes]]
x_m = 0
y_m = 5
[[flows]]
count = 1
cc = "default"
"#;
    let Topology::Mesh(m) = parse(explicit).unwrap().config(0).unwrap().topology else {
        panic!("a mesh")
    };
    assert_eq!(m.layout.nodes[2].role, coaplab_netsim::mesh::Role::Client);
}

#[test]
fn mesh_errors_name_the_key_and_line() {
    let e = parse(&MESH.replace("rows = 3", "rowz = 3")).unwrap_err();
    assert!(
        matches!(&e, ScenarioError::UnknownKey { key, line: 5, .. } if key == "topology.rowz"),
        "{e}"
    );
    let e = parse(&MESH.replace("[1.0, 0.5]", "[1.0, 1.5]")).unwrap_err();
    assert!(
        matches!(&e, ScenarioError::BadValue { key, line: 8, .. } if key == "topology.params.success_ratio_rx"),
        "{e}"
    );
    let e = parse(&MESH.replace("success_ratio_rx", "mac_maxbe")).unwrap_err();
    assert!(
        matches!(&e, ScenarioError::UnknownKey { line: 8, .. }),
        "{e}"
    );
    let e = parse(&MESH.replace("count = 7", "count = 8")).unwrap_err();
    assert!(
        matches!(&e, ScenarioError::BadValue { key, line: 2, .. } if key == "flows.count"),
        "{e}"
    );
    // 30-m spacing with a 10-m range: nobody reaches the border router.
    let e = parse(&MESH.replace("cols = 3", "cols = 3\nspacing_m = 30")).unwrap_err();
    assert!(
        e.to_string().contains("no path to the border router"),
        "{e}"
    );
    let e = parse(&MESH.replace("rows = 3", "rows = 3\npetals = 4")).unwrap_err();
    assert!(
        matches!(&e, ScenarioError::BadValue { key, line: 6, .. } if key == "topology.petals"),
        "{e}"
    );
    let e = parse(&MESH.replace("kind = \"mesh\"", "kind = \"star\"")).unwrap_err();
    assert!(e.to_string().contains("only with kind"), "{e}");
}

#[test]
fn mesh_routing_defaults_to_rpl_with_mrhof_and_names_bad_keys() {
    use coaplab_netsim::mesh::rpl::Objective;
    use coaplab_netsim::mesh::Routing;
    let routing = |text: &str| match parse(text).unwrap().config(0).unwrap().topology {
        Topology::Mesh(m) => m.params.routing,
        Topology::Star => panic!("a mesh"),
    };
    assert_eq!(
        routing(MESH),
        Routing::Rpl {
            objective: Objective::Mrhof,
            warmup: None
        }
    );
    let rpl = MESH.replace("cols = 3", "cols = 3\nobjective = \"of0\"\nwarm_up_s = 120");
    assert_eq!(
        routing(&rpl),
        Routing::Rpl {
            objective: Objective::Of0,
            warmup: Some(Duration::from_secs(120))
        }
    );
    let fixed = MESH.replace("cols = 3", "cols = 3\nrouting = \"static\"");
    assert_eq!(routing(&fixed), Routing::Static);
    let e = parse(&MESH.replace("cols = 3", "cols = 3\nrouting = \"aodv\"")).unwrap_err();
    assert!(
        matches!(&e, ScenarioError::BadValue { key, line: 7, .. } if key == "topology.routing"),
        "{e}"
    );
    assert!(e.to_string().contains("rpl, static"), "{e}");
    let e = parse(&MESH.replace("cols = 3", "cols = 3\nobjective = \"etx\"")).unwrap_err();
    assert!(
        matches!(&e, ScenarioError::BadValue { key, .. } if key == "topology.objective"),
        "{e}"
    );
    let e = parse(&MESH.replace("cols = 3", "cols = 3\nwarm_up_s = -1")).unwrap_err();
    assert!(
        matches!(&e, ScenarioError::BadValue { key, .. } if key == "topology.warm_up_s"),
        "{e}"
    );
    let e = parse(&fixed.replace("cols = 3", "cols = 3\nobjective = \"of0\"")).unwrap_err();
    assert!(
        matches!(&e, ScenarioError::BadValue { key, line: 7, .. } if key == "topology.objective"),
        "{e}"
    );
    assert!(e.to_string().contains("only with routing"), "{e}");
    let star = ISSUE_EXAMPLE.replace("[[flows]]", "[topology]\nrouting = \"rpl\"\n[[flows]]");
    assert!(parse(&star)
        .unwrap_err()
        .to_string()
        .contains("only with kind"));
}

#[test]
fn interval_s_is_read_for_continuous_udp_flows_only() {
    let ok = MESH.replace("cc = \"default\"", "cc = \"default\"\ninterval_s = 0.1");
    let c = parse(&ok).unwrap().config(0).unwrap();
    assert_eq!(c.flows[0].interval, Some(Duration::from_millis(100)));
    assert_eq!(
        parse(MESH).unwrap().config(0).unwrap().flows[0].interval,
        None
    );
    let bad = ok.replace(
        "cc = \"default\"",
        "cc = \"default\"\nworkload = \"random\"",
    );
    let e = parse(&bad).unwrap_err();
    assert!(
        matches!(&e, ScenarioError::BadValue { key, line: 13, .. } if key == "flows[0].interval_s"),
        "{e}"
    );
}

/// Issue 15: a swept algorithm parameter named like a metric (`rto_max_s`) gets its own
/// `param.` column instead of being dropped in favour of the metric's column.
#[test]
fn swept_parameters_are_prefixed_and_never_collide_with_metrics() {
    let text = "name = \"x\"\n[[flows]]\ncc = \"cocoa\"\n[flows.params]\n\
                rto_max_s = [30, 60]\n";
    let s = parse(text).unwrap();
    assert_eq!(s.axes[0].column, "param.rto_max_s");
    let sweep = s.plan(Some(1), None).spec(1).sweep;
    assert_eq!(sweep, [("param.rto_max_s".to_string(), "60".to_string())]);
    let header = crate::results::flows::header(&sweep, false);
    assert!(
        header.ends_with(
            ",rto_max_s,coap_rtt_median_s,bytes_up,bytes_down,completed,\
         transmission_counts,setup_s,segments_sent,segments_retransmitted,rto_count,\
         syn_retransmissions,expired_rtos,unfinished,elapsed_s,param.rto_max_s"
        ),
        "{header}"
    );
}

#[test]
fn count_all_takes_the_client_nodes_the_other_tables_leave() {
    let all = MESH.replace("count = 7", "count = \"all\"");
    assert_eq!(parse(&all).unwrap().config(0).unwrap().flows[0].count, 7);
    let two = format!("{all}[[flows]]\ncount = 2\ncc = \"cocoa\"\n");
    let c = parse(&two).unwrap().config(0).unwrap();
    assert_eq!((c.flows[0].count, c.flows[1].count), (5, 2));
    // A shape sweep: each shape reads its own keys (rows/cols only the grid's), and "all"
    // follows the shape: 3x3 grid 7, 20-node chain 18.
    let sweep = all.replace("shape = \"grid\"", "shape = [\"grid\", \"chain\"]");
    let s = parse(&sweep).unwrap();
    let counts: Vec<u32> = (0..4).map(|c| s.config(c).unwrap().total_flows()).collect();
    assert_eq!(counts, [7, 7, 18, 18]);
    let e = parse(&format!(
        "{two}[[flows]]\ncount = \"all\"\ncc = \"cocoa\"\n"
    ))
    .unwrap_err();
    assert!(
        matches!(&e, ScenarioError::BadValue { key, line: 10, .. } if key == "flows[0].count"),
        "{e}"
    );
    let e = parse("name = \"s\"\n[[flows]]\ncount = \"all\"\ncc = \"default\"\n").unwrap_err();
    assert!(e.to_string().contains("needs [topology] kind"), "{e}");
    let e = parse(&MESH.replace("count = 7", "count = \"some\"")).unwrap_err();
    assert!(
        matches!(&e, ScenarioError::BadValue { key, line: 10, .. } if key == "flows[0].count"),
        "{e}"
    );
    // The results' columns depend on the topology kind: it is not a sweep axis.
    let e = parse(&MESH.replace("kind = \"mesh\"", "kind = [\"star\", \"mesh\"]")).unwrap_err();
    assert!(
        matches!(&e, ScenarioError::BadValue { key, line: 3, .. } if key == "topology.kind"),
        "{e}"
    );
}

#[test]
fn output_intervals_default_to_the_mesh_and_exchanges_to_off() {
    let c = parse(MESH).unwrap().config(0).unwrap();
    assert!(c.intervals && !c.exchanges && c.is_mesh() && c.mesh_metrics());
    let off = format!("{MESH}[output]\nintervals = false\nexchanges = true\n");
    let c = parse(&off).unwrap().config(0).unwrap();
    assert!(!c.intervals && c.exchanges);
    let star = "name = \"s\"\n[[flows]]\ncc = \"default\"\n";
    let c = parse(star).unwrap().config(0).unwrap();
    assert!(!c.intervals && !c.exchanges && !c.mesh_metrics());
    let c = parse(&format!("{star}[output]\nintervals = true\n"))
        .unwrap()
        .config(0)
        .unwrap();
    assert!(c.intervals && c.mesh_metrics() && !c.is_mesh());
}
