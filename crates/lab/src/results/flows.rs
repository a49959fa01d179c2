//! `flows.csv`: one row per flow, the fixed columns of the issue (on a mesh, then the multi-hop
//! experiments' columns) plus one per sweep axis; and the per-run rows of `timers.csv`,
//! `intervals.csv` and `exchanges.csv`.

use super::csv;
use super::record::{FlowRecord, MeshFlowRecord, TcpFlowRecord};
use crate::scenario::RunSpec;

/// The fixed columns of `flows.csv`, in order.
pub const FLOW_COLUMNS: &[&str] = &[
    "run",
    "combination",
    "replication",
    "seed",
    "flow",
    "cc",
    "workload",
    "clients",
    "buffer_bytes",
    "loss",
    "fct_s",
    "exchanges",
    "failed_exchanges",
    "transmissions",
    "retransmissions",
    "unnecessary_retransmissions",
    "timeouts",
    "rto_max_s",
    "coap_rtt_median_s",
    "bytes_up",
    "bytes_down",
    "completed",
    "transmission_counts",
    "setup_s",
    "segments_sent",
    "segments_retransmitted",
    "rto_count",
    "syn_retransmissions",
    "expired_rtos",
    "unfinished",
    "elapsed_s",
];

/// The columns `flows.csv` has after the sweep columns when a flow group observes
/// (`workload = "observe"`, [`crate::scenario::RunConfig::has_observe`]); absent otherwise, so
/// other runs' files do not change. Empty for flows of other workloads in such a run.
pub const OBSERVE_COLUMNS: &[&str] = &[
    "notifications_sent",
    "notifications_received",
    "notifications_lost",
    "notification_delay_mean_s",
    "notification_delay_p50_s",
    "notification_delay_p95_s",
    "notification_delay_max_s",
    "notification_retransmissions",
];

/// The columns a mesh run's rows add after [`FLOW_COLUMNS`] (before the sweep columns): the
/// multi-hop experiments' metrics of [`MeshFlowRecord`], in its field order. Star runs' rows do
/// not have them, so their `flows.csv` is unchanged.
pub const MESH_FLOW_COLUMNS: &[&str] = &[
    "requests",
    "coap_pdr",
    "fct50_s",
    "active_s",
    "transactions_per_s",
    "sending_rate_pps",
    "sending_rate_bps",
    "throughput_bps",
    "delay_mean_s",
    "delay_p50_s",
    "delay_p90_s",
    "delay_p99_s",
    "delay_max_s",
    "rto_base_mean_s",
    "rto_base_p50_s",
    "rto_base_p90_s",
    "rto_base_max_s",
    "server_node",
];

/// The values of [`MESH_FLOW_COLUMNS`] of `m` (all empty without a record).
fn mesh_fields(m: Option<&MeshFlowRecord>) -> Vec<String> {
    let Some(m) = m else {
        return vec![String::new(); MESH_FLOW_COLUMNS.len()];
    };
    let mut out = vec![m.requests.to_string()];
    out.extend(
        [
            m.coap_pdr,
            m.fct50_s,
            m.active_s,
            m.transactions_per_s,
            m.sending_rate_pps,
            m.sending_rate_bps,
            m.throughput_bps,
            m.delay_mean_s,
            m.delay_p50_s,
            m.delay_p90_s,
            m.delay_p99_s,
            m.delay_max_s,
            m.rto_base_mean_s,
            m.rto_base_p50_s,
            m.rto_base_p90_s,
            m.rto_base_max_s,
        ]
        .map(csv::float),
    );
    out.push(m.server_node.map(|n| n.to_string()).unwrap_or_default());
    out
}

/// A histogram as space-separated counts (`"45 4 1"`: 45 exchanges took one transmission, 4
/// took two, 1 took three).
pub fn counts_text(counts: &[u32]) -> String {
    counts
        .iter()
        .map(u32::to_string)
        .collect::<Vec<_>>()
        .join(" ")
}

/// Adds the histogram written by [`counts_text`] into `into`; unreadable text adds nothing.
pub fn add_counts(into: &mut Vec<u64>, text: &str) {
    for (k, field) in text.split_whitespace().enumerate() {
        let n: u64 = field.parse().unwrap_or(0);
        if into.len() <= k {
            into.resize(k + 1, 0);
        }
        into[k] += n;
    }
}

/// The sweep columns that get a column of their own (those not already a fixed column);
/// `sweep` is a run's `(column, value)` per axis ([`RunSpec::sweep`]).
pub fn sweep_columns(sweep: &[(String, String)]) -> Vec<&str> {
    sweep
        .iter()
        .map(|(c, _)| c.as_str())
        .filter(|c| is_sweep_column(c))
        .collect()
}

/// Whether the sweep column `c` gets a column of its own (it is not a fixed column).
pub fn is_sweep_column(c: &str) -> bool {
    !FLOW_COLUMNS.contains(&c) && !MESH_FLOW_COLUMNS.contains(&c) && !OBSERVE_COLUMNS.contains(&c)
}

/// The header line (no newline) of runs with `sweep` ([`RunSpec::sweep`]); with `mesh`, the
/// [`MESH_FLOW_COLUMNS`] too.
pub fn header(sweep: &[(String, String)], mesh: bool) -> String {
    header_for(sweep, mesh, false)
}

/// [`header`], with the [`OBSERVE_COLUMNS`] last when `observe`.
pub fn header_for(sweep: &[(String, String)], mesh: bool, observe: bool) -> String {
    let mesh_columns = if mesh { MESH_FLOW_COLUMNS } else { &[] };
    let observe_columns = if observe { OBSERVE_COLUMNS } else { &[] };
    csv::line(
        FLOW_COLUMNS
            .iter()
            .chain(mesh_columns)
            .copied()
            .chain(sweep_columns(sweep))
            .chain(observe_columns.iter().copied()),
    )
}

/// An observer's cells of [`OBSERVE_COLUMNS`] (empty for other flows).
fn observe_cells(f: &FlowRecord) -> Vec<String> {
    let Some(o) = &f.observe else {
        return vec![String::new(); OBSERVE_COLUMNS.len()];
    };
    vec![
        o.sent.to_string(),
        o.received.to_string(),
        o.lost.to_string(),
        csv::float(o.delay_mean_s),
        csv::float(o.delay_p50_s),
        csv::float(o.delay_p95_s),
        csv::float(o.delay_max_s),
        o.retransmissions.to_string(),
    ]
}

/// The header line of `intervals.csv` (no newline).
pub const INTERVAL_COLUMNS: &[&str] = &[
    "run",
    "flow",
    "interval",
    "start_s",
    "bytes",
    "throughput_bps",
];

/// The rows of `intervals.csv` for one run: per flow in order, one row per 50-ms interval in
/// which the flow's exchanges delivered payload (`interval` k covers [k·50 ms, (k+1)·50 ms)
/// of the run; intervals without any are left out); each row ends in a newline.
pub fn interval_rows(spec: &RunSpec, flows: &[FlowRecord]) -> String {
    let width_s = super::INTERVAL.as_secs_f64();
    let mut out = csv::Text::new();
    let run = spec.run.to_string();
    for f in flows {
        let flow = f.flow.to_string();
        for &(k, bytes) in f.mesh.iter().flat_map(|m| &m.intervals) {
            out.record([
                run.as_str(),
                flow.as_str(),
                &k.to_string(),
                &csv::float(Some(k as f64 * width_s)),
                &bytes.to_string(),
                &csv::float(Some(bytes as f64 * 8.0 / width_s)),
            ]);
        }
    }
    out.finish()
}

/// The header line of `exchanges.csv` (no newline).
pub const EXCHANGE_COLUMNS: &[&str] = &[
    "run",
    "flow",
    "start_s",
    "end_s",
    "delay_s",
    "transmissions",
    "rto_base_s",
];

/// The rows of `exchanges.csv` for one run: per flow in order, one row per ended exchange in
/// the order they ended (`delay_s` empty for a failed one); each row ends in a newline.
pub fn exchange_rows(spec: &RunSpec, flows: &[FlowRecord]) -> String {
    let mut out = csv::Text::new();
    let run = spec.run.to_string();
    for f in flows {
        let flow = f.flow.to_string();
        for e in f.mesh.iter().flat_map(|m| &m.samples) {
            out.record([
                run.as_str(),
                flow.as_str(),
                &csv::float(Some(e.start_s)),
                &csv::float(Some(e.end_s)),
                &csv::float(e.delay_s),
                &e.transmissions.to_string(),
                &csv::float(e.rto_base_s),
            ]);
        }
    }
    out.finish()
}

/// The header line of `timers.csv` (no newline).
pub const TIMER_COLUMNS: &[&str] = &["run", "flow", "time_s", "rto_s", "ordinal"];

/// The rows of `timers.csv` for one run: one per expired CoAP retransmission timer, flows in
/// order, each flow's expiries in time order; each row ends in a newline.
pub fn timer_rows(spec: &RunSpec, flows: &[FlowRecord]) -> String {
    let mut out = csv::Text::new();
    let run = spec.run.to_string();
    for f in flows {
        let flow = f.flow.to_string();
        for e in &f.expiries {
            out.record([
                run.as_str(),
                flow.as_str(),
                &csv::float(Some(e.at_s)),
                &csv::float(Some(e.rto_s)),
                &e.ordinal.to_string(),
            ]);
        }
    }
    out.finish()
}

/// A TCP counter as text; empty for a UDP flow.
fn tcp_count(f: &FlowRecord, get: impl Fn(&TcpFlowRecord) -> u64) -> String {
    f.tcp
        .as_ref()
        .map(|t| get(t).to_string())
        .unwrap_or_default()
}

/// One row per flow of a run, each ending in a newline.
pub fn rows(spec: &RunSpec, flows: &[FlowRecord]) -> String {
    let mut out = csv::Text::new();
    let clients = spec.config.total_flows().to_string();
    let buffer = spec.config.network.down.buffer_bytes.to_string();
    let extra: Vec<&str> = spec
        .sweep
        .iter()
        .filter(|(c, _)| is_sweep_column(c))
        .map(|(_, v)| v.as_str())
        .collect();
    let observe = spec.config.has_observe();
    for f in flows {
        let tail = if observe {
            observe_cells(f)
        } else {
            Vec::new()
        };
        let fixed = [
            spec.run.to_string(),
            spec.combination.to_string(),
            spec.replication.to_string(),
            spec.seed.to_string(),
            f.flow.to_string(),
            f.cc.clone(),
            f.workload.clone(),
            clients.clone(),
            buffer.clone(),
            spec.config.loss_label.clone(),
            csv::float(f.fct_s),
            f.exchanges.to_string(),
            f.failed_exchanges.to_string(),
            f.transmissions.to_string(),
            f.retransmissions.to_string(),
            f.unnecessary_retransmissions.to_string(),
            f.timeouts.to_string(),
            csv::float(f.rto_max_s),
            csv::float(f.coap_rtt_median_s),
            f.bytes_up.to_string(),
            f.bytes_down.to_string(),
            f.completed.to_string(),
            counts_text(&f.transmission_counts),
            csv::float(f.tcp.as_ref().and_then(|t| t.setup_s)),
            tcp_count(f, |t| t.segments_sent),
            tcp_count(f, |t| t.segments_retransmitted),
            tcp_count(f, |t| t.rto_count),
            tcp_count(f, |t| t.syn_retransmissions),
            f.expired_rtos.to_string(),
            f.unfinished
                .map(|u| u.label().to_string())
                .unwrap_or_default(),
            csv::float(f.elapsed_s),
        ];
        let mesh = if spec.config.is_mesh() {
            mesh_fields(f.mesh.as_deref())
        } else {
            Vec::new()
        };
        out.record(
            fixed
                .iter()
                .chain(&mesh)
                .map(String::as_str)
                .chain(extra.iter().copied())
                .chain(tail.iter().map(String::as_str)),
        );
    }
    out.finish()
}
