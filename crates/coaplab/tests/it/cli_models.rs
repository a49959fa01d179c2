//! `coaplab models`: the link, mesh and mobility parameter tables, from netsim's registries.

use std::process::Command;

fn coaplab(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_coaplab"))
        .args(args)
        .output()
        .expect("run coaplab")
}

#[test]
fn models_mesh_lists_every_parameter_with_default_range_and_source() {
    let o = coaplab(&["models", "mesh"]);
    assert!(o.status.success());
    let out = String::from_utf8_lossy(&o.stdout);
    for spec in coaplab_netsim::mesh::MESH_PARAMS {
        assert!(
            out.contains(&format!("  {} = {}", spec.key, spec.default)),
            "{}",
            spec.key
        );
        assert!(out.contains(spec.source), "{}", spec.key);
    }
    assert!(out.contains("mac_max_frame_retries = 3    (integer in [0, 7])"));
    assert!(out.contains("rpl_dio_interval_min = 12"));
    assert!(out.contains("routing = \"rpl\"") && out.contains("objective = \"mrhof\""));
    assert!(out.contains("warm_up_s"));
    for (name, _, source) in coaplab_netsim::mesh::rpl::RPL_CONSTANTS {
        assert!(out.contains(name) && out.contains(source), "{name}");
    }
    let list = coaplab(&["models"]);
    assert!(String::from_utf8_lossy(&list.stdout).contains("mesh"));
    let bad = coaplab(&["models", "wifi"]);
    assert_eq!(bad.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&bad.stderr).contains("unknown model 'wifi'"));
}

#[test]
fn models_mobility_lists_every_model_parameter_with_default_and_source() {
    use coaplab_netsim::mesh::mobility::{mobility_params, MOBILITY_COMMON_PARAMS, MODELS};
    let o = coaplab(&["models", "mobility"]);
    assert!(o.status.success());
    let out = String::from_utf8_lossy(&o.stdout);
    let tables = MODELS.iter().map(|m| mobility_params(m.0).unwrap());
    for spec in tables.flatten().chain(MOBILITY_COMMON_PARAMS) {
        assert!(
            out.contains(&format!("  {} = {}", spec.key, spec.default)),
            "{}",
            spec.key
        );
        assert!(out.contains(spec.source), "{}", spec.key);
    }
    for (name, module, _) in MODELS {
        assert!(out.contains(&format!("model = \"{name}\" (BonnMotion {module})")));
    }
    assert!(out.contains("alpha = 0.75    (number in [0, 1])"), "{out}");
}

#[test]
fn models_link_lists_every_network_key_with_default_range_presets_and_source() {
    use coaplab_netsim::config::params::{FROM_PRESET, LINK_PARAMS};
    let o = coaplab(&["models", "link"]);
    assert!(o.status.success());
    let out = String::from_utf8_lossy(&o.stdout);
    for spec in LINK_PARAMS {
        assert!(
            out.contains(&format!("  {} = {}", spec.key, spec.default)),
            "{}",
            spec.key
        );
        assert!(out.contains(spec.source), "{}", spec.key);
    }
    assert_eq!(
        out.matches("      presets: ").count(),
        LINK_PARAMS
            .iter()
            .filter(|s| s.default == FROM_PRESET)
            .count()
    );
    assert!(out.contains("  buffer_bytes = preset    (integer in [1, 1099511627776])"));
    assert!(out.contains("      presets: nbiot 30000 down / 60000 up; zigbee 20000\n"));
    assert!(out.contains("  loss_burst_packets = 1.5    (number in [1, 1000000])"));
    for model in coaplab_netsim::link::loss::models::LOSS_MODELS {
        assert!(out.contains(&format!("      --loss {}\n", model.positional())));
    }
    assert!(out.contains("      1-h = 100    (percentage in [0, 100] (2.5 or \"2.5%\", as tc))"));
    let list = coaplab(&["models"]);
    assert!(String::from_utf8_lossy(&list.stdout).contains("  link "));
    let md = coaplab(&["models", "mesh", "--markdown"]);
    assert_eq!(md.status.code(), Some(2), "--markdown is for the link only");
}

#[test]
fn models_link_trace_writes_the_generators_trace_and_lists_its_parameters() {
    use coaplab_netsim::link::trace::nbiot::{generate, NbiotTraceParams, NBIOT_TRACE_PARAMS};
    use coaplab_netsim::link::trace::parse;
    let out = coaplab(&["models", "link-trace"]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success());
    for spec in NBIOT_TRACE_PARAMS {
        assert!(
            text.contains(&format!("  {} = {}", spec.key, spec.default)),
            "{text}"
        );
        assert!(text.contains(spec.source), "{}", spec.key);
    }
    assert!(text.contains("CE2 (MCL 164 dB): 469 / 938 bit/s"), "{text}");
    let args = [
        "models",
        "link-trace",
        "nbiot",
        "--seed",
        "5",
        "--direction",
        "up",
        "--duration-s",
        "120",
        "--dwell-mean-s",
        "10",
    ];
    let out = coaplab(&args);
    assert!(out.status.success());
    let params = NbiotTraceParams {
        duration: coaplab_cc::time::Duration::from_secs(120),
        dwell_mean: coaplab_cc::time::Duration::from_secs(10),
        ..NbiotTraceParams::default()
    };
    let trace = parse(&String::from_utf8_lossy(&out.stdout)).unwrap();
    assert_eq!(trace, generate(&params, 5, coaplab_netsim::Direction::Up));
    let bad = coaplab(&["models", "link-trace", "nbiot", "--direction", "up"]);
    assert_eq!(bad.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&bad.stderr).contains("--seed N is required"));
    let bad = coaplab(&["models", "link", "--seed", "5"]);
    assert_eq!(bad.status.code(), Some(2));
}
