//! Results files: per-flow records, `flows.csv`, `summary.csv`, `manifest.json`, and the
//! results directory that writes them atomically and resumes interrupted sweeps.

pub mod csv;
pub mod expanded;
pub mod flows;
pub mod manifest;
pub mod merge;
mod record;
pub mod runs;
pub mod store;
pub mod summary;

pub use manifest::{
    ControlRecord, LinkRecord, Manifest, ManifestRun, MeshChannelRecord, NetworkRecord, RplRecord,
    Status, RESULTS_FORMAT,
};
pub use record::{
    ExchangeSample, FlowRecord, MeshFlowRecord, ObserveFlowRecord, RunError, RunResult,
    TcpFlowRecord, TimerExpiry, Unfinished, INTERVAL,
};
pub use store::{check_run, Pending, ResultsDir, ResultsError, RunFiles};
pub use summary::SummaryRow;

#[cfg(test)]
mod tests;
