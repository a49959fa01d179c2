//! `coaplab suite run | report`: a benchmark suite (docs/suite.md) run for chosen algorithms,
//! each experiment × algorithm a `coaplab run` results directory, scored and ranked.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant as WallClock;

use coaplab_lab::results::store::write_atomic;
use coaplab_lab::shard::Shard;
use coaplab_lab::suite::run::{self, RunOptions};
use coaplab_lab::suite::{self, score, Suite};

/// Arguments of `coaplab suite`.
#[derive(clap::Args, Debug)]
pub(crate) struct Args {
    #[command(subcommand)]
    command: Command,
}

#[derive(clap::Subcommand, Debug)]
enum Command {
    /// Run a suite for the chosen algorithms (every experiment × algorithm a results directory
    /// of `coaplab run`, finished ones skipped), then score and rank them: DIR/leaderboard.csv,
    /// DIR/ranking.csv and a table on stdout.
    Run(RunArgs),
    /// Join the results directories of the shards of one suite run (`suite run --shard K/N`)
    /// into one, identical to a single-machine run, and score it.
    Merge(MergeArgs),
    /// Write DIR/suite.html: the leaderboard, then per experiment its scores and a scatter of
    /// FCT against retransmissions per delivered message (1-sigma ellipses over runs).
    Report(ReportArgs),
}

/// Arguments of `coaplab suite run`.
#[derive(clap::Args, Debug)]
#[command(after_long_help = "\
For each experiment of the suite and each algorithm, the experiment's scenario with its
reductions (`set`) and `flows.K.cc=ALG` for every flow group K under test is run into
DIR/EXPERIMENT/ALG/ with the machinery of `coaplab run` (flows.csv, summary.csv, manifest.json,
runs/). The algorithms of an experiment share its seeds (paired comparison). A rerun with the
same --out continues: finished cells are skipped, a cell interrupted part-way resumes where it
stopped (as `coaplab run --resume`); more --cc names add their cells.

SCORE (DIR/leaderboard.csv, per experiment x algorithm, over the flows under test):
  fct_p50_s, fct_p95_s  FCT median and 95th percentile, replications pooled; an unfinished flow
                        counts as at least its elapsed time, above every finished one (>=X:
                        unbounded, as summary.csv)
  retransmissions_per_message, unnecessary_per_flow, unfinished, jain (Jain's index of the
  flows' exchange rates per run, averaged), competitor_fct_p50_s and harm (competing groups)
  rank                  by fct_p50 (ties by fct_p95; equal keys share the mean position)
DIR/ranking.csv: per algorithm the mean normalised rank, mean over experiments of
(rank - 1)/(n - 1), 0 = first everywhere, and the experiments won.

EXAMPLES:
  coaplab suite run suites/smoke.toml --cc default cocoa fasor --out results/smoke
  coaplab suite run --cc default fasor --out results/standard --jobs 2
  coaplab suite run suites/standard.toml --dry-run
  coaplab suite run suites/smoke.toml --cc default fasor --shard 1/2 --out results/s1
  coaplab suite run suites/smoke.toml --cc default fasor --shard 2/2 --out results/s2
  coaplab suite merge --out results/s results/s1 results/s2
  coaplab suite report results/smoke
  coaplab suite run suites/smoke.toml --cc default --cc-from examples/python-algorithm/rfc6298.py

ALGORITHMS IN PYTHON: --cc-from FILE.py loads the algorithm classes the file lists in
ALGORITHMS (examples/python-algorithm) and runs the suite in `python3 -m coaplab suite run`
with the same arguments (COAPLAB_PYTHON: the interpreter, default python3; the package:
`pip install ./python`); this binary does not link Python.

CLUSTERS: `python -m coaplab.dask suite SUITE.toml --scheduler tcp://HOST:8786 --cc ...` runs
one --shard per Dask task, then merges; scripts/slurm-suite.sh SUITE.toml N OUT does the same
on Slurm. See docs/suite.md.")]
pub(crate) struct RunArgs {
    /// The suite file.
    #[arg(value_name = "SUITE.toml", default_value = "suites/standard.toml")]
    suite: PathBuf,
    /// The algorithms to compare [default: every built-in algorithm].
    #[arg(long, value_name = "NAME", num_args = 1..)]
    cc: Vec<String>,
    /// Python files defining algorithms (their names then count as --cc names): the run is
    /// handed over to `python3 -m coaplab suite run` with the same arguments, which needs the
    /// coaplab Python package (`pip install ./python`; COAPLAB_PYTHON names another Python).
    #[arg(long, value_name = "FILE.py", num_args = 1..)]
    cc_from: Vec<PathBuf>,
    /// The suite's results directory [default: results/suite-<name>-<UTC timestamp>].
    #[arg(long, value_name = "DIR")]
    out: Option<PathBuf>,
    /// Runs simulated at once [default: the number of cores].
    #[arg(long, value_name = "J", value_parser = clap::value_parser!(u32).range(1..))]
    jobs: Option<u32>,
    /// Run only shard K of N of every cell (the runs whose id modulo N is K-1), for running
    /// one suite on N machines; join their --out directories with `coaplab suite merge`.
    #[arg(long, value_name = "K/N")]
    shard: Option<Shard>,
    /// Check the suite and every experiment x algorithm, print the plan (per experiment its
    /// scenario, reductions, groups under test, seed and runs), without running.
    #[arg(long)]
    dry_run: bool,
    /// No progress lines (errors are still printed).
    #[arg(long, short = 'q')]
    quiet: bool,
}

/// Arguments of `coaplab suite merge`.
#[derive(clap::Args, Debug)]
pub(crate) struct MergeArgs {
    /// The shards' directories (of `coaplab suite run --shard K/N`, the same --cc).
    #[arg(value_name = "DIR", required = true)]
    dirs: Vec<PathBuf>,
    /// The merged suite directory (new).
    #[arg(long, value_name = "OUT")]
    out: PathBuf,
    /// The Python files of the algorithms written in Python that the shards ran (as given to
    /// `suite run --cc-from`): the merge is handed over to `python3 -m coaplab suite merge`.
    #[arg(long, value_name = "FILE.py", num_args = 1..)]
    cc_from: Vec<PathBuf>,
}

/// Arguments of `coaplab suite report`.
#[derive(clap::Args, Debug)]
pub(crate) struct ReportArgs {
    /// A suite's results directory (of `coaplab suite run`).
    #[arg(value_name = "DIR")]
    dir: PathBuf,
    /// Where to write the page [default: DIR/suite.html].
    #[arg(long, short = 'o', value_name = "FILE")]
    out: Option<PathBuf>,
}

pub(crate) fn run(args: Args) -> ExitCode {
    let result = match args.command {
        Command::Run(a) => run_suite(&a),
        Command::Merge(a) => merge(&a),
        Command::Report(a) => report(&a),
    };
    match result {
        Ok(code) => code,
        Err(e) => {
            eprintln!("coaplab suite: {e}");
            ExitCode::FAILURE
        }
    }
}

type Error = Box<dyn std::error::Error>;

fn run_suite(args: &RunArgs) -> Result<ExitCode, Error> {
    if !args.cc_from.is_empty() {
        return super::python::hand_over("suite run", &args.cc_from);
    }
    let suite = Suite::load(&args.suite)?;
    let algorithms = if args.cc.is_empty() {
        suite::builtin_algorithms()
    } else {
        let mut list: Vec<String> = Vec::new();
        for a in &args.cc {
            if !list.contains(a) {
                list.push(a.clone());
            }
        }
        list
    };
    let cells = suite.cells(&algorithms)?;
    if args.dry_run {
        print!("{}", run::plan_text(&suite, &algorithms));
        return Ok(ExitCode::SUCCESS);
    }
    let out = args
        .out
        .clone()
        .unwrap_or_else(|| super::run::default_out(&format!("suite-{}", suite.name)));
    let jobs = args.jobs.map(|j| j as usize).unwrap_or_else(|| {
        std::thread::available_parallelism()
            .map(|n| n.get())
            .unwrap_or(1)
    });
    let runs: usize = cells
        .iter()
        .map(|c| suite.experiments[c.experiment].runs)
        .sum();
    eprintln!(
        "coaplab suite: {} ({}): {} experiments x {} algorithms = {} cells, {runs} runs on {jobs} \
         threads -> {}",
        suite.name,
        suite.file,
        suite.experiments.len(),
        algorithms.len(),
        cells.len(),
        out.display()
    );
    let started = WallClock::now();
    let quiet = args.quiet;
    let outcome = run::run(
        &suite,
        &algorithms,
        RunOptions {
            out: &out,
            jobs,
            shard: args.shard,
        },
        &coaplab_lab::sim::run_one,
        &mut |line| {
            // Failed runs are errors: printed even with --quiet.
            if !quiet || line.contains(" failed: ") {
                eprintln!("coaplab suite: {line}");
            }
        },
        None,
    )?;
    let (skipped, failed) = (outcome.skipped, outcome.failed);
    if let Some(shard) = args.shard {
        eprintln!(
            "coaplab suite: shard {shard}: {} cells run, {skipped} skipped (finished earlier), \
             {failed} runs failed in {:.1} s; join the shards' directories with coaplab suite \
             merge --out OUT DIR...",
            outcome.cells - skipped,
            started.elapsed().as_secs_f64(),
        );
        return Ok(if failed > 0 {
            ExitCode::FAILURE
        } else {
            ExitCode::SUCCESS
        });
    }
    print!("{}", run::write_scores(&out)?);
    eprintln!(
        "coaplab suite: {} cells run, {skipped} skipped (finished earlier), {failed} runs failed \
         in {:.1} s; {} and {}; coaplab suite report {} writes the page",
        outcome.cells - skipped,
        started.elapsed().as_secs_f64(),
        out.join("leaderboard.csv").display(),
        out.join("ranking.csv").display(),
        out.display()
    );
    if failed > 0 {
        eprintln!(
            "coaplab suite: failed runs are listed with their error in each cell's manifest.json; \
             the same command again reruns them"
        );
        return Ok(ExitCode::FAILURE);
    }
    Ok(ExitCode::SUCCESS)
}

fn merge(args: &MergeArgs) -> Result<ExitCode, Error> {
    if !args.cc_from.is_empty() {
        return super::python::hand_over("suite merge", &args.cc_from);
    }
    let (total, failed) = suite::merge(&args.out, &args.dirs)?;
    print!("{}", run::write_scores(&args.out)?);
    eprintln!(
        "coaplab suite merge: {total} runs from {} directories ({failed} failed) -> {}",
        args.dirs.len(),
        args.out.display()
    );
    Ok(if failed > 0 {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    })
}

fn report(args: &ReportArgs) -> Result<ExitCode, Error> {
    let (record, board) = score::load(&args.dir)?;
    let page = suite::page::render(&record, &board);
    let out = args
        .out
        .clone()
        .unwrap_or_else(|| args.dir.join("suite.html"));
    write_atomic(&out, page.as_bytes()).map_err(|e| format!("{}: {e}", out.display()))?;
    eprintln!("coaplab suite report: wrote {}", out.display());
    Ok(ExitCode::SUCCESS)
}
