//! The notification metrics of one observer of the `observe` workload (issue 16): what the
//! server's endpoint says it generated and retransmitted for the observer, matched by Observe
//! value with what the observer's endpoint accepted.
//!
//! - **sent**: notifications the server generated for the observer (one per change of the
//!   resource while it was registered; a CON whose newer state replaced it counts too).
//! - **received**: those the observer accepted (the first copy; a retransmitted duplicate or
//!   an older one, RFC 7641 §3.4, is not counted again).
//! - **lost**: sent − received: never received by the end of the run, whether dropped
//!   (NON), given up (CON), replaced by a newer state while pending, or still in flight when
//!   the observer deregistered.
//! - **delay**: generation at the server → reception at the observer, per received
//!   notification (mean, p50, p95, max).
//! - **retransmissions**: retransmissions of CON notifications to the observer.

use std::collections::HashMap;

use coaplab_cc::time::Instant;
use coaplab_endpoint::Event;

use crate::results::ObserveFlowRecord;

/// What is measured about one observer.
#[derive(Debug, Clone, Default)]
pub struct ObserveMetrics {
    /// Generation time of every notification sent and not yet received, by Observe value.
    pending: HashMap<u32, Instant>,
    sent: u64,
    received: u64,
    retransmissions: u64,
    delays_s: Vec<f64>,
}

impl ObserveMetrics {
    /// A server event about this observer (the caller matched its address).
    pub fn on_server_event(&mut self, event: &Event) {
        match *event {
            Event::NotificationSent { sequence, at, .. } => {
                self.sent += 1;
                self.pending.insert(sequence, at);
            }
            Event::NotificationRetransmitted { .. } => self.retransmissions += 1,
            _ => {}
        }
    }

    /// An event of the observer's endpoint.
    pub fn on_client_event(&mut self, event: &Event) {
        if let Event::Notification {
            sequence: Some(s),
            at,
            ..
        } = *event
        {
            if let Some(generated) = self.pending.remove(&s) {
                self.received += 1;
                self.delays_s.push((at - generated).as_secs_f64());
            }
        }
    }

    /// The observer's record.
    pub fn record(&self) -> ObserveFlowRecord {
        let mut delays = self.delays_s.clone();
        let q = crate::stats::summary(&mut delays);
        ObserveFlowRecord {
            sent: self.sent,
            received: self.received,
            lost: self.sent - self.received,
            delay_mean_s: crate::stats::mean_sd(&delays).map(|(m, _)| m),
            delay_p50_s: q.map(|q| q[3]),
            delay_p95_s: q.map(|q| q[6]),
            delay_max_s: q.map(|q| q[7]),
            retransmissions: self.retransmissions,
        }
    }
}
