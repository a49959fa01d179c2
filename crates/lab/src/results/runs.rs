//! `runs.csv`: one row per run with its status and what the bottleneck saw (docs/experiments.md §7:
//! drops by cause, wire counts, utilisation = busy_s / sim_time_s).

use super::csv;
use super::manifest::{LinkRecord, ManifestRun, MeshChannelRecord, Status};

/// The columns of `runs.csv` before the sweep columns.
pub const RUN_COLUMNS: &[&str] = &[
    "run",
    "combination",
    "replication",
    "seed",
    "status",
    "error",
    "wall_s",
    "events",
    "sim_time_s",
    "down_offered_packets",
    "down_overflow_drops",
    "down_link_error_drops",
    "down_sent_packets",
    "down_sent_bytes",
    "down_busy_s",
    "down_queue_high_water_bytes",
    "up_offered_packets",
    "up_overflow_drops",
    "up_link_error_drops",
    "up_sent_packets",
    "up_sent_bytes",
    "up_busy_s",
    "up_queue_high_water_bytes",
];

/// The columns a mesh plan's `runs.csv` adds after [`RUN_COLUMNS`] (before the sweep
/// columns): [`MeshChannelRecord`] and the link-level delivery ratio.
pub const MESH_RUN_COLUMNS: &[&str] = &[
    "frames_on_air",
    "data_frames",
    "data_frames_acked",
    "ack_frames",
    "control_frames",
    "channel_access_failures",
    "collisions",
    "link_pdr",
];

fn mesh_fields(m: Option<&MeshChannelRecord>) -> Vec<String> {
    let Some(m) = m else {
        return vec![String::new(); MESH_RUN_COLUMNS.len()];
    };
    let mut out: Vec<String> = [
        m.frames_on_air,
        m.data_frames,
        m.data_frames_acked,
        m.ack_frames,
        m.control_frames,
        m.channel_access_failures,
        m.collisions,
    ]
    .iter()
    .map(u64::to_string)
    .collect();
    let pdr = (m.data_frames > 0).then(|| m.data_frames_acked as f64 / m.data_frames as f64);
    out.push(csv::float(pdr));
    out
}

fn link_fields(l: Option<&LinkRecord>) -> [String; 7] {
    match l {
        None => Default::default(),
        Some(l) => [
            l.offered_packets.to_string(),
            l.overflow_drops.to_string(),
            l.link_error_drops.to_string(),
            l.sent_packets.to_string(),
            l.sent_bytes.to_string(),
            csv::float(Some(l.busy_s)),
            l.queue_high_water_bytes.to_string(),
        ],
    }
}

/// `runs.csv` text for `runs` (in run order); `columns` are the sweep columns. When a run has
/// mesh channel counters (a mesh plan), every row has the [`MESH_RUN_COLUMNS`].
pub fn to_csv(runs: &[ManifestRun], columns: &[String]) -> String {
    let mesh = runs
        .iter()
        .any(|r| r.network.is_some_and(|n| n.mesh.is_some()));
    let mesh_columns = if mesh { MESH_RUN_COLUMNS } else { &[] };
    let mut out = csv::Text::with_header(
        RUN_COLUMNS
            .iter()
            .chain(mesh_columns)
            .copied()
            .chain(columns.iter().map(String::as_str)),
    );
    for r in runs {
        let status = match r.status {
            Status::Ok => "ok",
            Status::Failed => "failed",
            Status::Pending => "pending",
        };
        let mut fields = vec![
            r.run.to_string(),
            r.combination.to_string(),
            r.replication.to_string(),
            r.seed.to_string(),
            status.to_string(),
            r.error.clone().unwrap_or_default(),
            csv::float(Some(r.wall_s)),
            r.events.to_string(),
            csv::float(r.network.map(|n| n.sim_time_s)),
        ];
        fields.extend(link_fields(r.network.as_ref().map(|n| &n.down)));
        fields.extend(link_fields(r.network.as_ref().map(|n| &n.up)));
        if mesh {
            fields.extend(mesh_fields(
                r.network.as_ref().and_then(|n| n.mesh.as_ref()),
            ));
        }
        for c in columns {
            fields.push(r.parameters.get(c).cloned().unwrap_or_default());
        }
        out.record(fields.iter().map(String::as_str));
    }
    out.finish()
}
