//! `coaplab._native`: the Rust half of the `coaplab` Python package (PyO3). Each function is a
//! thin wrapper over the library code the `coaplab` command runs, so results are the same
//! byte for byte; the Python half (`coaplab/__init__.py`) turns them into pandas objects.

use std::path::PathBuf;

use coaplab_cc::params::ParamSpec;
use coaplab_cc::rng::SeededRandom;
use coaplab_cc::{registry, trace as cc_trace, Instant, Settings};
use coaplab_lab::exec;
use coaplab_lab::results::{merge as lab_merge, Manifest, ResultsDir};
use coaplab_lab::scenario::{self, Scenario};
use coaplab_lab::shard::Shard;
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
/// `reps`, `seed`, `jobs`, `shard` ("K/N") and `resume` as the flags of the same names.
/// Returns (runs in the plan or shard, finished now, skipped as already finished, failed).
#[pyfunction]
#[pyo3(signature = (source, file, out, sets=Vec::new(), reps=None, seed=None, jobs=None, shard=None, resume=false))]
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
) -> PyResult<(usize, usize, usize, usize)> {
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
    // The simulation holds no Python object: other Python threads (Dask workers) run meanwhile.
    py.detach(move || {
        let plan = scenario.plan(reps, seed);
        let mut manifest = Manifest::new(&plan);
        manifest.shard = shard_arg.map(|s| s.to_string());
        manifest.overrides = sets;
        let dir = ResultsDir::open(&out, &manifest, resume).map_err(err)?;
        let shard = shard_arg.unwrap_or(Shard::WHOLE);
        let run_fn: exec::RunFn = coaplab_lab::sim::run_one;
        let outcome = exec::execute_shard(&plan, shard, &dir, manifest, jobs, run_fn, &mut |_| {})
            .map_err(err)?;
        Ok((outcome.total, outcome.ok, outcome.skipped, outcome.failed))
    })
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
    Ok(())
}
