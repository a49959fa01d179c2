//! `manifest.json`: what was run (expanded parameters, seeds), by which code, and how each run
//! went (status, error, wall and CPU time).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::scenario::{Plan, Scenario};
use crate::seed;

/// The version of the results files' columns and their meaning (`flows.csv`, `summary.csv`,
/// `runs.csv`), recorded in `manifest.json` as `results_format`; raised whenever a column is
/// added or its meaning changes (docs/scenarios.md, "Results format versions"). 2: the
/// censored FCT statistics (flows.csv `unfinished`, `elapsed_s`; summary.csv
/// `unfinished_gave_up`, `unfinished_time_cap`, `fct_p50_at_least_s`, quantiles, mean and
/// deviation empty when unbounded, the mesh's `fct50_s_median` censored). 3: `runs.csv`'s (and
/// the manifest's) `events` of a CoAP-over-UDP run counts the events the loop processed, no
/// longer the stale timer wake-ups of a lazy heap (issue 35).
pub const RESULTS_FORMAT: u32 = 3;

/// `results_format` of a manifest written before the field existed.
fn first_results_format() -> u32 {
    1
}

/// The whole manifest.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Manifest {
    /// The results format ([`RESULTS_FORMAT`]); 1 when absent (older coaplab).
    #[serde(default = "first_results_format")]
    pub results_format: u32,
    /// The scenario name.
    pub scenario: String,
    /// The scenario file as given on the command line.
    pub file: String,
    /// Identifies the plan: scenario text, replications and base seed. `--resume` refuses a
    /// directory whose fingerprint differs.
    pub fingerprint: String,
    /// The crate version and, when built from a git checkout, the commit.
    pub code_version: String,
    /// The base seed.
    pub seed: u64,
    /// Replications per combination.
    pub replications: u32,
    /// The sweep axes.
    pub axes: Vec<ManifestAxis>,
    /// Every parameter combination, fully resolved: `{ combination, parameters, config }`.
    pub combinations: Vec<serde_json::Value>,
    /// The scenario file's text.
    pub scenario_text: String,
    /// Every run, in run order.
    pub runs: Vec<ManifestRun>,
    /// Wall time of the last invocation, seconds (of a merged directory: the longest shard's).
    pub wall_s: f64,
    /// `K/N` when this directory holds shard K of N (`coaplab run --shard`); absent for a
    /// whole plan, and so in a merged directory.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shard: Option<String>,
    /// The `--set KEY=VALUE` overrides applied to the scenario file, in order (already in
    /// `scenario_text`); absent when there were none.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub overrides: Vec<String>,
}

/// One sweep axis.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ManifestAxis {
    /// The full key.
    pub key: String,
    /// The results column.
    pub column: String,
    /// The line of the list in the scenario file.
    pub line: usize,
    /// The values.
    pub values: Vec<String>,
}

/// The state of one run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    /// Not run yet (or interrupted).
    Pending,
    /// Finished; its rows are in `flows.csv`.
    Ok,
    /// Failed; `error` says why.
    Failed,
}

/// One run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ManifestRun {
    /// Run id.
    pub run: usize,
    /// Parameter combination.
    pub combination: usize,
    /// Replication.
    pub replication: u32,
    /// Seed.
    pub seed: u64,
    /// Sweep column → value.
    pub parameters: BTreeMap<String, String>,
    /// Outcome.
    pub status: Status,
    /// Why it failed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// Wall time of the run, seconds.
    #[serde(default)]
    pub wall_s: f64,
    /// CPU time (user + system) of the thread that simulated the run, from building the
    /// run's topology and endpoints to its results in memory, seconds: what the simulation
    /// itself cost, without process start-up or writing files (`CLOCK_THREAD_CPUTIME_ID`).
    /// Measured, like `wall_s`, so not in `runs.csv`.
    #[serde(default)]
    pub cpu_s: f64,
    /// Simulator events processed.
    #[serde(default)]
    pub events: u64,
    /// What the bottleneck saw (finished runs).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub network: Option<NetworkRecord>,
}

/// Counters of one bottleneck direction over a run (docs/experiments.md §7: wire counts, drops by
/// cause, utilisation).
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
pub struct LinkRecord {
    /// Packets offered to the FIFO.
    pub offered_packets: u64,
    /// Packets dropped on enqueue (`buffer_overflow`).
    pub overflow_drops: u64,
    /// Packets lost after the serializer (`link_error`).
    pub link_error_drops: u64,
    /// Packets out of the serializer.
    pub sent_packets: u64,
    /// IP bytes out of the serializer.
    pub sent_bytes: u64,
    /// Serializer busy time, seconds.
    pub busy_s: f64,
    /// Largest FIFO backlog in charged bytes.
    pub queue_high_water_bytes: u64,
}

/// The network side of a run.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
pub struct NetworkRecord {
    /// Server to clients.
    pub down: LinkRecord,
    /// Clients to server.
    pub up: LinkRecord,
    /// Virtual time when the run ended, seconds (utilisation = busy_s / sim_time_s).
    pub sim_time_s: f64,
    /// Mesh runs only: what the radio channel carried during the run (absent otherwise, so
    /// the star's manifests and status files are unchanged).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mesh: Option<MeshChannelRecord>,
    /// RPL on a mesh (`[topology] routing = "rpl"`); absent otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rpl: Option<RplRecord>,
}

/// The radio channel of a mesh run, from the run's start (after any RPL warm-up) to its end
/// (docs/experiments.md §8f "total packets"; docs/scenarios.md, "Mesh metrics").
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
pub struct MeshChannelRecord {
    /// Every frame put on air: data frames (retransmissions included), ACKs and RPL control
    /// frames.
    pub frames_on_air: u64,
    /// Unicast data frame transmissions of both directions, MAC retransmissions included.
    pub data_frames: u64,
    /// Of those, the ones acknowledged: `data_frames` − MAC retries − no-ACK drops (with
    /// `mac_ack_request = false`, where no ACK is on air: the ones their addressee decoded).
    pub data_frames_acked: u64,
    /// ACK frames sent.
    pub ack_frames: u64,
    /// RPL control frames (DIO, DAO) sent; 0 with static routes.
    pub control_frames: u64,
    /// Frames dropped after `macMaxCSMABackoffs` busy CCAs (data, both directions).
    pub channel_access_failures: u64,
    /// Receptions lost to an overlapping signal or to the receiver transmitting.
    pub collisions: u64,
}

/// RPL's formation and control overhead in one run (docs/scenarios.md, "mesh outputs").
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
pub struct RplRecord {
    /// When the DODAG had formed, seconds of RPL time (`null`: not within a fixed warm-up).
    pub formed_after_s: Option<f64>,
    /// RPL time before the run's instant 0 (the formation instant, or `warm_up_s`).
    pub warm_up_s: f64,
    /// Control frames on the channel during the warm-up.
    pub warm_up: ControlRecord,
    /// Control frames on the channel during the run.
    pub measured: ControlRecord,
    /// Preferred-parent changes after joining, over all nodes, warm-up included.
    pub parent_switches: u64,
}

/// RPL control frames on the channel (every transmission, DAO hops and retries included) and
/// their PSDU bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct ControlRecord {
    /// DIO frames.
    pub dio_frames: u64,
    /// DIO bytes.
    pub dio_bytes: u64,
    /// DIS frames.
    pub dis_frames: u64,
    /// DIS bytes.
    pub dis_bytes: u64,
    /// DAO frames (No-Path DAOs included).
    pub dao_frames: u64,
    /// DAO bytes.
    pub dao_bytes: u64,
}

/// The code version string recorded in manifests.
pub fn code_version() -> String {
    match option_env!("COAPLAB_GIT_COMMIT") {
        Some(commit) if !commit.is_empty() => {
            format!("coaplab {} ({commit})", env!("CARGO_PKG_VERSION"))
        }
        _ => format!("coaplab {}", env!("CARGO_PKG_VERSION")),
    }
}

/// The fingerprint of a plan.
pub fn fingerprint(scenario: &Scenario, replications: u32, base_seed: u64) -> String {
    let mut h = seed::fnv1a(seed::FNV_OFFSET, scenario.source().as_bytes());
    h = seed::fnv1a(h, &replications.to_le_bytes());
    h = seed::fnv1a(h, &base_seed.to_le_bytes());
    format!("{h:016x}")
}

impl Manifest {
    /// A manifest with every run of `plan` pending.
    pub fn new(plan: &Plan<'_>) -> Self {
        let scenario = plan.scenario();
        let (replications, base_seed) = (plan.replications(), plan.seed());
        let combinations = scenario.combinations();
        let sweeps: Vec<BTreeMap<String, String>> = (0..combinations)
            .map(|c| plan.sweep(c).into_iter().collect())
            .collect();
        Manifest {
            results_format: RESULTS_FORMAT,
            scenario: scenario.name.clone(),
            file: scenario.file().to_string(),
            fingerprint: fingerprint(scenario, replications, base_seed),
            code_version: code_version(),
            seed: base_seed,
            replications,
            axes: scenario
                .axes
                .iter()
                .map(|a| ManifestAxis {
                    key: a.key.clone(),
                    column: a.column.clone(),
                    line: a.line,
                    values: a.values.clone(),
                })
                .collect(),
            combinations: sweeps
                .iter()
                .enumerate()
                .map(|(c, parameters)| {
                    serde_json::json!({
                        "combination": c,
                        "parameters": parameters,
                        "config": super::expanded::config_json(&plan.config(c)),
                    })
                })
                .collect(),
            scenario_text: scenario.source().to_string(),
            runs: (0..plan.len())
                .map(|run| {
                    let (combination, replication) = plan.position(run);
                    ManifestRun {
                        run,
                        combination,
                        replication,
                        seed: plan.run_seed(run),
                        parameters: sweeps[combination].clone(),
                        status: Status::Pending,
                        error: None,
                        wall_s: 0.0,
                        cpu_s: 0.0,
                        events: 0,
                        network: None,
                    }
                })
                .collect(),
            wall_s: 0.0,
            shard: None,
            overrides: Vec::new(),
        }
    }
}
