//! Prints a mesh scenario's layout as JSON: the node positions and roles, the radio
//! parameters and the seed of one run of its plan, exactly as `coaplab run` expands them (the
//! `topology` object of `manifest.json`, without running anything). For oracles that rebuild
//! the mesh in another simulator (scripts/cooja-oracle/gen_csc.py).
//!
//!     cargo run --release -p coaplab-lab --example mesh_layout -- scenarios/rathod-ch3-grid.toml
//!     cargo run --release -p coaplab-lab --example mesh_layout -- SCENARIO [RUN] [--set KEY=VALUE]...
//!
//!     cargo run --release -p coaplab-lab --example mesh_layout -- SCENARIO [RUN] [--mobility-step S]
//!
//! RUN is the run's id in the plan (default 0). Output: `{"scenario", "run", "seed",
//! "max_sim_time_s", "sweep", "topology": {"kind": "mesh", "nodes": [{"x_m", "y_m", "role"}],
//! "params": {...}, ...}, "flows": [...]}`.
//!
//! When the scenario moves nodes (`[mobility]`), also `"mobility": {"model", "step_s",
//! "horizon_s", "nodes": [{"node", "positions": [[t_s, x_m, y_m], ...]}]}`: every moving
//! node's position, from the very trajectories the simulator generates for this run (its
//! seed, over the run's `max_sim_time_s`), sampled every `--mobility-step` seconds (default 1)
//! and at each of its waypoints, `t_s` counted from the start of movement (the clients' start,
//! after RPL's warm-up). The static nodes are the layout's.

use std::path::Path;
use std::process::ExitCode;

fn main() -> ExitCode {
    let mut args = std::env::args().skip(1);
    let mut path = None;
    let mut run = 0usize;
    let mut sets = Vec::new();
    let mut step_s = 1.0f64;
    while let Some(a) = args.next() {
        if a == "--set" {
            match args.next() {
                Some(s) => sets.push(s),
                None => return fail("--set needs KEY=VALUE"),
            }
        } else if a == "--mobility-step" {
            match args.next().and_then(|s| s.parse::<f64>().ok()) {
                Some(s) if s > 0.0 => step_s = s,
                _ => return fail("--mobility-step needs a positive number of seconds"),
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
    let mut out = serde_json::json!({
        "scenario": spec.scenario,
        "run": spec.run,
        "seed": spec.seed,
        "max_sim_time_s": config["max_sim_time_s"],
        "sweep": spec.sweep.iter().map(|(k, v)| serde_json::json!([k, v])).collect::<Vec<_>>(),
        "topology": config["topology"],
        "flows": config["flows"],
    });
    if let (Some(mobility), coaplab_lab::scenario::Topology::Mesh(mesh)) =
        (&spec.config.mobility, &spec.config.topology)
    {
        match trajectories(mobility, mesh, spec.seed, spec.config.max_sim_time, step_s) {
            Ok(m) => out["mobility"] = m,
            Err(e) => return fail(&e),
        }
    }
    println!("{}", serde_json::to_string_pretty(&out).expect("JSON"));
    ExitCode::SUCCESS
}

/// Every moving node's positions over the run, as the simulator's `Mesh::set_mobility` builds
/// them (same config, layout, run seed and horizon).
fn trajectories(
    mobility: &coaplab_netsim::mesh::mobility::MobilityConfig,
    mesh: &coaplab_netsim::mesh::MeshConfig,
    seed: u64,
    horizon: coaplab_cc::time::Duration,
    step_s: f64,
) -> Result<serde_json::Value, String> {
    use coaplab_netsim::mesh::mobility::Motion;
    let motion = Motion::build(mobility, &mesh.layout, seed, horizon).map_err(|e| e.to_string())?;
    let horizon_s = horizon.as_secs_f64();
    let mut nodes = Vec::new();
    for node in 0..motion.len() as u16 {
        let Some(path) = motion.trajectory(node) else {
            continue;
        };
        let mut times: Vec<f64> = (0..)
            .map(|k| k as f64 * step_s)
            .take_while(|t| *t <= horizon_s)
            .collect();
        times.extend(
            path.points()
                .iter()
                .map(|w| w.t_s)
                .filter(|t| (0.0..=horizon_s).contains(t)),
        );
        times.sort_by(f64::total_cmp);
        times.dedup();
        let positions: Vec<serde_json::Value> = times
            .iter()
            .map(|&t| {
                let (x, y) = motion.position(node, t);
                serde_json::json!([t, x, y])
            })
            .collect();
        nodes.push(serde_json::json!({"node": node, "positions": positions}));
    }
    Ok(serde_json::json!({
        "model": mobility.model.name(),
        "step_s": step_s,
        "horizon_s": horizon_s,
        "nodes": nodes,
    }))
}

fn fail(msg: &str) -> ExitCode {
    eprintln!("mesh_layout: {msg}");
    ExitCode::FAILURE
}
