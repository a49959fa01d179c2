//! Running a suite's cells: the loop of `coaplab suite run`, shared by the command and the
//! Python package (`coaplab.suite_run`, which registers algorithms written in Python first).

use std::path::Path;
use std::time::Instant as WallClock;

use crate::exec;
use crate::results::{store::write_atomic, Manifest, ResultsDir, RunError, RunResult};
use crate::scenario::{RunSpec, Scenario};

use crate::shard::Shard;

use super::{score, Suite, SuiteRunError};

/// How [`run`] runs the cells.
#[derive(Debug, Clone, Copy)]
pub struct RunOptions<'a> {
    /// The suite's results directory (created; `suite.json` written or extended).
    pub out: &'a Path,
    /// Runs simulated at once.
    pub jobs: usize,
    /// Only this shard of every cell (`--shard K/N`).
    pub shard: Option<Shard>,
}

/// What [`run`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct RunOutcome {
    /// Cells of the suite × algorithms.
    pub cells: usize,
    /// Cells with nothing to run (finished earlier, or no run in the shard).
    pub skipped: usize,
    /// Runs that failed in this invocation.
    pub failed: usize,
    /// Whether `stop` ended the run early (the cells not finished stay pending).
    pub interrupted: bool,
}

/// What runs one run: [`crate::sim::run_one`], or a wrapper of it (the Python package's
/// keeps each worker thread known to Python while it runs, so that an algorithm written in
/// Python is called without setting up a thread state per event).
pub type RunWith<'a> = &'a (dyn Fn(&RunSpec) -> Result<RunResult, RunError> + Sync);

/// Runs every cell of `suite` × `algorithms` not finished yet into `opts.out`, one cell after
/// the other, each on `opts.jobs` threads with the machinery of `coaplab run --resume`, each
/// run by `run_fn`. `log` gets one line per cell (and per failed run); `stop`, polled as by
/// [`exec::execute_until`], ends the run early. Scores nothing: see [`write_scores`].
pub fn run(
    suite: &Suite,
    algorithms: &[String],
    opts: RunOptions<'_>,
    run_fn: RunWith<'_>,
    log: &mut dyn FnMut(&str),
    mut stop: Option<&mut dyn FnMut() -> bool>,
) -> Result<RunOutcome, SuiteRunError> {
    let cells = suite.cells(algorithms)?;
    let out = opts.out;
    std::fs::create_dir_all(out).map_err(|source| SuiteRunError::CreateDir {
        path: out.to_path_buf(),
        source,
    })?;
    suite.write_record(out, algorithms)?;
    let shard = opts.shard.unwrap_or(Shard::WHOLE);
    let mut outcome = RunOutcome {
        cells: cells.len(),
        ..RunOutcome::default()
    };
    for (i, cell) in cells.iter().enumerate() {
        let experiment = &suite.experiments[cell.experiment];
        let label = format!(
            "[{}/{}] {} / {}",
            i + 1,
            cells.len(),
            experiment.name,
            cell.cc
        );
        let scenario = Scenario::load_with(&cell.path, &cell.sets)?;
        let plan = scenario.plan(None, None);
        let mut manifest = Manifest::new(&plan);
        manifest.overrides = cell.sets.clone();
        manifest.shard = opts.shard.map(|s| s.to_string());
        let dir_path = cell.dir(suite, out);
        let dir = ResultsDir::open(&dir_path, &manifest, true)?;
        let pending = dir.pending(plan.len())?.runs;
        if !pending.iter().any(|&run| shard.contains(run)) {
            outcome.skipped += 1;
            if shard.len_of(plan.len()) == 0 {
                log(&format!("{label}: no run in shard {shard}"));
            } else {
                log(&format!("{label}: finished earlier, skipped"));
            }
            continue;
        }
        let t0 = WallClock::now();
        let cell_outcome = exec::execute_until(
            &plan,
            shard,
            &dir,
            manifest,
            opts.jobs,
            run_fn,
            &mut |p| {
                if let Some((run, error)) = &p.error {
                    log(&format!("{label}: run {run} failed: {error}"));
                }
            },
            stop.as_mut().map(|s| &mut **s as &mut dyn FnMut() -> bool),
        )?;
        outcome.failed += cell_outcome.failed;
        log(&format!(
            "{label}: {} runs in {:.1} s{}",
            cell_outcome.ok + cell_outcome.failed,
            t0.elapsed().as_secs_f64(),
            if cell_outcome.failed > 0 {
                format!(", {} failed", cell_outcome.failed)
            } else {
                String::new()
            }
        ));
        if cell_outcome.interrupted {
            outcome.interrupted = true;
            break;
        }
    }
    Ok(outcome)
}

/// Scores the suite directory `out`: writes `leaderboard.csv` and `ranking.csv`, returns the
/// terminal table.
pub fn write_scores(out: &Path) -> Result<String, SuiteRunError> {
    let (_, board) = score::load(out)?;
    write_atomic(
        &out.join("leaderboard.csv"),
        score::leaderboard_csv(&board).as_bytes(),
    )?;
    write_atomic(
        &out.join("ranking.csv"),
        score::ranking_csv(&board).as_bytes(),
    )?;
    Ok(score::table(&board))
}

/// What `coaplab suite run --dry-run` prints: per experiment its scenario, reductions, groups
/// under test, seed and runs.
pub fn plan_text(suite: &Suite, algorithms: &[String]) -> String {
    let per_algorithm: usize = suite.experiments.iter().map(|e| e.runs).sum();
    let mut out = format!(
        "suite {} ({}): {} experiments x {} algorithms, {per_algorithm} runs per algorithm, {} \
         runs\n",
        suite.name,
        suite.file,
        suite.experiments.len(),
        algorithms.len(),
        per_algorithm * algorithms.len()
    );
    for e in &suite.experiments {
        out.push_str(&format!(
            "  {}: {} with {}; flow groups under test {:?}; seed {}, {} replications, {} runs\n",
            e.name,
            e.scenario,
            if e.sets.is_empty() {
                "no reductions".to_string()
            } else {
                e.sets.join(" ")
            },
            e.under_test,
            e.seed,
            e.replications,
            e.runs
        ));
    }
    out.push_str(&format!("  algorithms: {}\n", algorithms.join(" ")));
    out
}
