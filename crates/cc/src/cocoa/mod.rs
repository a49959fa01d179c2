//! CoCoA (draft-ietf-core-cocoa-03) with RFC 6298 semantics: `cocoa` and `cocoa-strong`
//! (draft-ietf-core-cocoa-03).
//!
//! Two RFC 6298 estimators, *strong* (samples from exchanges without retransmission, K = 4)
//! and *weak* (1..=2 retransmissions, measured from the original send, K = 1), blended into one
//! overall RTO. The first timer is the overall RTO dithered by ×[1, ACK_RANDOM_FACTOR);
//! retransmissions back off by the variable backoff factor (VBF) and are truncated at
//! BACKOFF_CAP. An idle destination's RTO drifts back toward 2 s ("aging").
//!
//! The module is split by concern: `params.rs` holds the parameters and their resolved form,
//! `core.rs` the state `CocoaCore` and the pieces CoCoA-FB (`cocoa_fb.rs`) and GSRTC
//! (`gsrtc.rs`) reuse (start with aging and the blind rule, the VBF, the sample classes and the
//! overall-RTO blend), and this file the `cocoa` / `cocoa-strong` algorithm itself. The
//! Californium-compat profile (Californium 3.x Cocoa, integer ms) lives in `cocoa_cf/` and is
//! selected with `profile = cf-compat`.

mod core;
#[cfg(test)]
pub(crate) mod harness;
mod params;
#[cfg(test)]
mod tests;

pub(crate) use self::core::{Carried, CocoaCore, TimerScratch};
pub use self::params::COCOA;
pub(crate) use self::params::{CocoaConfig, Vbf};

use crate::algorithm::{Admission, Completion, Exchange, Expiry, RtoAlgorithm, Snapshot};
use crate::cocoa_cf::{CocoaCf, CF_COMPAT};
use crate::common;
use crate::params::{ParamSpec, Params};
use crate::rng::Random;
use crate::time::{Duration, Instant};

/// CoCoA and CoCoA-strong with RFC 6298 semantics (draft-ietf-core-cocoa-03).
#[derive(Debug, Clone)]
pub struct Cocoa {
    core: CocoaCore,
}

impl Cocoa {
    /// `cocoa` (or `cocoa-strong` when `strong_only`) from resolved parameters, created at
    /// `now`.
    pub fn new(p: &Params, now: Instant, strong_only: bool) -> Cocoa {
        Cocoa {
            core: CocoaCore::new(CocoaConfig::from_params(p, strong_only), now),
        }
    }
}

impl RtoAlgorithm for Cocoa {
    fn name(&self) -> &'static str {
        if self.core.cfg.strong_only {
            "cocoa-strong"
        } else {
            "cocoa"
        }
    }

    fn start(
        &mut self,
        now: Instant,
        admission: Admission,
        x: &mut Exchange,
        rng: &mut dyn Random,
    ) -> Duration {
        self.core.start(now, admission, x, rng, None)
    }

    fn expired(&mut self, _now: Instant, x: &mut Exchange, _rng: &mut dyn Random) -> Expiry {
        self.core.expired(x)
    }

    fn completed(&mut self, c: &Completion<'_>, _x: &mut Exchange, _rng: &mut dyn Random) {
        self.core.completed(c);
    }

    fn reset(&mut self, now: Instant) {
        self.core.reset(now);
    }

    fn rto(&self) -> Duration {
        self.core.rto()
    }

    fn max_retransmit(&self) -> u32 {
        self.core.cfg.max_retransmit
    }

    fn snapshot(&self) -> Snapshot {
        Snapshot {
            rto: self.core.rto(),
            state: None,
            vars: self.core.vars(),
        }
    }
}

/// Registry constructor of `cocoa`: the RFC profile, or [`CocoaCf`] with `profile = cf-compat`.
pub(crate) fn build_cocoa(p: &Params, now: Instant) -> Box<dyn RtoAlgorithm> {
    build(p, now, false)
}

/// Registry constructor of `cocoa-strong`, either profile.
pub(crate) fn build_cocoa_strong(p: &Params, now: Instant) -> Box<dyn RtoAlgorithm> {
    build(p, now, true)
}

fn build(p: &Params, now: Instant, strong_only: bool) -> Box<dyn RtoAlgorithm> {
    match p.choice("profile") {
        "cf-compat" => Box::new(CocoaCf::new(p, now, strong_only)),
        _ => Box::new(Cocoa::new(p, now, strong_only)),
    }
}

/// The parameter groups of `cocoa` and `cocoa-strong`: common, CoCoA, then the profile switch.
pub(crate) const GROUPS: &[&[ParamSpec]] = &[common::COMMON, COCOA, CF_COMPAT];
