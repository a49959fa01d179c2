//! `coaplab report`: one self-contained HTML page of a results directory.

use std::path::PathBuf;
use std::process::ExitCode;

/// Arguments of `coaplab report`.
#[derive(clap::Args, Debug)]
#[command(after_long_help = "\
The page (RESULTS_DIR/report.html unless --out) holds the summary table, per group of cells
FCT box plots (box p25-p75 with the median, whiskers p10-p90, dots min and max), CDFs of
FCT, retransmissions and unnecessary retransmissions per flow; the RTO and the bottleneck
queue over time of traced runs (RESULTS_DIR/trace/RUN/events.csv and queue.csv); and with
--against, a table of ours vs the reference, the difference and whether it is within
tolerance. Charts are inline SVG: the page loads nothing from anywhere.

REFERENCE FILE (--against), TOML:
  [[reference]]
  source = \"Pesola 2020, Table 6\"
  metric = \"fct_p50_s\"          # a column of summary.csv
  value = 36.213
  tolerance_pct = 2              # or: range = [64.228, 73.388]
  [reference.cell]               # summary.csv columns selecting one row
  cc = \"tcp-newreno\"
  buffer_bytes = 2500

EXAMPLES:
  coaplab report results/quickstart-20260101-120000
  coaplab report results/tcp-cal --against scenarios/reference/pesola-table6.toml

See docs/report.md.")]
pub(crate) struct Args {
    /// A results directory written by `coaplab run` (it reads flows.csv, manifest.json and
    /// trace/ when present).
    #[arg(value_name = "RESULTS_DIR")]
    results: PathBuf,
    /// Compare the summary with the reference numbers of this TOML file.
    #[arg(long, value_name = "published.toml")]
    against: Option<PathBuf>,
    /// Where to write the page [default: RESULTS_DIR/report.html].
    #[arg(long, short = 'o', value_name = "FILE")]
    out: Option<PathBuf>,
}

pub(crate) fn run(args: Args) -> ExitCode {
    let out = args
        .out
        .clone()
        .unwrap_or_else(|| args.results.join("report.html"));
    let page = match coaplab_lab::html::render(&args.results, args.against.as_deref()) {
        Ok(page) => page,
        Err(e) => {
            eprintln!("coaplab report: {e}");
            return ExitCode::FAILURE;
        }
    };
    if let Err(e) = std::fs::write(&out, page) {
        eprintln!("coaplab report: cannot write {}: {e}", out.display());
        return ExitCode::FAILURE;
    }
    eprintln!("coaplab report: wrote {}", out.display());
    ExitCode::SUCCESS
}
