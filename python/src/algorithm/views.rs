//! The objects a Python algorithm's methods receive: the exchange `x`, the answer `c` and the
//! run's random stream `rng`.

use std::cell::Cell;

use coaplab_cc::Random;
use pyo3::prelude::*;

use crate::CoaplabError;

/// `x` of the Python methods: the exchange's counters, and `state`, the algorithm's own
/// per-exchange value (None at first), kept from call to call of one exchange.
#[pyclass(module = "coaplab._native", name = "Exchange")]
pub(super) struct ExchangeView {
    /// Retransmissions sent so far (`X.k`).
    #[pyo3(get)]
    pub(super) retransmissions: u32,
    /// The timer armed, in seconds (`X.T`).
    #[pyo3(get)]
    pub(super) timer_s: f64,
    /// Exchanges in flight to the destination including this one (at `start`; else 0).
    #[pyo3(get)]
    pub(super) in_flight: u32,
    /// Whatever the algorithm keeps per exchange.
    #[pyo3(get, set)]
    pub(super) state: Py<PyAny>,
}

/// The run's random stream during one call: `uniform01()` in [0, 1), `below(n)` in [0, n).
/// Valid only during the call it is passed to (it borrows the simulator's generator).
#[pyclass(module = "coaplab._native", name = "Rng", unsendable)]
pub(super) struct PyRng {
    pub(super) source: Cell<Option<*mut (dyn Random + 'static)>>,
}

impl PyRng {
    pub(super) fn with<T>(&self, f: impl FnOnce(&mut dyn Random) -> T) -> PyResult<T> {
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
pub(super) struct CompletionView {
    /// Arrival of the answer (= now), seconds.
    #[pyo3(get)]
    pub(super) ack_time_s: f64,
    /// Send times of transmission 0 (the original), 1, ..., seconds.
    #[pyo3(get)]
    pub(super) tx_times_s: Vec<f64>,
    /// Which transmission the answer identifies, when known (0: the original).
    #[pyo3(get)]
    pub(super) answered: Option<u32>,
    /// The timer in force when the answer arrived, seconds.
    #[pyo3(get)]
    pub(super) timer_in_force_s: f64,
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
