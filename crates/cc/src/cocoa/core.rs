//! The CoCoA state `D` and the rules of draft-ietf-core-cocoa-03 that the whole family reuses:
//! start with aging and the blind rule, the dithered first timer, the VBF with its truncation, the
//! sample classes and the overall-RTO blend. CoCoA-FB (`cocoa_fb.rs`) and GSRTC (`gsrtc.rs`) build
//! on [`CocoaCore`]; CoCoA++ (`cocoa_pp/`) reuses [`TimerScratch`] and the VBF.

use super::params::{AgingStyle, Blind, CocoaConfig};
use crate::algorithm::{Admission, Completion, Exchange, Expiry};
use crate::common::{dither_secs, expire_with};
use crate::rfc6298::Estimator;
use crate::rng::Random;
use crate::scratch::Scratch;
pub(crate) use crate::scratch::TimerScratch;
use crate::time::{Duration, Instant};

/// Which samples update which estimator (draft-ietf-core-cocoa-03 `completed`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum SampleClass {
    /// No retransmission: the strong estimator.
    Strong,
    /// 1..=WEAK_MAX_RETX retransmissions (and not STRONG_ONLY): the weak estimator.
    Weak,
    /// No sample.
    None,
}

impl TimerScratch {
    /// Arms the first timer `t0_s` on `x` (k = 0) and returns it rounded.
    pub(crate) fn arm_first(x: &mut Exchange, t0_s: f64) -> Duration {
        let t0_s = t0_s.max(0.0);
        x.retransmissions = 0;
        x.scratch = Scratch::Timer(TimerScratch {
            timer_s: t0_s,
            first_s: t0_s,
        });
        x.timer = Duration::from_secs_f64_round_us(t0_s);
        x.timer
    }

    /// The scratch of `x`, or one rebuilt from the rounded timer if the exchange was started by
    /// another algorithm.
    pub(crate) fn of(x: &Exchange) -> TimerScratch {
        match x.scratch {
            Scratch::Timer(s) => s,
            _ => {
                let t = x.timer.as_secs_f64();
                TimerScratch {
                    timer_s: t,
                    first_s: t,
                }
            }
        }
    }

    /// Replaces the armed timer of `x` with `t_s` (a retransmission) and returns it rounded.
    pub(crate) fn arm_next(x: &mut Exchange, t_s: f64) -> Duration {
        let mut s = TimerScratch::of(x);
        s.timer_s = t_s.max(0.0);
        x.scratch = Scratch::Timer(s);
        Duration::from_secs_f64_round_us(s.timer_s)
    }
}

/// The CoCoA state `D` of draft-ietf-core-cocoa-03 and its event rules, shared by the whole family.
#[derive(Debug, Clone)]
pub(crate) struct CocoaCore {
    pub(crate) cfg: CocoaConfig,
    /// `D.S`.
    pub(crate) strong: Estimator,
    /// `D.W`.
    pub(crate) weak: Estimator,
    /// `D.rto`: the overall RTO in seconds.
    pub(crate) rto_s: f64,
    /// `D.has_sample`.
    pub(crate) has_sample: bool,
    /// `D.last_update`: the aging clock.
    pub(crate) last_update: Instant,
}

impl CocoaCore {
    /// Fresh state created at `now` (draft-ietf-core-cocoa-03).
    pub(crate) fn new(cfg: CocoaConfig, now: Instant) -> CocoaCore {
        CocoaCore {
            strong: Estimator::new(cfg.initial_rto_s),
            weak: Estimator::new(cfg.initial_rto_s),
            rto_s: cfg.initial_rto_s,
            has_sample: false,
            last_update: now,
            cfg,
        }
    }

    /// Back to the state of a fresh destination created at `now`.
    pub(crate) fn reset(&mut self, now: Instant) {
        *self = CocoaCore::new(self.cfg.clone(), now);
    }

    /// `start` of draft-ietf-core-cocoa-03 (and of ANRW 2018's Full Backoff with `carried`): ages
    /// the RTO, picks the base (the carried RTO, the overall RTO, or the blind base), dithers it
    /// unless it is a carried value used undithered, caps it at TIMER_MAX and arms it.
    pub(crate) fn start(
        &mut self,
        now: Instant,
        admission: Admission,
        x: &mut Exchange,
        rng: &mut dyn Random,
        carried: Option<Carried>,
    ) -> Duration {
        if self.cfg.aging && self.cfg.aging_style == AgingStyle::Cumulative {
            self.age(now);
        }
        let t0_s = match carried {
            // ANRW 2018: the carried value used UNDITHERED, no draw consumed (RESOLVED,
            // docs/algorithms.md, ambiguity #13).
            Some(Carried::Undithered) => self.rto_s.min(self.cfg.timer_max_s),
            Some(Carried::Dithered) => self.dithered(self.rto_s, rng),
            None => {
                let base = self.base_s(admission);
                self.dithered(base, rng)
            }
        };
        if self.cfg.aging && self.cfg.aging_style == AgingStyle::CfCompat {
            // Californium 3.x Cocoa: aging after the first timer, so it affects the next exchange.
            self.age_one_step(now);
        }
        TimerScratch::arm_first(x, t0_s)
    }

    /// `min(base·(1 + (ARF−1)·u), TIMER_MAX)`: one draw (docs/algorithms.md, 'Conventions').
    fn dithered(&self, base_s: f64, rng: &mut dyn Random) -> f64 {
        let u = rng.uniform01();
        dither_secs(base_s, self.cfg.ack_random_factor, u).min(self.cfg.timer_max_s)
    }

    /// The undithered base of the first timer, with the blind rule (draft-ietf-core-cocoa-03;
    /// docs/algorithms.md, ambiguity #11).
    pub(crate) fn base_s(&self, admission: Admission) -> f64 {
        match self.cfg.blind {
            _ if self.has_sample && self.cfg.blind != Blind::CfCompat => self.rto_s,
            // Draft: "two already running -> the new one gets 6 s"; n counts the new exchange.
            Blind::On => {
                (self.cfg.initial_rto_s * admission.in_flight.max(1) as f64).min(self.cfg.rto_max_s)
            }
            Blind::Off => self.cfg.initial_rto_s,
            Blind::CfCompat => {
                // Californium computes the timer before registering the exchange, unless it was
                // dequeued from the NSTART queue (Californium 3.x Cocoa); ×1 for n' <= 1.
                let n = admission.registered();
                (self.rto_s * n.max(1) as f64).min(self.cfg.rto_max_s)
            }
        }
    }

    /// `age(now)` of draft-ietf-core-cocoa-03: lazy and cumulative. Each step consumes its interval
    /// by advancing `last_update`, so evaluating late equals a timer that ran all along.
    pub(crate) fn age(&mut self, now: Instant) {
        loop {
            let idle_s = (now - self.last_update).as_secs_f64();
            let Some((step_s, new_rto_s)) = self.aging_step(idle_s) else {
                return;
            };
            let step = Duration::from_secs_f64_round_us(step_s);
            if step <= Duration::ZERO {
                return; // a zero or negative RTO (pseudocode_literal) must not loop forever
            }
            self.last_update += step;
            self.rto_s = new_rto_s;
        }
    }

    /// The cf-compat aging (Californium 3.x Cocoa) in seconds: at most one step, then
    /// `last_update = now` (the remainder of the idle interval is lost).
    fn age_one_step(&mut self, now: Instant) {
        let idle_s = (now - self.last_update).as_secs_f64();
        if let Some((_, new_rto_s)) = self.aging_step(idle_s) {
            self.rto_s = new_rto_s;
            self.last_update = now;
        }
    }

    /// One aging step after `idle_s` idle seconds: `(interval consumed, new RTO)`, or `None`.
    /// Comparisons are strict (draft-ietf-core-cocoa-03 notes).
    fn aging_step(&self, idle_s: f64) -> Option<(f64, f64)> {
        let c = &self.cfg;
        let rto = self.rto_s;
        if rto <= 0.0 {
            return None;
        }
        if rto < c.age_low_thresh_s && idle_s > c.age_low_mult * rto {
            // draft §4.4: a small RTO of an idle destination doubles.
            Some((c.age_low_mult * rto, 2.0 * rto))
        } else if rto > c.age_high_thresh_s && idle_s > c.age_high_mult * rto {
            // draft §4.4: a large RTO decays toward 2 s: 1 s + RTO/2.
            Some((c.age_high_mult * rto, c.age_high_base_s + rto / 2.0))
        } else {
            None
        }
    }

    /// `next_timer` of draft-ietf-core-cocoa-03: VBF on the current timer (or on the first,
    /// docs/algorithms.md, ambiguity #9), then the BACKOFF_CAP truncation (never shrinking unless
    /// `truncation = literal`, docs/algorithms.md, ambiguity #10) and TIMER_MAX (RFC 7252 §4.8).
    pub(crate) fn next_timer(&self, x: &mut Exchange) -> Duration {
        let s = TimerScratch::of(x);
        let input_s = if self.cfg.vbf_from_first {
            s.first_s
        } else {
            s.timer_s
        };
        let f = self.cfg.vbf.factor(input_s);
        let cap_s = if self.cfg.truncation_literal {
            self.cfg.backoff_cap_s
        } else {
            self.cfg.backoff_cap_s.max(s.timer_s)
        };
        let t_s = (f * s.timer_s).min(cap_s).min(self.cfg.timer_max_s);
        TimerScratch::arm_next(x, t_s)
    }

    /// `expired` with the common give-up rule.
    pub(crate) fn expired(&self, x: &mut Exchange) -> Expiry {
        expire_with(x, self.cfg.max_retransmit, |x| self.next_timer(x))
    }

    /// Which estimator a completion with `r` retransmissions feeds (draft-ietf-core-cocoa-03).
    pub(crate) fn classify(&self, r: u32) -> SampleClass {
        if r == 0 {
            SampleClass::Strong
        } else if r <= self.cfg.weak_max_retx && !self.cfg.strong_only {
            SampleClass::Weak
        } else {
            SampleClass::None
        }
    }

    /// `est_update(D.S, R, K_STRONG)`, then `D.rto = w·E_s + (1−w)·D.rto` (no touch).
    pub(crate) fn update_strong(&mut self, r_s: f64, w: f64) {
        let e = self.strong.update(r_s, &self.cfg.strong);
        self.rto_s = w * e + (1.0 - w) * self.rto_s;
    }

    /// `est_update(D.W, R, K_WEAK)`, then `D.rto = W_WEAK·E_w + (1−W_WEAK)·D.rto` (no touch).
    pub(crate) fn update_weak(&mut self, r_s: f64) {
        let e = self.weak.update(r_s, &self.cfg.weak);
        self.rto_s = self.cfg.w_weak * e + (1.0 - self.cfg.w_weak) * self.rto_s;
    }

    /// `touch(now)`: clamp at RTO_MAX, mark a sample, restart the aging clock.
    pub(crate) fn touch(&mut self, now: Instant) {
        self.rto_s = self.rto_s.min(self.cfg.rto_max_s);
        self.has_sample = true;
        self.last_update = now;
    }

    /// `completed` of draft-ietf-core-cocoa-03 (plain CoCoA). Returns the class of the sample.
    pub(crate) fn completed(&mut self, c: &Completion<'_>) -> SampleClass {
        // The weak RTT is measured from the ORIGINAL send (draft-ietf-core-cocoa-03).
        let r_s = c.rtt_from_original().as_secs_f64();
        let class = self.classify(c.retransmissions());
        match class {
            SampleClass::Strong => self.update_strong(r_s, self.cfg.w_strong),
            SampleClass::Weak => self.update_weak(r_s),
            SampleClass::None => return class,
        }
        self.touch(c.ack_time);
        class
    }

    /// The current overall RTO as a duration.
    pub(crate) fn rto(&self) -> Duration {
        Duration::from_secs_f64_round_us(self.rto_s)
    }

    /// The estimator variables (snake_case with units).
    pub(crate) fn vars(&self) -> Vec<(&'static str, f64)> {
        vec![
            ("rto_s", self.rto_s),
            ("strong_srtt_s", self.strong.srtt_s),
            ("strong_rttvar_s", self.strong.rttvar_s),
            ("strong_rto_s", self.strong.rto_s),
            ("weak_srtt_s", self.weak.srtt_s),
            ("weak_rttvar_s", self.weak.rttvar_s),
            ("weak_rto_s", self.weak.rto_s),
            ("has_sample", f64::from(u8::from(self.has_sample))),
            ("last_update_s", self.last_update.as_secs_f64()),
        ]
    }
}

/// How a carried RTO becomes the first timer (CoCoA-FB, GSRTC; ANRW 2018; docs/algorithms.md,
/// ambiguity #13).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Carried {
    /// Used exactly (capped at TIMER_MAX), no draw.
    Undithered,
    /// Dithered like a CoCoA first timer.
    Dithered,
}
