//! `coaplab report`: one self-contained HTML page of a results directory.

use std::path::PathBuf;
use std::process::ExitCode;

/// Arguments of `coaplab report`.
#[derive(clap::Args, Debug)]
#[command(after_long_help = "\
The page (RESULTS_DIR/report.html unless --out) opens with an overview: each metric (median
FCT with its 95 % CI, retransmissions, unnecessary retransmissions and expired RTOs per flow,
unfinished flows; on a mesh the thesis's metrics) against the numeric sweep axis with the most
values, one line per algorithm, one chart per value of the other axes. Then the CDF of the
expired RTO values per algorithm (RESULTS_DIR/timers.csv), per group of cells FCT box plots
(box p25-p75 with the median, whiskers p10-p90, dots min and max), CDFs of FCT,
retransmissions and unnecessary retransmissions per flow and an FCT-retransmissions scatter
(medians, 1-sigma ellipses); the RTO, the queue per direction with drops and TCP cwnd of traced
runs (RESULTS_DIR/trace/RUN/); with --against, a table of ours vs the reference; the summary
table last. Charts are inline SVG: the page loads nothing from anywhere.

With two directories (coaplab report A B; A/compare.html unless --out): cells paired by
combination, flows by replication and flow (the same seeds), the median FCT of each, B - A and
its 95 % paired bootstrap interval, as charts across the sweep and as a table.

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
  coaplab report results/before results/after

See docs/report.md.")]
pub(crate) struct Args {
    /// A results directory written by `coaplab run` (it reads flows.csv, manifest.json and
    /// trace/ when present).
    #[arg(value_name = "RESULTS_DIR")]
    results: PathBuf,
    /// A second results directory of the same plan: the page compares the two, cell by cell
    /// (B − A of the median FCT with its paired bootstrap interval).
    #[arg(value_name = "RESULTS_DIR_B")]
    other: Option<PathBuf>,
    /// Compare the summary with the reference numbers of this TOML file.
    #[arg(long, value_name = "published.toml")]
    against: Option<PathBuf>,
    /// Where to write the page [default: RESULTS_DIR/report.html].
    #[arg(long, short = 'o', value_name = "FILE")]
    out: Option<PathBuf>,
}

pub(crate) fn run(args: Args) -> ExitCode {
    if args.other.is_some() && args.against.is_some() {
        eprintln!("coaplab report: --against applies to one results directory, not to two");
        return ExitCode::FAILURE;
    }
    let default_name = if args.other.is_some() {
        "compare.html"
    } else {
        "report.html"
    };
    let out = args
        .out
        .clone()
        .unwrap_or_else(|| args.results.join(default_name));
    let page = match &args.other {
        Some(b) => coaplab_lab::html::compare::render(&args.results, b),
        None => coaplab_lab::html::render(&args.results, args.against.as_deref()),
    };
    let page = match page {
        Ok(page) => page,
        Err(e) => {
            eprintln!("coaplab report: {e}");
            return ExitCode::FAILURE;
        }
    };
    // A temporary beside `out` renamed over it (as `coaplab run` writes its results): a
    // symbolic link planted at `out` is replaced, not followed, and a reader never sees half
    // a page.
    if let Err(e) = coaplab_lab::results::store::write_atomic(&out, page.as_bytes()) {
        eprintln!("coaplab report: cannot write {}: {e}", out.display());
        return ExitCode::FAILURE;
    }
    eprintln!("coaplab report: wrote {}", out.display());
    ExitCode::SUCCESS
}
