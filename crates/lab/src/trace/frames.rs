//! `frames.parquet` (mesh runs only): every 802.15.4 frame that went on air during the run,
//! one row per transmission on one hop, in the order the transmissions ended (netsim's
//! [`FrameRecord`]s). RPL's warm-up before the run is not in it.
//!
//! | column | type | rows | meaning |
//! |---|---|---|---|
//! | `start_ns`, `start_s` | int64, float64 | all | the transmission's start since the run started (the warm-up's frames are not kept, so never negative) |
//! | `end_ns` | int64 | all | its end |
//! | `node` | uint32 | all | the sending node |
//! | `to` | uint32 | unicast | the addressed node (empty: broadcast) |
//! | `kind` | string | all | `data` (a CoAP datagram's fragment or whole), `ack`, `dio`, `dis`, `dao` |
//! | `psdu_bytes` | uint32 | all | MAC header + payload + FCS |
//! | `packet` | uint64 | `data` | the datagram's id (its send order in the run, from 0) |
//! | `flow` | uint32 | `data` | the flow the datagram belongs to (requests and their replies) |
//! | `fragment`, `fragments` | uint32 | `data` | fragment index from 0, and count, on this hop |
//! | `attempt` | uint32 | unicast data and DAO | 1 = first transmission, then MAC retries |
//! | `decoded` | bool | all | the addressed node decoded it (broadcast: some node did) |
//! | `receivers` | uint32 | all | nodes that decoded it |

use std::sync::Arc;

use arrow_array::builder::{
    BooleanBuilder, Int64Builder, StringBuilder, UInt32Builder, UInt64Builder,
};
use arrow_array::{ArrayRef, Float64Array, RecordBatch};
use coaplab_netsim::mesh::{FrameKind, FrameRecord};

use crate::tag;

/// The table of `frames`.
pub(crate) fn batch(frames: &[FrameRecord]) -> RecordBatch {
    let n = frames.len();
    let mut start_ns = Int64Builder::with_capacity(n);
    let mut end_ns = Int64Builder::with_capacity(n);
    let mut node = UInt32Builder::with_capacity(n);
    let mut to = UInt32Builder::with_capacity(n);
    let mut kind = StringBuilder::new();
    let mut psdu = UInt32Builder::with_capacity(n);
    let mut packet = UInt64Builder::with_capacity(n);
    let mut flow = UInt32Builder::with_capacity(n);
    let mut fragment = UInt32Builder::with_capacity(n);
    let mut fragments = UInt32Builder::with_capacity(n);
    let mut attempt = UInt32Builder::with_capacity(n);
    let mut decoded = BooleanBuilder::with_capacity(n);
    let mut receivers = UInt32Builder::with_capacity(n);
    for f in frames {
        start_ns.append_value(f.start.as_nanos());
        end_ns.append_value(f.end.as_nanos());
        node.append_value(u32::from(f.node));
        to.append_option(f.to.map(u32::from));
        kind.append_value(f.kind.name());
        psdu.append_value(u32::from(f.psdu_bytes));
        packet.append_option(f.packet);
        flow.append_option(f.tag.filter(|_| f.kind == FrameKind::Data).map(tag::flow));
        fragment.append_option(f.fragment.map(|(k, _)| u32::from(k)));
        fragments.append_option(f.fragment.map(|(_, n)| u32::from(n)));
        attempt.append_option(f.attempt);
        decoded.append_value(f.decoded);
        receivers.append_value(f.receivers);
    }
    let start_ns = start_ns.finish();
    let start_s: Float64Array = start_ns
        .iter()
        .map(|t| t.map(|t| t as f64 * 1e-9))
        .collect();
    let columns: Vec<(&str, ArrayRef)> = vec![
        ("start_ns", Arc::new(start_ns)),
        ("start_s", Arc::new(start_s)),
        ("end_ns", Arc::new(end_ns.finish())),
        ("node", Arc::new(node.finish())),
        ("to", Arc::new(to.finish())),
        ("kind", Arc::new(kind.finish())),
        ("psdu_bytes", Arc::new(psdu.finish())),
        ("packet", Arc::new(packet.finish())),
        ("flow", Arc::new(flow.finish())),
        ("fragment", Arc::new(fragment.finish())),
        ("fragments", Arc::new(fragments.finish())),
        ("attempt", Arc::new(attempt.finish())),
        ("decoded", Arc::new(decoded.finish())),
        ("receivers", Arc::new(receivers.finish())),
    ];
    super::events::batch(
        columns,
        &[
            "start_ns",
            "start_s",
            "end_ns",
            "node",
            "kind",
            "psdu_bytes",
            "decoded",
            "receivers",
        ],
    )
}
