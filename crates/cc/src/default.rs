//! Default CoAP (RFC 7252 §4.2): a fresh dithered first timer for every
//! exchange, binary exponential backoff, no per-destination state.
//!
//! The first-timer draw and the backoff live in `DefaultConfig`, which the Full-Backoff
//! variants (`default_fb`, ANRW 2018) and GST (`gst`, Rathod 2022 ch. 3) reuse: they differ only in
//! what they carry from one exchange to the next.

use crate::algorithm::{Admission, Completion, Exchange, Expiry, RtoAlgorithm, Snapshot};
use crate::common::{self, dither_secs};
use crate::params::{Kind, ParamSpec, Params, Value};
use crate::rng::Random;
use crate::time::{Duration, Instant};

/// Parameters of Default CoAP (RFC 7252 §4.2), shared by FB1, FB2 and GST.
pub const PARAMS: &[ParamSpec] = &[
    ParamSpec {
        key: "ack_timeout_s",
        kind: Kind::Seconds {
            min: 0.001,
            max: 3600.0,
        },
        default: Value::Float(2.0),
        help: "ACK_TIMEOUT: the first timer is drawn from [ACK_TIMEOUT, ACK_TIMEOUT*ack_random_factor)",
        source: "RFC 7252 §4.8",
    },
    ParamSpec {
        key: "backoff",
        kind: Kind::Float {
            min: 1.0,
            max: 16.0,
        },
        default: Value::Float(2.0),
        help: "BACKOFF: each retransmission multiplies the timer by this factor",
        source: "RFC 7252 §4.2",
    },
    ParamSpec {
        key: "timer_max_s",
        kind: Kind::Seconds {
            min: 0.001,
            max: f64::INFINITY,
        },
        default: Value::Float(f64::INFINITY),
        help: "TIMER_MAX: ceiling on any single armed timer (inf = none; fasor18 preset: 60)",
        source: "RFC 7252 §4.8; docs/algorithms.md, 'Presets'; RFC 7252 §4.2",
    },
    ParamSpec {
        key: "variant",
        kind: Kind::Choice(&["rfc", "contiki", "contiki-ng"]),
        default: Value::Choice("rfc"),
        help: "first-timer draw: rfc = continuous; contiki = Contiki er-coap, ACK_TIMEOUT \
               contiki_ack_timeout_s quantised to 1/contiki_ticks s; contiki-ng = the same in whole ms",
        source: "RFC 7252 §4.2; docs/algorithms.md, ambiguity #5",
    },
    ParamSpec {
        key: "contiki_ticks",
        kind: Kind::Int {
            min: 1,
            max: 1_000_000,
        },
        default: Value::Int(128),
        help: "CONTIKI_TICKS: clock ticks per second of variant=contiki (T0 = 384 + r mod 193 ticks)",
        source: "RFC 7252 §4.2 (Contiki CLOCK_SECOND)",
    },
    ParamSpec {
        key: "contiki_ack_timeout_s",
        kind: Kind::Seconds {
            min: 0.001,
            max: 3600.0,
        },
        default: Value::Float(3.0),
        help: "ACK_TIMEOUT of the Contiki ports (COAP_RESPONSE_TIMEOUT); replaces ack_timeout_s \
               when variant is contiki or contiki-ng",
        source: "RFC 7252 §4.2; docs/algorithms.md, ambiguity #5",
    },
];

/// How the first timer is drawn (RFC 7252 §4.2; docs/algorithms.md, ambiguity #5).
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum Draw {
    /// `ACK_TIMEOUT * (1 + (ARF - 1) * u)`, real-valued.
    Continuous,
    /// Integer clock ticks, as the Contiki ports: `base + (r mod mask)` ticks, where
    /// `base = ACK_TIMEOUT * ticks_per_s` and `mask = round(base * (ARF - 1)) + 1`.
    Ticks {
        /// Clock ticks per second (Contiki 128, Contiki-NG's millisecond clock 1000).
        per_s: f64,
    },
}

/// The configuration every member of the Default-CoAP family shares: first timer and backoff.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct DefaultConfig {
    /// ACK_TIMEOUT in force, seconds (the Contiki value under the contiki variants).
    pub(crate) ack_timeout_s: f64,
    /// ACK_RANDOM_FACTOR.
    pub(crate) ack_random_factor: f64,
    /// BACKOFF factor per retransmission.
    pub(crate) backoff: f64,
    /// TIMER_MAX, seconds (may be infinite).
    pub(crate) timer_max_s: f64,
    /// MAX_RETRANSMIT.
    pub(crate) max_retransmit: u32,
    /// How first timers are drawn.
    pub(crate) draw: Draw,
}

impl DefaultConfig {
    /// Reads [`common::COMMON`] and [`PARAMS`].
    pub(crate) fn from_params(p: &Params) -> Self {
        let (ack_timeout_s, draw) = match p.choice("variant") {
            "contiki" => (
                p.float("contiki_ack_timeout_s"),
                Draw::Ticks {
                    per_s: p.int("contiki_ticks") as f64,
                },
            ),
            // Contiki-NG counts the timeout in milliseconds: 3000 + (r mod 1501) ms.
            "contiki-ng" => (
                p.float("contiki_ack_timeout_s"),
                Draw::Ticks { per_s: 1000.0 },
            ),
            _ => (p.float("ack_timeout_s"), Draw::Continuous),
        };
        DefaultConfig {
            ack_timeout_s,
            ack_random_factor: p.float("ack_random_factor"),
            backoff: p.float("backoff"),
            timer_max_s: p.float("timer_max_s"),
            max_retransmit: p.int("max_retransmit") as u32,
            draw,
        }
    }

    /// `(base, mask)` in ticks of the Contiki draw: Contiki's
    /// `COAP_RESPONSE_TIMEOUT_BACKOFF_MASK = (long)(ticks * (ARF - 1) + 0.5) + 1`.
    fn tick_range(&self, per_s: f64) -> (f64, u64) {
        let base = (self.ack_timeout_s * per_s).round();
        let mask = (base * (self.ack_random_factor - 1.0) + 0.5).floor() as u64 + 1;
        (base, mask)
    }

    /// A fresh first timer in seconds, before the cap: one draw.
    pub(crate) fn fresh_secs(&self, rng: &mut dyn Random) -> f64 {
        match self.draw {
            Draw::Continuous => {
                dither_secs(self.ack_timeout_s, self.ack_random_factor, rng.uniform01())
            }
            Draw::Ticks { per_s } => {
                let (base, mask) = self.tick_range(per_s);
                (base + rng.below(mask) as f64) / per_s
            }
        }
    }

    /// The random part alone, `ACK_TIMEOUT * (ARF - 1) * u` (or `r mod mask` ticks), for the
    /// additive dither of a carried timer (ANRW 2018 CARRIED_DITHER): one draw.
    pub(crate) fn dither_extra_secs(&self, rng: &mut dyn Random) -> f64 {
        match self.draw {
            Draw::Continuous => {
                self.ack_timeout_s * (self.ack_random_factor - 1.0) * rng.uniform01()
            }
            Draw::Ticks { per_s } => {
                let (_, mask) = self.tick_range(per_s);
                rng.below(mask) as f64 / per_s
            }
        }
    }

    /// A first timer of `secs`, capped by TIMER_MAX (a ceiling on any armed timer, RFC 7252 §4.8)
    /// and rounded to the microsecond.
    pub(crate) fn first_timer(&self, secs: f64) -> Duration {
        Duration::from_secs_f64_round_us(secs.min(self.timer_max_s))
    }

    /// `min(BACKOFF * T, TIMER_MAX)` (RFC 7252 §4.2 next_timer).
    pub(crate) fn next_timer(&self, t: Duration) -> Duration {
        Duration::from_secs_f64_round_us((self.backoff * t.as_secs_f64()).min(self.timer_max_s))
    }

    /// ACK_TIMEOUT as a duration: the nominal base RTO of the family.
    pub(crate) fn ack_timeout(&self) -> Duration {
        Duration::from_secs_f64_round_us(self.ack_timeout_s)
    }

    /// The `expired` event with this family's backoff.
    pub(crate) fn expire(&self, x: &mut Exchange) -> Expiry {
        common::expire_with(x, self.max_retransmit, |x| self.next_timer(x.timer))
    }
}

/// Default CoAP: no per-destination state beyond the configuration.
#[derive(Debug, Clone)]
pub struct DefaultCoap {
    cfg: DefaultConfig,
}

impl DefaultCoap {
    /// Builds from resolved parameters ([`common::COMMON`] and [`PARAMS`]).
    pub fn new(p: &Params) -> Self {
        DefaultCoap {
            cfg: DefaultConfig::from_params(p),
        }
    }

    /// Registry constructor.
    pub(crate) fn build(p: &Params, _now: Instant) -> Box<dyn RtoAlgorithm> {
        Box::new(DefaultCoap::new(p))
    }
}

impl RtoAlgorithm for DefaultCoap {
    fn name(&self) -> &'static str {
        "default"
    }

    fn start(
        &mut self,
        _now: Instant,
        _admission: Admission,
        x: &mut Exchange,
        rng: &mut dyn Random,
    ) -> Duration {
        // RFC 7252 §4.2: a fresh random timeout for EVERY exchange.
        let t = self.cfg.first_timer(self.cfg.fresh_secs(rng));
        common::arm_first(x, t)
    }

    fn expired(&mut self, _now: Instant, x: &mut Exchange, _rng: &mut dyn Random) -> Expiry {
        self.cfg.expire(x)
    }

    fn completed(&mut self, _c: &Completion<'_>, _x: &mut Exchange, _rng: &mut dyn Random) {}

    fn reset(&mut self, _now: Instant) {}

    fn rto(&self) -> Duration {
        self.cfg.ack_timeout()
    }

    fn max_retransmit(&self) -> u32 {
        self.cfg.max_retransmit
    }

    fn snapshot(&self) -> Snapshot {
        Snapshot {
            rto: self.rto(),
            state: None,
            vars: vec![],
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::params::Settings;
    use crate::registry;
    use crate::rng::{ConstantRandom, ScriptedRandom};
    use crate::testutil::{self, run_exchange, secs, us};

    fn build(settings: &[&str]) -> Box<dyn RtoAlgorithm> {
        testutil::build("default", settings)
    }

    #[test]
    fn rfc_example_with_60s_cap_and_20_retransmissions() {
        // RFC 7252 §4.2: u = 0.4, TIMER_MAX 60 s, MAX_RETRANSMIT 20.
        let mut a = build(&["timer_max_s=60", "max_retransmit=20"]);
        let mut rng = ScriptedRandom::new(&[0.4]);
        let o = run_exchange(a.as_mut(), Instant::ZERO, None, None, &mut rng);
        assert_eq!(
            o.timers[..8],
            [2.4, 4.8, 9.6, 19.2, 38.4, 60.0, 60.0, 60.0].map(secs)
        );
        assert_eq!(o.timers.len(), 21);
        assert_eq!(
            o.tx_times[..8],
            [0.0, 2.4, 7.2, 16.8, 36.0, 74.4, 134.4, 194.4].map(|s| Instant::ZERO + secs(s))
        );
        assert_eq!(o.tx_times.len(), 21);
        // Transmissions 0..=20: #20 is sent at 194.4 + 13*60 s and its 60 s timer expires.
        assert_eq!(o.gave_up, Some(Instant::ZERO + secs(194.4 + 14.0 * 60.0)));
    }

    #[test]
    fn rfc_defaults_give_up_at_74_4_s() {
        // RFC 7252 §4.2: MAX_RETRANSMIT 4, no cap: gives up at t = 74.4 s.
        let mut a = build(&[]);
        let mut rng = ScriptedRandom::new(&[0.4]);
        let o = run_exchange(a.as_mut(), Instant::ZERO, None, None, &mut rng);
        assert_eq!(o.timers, [2.4, 4.8, 9.6, 19.2, 38.4].map(secs));
        assert_eq!(o.gave_up, Some(Instant::ZERO + secs(74.4)));
    }

    #[test]
    fn worst_case_wait_is_max_transmit_wait() {
        // RFC 7252 §4.8: 2*(1+2+4+8+16)*1.5 = 93 s (u -> 1).
        let mut a = build(&[]);
        let mut rng = ConstantRandom(1.0);
        let o = run_exchange(a.as_mut(), Instant::ZERO, None, None, &mut rng);
        assert_eq!(o.gave_up, Some(Instant::ZERO + secs(93.0)));
    }

    #[test]
    fn every_exchange_draws_a_fresh_first_timer() {
        let mut a = build(&[]);
        let mut rng = ScriptedRandom::new(&[0.2, 0.6, 0.0]);
        for (u_timer, ack) in [(2.2, 6.0), (2.6, 6.0), (2.0, 1.0)] {
            let o = run_exchange(a.as_mut(), Instant::ZERO, Some(secs(ack)), None, &mut rng);
            assert_eq!(o.timers[0], secs(u_timer));
        }
        assert_eq!(rng.consumed(), 3);
        assert_eq!(a.rto(), secs(2.0));
    }

    #[test]
    fn timer_max_also_caps_the_first_timer() {
        let mut a = build(&["timer_max_s=2.5"]);
        let mut rng = ScriptedRandom::new(&[0.8]);
        let o = run_exchange(a.as_mut(), Instant::ZERO, None, None, &mut rng);
        assert_eq!(o.timers, [2.5, 2.5, 2.5, 2.5, 2.5].map(secs));
    }

    #[test]
    fn contiki_draws_384_plus_r_mod_193_ticks() {
        // RFC 7252 §4.2: (384 + (r mod 193)) ticks of 1/128 s, i.e. T0 in [3, 4.5] s.
        let mut a = build(&["variant=contiki"]);
        let t0 = |a: &mut dyn RtoAlgorithm, u: f64| {
            a.start(
                Instant::ZERO,
                Admission::ALONE,
                &mut Exchange::new(),
                &mut ConstantRandom(u),
            )
        };
        assert_eq!(t0(a.as_mut(), 0.0), secs(3.0));
        assert_eq!(t0(a.as_mut(), 0.999_999), secs(4.5));
        // r = 1: 385/128 = 3.0078125 s, rounded half away from zero to the microsecond.
        assert_eq!(t0(a.as_mut(), 1.5 / 193.0), us(3_007_813));
        // Backoff doubles the armed timer.
        let mut x = Exchange::new();
        a.start(
            Instant::ZERO,
            Admission::ALONE,
            &mut x,
            &mut ConstantRandom(0.0),
        );
        assert_eq!(
            a.expired(Instant::ZERO + secs(3.0), &mut x, &mut ConstantRandom(0.0)),
            Expiry::Retransmit(secs(6.0))
        );
        assert_eq!(a.rto(), secs(3.0));
    }

    #[test]
    fn contiki_ng_draws_3000_plus_r_mod_1501_ms() {
        let mut a = build(&["variant=contiki-ng"]);
        let mut t0 = |u: f64| {
            a.start(
                Instant::ZERO,
                Admission::ALONE,
                &mut Exchange::new(),
                &mut ConstantRandom(u),
            )
        };
        assert_eq!(t0(0.0), secs(3.0));
        assert_eq!(t0(0.999_999_9), secs(4.5));
        assert_eq!(t0(1.5 / 1501.0), secs(3.001));
    }

    #[test]
    fn rathod_presets_set_the_initial_range() {
        let mut a = build(&["preset=rathod-contiki"]);
        let o = run_exchange(
            a.as_mut(),
            Instant::ZERO,
            None,
            None,
            &mut ConstantRandom(0.5),
        );
        assert_eq!(o.timers, [3.75, 7.5, 15.0, 30.0, 60.0].map(secs));
        let a = build(&["preset=rathod-text"]);
        assert_eq!((a.rto(), a.max_retransmit()), (secs(2.0), 4));
    }

    #[test]
    fn fasor18_preset_caps_at_60_s_with_20_retransmissions() {
        let mut a = build(&["preset=fasor18"]);
        assert_eq!(a.max_retransmit(), 20);
        let o = run_exchange(
            a.as_mut(),
            Instant::ZERO,
            None,
            None,
            &mut ConstantRandom(0.4),
        );
        assert_eq!(o.timers.len(), 21);
        assert_eq!(*o.timers.iter().max().unwrap(), secs(60.0));
    }

    #[test]
    fn unknown_user_key_is_an_error() {
        let e = registry::build(
            "default",
            &Settings::parse(["preset=fasor18", "aging=false"]).unwrap(),
            Instant::ZERO,
        )
        .unwrap_err();
        assert!(
            e.to_string().starts_with("unknown parameter 'aging'"),
            "{e}"
        );
    }

    #[test]
    fn reset_and_failure_change_nothing() {
        let mut a = build(&[]);
        let mut rng = ScriptedRandom::new(&[0.0, 0.0]);
        run_exchange(a.as_mut(), Instant::ZERO, None, None, &mut rng);
        a.reset(Instant::from_secs(100));
        let o = run_exchange(
            a.as_mut(),
            Instant::from_secs(200),
            Some(secs(1.0)),
            None,
            &mut rng,
        );
        assert_eq!(o.timers, [secs(2.0)]);
        assert_eq!(
            a.snapshot(),
            Snapshot {
                rto: secs(2.0),
                state: None,
                vars: vec![]
            }
        );
    }

    #[test]
    fn zero_max_retransmit_gives_up_at_the_first_expiry() {
        let mut a = build(&["max_retransmit=0"]);
        let o = run_exchange(
            a.as_mut(),
            Instant::ZERO,
            None,
            None,
            &mut ConstantRandom(0.0),
        );
        assert_eq!(o.timers, [secs(2.0)]);
        assert_eq!(o.gave_up, Some(Instant::ZERO + secs(2.0)));
    }
}
