//! `coaplab trace`: run a scripted timeline of sends and ACKs through one algorithm and print
//! every timer as CSV (the engine is `coaplab_cc::trace`).

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use coaplab_cc::rng::SeededRandom;
use coaplab_cc::{registry, trace, Instant, Settings};
use coaplab_lab::files::{self, Input};

/// Arguments of `coaplab trace`.
#[derive(clap::Args, Debug)]
#[command(after_long_help = "\
TRACE FILE FORMAT (one event per line, '#' starts a comment; times in seconds, never decreasing):
  <time_s> send        a new exchange starts (one exchange in flight at a time)
  <time_s> ack [N]     the answer to the exchange in flight arrives; N (1 = original) names the
                       transmission it answers (token variants), otherwise unknown
  <time_s> reset       the device reboots: the algorithm forgets the destination

Between events the timers fire by themselves (an ack at the expiry instant wins); after the last
event the exchange in flight runs until it gives up.

OUTPUT: CSV with header time_s,event,exchange,transmission,timer_s,rto_s,state.
  transmit  a (re)transmission; timer_s = the timer armed
  expire    the armed timer expired
  complete  the answer arrived; rto_s = the RTO after the update
  giveup    MAX_RETRANSMIT retransmissions were not answered
  reset     the algorithm forgot the destination
state is the algorithm's state name (FASOR), empty otherwise.

EXAMPLE:
  printf '0 send\\n200 ack\\n' > t.txt
  coaplab trace --cc default --set timer_max_s=60 --set max_retransmit=20 t.txt

See `coaplab algorithms` for names and `coaplab algorithms NAME` for parameters.")]
pub(crate) struct Args {
    /// Algorithm name (see `coaplab algorithms`).
    #[arg(long = "cc", value_name = "NAME")]
    cc: String,
    /// Set a parameter, e.g. `--set timer_max_s=60` or `--set preset=fasor18`; repeatable,
    /// later settings win over earlier ones and over the preset.
    #[arg(long = "set", value_name = "KEY=VALUE")]
    set: Vec<String>,
    /// Seed of the random stream that draws the dithered timers.
    #[arg(long, value_name = "S", default_value_t = 1)]
    seed: u64,
    /// The trace file ('-' reads standard input).
    #[arg(value_name = "FILE")]
    file: PathBuf,
}

pub(crate) fn run(args: Args) -> ExitCode {
    match trace_file(&args) {
        Ok(csv) => {
            print!("{csv}");
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("coaplab trace: {e}");
            ExitCode::FAILURE
        }
    }
}

fn trace_file(args: &Args) -> Result<String, String> {
    let settings =
        Settings::parse(args.set.iter().map(String::as_str)).map_err(|e| e.to_string())?;
    let mut alg = registry::build(&args.cc, &settings, Instant::ZERO).map_err(|e| e.to_string())?;
    let name = args.file.display().to_string();
    // At most 16 MiB (docs/scenarios.md, "Input size limits"): /dev/zero is refused at once.
    let text = if name == "-" {
        files::read_from(
            std::io::stdin(),
            Path::new("standard input"),
            Input::TraceScript,
        )
    } else {
        files::read_text(&args.file, Input::TraceScript)
    }
    .map_err(|e| e.to_string())?;
    let mut rng = SeededRandom::new(args.seed);
    trace::run_text(alg.as_mut(), &text, &mut rng).map_err(|e| format!("{name}: {e}"))
}
