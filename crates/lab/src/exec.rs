//! Runs a plan in parallel across cores: a shared work queue over scoped threads (with one
//! job, the calling thread), each run recorded atomically as it ends, a failing or panicking
//! run recorded as failed with its error, finished runs skipped on `--resume` (runs whose
//! files do not verify are run again).
//! Each worker builds its runs' [`RunSpec`]s from the lazy [`Plan`] as it takes them.
//! [`execute_until`] also stops early when asked (Ctrl-C in the Python package): no run
//! starts after that, the runs under way end and are recorded, and the files are assembled,
//! so `--resume` continues the sweep.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::mpsc;
use std::time::{Duration, Instant as WallClock};

use crate::results::{Manifest, ResultsDir, ResultsError, RunError, RunResult, SummaryRow};
use crate::scenario::{Plan, RunSpec, SpecCache};
use crate::shard::Shard;

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
    /// Set only in the one call made before any run starts, when some runs are run again
    /// because their files in `runs/` did not verify: each such run and why.
    pub unverified: Vec<(usize, String)>,
}

/// The outcome of [`execute`].
#[derive(Debug, Clone)]
pub struct Outcome {
    /// Runs in the plan (in the shard, for [`execute_shard`]).
    pub total: usize,
    /// Runs skipped because an earlier invocation finished them.
    pub skipped: usize,
    /// Runs run again because their files did not verify (counted in `ok` or `failed`).
    pub unverified: usize,
    /// Runs finished in this invocation.
    pub ok: usize,
    /// Runs failed in this invocation.
    pub failed: usize,
    /// Whether [`execute_until`]'s `stop` ended the sweep early (the runs not started are
    /// still pending in the directory).
    pub interrupted: bool,
    /// The summary rows over every finished run.
    pub summary: Vec<SummaryRow>,
    /// The manifest as written.
    pub manifest: Manifest,
}

/// Runs every run of `plan` not yet finished in `dir` on `jobs` threads (one job: on this
/// thread), then assembles the results files. `progress` is called on this thread after each
/// run, and once before any when some runs' files did not verify ([`Progress::unverified`]).
pub fn execute(
    plan: &Plan<'_>,
    dir: &ResultsDir,
    manifest: Manifest,
    jobs: usize,
    run_fn: RunFn,
    progress: &mut dyn FnMut(&Progress),
) -> Result<Outcome, ResultsError> {
    execute_shard(plan, Shard::WHOLE, dir, manifest, jobs, run_fn, progress)
}

/// [`execute`] for the runs of one shard of `plan` only ([`Shard::contains`]); the other runs
/// stay pending in `dir`, whose files are assembled as for a whole plan. Counts in
/// [`Progress`] and [`Outcome`] are the shard's.
pub fn execute_shard(
    plan: &Plan<'_>,
    shard: Shard,
    dir: &ResultsDir,
    manifest: Manifest,
    jobs: usize,
    run_fn: RunFn,
    progress: &mut dyn FnMut(&Progress),
) -> Result<Outcome, ResultsError> {
    execute_with(plan, shard, dir, manifest, jobs, &run_fn, progress)
}

/// [`execute_shard`] with any function of the run's [`RunSpec`], e.g. one that traces chosen runs
/// ([`crate::trace::TraceOptions::run`]).
pub fn execute_with(
    plan: &Plan<'_>,
    shard: Shard,
    dir: &ResultsDir,
    manifest: Manifest,
    jobs: usize,
    run_fn: &(dyn Fn(&RunSpec) -> Result<RunResult, RunError> + Sync),
    progress: &mut dyn FnMut(&Progress),
) -> Result<Outcome, ResultsError> {
    execute_until(plan, shard, dir, manifest, jobs, run_fn, progress, None)
}

/// How often [`execute_until`] polls its `stop` while runs are under way.
pub const STOP_POLL: Duration = Duration::from_millis(100);

/// [`execute_with`] that polls `stop` on this thread after each run and every [`STOP_POLL`]
/// while runs are under way (on worker threads then, even with one job). Once it returns
/// true no run starts; the runs under way end and are recorded, the files are assembled from
/// the runs finished, and the outcome says [`Outcome::interrupted`].
#[allow(clippy::too_many_arguments)]
pub fn execute_until(
    plan: &Plan<'_>,
    shard: Shard,
    dir: &ResultsDir,
    mut manifest: Manifest,
    jobs: usize,
    run_fn: &(dyn Fn(&RunSpec) -> Result<RunResult, RunError> + Sync),
    progress: &mut dyn FnMut(&Progress),
    mut stop_when: Option<&mut dyn FnMut() -> bool>,
) -> Result<Outcome, ResultsError> {
    let started = WallClock::now();
    let crate::results::Pending {
        runs: mut pending,
        mut unverified,
    } = dir.pending(plan.len())?;
    pending.retain(|&run| shard.contains(run));
    unverified.retain(|&(run, _)| shard.contains(run));
    let total = shard.len_of(plan.len());
    let skipped = total - pending.len();
    let mut state = Progress {
        done: skipped,
        total,
        failed: 0,
        error: None,
        unverified,
    };
    let unverified = state.unverified.len();
    if unverified > 0 {
        progress(&state);
        state.unverified.clear();
    }
    let next = AtomicUsize::new(0);
    let stop = AtomicBool::new(false);
    let polling = stop_when.is_some();
    let interrupted = std::cell::Cell::new(false);
    let mut poll = |stop: &AtomicBool| {
        if let Some(f) = stop_when.as_mut() {
            if !interrupted.get() && f() {
                interrupted.set(true);
                stop.store(true, Ordering::Relaxed);
            }
        }
    };
    poll(&stop);
    let mut fatal = None;
    // What a worker does: takes the next pending run, runs it, records it, and hands its
    // outcome to `report` (false: stop taking runs).
    let work = |report: &mut dyn FnMut(usize, Result<Option<String>, ResultsError>) -> bool| {
        // Workers take runs in order, so consecutive runs of one combination mostly land on
        // one worker and its cache builds the configuration once.
        let mut cache = SpecCache::default();
        while !stop.load(Ordering::Relaxed) {
            let i = next.fetch_add(1, Ordering::Relaxed);
            let Some(&run) = pending.get(i) else { break };
            let spec = &cache.spec(plan, run);
            let t0 = WallClock::now();
            let cpu0_s = thread_cpu_s();
            let outcome = catch_unwind(AssertUnwindSafe(|| run_fn(spec)))
                .unwrap_or_else(|payload| Err(RunError::Panicked(panic_text(payload))));
            let cpu_s = thread_cpu_s() - cpu0_s;
            let wall_s = t0.elapsed().as_secs_f64();
            let error = outcome.as_ref().err().map(ToString::to_string);
            let written = dir.record(spec, &outcome, wall_s, cpu_s).map(|()| error);
            if !report(spec.run, written) {
                break;
            }
        }
    };
    // What this thread does with each outcome: counts it and reports progress; a results
    // error stops every worker.
    let mut take = |run: usize, written: Result<Option<String>, ResultsError>| {
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
    };
    let workers = jobs.max(1).min(pending.len().max(1));
    if workers == 1 && !polling {
        // One worker is this thread: no thread to start, and the runs reuse the memory the
        // process has already touched instead of faulting in a new thread's heap.
        work(&mut |run, written| {
            take(run, written);
            !stop.load(Ordering::Relaxed)
        });
    } else {
        let (tx, rx) = mpsc::channel::<(usize, Result<Option<String>, ResultsError>)>();
        std::thread::scope(|scope| {
            for _ in 0..workers {
                let tx = tx.clone();
                let work = &work;
                scope.spawn(move || work(&mut |run, written| tx.send((run, written)).is_ok()));
            }
            drop(tx);
            loop {
                match rx.recv_timeout(STOP_POLL) {
                    Ok((run, written)) => take(run, written),
                    Err(mpsc::RecvTimeoutError::Timeout) => {}
                    Err(mpsc::RecvTimeoutError::Disconnected) => break,
                }
                poll(&stop);
            }
        });
    }
    manifest.wall_s = started.elapsed().as_secs_f64();
    let summary = dir.assemble(&mut manifest, plan)?;
    if let Some(e) = fatal {
        return Err(e);
    }
    Ok(Outcome {
        total,
        skipped,
        unverified,
        ok: state.done - skipped - state.failed,
        failed: state.failed,
        interrupted: interrupted.get(),
        summary,
        manifest,
    })
}

/// CPU time (user + system) this thread has used, seconds. Around `run_fn` it is the run's
/// own cost, whatever the other workers and the process start-up took.
pub(crate) fn thread_cpu_s() -> f64 {
    let t = rustix::time::clock_gettime(rustix::time::ClockId::ThreadCPUTime);
    t.tv_sec as f64 + t.tv_nsec as f64 * 1e-9
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
