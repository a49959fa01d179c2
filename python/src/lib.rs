//! `coaplab._native`: the Rust half of the `coaplab` Python package (PyO3). Each function is a
//! thin wrapper over the library code the `coaplab` command runs, so results are the same
//! byte for byte; the Python half (`coaplab/__init__.py`) turns them into pandas objects.

mod algorithm;
mod suite;

use std::cell::RefCell;
use std::path::{Path, PathBuf};

use coaplab_cc::params::ParamSpec;
use coaplab_cc::rng::SeededRandom;
use coaplab_cc::{registry, trace as cc_trace, Instant, Settings};
use coaplab_lab::exec::{self, Progress};
use coaplab_lab::results::{merge as lab_merge, Manifest, ResultsDir};
use coaplab_lab::scenario::{self, RunSpec, Scenario};
use coaplab_lab::shard::Shard;
use coaplab_lab::trace::{RunSelection, TraceFormat, TraceOptions};
use pyo3::create_exception;
use pyo3::exceptions::PyException;
use pyo3::prelude::*;
use pyo3::types::PyDict;

create_exception!(
    _native,
    CoaplabError,
    PyException,
    "A scenario, setting, trace or results directory that coaplab refuses; the message names \
     the file, line and key, or the directory, as the command line does."
);

fn err(e: impl std::fmt::Display) -> PyErr {
    CoaplabError::new_err(e.to_string())
}

/// Simulates scenario text `source` (labelled `file` in messages and the manifest) into the
/// results directory `out`, as `coaplab run` does: `sets` are `--set KEY=VALUE` overrides,
/// `reps`, `seed`, `jobs`, `shard` ("K/N") and `resume` as the flags of the same names, and
/// `trace_dir`, `trace_runs` and `trace_format` as `--trace`, `--trace-runs` and
/// `--trace-format` (the scenario's `[output] trace` turns tracing on too, unless
/// `trace_off`). `progress`, if given, is called as `progress(done, total, failed)` after each
/// run. The runs execute with the GIL released; Python's signal handlers run every 100 ms
/// (`Python::check_signals`), so Ctrl-C raises KeyboardInterrupt here once the runs under way
/// have ended and been recorded, the results files assembled from the runs finished (resume
/// continues the sweep); an exception raised by `progress` stops the sweep the same way.
/// Returns (runs in the plan or shard, finished now, skipped as already finished, failed, the
/// trace directory or None).
#[pyfunction]
#[pyo3(signature = (source, file, out, sets=Vec::new(), reps=None, seed=None, jobs=None, shard=None, resume=false, trace_dir=None, trace_runs=None, trace_format=None, trace_off=false, progress=None))]
#[allow(clippy::too_many_arguments)]
fn run(
    py: Python<'_>,
    source: String,
    file: String,
    out: PathBuf,
    sets: Vec<String>,
    reps: Option<u64>,
    seed: Option<u64>,
    jobs: Option<usize>,
    shard: Option<String>,
    resume: bool,
    trace_dir: Option<PathBuf>,
    trace_runs: Option<String>,
    trace_format: Option<String>,
    trace_off: bool,
    progress: Option<Py<PyAny>>,
) -> PyResult<RunOutcome> {
    let reps = reps
        .map(|r| {
            scenario::check_replications(&r.to_string())
                .map_err(|e| err(format!("reps: expected {e}")))
        })
        .transpose()?;
    let seed = seed
        .map(|s| {
            scenario::check_seed(&s.to_string()).map_err(|e| err(format!("seed: expected {e}")))
        })
        .transpose()?;
    let shard_arg = shard.map(|s| s.parse::<Shard>().map_err(err)).transpose()?;
    let trace_runs = trace_runs
        .map(|r| RunSelection::parse(&r).map_err(|e| err(format!("trace runs: {e}"))))
        .transpose()?;
    let trace_format = trace_format
        .map(|f| TraceFormat::parse(&f).map_err(|e| err(format!("trace format: {e}"))))
        .transpose()?;
    let text = if sets.is_empty() {
        source
    } else {
        scenario::apply_overrides(&source, &file, &sets).map_err(err)?
    };
    let scenario = Scenario::parse(&text, &file).map_err(err)?;
    let jobs = jobs
        .unwrap_or_else(|| {
            std::thread::available_parallelism()
                .map(|n| n.get())
                .unwrap_or(1)
        })
        .max(1);
    // As `coaplab run`: --trace DIR, --trace-runs or [output] trace turn tracing on.
    let on = !trace_off
        && (trace_dir.is_some() || trace_runs.is_some() || scenario.output.trace.is_some());
    let trace = on.then(|| TraceOptions {
        dir: trace_dir.unwrap_or_else(|| out.join("trace")),
        runs: trace_runs
            .or_else(|| scenario.output.trace.clone())
            .unwrap_or_default(),
        format: trace_format
            .or(scenario.output.trace_format)
            .unwrap_or_default(),
    });
    // The simulation holds no Python object: other Python threads (Dask workers) run meanwhile.
    let (outcome, raised) = py.detach(|| {
        // The error that stopped the sweep: KeyboardInterrupt, or what `progress` raised.
        let raised: RefCell<Option<PyErr>> = RefCell::new(None);
        let sweep = Sweep {
            reps,
            seed,
            shard: shard_arg,
            sets,
            out: &out,
            resume,
            jobs,
        };
        let outcome = sweep.execute(&scenario, trace.as_ref(), progress.as_ref(), &raised);
        (outcome, raised.into_inner())
    });
    let outcome = outcome?;
    if let Some(e) = raised {
        return Err(e);
    }
    Ok((
        outcome.total,
        outcome.ok,
        outcome.skipped,
        outcome.failed,
        trace.map(|t| t.dir),
    ))
}

/// What `run` returns to Python: (total, ok, skipped, failed, trace directory).
type RunOutcome = (usize, usize, usize, usize, Option<PathBuf>);

/// The flags of one `run`.
struct Sweep<'a> {
    reps: Option<u32>,
    seed: Option<u64>,
    shard: Option<Shard>,
    sets: Vec<String>,
    out: &'a Path,
    resume: bool,
    jobs: usize,
}

impl Sweep<'_> {
    /// Runs the plan of `scenario` without the GIL, taking it only to call `progress` after
    /// each run and to run Python's signal handlers every [`exec::STOP_POLL`]; the first
    /// exception either raises goes into `raised` and stops the sweep.
    fn execute(
        self,
        scenario: &Scenario,
        trace: Option<&TraceOptions>,
        progress: Option<&Py<PyAny>>,
        raised: &RefCell<Option<PyErr>>,
    ) -> PyResult<exec::Outcome> {
        let plan = scenario.plan(self.reps, self.seed);
        if let Some(t) = trace {
            if let RunSelection::Runs(ranges) = &t.runs {
                if ranges.iter().all(|&(first, _)| first >= plan.len()) {
                    return Err(err(format!(
                        "trace runs {}: the plan has {} runs (0 to {})",
                        t.runs,
                        plan.len(),
                        plan.len() - 1
                    )));
                }
            }
        }
        let mut manifest = Manifest::new(&plan);
        manifest.shard = self.shard.map(|s| s.to_string());
        manifest.overrides = self.sets;
        let dir = ResultsDir::open(self.out, &manifest, self.resume).map_err(err)?;
        let run_fn: exec::RunFn = coaplab_lab::sim::run_one;
        let traced = known_thread(|spec: &RunSpec| match trace {
            Some(t) => t.run(spec, run_fn, coaplab_lab::sim::run_traced),
            None => run_fn(spec),
        });
        let mut report = |p: &Progress| {
            let Some(callback) = progress else { return };
            if raised.borrow().is_some() || !p.unverified.is_empty() {
                return;
            }
            if let Err(e) = Python::attach(|py| callback.call1(py, (p.done, p.total, p.failed))) {
                *raised.borrow_mut() = Some(e);
            }
        };
        let mut stop = || {
            if raised.borrow().is_none() {
                if let Err(e) = Python::attach(|py| py.check_signals()) {
                    *raised.borrow_mut() = Some(e);
                }
            }
            raised.borrow().is_some()
        };
        exec::execute_until(
            &plan,
            self.shard.unwrap_or(Shard::WHOLE),
            &dir,
            manifest,
            self.jobs,
            &traced,
            &mut report,
            Some(&mut stop),
        )
        .map_err(err)
    }
}

/// `run_fn` run with the worker thread known to Python: attached once, then detached for the
/// run (the GIL released). An algorithm written in Python ([`algorithm`]) takes the GIL per
/// event; on a thread Python does not know, each of those would create and destroy a thread
/// state, which costs more than the call itself.
pub(crate) fn known_thread<R: Send>(
    run_fn: impl Fn(&RunSpec) -> R + Sync,
) -> impl Fn(&RunSpec) -> R + Sync {
    move |spec| Python::attach(|py| py.detach(|| run_fn(spec)))
}

/// Joins shard directories into `out`, as `coaplab merge`. Returns (runs, failed runs).
#[pyfunction]
fn merge(py: Python<'_>, out: PathBuf, dirs: Vec<PathBuf>) -> PyResult<(usize, usize)> {
    py.detach(move || {
        let merged = lab_merge::merge(&out, &dirs).map_err(err)?;
        Ok((merged.total, merged.failed))
    })
}

/// The CSV of `coaplab trace --cc CC --set ... --seed SEED` on the timeline `text`.
#[pyfunction]
#[pyo3(signature = (cc, text, sets=Vec::new(), seed=1))]
fn trace(cc: &str, text: &str, sets: Vec<String>, seed: u64) -> PyResult<String> {
    let settings = Settings::parse(sets.iter().map(String::as_str)).map_err(err)?;
    let mut alg = registry::build(cc, &settings, Instant::ZERO).map_err(err)?;
    let mut rng = SeededRandom::new(seed);
    cc_trace::run_text(alg.as_mut(), text, &mut rng).map_err(err)
}

fn param<'py>(py: Python<'py>, algorithm: &str, spec: &ParamSpec) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    d.set_item("algorithm", algorithm)?;
    d.set_item("key", spec.key)?;
    d.set_item("default", spec.default.to_string())?;
    d.set_item("range", spec.kind.describe())?;
    d.set_item("help", spec.help)?;
    d.set_item("source", spec.source)?;
    Ok(d)
}

/// One algorithm for Python: (name, summary, [parameter dicts]).
type AlgorithmRow<'py> = (String, String, Vec<Bound<'py, PyDict>>);

/// Every algorithm: (name, summary, [parameter dicts]) as `coaplab algorithms [NAME]` lists.
#[pyfunction]
fn algorithms(py: Python<'_>) -> PyResult<Vec<AlgorithmRow<'_>>> {
    registry::all()
        .into_iter()
        .map(|a| {
            let params = a
                .params
                .iter()
                .flat_map(|g| g.iter())
                .map(|p| param(py, a.name, p))
                .collect::<PyResult<Vec<_>>>()?;
            Ok((a.name.to_string(), a.summary.to_string(), params))
        })
        .collect()
}

/// Checks scenario text (with overrides) and returns (name, combinations, runs, [(key,
/// column, values)]) as `coaplab run --dry-run` prints them.
#[pyfunction]
#[pyo3(signature = (source, file, sets=Vec::new(), reps=None))]
#[allow(clippy::type_complexity)]
fn plan(
    source: String,
    file: String,
    sets: Vec<String>,
    reps: Option<u32>,
) -> PyResult<(String, usize, usize, Vec<(String, String, Vec<String>)>)> {
    let text = if sets.is_empty() {
        source
    } else {
        scenario::apply_overrides(&source, &file, &sets).map_err(err)?
    };
    let s = Scenario::parse(&text, &file).map_err(err)?;
    let runs = s.plan(reps, None).len();
    let axes = s
        .axes
        .iter()
        .map(|a| (a.key.clone(), a.column.clone(), a.values.clone()))
        .collect();
    Ok((s.name.clone(), s.combinations(), runs, axes))
}

/// The version string the manifests record.
#[pyfunction]
fn code_version() -> String {
    coaplab_lab::results::manifest::code_version()
}

#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("CoaplabError", m.py().get_type::<CoaplabError>())?;
    m.add_function(wrap_pyfunction!(run, m)?)?;
    m.add_function(wrap_pyfunction!(merge, m)?)?;
    m.add_function(wrap_pyfunction!(trace, m)?)?;
    m.add_function(wrap_pyfunction!(algorithms, m)?)?;
    m.add_function(wrap_pyfunction!(plan, m)?)?;
    m.add_function(wrap_pyfunction!(code_version, m)?)?;
    algorithm::add(m)?;
    suite::add(m)?;
    Ok(())
}
