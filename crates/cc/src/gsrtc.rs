//! GSRTC (Rathod 2022, Algorithm 2): CoCoA-FB2 whose strong weight
//! grows geometrically over consecutive clean exchanges.
//!
//! After `count` clean exchanges in a row the weight of the new strong estimate is
//! `W = clamp(Σ_{i=1..count} GSRTC_RATIO^i, W_STRONG_MIN, W_STRONG_MAX)`: 0.5, 0.75, 0.875, …,
//! capped at 0.99, so a stable path is tracked ever faster. A retransmitted exchange resets the
//! series and applies FB2's rule (the larger of the backed-off timer and the weak-updated RTO is
//! carried undithered into the next exchange). Start, backoff, aging and give-up are CoCoA-FB's.

use crate::algorithm::{Admission, Completion, Exchange, Expiry, RtoAlgorithm, Snapshot};
use crate::cocoa::{CocoaConfig, CocoaCore, COCOA};
use crate::cocoa_fb::{timer_in_force_s, Carry, COCOA_FB};
use crate::common;
use crate::params::{Kind, ParamSpec, Params, Value};
use crate::rng::Random;
use crate::time::{Duration, Instant};

const WEIGHT: Kind = Kind::Float { min: 0.0, max: 1.0 };

/// GSRTC's own parameters (Rathod 2022 Algorithm 2; docs/algorithms.md, ambiguity #14-#15).
/// `w_strong` of the `cocoa` group is unused: the adaptive weight replaces it.
pub const GSRTC: &[ParamSpec] = &[
    ParamSpec {
        key: "gsrtc_ratio",
        kind: WEIGHT,
        default: Value::Float(0.5),
        help: "GSRTC_RATIO: the weight after n clean exchanges is the sum of ratio^1..ratio^n",
        source: "Rathod 2022 Algorithm 2",
    },
    ParamSpec {
        key: "w_strong_min",
        kind: WEIGHT,
        default: Value::Float(0.5),
        help: "W_STRONG_MIN: lower clamp of the adaptive strong weight",
        source: "Rathod 2022 Algorithm 2",
    },
    ParamSpec {
        key: "w_strong_max",
        kind: WEIGHT,
        default: Value::Float(0.99),
        help: "W_STRONG_MAX: upper clamp of the adaptive strong weight",
        source: "Rathod 2022 Algorithm 2",
    },
    ParamSpec {
        key: "after_retransmission",
        kind: Kind::Choice(&["fb2", "literal"]),
        default: Value::Choice("fb2"),
        help: "fb2: carry max(backed-off timer, weak-updated RTO), undithered; literal: Algorithm 2 as written, the weak update only and a dithered next first timer",
        source: "Rathod 2022 Algorithm 2; docs/algorithms.md, ambiguity #14",
    },
    ParamSpec {
        key: "weight_orientation",
        kind: Kind::Choice(&["new_estimate", "inverted"]),
        default: Value::Choice("new_estimate"),
        help: "new_estimate: RTO = W*E_s + (1-W)*RTO (thesis equations); inverted: RTO = (1-W)*E_s + W*RTO (Contiki code)",
        source: "Rathod 2022 Algorithm 2; docs/algorithms.md, ambiguity #15",
    },
];

/// The parameter groups of `gsrtc`.
pub(crate) const GROUPS: &[&[ParamSpec]] = &[common::COMMON, COCOA, COCOA_FB, GSRTC];

/// GSRTC (Rathod 2022 Algorithm 2).
#[derive(Debug, Clone)]
pub struct Gsrtc {
    core: CocoaCore,
    carry: Carry,
    ratio: f64,
    w_min: f64,
    w_max: f64,
    fb2_after_retransmission: bool,
    inverted: bool,
    /// `D.count`: consecutive clean exchanges.
    count: u32,
    /// `D.w_prev`: the unclamped weight sum so far.
    w_prev: f64,
    /// The clamped weight last applied (for traces).
    weight: f64,
}

impl Gsrtc {
    /// `gsrtc` from resolved parameters, created at `now`.
    pub fn new(p: &Params, now: Instant) -> Gsrtc {
        Gsrtc {
            core: CocoaCore::new(CocoaConfig::from_params(p, false), now),
            carry: Carry::from_params(p),
            ratio: p.float("gsrtc_ratio"),
            w_min: p.float("w_strong_min"),
            w_max: p.float("w_strong_max"),
            fb2_after_retransmission: p.choice("after_retransmission") == "fb2",
            inverted: p.choice("weight_orientation") == "inverted",
            count: 0,
            w_prev: 0.0,
            weight: 0.0,
        }
    }
}

impl RtoAlgorithm for Gsrtc {
    fn name(&self) -> &'static str {
        "gsrtc"
    }

    fn start(
        &mut self,
        now: Instant,
        admission: Admission,
        x: &mut Exchange,
        rng: &mut dyn Random,
    ) -> Duration {
        self.carry.start(&mut self.core, now, admission, x, rng)
    }

    fn expired(&mut self, _now: Instant, x: &mut Exchange, _rng: &mut dyn Random) -> Expiry {
        self.core.expired(x)
    }

    fn completed(&mut self, c: &Completion<'_>, x: &mut Exchange, _rng: &mut dyn Random) {
        let r = c.retransmissions();
        let r_s = c.rtt_from_original().as_secs_f64();
        if r == 0 {
            self.count = self.count.saturating_add(1);
            let step = self.ratio.powi(self.count.min(i32::MAX as u32) as i32);
            self.w_prev += step;
            self.weight = self.w_prev.clamp(self.w_min, self.w_max);
            // The thesis equations weight the NEW estimate; the Contiki code the old RTO.
            let w_new = if self.inverted {
                1.0 - self.weight
            } else {
                self.weight
            };
            self.core.update_strong(r_s, w_new);
            self.carry.next = false;
            self.core.touch(c.ack_time);
            return;
        }
        self.count = 0;
        self.w_prev = 0.0;
        // Algorithm 2 has no STRONG_ONLY: any 1..=WEAK_MAX_RETX exchange is a weak sample.
        let weak = r <= self.core.cfg.weak_max_retx;
        if weak {
            self.core.update_weak(r_s);
        }
        if self.fb2_after_retransmission {
            // FB2 rule (RESOLVED: GSRTC keeps it).
            let rto_s = timer_in_force_s(c, x).max(self.core.rto_s);
            self.carry.carry(&mut self.core, rto_s, c.ack_time);
        } else {
            if weak {
                self.core.touch(c.ack_time);
            }
            self.carry.next = false;
        }
    }

    fn failed(&mut self, now: Instant, x: &mut Exchange) {
        self.carry.failed(&mut self.core, now, x);
    }

    fn reset(&mut self, now: Instant) {
        self.core.reset(now);
        self.carry.next = false;
        self.count = 0;
        self.w_prev = 0.0;
        self.weight = 0.0;
    }

    fn rto(&self) -> Duration {
        self.core.rto()
    }

    fn max_retransmit(&self) -> u32 {
        self.core.cfg.max_retransmit
    }

    fn snapshot(&self) -> Snapshot {
        let mut vars = self.core.vars();
        vars.push(("carry_next", f64::from(u8::from(self.carry.next))));
        vars.push(("clean_count", f64::from(self.count)));
        vars.push(("strong_weight", self.weight));
        Snapshot {
            rto: self.core.rto(),
            state: None,
            vars,
        }
    }
}

/// Registry constructor of `gsrtc`.
pub(crate) fn build(p: &Params, now: Instant) -> Box<dyn RtoAlgorithm> {
    Box::new(Gsrtc::new(p, now))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cocoa::harness::*;
    use crate::rng::{ConstantRandom, ScriptedRandom};

    fn gsrtc(settings: &[&str]) -> Gsrtc {
        Gsrtc::new(&params(GROUPS, settings), Instant::ZERO)
    }

    /// Runs clean exchanges with `rtt`, 0.5 s apart; returns (weights, RTOs) and the next start.
    fn clean(alg: &mut Gsrtc, mut t: Instant, rtt: f64, n: usize) -> (Vec<f64>, Vec<f64>, Instant) {
        let (mut ws, mut rtos) = (vec![], vec![]);
        for _ in 0..n {
            let o = exchange(
                alg,
                t,
                Admission::ALONE,
                Some(secs(rtt)),
                &mut ConstantRandom(0.0),
            );
            assert_eq!(o.tx.len(), 1);
            ws.push(var(alg, "strong_weight"));
            rtos.push(var(alg, "rto_s"));
            t = o.end + secs(0.5);
        }
        (ws, rtos, t)
    }

    #[test]
    fn weight_sequence_doubles_toward_0_99() {
        let mut alg = gsrtc(&[]);
        let (ws, _, _) = clean(&mut alg, Instant::ZERO, 0.1, 9);
        let expect = [
            0.5, 0.75, 0.875, 0.9375, 0.96875, 0.984375, 0.99, 0.99, 0.99,
        ];
        for (w, e) in ws.iter().zip(expect) {
            close(*w, e);
        }
        assert_eq!(var(&alg, "clean_count"), 9.0);
    }

    #[test]
    fn ratio_one_third_pins_the_weight_at_the_floor() {
        // Σ (1/3)^i -> 0.5 from below, so the 0.5 floor holds W at 0.5.
        let mut alg = gsrtc(&["gsrtc_ratio=0.3333333333333333"]);
        let (ws, _, _) = clean(&mut alg, Instant::ZERO, 0.1, 6);
        for w in ws {
            close(w, 0.5);
        }
    }

    #[test]
    fn worked_example_with_the_rtt_jump() {
        let mut alg = gsrtc(&[]);
        let (ws, rtos, t) = clean(&mut alg, Instant::ZERO, 0.1, 4);
        // clean #1..4: W 0.5, 0.75, 0.875, 0.9375; RTO 1.15, 0.475, 0.2453125, 0.18818359375.
        for (a, b) in ws.iter().zip([0.5, 0.75, 0.875, 0.9375]) {
            close(*a, b);
        }
        for (a, b) in rtos.iter().zip([1.15, 0.475, 0.2453125, 0.18818359375]) {
            close(*a, b);
        }
        close(var(&alg, "strong_rto_s"), 0.184375);
        // RTT 0.5: T0 = 0.18818359375 expires, T1 = ×3 = 0.56455078125; ACK at 0.5 (r = 1).
        let o = exchange(
            &mut alg,
            t,
            Admission::ALONE,
            Some(secs(0.5)),
            &mut ConstantRandom(0.0),
        );
        assert_eq!(o.timers, [us(188_184), us(564_551)]);
        close(var(&alg, "weak_rto_s"), 0.75);
        // FB2 rule: max(0.56455078125, weak update 0.3286376953125); count = 0.
        close(var(&alg, "rto_s"), 0.56455078125);
        assert_eq!(var(&alg, "clean_count"), 0.0);
        assert_eq!(var(&alg, "carry_next"), 1.0);
        // Next: T0 = 0.56455078125 carried undithered, clean with R = 0.5 (count 1, W 0.5).
        let mut rng = ScriptedRandom::new(&[]);
        let o = exchange(
            &mut alg,
            o.end + secs(0.5),
            Admission::ALONE,
            Some(secs(0.5)),
            &mut rng,
        );
        assert_eq!(o.timers, [us(564_551)]);
        close(var(&alg, "strong_weight"), 0.5);
        close(var(&alg, "strong_rttvar_s"), 0.1158203125);
        close(var(&alg, "strong_srtt_s"), 0.15);
        close(var(&alg, "strong_rto_s"), 0.61328125);
        close(var(&alg, "rto_s"), 0.588916015625);
    }

    #[test]
    fn literal_after_retransmission_keeps_the_weak_update_only() {
        // docs/algorithms.md, ambiguity #14: the same jump gives the weak update 0.3286376953125,
        // not carried.
        let mut alg = gsrtc(&["after_retransmission=literal"]);
        let (_, _, t) = clean(&mut alg, Instant::ZERO, 0.1, 4);
        let o = exchange(
            &mut alg,
            t,
            Admission::ALONE,
            Some(secs(0.5)),
            &mut ConstantRandom(0.0),
        );
        close(var(&alg, "rto_s"), 0.3286376953125);
        assert_eq!(var(&alg, "carry_next"), 0.0);
        assert_eq!(var(&alg, "clean_count"), 0.0);
        let mut rng = ScriptedRandom::new(&[0.0]);
        alg.start(o.end, Admission::ALONE, &mut Exchange::new(), &mut rng);
        assert_eq!(rng.consumed(), 1);
    }

    #[test]
    fn inverted_orientation_weights_the_old_rto() {
        // docs/algorithms.md, ambiguity #15: clean #2 with W = 0.75 inverted: 0.25·0.25 +
        // 0.75·1.15 = 0.925.
        let mut alg = gsrtc(&["weight_orientation=inverted"]);
        let (_, rtos, _) = clean(&mut alg, Instant::ZERO, 0.1, 2);
        close(rtos[0], 1.15);
        close(rtos[1], 0.925);
    }

    #[test]
    fn give_up_carries_the_last_timer_and_reset_forgets() {
        let mut alg = gsrtc(&["max_retransmit=2"]);
        let (_, _, t) = clean(&mut alg, Instant::ZERO, 0.1, 2);
        let count = var(&alg, "clean_count");
        let o = exchange(
            &mut alg,
            t,
            Admission::ALONE,
            None,
            &mut ConstantRandom(0.0),
        );
        assert!(!o.acked);
        // 0.475 (< 1: ×3) 1.425 (×2) 2.85: carried.
        assert_eq!(o.timers, [0.475, 1.425, 2.85].map(secs));
        assert_eq!(alg.rto(), secs(2.85));
        assert_eq!(var(&alg, "clean_count"), count);
        let t0 = alg.start(
            o.end,
            Admission::ALONE,
            &mut Exchange::new(),
            &mut ScriptedRandom::new(&[]),
        );
        assert_eq!(t0, secs(2.85));
        alg.reset(at(100.0));
        assert_eq!(alg.rto(), secs(2.0));
        assert_eq!(var(&alg, "clean_count"), 0.0);
        assert_eq!(var(&alg, "carry_next"), 0.0);
        assert_eq!(alg.name(), "gsrtc");
    }
}
