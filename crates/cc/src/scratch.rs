//! The per-exchange state an [`crate::algorithm::Exchange`] carries for the built-in algorithm
//! families: data only, declared here so that the exchange names no algorithm module (each
//! family's code, which fills and reads its variant, depends on this leaf, never the reverse).

use core::any::Any;
use core::fmt;

use crate::time::Instant;

/// Algorithm-specific per-exchange state. Each algorithm family adds the variant it needs.
#[derive(Debug, Clone, Default)]
pub(crate) enum Scratch {
    /// Nothing beyond `k` and `T`.
    #[default]
    None,
    /// A backoff factor fixed for the whole exchange (cf-compat CoCoA computes the VBF once from
    /// the first timer, Californium 3.x Cocoa).
    FixedFactor(f64),
    /// FASOR: the backoff register and the state snapshot taken at start
    /// (draft-ietf-core-fasor-02).
    Fasor(FasorScratch),
    /// The CoCoA family and CoCoA++: the armed timer before µs rounding, and the first timer.
    Timer(TimerScratch),
    /// An algorithm registered from outside this crate (`Exchange::custom`).
    Custom(Box<dyn CustomScratch>),
}

/// Per-exchange scratch of the CoCoA family and CoCoA++: the armed timer *before* µs rounding
/// (so backoff chains and thresholds follow exact arithmetic, docs/algorithms.md, 'Conventions')
/// and the first timer (the VBF input under `vbf_from_first`). Armed and read by `cocoa`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct TimerScratch {
    /// The armed timer in f64 seconds; `Exchange::timer` is this rounded to the µs.
    pub(crate) timer_s: f64,
    /// The first timer of the exchange in f64 seconds.
    pub(crate) first_s: f64,
}

/// FASOR's state machine (draft-ietf-core-fasor-02), public as `fasor::State`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FasorState {
    /// Normal operation: FastRTO with exponential backoff.
    Fast,
    /// After one ambiguous exchange: FastRTO, then a SlowRTO probe, then backoff.
    FastSlowFast,
    /// After two or more ambiguous exchanges in a row: SlowRTO first, then FastRTO backoff.
    SlowFast,
}

impl FasorState {
    /// The name used in snapshots and traces.
    pub fn name(self) -> &'static str {
        match self {
            FasorState::Fast => "FAST",
            FasorState::FastSlowFast => "FAST_SLOW_FAST",
            FasorState::SlowFast => "SLOW_FAST",
        }
    }
}

/// What a FASOR exchange's timers depend on, captured at its start (draft-ietf-core-fasor-02;
/// docs/algorithms.md, ambiguity #20).
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Snap {
    pub(crate) state: FasorState,
    pub(crate) fast_rto_s: f64,
    pub(crate) srtt_s: f64,
    pub(crate) has_sample: bool,
    pub(crate) slow_s: Option<f64>,
    pub(crate) prev_sample_s: Option<f64>,
}

/// FASOR's per-exchange scratch: the backoff register and the snapshot.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct FasorScratch {
    /// `X.b`: the backoff register in seconds (not rounded; timers are).
    pub(crate) b_s: f64,
    pub(crate) snap: Snap,
    /// When the original was sent (for the `give_up = ambiguous` alternative).
    pub(crate) started: Instant,
}

/// A value `Exchange::custom` can hold: any `Clone + Send + Debug + 'static` type (the
/// blanket implementation covers it; nothing to implement by hand).
pub trait CustomScratch: Any + Send + fmt::Debug {
    /// A boxed copy (an `Exchange` is `Clone`).
    fn clone_box(&self) -> Box<dyn CustomScratch>;
    /// For downcasting.
    fn as_any(&self) -> &dyn Any;
    /// For downcasting.
    fn as_any_mut(&mut self) -> &mut dyn Any;
}

impl<T: Any + Clone + Send + fmt::Debug> CustomScratch for T {
    fn clone_box(&self) -> Box<dyn CustomScratch> {
        Box::new(self.clone())
    }

    fn as_any(&self) -> &dyn Any {
        self
    }

    fn as_any_mut(&mut self) -> &mut dyn Any {
        self
    }
}

impl Clone for Box<dyn CustomScratch> {
    fn clone(&self) -> Self {
        // `(**self)`: the boxed value's own implementation, not the blanket one of the box.
        (**self).clone_box()
    }
}
