//! The multi-hop experiments' per-flow metrics (docs/experiments.md §8f, Rathod 2022): FCT of
//! the first 50 exchanges, CoAP-level delivery ratio, exchange delay and base-RTO statistics,
//! transaction, sending and throughput rates, the per-50-ms throughput series and, on request,
//! one sample per exchange (for CDFs).
//!
//! Kept only for runs that write them (mesh runs, `[output] intervals`, `[output] exchanges`):
//! the star's hot path and records are untouched otherwise. Definitions, units and the files
//! and columns they land in: docs/scenarios.md, "Mesh metrics".

use coaplab_cc::time::{Duration, Instant};
use coaplab_endpoint::Event;

use crate::results::{ExchangeSample, MeshFlowRecord};
use crate::stats;

/// Width of one throughput interval (kept with the records it sizes).
pub use crate::results::INTERVAL;

/// Successful exchanges whose completion ends `fct50_s` (the thesis's "FCT for 50 exchanges";
/// Ch. 5: first packet → ACK of the 50th).
pub const FCT_EXCHANGES: u32 = 50;

/// Longest run the interval series covers: 2^21 intervals of 50 ms (29 h, beyond the 6-h
/// `max_sim_time_s` default); later completions are counted in the last interval.
const MAX_INTERVALS: usize = 1 << 21;

/// What the mesh metrics keep of one flow while it runs.
#[derive(Debug, Clone, Default)]
pub struct MeshFlowMetrics {
    /// Request payload bytes a successful exchange delivers (credited at its answer).
    payload_bytes: u64,
    /// Delivered request payload bytes per [`INTERVAL`] since the run started; `None` when the
    /// series is not written.
    interval_bytes: Option<Vec<u64>>,
    /// Successful exchanges so far.
    successes: u32,
    /// When the [`FCT_EXCHANGES`]-th success's answer arrived.
    fct_end: Option<Instant>,
    /// When the last exchange ended (answered or failed).
    last_end: Option<Instant>,
    /// The algorithm's base RTO (`peek_rto`, seconds) after each exchange ended.
    rto_base_s: Vec<f64>,
    /// One sample per ended exchange; `None` unless `[output] exchanges`.
    samples: Option<Vec<ExchangeSample>>,
    /// Send time of each exchange's original, by flow exchange id (for failed exchanges'
    /// samples); empty unless samples are kept.
    starts: Vec<Instant>,
}

impl MeshFlowMetrics {
    /// Metrics of a flow whose successful exchange delivers `payload_bytes` of request
    /// payload; the interval series when `intervals`, one sample per exchange when `samples`.
    pub fn new(payload_bytes: u32, intervals: bool, samples: bool) -> Self {
        MeshFlowMetrics {
            payload_bytes: u64::from(payload_bytes),
            interval_bytes: intervals.then(Vec::new),
            samples: samples.then(Vec::new),
            ..MeshFlowMetrics::default()
        }
    }

    /// Accounts a client endpoint event; `exchange` is the event's flow exchange id
    /// (`FlowMetrics::exchange_id`).
    pub fn on_event(&mut self, event: &Event, exchange: u64) {
        match *event {
            Event::Sent { ordinal: 0, at, .. } if self.samples.is_some() => {
                let i = exchange as usize;
                if self.starts.len() <= i {
                    self.starts.resize(i + 1, at);
                }
                self.starts[i] = at;
            }
            Event::ExchangeCompleted {
                rtt,
                transmissions,
                at,
                ..
            } => {
                self.successes += 1;
                if self.successes == FCT_EXCHANGES {
                    self.fct_end = Some(at);
                }
                self.last_end = Some(at);
                if let Some(series) = &mut self.interval_bytes {
                    let k = ((at - Instant::ZERO).as_nanos() / INTERVAL.as_nanos()).max(0) as usize;
                    let k = k.min(MAX_INTERVALS - 1);
                    if series.len() <= k {
                        series.resize(k + 1, 0);
                    }
                    series[k] += self.payload_bytes;
                }
                if let Some(s) = &mut self.samples {
                    s.push(ExchangeSample {
                        start_s: (at - rtt).as_secs_f64(),
                        end_s: at.as_secs_f64(),
                        delay_s: Some(rtt.as_secs_f64()),
                        transmissions,
                        rto_base_s: None,
                    });
                }
            }
            Event::ExchangeFailed {
                transmissions, at, ..
            } => {
                self.last_end = Some(at);
                if let Some(s) = &mut self.samples {
                    let start = self.starts.get(exchange as usize).copied().unwrap_or(at);
                    s.push(ExchangeSample {
                        start_s: start.as_secs_f64(),
                        end_s: at.as_secs_f64(),
                        delay_s: None,
                        transmissions,
                        rto_base_s: None,
                    });
                }
            }
            // The endpoint emits the snapshot right after the exchange's end event.
            Event::Snapshot { ref snapshot, .. } => {
                let rto = snapshot.rto.as_secs_f64();
                self.rto_base_s.push(rto);
                if let Some(last) = self.samples.as_mut().and_then(|s| s.last_mut()) {
                    last.rto_base_s.get_or_insert(rto);
                }
            }
            _ => {}
        }
    }

    /// The record of a flow whose generic counters are `f` (first request sent at
    /// `first_sent`; `rtts` its exchanges' CoAP delays).
    pub fn record(
        &self,
        f: &Totals,
        first_sent: Option<Instant>,
        rtts: &[Duration],
    ) -> MeshFlowRecord {
        let requests = f.transmissions - f.retransmissions;
        let active_s = match (first_sent, self.last_end) {
            (Some(a), Some(b)) if b > a => Some((b - a).as_secs_f64()),
            _ => None,
        };
        let rate = |x: f64| active_s.map(|t| x / t);
        let mut delays: Vec<f64> = rtts.iter().map(|d| d.as_secs_f64()).collect();
        delays.sort_by(f64::total_cmp);
        let mut rto = self.rto_base_s.clone();
        rto.sort_by(f64::total_cmp);
        let q = |v: &[f64], p: f64| stats::quantile_sorted(v, p);
        let mean = |v: &[f64]| stats::mean_sd(v).map(|(m, _)| m);
        MeshFlowRecord {
            requests,
            coap_pdr: (requests > 0).then(|| f64::from(f.exchanges) / requests as f64),
            fct50_s: match (first_sent, self.fct_end) {
                (Some(a), Some(b)) => Some((b - a).as_secs_f64()),
                _ => None,
            },
            active_s,
            transactions_per_s: rate(f64::from(f.exchanges)),
            sending_rate_pps: rate(f.transmissions as f64),
            sending_rate_bps: rate(f.bytes_up as f64 * 8.0),
            throughput_bps: rate((u64::from(self.successes) * self.payload_bytes) as f64 * 8.0),
            delay_mean_s: mean(&delays),
            delay_p50_s: q(&delays, 0.5),
            delay_p90_s: q(&delays, 0.9),
            delay_p99_s: q(&delays, 0.99),
            delay_max_s: delays.last().copied(),
            rto_base_mean_s: mean(&rto),
            rto_base_p50_s: q(&rto, 0.5),
            rto_base_p90_s: q(&rto, 0.9),
            rto_base_max_s: rto.last().copied(),
            server_node: None,
            intervals: self
                .interval_bytes
                .iter()
                .flatten()
                .enumerate()
                .filter(|(_, &b)| b > 0)
                .map(|(k, &b)| (k as u64, b))
                .collect(),
            samples: self.samples.clone().unwrap_or_default(),
        }
    }
}

/// The generic counters of a flow the mesh record derives its rates from.
#[derive(Debug, Clone, Copy)]
pub struct Totals {
    /// CON copies sent.
    pub transmissions: u64,
    /// Copies after the original.
    pub retransmissions: u64,
    /// Successful exchanges.
    pub exchanges: u32,
    /// IP bytes the client sent.
    pub bytes_up: u64,
}

#[cfg(test)]
mod tests {
    use super::*;
    use coaplab_cc::Snapshot;
    use coaplab_endpoint::{AnswerKind, ExchangeId, FailReason};

    fn addr() -> std::net::SocketAddr {
        "198.18.1.1:5683".parse().unwrap()
    }

    fn sent(exchange: u64, ordinal: u32, at_ms: i64) -> Event {
        Event::Sent {
            exchange: ExchangeId(exchange),
            request: None,
            destination: addr(),
            ordinal,
            bytes: 60,
            at: Instant::from_millis(at_ms),
        }
    }

    fn done(exchange: u64, tx: u32, rtt_ms: i64, at_ms: i64) -> Event {
        Event::ExchangeCompleted {
            exchange: ExchangeId(exchange),
            request: None,
            destination: addr(),
            transmissions: tx,
            rtt: Duration::from_millis(rtt_ms),
            answered: None,
            kind: AnswerKind::Piggybacked,
            at: Instant::from_millis(at_ms),
        }
    }

    fn snapshot(rto_ms: i64, at_ms: i64) -> Event {
        Event::Snapshot {
            destination: addr(),
            at: Instant::from_millis(at_ms),
            snapshot: Snapshot {
                rto: Duration::from_millis(rto_ms),
                state: None,
                vars: Vec::new(),
            },
        }
    }

    #[test]
    fn exact_metrics_of_a_short_flow() {
        // Three exchanges of 25 B: answered after 120 ms, failed after two copies, answered
        // after 30 ms; every instant in milliseconds.
        let mut m = MeshFlowMetrics::new(25, true, true);
        let events = [
            (0, sent(0, 0, 1_000)),
            (0, done(0, 1, 120, 1_120)),
            (0, snapshot(2_000, 1_120)),
            (1, sent(1, 0, 1_400)),
            (1, sent(1, 1, 3_400)),
            (
                1,
                Event::ExchangeFailed {
                    exchange: ExchangeId(1),
                    request: None,
                    destination: addr(),
                    transmissions: 2,
                    reason: FailReason::GiveUp,
                    at: Instant::from_millis(9_400),
                },
            ),
            (1, snapshot(4_000, 9_400)),
            (2, sent(2, 0, 9_420)),
            (2, done(2, 1, 30, 9_450)),
            (2, snapshot(3_000, 9_450)),
        ];
        for (x, e) in &events {
            m.on_event(e, *x);
        }
        let totals = Totals {
            transmissions: 4,
            retransmissions: 1,
            exchanges: 2,
            bytes_up: 4 * 88,
        };
        let rtts = [Duration::from_millis(120), Duration::from_millis(30)];
        let r = m.record(&totals, Some(Instant::from_millis(1_000)), &rtts);
        assert_eq!(r.requests, 3);
        assert_eq!(r.coap_pdr, Some(2.0 / 3.0));
        assert_eq!(r.fct50_s, None);
        assert_eq!(r.active_s, Some(8.45));
        assert_eq!(r.transactions_per_s, Some(2.0 / 8.45));
        assert_eq!(r.sending_rate_pps, Some(4.0 / 8.45));
        assert_eq!(r.sending_rate_bps, Some(4.0 * 88.0 * 8.0 / 8.45));
        assert_eq!(r.throughput_bps, Some(2.0 * 25.0 * 8.0 / 8.45));
        assert_eq!(r.delay_mean_s, Some(0.075));
        assert_eq!(r.delay_p50_s, Some(0.075));
        assert_eq!(r.delay_max_s, Some(0.12));
        assert_eq!(r.rto_base_mean_s, Some(3.0));
        assert_eq!(r.rto_base_max_s, Some(4.0));
        assert_eq!(r.rto_base_p90_s, Some(3.8));
        // 1.120 s is in interval 22 (1.10–1.15 s), 9.450 s in interval 189.
        assert_eq!(r.intervals, [(22, 25), (189, 25)]);
        let ends: Vec<_> = r
            .samples
            .iter()
            .map(|s| (s.start_s, s.delay_s, s.transmissions, s.rto_base_s))
            .collect();
        assert_eq!(
            ends,
            [
                (1.0, Some(0.12), 1, Some(2.0)),
                (1.4, None, 2, Some(4.0)),
                (9.42, Some(0.03), 1, Some(3.0)),
            ]
        );
    }

    #[test]
    fn fct50_ends_at_the_fiftieth_answer() {
        let mut m = MeshFlowMetrics::new(10, false, false);
        for k in 0..60 {
            m.on_event(&done(k, 1, 50, 100 * k as i64 + 150), k);
        }
        let totals = Totals {
            transmissions: 60,
            retransmissions: 0,
            exchanges: 60,
            bytes_up: 0,
        };
        let r = m.record(&totals, Some(Instant::from_millis(100)), &[]);
        assert_eq!(r.fct50_s, Some(4.95));
        assert!(r.intervals.is_empty() && r.samples.is_empty());
    }
}
