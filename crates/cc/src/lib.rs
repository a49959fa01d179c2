//! RTO / congestion-control algorithms for CoAP, as sans-IO state machines.
//!
//! Every algorithm of docs/algorithms.md lives in its own module and implements
//! [`RtoAlgorithm`]: four events (an exchange starts, its timer expires, it completes, it fails),
//! plus reset and introspection. Time ([`time`]) and randomness ([`rng`]) are arguments: nothing
//! here reads a clock or a global random generator. [`registry`] maps the names users write
//! (`default`, `cocoa`, `fasor`, …) to constructors taking checked [`params`].
//!
//! The exchange layer owns each exchange's [`Exchange`] and hands it back on every event; the
//! per-exchange state the built-in families keep in it (CoCoA's unrounded timers, FASOR's
//! backoff register and snapshot, a custom algorithm's own type) is declared in the private
//! leaf module `scratch`, data only, so [`algorithm`] names no algorithm module: every
//! algorithm depends on [`algorithm`] and [`common`], never the reverse.

pub mod algorithm;
pub mod basic_rto;
pub mod californium;
pub mod cocoa;
pub mod cocoa_cf;
pub mod cocoa_fb;
pub mod cocoa_pp;
pub mod common;
pub mod default;
pub mod default_fb;
pub mod eifel;
pub mod fasor;
pub mod gsrtc;
pub mod gst;
pub mod linux_rto;
pub mod peak_hopper;
pub mod presets;
pub mod registry;
pub mod rfc6298;
pub mod trace;

// Time, randomness and parameter tables are the ground floor's (crates/base), re-exported
// where the algorithms' users have always found them.
pub use coaplab_base::{params, rng, time};

mod java;
mod scratch;
#[cfg(test)]
mod testutil;

pub use algorithm::{Admission, Completion, Exchange, Expiry, RtoAlgorithm, Snapshot};
pub use params::{ParamError, ParamSpec, Params, Settings};
pub use rng::{Random, ScriptedRandom, SeededRandom};
pub use time::{Duration, Instant};
