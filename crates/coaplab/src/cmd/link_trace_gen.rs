//! `coaplab models link-trace`: the synthetic link-trace generators' parameters, and with a
//! generator name a trace file (`coaplab models link-trace nbiot --seed 1 --direction down`),
//! written by netsim's [`coaplab_netsim::link::trace::nbiot`] in netsim's format
//! (docs/link-traces.md).

use std::path::PathBuf;
use std::process::ExitCode;

use coaplab_cc::time::Duration;
use coaplab_netsim::link::trace::format::write;
use coaplab_netsim::link::trace::nbiot::{generate, NbiotTraceParams, CLASSES, NBIOT_TRACE_PARAMS};
use coaplab_netsim::Direction;

use super::algorithms::param;

/// The generators.
pub(crate) const GENERATORS: [(&str, &str); 1] = [(
    "nbiot",
    "NB-IoT coverage classes CE0-CE2 (144/154/164 dB MCL), CE0 at the nbiot preset, each deeper class 1/8 of the rate; exponential dwell, moves to a neighbouring class (docs/link-traces.md)",
)];

/// The generator flags of `coaplab models` (only with `link-trace nbiot`).
#[derive(clap::Args, Debug, Clone)]
#[command(next_help_heading = "Link-trace generator (coaplab models link-trace nbiot)")]
pub(crate) struct GenOpts {
    /// Seed of the class path (the same seed gives the same path in both directions).
    #[arg(long, value_name = "N")]
    seed: Option<u64>,
    /// Which direction's rates and delays: down or up.
    #[arg(long, value_name = "DIR", value_parser = ["down", "up"])]
    direction: Option<String>,
    /// Length of the trace, s (it loops with this period); default 600.
    #[arg(long, value_name = "S")]
    duration_s: Option<f64>,
    /// Mean dwell time in a class, s; default 60 (no source: a parameter).
    #[arg(long, value_name = "S")]
    dwell_mean_s: Option<f64>,
    /// One-way delay CE1 adds, ms; default 0 (no source: a parameter).
    #[arg(long, value_name = "MS")]
    ce1_extra_delay_ms: Option<f64>,
    /// One-way delay CE2 adds, ms; default 0 (no source: a parameter).
    #[arg(long, value_name = "MS")]
    ce2_extra_delay_ms: Option<f64>,
    /// Write the trace to FILE instead of standard output.
    #[arg(long, value_name = "FILE")]
    out: Option<PathBuf>,
}

impl GenOpts {
    /// Whether any generator flag was given.
    pub(crate) fn any(&self) -> bool {
        self.seed.is_some()
            || self.direction.is_some()
            || self.duration_s.is_some()
            || self.dwell_mean_s.is_some()
            || self.ce1_extra_delay_ms.is_some()
            || self.ce2_extra_delay_ms.is_some()
            || self.out.is_some()
    }
}

/// `coaplab models link-trace [GENERATOR]`.
pub(crate) fn run(generator: Option<&str>, opts: &GenOpts) -> ExitCode {
    match generator {
        None if !opts.any() => {
            print!("{}", describe());
            ExitCode::SUCCESS
        }
        None => fail("the generator flags need a generator: coaplab models link-trace nbiot ..."),
        Some("nbiot") => match nbiot(opts) {
            Ok(()) => ExitCode::SUCCESS,
            Err(e) => fail(&e),
        },
        Some(other) => fail(&format!(
            "unknown link-trace generator '{other}'; valid names: nbiot"
        )),
    }
}

fn fail(message: &str) -> ExitCode {
    eprintln!("coaplab models link-trace: {message}");
    ExitCode::from(2)
}

/// The generators, their classes and parameters.
fn describe() -> String {
    let mut out = String::from(
        "link-trace: synthetic link traces for [network] link_trace / down_link_trace / up_link_trace \
         (and coaplab emulate --link-trace ...); the format is docs/link-traces.md.\n\nGenerators:\n",
    );
    for (name, summary) in GENERATORS {
        out.push_str(&format!("  {name:<8} {summary}\n"));
    }
    out.push_str(
        "\nnbiot classes (down / up rate bit/s, one-way delay ms before the extra delay):\n",
    );
    for c in CLASSES {
        out.push_str(&format!(
            "  {} (MCL {} dB): {} / {} bit/s, {} / {} ms\n",
            c.name, c.mcl_db, c.down_rate_bps, c.up_rate_bps, c.down_delay_ms, c.up_delay_ms
        ));
    }
    out.push_str("\nnbiot parameters (--KEY with '-' for '_'; also --seed N, --direction down|up, --out FILE):\n");
    for spec in NBIOT_TRACE_PARAMS {
        param(&mut out, spec);
    }
    out
}

/// A number of `what` in `[min, max]`.
fn bounded(flag: &str, x: f64, min: f64, max: f64) -> Result<f64, String> {
    if x.is_finite() && (min..=max).contains(&x) {
        Ok(x)
    } else {
        Err(format!("--{flag} {x}: a number in [{min}, {max}]"))
    }
}

fn nbiot(opts: &GenOpts) -> Result<(), String> {
    let seed = opts.seed.ok_or("--seed N is required")?;
    let direction = match opts.direction.as_deref() {
        Some("down") => Direction::Down,
        Some("up") => Direction::Up,
        _ => return Err("--direction down or --direction up is required".into()),
    };
    let mut params = NbiotTraceParams::default();
    if let Some(s) = opts.duration_s {
        params.duration = Duration::from_secs_f64_round_us(bounded("duration-s", s, 1.0, 1e7)?);
    }
    if let Some(s) = opts.dwell_mean_s {
        params.dwell_mean =
            Duration::from_secs_f64_round_us(bounded("dwell-mean-s", s, 0.001, 1e7)?);
    }
    let ms = |flag: &str, x: f64| {
        bounded(flag, x, 0.0, 3_600_000.0).map(|x| Duration::from_nanos((x * 1e6).round() as i64))
    };
    if let Some(x) = opts.ce1_extra_delay_ms {
        params.extra_delay[0] = ms("ce1-extra-delay-ms", x)?;
    }
    if let Some(x) = opts.ce2_extra_delay_ms {
        params.extra_delay[1] = ms("ce2-extra-delay-ms", x)?;
    }
    let trace = generate(&params, seed, direction);
    let dir = match direction {
        Direction::Down => "down",
        Direction::Up => "up",
    };
    let secs = |d: Duration| d.as_secs_f64();
    let comment = [
        format!(
            "coaplab models link-trace nbiot --seed {seed} --direction {dir} --duration-s {} \
             --dwell-mean-s {} --ce1-extra-delay-ms {} --ce2-extra-delay-ms {}",
            secs(params.duration),
            secs(params.dwell_mean),
            secs(params.extra_delay[0]) * 1e3,
            secs(params.extra_delay[1]) * 1e3
        ),
        "NB-IoT coverage classes CE0/CE1/CE2 (docs/link-traces.md); synthetic, not a measurement"
            .to_string(),
    ];
    let text = write(&trace, &comment);
    match &opts.out {
        None => {
            print!("{text}");
            Ok(())
        }
        Some(path) => coaplab_lab::results::store::write_atomic(path, text.as_bytes())
            .map_err(|e| format!("writing {}: {e}", path.display())),
    }
}
