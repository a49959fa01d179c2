//! The one interface every RTO algorithm implements (docs/algorithms.md, 'Conventions').
//!
//! Call order for one exchange, driven by the exchange layer (simulator or socket stack):
//!
//! 1. [`RtoAlgorithm::start`] when the NSTART gate admits the exchange and its original is sent;
//!    arm the returned timer.
//! 2. [`RtoAlgorithm::expired`] each time that timer fires: retransmit and arm the new timer, or
//!    give up.
//! 3. Exactly one of [`RtoAlgorithm::completed`] (the first ACK or response arrived) or
//!    [`RtoAlgorithm::failed`] (give-up or cancel).
//!
//! `now` never decreases between calls. When an ACK and a timer expiry of the same exchange fall
//! on the same instant, the ACK is processed first (docs/algorithms.md, 'Conventions').

use core::fmt;

use crate::params::{ParamSpec, Params};
use crate::rng::Random;
pub use crate::scratch::CustomScratch;
use crate::scratch::Scratch;
use crate::time::{Duration, Instant};

/// Per-exchange scratch `X`: owned by the exchange layer, handed back on every call.
#[derive(Debug, Clone, Default)]
pub struct Exchange {
    /// `X.k`: retransmissions sent so far (0 while only the original is out).
    pub retransmissions: u32,
    /// `X.T`: the timer currently armed.
    pub timer: Duration,
    /// Algorithm-specific per-exchange fields; opaque to the exchange layer.
    pub(crate) scratch: Scratch,
}

impl Exchange {
    /// A fresh scratch for a new exchange.
    pub fn new() -> Self {
        Self::default()
    }

    /// The per-exchange state of an algorithm defined outside this crate: a `T` of the
    /// algorithm's own, created with `T::default()` on first use in the exchange (a fresh
    /// [`Exchange`] holds none). An algorithm registered with [`crate::registry::register`]
    /// keeps here what it must remember between [`RtoAlgorithm::start`], its timer expiries
    /// and [`RtoAlgorithm::completed`] of one exchange, as the built-in ones keep theirs in a
    /// private field. One type per exchange: asking for another type replaces the value.
    pub fn custom<T: Default + Clone + Send + fmt::Debug + 'static>(&mut self) -> &mut T {
        let present = matches!(&self.scratch, Scratch::Custom(b) if (**b).as_any().is::<T>());
        if !present {
            self.scratch = Scratch::Custom(Box::new(T::default()));
        }
        match &mut self.scratch {
            Scratch::Custom(b) => (**b)
                .as_any_mut()
                .downcast_mut::<T>()
                .expect("a T was just stored"),
            _ => unreachable!("a custom scratch was just stored"),
        }
    }

    /// The `T` that [`Exchange::custom`] stored in this exchange, if any.
    pub fn custom_ref<T: 'static>(&self) -> Option<&T> {
        match &self.scratch {
            Scratch::Custom(b) => (**b).as_any().downcast_ref::<T>(),
            _ => None,
        }
    }
}

/// What the exchange layer reports when the first ACK or response of an exchange arrives
/// (`c` in docs/algorithms.md, 'Conventions').
#[derive(Debug, Clone, Copy)]
pub struct Completion<'a> {
    /// `c.t_ack`: arrival time of the first ACK or piggybacked response (= now).
    pub ack_time: Instant,
    /// `c.t_tx[j]`: send time of transmission j; index 0 is the original. `c.n` is the length.
    pub tx_times: &'a [Instant],
    /// `c.answered`: which transmission the answer identifies (token or Rexmit-Cnt echo), when
    /// known; 0 is the original.
    pub answered: Option<u32>,
    /// `c.T_force`: the timer in force when the answer arrived.
    pub timer_in_force: Duration,
}

impl Completion<'_> {
    /// `c.n`: transmissions sent.
    pub fn transmissions(&self) -> u32 {
        self.tx_times.len() as u32
    }

    /// `r = c.n - 1`: retransmissions sent.
    pub fn retransmissions(&self) -> u32 {
        self.transmissions().saturating_sub(1)
    }

    /// `R0 = t_ack - t_tx[0]`: the round-trip time measured from the original transmission.
    pub fn rtt_from_original(&self) -> Duration {
        self.ack_time - self.tx_times[0]
    }
}

/// How the exchange layer reports that an exchange is admitted (docs/algorithms.md, 'Conventions'
/// `start`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Admission {
    /// Exchanges to this destination in flight, including the new one (`n_inflight`, ≥ 1).
    pub in_flight: u32,
    /// True when the exchange waited in the NSTART queue before being admitted. Only the
    /// cf-compat blind rule (Californium 3.x Cocoa) tells the two cases apart.
    pub dequeued: bool,
}

impl Admission {
    /// The common case: the only exchange in flight, not queued.
    pub const ALONE: Admission = Admission {
        in_flight: 1,
        dequeued: false,
    };

    /// Exchanges already *registered* in flight when this one's first timer is computed, as
    /// Californium counts them: a new exchange's timer is computed before it
    /// registers (so it is not counted), a dequeued one's after (so it is).
    pub fn registered(self) -> u32 {
        if self.dequeued {
            self.in_flight
        } else {
            self.in_flight.saturating_sub(1)
        }
    }
}

/// The outcome of a timer expiry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Expiry {
    /// Retransmit now and arm this timer.
    Retransmit(Duration),
    /// The timer of transmission MAX_RETRANSMIT expired: the exchange fails.
    GiveUp,
}

/// The estimator's view at one instant, for traces, metrics and plots.
#[derive(Debug, Clone, PartialEq)]
pub struct Snapshot {
    /// The current base RTO (`peek_rto`).
    pub rto: Duration,
    /// The state name where the algorithm has states (FASOR: `FAST`, `FAST_SLOW_FAST`,
    /// `SLOW_FAST`), else `None`.
    pub state: Option<&'static str>,
    /// Named estimator variables in seconds or plain numbers, e.g. `("strong_srtt_s", 0.1)`.
    pub vars: Vec<(&'static str, f64)>,
}

/// One RTO / congestion-control algorithm's per-destination state `D` (docs/algorithms.md,
/// 'Conventions').
///
/// Implementations never read a clock or a global RNG; every input is an argument.
pub trait RtoAlgorithm: fmt::Debug + Send {
    /// The registry name, e.g. `"cocoa"`.
    fn name(&self) -> &'static str;

    /// A new exchange is admitted and its original transmission is sent at `now`.
    /// Returns the first timer `T0`; must set `x.retransmissions = 0` and `x.timer = T0`.
    fn start(
        &mut self,
        now: Instant,
        admission: Admission,
        x: &mut Exchange,
        rng: &mut dyn Random,
    ) -> Duration;

    /// The timer `x.timer` expired at `now`. Gives up when `x.retransmissions` has reached
    /// MAX_RETRANSMIT; otherwise increments it, sets `x.timer` to the next timer and returns it.
    fn expired(&mut self, now: Instant, x: &mut Exchange, rng: &mut dyn Random) -> Expiry;

    /// The first ACK or response of the exchange arrived (`c.ack_time` is now).
    fn completed(&mut self, c: &Completion<'_>, x: &mut Exchange, rng: &mut dyn Random);

    /// The exchange gave up or was cancelled at `now`. Default: no state change.
    fn failed(&mut self, now: Instant, x: &mut Exchange) {
        let _ = (now, x);
    }

    /// Forget everything learned about the destination, as a freshly booted device would
    /// (random workloads reset a client between batches). `now` becomes `D.created`.
    fn reset(&mut self, now: Instant);

    /// The current base RTO (`peek_rto`).
    fn rto(&self) -> Duration;

    /// MAX_RETRANSMIT in force: transmissions 0..=max_retransmit are sent.
    fn max_retransmit(&self) -> u32;

    /// The estimator variables, for introspection.
    fn snapshot(&self) -> Snapshot;
}

/// One registered algorithm (the records of [`crate::registry::ALGORITHMS`]).
#[derive(Debug, Clone, Copy)]
pub struct AlgorithmInfo {
    /// The name users write, e.g. `cocoa-fb1`.
    pub name: &'static str,
    /// One line for `--help` listings, naming the source.
    pub summary: &'static str,
    /// Parameter groups (common ones first); every key is unique across the groups.
    pub params: &'static [&'static [ParamSpec]],
    /// Builds the per-destination state from resolved parameters; `now` is `D.created`.
    pub build: fn(&Params, Instant) -> Box<dyn RtoAlgorithm>,
}
