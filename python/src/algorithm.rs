//! Algorithms written in Python (docs/suite.md, "Algorithms written in Python"): a Python class
//! registered under its `name` in the algorithm registry, called per event through
//! [`PyAlgorithm`], an [`RtoAlgorithm`] holding one instance per destination.
//!
//! Time and randomness stay inputs, as for every algorithm: `now` is passed as seconds, and the
//! run's random stream as an `rng` object valid during the call only, so a Python algorithm's
//! runs are as reproducible as a built-in one's. Every call takes the GIL, which serializes the
//! Python calls of a run's `--jobs` threads (the simulation around them runs in parallel).
//!
//! The registry's constructors are plain `fn` pointers (`AlgorithmInfo::build`), which cannot
//! capture the class; so [`MAX_PYTHON_ALGORITHMS`] constructors are compiled, one per slot,
//! each building the class held in its slot.

use std::cell::Cell;
use std::collections::HashSet;
use std::sync::{Arc, Mutex, RwLock};

use coaplab_cc::common::COMMON;
use coaplab_cc::params::Value;
use coaplab_cc::registry::{self, AlgorithmInfo, RegisterError};
use coaplab_cc::{Admission, Completion, Duration, Exchange, Expiry, Instant, Params};
use coaplab_cc::{Random, RtoAlgorithm, Snapshot};
use pyo3::create_exception;
use pyo3::intern;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyString};

use crate::CoaplabError;

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

/// `x` of the Python methods: the exchange's counters, and `state`, the algorithm's own
/// per-exchange value (None at first), kept from call to call of one exchange.
#[pyclass(module = "coaplab._native", name = "Exchange")]
struct ExchangeView {
    /// Retransmissions sent so far (`X.k`).
    #[pyo3(get)]
    retransmissions: u32,
    /// The timer armed, in seconds (`X.T`).
    #[pyo3(get)]
    timer_s: f64,
    /// Exchanges in flight to the destination including this one (at `start`; else 0).
    #[pyo3(get)]
    in_flight: u32,
    /// Whatever the algorithm keeps per exchange.
    #[pyo3(get, set)]
    state: Py<PyAny>,
}

/// The run's random stream during one call: `uniform01()` in [0, 1), `below(n)` in [0, n).
/// Valid only during the call it is passed to (it borrows the simulator's generator).
#[pyclass(module = "coaplab._native", name = "Rng", unsendable)]
struct PyRng {
    source: Cell<Option<*mut (dyn Random + 'static)>>,
}

impl PyRng {
    fn with<T>(&self, f: impl FnOnce(&mut dyn Random) -> T) -> PyResult<T> {
        match self.source.get() {
            // SAFETY: set only for the duration of the Python call that receives this object,
            // from a `&mut dyn Random` borrowed for that call (see `PyAlgorithm::call`), and
            // cleared before the borrow ends; the object is unsendable, so only this thread
            // reads it.
            Some(ptr) => Ok(f(unsafe { &mut *ptr })),
            None => Err(CoaplabError::new_err(
                "rng used outside the call it was passed to",
            )),
        }
    }
}

#[pymethods]
impl PyRng {
    /// A uniform draw in [0, 1) (the draw a built-in algorithm's dither uses).
    fn uniform01(&self) -> PyResult<f64> {
        self.with(|r| r.uniform01())
    }

    /// A uniform integer in [0, n), n >= 1 (one uniform01 draw).
    fn below(&self, n: u64) -> PyResult<u64> {
        self.with(|r| r.below(n))
    }
}

/// `c` of `completed`: the first ACK or response of the exchange.
#[pyclass(module = "coaplab._native", name = "Completion", frozen)]
struct CompletionView {
    /// Arrival of the answer (= now), seconds.
    #[pyo3(get)]
    ack_time_s: f64,
    /// Send times of transmission 0 (the original), 1, ..., seconds.
    #[pyo3(get)]
    tx_times_s: Vec<f64>,
    /// Which transmission the answer identifies, when known (0: the original).
    #[pyo3(get)]
    answered: Option<u32>,
    /// The timer in force when the answer arrived, seconds.
    #[pyo3(get)]
    timer_in_force_s: f64,
}

#[pymethods]
impl CompletionView {
    /// Retransmissions sent.
    #[getter]
    fn retransmissions(&self) -> usize {
        self.tx_times_s.len().saturating_sub(1)
    }

    /// The round-trip time from the original transmission, seconds.
    #[getter]
    fn rtt_s(&self) -> f64 {
        self.ack_time_s - self.tx_times_s[0]
    }
}

/// The per-exchange value of a Python algorithm inside [`Exchange::custom`].
#[derive(Clone, Default)]
struct PyState(Option<Arc<Py<PyAny>>>);

impl std::fmt::Debug for PyState {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(if self.0.is_some() {
            "PyState(..)"
        } else {
            "PyState(None)"
        })
    }
}

/// One destination's state of a Python algorithm: an instance of its class.
struct PyAlgorithm {
    name: &'static str,
    class: Py<PyAny>,
    params: Py<PyDict>,
    obj: Py<PyAny>,
    max_retransmit: u32,
}

impl std::fmt::Debug for PyAlgorithm {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PyAlgorithm")
            .field("name", &self.name)
            .finish_non_exhaustive()
    }
}

fn secs(d: Duration) -> f64 {
    d.as_secs_f64()
}

impl PyAlgorithm {
    /// Calls `method(now_s?, [c,] x, rng?)` with the exchange's view, then stores `x.state`
    /// back into `x`. `extra` builds the leading arguments; `with_rng` appends the rng.
    fn call(
        &self,
        method: &'static str,
        x: &mut Exchange,
        in_flight: u32,
        rng: Option<&mut dyn Random>,
        args: impl for<'py> FnOnce(Python<'py>) -> PyResult<Vec<Bound<'py, PyAny>>>,
    ) -> Py<PyAny> {
        let result = Python::attach(|py| -> Result<Py<PyAny>, String> {
            let err = |e| fail(self.name, method, py, e);
            let state = match &x.custom::<PyState>().0 {
                Some(s) => s.clone_ref(py),
                None => py.None(),
            };
            let view = Bound::new(
                py,
                ExchangeView {
                    retransmissions: x.retransmissions,
                    timer_s: secs(x.timer),
                    in_flight,
                    state,
                },
            )
            .map_err(err)?;
            let mut all = args(py).map_err(err)?;
            all.push(view.clone().into_any());
            let py_rng = match rng {
                Some(r) => {
                    // SAFETY: only the lifetime is erased; the pointer is cleared below,
                    // before `r`'s borrow ends.
                    let ptr: *mut (dyn Random + 'static) =
                        unsafe { std::mem::transmute::<*mut dyn Random, _>(r as *mut dyn Random) };
                    let o = Bound::new(
                        py,
                        PyRng {
                            source: Cell::new(Some(ptr)),
                        },
                    )
                    .map_err(err)?;
                    all.push(o.clone().into_any());
                    Some(o)
                }
                None => None,
            };
            let tuple = pyo3::types::PyTuple::new(py, all).map_err(err)?;
            let out = self
                .obj
                .bind(py)
                .call_method1(PyString::intern(py, method), tuple);
            if let Some(o) = py_rng {
                o.borrow().source.set(None);
            }
            let out = out.map_err(err)?;
            let state = view.borrow().state.clone_ref(py);
            x.custom::<PyState>().0 = if state.is_none(py) {
                None
            } else {
                Some(Arc::new(state))
            };
            Ok(out.unbind())
        });
        result.unwrap_or_else(|e| panic!("{e}"))
    }

    /// A Python float return value as a timer rounded to the microsecond (as the built-in
    /// algorithms round theirs).
    fn timer(&self, method: &str, value: &Py<PyAny>) -> Option<Duration> {
        Python::attach(|py| {
            if value.is_none(py) {
                return None;
            }
            match value.extract::<f64>(py) {
                Ok(s) if s.is_finite() && s > 0.0 => Some(Duration::from_secs_f64_round_us(s)),
                _ => panic!(
                    "Python algorithm '{}': {method} returned {}, not a timer in seconds (a \
                     positive float)",
                    self.name,
                    value.bind(py)
                ),
            }
        })
    }
}

impl RtoAlgorithm for PyAlgorithm {
    fn name(&self) -> &'static str {
        self.name
    }

    fn start(
        &mut self,
        now: Instant,
        admission: Admission,
        x: &mut Exchange,
        rng: &mut dyn Random,
    ) -> Duration {
        // A new exchange: no state of an earlier one.
        x.custom::<PyState>().0 = None;
        x.retransmissions = 0;
        let now_s = now.as_secs_f64();
        let out = self.call("start", x, admission.in_flight, Some(rng), |py| {
            Ok(vec![now_s.into_pyobject(py)?.into_any()])
        });
        let t0 = self.timer("start", &out).unwrap_or_else(|| {
            panic!(
                "Python algorithm '{}': start returned None, not the first timer",
                self.name
            )
        });
        coaplab_cc::common::arm_first(x, t0)
    }

    fn expired(&mut self, now: Instant, x: &mut Exchange, rng: &mut dyn Random) -> Expiry {
        // The give-up rule of every algorithm (docs/algorithms.md, 'Conventions'): the timer
        // of transmission MAX_RETRANSMIT ends the exchange without asking Python.
        if x.retransmissions >= self.max_retransmit {
            return Expiry::GiveUp;
        }
        x.retransmissions += 1;
        let now_s = now.as_secs_f64();
        let out = self.call("expired", x, 0, Some(rng), |py| {
            Ok(vec![now_s.into_pyobject(py)?.into_any()])
        });
        match self.timer("expired", &out) {
            Some(t) => {
                x.timer = t;
                Expiry::Retransmit(t)
            }
            None => Expiry::GiveUp,
        }
    }

    fn completed(&mut self, c: &Completion<'_>, x: &mut Exchange, rng: &mut dyn Random) {
        let view = CompletionView {
            ack_time_s: c.ack_time.as_secs_f64(),
            tx_times_s: c.tx_times.iter().map(|t| t.as_secs_f64()).collect(),
            answered: c.answered,
            timer_in_force_s: secs(c.timer_in_force),
        };
        self.call("completed", x, 0, Some(rng), |py| {
            Ok(vec![Bound::new(py, view)?.into_any()])
        });
    }

    fn failed(&mut self, now: Instant, x: &mut Exchange) {
        let has = Python::attach(|py| self.obj.bind(py).hasattr(intern!(py, "failed")));
        if has.unwrap_or(false) {
            let now_s = now.as_secs_f64();
            self.call("failed", x, 0, None, |py| {
                Ok(vec![now_s.into_pyobject(py)?.into_any()])
            });
        }
    }

    fn reset(&mut self, now: Instant) {
        let result = Python::attach(|py| -> Result<(), String> {
            let obj = self.obj.bind(py);
            if obj.hasattr(intern!(py, "reset")).unwrap_or(false) {
                obj.call_method1(intern!(py, "reset"), (now.as_secs_f64(),))
                    .map_err(|e| fail(self.name, "reset", py, e))?;
            } else {
                // No `reset`: a fresh instance is what a freshly booted device has.
                self.obj = self
                    .class
                    .call1(py, (self.params.clone_ref(py),))
                    .map_err(|e| fail(self.name, "__init__", py, e))?;
            }
            Ok(())
        });
        result.unwrap_or_else(|e| panic!("{e}"))
    }

    fn rto(&self) -> Duration {
        let out = Python::attach(|py| {
            self.obj
                .call_method0(py, intern!(py, "rto"))
                .map_err(|e| fail(self.name, "rto", py, e))
        })
        .unwrap_or_else(|e| panic!("{e}"));
        self.timer("rto", &out).unwrap_or(Duration::ZERO)
    }

    fn max_retransmit(&self) -> u32 {
        self.max_retransmit
    }

    fn snapshot(&self) -> Snapshot {
        let vars = Python::attach(|py| -> Result<Vec<(&'static str, f64)>, String> {
            let obj = self.obj.bind(py);
            if !obj.hasattr(intern!(py, "snapshot")).unwrap_or(false) {
                return Ok(Vec::new());
            }
            let d: Vec<(String, f64)> = obj
                .call_method0(intern!(py, "snapshot"))
                .and_then(|d| d.call_method0(intern!(py, "items")))
                .and_then(|items| items.try_iter()?.map(|i| i?.extract()).collect())
                .map_err(|e| fail(self.name, "snapshot", py, e))?;
            Ok(d.into_iter().map(|(k, v)| (leak(&k), v)).collect())
        })
        .unwrap_or_else(|e| panic!("{e}"));
        Snapshot {
            rto: self.rto(),
            state: None,
            vars,
        }
    }
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
