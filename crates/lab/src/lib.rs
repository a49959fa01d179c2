//! Experiments: scenario files, sweeps, workloads, metrics, result files and reports.
//!
//! Filled by the simulator issue. A run is a pure function of (scenario, seed).
