//! GST-CoAP (Rathod 2022, Geometric Sequence Technique): FB2 with a
//! geometric decrease. The n-th consecutive clean exchange multiplies the carried timer by
//! GST_RATIO^n, so a large carried timer collapses to the ACK_TIMEOUT floor after a few clean
//! exchanges (3 from 128 s, where FB2 needs 6).
//!
//! Reference arithmetic: with GST_RATIO = 1/2 the decrease is `v_us >> count` on integer
//! microseconds, as the shift-based embedded implementation computes it.

use crate::algorithm::{Admission, Completion, Exchange, Expiry, RtoAlgorithm, Snapshot};
use crate::default_fb::CarryConfig;
use crate::params::{Kind, ParamSpec, Params, Value};
use crate::rng::Random;
use crate::time::{Duration, Instant};

/// GST's own parameters.
pub const PARAMS: &[ParamSpec] = &[
    ParamSpec {
        key: "gst_ratio",
        kind: Kind::Float {
            min: 0.000_001,
            max: 1.0,
        },
        default: Value::Float(0.5),
        help: "GST_RATIO: the n-th consecutive clean exchange multiplies the carried timer by \
               ratio^n (1/2 uses integer-us right shifts)",
        source: "Rathod 2022 ch. 3 (GST-CoAP)",
    },
    ParamSpec {
        key: "gst_count_max",
        kind: Kind::Int { min: 1, max: 62 },
        default: Value::Int(62),
        help: "GST_COUNT_MAX: ceiling on the clean-exchange count (shift-width guard)",
        source: "Rathod 2022 ch. 3",
    },
    ParamSpec {
        key: "count_reset",
        kind: Kind::Choice(&["on-retransmit", "never"]),
        default: Value::Choice("on-retransmit"),
        help: "the clean-exchange count: on-retransmit = back to 0 after a retransmitted or \
               failed exchange; never = literal Algorithm 1",
        source: "Rathod 2022 ch. 3; docs/algorithms.md, ambiguity #3",
    },
];

/// GST per-destination state.
#[derive(Debug, Clone)]
pub struct Gst {
    cfg: CarryConfig,
    /// GST_RATIO.
    ratio: f64,
    /// GST_COUNT_MAX.
    count_max: u32,
    /// `count_reset = on-retransmit`.
    reset_count: bool,
    /// `D.carried`: the timer the next exchange starts with (None = fresh draw).
    carried: Option<Duration>,
    /// `D.count`: consecutive clean exchanges.
    count: u32,
}

impl Gst {
    /// Builds from resolved parameters.
    pub fn new(p: &Params) -> Self {
        Gst {
            cfg: CarryConfig::from_params(p, true),
            ratio: p.float("gst_ratio"),
            count_max: p.int("gst_count_max") as u32,
            reset_count: p.choice("count_reset") == "on-retransmit",
            carried: None,
            count: 0,
        }
    }

    /// Registry constructor.
    pub(crate) fn build(p: &Params, _now: Instant) -> Box<dyn RtoAlgorithm> {
        Box::new(Gst::new(p))
    }

    /// `v * GST_RATIO^count` in seconds.
    fn decrease_secs(&self, v: Duration) -> f64 {
        if self.ratio == 0.5 {
            // The reference: an integer right shift on microseconds (count <= 62).
            (v.as_micros() >> self.count) as f64 / 1e6
        } else {
            v.as_secs_f64() * self.ratio.powi(self.count as i32)
        }
    }
}

impl RtoAlgorithm for Gst {
    fn name(&self) -> &'static str {
        "gst"
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
            self.carried = Some(c.timer_in_force);
            // RESOLVED (docs/algorithms.md, ambiguity #3): a retransmitted exchange restarts the
            // geometric sequence.
            if self.reset_count {
                self.count = 0;
            }
            return;
        }
        self.count = (self.count + 1).min(self.count_max);
        if let Some(v) = self.carried {
            self.carried = self.cfg.keep_decreased(self.decrease_secs(v));
        }
    }

    fn failed(&mut self, _now: Instant, x: &mut Exchange) {
        if self.cfg.carry_on_giveup {
            self.carried = Some(x.timer);
            if self.reset_count {
                self.count = 0;
            }
        }
    }

    fn reset(&mut self, _now: Instant) {
        self.carried = None;
        self.count = 0;
    }

    fn rto(&self) -> Duration {
        self.cfg.rto(self.carried)
    }

    fn max_retransmit(&self) -> u32 {
        self.cfg.base.max_retransmit
    }

    fn snapshot(&self) -> Snapshot {
        let mut vars = vec![("count", self.count as f64)];
        if let Some(c) = self.carried {
            vars.push(("carried_s", c.as_secs_f64()));
        }
        Snapshot {
            rto: self.rto(),
            state: None,
            vars,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::params::Settings;
    use crate::registry;
    use crate::rng::ScriptedRandom;
    use crate::testutil::{run_exchange, secs};

    fn build(settings: &[&str]) -> Gst {
        let (_, p) =
            registry::resolve("gst", &Settings::parse(settings.iter().copied()).unwrap()).unwrap();
        Gst::new(&p)
    }

    /// Carries `v` seconds (ACK_TIMEOUT 2, u = 0, doubling up to `v` within TIMER_MAX).
    fn carry(a: &mut Gst, timers: &[f64], ack_after: f64) {
        let mut rng = ScriptedRandom::new(&[0.0]);
        let o = run_exchange(a, Instant::ZERO, Some(secs(ack_after)), None, &mut rng);
        assert_eq!(
            o.timers,
            timers.iter().map(|t| secs(*t)).collect::<Vec<_>>()
        );
    }

    /// One clean exchange starting from the carried timer (no draw); returns (T0, count,
    /// carried after).
    fn clean(a: &mut Gst, at: i64) -> (f64, u32, Option<f64>) {
        let mut rng = ScriptedRandom::new(&[]);
        let o = run_exchange(a, Instant::from_secs(at), Some(secs(0.1)), None, &mut rng);
        (
            o.timers[0].as_secs_f64(),
            a.count,
            a.carried.map(|c| c.as_secs_f64()),
        )
    }

    const TO_128: &[f64] = &[2.0, 4.0, 8.0, 16.0, 32.0, 64.0, 128.0];

    #[test]
    fn rathod_contiki_preset_leaves_the_carried_series_uncapped() {
        // Issue 31, item 2, finding 2: as FB1 (default_fb.rs,
        // `rathod_presets_leave_the_carried_series_uncapped`), GST's TIMER_MAX is infinite unless
        // set (docs/algorithms.md §1, §3): a give-up carries 67.5 s, and the next exchange backs
        // off 67.5, 135, 270 s; three clean exchanges then shrink the 1080 s it carried by 1/2,
        // 1/4, 1/8: 540, 135, 16.875 s.
        let mut a = build(&["preset=rathod-contiki"]);
        let mut rng = ScriptedRandom::new(&[0.8125]);
        run_exchange(&mut a, Instant::ZERO, None, None, &mut rng);
        assert_eq!(a.carried, Some(secs(67.5)));
        let o = run_exchange(&mut a, Instant::from_secs(200), None, None, &mut rng);
        assert_eq!(o.timers, [67.5, 135.0, 270.0, 540.0, 1080.0].map(secs));
        assert_eq!(a.carried, Some(secs(1080.0)));
        assert_eq!(clean(&mut a, 2000), (1080.0, 1, Some(540.0)));
        assert_eq!(clean(&mut a, 2100), (540.0, 2, Some(135.0)));
        assert_eq!(clean(&mut a, 2200), (135.0, 3, Some(16.875)));
    }

    #[test]
    fn from_128_s_reaches_the_floor_after_3_clean_exchanges() {
        // Rathod 2022 ch. 3 table: 64, 16, 2 (not < 2, kept), 2/16 = 0.125 < 2 -> fresh draw.
        let mut a = build(&["max_retransmit=10"]);
        carry(&mut a, TO_128, 200.0);
        assert_eq!((a.carried, a.count), (Some(secs(128.0)), 0));
        assert_eq!(clean(&mut a, 1000), (128.0, 1, Some(64.0)));
        assert_eq!(clean(&mut a, 2000), (64.0, 2, Some(16.0)));
        assert_eq!(clean(&mut a, 3000), (16.0, 3, Some(2.0)));
        assert_eq!(clean(&mut a, 4000), (2.0, 4, None));
    }

    #[test]
    fn from_the_60_s_preset_cap() {
        // Rathod 2022 ch. 3: 60 -> 30 -> 7.5 -> 0.9375 (< 2, fresh draw).
        let mut a = build(&["preset=fasor18"]);
        carry(&mut a, &[2.0, 4.0, 8.0, 16.0, 32.0, 60.0], 70.0);
        assert_eq!(clean(&mut a, 1000), (60.0, 1, Some(30.0)));
        assert_eq!(clean(&mut a, 2000), (30.0, 2, Some(7.5)));
        // The third clean exchange computes 7.5 s >> 3 = 0.9375 s, below 2 s.
        let mut probe = a.clone();
        probe.count = 3;
        assert_eq!(probe.decrease_secs(secs(7.5)), 0.9375);
        assert_eq!(clean(&mut a, 3000), (7.5, 3, None));
    }

    #[test]
    fn worked_example_gst_column() {
        // ANRW 2018 table, GST column.
        let mut a = build(&["timer_max_s=60"]);
        let mut rng = ScriptedRandom::new(&[0.2, 0.5, 0.5]);
        let mut t0s = vec![];
        let mut states = vec![];
        for (i, rtt) in [6.0, 6.0, 1.0, 1.0, 1.0, 1.0].iter().enumerate() {
            let start = Instant::from_secs(100 * i as i64);
            let o = run_exchange(&mut a, start, Some(secs(*rtt)), None, &mut rng);
            t0s.push(o.timers.iter().map(|t| t.as_secs_f64()).collect::<Vec<_>>());
            states.push((a.count, a.carried.map(|c| c.as_secs_f64())));
        }
        assert_eq!(
            t0s,
            [
                vec![2.2, 4.4],
                vec![4.4, 8.8],
                vec![8.8],
                vec![4.4],
                vec![2.5],
                vec![2.5]
            ]
        );
        assert_eq!(
            states,
            [
                (0, Some(4.4)),
                (0, Some(8.8)),
                (1, Some(4.4)),
                (2, None), // 4.4 / 4 = 1.1 < 2
                (3, None),
                (4, None)
            ]
        );
        assert_eq!(rng.consumed(), 3);
    }

    #[test]
    fn reset_below_le_drops_the_2_s_value() {
        let mut a = build(&["max_retransmit=10", "reset_below=le"]);
        carry(&mut a, TO_128, 200.0);
        clean(&mut a, 1000);
        clean(&mut a, 2000);
        assert_eq!(clean(&mut a, 3000), (16.0, 3, None));
    }

    #[test]
    fn count_reset_never_keeps_the_count_across_a_retransmitted_exchange() {
        for (mode, count, carried) in [("on-retransmit", 1, 64.0), ("never", 2, 32.0)] {
            let mut a = build(&["max_retransmit=10", &format!("count_reset={mode}")]);
            carry(&mut a, TO_128, 200.0);
            assert_eq!(clean(&mut a, 1000), (128.0, 1, Some(64.0)));
            // Starts at 64, expires, ACK during the 128 s timer: carried 128 again.
            let mut rng = ScriptedRandom::new(&[]);
            run_exchange(
                &mut a,
                Instant::from_secs(2000),
                Some(secs(70.0)),
                None,
                &mut rng,
            );
            assert_eq!(a.carried, Some(secs(128.0)));
            assert_eq!(clean(&mut a, 3000), (128.0, count, Some(carried)), "{mode}");
        }
    }

    #[test]
    fn count_is_capped_by_gst_count_max() {
        let mut a = build(&["max_retransmit=10", "gst_count_max=2"]);
        carry(&mut a, TO_128, 200.0);
        assert_eq!(clean(&mut a, 1000), (128.0, 1, Some(64.0)));
        assert_eq!(clean(&mut a, 2000), (64.0, 2, Some(16.0)));
        assert_eq!(clean(&mut a, 3000), (16.0, 2, Some(4.0)));
        assert_eq!(clean(&mut a, 4000), (4.0, 2, None));
    }

    #[test]
    fn a_ratio_other_than_half_uses_real_arithmetic() {
        let mut a = build(&["max_retransmit=10", "gst_ratio=0.75"]);
        carry(&mut a, TO_128, 200.0);
        assert_eq!(clean(&mut a, 1000), (128.0, 1, Some(96.0)));
        assert_eq!(clean(&mut a, 2000), (96.0, 2, Some(54.0)));
    }

    #[test]
    fn give_up_carries_the_last_timer_and_resets_the_count() {
        let mut a = build(&["max_retransmit=10"]);
        carry(&mut a, TO_128, 200.0);
        clean(&mut a, 1000);
        let mut a4 = a.clone();
        a4.cfg.base.max_retransmit = 1;
        let mut rng = ScriptedRandom::new(&[]);
        let o = run_exchange(&mut a4, Instant::from_secs(2000), None, None, &mut rng);
        assert_eq!(o.timers, [secs(64.0), secs(128.0)]);
        assert_eq!((a4.carried, a4.count), (Some(secs(128.0)), 0));
        assert_eq!(a4.snapshot().vars, [("count", 0.0), ("carried_s", 128.0)]);
        a4.reset(Instant::from_secs(3000));
        assert_eq!((a4.carried, a4.count, a4.rto()), (None, 0, secs(2.0)));
    }

    #[test]
    fn give_up_with_no_change_leaves_the_state() {
        let mut a = build(&["max_retransmit=0", "on_give_up=no_change"]);
        let mut rng = ScriptedRandom::new(&[0.5]);
        let o = run_exchange(&mut a, Instant::ZERO, None, None, &mut rng);
        assert_eq!(o.gave_up, Some(Instant::ZERO + secs(2.5)));
        assert_eq!((a.carried, a.count), (None, 0));
    }
}
