//! Default CoAP with Full Backoff, FB1 and FB2 (ANRW 2018 "Is CoAP Congestion Safe?";
//! ANRW 2018): Karn's rule applied to CoAP, so a backed-off timer survives into the
//! next exchange instead of being replaced by a fresh 2–3 s draw.
//!
//! FB1 forgets the carried timer after one clean exchange; FB2 halves it per clean exchange
//! (`fb2_decrease`) until it falls below ACK_TIMEOUT. The carry rules shared with GST (Rathod 2022
//! ch. 3) are in `CarryConfig`.

use crate::algorithm::{Admission, Completion, Exchange, Expiry, RtoAlgorithm, Snapshot};
use crate::common;
use crate::default::DefaultConfig;
use crate::params::{Kind, ParamSpec, Params, Value};
use crate::rng::Random;
use crate::time::{Duration, Instant};

/// Carry options shared by FB1, FB2 and GST.
pub const CARRY_PARAMS: &[ParamSpec] = &[
    ParamSpec {
        key: "carried_dither",
        kind: Kind::Choice(&["none", "additive"]),
        default: Value::Choice("none"),
        help: "first timer from a carried value: none = used exactly; additive = carried + \
               ACK_TIMEOUT*(ack_random_factor-1)*u, as the Contiki port does",
        source: "ANRW 2018 CARRIED_DITHER; docs/algorithms.md, ambiguity #1",
    },
    ParamSpec {
        key: "on_give_up",
        kind: Kind::Choice(&["carry", "no_change"]),
        default: Value::Choice("carry"),
        help: "after a give-up or cancel: carry = keep the last backed-off timer as carried \
               (Karn-style); no_change = leave the state alone",
        source: "ANRW 2018 failed; docs/algorithms.md, ambiguity #4",
    },
];

/// The reset comparison shared by FB2 and GST.
pub const RESET_PARAMS: &[ParamSpec] = &[ParamSpec {
    key: "reset_below",
    kind: Kind::Choice(&["lt", "le"]),
    default: Value::Choice("lt"),
    help: "a decreased carried timer is dropped for a fresh draw when it is < (lt) or <= (le) \
           ACK_TIMEOUT",
    source: "ANRW 2018; Rathod 2022 ch. 3; docs/algorithms.md, ambiguity #2",
}];

/// FB2's decrease factor.
pub const FB2_PARAMS: &[ParamSpec] = &[ParamSpec {
    key: "fb2_decrease",
    kind: Kind::Float {
        min: 0.000_001,
        max: 1.0,
    },
    default: Value::Float(0.5),
    help: "FB2_DECREASE: a clean exchange multiplies the carried timer by this factor",
    source: "RFC 7252 §4.2; ANRW 2018",
}];

/// The carry rules of ANRW 2018, on top of the Default-CoAP draw and backoff.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct CarryConfig {
    /// First timer and backoff (RFC 7252 §4.2).
    pub(crate) base: DefaultConfig,
    /// CARRIED_DITHER = additive (docs/algorithms.md, ambiguity #1).
    pub(crate) additive_dither: bool,
    /// `on_give_up = carry` (docs/algorithms.md, ambiguity #4).
    pub(crate) carry_on_giveup: bool,
    /// `reset_below = le` (docs/algorithms.md, ambiguity #2); FB1 ignores it.
    pub(crate) reset_inclusive: bool,
}

impl CarryConfig {
    /// Reads Default CoAP's parameters, [`CARRY_PARAMS`] and, when declared, [`RESET_PARAMS`].
    pub(crate) fn from_params(p: &Params, has_reset: bool) -> Self {
        CarryConfig {
            base: DefaultConfig::from_params(p),
            additive_dither: p.choice("carried_dither") == "additive",
            carry_on_giveup: p.choice("on_give_up") == "carry",
            reset_inclusive: has_reset && p.choice("reset_below") == "le",
        }
    }

    /// The first timer: the carried value when there is one (undithered unless additive),
    /// else a fresh Default-CoAP draw. TIMER_MAX caps it either way.
    pub(crate) fn start(
        &self,
        carried: Option<Duration>,
        x: &mut Exchange,
        rng: &mut dyn Random,
    ) -> Duration {
        let secs = match carried {
            // ANRW 2018: NO dithering and NO draw, unless CARRIED_DITHER = additive.
            Some(c) if self.additive_dither => c.as_secs_f64() + self.base.dither_extra_secs(rng),
            Some(c) => c.as_secs_f64(),
            None => self.base.fresh_secs(rng),
        };
        common::arm_first(x, self.base.first_timer(secs))
    }

    /// A decreased carried value `v_s` (seconds, before rounding): kept, or dropped for a
    /// fresh draw when it falls below ACK_TIMEOUT ("below" strict unless `reset_below = le`).
    pub(crate) fn keep_decreased(&self, v_s: f64) -> Option<Duration> {
        let a = self.base.ack_timeout_s;
        let drop = if self.reset_inclusive {
            v_s <= a
        } else {
            v_s < a
        };
        (!drop).then(|| Duration::from_secs_f64_round_us(v_s))
    }

    /// The carried value after a give-up or cancel of exchange `x` (ANRW 2018 failed,
    /// docs/algorithms.md, ambiguity #4).
    pub(crate) fn after_failure(
        &self,
        carried: Option<Duration>,
        x: &Exchange,
    ) -> Option<Duration> {
        if self.carry_on_giveup {
            Some(x.timer)
        } else {
            carried
        }
    }

    /// The base RTO to report: the carried timer, or ACK_TIMEOUT.
    pub(crate) fn rto(&self, carried: Option<Duration>) -> Duration {
        carried.unwrap_or_else(|| self.base.ack_timeout())
    }
}

/// Which Full-Backoff rule a clean exchange applies.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Clean {
    /// FB1: forget the carried timer.
    Forget,
    /// FB2: multiply it by FB2_DECREASE.
    Decrease(f64),
}

/// FB1 / FB2 per-destination state.
#[derive(Debug, Clone)]
pub struct DefaultFb {
    name: &'static str,
    cfg: CarryConfig,
    clean: Clean,
    /// `D.carried`: the backed-off timer the next exchange starts with (None = fresh draw).
    carried: Option<Duration>,
}

impl DefaultFb {
    /// FB1 from resolved parameters.
    pub fn fb1(p: &Params) -> Self {
        DefaultFb {
            name: "default-fb1",
            cfg: CarryConfig::from_params(p, false),
            clean: Clean::Forget,
            carried: None,
        }
    }

    /// FB2 from resolved parameters.
    pub fn fb2(p: &Params) -> Self {
        DefaultFb {
            name: "default-fb2",
            cfg: CarryConfig::from_params(p, true),
            clean: Clean::Decrease(p.float("fb2_decrease")),
            carried: None,
        }
    }

    /// Registry constructor of `default-fb1`.
    pub(crate) fn build_fb1(p: &Params, _now: Instant) -> Box<dyn RtoAlgorithm> {
        Box::new(DefaultFb::fb1(p))
    }

    /// Registry constructor of `default-fb2`.
    pub(crate) fn build_fb2(p: &Params, _now: Instant) -> Box<dyn RtoAlgorithm> {
        Box::new(DefaultFb::fb2(p))
    }
}

impl RtoAlgorithm for DefaultFb {
    fn name(&self) -> &'static str {
        self.name
    }

    fn start(
        &mut self,
        _now: Instant,
        _admission: Admission,
        x: &mut Exchange,
        rng: &mut dyn Random,
    ) -> Duration {
        self.cfg.start(self.carried, x, rng)
    }

    fn expired(&mut self, _now: Instant, x: &mut Exchange, _rng: &mut dyn Random) -> Expiry {
        self.cfg.base.expire(x)
    }

    fn completed(&mut self, c: &Completion<'_>, _x: &mut Exchange, _rng: &mut dyn Random) {
        if c.transmissions() > 1 {
            // Karn: the backed-off timer running when the ACK arrived (T_r, not doubled again).
            self.carried = Some(c.timer_in_force);
            return;
        }
        self.carried = match (self.clean, self.carried) {
            (Clean::Forget, _) | (_, None) => None,
            (Clean::Decrease(f), Some(v)) => self.cfg.keep_decreased(v.as_secs_f64() * f),
        };
    }

    fn failed(&mut self, _now: Instant, x: &mut Exchange) {
        self.carried = self.cfg.after_failure(self.carried, x);
    }

    fn reset(&mut self, _now: Instant) {
        self.carried = None;
    }

    fn rto(&self) -> Duration {
        self.cfg.rto(self.carried)
    }

    fn max_retransmit(&self) -> u32 {
        self.cfg.base.max_retransmit
    }

    fn snapshot(&self) -> Snapshot {
        Snapshot {
            rto: self.rto(),
            state: None,
            vars: self
                .carried
                .map(|c| ("carried_s", c.as_secs_f64()))
                .into_iter()
                .collect(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::ScriptedRandom;
    use crate::testutil::{build, run_exchange, secs, Outcome};

    /// Runs the exchanges of ANRW 2018's table (RTT 6, 6, 1, 1, 1, 1 s), one every 100 s.
    fn table(a: &mut dyn RtoAlgorithm, rng: &mut ScriptedRandom) -> Vec<(Vec<f64>, f64)> {
        [6.0, 6.0, 1.0, 1.0, 1.0, 1.0]
            .iter()
            .enumerate()
            .map(|(i, rtt)| {
                let start = Instant::from_secs(100 * i as i64);
                let o: Outcome = run_exchange(a, start, Some(secs(*rtt)), None, rng);
                let timers = o.timers.iter().map(|t| t.as_secs_f64()).collect();
                (timers, a.rto().as_secs_f64())
            })
            .collect()
    }

    #[test]
    fn worked_example_default_column() {
        let mut a = build("default", &["timer_max_s=60"]);
        let mut rng = ScriptedRandom::new(&[0.2, 0.6, 0.5, 0.5, 0.5, 0.5]);
        let t = table(a.as_mut(), &mut rng);
        assert_eq!(t[0].0, [2.2, 4.4]);
        assert_eq!(t[1].0, [2.6, 5.2]);
        for row in &t[2..] {
            assert_eq!(row.0, [2.5]); // fresh, clean
        }
        assert_eq!(rng.consumed(), 6);
    }

    #[test]
    fn worked_example_fb1_column() {
        let mut a = build("default-fb1", &["timer_max_s=60"]);
        // Draws only for exchanges 1, 4, 5, 6; 2 and 3 start from the carried timer.
        let mut rng = ScriptedRandom::new(&[0.2, 0.5, 0.5, 0.5]);
        let t = table(a.as_mut(), &mut rng);
        let timers: Vec<_> = t.iter().map(|r| r.0.clone()).collect();
        assert_eq!(
            timers,
            [
                vec![2.2, 4.4],
                vec![4.4, 8.8],
                vec![8.8],
                vec![2.5],
                vec![2.5],
                vec![2.5]
            ]
        );
        // rto() reports the carried timer: 4.4, 8.8, then None (ACK_TIMEOUT).
        let carried: Vec<_> = t.iter().map(|r| r.1).collect();
        assert_eq!(carried, [4.4, 8.8, 2.0, 2.0, 2.0, 2.0]);
        assert_eq!(rng.consumed(), 4);
    }

    #[test]
    fn worked_example_fb2_column() {
        let mut a = build("default-fb2", &["timer_max_s=60"]);
        // Draws only for exchanges 1 and 6.
        let mut rng = ScriptedRandom::new(&[0.2, 0.5]);
        let t = table(a.as_mut(), &mut rng);
        let timers: Vec<_> = t.iter().map(|r| r.0.clone()).collect();
        assert_eq!(
            timers,
            [
                vec![2.2, 4.4],
                vec![4.4, 8.8],
                vec![8.8],
                vec![4.4],
                vec![2.2],
                vec![2.5]
            ]
        );
        // Carried after each: 4.4, 8.8, 4.4, 2.2, 1.1 < 2 -> None, None.
        let carried: Vec<_> = t.iter().map(|r| r.1).collect();
        assert_eq!(carried, [4.4, 8.8, 4.4, 2.2, 2.0, 2.0]);
        assert_eq!(rng.consumed(), 2);
    }

    /// Carries `v` seconds into `a` (ACK_TIMEOUT 2, u = 0, no cap): an exchange whose timers
    /// double from 2 s up to `v` and whose ACK arrives just before `v` expires.
    fn carry(a: &mut dyn RtoAlgorithm, v: f64) {
        let mut rng = ScriptedRandom::new(&[0.0]);
        let sent_last = v - 2.0; // 2 + 4 + ... + v/2
        let o = run_exchange(
            a,
            Instant::ZERO,
            Some(secs(sent_last + 0.5)),
            None,
            &mut rng,
        );
        assert_eq!(o.timers.last(), Some(&secs(v)));
        assert_eq!(a.rto(), secs(v));
    }

    #[test]
    fn fb2_from_128_s_halves_to_the_2_s_floor_then_draws_fresh() {
        // Rathod 2022 ch. 3 table, FB2 column: 64, 32, 16, 8, 4, 2, then 1 < 2 -> fresh draw.
        let mut a = build("default-fb2", &["max_retransmit=10"]);
        carry(a.as_mut(), 128.0);
        let mut series = vec![];
        for i in 1..=7 {
            let mut rng = ScriptedRandom::new(&[]);
            run_exchange(
                a.as_mut(),
                Instant::from_secs(1000 * i),
                Some(secs(0.1)),
                None,
                &mut rng,
            );
            series.push(a.rto().as_secs_f64());
        }
        assert_eq!(series, [64.0, 32.0, 16.0, 8.0, 4.0, 2.0, 2.0]);
        assert_eq!(a.snapshot().vars, []); // None after the 7th
    }

    #[test]
    fn reset_below_le_drops_a_timer_equal_to_ack_timeout() {
        for (mode, after_two) in [("lt", Some(2.0)), ("le", None)] {
            let mut a = build("default-fb2", &[&format!("reset_below={mode}")]);
            carry(a.as_mut(), 4.0);
            let mut rng = ScriptedRandom::new(&[]);
            run_exchange(
                a.as_mut(),
                Instant::from_secs(100),
                Some(secs(0.1)),
                None,
                &mut rng,
            );
            let carried = a.snapshot().vars.first().map(|v| v.1);
            assert_eq!(carried, after_two, "reset_below={mode}");
        }
    }

    #[test]
    fn additive_carried_dither_adds_the_random_part() {
        let mut a = build("default-fb1", &["carried_dither=additive"]);
        carry(a.as_mut(), 4.0);
        // 4 + 2*(1.5-1)*0.3 = 4.3 s.
        let mut rng = ScriptedRandom::new(&[0.3]);
        let o = run_exchange(
            a.as_mut(),
            Instant::from_secs(100),
            Some(secs(1.0)),
            None,
            &mut rng,
        );
        assert_eq!(o.timers, [secs(4.3)]);
    }

    #[test]
    fn give_up_carries_the_last_timer_unless_no_change() {
        for (mode, rto_after) in [("carry", 4.4), ("no_change", 2.0)] {
            let mut a = build(
                "default-fb1",
                &["max_retransmit=1", &format!("on_give_up={mode}")],
            );
            let mut rng = ScriptedRandom::new(&[0.2]);
            let o = run_exchange(a.as_mut(), Instant::ZERO, None, None, &mut rng);
            assert_eq!(o.timers, [secs(2.2), secs(4.4)]);
            assert_eq!(o.gave_up, Some(Instant::ZERO + secs(6.6)));
            assert_eq!(a.rto(), secs(rto_after), "on_give_up={mode}");
        }
    }

    #[test]
    fn timer_max_caps_the_carried_series() {
        let mut a = build("default-fb2", &["preset=fasor18"]);
        let mut rng = ScriptedRandom::new(&[0.0]);
        // 2, 4, 8, 16, 32, 60, 60: ACK at 130 s, during the second 60 s timer.
        let o = run_exchange(a.as_mut(), Instant::ZERO, Some(secs(130.0)), None, &mut rng);
        assert_eq!(o.timers, [2.0, 4.0, 8.0, 16.0, 32.0, 60.0, 60.0].map(secs));
        assert_eq!(a.rto(), secs(60.0));
        let o = run_exchange(
            a.as_mut(),
            Instant::from_secs(200),
            Some(secs(1.0)),
            None,
            &mut rng,
        );
        assert_eq!(o.timers, [secs(60.0)]);
        assert_eq!(a.rto(), secs(30.0));
    }

    #[test]
    fn rathod_presets_leave_the_carried_series_uncapped() {
        // Issue 31, item 2, finding 2: "67 -> 135 -> 270 s" on the half-dumbbell is the spec.
        // TIMER_MAX is infinite for Default CoAP and FB1/FB2/GST (docs/algorithms.md §1: "TIMER_MAX
        // ∞ (presets: 60 s)", and only `fasor18` sets it; §3 works GST from a carried 128 s), and
        // `rathod-contiki` sets ACK_TIMEOUT and MAX_RETRANSMIT only. So a give-up carries T4 =
        // 16·T0 and the next exchange doubles it again, without a ceiling.
        let mut a = build("default-fb1", &["preset=rathod-contiki"]);
        // u = 0.8125: T0 = 3·(1 + 0.5·0.8125) = 4.21875 s.
        let mut rng = ScriptedRandom::new(&[0.8125]);
        let o = run_exchange(a.as_mut(), Instant::ZERO, None, None, &mut rng);
        assert_eq!(o.timers, [4.21875, 8.4375, 16.875, 33.75, 67.5].map(secs));
        assert_eq!(a.rto(), secs(67.5)); // failed: the last timer is carried
        let start = Instant::from_secs(200);
        let o = run_exchange(a.as_mut(), start, None, None, &mut rng);
        assert_eq!(o.timers, [67.5, 135.0, 270.0, 540.0, 1080.0].map(secs));
        assert_eq!(a.rto(), secs(1080.0));
        // Answered 206 s after the original: the 270-s timer was in force, and is carried.
        let start = Instant::from_secs(3000);
        let o = run_exchange(a.as_mut(), start, Some(secs(206.0)), None, &mut rng);
        assert_eq!(o.timers, [1080.0].map(secs));
        assert_eq!(rng.consumed(), 1);
        // A scenario that wants a ceiling sets it: `timer_max_s=60` (the fasor18 value).
        let mut a = build("default-fb1", &["preset=rathod-contiki", "timer_max_s=60"]);
        let mut rng = ScriptedRandom::new(&[0.8125]);
        run_exchange(a.as_mut(), Instant::ZERO, None, None, &mut rng);
        assert_eq!(a.rto(), secs(60.0));
        let o = run_exchange(a.as_mut(), Instant::from_secs(200), None, None, &mut rng);
        assert_eq!(o.timers, [60.0; 5].map(secs));
    }

    #[test]
    fn reset_forgets_the_carried_timer() {
        let mut a = build("default-fb2", &[]);
        carry(a.as_mut(), 8.0);
        a.reset(Instant::from_secs(50));
        assert_eq!(a.rto(), secs(2.0));
        let mut rng = ScriptedRandom::new(&[0.5]);
        let o = run_exchange(
            a.as_mut(),
            Instant::from_secs(60),
            Some(secs(1.0)),
            None,
            &mut rng,
        );
        assert_eq!(o.timers, [secs(2.5)]);
    }

    #[test]
    fn with_nstart_above_1_the_latest_completion_writes_the_carried_timer() {
        // ANRW 2018 notes: `carried` is destination state; every start reads it.
        let mut a = build("default-fb2", &[]);
        carry(a.as_mut(), 4.0);
        let mut rng = ScriptedRandom::new(&[]);
        let two = Admission {
            in_flight: 2,
            dequeued: false,
        };
        let (mut xa, mut xb) = (Exchange::new(), Exchange::new());
        let t0 = Instant::from_secs(100);
        assert_eq!(a.start(t0, Admission::ALONE, &mut xa, &mut rng), secs(4.0));
        assert_eq!(a.start(t0, two, &mut xb, &mut rng), secs(4.0));
        // B expires and is answered during its 8 s timer; A is answered cleanly afterwards.
        let t1 = t0 + secs(4.0);
        assert_eq!(
            a.expired(t1, &mut xb, &mut rng),
            Expiry::Retransmit(secs(8.0))
        );
        let b_tx = [t0, t1];
        let c = Completion {
            ack_time: t1 + secs(1.0),
            tx_times: &b_tx,
            answered: None,
            timer_in_force: xb.timer,
        };
        a.completed(&c, &mut xb, &mut rng);
        assert_eq!(a.rto(), secs(8.0));
        let a_tx = [t0];
        let c = Completion {
            ack_time: t1 + secs(2.0),
            tx_times: &a_tx,
            answered: None,
            timer_in_force: xa.timer,
        };
        a.completed(&c, &mut xa, &mut rng);
        assert_eq!(a.rto(), secs(4.0)); // 8 s halved by the later, clean completion
    }

    #[test]
    fn give_up_after_max_retransmit() {
        let mut a = build("default-fb1", &[]);
        let mut rng = ScriptedRandom::new(&[0.0]);
        let o = run_exchange(a.as_mut(), Instant::ZERO, None, None, &mut rng);
        assert_eq!(o.timers, [2.0, 4.0, 8.0, 16.0, 32.0].map(secs));
        assert_eq!(o.gave_up, Some(Instant::ZERO + secs(62.0)));
        assert_eq!(a.rto(), secs(32.0));
    }
}
