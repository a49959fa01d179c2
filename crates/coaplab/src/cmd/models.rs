//! `coaplab models`: the network models' parameter tables, printed from the same registries
//! the scenario reader checks against (`coaplab models mesh`: netsim's `MESH_PARAMS`;
//! `coaplab models mobility`: netsim's mobility tables).

use std::process::ExitCode;

use coaplab_netsim::mesh::mobility::{
    mobility_params, MOBILITY_COMMON_PARAMS, MODELS as MOBILITY_MODELS,
};
use coaplab_netsim::mesh::rpl::RPL_CONSTANTS;
use coaplab_netsim::mesh::MESH_PARAMS;

use super::algorithms::param;

/// The models with a parameter table.
const MODELS: [(&str, &str); 2] = [
    (
        "mesh",
        "multi-hop IEEE 802.15.4 mesh: Cooja UDGM radio, unslotted CSMA/CA, 6LoWPAN, RPL ([topology] kind = \"mesh\", parameters in [topology.params]; docs/mesh-model.md)",
    ),
    (
        "mobility",
        "moving mesh nodes: BonnMotion's Random Waypoint, Gauss-Markov, Manhattan Grid, Pursue, or a position file ([mobility]; docs/mesh-model.md)",
    ),
];

/// The mesh's routing keys, read from `[topology]` itself.
const ROUTING_KEYS: &str = "
Routing ([topology]):
  routing = \"rpl\"    (\"rpl\" or \"static\")
      rpl: RPL storing mode over the channel (DIO/DIS/DAO compete with data); static: the
      converged minimum-hop DODAG, no control traffic
      source: Contiki 3.0 core/net/rpl (docs/mesh-model.md, \"RPL\")
  objective = \"mrhof\"    (\"mrhof\" or \"of0\"; routing = \"rpl\" only)
      objective function: MRHOF over ETX, or OF0 (hop count)
      source: Contiki 3.0 rpl-conf.h RPL_OF rpl_mrhof; rpl-mrhof.c, rpl-of0.c
  warm_up_s = (formation)    (seconds in [0, 3600]; routing = \"rpl\" only)
      clients start this long after RPL starts; unset: at the instant the DODAG has formed
      (every node has a parent chain to the root and the root a route down to it)
      source: thesis (\"once RPL has formed\"); coaplab's choice of criterion
";

/// Arguments of `coaplab models`.
#[derive(clap::Args, Debug)]
#[command(after_long_help = "\
Without NAME: the network models that have parameters. With NAME: every parameter of that model
with its default, accepted range, meaning and source. A scenario sets them in its model's table,
e.g. [topology.params] for the mesh; unknown keys are errors.")]
pub(crate) struct Args {
    /// A model name (`mesh`, `mobility`): print its parameters.
    #[arg(value_name = "NAME")]
    name: Option<String>,
}

pub(crate) fn run(args: Args) -> ExitCode {
    match args.name.as_deref() {
        None => {
            println!("Network models (coaplab models NAME lists the parameters):");
            for (name, summary) in MODELS {
                println!("  {name:<6} {summary}");
            }
            ExitCode::SUCCESS
        }
        Some("mesh") => {
            let mut out = format!("mesh: {}\n\nParameters ([topology.params]):\n", MODELS[0].1);
            for spec in MESH_PARAMS {
                param(&mut out, spec);
            }
            out.push_str(ROUTING_KEYS);
            out.push_str("\nRPL constants (fixed, Contiki 3.0):\n");
            for (name, value, source) in RPL_CONSTANTS {
                out.push_str(&format!("  {name} = {value}\n      source: {source}\n"));
            }
            print!("{out}");
            ExitCode::SUCCESS
        }
        Some("mobility") => {
            print!("{}", mobility());
            ExitCode::SUCCESS
        }
        Some(other) => {
            let names: Vec<&str> = MODELS.iter().map(|(n, _)| *n).collect();
            eprintln!(
                "coaplab models: unknown model '{other}'; valid names: {}",
                names.join(", ")
            );
            ExitCode::from(2)
        }
    }
}

/// The `[mobility]` keys: the common ones, then each model's, then the position file's.
fn mobility() -> String {
    let mut out = format!("mobility: {}\n\n", MODELS[1].1);
    out.push_str(
        "[mobility] model = \"none\" (default) | a model below | \"file\"; roles = [\"client\"] (default;\n\
         also \"server\", \"router\"; the border router never moves). Names are BonnMotion's in snake_case.\n\n\
         Every generated model:\n",
    );
    for spec in MOBILITY_COMMON_PARAMS {
        param(&mut out, spec);
    }
    for (name, module, summary) in MOBILITY_MODELS {
        out.push_str(&format!(
            "\nmodel = \"{name}\" (BonnMotion {module}): {summary}\n"
        ));
        for spec in mobility_params(name).unwrap_or_default() {
            param(&mut out, spec);
        }
    }
    out.push_str(
        "\nmodel = \"file\": file = \"PATH\" (relative to the scenario), format = \"bonnmotion\" (.movements:\n\
         a line per node of t x y triples, straight lines between) | \"cooja\" (mobility plugin: lines\n\
         node time x y, positions held until the next); route_check_interval_s as above.\n",
    );
    out
}
