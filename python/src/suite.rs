//! `coaplab suite` from Python: the same loop as the command (`coaplab_lab::suite::run`), so
//! that algorithms registered from Python ([`crate::algorithm`]) take part.

use std::cell::RefCell;
use std::path::PathBuf;

use coaplab_lab::shard::Shard;
use coaplab_lab::suite::run::{self, RunOptions};
use coaplab_lab::suite::{self, Suite};
use pyo3::prelude::*;

use crate::err;

/// Runs the suite file `suite` for `algorithms` into `out`, as `coaplab suite run`: `jobs`
/// threads, `shard` ("K/N") of every cell. `log`, if given, is called with each progress line
/// (`[3/6] nbiot-congested / fasor: 2 runs in 0.1 s`). The runs execute with the GIL
/// released (Python algorithms take it per event); Ctrl-C or an exception of `log` stops the
/// suite after the runs under way, as `run` does. Returns (cells, skipped, runs failed).
#[pyfunction]
#[pyo3(signature = (suite, algorithms, out, jobs=1, shard=None, log=None))]
pub(crate) fn suite_run(
    py: Python<'_>,
    suite: PathBuf,
    algorithms: Vec<String>,
    out: PathBuf,
    jobs: usize,
    shard: Option<String>,
    log: Option<Py<PyAny>>,
) -> PyResult<(usize, usize, usize)> {
    let shard = shard.map(|s| s.parse::<Shard>().map_err(err)).transpose()?;
    let loaded = Suite::load(&suite).map_err(err)?;
    let (outcome, raised) = py.detach(|| {
        let raised: RefCell<Option<PyErr>> = RefCell::new(None);
        let mut line = |text: &str| {
            let Some(callback) = &log else { return };
            if raised.borrow().is_some() {
                return;
            }
            if let Err(e) = Python::attach(|py| callback.call1(py, (text,))) {
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
        let outcome = run::run(
            &loaded,
            &algorithms,
            RunOptions {
                out: &out,
                jobs: jobs.max(1),
                shard,
            },
            &crate::known_thread(coaplab_lab::sim::run_one),
            &mut line,
            Some(&mut stop),
        );
        (outcome, raised.into_inner())
    });
    let outcome = outcome.map_err(err)?;
    if let Some(e) = raised {
        return Err(e);
    }
    Ok((outcome.cells, outcome.skipped, outcome.failed))
}

/// Writes `out/leaderboard.csv` and `out/ranking.csv` of a suite directory; returns the
/// table `coaplab suite run` prints.
#[pyfunction]
pub(crate) fn suite_scores(py: Python<'_>, out: PathBuf) -> PyResult<String> {
    py.detach(|| run::write_scores(&out)).map_err(err)
}

/// Joins the directories of the shards of one suite run into `out`, as `coaplab suite
/// merge` (then [`suite_scores`]). Returns (runs, failed runs).
#[pyfunction]
pub(crate) fn suite_merge(
    py: Python<'_>,
    out: PathBuf,
    dirs: Vec<PathBuf>,
) -> PyResult<(usize, usize)> {
    py.detach(|| suite::merge(&out, &dirs)).map_err(err)
}

/// Checks the suite and every experiment × algorithm; returns (the suite's name, what
/// `coaplab suite run --dry-run` prints).
#[pyfunction]
pub(crate) fn suite_plan(suite: PathBuf, algorithms: Vec<String>) -> PyResult<(String, String)> {
    let loaded = Suite::load(&suite).map_err(err)?;
    loaded.cells(&algorithms).map_err(err)?;
    Ok((loaded.name.clone(), run::plan_text(&loaded, &algorithms)))
}

/// The built-in algorithms (`coaplab suite run` without `--cc`).
#[pyfunction]
pub(crate) fn builtin_algorithms() -> Vec<String> {
    suite::builtin_algorithms()
}

/// Registers this module's functions.
pub(crate) fn add(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(suite_run, m)?)?;
    m.add_function(wrap_pyfunction!(suite_scores, m)?)?;
    m.add_function(wrap_pyfunction!(suite_merge, m)?)?;
    m.add_function(wrap_pyfunction!(suite_plan, m)?)?;
    m.add_function(wrap_pyfunction!(builtin_algorithms, m)?)?;
    Ok(())
}
