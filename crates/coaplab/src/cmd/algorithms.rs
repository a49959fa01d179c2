//! `coaplab algorithms`: the registry is the documentation. Lists every algorithm, or every
//! parameter of one (key, default, range, help, source).

use std::fmt::Write as _;
use std::process::ExitCode;

use coaplab_cc::params::{Kind, ParamSpec};
use coaplab_cc::{presets, registry};

/// Arguments of `coaplab algorithms`.
#[derive(clap::Args, Debug)]
#[command(after_long_help = "\
Without NAME: every registered algorithm with a one-line summary, then the presets.
With NAME: every parameter of that algorithm, with its default, accepted range, meaning and
source. Set parameters with `--set KEY=VALUE` (e.g. in `coaplab trace`).")]
pub(crate) struct Args {
    /// An algorithm name: print its parameters.
    #[arg(value_name = "NAME")]
    name: Option<String>,
}

pub(crate) fn run(args: Args) -> ExitCode {
    match args.name {
        None => {
            print!("{}", list());
            ExitCode::SUCCESS
        }
        Some(name) => match describe(&name) {
            Ok(text) => {
                print!("{text}");
                ExitCode::SUCCESS
            }
            Err(e) => {
                eprintln!("coaplab algorithms: {e}");
                ExitCode::FAILURE
            }
        },
    }
}

/// Every algorithm and every preset, one line each.
fn list() -> String {
    let mut out = String::from("Algorithms (coaplab algorithms NAME lists the parameters):\n");
    let width = registry::ALGORITHMS
        .iter()
        .map(|a| a.name.len())
        .max()
        .unwrap_or(0);
    for a in registry::ALGORITHMS {
        let _ = writeln!(out, "  {:width$}  {}", a.name, a.summary);
    }
    out.push_str("\nPresets (--set preset=NAME, spec §0.5):\n");
    let width = presets::PRESETS
        .iter()
        .map(|p| p.name.len())
        .max()
        .unwrap_or(0);
    for p in presets::PRESETS {
        let _ = writeln!(out, "  {:width$}  {}", p.name, p.summary);
    }
    out
}

/// Every parameter of algorithm `name`.
fn describe(name: &str) -> Result<String, String> {
    let info = registry::lookup(name).map_err(|e| e.to_string())?;
    let mut out = format!(
        "{}: {}\n\nParameters (--set KEY=VALUE):\n",
        info.name, info.summary
    );
    for spec in info.params.iter().flat_map(|g| g.iter()) {
        param(&mut out, spec);
    }
    param(&mut out, &presets::PRESET_PARAM);
    Ok(out)
}

fn param(out: &mut String, p: &ParamSpec) {
    let _ = writeln!(out, "  {} = {}    ({})", p.key, p.default, range(p.kind));
    let _ = writeln!(out, "      {}", p.help);
    let _ = writeln!(out, "      source: {}", p.source);
}

/// The accepted values of a parameter, in words.
fn range(kind: Kind) -> String {
    match kind {
        Kind::Seconds { min, max } if max.is_infinite() => format!("seconds >= {min}, or inf"),
        Kind::Seconds { min, max } => format!("seconds in [{min}, {max}]"),
        Kind::Float { min, max } => format!("number in [{min}, {max}]"),
        Kind::Int { min, max } => format!("integer in [{min}, {max}]"),
        Kind::Bool => "true | false".to_string(),
        Kind::Choice(names) => names.join(" | "),
    }
}
