//! What the simulated (`tcp.rs`) and the emulated (`emulated/tcp.rs`) CoAP-over-TCP runners share
//! about a flow: its plan, drawn from the same named streams in both modes so that a simulated
//! and an emulated run of one scenario are paired, and the flow record its measurements make.

use coaplab_cc::rng::{Random, SeededRandom};
use coaplab_cc::time::{Duration, Instant};
use coaplab_endpoint::tcp::{Session, SessionConfig};
use coaplab_endpoint::{Request, Router};
use coaplab_netsim::rng;
use coaplab_wire::Code;

use crate::metrics::FlowMetrics;
use crate::results::{FlowRecord, TcpFlowRecord};
use crate::scenario::{FlowConfig, Workload, LONG_TRANSFER_TOKEN_BYTES};

/// What flow `i` will do, fixed before the run starts.
pub(super) struct FlowPlan {
    /// The flow's first connect (stream `start/flow{i}`, U[0, start_jitter]).
    pub(super) start: Instant,
    pub(super) workload: &'static str,
    /// The request the client repeats (`GET` for the long transfer, a `POST` of
    /// `request_payload_bytes` for short exchanges).
    pub(super) request: Request,
    /// Payload bytes of every whole answer: `object_bytes` for the long transfer,
    /// `response_payload_bytes` for short exchanges.
    pub(super) response_bytes: u64,
    /// Token length of the client's session (docs/experiments.md §5.1: 1 B; §5.2: 2 B).
    pub(super) token_len: usize,
    /// The first session's first token (stream `ids/flow{i}`); later sessions continue the
    /// sequence.
    pub(super) first_token: u64,
    /// Exchanges to complete (1 for the long transfer).
    pub(super) quota: u32,
    /// Random workload: the batch sizes U{min..=max} drawn from the stream
    /// `workload/flow{i}`, as the UDP flows' driver draws them.
    pub(super) batches: Option<(SeededRandom, u32, u32)>,
}

impl FlowPlan {
    /// The plan of flow `i` (of group `fc`, whose resource is `path`) in the run seeded `seed`.
    pub(super) fn new(seed: u64, fc: &FlowConfig, i: u32, path: &str) -> FlowPlan {
        let mut start_rng = rng::indexed_stream(seed, "start/flow", i);
        let jitter_ns = fc.start_jitter.as_nanos() as f64;
        let start =
            Instant::ZERO + Duration::from_nanos((start_rng.uniform01() * jitter_ns) as i64);
        let token_len = match fc.workload {
            Workload::LongTransfer { .. } => LONG_TRANSFER_TOKEN_BYTES,
            _ => 2,
        };
        FlowPlan {
            start,
            workload: fc.workload.name(),
            request: match fc.workload {
                Workload::LongTransfer { .. } => Request::get(path),
                _ => Request::post(path, vec![0; fc.request_payload_bytes as usize]),
            },
            response_bytes: match fc.workload {
                Workload::LongTransfer { object_bytes, .. } => object_bytes,
                _ => u64::from(fc.response_payload_bytes),
            },
            token_len,
            first_token: rng::indexed_stream(seed, "ids/flow", i).below(1 << (8 * token_len)),
            quota: match fc.workload {
                Workload::LongTransfer { .. } => 1,
                Workload::Continuous { exchanges } | Workload::Random { exchanges, .. } => {
                    exchanges
                }
                // Rejected for TCP flows by the scenario reader.
                Workload::Observe { .. } => 1,
            },
            batches: match fc.workload {
                Workload::Random {
                    batch_min,
                    batch_max,
                    ..
                } => Some((
                    rng::indexed_stream(seed, "workload/flow", i),
                    batch_min,
                    batch_max,
                )),
                _ => None,
            },
        }
    }

    /// The client session of the flow's next connection, its first request already written.
    /// `sent` requests went out on earlier connections: tokens continue across a random
    /// flow's short-lived clients. Its Max-Message-Size admits the whole answer as one
    /// message (docs/experiments.md §5.1's 131,072 B, raised for an object above 131,064 B).
    pub(super) fn client_session(&self, now: Instant, sent: u32) -> Result<Session, String> {
        let config = SessionConfig {
            token_len: self.token_len,
            first_token: (self.first_token + u64::from(sent)) % (1 << (8 * self.token_len)),
            ..SessionConfig::client()
        }
        .admitting_response(self.response_bytes)
        .map_err(|e| e.to_string())?;
        let mut session = Session::new(config, Router::new()).map_err(|e| e.to_string())?;
        session
            .request(now, &self.request)
            .map_err(|e| e.to_string())?;
        Ok(session)
    }

    /// Whether a response is the whole answer the flow asked for: a success (2.xx) carrying
    /// exactly [`FlowPlan::response_bytes`]. Anything else (the server's 5.00 for a message
    /// over our Max-Message-Size, a cut body) ends the flow incomplete: a flow is complete only
    /// when every answer arrived whole.
    pub(super) fn is_whole(&self, code: Code, body_len: usize) -> bool {
        code.class() == 2 && body_len as u64 == self.response_bytes
    }
}

/// The size of the next short-lived client's batch (the whole `quota` for the other
/// workloads).
pub(super) fn draw_batch(batches: &mut Option<(SeededRandom, u32, u32)>, quota: u32) -> u32 {
    match batches.as_mut() {
        Some((rng, min, max)) => {
            let span = u64::from(*max - *min) + 1;
            *min + rng.below(span) as u32
        }
        None => quota,
    }
}

/// Segment counters over a flow's connections, both ends (docs/experiments.md §7 for TCP).
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct SegmentCounts {
    pub(super) segments_sent: u64,
    /// Segments carrying data, the FIN included.
    pub(super) data_segments_sent: u64,
    pub(super) retransmitted: u64,
    pub(super) syn_retransmissions: u64,
    pub(super) rtos: u64,
    /// The largest RTO of an expired timer, either end.
    pub(super) rto_max: Option<Duration>,
}

impl SegmentCounts {
    /// Both counts added field by field.
    pub(super) fn sum(self, o: SegmentCounts) -> SegmentCounts {
        SegmentCounts {
            segments_sent: self.segments_sent + o.segments_sent,
            data_segments_sent: self.data_segments_sent + o.data_segments_sent,
            retransmitted: self.retransmitted + o.retransmitted,
            syn_retransmissions: self.syn_retransmissions + o.syn_retransmissions,
            rtos: self.rtos + o.rtos,
            rto_max: self.rto_max.max(o.rto_max),
        }
    }
}

/// The instants docs/experiments.md §7 measures a TCP flow by.
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct FlowTimes {
    /// First SYN sent.
    pub(super) syn_at: Option<Instant>,
    /// SYN-ACK received (client established).
    pub(super) established_at: Option<Instant>,
    /// The first request was written.
    pub(super) get_at: Option<Instant>,
    /// The last response's last byte arrived.
    pub(super) done_at: Option<Instant>,
}

/// How far a TCP flow got, kept alike by both runners: its docs/experiments.md §7 instants, the
/// requests written and the completed exchanges' times.
#[derive(Debug, Default)]
pub(super) struct Progress {
    pub(super) times: FlowTimes,
    /// Requests written.
    pub(super) requests: u32,
    /// Request → response time of every completed exchange.
    pub(super) rtts: Vec<Duration>,
    /// Responses that were not whole answers ([`FlowPlan::is_whole`]); each ends its flow
    /// incomplete (the record's `failed_exchanges`).
    pub(super) partial_answers: u32,
    /// When the flow ended without completing (its connection or session gave up, or an
    /// answer was not whole): the record's `unfinished = gave_up`.
    pub(super) gave_up_at: Option<Instant>,
}

impl Progress {
    /// Client connection `k` became established at `now`: its session, with the first request
    /// of its batch written (`batch_left` counts it).
    pub(super) fn open_session(
        &mut self,
        plan: &FlowPlan,
        now: Instant,
        k: u32,
        batch_left: &mut u32,
    ) -> Result<Session, String> {
        if k == 0 {
            self.times.established_at = Some(now);
        }
        let session = plan.client_session(now, self.requests)?;
        self.requests += 1;
        *batch_left -= 1;
        self.times.get_at.get_or_insert(now);
        Ok(session)
    }

    /// An exchange started at `started` completed at `at`; true if it was the flow's last
    /// (`quota` reached).
    pub(super) fn completed(&mut self, at: Instant, started: Instant, quota: u32) -> bool {
        self.rtts.push(at - started);
        let done = self.rtts.len() as u32 >= quota;
        if done {
            self.times.done_at = Some(at);
        }
        done
    }

    /// The flow gives up at `now`: `failed` is the runner's flag of a flow ended early, and
    /// the first end counts.
    pub(super) fn give_up(&mut self, failed: &mut bool, now: Instant) {
        if self.times.done_at.is_none() && !*failed {
            self.gave_up_at = Some(now);
        }
        *failed = true;
    }

    /// Writes the flow's next request on `session` at `now` (`batch_left` counts it).
    pub(super) fn request(
        &mut self,
        plan: &FlowPlan,
        session: &mut Session,
        now: Instant,
        batch_left: &mut u32,
    ) -> Result<(), String> {
        session
            .request(now, &plan.request)
            .map_err(|e| e.to_string())?;
        self.requests += 1;
        *batch_left -= 1;
        Ok(())
    }
}

/// The flows.csv row of TCP flow `i`: `transmissions`/`retransmissions` are its data segments
/// (docs/experiments.md §7), every request over the stream counts as sent once, `failed_exchanges`
/// counts the answers that were not whole, and `setup_s` runs from the first SYN to the SYN-ACK.
/// `unnecessary_retransmissions` is left 0 for the caller.
pub(super) fn flow_record(
    i: u32,
    cc: &str,
    workload: &'static str,
    progress: &Progress,
    n: SegmentCounts,
    bytes_up_down: (u64, u64),
    run_end: Instant,
) -> FlowRecord {
    let (times, rtts) = (progress.times, &progress.rtts);
    let mut metrics = FlowMetrics::default();
    metrics.failed_exchanges = progress.partial_answers;
    metrics.first_sent = times.get_at;
    metrics.finished = times.done_at;
    metrics.gave_up_at = progress.gave_up_at;
    metrics.exchanges = rtts.len() as u32;
    metrics.transmissions = n.data_segments_sent;
    metrics.retransmissions = n.retransmitted;
    (metrics.bytes_up, metrics.bytes_down) = bytes_up_down;
    metrics.rtts = rtts.to_vec();
    if !rtts.is_empty() {
        metrics.transmission_counts.push(rtts.len() as u32);
    }
    let mut r = metrics.record(i, cc, workload, times.done_at.is_some(), run_end);
    r.expired_rtos = n.rtos;
    r.rto_max_s = n.rto_max.map(|d| d.as_secs_f64());
    r.tcp = Some(TcpFlowRecord {
        setup_s: match (times.syn_at, times.established_at) {
            (Some(a), Some(b)) => Some((b - a).as_secs_f64()),
            _ => None,
        },
        segments_sent: n.segments_sent,
        segments_retransmitted: n.retransmitted,
        syn_retransmissions: n.syn_retransmissions,
        rto_count: n.rtos,
    });
    r
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenario::Scenario;

    fn plan(flows: &str) -> FlowPlan {
        let text = format!("name = \"t\"\n[[flows]]\n{flows}");
        let config = Scenario::parse(&text, "t.toml").unwrap().config(0).unwrap();
        FlowPlan::new(1, &config.flows[0], 0, "f")
    }

    #[test]
    fn the_client_admits_the_whole_object_as_one_message() {
        let long = |n: u64| {
            plan(&format!(
                "cc = \"tcp-newreno\"\nworkload = \"long-transfer\"\nobject_bytes = {n}\n"
            ))
        };
        let limit = |p: &FlowPlan| {
            p.client_session(Instant::ZERO, 0)
                .unwrap()
                .config()
                .max_message_size
        };
        // docs/experiments.md §5.1's 131,072 B up to 131,064-B objects, then the response frame's
        // length.
        assert_eq!(limit(&long(102_400)), Some(131_072));
        assert_eq!(limit(&long(131_064)), Some(131_072));
        assert_eq!(limit(&long(131_065)), Some(131_073));
        assert_eq!(limit(&long(8 << 20)), Some((8 << 20) + 8));
        let p = long(200_000);
        assert!(p.is_whole(Code::CONTENT, 200_000));
        assert!(!p.is_whole(Code::CONTENT, 199_999));
        // What the server answered a 200,000-B object before: 5.00 with no body.
        assert!(!p.is_whole(Code::INTERNAL_SERVER_ERROR, 0));
        let short = plan("cc = \"tcp-newreno\"\nresponse_payload_bytes = 60\n");
        assert_eq!(limit(&short), Some(131_072));
        assert!(short.is_whole(Code::CHANGED, 60));
        assert!(!short.is_whole(Code::CHANGED, 53));
    }
}
