//! `queue.parquet`: every change of the two bottleneck FIFOs, rebuilt from the star's
//! per-packet records, with the occupancy after each change.
//!
//! | column | type | meaning |
//! |---|---|---|
//! | `time_ns`, `time_s` | int64, float64 | the instant since the run started |
//! | `link` | string | `up` (clients → server) or `down` |
//! | `event` | string | `enqueue` (admitted), `dequeue` (left the FIFO), `drop` |
//! | `drop_cause` | string | `buffer_overflow` (FIFO full on arrival) or `link_error` (lost after the serializer, at the loss instant); empty otherwise |
//! | `packet` | uint64 | the packet's id (its send order in the run, from 0) |
//! | `flow` | uint32 | the flow the packet belongs to |
//! | `ip_bytes` | uint32 | the packet's IP length |
//! | `queue_bytes` | uint64 | the FIFO backlog after the event, in the bytes the FIFO counts (IP length, plus the per-packet overhead when `queue_counts_overhead`) |
//! | `queue_packets` | uint32 | the FIFO backlog after the event, in packets |
//!
//! A packet leaves the FIFO when its serialization starts, or when it ends if the link counts
//! the packet in service (`count_in_service`). At one instant, departures of earlier packets
//! come before arrivals (the FIFO retires before it admits). Rows are in time order.

use std::sync::Arc;

use arrow_array::builder::{Int64Builder, StringBuilder, UInt32Builder, UInt64Builder};
use arrow_array::{ArrayRef, Float64Array, RecordBatch};
use coaplab_cc::time::Instant;
use coaplab_netsim::{Direction, Fate, LinkConfig, PacketRecord};

use super::pcap::PacketLog;

/// One change of a FIFO.
#[derive(Debug, Clone, Copy)]
struct Change {
    at: Instant,
    /// 0: a departure of a packet that arrived earlier; 1: an arrival or drop; 2: a departure
    /// at its own arrival instant.
    phase: u8,
    down: bool,
    id: u64,
    event: &'static str,
    cause: Option<&'static str>,
    ip_bytes: u32,
    delta_bytes: i64,
    delta_packets: i32,
}

/// The table of both FIFOs; `links` are the up and down link configurations.
pub(crate) fn batch(
    records: &[PacketRecord],
    log: &PacketLog,
    links: [&LinkConfig; 2],
) -> RecordBatch {
    let mut changes = Vec::with_capacity(records.len() * 2);
    for r in records {
        let down = r.direction == Direction::Down;
        let link = links[usize::from(down)];
        let charge = if link.queue_counts_overhead {
            r.charged_bytes
        } else {
            r.ip_len
        };
        let change = |at, phase, event, cause, sign: i64| Change {
            at,
            phase,
            down,
            id: r.id.0,
            event,
            cause,
            ip_bytes: r.ip_len,
            delta_bytes: sign * i64::from(charge),
            delta_packets: sign as i32,
        };
        if r.fate == Fate::BufferOverflow {
            changes.push(change(r.enqueued_at, 1, "drop", Some("buffer_overflow"), 0));
            continue;
        }
        changes.push(change(r.enqueued_at, 1, "enqueue", None, 1));
        if let Some((start, end)) = r.serialized {
            let leaves = if link.count_in_service { end } else { start };
            let phase = if leaves == r.enqueued_at { 2 } else { 0 };
            changes.push(change(leaves, phase, "dequeue", None, -1));
        }
        if let Fate::LinkError(at) = r.fate {
            changes.push(change(at, 1, "drop", Some("link_error"), 0));
        }
    }
    changes.sort_by_key(|c| (c.at, c.phase, c.id, c.event));
    let mut time_ns = Int64Builder::with_capacity(changes.len());
    let mut link = StringBuilder::new();
    let mut event = StringBuilder::new();
    let mut cause = StringBuilder::new();
    let mut packet = UInt64Builder::with_capacity(changes.len());
    let mut flow = UInt32Builder::with_capacity(changes.len());
    let mut ip_bytes = UInt32Builder::with_capacity(changes.len());
    let mut queue_bytes = UInt64Builder::with_capacity(changes.len());
    let mut queue_packets = UInt32Builder::with_capacity(changes.len());
    let mut backlog = [(0i64, 0i32); 2];
    for c in &changes {
        let b = &mut backlog[usize::from(c.down)];
        b.0 += c.delta_bytes;
        b.1 += c.delta_packets;
        time_ns.append_value(c.at.as_nanos());
        link.append_value(if c.down { "down" } else { "up" });
        event.append_value(c.event);
        cause.append_option(c.cause);
        packet.append_value(c.id);
        flow.append_option(log.flow(c.id));
        ip_bytes.append_value(c.ip_bytes);
        queue_bytes.append_value(b.0.max(0) as u64);
        queue_packets.append_value(b.1.max(0) as u32);
    }
    let time_ns = time_ns.finish();
    let time_s: Float64Array = time_ns.iter().map(|t| t.map(|t| t as f64 * 1e-9)).collect();
    let columns: Vec<(&str, ArrayRef)> = vec![
        ("time_ns", Arc::new(time_ns)),
        ("time_s", Arc::new(time_s)),
        ("link", Arc::new(link.finish())),
        ("event", Arc::new(event.finish())),
        ("drop_cause", Arc::new(cause.finish())),
        ("packet", Arc::new(packet.finish())),
        ("flow", Arc::new(flow.finish())),
        ("ip_bytes", Arc::new(ip_bytes.finish())),
        ("queue_bytes", Arc::new(queue_bytes.finish())),
        ("queue_packets", Arc::new(queue_packets.finish())),
    ];
    super::events::batch(
        columns,
        &[
            "time_ns",
            "time_s",
            "link",
            "event",
            "packet",
            "ip_bytes",
            "queue_bytes",
            "queue_packets",
        ],
    )
}
