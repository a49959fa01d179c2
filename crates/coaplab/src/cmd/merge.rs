//! `coaplab merge`: join the results directories of the shards of one plan (`coaplab run
//! --shard K/N`) into one, identical to a single-machine run of the plan.

use std::path::PathBuf;
use std::process::ExitCode;

use coaplab_lab::report;
use coaplab_lab::results::merge;

/// Arguments of `coaplab merge`.
#[derive(clap::Args, Debug)]
#[command(after_long_help = "\
Each DIR is a results directory of `coaplab run --shard K/N` (or of any run of the same plan).
Every run's files are verified where they are (checksums, run id, plan fingerprint), exactly
as --resume verifies them, and copied into OUT; flows.csv, summary.csv, runs.csv and
manifest.json are then assembled by the code a single-machine run ends with. flows.csv and
summary.csv are byte-identical to those of a single-machine run of the plan; manifest.json and
runs.csv differ only in wall times (wall_s; the merged wall_s is the longest shard's).

Refused, with nothing written: directories of different plans (scenario text, --set, --reps,
--seed) or code versions, and a plan with runs that no directory holds (each is named, with
the shard that should have run it). A run that failed is merged as failed, as a single run
records it; rerun it with `coaplab run ... --shard K/N --out DIR --resume` first.

EXAMPLE:
  for k in 1 2 3; do coaplab run scenarios/quickstart.toml --shard $k/3 --out results/q$k; done
  coaplab merge --out results/q results/q1 results/q2 results/q3")]
pub(crate) struct Args {
    /// The shard directories.
    #[arg(value_name = "DIR", required = true)]
    dirs: Vec<PathBuf>,
    /// The merged results directory (new).
    #[arg(long, value_name = "OUT")]
    out: PathBuf,
}

pub(crate) fn run(args: Args) -> ExitCode {
    match merge::merge(&args.out, &args.dirs) {
        Ok(merged) => {
            print!("{}", report::table(&merged.summary));
            eprintln!(
                "coaplab merge: {} runs from {} directories ({} failed) -> {}",
                merged.total,
                args.dirs.len(),
                merged.failed,
                args.out.display()
            );
            if merged.failed > 0 {
                return ExitCode::FAILURE;
            }
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("coaplab merge: {e}");
            ExitCode::FAILURE
        }
    }
}
