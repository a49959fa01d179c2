//! What each flow's client asks for, and when (spec §6.1).
//!
//! A [`FlowDriver`] issues requests on its client endpoint: the first at the flow's start
//! time, each next one as soon as the previous request completed or failed (stop-and-wait
//! per flow; NSTART governs only what the endpoint lets out). Random flows are series of
//! short-lived clients of U{batch_min..=batch_max} exchanges; between two of them the
//! algorithm's state for the server is reset, while the socket, Message IDs and tokens
//! continue (spec §6.1 and §10 #21). With [`FlowDriver::new_client_per_batch`]
//! (`random_source_port = "new"`) the driver instead asks its runner for a fresh client
//! endpoint on a fresh port ([`FlowDriver::wants_new_client`]) and sends the batch's first
//! request on it ([`FlowDriver::resume`]).

use coaplab_cc::rng::{Random, SeededRandom};
use coaplab_cc::time::Instant;
use coaplab_endpoint::{Endpoint, Request};
use coaplab_netsim::SERVER_ADDR;
use coaplab_wire::Code;

use crate::scenario::Workload;

/// The path of the experiments' resource (spec §4: one Uri-Path segment `f`).
pub const PATH: &str = "f";

/// Drives one flow.
#[derive(Debug)]
pub struct FlowDriver {
    workload: Workload,
    request: Request,
    /// Payload bytes of every whole answer: `object_bytes` for the long transfer, the
    /// response payload for short exchanges.
    response_bytes: u64,
    rng: SeededRandom,
    /// Requests left in the current short-lived client (random workload).
    batch_left: u32,
    /// Short-lived clients started so far.
    batches: u32,
    /// Successful requests so far.
    succeeded: u32,
    done: bool,
    /// Each short-lived client after the first is a fresh endpoint (`random_source_port`).
    new_client_per_batch: bool,
    /// A new short-lived client is due: its first request waits for [`FlowDriver::resume`].
    wants_new_client: bool,
}

impl FlowDriver {
    /// A driver for `workload`, drawing batch sizes from `rng`. Requests go to `path`; a short
    /// exchange's answer carries `response_payload_bytes`.
    pub fn new(
        workload: Workload,
        request_payload_bytes: u32,
        response_payload_bytes: u32,
        path: &str,
        rng: SeededRandom,
    ) -> Self {
        let request = match workload {
            Workload::LongTransfer { .. } => Request::get(path),
            _ => Request::post(path, vec![0; request_payload_bytes as usize]),
        };
        let response_bytes = match workload {
            Workload::LongTransfer { object_bytes, .. } => object_bytes,
            _ => u64::from(response_payload_bytes),
        };
        FlowDriver {
            workload,
            request,
            response_bytes,
            rng,
            batch_left: 0,
            batches: 0,
            succeeded: 0,
            done: false,
            new_client_per_batch: false,
            wants_new_client: false,
        }
    }

    /// Random workload: each short-lived client after the first runs on a fresh endpoint
    /// (fresh source port) that the runner provides, instead of resetting the algorithm's
    /// state on the same endpoint. No effect on other workloads.
    pub fn new_client_per_batch(mut self, on: bool) -> Self {
        self.new_client_per_batch = on;
        self
    }

    /// Whether a new short-lived client is due: the runner replaces the flow's endpoint by a
    /// fresh one (Message IDs and tokens continuing) and calls [`FlowDriver::resume`] with it.
    pub fn wants_new_client(&self) -> bool {
        self.wants_new_client
    }

    /// Sends the first request of the new short-lived client on its fresh endpoint `ep`.
    pub fn resume(&mut self, now: Instant, ep: &mut Endpoint) {
        if std::mem::take(&mut self.wants_new_client) {
            let _ = ep.request(now, SERVER_ADDR, &self.request);
        }
    }

    /// The workload.
    pub fn workload(&self) -> Workload {
        self.workload
    }

    /// Whether the flow met its quota.
    pub fn is_done(&self) -> bool {
        self.done
    }

    /// Successful requests required.
    fn quota(&self) -> u32 {
        match self.workload {
            Workload::Continuous { exchanges } | Workload::Random { exchanges, .. } => exchanges,
            Workload::LongTransfer { .. } => 1,
        }
    }

    /// The flow starts at `now`: its first request.
    pub fn start(&mut self, now: Instant, ep: &mut Endpoint) {
        self.next(now, ep);
    }

    /// A request completed at `now`; returns true when that met the quota.
    pub fn on_completed(&mut self, now: Instant, ep: &mut Endpoint) -> bool {
        self.succeeded += 1;
        if self.succeeded >= self.quota() {
            self.done = true;
            return true;
        }
        self.next(now, ep);
        false
    }

    /// Whether a completed request's response is the whole answer: a success (2.xx) whose
    /// body, over all its blocks, is exactly the object (long transfer) or the response
    /// payload (short exchanges).
    pub fn is_whole(&self, code: Code, body_len: usize) -> bool {
        code.class() == 2 && body_len as u64 == self.response_bytes
    }

    /// A request completed without the whole answer ([`FlowDriver::is_whole`]): the flow ends
    /// incomplete, whatever its workload (asking again would get the same answer).
    pub fn on_partial(&mut self) {
        self.done = true;
    }

    /// A request failed at `now`. Short-lived workloads go on until the quota of successes
    /// (spec §4.3); a failed long transfer ends the flow incomplete.
    pub fn on_failed(&mut self, now: Instant, ep: &mut Endpoint) {
        match self.workload {
            Workload::LongTransfer { .. } => self.done = true,
            _ => self.next(now, ep),
        }
    }

    fn next(&mut self, now: Instant, ep: &mut Endpoint) {
        if let Workload::Random {
            batch_min,
            batch_max,
            ..
        } = self.workload
        {
            if self.batch_left == 0 {
                if self.batches > 0 {
                    // A new short-lived client: fresh congestion-control state, on this
                    // endpoint or on the fresh one the runner provides.
                    if self.new_client_per_batch {
                        self.wants_new_client = true;
                    } else {
                        ep.reset_destination(now, SERVER_ADDR);
                    }
                }
                let span = u64::from(batch_max - batch_min) + 1;
                self.batch_left = batch_min + self.rng.below(span) as u32;
                self.batches += 1;
            }
            self.batch_left -= 1;
            if self.wants_new_client {
                return;
            }
        }
        let _ = ep.request(now, SERVER_ADDR, &self.request);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn driver(workload: Workload) -> FlowDriver {
        FlowDriver::new(workload, 51, 53, PATH, SeededRandom::new(1))
    }

    #[test]
    fn only_a_success_with_the_whole_body_is_a_whole_answer() {
        let long = driver(Workload::LongTransfer {
            object_bytes: 200_000,
            block_bytes: 256,
        });
        assert!(long.is_whole(Code::CONTENT, 200_000));
        // A cut body, a body too long, an error with no body.
        assert!(!long.is_whole(Code::CONTENT, 199_999));
        assert!(!long.is_whole(Code::CONTENT, 200_001));
        assert!(!long.is_whole(Code::INTERNAL_SERVER_ERROR, 0));
        let short = driver(Workload::Continuous { exchanges: 5 });
        assert!(short.is_whole(Code::CHANGED, 53));
        assert!(!short.is_whole(Code::CHANGED, 52));
        assert!(!short.is_whole(Code::NOT_FOUND, 53));
    }

    #[test]
    fn a_partial_answer_ends_the_flow() {
        let mut d = driver(Workload::Continuous { exchanges: 5 });
        assert!(!d.is_done());
        d.on_partial();
        assert!(d.is_done());
    }
}
