//! Experiments: scenario files, sweeps, workloads, metrics, result files and reports.
//!
//! The layers, in the order `coaplab run` uses them:
//!
//! - [`scenario`]: a TOML scenario file, checked key by key, expanded into [`scenario::RunSpec`]s
//!   (cartesian sweep × replications, a derived seed per run).
//! - [`sim`]: `run_one(&RunSpec)`, one simulated run in virtual time, a pure function of the
//!   spec: per-flow [`results::FlowRecord`]s.
//! - [`exec`]: runs in parallel across cores, each run's rows written atomically, `--resume`.
//! - [`results`]: `flows.csv`, `summary.csv` (type-7 percentiles, [`stats`]) and
//!   `manifest.json`; [`report`] prints the percentile table.

pub mod exec;
pub mod metrics;
pub mod report;
pub mod results;
pub mod scenario;
pub mod seed;
pub mod sim;
pub mod stats;
pub mod workload;
