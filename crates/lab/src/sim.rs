//! One simulated run: the star topology of `coaplab-netsim` with one client endpoint per flow
//! and one server endpoint from `coaplab-endpoint`, driven in virtual time; a pure function of
//! the [`RunSpec`].

use crate::results::{RunError, RunResult};
use crate::scenario::RunSpec;

/// Simulates `spec` and returns one record per flow.
///
/// Until the endpoint and netsim layers are integrated this returns
/// [`RunError::NotAvailable`], so the rest of the pipeline (scenarios, results, resume, the
/// CLI) is usable and every run is recorded as failed with that reason.
pub fn run_one(spec: &RunSpec) -> Result<RunResult, RunError> {
    let _ = spec;
    Err(RunError::NotAvailable(
        "the simulator (endpoint + netsim integration in lab::sim)".to_string(),
    ))
}
