//! `coaplab algorithms`: the registry is the documentation. Lists every algorithm, or every
//! parameter of one (key, default, range, help, source), or with `--markdown` the whole
//! parameter reference committed as `docs/parameters.md`.

use std::fmt::Write as _;
use std::process::ExitCode;

use coaplab_cc::params::{Kind, ParamSpec};
use coaplab_cc::{presets, registry};
use coaplab_netsim::tcp::{BBR_PARAMS, TCP_PARAMS};

/// The CoAP-over-TCP `cc` names of scenario files, with a summary: their parameters are the
/// TCP model's ([`TCP_PARAMS`]), set in `[flows.params]`, not `--set`.
const TCP_CCS: [(&str, &str); 2] = [
    (
        "tcp-newreno",
        "CoAP over TCP (RFC 8323) on the TCP model with Linux reno congestion control (docs/experiments.md §5.3)",
    ),
    (
        "tcp-bbr",
        "CoAP over TCP (RFC 8323) on the TCP model with Linux BBR v1 (docs/experiments.md §5.3)",
    ),
];

/// The heading of BBR's constants (netsim's `BBR_PARAMS`, `[flows.params]` of `tcp-bbr` too).
const BBR_NOTE: &str = "BBR v1 constants (Linux tcp_bbr.c defaults; durations in whole \
    milliseconds, gains in 1/256)";

/// Arguments of `coaplab algorithms`.
#[derive(clap::Args, Debug)]
#[command(after_long_help = "\
Without NAME: every registered algorithm with a one-line summary, then the presets.
With NAME: every parameter of that algorithm, with its default, accepted range, meaning and
source (for tcp-newreno / tcp-bbr: the TCP model's parameters, set in a scenario's
[flows.params]). Set parameters with `--set KEY=VALUE` (e.g. in `coaplab trace`).
With --markdown: the reference of every algorithm and preset as Markdown; docs/parameters.md is
this output (regenerate it with `coaplab algorithms --markdown > docs/parameters.md`).")]
pub(crate) struct Args {
    /// An algorithm name: print its parameters.
    #[arg(value_name = "NAME")]
    name: Option<String>,
    /// Print every algorithm's summary and parameter table, and the presets, as Markdown.
    #[arg(long, conflicts_with = "name")]
    markdown: bool,
}

pub(crate) fn run(args: Args) -> ExitCode {
    if args.markdown {
        print!("{}", markdown());
        return ExitCode::SUCCESS;
    }
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
    // Built-in algorithms and any registered by a program embedding coaplab.
    let algorithms = registry::all();
    let width = algorithms.iter().map(|a| a.name.len()).max().unwrap_or(0);
    for a in algorithms {
        let _ = writeln!(out, "  {:width$}  {}", a.name, a.summary);
    }
    out.push_str("\nCoAP over TCP (scenario files only; parameters in [flows.params]):\n");
    for (name, summary) in TCP_CCS {
        let _ = writeln!(out, "  {name:width$}  {summary}");
    }
    out.push_str("\nPresets (--set preset=NAME, docs/algorithms.md, 'Presets'):\n");
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
    if let Some((name, summary)) = TCP_CCS.iter().find(|(n, _)| *n == name) {
        let mut out = format!(
            "{name}: {summary}\n\nTCP model parameters (scenario [flows.params] of a \
             cc = \"{name}\" flow; the MSS is the network's mtu_bytes - 40):\n"
        );
        for spec in TCP_PARAMS {
            param(&mut out, spec);
        }
        if *name == "tcp-bbr" {
            let _ = writeln!(out, "\n{BBR_NOTE}:");
            for spec in BBR_PARAMS {
                param(&mut out, spec);
            }
        }
        return Ok(out);
    }
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

/// One parameter as `coaplab algorithms NAME` prints it (also `coaplab models NAME`).
pub(crate) fn param(out: &mut String, p: &ParamSpec) {
    let _ = writeln!(
        out,
        "  {} = {}    ({})",
        p.key,
        p.default,
        p.kind.describe()
    );
    let _ = writeln!(out, "      {}", p.help);
    let _ = writeln!(out, "      source: {}", p.source);
}

/// The regeneration command, quoted in the generated file.
const REGENERATE: &str = "cargo run -p coaplab -- algorithms --markdown > docs/parameters.md";

/// The parameter reference of every algorithm and every preset, as Markdown
/// (`docs/parameters.md`).
fn markdown() -> String {
    let mut out = String::from("# Parameter reference\n\n");
    let _ = writeln!(
        out,
        "<!-- Generated from the registry of crates/cc by `coaplab algorithms --markdown`; do not \
         edit.\n     Regenerate with: {REGENERATE} -->\n"
    );
    out.push_str(
        "Every constant of every algorithm is a parameter with a default, a checked range and a \
         source. Set one with `--set KEY=VALUE` (repeatable; a later setting wins), or choose a \
         preset with `--set preset=NAME`: the preset is expanded first and every other setting \
         overrides it. An unknown key or an out-of-range value is an error that lists what is \
         valid. Durations are in seconds (`_s`, `inf` where a cap can be switched off) or integer \
         milliseconds (`_ms`). See [algorithms.md](algorithms.md) for a guide.\n\n",
    );
    out.push_str("## Algorithms\n\n| name | summary |\n|---|---|\n");
    for a in registry::ALGORITHMS {
        let _ = writeln!(out, "| `{}` | {} |", a.name, cell(a.summary));
    }
    for (name, summary) in TCP_CCS {
        let _ = writeln!(
            out,
            "| `{name}` | {} (scenario files only) |",
            cell(summary)
        );
    }
    out.push_str("\n## Presets\n\n");
    out.push_str(
        "A preset sets only the keys an algorithm has; the others are skipped for it.\n\n\
         | preset | summary | settings |\n|---|---|---|\n",
    );
    for p in presets::PRESETS {
        let settings: Vec<String> = p
            .settings
            .iter()
            .map(|s| match s.applies {
                presets::Applies::All => format!("`{}={}`", s.key, s.value),
                presets::Applies::Only(names) => {
                    format!("`{}={}` ({} only)", s.key, s.value, names.join(", "))
                }
            })
            .collect();
        let settings = if settings.is_empty() {
            "(none)".to_string()
        } else {
            settings.join(", ")
        };
        let _ = writeln!(out, "| `{}` | {} | {} |", p.name, cell(p.summary), settings);
    }
    for a in registry::ALGORITHMS {
        let _ = write!(
            out,
            "\n## {}\n\n{}\n\n| key | default | range | help | source |\n|---|---|---|---|---|\n",
            a.name,
            cell(a.summary)
        );
        md_rows(
            &mut out,
            a.params
                .iter()
                .flat_map(|g| g.iter())
                .chain([&presets::PRESET_PARAM]),
        );
    }
    for (name, summary) in TCP_CCS {
        let _ = write!(
            out,
            "\n## {name}\n\n{}. Scenario files only: the TCP model's parameters are keys of the \
             flow's `[flows.params]` (any value may be a sweep list); the MSS is the network's \
             `mtu_bytes` − 40.\n\n| key | default | range | help | source |\n|---|---|---|---|---|\n",
            cell(summary)
        );
        md_rows(&mut out, TCP_PARAMS);
        if name == "tcp-bbr" {
            let _ = write!(
                out,
                "\nAlso the {BBR_NOTE}:\n\n| key | default | range | help | source |\n\
                 |---|---|---|---|---|\n"
            );
            md_rows(&mut out, BBR_PARAMS);
        }
    }
    out
}

/// One Markdown table row per parameter: key, default, range, help, source.
fn md_rows<'a>(out: &mut String, specs: impl IntoIterator<Item = &'a ParamSpec>) {
    for p in specs {
        let _ = writeln!(
            out,
            "| `{}` | `{}` | {} | {} | {} |",
            p.key,
            p.default,
            cell(&md_range(p.kind)),
            cell(p.help),
            cell(p.source)
        );
    }
}

/// The accepted values in Markdown: choices as code spans.
pub(crate) fn md_range(kind: Kind) -> String {
    match kind {
        Kind::Choice(names) => names
            .iter()
            .map(|n| format!("`{n}`"))
            .collect::<Vec<_>>()
            .join(", "),
        _ => kind.describe(),
    }
}

/// Text made safe for a Markdown table cell: `|` would end the cell and `*` start emphasis.
pub(crate) fn cell(text: &str) -> String {
    text.replace('|', "\\|").replace('*', "\\*")
}
