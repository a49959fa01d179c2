//! [`PyAlgorithm`]: the [`RtoAlgorithm`] of an algorithm written in Python, one instance of its
//! class per destination, each event a call of a method with the GIL taken.

use std::cell::Cell;
use std::sync::Arc;

use coaplab_cc::{Admission, Completion, Duration, Exchange, Expiry, Instant};
use coaplab_cc::{Random, RtoAlgorithm, Snapshot};
use pyo3::intern;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyString};

use super::views::{CompletionView, ExchangeView, PyRng};
use super::{fail, leak};

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
pub(super) struct PyAlgorithm {
    pub(super) name: &'static str,
    pub(super) class: Py<PyAny>,
    pub(super) params: Py<PyDict>,
    pub(super) obj: Py<PyAny>,
    pub(super) max_retransmit: u32,
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
