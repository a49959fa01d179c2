//! CoCoA with Full Backoff: `cocoa-fb1` and `cocoa-fb2` (ANRW 2018).
//!
//! Plain CoCoA forgets a backoff as soon as the exchange ends: an exchange whose ACK needed three
//! or more retransmissions gives no sample, so the next exchange repeats the same spurious
//! retransmissions (the failure mode FASOR criticises). Full Backoff applies Karn's rule: after a
//! retransmitted exchange the backed-off timer in force at the ACK becomes the RTO and is used,
//! undithered, as the next first timer. FB1 overwrites the RTO with it; FB2 keeps the larger of
//! it and the weak-updated RTO. A clean exchange returns to normal CoCoA.
//!
//! The carry logic (`Carry`) is shared with GSRTC (`gsrtc.rs`).

use crate::algorithm::{Admission, Completion, Exchange, Expiry, RtoAlgorithm, Snapshot};
use crate::cocoa::{Carried, CocoaConfig, CocoaCore, TimerScratch, COCOA};
use crate::common;
use crate::params::{Kind, ParamSpec, Params, Value};
use crate::rng::Random;
use crate::scratch::Scratch;
use crate::time::{Duration, Instant};

/// The Full-Backoff parameters (shared by `cocoa-fb1`, `cocoa-fb2` and `gsrtc`).
pub const COCOA_FB: &[ParamSpec] = &[
    ParamSpec {
        key: "carried_dither",
        kind: Kind::Choice(&["none", "dithered"]),
        default: Value::Choice("none"),
        help: "none: the carried RTO is the next first timer exactly (no draw); dithered: x[1, ACK_RANDOM_FACTOR) like CoCoA",
        source: "ANRW 2018; docs/algorithms.md, ambiguity #13",
    },
    ParamSpec {
        key: "on_give_up",
        kind: Kind::Choice(&["carry", "no_change"]),
        default: Value::Choice("carry"),
        help: "carry: after a give-up the last backed-off timer becomes the carried RTO (Karn-style); no_change: a give-up changes nothing",
        source: "ANRW 2018; docs/algorithms.md, ambiguity #4",
    },
];

/// The parameter groups of `cocoa-fb1` and `cocoa-fb2`.
pub(crate) const GROUPS: &[&[ParamSpec]] = &[common::COMMON, COCOA, COCOA_FB];

/// The Full-Backoff carry state `D.carry_next` and its rules (ANRW 2018).
#[derive(Debug, Clone)]
pub(crate) struct Carry {
    /// `D.carry_next`: the next first timer is the carried RTO.
    pub(crate) next: bool,
    /// How the carried RTO becomes a first timer (docs/algorithms.md, ambiguity #13).
    pub(crate) dither: Carried,
    /// Whether a give-up carries the last timer (docs/algorithms.md, ambiguity #4).
    pub(crate) on_give_up: bool,
}

impl Carry {
    /// Reads the `cocoa-fb` parameter group.
    pub(crate) fn from_params(p: &Params) -> Carry {
        Carry {
            next: false,
            dither: match p.choice("carried_dither") {
                "dithered" => Carried::Dithered,
                _ => Carried::Undithered,
            },
            on_give_up: p.choice("on_give_up") == "carry",
        }
    }

    /// `start` of ANRW 2018: aging, then the carried RTO or a normal CoCoA first timer.
    pub(crate) fn start(
        &self,
        core: &mut CocoaCore,
        now: Instant,
        admission: Admission,
        x: &mut Exchange,
        rng: &mut dyn Random,
    ) -> Duration {
        let carried = self.next.then_some(self.dither);
        core.start(now, admission, x, rng, carried)
    }

    /// Makes `rto_s` the carried RTO after a retransmitted exchange: clamp at RTO_MAX, mark a
    /// sample, restart aging (`touch`), carry it into the next exchange.
    pub(crate) fn carry(&mut self, core: &mut CocoaCore, rto_s: f64, now: Instant) {
        core.rto_s = rto_s;
        core.touch(now);
        self.next = true;
    }

    /// `failed` of ANRW 2018 (RESOLVED, Karn-style): the last backed-off timer becomes the
    /// carried RTO, unless `on_give_up = no_change`.
    pub(crate) fn failed(&mut self, core: &mut CocoaCore, now: Instant, x: &Exchange) {
        if self.on_give_up {
            core.rto_s = TimerScratch::of(x).timer_s.min(core.cfg.rto_max_s);
            core.last_update = now;
            self.next = true;
        }
    }
}

/// `c.T_force` in f64 seconds: the unrounded armed timer from the scratch when it is the one
/// in force, so carried values follow exact arithmetic (docs/algorithms.md, 'Conventions').
pub(crate) fn timer_in_force_s(c: &Completion<'_>, x: &Exchange) -> f64 {
    match x.scratch {
        Scratch::Timer(s) if Duration::from_secs_f64_round_us(s.timer_s) == c.timer_in_force => {
            s.timer_s
        }
        _ => c.timer_in_force.as_secs_f64(),
    }
}

/// CoCoA-FB1 and CoCoA-FB2 (ANRW 2018).
#[derive(Debug, Clone)]
pub struct CocoaFb {
    core: CocoaCore,
    carry: Carry,
    fb2: bool,
}

impl CocoaFb {
    /// `cocoa-fb1` (or `cocoa-fb2` when `fb2`) from resolved parameters, created at `now`.
    pub fn new(p: &Params, now: Instant, fb2: bool) -> CocoaFb {
        CocoaFb {
            core: CocoaCore::new(CocoaConfig::from_params(p, false), now),
            carry: Carry::from_params(p),
            fb2,
        }
    }
}

impl RtoAlgorithm for CocoaFb {
    fn name(&self) -> &'static str {
        if self.fb2 {
            "cocoa-fb2"
        } else {
            "cocoa-fb1"
        }
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
        // Estimators updated exactly as in plain CoCoA (ANRW 2018).
        self.core.completed(c);
        if c.retransmissions() >= 1 {
            let forced_s = timer_in_force_s(c, x);
            let rto_s = if self.fb2 {
                // D.rto is the post-weak-update value (unchanged if r >= 3).
                forced_s.max(self.core.rto_s)
            } else {
                forced_s
            };
            self.carry.carry(&mut self.core, rto_s, c.ack_time);
        } else {
            self.carry.next = false;
        }
    }

    fn failed(&mut self, now: Instant, x: &mut Exchange) {
        self.carry.failed(&mut self.core, now, x);
    }

    fn reset(&mut self, now: Instant) {
        self.core.reset(now);
        self.carry.next = false;
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
        Snapshot {
            rto: self.core.rto(),
            state: None,
            vars,
        }
    }
}

/// Registry constructor of `cocoa-fb1`.
pub(crate) fn build_fb1(p: &Params, now: Instant) -> Box<dyn RtoAlgorithm> {
    Box::new(CocoaFb::new(p, now, false))
}

/// Registry constructor of `cocoa-fb2`.
pub(crate) fn build_fb2(p: &Params, now: Instant) -> Box<dyn RtoAlgorithm> {
    Box::new(CocoaFb::new(p, now, true))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cocoa::harness::*;
    use crate::cocoa::Cocoa;
    use crate::rng::{ConstantRandom, ScriptedRandom};

    fn fb(fb2: bool, settings: &[&str]) -> CocoaFb {
        CocoaFb::new(&params(GROUPS, settings), Instant::ZERO, fb2)
    }

    /// Three clean 0.1 s exchanges (u = 0): RTO 0.45625, S{srtt 0.1, rttvar 0.028125}.
    /// Returns the time the next exchange may start.
    fn converge(alg: &mut dyn RtoAlgorithm) -> Instant {
        let mut t = Instant::ZERO;
        for _ in 0..3 {
            let o = exchange(
                alg,
                t,
                Admission::ALONE,
                Some(secs(0.1)),
                &mut ConstantRandom(0.0),
            );
            t = o.end + secs(0.5);
        }
        assert_eq!(alg.rto(), us(456_250));
        close(var(alg, "strong_rttvar_s"), 0.028125);
        t
    }

    #[test]
    fn example_1_bufferbloat_fb1_and_fb2_carry_the_backed_off_timer() {
        for fb2 in [false, true] {
            let mut alg = fb(fb2, &[]);
            let t = converge(&mut alg);
            // Exchange 4: RTT 5.0, every retransmission spurious; r = 3, no sample.
            let o = exchange(
                &mut alg,
                t,
                Admission::ALONE,
                Some(secs(5.0)),
                &mut ConstantRandom(0.0),
            );
            assert_eq!(o.timers, [0.45625, 1.36875, 2.7375, 5.475].map(secs));
            let rel: Vec<Duration> = o.tx.iter().map(|&s| s - t).collect();
            assert_eq!(rel, [0.0, 0.45625, 1.825, 4.5625].map(secs));
            assert_eq!(alg.rto(), secs(5.475));
            assert_eq!(var(&alg, "carry_next"), 1.0);
            // Exchange 5: T0 = 5.475 undithered (no draw scripted), clean with R = 5.0.
            let mut rng = ScriptedRandom::new(&[]);
            let o = exchange(
                &mut alg,
                o.end + secs(0.5),
                Admission::ALONE,
                Some(secs(5.0)),
                &mut rng,
            );
            assert_eq!(o.timers, [secs(5.475)]);
            assert_eq!(rng.consumed(), 0);
            close(var(&alg, "strong_rttvar_s"), 1.24609375);
            close(var(&alg, "strong_srtt_s"), 0.7125);
            close(var(&alg, "strong_rto_s"), 5.696875);
            close(var(&alg, "rto_s"), 5.5859375);
            assert_eq!(var(&alg, "carry_next"), 0.0);
        }
    }

    #[test]
    fn example_1_plain_cocoa_repeats_the_spurious_retransmissions() {
        let mut alg = Cocoa::new(&params(crate::cocoa::GROUPS, &[]), Instant::ZERO, false);
        let t = converge(&mut alg);
        let o = exchange(
            &mut alg,
            t,
            Admission::ALONE,
            Some(secs(5.0)),
            &mut ConstantRandom(0.0),
        );
        assert_eq!(o.tx.len(), 4);
        assert_eq!(alg.rto(), us(456_250));
        let o = exchange(
            &mut alg,
            o.end + secs(0.5),
            Admission::ALONE,
            Some(secs(5.0)),
            &mut ConstantRandom(0.0),
        );
        assert_eq!(o.tx.len(), 4);
    }

    /// Example 2's state: W{srtt 8.0, rttvar 2.0} from an earlier episode, RTO 1.2.
    fn example_2_state(core: &mut CocoaCore) {
        core.weak.srtt_s = 8.0;
        core.weak.rttvar_s = 2.0;
        core.weak.init = true;
        core.rto_s = 1.2;
        core.has_sample = true;
    }

    #[test]
    fn example_2_fb1_takes_the_timer_fb2_the_larger_weak_update() {
        // T0 = 1.2 expires, T1 = 2.4, ACK at 1.5 (r = 1): the weak update gives rttvar 3.125,
        // srtt 7.1875, E_w 10.3125 and a post-weak RTO of 3.478125.
        let mut rtos = vec![];
        for fb2 in [false, true] {
            let mut alg = fb(fb2, &[]);
            example_2_state(&mut alg.core);
            let o = exchange(
                &mut alg,
                Instant::ZERO,
                Admission::ALONE,
                Some(secs(1.5)),
                &mut ConstantRandom(0.0),
            );
            assert_eq!(o.timers, [secs(1.2), secs(2.4)]);
            close(var(&alg, "weak_rttvar_s"), 3.125);
            close(var(&alg, "weak_srtt_s"), 7.1875);
            close(var(&alg, "weak_rto_s"), 10.3125);
            rtos.push(alg.core.rto_s);
        }
        // FB1 2.4; FB2 max(2.4, 3.478125).
        close(rtos[0], 2.4);
        close(rtos[1], 3.478125);
        // Plain CoCoA (the shared core's `completed`): 3.478125, not carried.
        let mut core = fb(false, &[]).core;
        example_2_state(&mut core);
        let tx = [Instant::ZERO, at(1.2)];
        let c = Completion {
            ack_time: at(1.5),
            tx_times: &tx,
            answered: None,
            timer_in_force: secs(2.4),
        };
        core.completed(&c);
        close(core.rto_s, 3.478125);
    }

    #[test]
    fn carried_dither_alternative_dithers_the_carried_rto() {
        // docs/algorithms.md, ambiguity #13: after example 1, u = 0.2 gives 5.475·1.1 = 6.0225.
        let mut alg = fb(false, &["carried_dither=dithered"]);
        let t = converge(&mut alg);
        let o = exchange(
            &mut alg,
            t,
            Admission::ALONE,
            Some(secs(5.0)),
            &mut ConstantRandom(0.0),
        );
        let mut rng = ScriptedRandom::new(&[0.2]);
        let t0 = alg.start(o.end, Admission::ALONE, &mut Exchange::new(), &mut rng);
        assert_eq!(t0, secs(6.0225));
    }

    #[test]
    fn clean_exchange_returns_to_dithered_cocoa() {
        let mut alg = fb(true, &[]);
        let t = converge(&mut alg);
        let o = exchange(
            &mut alg,
            t,
            Admission::ALONE,
            Some(secs(5.0)),
            &mut ConstantRandom(0.0),
        );
        let o = exchange(
            &mut alg,
            o.end,
            Admission::ALONE,
            Some(secs(5.0)),
            &mut ScriptedRandom::new(&[]),
        );
        // Now clean: the next first timer is dithered again (one draw).
        let mut rng = ScriptedRandom::new(&[0.0]);
        let t0 = alg.start(o.end, Admission::ALONE, &mut Exchange::new(), &mut rng);
        close(var(&alg, "rto_s"), 5.5859375);
        assert_eq!(t0, alg.rto());
        assert_eq!(rng.consumed(), 1);
    }

    #[test]
    fn give_up_carries_the_last_timer_unless_no_change() {
        // MAX_RETRANSMIT 2: 2, 4, 6 then give-up; the next first timer is 6, undithered.
        let mut alg = fb(false, &["max_retransmit=2"]);
        let o = exchange(
            &mut alg,
            Instant::ZERO,
            Admission::ALONE,
            None,
            &mut ConstantRandom(0.0),
        );
        assert_eq!(o.timers, [2.0, 4.0, 6.0].map(secs));
        assert!(!o.acked);
        assert_eq!(alg.rto(), secs(6.0));
        let t0 = alg.start(
            o.end,
            Admission::ALONE,
            &mut Exchange::new(),
            &mut ScriptedRandom::new(&[]),
        );
        assert_eq!(t0, secs(6.0));
        // Clamped at RTO_MAX.
        let mut alg = fb(false, &["max_retransmit=20", "rto_max_s=10"]);
        exchange(
            &mut alg,
            Instant::ZERO,
            Admission::ALONE,
            None,
            &mut ConstantRandom(0.0),
        );
        assert_eq!(alg.rto(), secs(10.0));
        // docs/algorithms.md, ambiguity #4 `no_change`.
        let mut alg = fb(false, &["max_retransmit=2", "on_give_up=no_change"]);
        let before = alg.snapshot();
        exchange(
            &mut alg,
            Instant::ZERO,
            Admission::ALONE,
            None,
            &mut ConstantRandom(0.0),
        );
        assert_eq!(alg.snapshot(), before);
    }

    #[test]
    fn carried_rto_ages_like_any_rto() {
        // Carried 5.475 s, idle 30 s > 4·5.475: 1 + 5.475/2 = 3.7375, used undithered.
        let mut alg = fb(false, &[]);
        let t = converge(&mut alg);
        let o = exchange(
            &mut alg,
            t,
            Admission::ALONE,
            Some(secs(5.0)),
            &mut ConstantRandom(0.0),
        );
        let t0 = alg.start(
            o.end + secs(30.0),
            Admission::ALONE,
            &mut Exchange::new(),
            &mut ScriptedRandom::new(&[]),
        );
        assert_eq!(t0, secs(3.7375));
    }

    #[test]
    fn reset_clears_the_carry() {
        let mut alg = fb(false, &["max_retransmit=1"]);
        exchange(
            &mut alg,
            Instant::ZERO,
            Admission::ALONE,
            None,
            &mut ConstantRandom(0.0),
        );
        assert_eq!(alg.rto(), secs(4.0));
        alg.reset(at(10.0));
        assert_eq!(alg.rto(), secs(2.0));
        assert_eq!(var(&alg, "carry_next"), 0.0);
        let t0 = alg.start(
            at(10.0),
            Admission::ALONE,
            &mut Exchange::new(),
            &mut ConstantRandom(0.5),
        );
        assert_eq!(t0, secs(2.5));
        assert_eq!(alg.name(), "cocoa-fb1");
        assert_eq!(fb(true, &[]).name(), "cocoa-fb2");
    }
}
