//! Experiments: scenario files, sweeps, workloads, metrics, result files and reports.
//!
//! The layers, in the order `coaplab run` uses them:
//!
//! - [`scenario`]: a TOML scenario file, checked key by key (errors name the file line, the
//!   key and the allowed values), expanded into [`scenario::RunSpec`]s: the cartesian product
//!   of every list, times the replications, each run with a seed derived by [`seed`]. Its
//!   `document` module reads the whole file, calling one module per table, which share only
//!   the key reader; what to trace ([`scenario::RunSelection`], [`scenario::TraceFormat`]) is
//!   read here too, so the scenario imports no later layer.
//! - [`sim`]: [`sim::run_one`], one run in virtual time — netsim's star topology, one
//!   endpoint per flow and one server — a pure function of the run's
//!   [`RunSpec`](scenario::RunSpec). [`workload`] drives each flow's requests; [`metrics`] turns
//!   endpoint events and packet tags ([`tag`]) into per-flow [`results::FlowRecord`]s, with
//!   ground truth for unnecessary retransmissions. TCP flows run in one TCP run loop (`sim/tcp.rs`)
//!   generic over the flow's application (`sim/tcp_app.rs`): RFC 8323 sessions (`sim/tcp_coap.rs`)
//!   or an HTTP download (`sim/http.rs`), alone or beside CoAP-over-UDP flows (`sim/cross_tcp.rs`).
//! - [`exec`]: runs in parallel across cores; each run's rows are written atomically as it
//!   ends; failed or panicking runs are recorded with their error; `--resume` skips finished
//!   runs.
//! - [`results`]: `flows.csv`, `summary.csv` (type-7 percentiles, [`stats`]) and
//!   `manifest.json`, every CSV file written and read through the `csv` crate
//!   ([`results::csv`]: RFC 4180, quoted only where needed, floats formatted here as their
//!   shortest round trip); [`report`] prints the percentile table. [`shard`] slices a plan for
//!   several machines and [`results::merge`] joins their directories.
//! - [`trace`]: `coaplab run --trace`: event timelines, queue, TCP state and pcap files of
//!   chosen runs.
//!
//! A run is a pure function of (scenario, seed): the same inputs give byte-identical rows.
//!
//! Imports go one way, never around a circle of sibling modules (`scripts/check-cycles.py`):
//! [`scenario`] imports only the helpers [`files`] and [`seed`], and [`tag`] nothing;
//! [`results`] the scenario and the helpers ([`stats`], [`shard`]); the metrics modules the
//! results; [`trace`] the results, the scenario and [`tag`]; [`sim`] all of them.

pub mod exec;
pub mod files;
pub mod html;
pub mod mesh_metrics;
pub mod metrics;
pub mod observe_metrics;
pub mod report;
pub mod results;
pub mod scenario;
pub mod seed;
pub mod shard;
pub mod sim;
pub mod stats;
pub mod suite;
pub mod tag;
pub mod trace;
pub mod workload;
