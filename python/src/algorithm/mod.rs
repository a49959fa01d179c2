//! Algorithms written in Python (docs/suite.md, "Algorithms written in Python"): a Python class
//! registered under its `name` in the algorithm registry, called per event through
//! [`PyAlgorithm`] (`adapter.rs`), an [`RtoAlgorithm`] holding one instance per destination,
//! which hands the Python methods the objects of `views.rs`.
//!
//! Time and randomness stay inputs, as for every algorithm: `now` is passed as seconds, and the
//! run's random stream as an `rng` object valid during the call only, so a Python algorithm's
//! runs are as reproducible as a built-in one's. Every call takes the GIL, which serializes the
//! Python calls of a run's `--jobs` threads (the simulation around them runs in parallel).
//!
//! The registry's constructors are plain `fn` pointers (`AlgorithmInfo::build`), which cannot
//! capture the class; so [`MAX_PYTHON_ALGORITHMS`] constructors are compiled, one per slot,
//! each building the class held in its slot.

use std::collections::HashSet;
use std::sync::{Mutex, RwLock};

use coaplab_cc::common::COMMON;
use coaplab_cc::params::Value;
use coaplab_cc::registry::{self, AlgorithmInfo, RegisterError};
use coaplab_cc::{Instant, Params, RtoAlgorithm};
use pyo3::create_exception;
use pyo3::intern;
use pyo3::prelude::*;
use pyo3::types::PyDict;

use crate::CoaplabError;

mod adapter;
mod views;

use adapter::PyAlgorithm;
use views::{CompletionView, ExchangeView, PyRng};

create_exception!(
    _native,
    AlgorithmNameTaken,
    CoaplabError,
    "A Python algorithm's `name` is that of a built-in algorithm or of one registered in Rust."
);

/// The most Python algorithms one process registers (one compiled constructor per slot).
pub(crate) const MAX_PYTHON_ALGORITHMS: usize = 32;

/// The methods a Python algorithm class must have.
const REQUIRED: &[&str] = &["start", "expired", "completed", "rto"];

/// One registered Python algorithm: its name and class.
struct Slot {
    name: &'static str,
    class: Py<PyAny>,
}

/// The classes of the registered Python algorithms; slot K is built by `CONSTRUCTORS[K]`.
static SLOTS: RwLock<Vec<Slot>> = RwLock::new(Vec::new());

/// Strings handed to the registry and to snapshots as `&'static str`, each leaked once.
static INTERNED: Mutex<Option<HashSet<&'static str>>> = Mutex::new(None);

fn leak(s: &str) -> &'static str {
    let mut set = INTERNED.lock().unwrap_or_else(|e| e.into_inner());
    let set = set.get_or_insert_with(HashSet::new);
    if let Some(&found) = set.get(s) {
        return found;
    }
    let leaked: &'static str = Box::leak(s.to_string().into_boxed_str());
    set.insert(leaked);
    leaked
}

/// The registry's constructor type (`AlgorithmInfo::build`).
type Build = fn(&Params, Instant) -> Box<dyn RtoAlgorithm>;

macro_rules! constructors {
    ($($k:literal)*) => {
        [$({
            fn build(p: &Params, now: Instant) -> Box<dyn RtoAlgorithm> {
                build_slot($k, p, now)
            }
            build as Build
        }),*]
    };
}

static CONSTRUCTORS: [Build; MAX_PYTHON_ALGORITHMS] = constructors!(
    0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21 22 23 24 25 26 27 28 29 30 31
);

/// Registers the Python class `class` under its `name` attribute (its `summary`, if any, is
/// the line `coaplab.algorithms()` shows); returns the name. The class of a name registered
/// from Python before is replaced (a notebook re-running its cell); a built-in name or one
/// registered in Rust raises [`AlgorithmNameTaken`].
#[pyfunction]
pub(crate) fn register_algorithm(py: Python<'_>, class: Bound<'_, PyAny>) -> PyResult<String> {
    let name: String = class
        .getattr(intern!(py, "name"))
        .and_then(|n| n.extract())
        .map_err(|_| CoaplabError::new_err("a Python algorithm class needs a `name` (str)"))?;
    for method in REQUIRED {
        if !class.hasattr(*method)? {
            return Err(CoaplabError::new_err(format!(
                "Python algorithm '{name}': no method `{method}` (required: {})",
                REQUIRED.join(", ")
            )));
        }
    }
    let summary: String = match class.getattr(intern!(py, "summary")) {
        Ok(s) => s.extract().unwrap_or_default(),
        Err(_) => String::new(),
    };
    // `params_of`: the parameter groups of another algorithm (its presets then apply where
    // they name no algorithm); by default the common ones of RFC 7252 §4.8.
    let params: &'static [&'static [coaplab_cc::ParamSpec]] =
        match class.getattr(intern!(py, "params_of")) {
            Ok(p) if !p.is_none() => {
                let of: String = p.extract().map_err(|_| {
                    CoaplabError::new_err(format!(
                        "Python algorithm '{name}': `params_of` must name an algorithm (str)"
                    ))
                })?;
                registry::lookup(&of)
                    .map_err(|e| {
                        CoaplabError::new_err(format!("Python algorithm '{name}': params_of: {e}"))
                    })?
                    .params
            }
            _ => &[COMMON],
        };
    let mut slots = SLOTS.write().unwrap_or_else(|e| e.into_inner());
    if let Some(slot) = slots.iter_mut().find(|s| s.name == name) {
        slot.class = class.unbind();
        return Ok(name);
    }
    if slots.len() >= MAX_PYTHON_ALGORITHMS {
        return Err(CoaplabError::new_err(format!(
            "Python algorithm '{name}': {MAX_PYTHON_ALGORITHMS} Python algorithms are \
             registered already"
        )));
    }
    let name_static = leak(&name);
    let summary = if summary.is_empty() {
        "an algorithm written in Python".to_string()
    } else {
        summary
    };
    let info = AlgorithmInfo {
        name: name_static,
        summary: leak(&summary),
        params,
        build: CONSTRUCTORS[slots.len()],
    };
    match registry::register(info) {
        Ok(()) => {}
        Err(RegisterError::NameTaken(n)) => {
            return Err(AlgorithmNameTaken::new_err(format!(
                "Python algorithm '{n}': the name is taken by a built-in algorithm or one \
                 registered in Rust; choose another `name`"
            )))
        }
        Err(e) => return Err(CoaplabError::new_err(format!("Python algorithm: {e}"))),
    }
    slots.push(Slot {
        name: name_static,
        class: class.unbind(),
    });
    Ok(name)
}

/// The names of the algorithms registered from Python, in registration order.
#[pyfunction]
pub(crate) fn python_algorithms() -> Vec<String> {
    let slots = SLOTS.read().unwrap_or_else(|e| e.into_inner());
    slots.iter().map(|s| s.name.to_string()).collect()
}

/// A Python exception inside an event: the run fails with it (the runner catches the panic
/// and records the message in the manifest, as for any failed run).
fn fail(name: &str, method: &str, py: Python<'_>, e: PyErr) -> String {
    let traceback = e
        .traceback(py)
        .and_then(|t| t.format().ok())
        .unwrap_or_default();
    format!("Python algorithm '{name}': {method} raised {e}\n{traceback}")
}

/// The resolved parameters as a dict (`{"ack_random_factor": 1.5, "max_retransmit": 4}`).
fn params_dict<'py>(py: Python<'py>, p: &Params) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    for (key, value) in p.iter() {
        match value {
            Value::Float(v) => d.set_item(key, v)?,
            Value::Int(v) => d.set_item(key, v)?,
            Value::Bool(v) => d.set_item(key, v)?,
            Value::Choice(v) => d.set_item(key, v)?,
        }
    }
    Ok(d)
}

fn build_slot(slot: usize, p: &Params, _now: Instant) -> Box<dyn RtoAlgorithm> {
    let built = Python::attach(|py| {
        let (name, class) = {
            let slots = SLOTS.read().unwrap_or_else(|e| e.into_inner());
            let s = &slots[slot];
            (s.name, s.class.clone_ref(py))
        };
        let params = params_dict(py, p).map_err(|e| fail(name, "params", py, e))?;
        let obj = class
            .call1(py, (params.clone(),))
            .map_err(|e| fail(name, "__init__", py, e))?;
        Ok::<_, String>(PyAlgorithm {
            name,
            class,
            params: params.unbind(),
            obj,
            max_retransmit: p.int("max_retransmit") as u32,
        })
    });
    Box::new(built.unwrap_or_else(|e| panic!("{e}")))
}

/// Registers the Python-facing types of this module.
pub(crate) fn add(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add(
        "AlgorithmNameTaken",
        m.py().get_type::<AlgorithmNameTaken>(),
    )?;
    m.add_class::<ExchangeView>()?;
    m.add_class::<CompletionView>()?;
    m.add_class::<PyRng>()?;
    m.add_function(wrap_pyfunction!(register_algorithm, m)?)?;
    m.add_function(wrap_pyfunction!(python_algorithms, m)?)?;
    Ok(())
}
