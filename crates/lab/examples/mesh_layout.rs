//! Prints a mesh scenario's layout as JSON: the node positions and roles, the radio
//! parameters and the seed of one run of its plan, exactly as `coaplab run` expands them (the
//! `topology` object of `manifest.json`, without running anything). For oracles that rebuild
//! the mesh in another simulator (scripts/cooja-oracle/gen_csc.py).
//!
//!     cargo run --release -p coaplab-lab --example mesh_layout -- scenarios/rathod-ch3-grid.toml
//!     cargo run --release -p coaplab-lab --example mesh_layout -- SCENARIO [RUN] [--set KEY=VALUE]...
//!
//! RUN is the run's id in the plan (default 0). Output: `{"scenario", "run", "seed",
//! "max_sim_time_s", "sweep", "topology": {"kind": "mesh", "nodes": [{"x_m", "y_m", "role"}],
//! "params": {...}, ...}, "flows": [...]}`.

use std::path::Path;
use std::process::ExitCode;

fn main() -> ExitCode {
    let mut args = std::env::args().skip(1);
    let mut path = None;
    let mut run = 0usize;
    let mut sets = Vec::new();
    while let Some(a) = args.next() {
        if a == "--set" {
            match args.next() {
                Some(s) => sets.push(s),
                None => return fail("--set needs KEY=VALUE"),
            }
        } else if path.is_none() {
            path = Some(a);
        } else {
            match a.parse() {
                Ok(r) => run = r,
                Err(_) => return fail(&format!("not a run id: {a}")),
            }
        }
    }
    let Some(path) = path else {
        return fail("usage: mesh_layout SCENARIO [RUN] [--set KEY=VALUE]...");
    };
    let scenario = match coaplab_lab::scenario::Scenario::load_with(Path::new(&path), &sets) {
        Ok(s) => s,
        Err(e) => return fail(&e.to_string()),
    };
    let plan = scenario.plan(None, None);
    let Some(spec) = plan.specs().nth(run) else {
        return fail(&format!("run {run}: the plan has {} runs", plan.len()));
    };
    let config = coaplab_lab::results::expanded::config_json(&spec.config);
    if config["topology"]["kind"] != "mesh" {
        return fail(&format!("{path}: not a mesh scenario"));
    }
    let out = serde_json::json!({
        "scenario": spec.scenario,
        "run": spec.run,
        "seed": spec.seed,
        "max_sim_time_s": config["max_sim_time_s"],
        "sweep": spec.sweep.iter().map(|(k, v)| serde_json::json!([k, v])).collect::<Vec<_>>(),
        "topology": config["topology"],
        "flows": config["flows"],
    });
    println!("{}", serde_json::to_string_pretty(&out).expect("JSON"));
    ExitCode::SUCCESS
}

fn fail(msg: &str) -> ExitCode {
    eprintln!("mesh_layout: {msg}");
    ExitCode::FAILURE
}
