//! Runs a plan in parallel across cores: a shared work queue over scoped threads, each run
//! recorded atomically as it ends, a failing or panicking run recorded as failed with its
//! error, finished runs skipped on `--resume`.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::mpsc;
use std::time::Instant as WallClock;

use crate::results::{Manifest, ResultsDir, ResultsError, RunError, RunResult, SummaryRow};
use crate::scenario::RunSpec;

/// Simulates one run. [`crate::sim::run_one`] in production; tests inject fakes.
pub type RunFn = fn(&RunSpec) -> Result<RunResult, RunError>;

/// Where the sweep stands, after each run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Progress {
    /// Runs ended in this invocation (plus those skipped as already finished).
    pub done: usize,
    /// Runs in the plan.
    pub total: usize,
    /// Runs failed in this invocation.
    pub failed: usize,
    /// The error of the run that just failed, if it did.
    pub error: Option<(usize, String)>,
}

/// The outcome of [`execute`].
#[derive(Debug, Clone)]
pub struct Outcome {
    /// Runs in the plan.
    pub total: usize,
    /// Runs skipped because an earlier invocation finished them.
    pub skipped: usize,
    /// Runs finished in this invocation.
    pub ok: usize,
    /// Runs failed in this invocation.
    pub failed: usize,
    /// The summary rows over every finished run.
    pub summary: Vec<SummaryRow>,
    /// The manifest as written.
    pub manifest: Manifest,
}

/// Runs every run of `runs` not yet finished in `dir` on `jobs` threads, then assembles the
/// results files. `progress` is called on this thread after each run.
pub fn execute(
    runs: &[RunSpec],
    dir: &ResultsDir,
    mut manifest: Manifest,
    jobs: usize,
    run_fn: RunFn,
    progress: &mut dyn FnMut(&Progress),
) -> Result<Outcome, ResultsError> {
    let started = WallClock::now();
    let pending: Vec<&RunSpec> = runs.iter().filter(|r| !dir.is_finished(r.run)).collect();
    let skipped = runs.len() - pending.len();
    let next = AtomicUsize::new(0);
    let stop = AtomicBool::new(false);
    let (tx, rx) = mpsc::channel::<(usize, Result<Option<String>, ResultsError>)>();
    let mut state = Progress {
        done: skipped,
        total: runs.len(),
        failed: 0,
        error: None,
    };
    let mut fatal = None;
    std::thread::scope(|scope| {
        for _ in 0..jobs.max(1).min(pending.len().max(1)) {
            let tx = tx.clone();
            let (pending, next, stop) = (&pending, &next, &stop);
            scope.spawn(move || {
                while !stop.load(Ordering::Relaxed) {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    let Some(spec) = pending.get(i) else { break };
                    let t0 = WallClock::now();
                    let outcome = catch_unwind(AssertUnwindSafe(|| run_fn(spec)))
                        .unwrap_or_else(|payload| Err(RunError::Panicked(panic_text(payload))));
                    let wall_s = t0.elapsed().as_secs_f64();
                    let error = outcome.as_ref().err().map(ToString::to_string);
                    let written = dir.record(spec, &outcome, wall_s).map(|()| error);
                    if tx.send((spec.run, written)).is_err() {
                        break;
                    }
                }
            });
        }
        drop(tx);
        for (run, written) in rx {
            state.done += 1;
            state.error = None;
            match written {
                Ok(None) => {}
                Ok(Some(error)) => {
                    state.failed += 1;
                    state.error = Some((run, error));
                }
                Err(e) => {
                    stop.store(true, Ordering::Relaxed);
                    fatal.get_or_insert(e);
                }
            }
            progress(&state);
        }
    });
    manifest.wall_s = started.elapsed().as_secs_f64();
    let summary = dir.assemble(&mut manifest, runs)?;
    if let Some(e) = fatal {
        return Err(e);
    }
    Ok(Outcome {
        total: runs.len(),
        skipped,
        ok: state.done - skipped - state.failed,
        failed: state.failed,
        summary,
        manifest,
    })
}

fn panic_text(payload: Box<dyn std::any::Any + Send>) -> String {
    if let Some(s) = payload.downcast_ref::<&str>() {
        (*s).to_string()
    } else if let Some(s) = payload.downcast_ref::<String>() {
        s.clone()
    } else {
        "(no message)".to_string()
    }
}
