//! `events.parquet`: one row per client endpoint event of interest, in the order the flows
//! produced them (each flow's rows are in time order).
//!
//! | column | type | rows | meaning |
//! |---|---|---|---|
//! | `time_ns`, `time_s` | int64, float64 | all | the event's instant since the run started |
//! | `flow` | uint32 | all | the flow (client) index |
//! | `event` | string | all | `transmit`, `expire`, `complete`, `fail` or `rto` |
//! | `exchange` | uint64 | all but `rto` | the client's exchange number, from 0 |
//! | `transmission` | uint32 | `transmit`, `expire`, `complete` | the copy, 1 = the original (for `expire`: the copy the timer was timing; for `complete`: the copy the answer names, when it names one) |
//! | `transmissions` | uint32 | `complete`, `fail` | copies sent in the exchange |
//! | `bytes` | uint32 | `transmit` | CoAP message bytes |
//! | `timer_s` | float64 | `expire` | the armed timer that expired (after dithering, backoff, caps) |
//! | `rtt_s` | float64 | `complete` | the CoAP RTT sample: original sent → first answer |
//! | `rto_s` | float64 | `rto` | the algorithm's base RTO after the exchange ended |
//! | `state` | string | `rto` | the algorithm's state (FASOR: `FAST`, `FAST_SLOW_FAST`, `SLOW_FAST`) |
//! | `srtt_s`, `rttvar_s` | float64 | `rto` | the estimator, when the algorithm has one |
//! | `vars` | string | `rto` | every estimator variable, `name=value;...` |
//! | `reason` | string | `fail` | `give_up`, `reset`, `response_timeout`, ... |

use std::sync::Arc;

use arrow_array::builder::{
    Float64Builder, Int64Builder, StringBuilder, UInt32Builder, UInt64Builder,
};
use arrow_array::{ArrayRef, RecordBatch};
use arrow_schema::{DataType, Field, Schema};
use coaplab_cc::time::Instant;
use coaplab_endpoint::{Event, FailReason};

/// The rows of `events.parquet`, column by column.
#[derive(Debug, Default)]
pub(crate) struct EventLog {
    time_ns: Int64Builder,
    flow: UInt32Builder,
    event: StringBuilder,
    exchange: UInt64Builder,
    transmission: UInt32Builder,
    transmissions: UInt32Builder,
    bytes: UInt32Builder,
    timer_s: Float64Builder,
    rtt_s: Float64Builder,
    rto_s: Float64Builder,
    state: StringBuilder,
    srtt_s: Float64Builder,
    rttvar_s: Float64Builder,
    vars: StringBuilder,
    reason: StringBuilder,
}

/// One row's optional fields.
#[derive(Default)]
struct Row<'a> {
    exchange: Option<u64>,
    transmission: Option<u32>,
    transmissions: Option<u32>,
    bytes: Option<u32>,
    timer_s: Option<f64>,
    rtt_s: Option<f64>,
    rto_s: Option<f64>,
    state: Option<&'a str>,
    srtt_s: Option<f64>,
    rttvar_s: Option<f64>,
    vars: Option<String>,
    reason: Option<&'a str>,
}

impl EventLog {
    /// Keeps `event` of client `flow` if it is one of the traced kinds.
    pub(crate) fn push(&mut self, flow: u32, event: &Event) {
        let (at, kind, row) = match *event {
            Event::Sent {
                exchange,
                ordinal,
                bytes,
                at,
                ..
            } => (
                at,
                "transmit",
                Row {
                    exchange: Some(exchange.0),
                    transmission: Some(ordinal + 1),
                    bytes: Some(bytes as u32),
                    ..Row::default()
                },
            ),
            Event::TimerExpired {
                exchange,
                ordinal,
                armed,
                at,
                ..
            } => (
                at,
                "expire",
                Row {
                    exchange: Some(exchange.0),
                    transmission: Some(ordinal + 1),
                    timer_s: Some(armed.as_secs_f64()),
                    ..Row::default()
                },
            ),
            Event::ExchangeCompleted {
                exchange,
                transmissions,
                rtt,
                answered,
                at,
                ..
            } => (
                at,
                "complete",
                Row {
                    exchange: Some(exchange.0),
                    transmission: answered.map(|a| a + 1),
                    transmissions: Some(transmissions),
                    rtt_s: Some(rtt.as_secs_f64()),
                    ..Row::default()
                },
            ),
            Event::ExchangeFailed {
                exchange,
                transmissions,
                reason,
                at,
                ..
            } => (
                at,
                "fail",
                Row {
                    exchange: Some(exchange.0),
                    transmissions: Some(transmissions),
                    reason: Some(reason_name(reason)),
                    ..Row::default()
                },
            ),
            Event::Snapshot {
                at, ref snapshot, ..
            } => {
                let var = |name: &str| {
                    snapshot
                        .vars
                        .iter()
                        .find(|(n, _)| *n == name)
                        .map(|(_, v)| *v)
                };
                let vars = snapshot
                    .vars
                    .iter()
                    .map(|(n, v)| format!("{n}={v}"))
                    .collect::<Vec<_>>()
                    .join(";");
                (
                    at,
                    "rto",
                    Row {
                        rto_s: Some(snapshot.rto.as_secs_f64()),
                        state: snapshot.state,
                        srtt_s: var("srtt_s"),
                        rttvar_s: var("rttvar_s"),
                        vars: Some(vars),
                        ..Row::default()
                    },
                )
            }
            _ => return,
        };
        self.row(at, flow, kind, row);
    }

    fn row(&mut self, at: Instant, flow: u32, kind: &str, r: Row<'_>) {
        self.time_ns.append_value(at.as_nanos());
        self.flow.append_value(flow);
        self.event.append_value(kind);
        self.exchange.append_option(r.exchange);
        self.transmission.append_option(r.transmission);
        self.transmissions.append_option(r.transmissions);
        self.bytes.append_option(r.bytes);
        self.timer_s.append_option(r.timer_s);
        self.rtt_s.append_option(r.rtt_s);
        self.rto_s.append_option(r.rto_s);
        self.state.append_option(r.state);
        self.srtt_s.append_option(r.srtt_s);
        self.rttvar_s.append_option(r.rttvar_s);
        self.vars.append_option(r.vars);
        self.reason.append_option(r.reason);
    }

    /// The table (the log's builders are cloned, so it can be asked again).
    pub(crate) fn batch(&self) -> RecordBatch {
        let time_ns = self.time_ns.finish_cloned();
        let time_s: arrow_array::Float64Array =
            time_ns.iter().map(|t| t.map(|t| t as f64 * 1e-9)).collect();
        let columns: Vec<(&str, ArrayRef)> = vec![
            ("time_ns", Arc::new(time_ns)),
            ("time_s", Arc::new(time_s)),
            ("flow", Arc::new(self.flow.finish_cloned())),
            ("event", Arc::new(self.event.finish_cloned())),
            ("exchange", Arc::new(self.exchange.finish_cloned())),
            ("transmission", Arc::new(self.transmission.finish_cloned())),
            (
                "transmissions",
                Arc::new(self.transmissions.finish_cloned()),
            ),
            ("bytes", Arc::new(self.bytes.finish_cloned())),
            ("timer_s", Arc::new(self.timer_s.finish_cloned())),
            ("rtt_s", Arc::new(self.rtt_s.finish_cloned())),
            ("rto_s", Arc::new(self.rto_s.finish_cloned())),
            ("state", Arc::new(self.state.finish_cloned())),
            ("srtt_s", Arc::new(self.srtt_s.finish_cloned())),
            ("rttvar_s", Arc::new(self.rttvar_s.finish_cloned())),
            ("vars", Arc::new(self.vars.finish_cloned())),
            ("reason", Arc::new(self.reason.finish_cloned())),
        ];
        batch(columns, &["time_ns", "time_s", "flow", "event"])
    }
}

/// A record batch of `columns`; the columns named in `required` are not nullable.
pub(crate) fn batch(columns: Vec<(&str, ArrayRef)>, required: &[&str]) -> RecordBatch {
    let fields: Vec<Field> = columns
        .iter()
        .map(|(name, a)| {
            let dt: DataType = a.data_type().clone();
            Field::new(*name, dt, !required.contains(name))
        })
        .collect();
    let arrays = columns.into_iter().map(|(_, a)| a).collect();
    RecordBatch::try_new(Arc::new(Schema::new(fields)), arrays)
        .expect("every column has one value per row")
}

/// The `reason` column's name of a failure.
fn reason_name(reason: FailReason) -> &'static str {
    match reason {
        FailReason::GiveUp => "give_up",
        FailReason::Reset => "reset",
        FailReason::ResponseTimeout => "response_timeout",
        FailReason::BlockMismatch => "block_mismatch",
        FailReason::Cancelled => "cancelled",
        FailReason::Unencodable => "unencodable",
        FailReason::BodyTooLarge => "body_too_large",
        FailReason::UnknownCriticalOption { .. } => "unknown_critical_option",
    }
}
