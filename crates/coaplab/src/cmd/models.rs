//! `coaplab models`: the network models' parameter tables, printed from the same registries
//! the scenario reader checks against (`coaplab models link`: netsim's `LINK_PARAMS`, with
//! `--markdown` the `[network]` table of docs/scenarios.md; `coaplab models mesh`: netsim's
//! `MESH_PARAMS`; `coaplab models mobility`: netsim's mobility tables).

use std::fmt::Write as _;
use std::process::ExitCode;

use coaplab_cc::params::ParamSpec;
use coaplab_netsim::config::params::{preset_value, FROM_PRESET, LINK_PARAMS};
use coaplab_netsim::link::loss::models::{self as loss_models, LossUnit, LOSS_MODELS};
use coaplab_netsim::{Preset, PRESET_NAMES};

use coaplab_netsim::mesh::mobility::{
    mobility_params, MOBILITY_COMMON_PARAMS, MODELS as MOBILITY_MODELS,
};
use coaplab_netsim::mesh::rpl::RPL_CONSTANTS;
use coaplab_netsim::mesh::MESH_PARAMS;

use super::algorithms::{cell, md_range, param};
use super::link_trace_gen::{self, GenOpts};

/// The models with a parameter table.
const MODELS: [(&str, &str); 4] = [
    (
        "link",
        "the star's bottleneck link, each direction a byte FIFO, serializer, propagation delay and loss stage, plus a rest-of-path delay ([network] in a scenario; the same names as coaplab emulate's flags; docs/experiments.md §1-3)",
    ),
    (
        "link-trace",
        "synthetic link traces (a time-varying rate and delay per direction) for [network] link_trace and coaplab emulate --link-trace: coaplab models link-trace nbiot --seed N --direction down|up writes one (docs/link-traces.md)",
    ),
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
e.g. [network] for the link and [topology.params] for the mesh; unknown keys are errors.
`coaplab models link --markdown` is the [network] table of docs/scenarios.md.
`coaplab models link-trace nbiot --seed N --direction down|up [--out FILE]` writes a synthetic
NB-IoT coverage trace (docs/link-traces.md).")]
pub(crate) struct Args {
    /// A model name (`link`, `link-trace`, `mesh`, `mobility`): print its parameters.
    #[arg(value_name = "NAME")]
    name: Option<String>,
    /// With `link-trace`: a generator (`nbiot`) to write a trace with.
    #[arg(value_name = "GENERATOR")]
    generator: Option<String>,
    /// With `link`: the parameter table as Markdown (docs/scenarios.md, `[network]`).
    #[arg(long)]
    markdown: bool,
    #[command(flatten)]
    generate: GenOpts,
}

pub(crate) fn run(args: Args) -> ExitCode {
    if args.markdown && args.name.as_deref() != Some("link") {
        eprintln!("coaplab models: --markdown is for `coaplab models link`");
        return ExitCode::from(2);
    }
    let trace = args.name.as_deref() == Some("link-trace");
    if !trace && (args.generator.is_some() || args.generate.any()) {
        eprintln!("coaplab models: a generator and its flags are for `coaplab models link-trace`");
        return ExitCode::from(2);
    }
    match args.name.as_deref() {
        Some("link-trace") => link_trace_gen::run(args.generator.as_deref(), &args.generate),
        None => {
            println!("Network models (coaplab models NAME lists the parameters):");
            for (name, summary) in MODELS {
                println!("  {name:<10} {summary}");
            }
            ExitCode::SUCCESS
        }
        Some("link") if args.markdown => {
            print!("{}", link_markdown());
            ExitCode::SUCCESS
        }
        Some("link") => {
            print!("{}", link());
            ExitCode::SUCCESS
        }
        Some("mesh") => {
            let mut out = format!(
                "mesh: {}\n\nParameters ([topology.params]):\n",
                summary("mesh")
            );
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
    let mut out = format!("mobility: {}\n\n", summary("mobility"));
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

/// The one-line summary of model `name` (one of [`MODELS`]).
fn summary(name: &str) -> &'static str {
    MODELS
        .iter()
        .find(|(n, _)| *n == name)
        .map_or("", |(_, s)| s)
}

/// What each preset gives `spec` (`nbiot 30000 down / 60000 up; zigbee 20000`), for a key
/// whose default is the preset's.
fn presets_text(spec: &ParamSpec, code: bool) -> Option<String> {
    if spec.default != FROM_PRESET {
        return None;
    }
    let parts: Vec<String> = PRESET_NAMES
        .iter()
        .filter_map(|name| {
            let value = preset_value(Preset::from_name(name)?, spec.key)?;
            Some(if code {
                format!("`{name}`: {value}")
            } else {
                format!("{name} {value}")
            })
        })
        .collect();
    Some(parts.join("; "))
}

/// The `[network]` keys with each preset's values (`coaplab models link`).
fn link() -> String {
    let mut out = format!(
        "link: {}\n\nParameters ([network]; coaplab emulate --KEY with '-' for '_'; \
         default \"preset\": the preset's value):\n",
        summary("link")
    );
    for spec in LINK_PARAMS {
        param(&mut out, spec);
        if let Some(presets) = presets_text(spec, false) {
            let _ = writeln!(out, "      presets: {presets}");
        }
    }
    out.push_str(
        "\nLoss models (loss = { model = \"NAME\", KEY = VALUE, .. } in a scenario; \
         --loss NAME:V1,V2,.. in coaplab emulate, the values in this order):\n",
    );
    for model in LOSS_MODELS {
        let _ = writeln!(out, "  {}: {}", model.name, model.summary);
        let _ = writeln!(out, "      --loss {}", model.positional());
        for p in model.params {
            let _ = writeln!(
                out,
                "      {} = {}    ({})",
                p.key,
                p.default.unwrap_or("required"),
                loss_models::expected(p.unit).trim_start_matches("a ")
            );
        }
    }
    out
}

/// The marker lines around the generated table in docs/scenarios.md.
const LINK_DOC_BEGIN: &str =
    "<!-- generated by `coaplab models link --markdown`; do not edit (a test compares) -->";

/// The line after the generated tables in docs/scenarios.md.
const LINK_DOC_END: &str = "<!-- end of `coaplab models link --markdown` -->";

/// The `[network]` and loss model tables of docs/scenarios.md, from [`LINK_PARAMS`] and
/// [`LOSS_MODELS`].
fn link_markdown() -> String {
    let mut out = format!("{LINK_DOC_BEGIN}\n\n");
    out.push_str("| key | default | range | meaning | source |\n|---|---|---|---|---|\n");
    for spec in LINK_PARAMS {
        let default = presets_text(spec, true).unwrap_or_else(|| format!("`{}`", spec.default));
        let _ = writeln!(
            out,
            "| `{}` | {} | {} | {} | {} |",
            spec.key,
            cell(&default),
            cell(&md_range(spec.kind)),
            cell(spec.help),
            cell(spec.source)
        );
    }
    out.push_str(
        "\nLoss models: `loss = { model = \"NAME\", KEY = VALUE, .. }` in a scenario, \
         `--loss NAME:V1,V2,..` (the keys in this order) in `coaplab emulate`.\n\n\
         | model | `coaplab emulate` | keys (default) | what |\n|---|---|---|---|\n",
    );
    for model in LOSS_MODELS {
        let keys: Vec<String> = model
            .params
            .iter()
            .map(|p| {
                let unit = match p.unit {
                    LossUnit::Probability => "in [0, 1]",
                    LossUnit::Seconds => "s",
                    LossUnit::Percent => "tc %",
                };
                let default = p.default.unwrap_or("required");
                format!("`{}` ({default}, {unit})", p.key)
            })
            .collect();
        let _ = writeln!(
            out,
            "| `{}` | `--loss {}` | {} | {} |",
            model.name,
            model.positional(),
            cell(&keys.join(", ")),
            cell(model.summary)
        );
    }
    out.push_str(LINK_DOC_END);
    out.push('\n');
    out
}
