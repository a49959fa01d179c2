//! `tcp.parquet` (CoAP over TCP runs): the state of a connection end right after it handled a
//! segment carrying an ACK.
//!
//! | column | type | meaning |
//! |---|---|---|
//! | `time_ns`, `time_s` | int64, float64 | the segment's arrival since the run started |
//! | `flow` | uint32 | the flow |
//! | `connection` | uint32 | the flow's connection, from 0 (random workloads open one per short-lived client) |
//! | `side` | string | `client` or `server`: the end that received the ACK |
//! | `ack` | uint64 | the segment's cumulative acknowledgement (absolute, ISN 0) |
//! | `cwnd_segments` | uint32 | congestion window after the ACK |
//! | `ssthresh_segments` | uint32 | slow-start threshold (2147483647: not yet set) |
//! | `pipe_segments` | uint32 | segments in flight |
//! | `rto_s` | float64 | the retransmission timeout |
//! | `srtt_s` | float64 | the smoothed RTT, empty before the first sample |
//! | `ca_state` | string | `open`, `disorder`, `recovery` or `loss` |

use std::sync::Arc;

use arrow_array::builder::{
    ArrayBuilder, Float64Builder, Int64Builder, StringBuilder, UInt32Builder, UInt64Builder,
};
use arrow_array::{ArrayRef, Float64Array, RecordBatch};
use coaplab_cc::time::Instant;
use coaplab_netsim::tcp::{CaState, Connection};

/// The rows of `tcp.parquet`.
#[derive(Debug, Default)]
pub(crate) struct TcpLog {
    time_ns: Int64Builder,
    flow: UInt32Builder,
    connection: UInt32Builder,
    side: StringBuilder,
    ack: UInt64Builder,
    cwnd: UInt32Builder,
    ssthresh: UInt32Builder,
    pipe: UInt32Builder,
    rto_s: Float64Builder,
    srtt_s: Float64Builder,
    ca_state: StringBuilder,
}

impl TcpLog {
    /// `conn` (connection `k` of `flow`, its `client` end or not) handled a segment
    /// acknowledging `ack` at `at`.
    pub(crate) fn ack(
        &mut self,
        at: Instant,
        flow: u32,
        k: u32,
        client: bool,
        ack: u64,
        conn: &Connection,
    ) {
        self.time_ns.append_value(at.as_nanos());
        self.flow.append_value(flow);
        self.connection.append_value(k);
        self.side
            .append_value(if client { "client" } else { "server" });
        self.ack.append_value(ack);
        self.cwnd.append_value(conn.cwnd());
        self.ssthresh.append_value(conn.ssthresh());
        self.pipe.append_value(conn.pipe());
        self.rto_s.append_value(conn.rto().as_secs_f64());
        self.srtt_s
            .append_option(conn.rtt().srtt().map(|d| d.as_secs_f64()));
        self.ca_state.append_value(match conn.ca_state() {
            CaState::Open => "open",
            CaState::Disorder => "disorder",
            CaState::Recovery => "recovery",
            CaState::Loss => "loss",
        });
    }

    /// No row kept (a UDP run).
    pub(crate) fn is_empty(&self) -> bool {
        self.time_ns.len() == 0
    }

    /// The table.
    pub(crate) fn batch(&self) -> RecordBatch {
        let time_ns = self.time_ns.finish_cloned();
        let time_s: Float64Array = time_ns.iter().map(|t| t.map(|t| t as f64 * 1e-9)).collect();
        let columns: Vec<(&str, ArrayRef)> = vec![
            ("time_ns", Arc::new(time_ns)),
            ("time_s", Arc::new(time_s)),
            ("flow", Arc::new(self.flow.finish_cloned())),
            ("connection", Arc::new(self.connection.finish_cloned())),
            ("side", Arc::new(self.side.finish_cloned())),
            ("ack", Arc::new(self.ack.finish_cloned())),
            ("cwnd_segments", Arc::new(self.cwnd.finish_cloned())),
            ("ssthresh_segments", Arc::new(self.ssthresh.finish_cloned())),
            ("pipe_segments", Arc::new(self.pipe.finish_cloned())),
            ("rto_s", Arc::new(self.rto_s.finish_cloned())),
            ("srtt_s", Arc::new(self.srtt_s.finish_cloned())),
            ("ca_state", Arc::new(self.ca_state.finish_cloned())),
        ];
        super::events::batch(
            columns,
            &[
                "time_ns",
                "time_s",
                "flow",
                "connection",
                "side",
                "ack",
                "cwnd_segments",
                "ssthresh_segments",
                "pipe_segments",
                "rto_s",
                "ca_state",
            ],
        )
    }
}
