//! What each flow's client asks for, and when (docs/experiments.md §6.1).
//!
//! A [`FlowDriver`] issues requests on its client endpoint: the first at the flow's start
//! time, each next one as soon as the previous request completed or failed (stop-and-wait
//! per flow; NSTART governs only what the endpoint lets out). Random flows are series of
//! short-lived clients of U{batch_min..=batch_max} exchanges; between two of them the
//! algorithm's state for the server is reset, while the socket, Message IDs and tokens
//! continue (docs/experiments.md §6.1, §10 #21). With [`FlowDriver::new_client_per_batch`]
//! (`random_source_port = "new"`) the driver instead asks its runner for a fresh client
//! endpoint on a fresh port ([`FlowDriver::wants_new_client`]) and sends the batch's first
//! request on it ([`FlowDriver::resume`]). A continuous flow with an interval
//! ([`FlowDriver::periodic`], `interval_s`) instead starts its k-th request at its tick,
//! start + k · interval, or when request k − 1 ends if that is later (one request open at a
//! time, catching up back to back when late: Contiki Erbium's client loop of
//! `COAP_BLOCKING_REQUEST` and `etimer_reset`, which advances the timer by one interval from
//! its previous expiry); failed requests are not repeated, and the flow is done when every one
//! of its `exchanges` requests has completed or failed. The runner wakes it at
//! [`FlowDriver::next_tick`] and calls [`FlowDriver::tick`].
//!
//! An observer (`workload = "observe"`) registers at its start with a GET of [`OBSERVE_PATH`]
//! carrying Observe 0 (RFC 7641, [`Endpoint::observe`]), receives notifications for its
//! `duration`, then deregisters (GET with Observe 1) at the tick start + duration, which ends
//! the flow. The notifications come from the server's observe code
//! (`coaplab_endpoint::observe`), the same as the real server's.

use std::sync::Arc;

use coaplab_cc::rng::{Random, SeededRandom};
use coaplab_cc::time::Instant;
use coaplab_endpoint::{Endpoint, Request};
use coaplab_netsim::SERVER_ADDR;
use coaplab_wire::Code;

use crate::scenario::Workload;

/// The path of the experiments' resource (docs/experiments.md §4: one Uri-Path segment `f`).
pub const PATH: &str = "f";

/// The path of the observable resource of the `observe` workload (a counter changing every
/// `period_s`).
pub const OBSERVE_PATH: &str = "obs";

/// Drives one flow.
///
/// What a flow reads per exchange is kept small, for the simulator's many flows (issue 35:
/// at 400 flows their state is the run's most-read memory, and each cache line of a flow
/// touched per event is one more miss): the request is shared by the flows of a group (a
/// pointer instead of a 104-B struct and two heap buffers per flow; it is read for a flow's
/// first request only, the later ones start from the endpoint's copy,
/// [`Endpoint::request_again`]), and the 320-B random stream, which only a random workload
/// draws from, lives behind a box.
#[derive(Debug)]
pub struct FlowDriver {
    workload: Workload,
    request: Arc<Request>,
    /// Payload bytes of every whole answer: `object_bytes` for the long transfer, the
    /// response payload for short exchanges.
    response_bytes: u64,
    rng: Box<SeededRandom>,
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
    /// Periodic flows: the interval between request starts.
    interval: Option<coaplab_cc::time::Duration>,
    /// Periodic flows: when the next request starts (`None`: all started, or not periodic).
    next_tick: Option<Instant>,
    /// Periodic flows: requests started.
    issued: u32,
    /// Periodic flows: requests completed or failed.
    resolved: u32,
    /// Periodic flows: a request is open.
    open: bool,
    /// Observers: the observation's request while registered.
    observation: Option<coaplab_endpoint::RequestId>,
    /// Where its requests go ([`SERVER_ADDR`] unless [`FlowDriver::server`] says otherwise).
    server: std::net::SocketAddr,
}

/// The request every flow of `workload` sends: a GET of `path` (a long transfer), of
/// [`OBSERVE_PATH`] (an observer), or a POST of `request_payload_bytes` zeros to `path`. One
/// per flow group, shared by its flows' drivers ([`FlowDriver::new`]).
pub fn request_of(workload: Workload, request_payload_bytes: u32, path: &str) -> Arc<Request> {
    Arc::new(match workload {
        Workload::LongTransfer { .. } => Request::get(path),
        Workload::Observe { .. } => Request::get(OBSERVE_PATH),
        _ => Request::post(path, vec![0; request_payload_bytes as usize]),
    })
}

impl FlowDriver {
    /// A driver for `workload` sending `request` ([`request_of`]), drawing batch sizes from
    /// `rng`; a short exchange's answer carries `response_payload_bytes`.
    pub fn new(
        workload: Workload,
        request: Arc<Request>,
        response_payload_bytes: u32,
        rng: SeededRandom,
    ) -> Self {
        let response_bytes = match workload {
            Workload::LongTransfer { object_bytes, .. } => object_bytes,
            _ => u64::from(response_payload_bytes),
        };
        FlowDriver {
            workload,
            request,
            response_bytes,
            rng: Box::new(rng),
            batch_left: 0,
            batches: 0,
            succeeded: 0,
            done: false,
            new_client_per_batch: false,
            wants_new_client: false,
            interval: None,
            next_tick: None,
            issued: 0,
            resolved: 0,
            open: false,
            observation: None,
            server: SERVER_ADDR,
        }
    }

    /// Sends its requests to `server` (a mesh with several server nodes) instead of
    /// [`SERVER_ADDR`].
    pub fn server(mut self, server: std::net::SocketAddr) -> Self {
        self.server = server;
        self
    }

    /// Whether the flow observes (`workload = "observe"`).
    pub fn is_observe(&self) -> bool {
        matches!(self.workload, Workload::Observe { .. })
    }

    /// Random workload: each short-lived client after the first runs on a fresh endpoint
    /// (fresh source port) that the runner provides, instead of resetting the algorithm's
    /// state on the same endpoint. No effect on other workloads.
    pub fn new_client_per_batch(mut self, on: bool) -> Self {
        self.new_client_per_batch = on;
        self
    }

    /// Continuous workload: start a request every `interval` instead of back to back
    /// (`None`: back to back). No effect on other workloads.
    pub fn periodic(mut self, interval: Option<coaplab_cc::time::Duration>) -> Self {
        if matches!(self.workload, Workload::Continuous { .. }) {
            self.interval = interval;
        }
        self
    }

    /// When a periodic flow starts its next request, if none is open (the runner wakes it
    /// then).
    pub fn next_tick(&self) -> Option<Instant> {
        self.next_tick.filter(|_| !self.open)
    }

    /// Starts the periodic request due at `now`, if none is open; an observer whose
    /// duration is over deregisters and is done.
    ///
    /// Inline when there is no tick (a back-to-back flow, woken only by its endpoint's
    /// timers), the rest out of line: the runner calls this at every client timer, where the
    /// call cost ~20 instructions to do nothing (issue 35).
    #[inline]
    pub fn tick(&mut self, now: Instant, ep: &mut Endpoint) {
        // Every case below does nothing without a tick.
        if self.next_tick.is_some() {
            self.tick_due(now, ep);
        }
    }

    /// [`FlowDriver::tick`] with a tick set.
    #[inline(never)]
    fn tick_due(&mut self, now: Instant, ep: &mut Endpoint) {
        if self.is_observe() {
            if self.next_tick.is_some_and(|at| at <= now) && !self.done {
                if let Some(id) = self.observation.take() {
                    let _ = ep.cancel_observation(now, id, &self.request);
                }
                self.done = true;
                self.next_tick = None;
            }
            return;
        }
        let (Some(at), Some(interval)) = (self.next_tick, self.interval) else {
            return;
        };
        if self.open || at > now || self.done {
            return;
        }
        let _ = ep.request(now, self.server, &self.request);
        self.open = true;
        self.issued += 1;
        self.next_tick = (self.issued < self.quota()).then(|| at + interval);
    }

    /// A periodic request ended at `now`: the next one starts now if its tick has passed.
    fn periodic_ended(&mut self, now: Instant, ep: &mut Endpoint) {
        self.open = false;
        self.resolved += 1;
        self.done = self.done || self.resolved >= self.quota();
        self.tick(now, ep);
    }

    /// Whether a new short-lived client is due: the runner replaces the flow's endpoint by a
    /// fresh one (Message IDs and tokens continuing) and calls [`FlowDriver::resume`] with it.
    pub fn wants_new_client(&self) -> bool {
        self.wants_new_client
    }

    /// Sends the first request of the new short-lived client on its fresh endpoint `ep`.
    pub fn resume(&mut self, now: Instant, ep: &mut Endpoint) {
        if std::mem::take(&mut self.wants_new_client) {
            let _ = ep.request(now, self.server, &self.request);
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
            Workload::LongTransfer { .. } | Workload::Observe { .. } => 1,
        }
    }

    /// The flow starts at `now`: its first request.
    pub fn start(&mut self, now: Instant, ep: &mut Endpoint) {
        if let Workload::Observe { duration, .. } = self.workload {
            self.observation = ep.observe(now, self.server, &self.request);
            self.next_tick = Some(now + duration);
            return;
        }
        if self.interval.is_some() {
            self.next_tick = Some(now);
            return self.tick(now, ep);
        }
        self.next(now, ep);
    }

    /// A request completed at `now`; returns true when that met the quota.
    pub fn on_completed(&mut self, now: Instant, ep: &mut Endpoint) -> bool {
        if self.interval.is_some() {
            self.succeeded += 1;
            self.periodic_ended(now, ep);
            return self.done;
        }
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
        self.next_tick = None;
    }

    /// A request failed at `now`. Short-lived workloads go on until the quota of successes
    /// (docs/experiments.md §4.3); a failed long transfer ends the flow incomplete.
    pub fn on_failed(&mut self, now: Instant, ep: &mut Endpoint) {
        if self.interval.is_some() {
            return self.periodic_ended(now, ep);
        }
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
                        ep.reset_destination(now, self.server);
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
        // The same request every time: the endpoint starts it again from its own copy.
        if ep.request_again(now, self.server).is_none() {
            let _ = ep.request(now, self.server, &self.request);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn driver(workload: Workload) -> FlowDriver {
        FlowDriver::new(
            workload,
            request_of(workload, 51, PATH),
            53,
            SeededRandom::new(1),
        )
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
    fn a_periodic_flow_starts_on_its_ticks_one_at_a_time_and_catches_up() {
        use coaplab_cc::time::Duration;
        use coaplab_endpoint::{registry_factory, Config, Router};
        let mut ep = Endpoint::new(
            Config::default(),
            registry_factory("default", &coaplab_cc::params::Settings::new(), 1).unwrap(),
            Router::new(),
        )
        .unwrap();
        let mut d = driver(Workload::Continuous { exchanges: 4 })
            .periodic(Some(Duration::from_millis(100)));
        let t = Instant::from_millis;
        d.start(t(5), &mut ep);
        assert_eq!(d.issued, 1);
        // While request 0 is open there is no tick to wake for.
        assert_eq!(d.next_tick(), None);
        // It ends at 50 ms: request 1 waits for its tick at 105 ms.
        assert!(!d.on_completed(t(50), &mut ep));
        assert_eq!((d.issued, d.next_tick()), (1, Some(t(105))));
        d.tick(t(104), &mut ep);
        assert_eq!(d.issued, 1);
        d.tick(t(105), &mut ep);
        assert_eq!(d.issued, 2);
        // Request 1 fails late, at 320 ms: request 2 (tick 205) starts at once; when it ends at
        // 330 ms request 3 (tick 305) does too — back to back until caught up.
        d.on_failed(t(320), &mut ep);
        assert_eq!(d.issued, 3);
        assert!(!d.on_completed(t(330), &mut ep));
        assert_eq!((d.issued, d.next_tick()), (4, None));
        assert!(d.on_completed(t(340), &mut ep));
        assert!(d.is_done());
        // Without an interval nothing changes.
        let plain = driver(Workload::Continuous { exchanges: 3 }).periodic(None);
        assert_eq!(plain.next_tick(), None);
    }

    #[test]
    fn a_partial_answer_ends_the_flow() {
        let mut d = driver(Workload::Continuous { exchanges: 5 });
        assert!(!d.is_done());
        d.on_partial();
        assert!(d.is_done());
    }
}
