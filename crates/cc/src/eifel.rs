//! CoAP-Eifel (Rathod 2022 ch. 4, after the Eifel retransmission timer of Ludwig &
//! Sklower, 2000), registered as `eifel`.
//!
//! Karn sampling (clean exchanges only) into an Eifel estimator with `GAIN = 1/3`, the gain for
//! one sample per RTT, which is what stop-and-wait CoAP yields:
//!
//! ```text
//! delta = R - SRTT;  SRTT += GAIN·delta
//! if delta >= 0:  RTTVAR += gbar·(delta - RTTVAR),  gbar = GAIN if delta - RTTVAR >= 0 else GAIN²
//! RTO = min(max(SRTT + RTTVAR/GAIN, R + 2 ticks), RTO_MAX)
//! ```
//!
//! A falling RTT leaves RTTVAR alone, so the RTO does not grow on a drop the way RFC 6298's does.
//! The first timer is the RTO undithered; each expiry doubles it up to TIMER_MAX.
//!
//! Alternatives (docs/algorithms.md, ambiguity #26–28): `eifel_first_sample = zero` (the embedded
//! code's SRTT = RTTVAR = 0 seed), `eifel_after_retransmit = backed_off` (carry the backed-off
//! timer), `eifel_arith = ticks` with `tick_s = 0.0078125` (Contiki's integer ticks, truncating
//! `/3`, `/9`).

use crate::algorithm::{Admission, Completion, Exchange, Expiry, RtoAlgorithm, Snapshot};
use crate::common;
use crate::params::{Kind, ParamSpec, Params, Value};
use crate::rng::Random;
use crate::time::{Duration, Instant};

/// CoAP-Eifel's own parameters (after [`common::COMMON`]).
pub const EIFEL: &[ParamSpec] = &[
    ParamSpec {
        key: "initial_rto_s",
        kind: Kind::Seconds {
            min: 0.001,
            max: 3600.0,
        },
        default: Value::Float(2.0),
        help: "INITIAL_RTO: the first timer before any sample (not dithered)",
        source: "Rathod 2022 ch. 4",
    },
    ParamSpec {
        key: "eifel_gain",
        kind: Kind::Float {
            min: 0.001,
            max: 1.0,
        },
        default: Value::Float(1.0 / 3.0),
        help: "EIFEL_GAIN: SRTT gain; RTTVAR gain is GAIN or GAIN^2; RTO = SRTT + RTTVAR/GAIN",
        source: "Rathod 2022 ch. 4, Ludwig & Sklower 2000 (one sample per RTT)",
    },
    ParamSpec {
        key: "tick_s",
        kind: Kind::Seconds {
            min: 0.000_001,
            max: 1.0,
        },
        default: Value::Float(0.01),
        help: "TICK: clock tick of the RTO floor R + 2 ticks (Contiki: 0.0078125)",
        source: "Rathod 2022 ch. 4; docs/algorithms.md, ambiguity #28",
    },
    ParamSpec {
        key: "eifel_floor_ticks",
        kind: Kind::Int { min: 0, max: 1000 },
        default: Value::Int(2),
        help: "EIFEL_FLOOR_TICKS: RTO >= R + this many ticks",
        source: "Rathod 2022 ch. 4",
    },
    ParamSpec {
        key: "timer_max_s",
        kind: Kind::Seconds {
            min: 0.001,
            max: f64::INFINITY,
        },
        default: Value::Float(60.0),
        help: "TIMER_MAX: ceiling on every backed-off timer",
        source: "Rathod 2022 ch. 4",
    },
    ParamSpec {
        key: "rto_max_s",
        kind: Kind::Seconds {
            min: 0.001,
            max: f64::INFINITY,
        },
        default: Value::Float(60.0),
        help: "RTO_MAX: ceiling on the Eifel RTO",
        source: "Rathod 2022 ch. 4",
    },
    ParamSpec {
        key: "backoff",
        kind: Kind::Float {
            min: 1.0,
            max: 16.0,
        },
        default: Value::Float(2.0),
        help: "BACKOFF: each expiry multiplies the timer",
        source: "Rathod 2022 ch. 4",
    },
    ParamSpec {
        key: "eifel_arith",
        kind: Kind::Choice(&["exact", "ticks"]),
        default: Value::Choice("exact"),
        help: "exact: f64 seconds; ticks: integer ticks with truncating division (embedded code)",
        source: "Rathod 2022 ch. 4; docs/algorithms.md, ambiguity #28",
    },
    ParamSpec {
        key: "eifel_first_sample",
        kind: Kind::Choice(&["half", "zero"]),
        default: Value::Choice("half"),
        help: "half: first sample seeds SRTT = R, RTTVAR = R/2; zero: SRTT = RTTVAR = 0 seed, \
               the first sample takes the normal update (embedded code)",
        source: "Rathod 2022 ch. 4; docs/algorithms.md, ambiguity #26",
    },
    ParamSpec {
        key: "eifel_after_retransmit",
        kind: Kind::Choice(&["current", "backed_off"]),
        default: Value::Choice("current"),
        help:
            "after a retransmitted or failed exchange the next starts from the current Eifel RTO, \
               or from the backed-off timer until the next clean sample",
        source: "Rathod 2022 ch. 4; docs/algorithms.md, ambiguity #27",
    },
];

/// The Eifel estimator in one of the two arithmetics.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Est {
    /// f64 seconds.
    Exact {
        srtt_s: f64,
        rttvar_s: f64,
        rto_s: f64,
    },
    /// Integer ticks (truncating division).
    Ticks { srtt: i64, rttvar: i64, rto: i64 },
}

/// CoAP-Eifel per-destination state.
#[derive(Debug, Clone)]
pub struct Eifel {
    max_retransmit: u32,
    initial_rto_s: f64,
    gain: f64,
    tick_s: f64,
    floor_ticks: i64,
    timer_max: Duration,
    rto_max_s: f64,
    backoff: f64,
    ticks: bool,
    zero_seed: bool,
    carry_backed_off: bool,
    /// The estimator; `None` until the first sample (or seeded with zeros, docs/algorithms.md,
    /// ambiguity #26).
    est: Option<Est>,
    /// True once a sample has set the RTO (a zero seed alone has not).
    has_sample: bool,
    /// The backed-off timer carried to the next exchange (`backed_off` mode only).
    carried: Option<Duration>,
}

impl Eifel {
    /// Builds the state from resolved parameters.
    pub fn new(p: &Params) -> Eifel {
        let mut e = Eifel {
            max_retransmit: p.int("max_retransmit") as u32,
            initial_rto_s: p.float("initial_rto_s"),
            gain: p.float("eifel_gain"),
            tick_s: p.float("tick_s"),
            floor_ticks: p.int("eifel_floor_ticks"),
            timer_max: p.secs("timer_max_s"),
            rto_max_s: p.float("rto_max_s"),
            backoff: p.float("backoff"),
            ticks: p.choice("eifel_arith") == "ticks",
            zero_seed: p.choice("eifel_first_sample") == "zero",
            carry_backed_off: p.choice("eifel_after_retransmit") == "backed_off",
            est: None,
            has_sample: false,
            carried: None,
        };
        e.reset(Instant::ZERO);
        e
    }

    /// `1/GAIN` as an integer divisor, for tick arithmetic (3 for the default gain).
    fn divisor(&self) -> i64 {
        (1.0 / self.gain).round() as i64
    }

    /// The Eifel RTO in seconds (before µs rounding).
    fn rto_s(&self) -> f64 {
        match self.est {
            _ if !self.has_sample => self.initial_rto_s,
            None => self.initial_rto_s,
            Some(Est::Exact { rto_s, .. }) => rto_s,
            Some(Est::Ticks { rto, .. }) => rto as f64 * self.tick_s,
        }
    }

    fn sample(&mut self, r_s: f64, r_ns: i64) {
        // `est` is None exactly when the `half` seeding has not seen a sample yet.
        let est = match self.est {
            None => self.seed(r_s, r_ns),
            Some(Est::Exact {
                mut srtt_s,
                mut rttvar_s,
                ..
            }) => {
                let g = self.gain;
                let delta = r_s - srtt_s;
                srtt_s += g * delta;
                if delta >= 0.0 {
                    let gbar = if delta - rttvar_s >= 0.0 { g } else { g * g };
                    rttvar_s += gbar * (delta - rttvar_s);
                }
                // delta < 0: RTTVAR unchanged (Eifel's damping of a falling RTT).
                let floor_s = r_s + self.floor_ticks as f64 * self.tick_s;
                let rto_s = (srtt_s + rttvar_s / g).max(floor_s).min(self.rto_max_s);
                Est::Exact {
                    srtt_s,
                    rttvar_s,
                    rto_s,
                }
            }
            Some(Est::Ticks {
                mut srtt,
                mut rttvar,
                ..
            }) => {
                let n = self.divisor();
                let r = self.to_ticks(r_ns);
                let delta = r - srtt;
                srtt += delta / n; // C division: truncates toward zero
                if delta >= 0 {
                    let d = delta - rttvar;
                    rttvar += if d >= 0 { d / n } else { d / (n * n) };
                }
                let rto = (srtt + rttvar * n)
                    .max(r + self.floor_ticks)
                    .min(self.rto_max_ticks());
                Est::Ticks { srtt, rttvar, rto }
            }
        };
        self.est = Some(est);
        self.has_sample = true;
    }

    /// The state after the first sample in the default `half` seeding: SRTT = R, RTTVAR = R/2.
    fn seed(&self, r_s: f64, r_ns: i64) -> Est {
        if self.ticks {
            let r = self.to_ticks(r_ns);
            let (srtt, rttvar) = (r, r / 2);
            let rto = (srtt + rttvar * self.divisor())
                .max(r + self.floor_ticks)
                .min(self.rto_max_ticks());
            Est::Ticks { srtt, rttvar, rto }
        } else {
            let (srtt_s, rttvar_s) = (r_s, r_s / 2.0);
            let floor_s = r_s + self.floor_ticks as f64 * self.tick_s;
            let rto_s = (srtt_s + rttvar_s / self.gain)
                .max(floor_s)
                .min(self.rto_max_s);
            Est::Exact {
                srtt_s,
                rttvar_s,
                rto_s,
            }
        }
    }

    /// Whole ticks in `ns` (truncated, as a tick counter difference would be).
    fn to_ticks(&self, ns: i64) -> i64 {
        // Integer nanoseconds per tick (1/128 s = 7 812 500 ns exactly), so 0.5 s is 50
        // ticks of 10 ms and not 49.999….
        let tick_ns = ((self.tick_s * 1e9).round() as i64).max(1);
        ns / tick_ns
    }

    fn rto_max_ticks(&self) -> i64 {
        let t = (self.rto_max_s / self.tick_s).floor();
        if t >= i64::MAX as f64 {
            i64::MAX
        } else {
            t as i64
        }
    }

    fn srtt_rttvar_s(&self) -> Option<(f64, f64)> {
        match self.est? {
            Est::Exact {
                srtt_s, rttvar_s, ..
            } => Some((srtt_s, rttvar_s)),
            Est::Ticks { srtt, rttvar, .. } => {
                Some((srtt as f64 * self.tick_s, rttvar as f64 * self.tick_s))
            }
        }
    }
}

impl RtoAlgorithm for Eifel {
    fn name(&self) -> &'static str {
        "eifel"
    }

    fn start(
        &mut self,
        _now: Instant,
        _admission: Admission,
        x: &mut Exchange,
        _rng: &mut dyn Random,
    ) -> Duration {
        // Not dithered (Rathod 2022 ch. 4); no draw is consumed.
        common::arm_first(x, self.rto())
    }

    fn expired(&mut self, _now: Instant, x: &mut Exchange, _rng: &mut dyn Random) -> Expiry {
        let (backoff, timer_max) = (self.backoff, self.timer_max);
        common::expire_with(x, self.max_retransmit, |x| {
            let t = Duration::from_secs_f64_round_us(backoff * x.timer.as_secs_f64());
            common::cap(t, timer_max)
        })
    }

    fn completed(&mut self, c: &Completion<'_>, _x: &mut Exchange, _rng: &mut dyn Random) {
        if c.retransmissions() == 0 {
            // Karn: only a clean exchange gives a sample, measured from the original.
            let r = c.rtt_from_original();
            self.sample(r.as_nanos() as f64 / 1e9, r.as_nanos());
            self.carried = None;
        } else if self.carry_backed_off {
            self.carried = Some(common::cap(c.timer_in_force, self.timer_max));
        }
    }

    fn failed(&mut self, _now: Instant, x: &mut Exchange) {
        if self.carry_backed_off {
            self.carried = Some(common::cap(x.timer, self.timer_max));
        }
    }

    fn reset(&mut self, _now: Instant) {
        self.carried = None;
        self.has_sample = false;
        self.est = if !self.zero_seed {
            None
        } else if self.ticks {
            Some(Est::Ticks {
                srtt: 0,
                rttvar: 0,
                rto: 0,
            })
        } else {
            Some(Est::Exact {
                srtt_s: 0.0,
                rttvar_s: 0.0,
                rto_s: 0.0,
            })
        };
    }

    /// The first timer of the next exchange: the carried backed-off timer if any, else the
    /// Eifel RTO (INITIAL_RTO before any sample).
    fn rto(&self) -> Duration {
        match self.carried {
            Some(t) => t,
            None => Duration::from_secs_f64_round_us(self.rto_s()),
        }
    }

    fn max_retransmit(&self) -> u32 {
        self.max_retransmit
    }

    fn snapshot(&self) -> Snapshot {
        let mut vars = vec![("eifel_rto_s", self.rto_s())];
        if let Some((srtt_s, rttvar_s)) = self.srtt_rttvar_s() {
            vars.push(("srtt_s", srtt_s));
            vars.push(("rttvar_s", rttvar_s));
        }
        Snapshot {
            rto: self.rto(),
            state: None,
            vars,
        }
    }
}

/// Builds `eifel` from resolved parameters.
pub(crate) fn build(p: &Params, _now: Instant) -> Box<dyn RtoAlgorithm> {
    Box::new(Eifel::new(p))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::params::Settings;
    use crate::rng::ScriptedRandom;

    fn eifel(settings: &[&str]) -> Eifel {
        let s = Settings::parse(settings.iter().copied()).unwrap();
        Eifel::new(&Params::resolve("eifel", &[common::COMMON, EIFEL], &s).unwrap())
    }

    fn us(micros: i64) -> Duration {
        Duration::from_micros(micros)
    }

    /// One exchange starting at `start_us`, answered `rtt_us` after the original after
    /// `retransmissions` expiries. Returns the timers armed.
    fn exchange(a: &mut Eifel, start_us: i64, rtt_us: i64, retransmissions: u32) -> Vec<Duration> {
        // No draw may be consumed: an empty script panics on any draw.
        let mut rng = ScriptedRandom::new(&[]);
        let mut x = Exchange::new();
        let start = Instant::from_micros(start_us);
        let mut tx = vec![start];
        let mut timers = vec![a.start(start, Admission::ALONE, &mut x, &mut rng)];
        let mut t = start;
        for _ in 0..retransmissions {
            t += x.timer;
            match a.expired(t, &mut x, &mut rng) {
                Expiry::Retransmit(d) => timers.push(d),
                Expiry::GiveUp => panic!("gave up"),
            }
            tx.push(t);
        }
        let c = Completion {
            ack_time: start + us(rtt_us),
            tx_times: &tx,
            answered: None,
            timer_in_force: x.timer,
        };
        a.completed(&c, &mut x, &mut rng);
        timers
    }

    fn close(a: f64, b: f64) {
        assert!((a - b).abs() < 1e-12, "{a} != {b}");
    }

    #[test]
    fn example_table_exact() {
        // Rathod 2022 ch. 4 example (TICK 10 ms): R | SRTT | RTTVAR | RTO.
        let mut a = eifel(&[]);
        assert_eq!(exchange(&mut a, 0, 500_000, 0), [us(2_000_000)]);
        let (s, v) = a.srtt_rttvar_s().unwrap();
        close(s, 0.5);
        close(v, 0.25);
        assert_eq!(a.rto(), us(1_250_000));

        assert_eq!(exchange(&mut a, 10_000_000, 500_000, 0), [us(1_250_000)]);
        let (s, v) = a.srtt_rttvar_s().unwrap();
        close(s, 0.5);
        close(v, 0.25 - 0.25 / 9.0);
        assert_eq!(a.rto(), us(1_166_667));

        exchange(&mut a, 20_000_000, 800_000, 0);
        let (s, v) = a.srtt_rttvar_s().unwrap();
        close(s, 0.6);
        close(v, 0.25 - 0.25 / 9.0 + (0.3 - (0.25 - 0.25 / 9.0)) / 3.0);
        close(v, 0.248_148_148_148_148_1);
        assert_eq!(a.rto(), us(1_344_444));

        exchange(&mut a, 30_000_000, 400_000, 0);
        let (s, v2) = a.srtt_rttvar_s().unwrap();
        close(s, 0.6 - 0.2 / 3.0);
        close(v2, v); // falling RTT: RTTVAR unchanged
        assert_eq!(a.rto(), us(1_277_778));
    }

    #[test]
    fn backoff_series_from_1_25_then_give_up() {
        // Rathod 2022 ch. 4: a retransmitted exchange starting at RTO 1.25 uses 1.25, 2.5, 5,
        // 10, 20.
        let mut a = eifel(&[]);
        exchange(&mut a, 0, 500_000, 0);
        let mut rng = ScriptedRandom::new(&[]);
        let mut x = Exchange::new();
        let mut t = Instant::from_secs(10);
        let mut timers = vec![a.start(t, Admission::ALONE, &mut x, &mut rng)];
        loop {
            t += x.timer;
            match a.expired(t, &mut x, &mut rng) {
                Expiry::Retransmit(d) => timers.push(d),
                Expiry::GiveUp => break,
            }
        }
        let ms = |v: i64| Duration::from_millis(v);
        assert_eq!(
            timers,
            [ms(1250), ms(2500), ms(5000), ms(10_000), ms(20_000)]
        );
        assert_eq!(x.retransmissions, 4);
        a.failed(t, &mut x);
        assert_eq!(a.rto(), us(1_250_000)); // failed: no change (docs/algorithms.md, ambiguity #27 default)
    }

    #[test]
    fn backoff_caps_at_timer_max() {
        let mut a = eifel(&["max_retransmit=8"]);
        let ts = exchange(&mut a, 0, 300_000_000, 7);
        assert_eq!(ts.last(), Some(&Duration::from_secs(60)));
        assert_eq!(ts[5], Duration::from_secs(60)); // 2, 4, 8, 16, 32, 60
    }

    #[test]
    fn retransmitted_exchange_gives_no_sample() {
        let mut a = eifel(&[]);
        exchange(&mut a, 0, 500_000, 0);
        exchange(&mut a, 10_000_000, 3_000_000, 2);
        assert_eq!(a.rto(), us(1_250_000));
    }

    #[test]
    fn floor_r_plus_two_ticks_binds_for_constant_rtt() {
        // Identical samples shrink RTTVAR by 1/9 each time; the floor R + 20 ms stops the RTO.
        let mut a = eifel(&[]);
        for i in 0..200 {
            exchange(&mut a, i * 10_000_000, 500_000, 0);
        }
        assert_eq!(a.rto(), us(520_000));
    }

    #[test]
    fn a_24_ms_rtt_gives_a_44_ms_rto_with_no_other_floor() {
        // Issue 31, item 2, finding 1 (the half-dumbbell's ~45 ms RTO): the spec's only lower
        // bound is R + EIFEL_FLOOR_TICKS·TICK = R + 20 ms (docs/algorithms.md §9, Ludwig &
        // Sklower's "R + 2 ticks"); there is no minimum RTO like RFC 6298's 1 s, and no max(G, ·)
        // term. A steady 24 ms RTT (the scenario's median) seeds RTO = 2.5·R = 60 ms, then each
        // equal sample shrinks RTTVAR by 1/9 until the floor 44 ms binds at the 6th sample.
        let mut a = eifel(&[]);
        let mut rtos = Vec::new();
        for i in 0..8 {
            exchange(&mut a, i * 100_000, 24_000, 0);
            rtos.push(a.rto().as_micros());
        }
        // 24 + 3·12·(8/9)^n ms for n = 0..4, then the floor.
        assert_eq!(
            rtos,
            [60_000, 56_000, 52_444, 49_284, 46_475, 44_000, 44_000, 44_000]
        );
        // A retransmitted exchange backs off from 44 ms and gives no sample (Karn).
        let timers = exchange(&mut a, 1_000_000, 100_000, 2);
        assert_eq!(timers, [us(44_000), us(88_000), us(176_000)]);
        assert_eq!(a.rto(), us(44_000));
    }

    #[test]
    fn without_a_clean_exchange_the_rto_stays_at_the_initial_2_s() {
        // Issue 31, item 2, finding 1 (one client "stays at 2 s"): only clean exchanges give
        // samples, so a client whose exchanges all need a retransmission or give up keeps
        // INITIAL_RTO; the first clean one seeds SRTT = R, RTTVAR = R/2 (RTO 2.5·R), nothing
        // earlier does.
        let mut a = eifel(&[]);
        assert_eq!(
            exchange(&mut a, 0, 14_041_408, 3)[0],
            Duration::from_secs(2)
        );
        let mut rng = ScriptedRandom::new(&[]);
        let mut x = Exchange::new();
        a.start(Instant::from_secs(15), Admission::ALONE, &mut x, &mut rng);
        for k in 1..=4 {
            let t = Instant::from_secs(15 + 2 * ((1 << k) - 1));
            assert!(matches!(
                a.expired(t, &mut x, &mut rng),
                Expiry::Retransmit(_)
            ));
        }
        assert!(matches!(
            a.expired(Instant::from_secs(77), &mut x, &mut rng),
            Expiry::GiveUp
        ));
        a.failed(Instant::from_secs(77), &mut x);
        assert_eq!(
            exchange(&mut a, 80_000_000, 2_022_200, 1)[0],
            Duration::from_secs(2)
        );
        assert_eq!(a.rto(), Duration::from_secs(2));
        assert_eq!(a.srtt_rttvar_s(), None);
        exchange(&mut a, 90_000_000, 24_000, 0);
        assert_eq!(a.rto(), us(60_000));
    }

    #[test]
    fn rto_is_capped_at_rto_max() {
        let mut a = eifel(&["rto_max_s=5"]);
        exchange(&mut a, 0, 4_000_000, 0);
        assert_eq!(a.rto(), Duration::from_secs(5));
    }

    #[test]
    fn backed_off_alternative_carries_the_timer_in_force() {
        // docs/algorithms.md, ambiguity #27 alternative.
        let mut a = eifel(&["eifel_after_retransmit=backed_off"]);
        exchange(&mut a, 0, 500_000, 0);
        // 1.25 expires, 2.5 in force when the ACK arrives at 3.0.
        assert_eq!(
            exchange(&mut a, 10_000_000, 3_000_000, 1),
            [us(1_250_000), us(2_500_000)]
        );
        assert_eq!(a.rto(), us(2_500_000));
        // Kept until a clean sample.
        assert_eq!(exchange(&mut a, 20_000_000, 600_000, 0), [us(2_500_000)]);
        // SRTT 0.5 + 0.1/3, RTTVAR 0.25 + (0.1 - 0.25)/9.
        close(a.rto_s(), 0.5 + 0.1 / 3.0 + 3.0 * (0.25 - 0.15 / 9.0));
        assert_eq!(a.rto(), us(1_233_333));
        // Failed: the last timer is carried.
        let mut x = Exchange::new();
        x.timer = Duration::from_secs(20);
        a.failed(Instant::from_secs(100), &mut x);
        assert_eq!(a.rto(), Duration::from_secs(20));
    }

    #[test]
    fn zero_seed_alternative_runs_the_first_sample_through_the_update() {
        // docs/algorithms.md, ambiguity #26 alternative: SRTT = RTTVAR = 0, so R = 0.6 gives SRTT
        // 0.2, RTTVAR 0.2, RTO = max(0.2 + 0.6, 0.62) = 0.8.
        let mut a = eifel(&["eifel_first_sample=zero"]);
        assert_eq!(a.rto(), Duration::from_secs(2));
        assert_eq!(exchange(&mut a, 0, 600_000, 0), [Duration::from_secs(2)]);
        let (s, v) = a.srtt_rttvar_s().unwrap();
        close(s, 0.2);
        close(v, 0.2);
        assert_eq!(a.rto(), us(800_000));
    }

    #[test]
    fn ticks_arithmetic_truncates() {
        // docs/algorithms.md, ambiguity #28 with the default 10 ms tick: the example's samples as
        // 50, 50, 80, 40 ticks.
        let mut a = eifel(&["eifel_arith=ticks"]);
        exchange(&mut a, 0, 500_000, 0);
        assert_eq!(
            a.est,
            Some(Est::Ticks {
                srtt: 50,
                rttvar: 25,
                rto: 125
            })
        );
        assert_eq!(a.rto(), us(1_250_000));
        exchange(&mut a, 10_000_000, 500_000, 0); // 25 + trunc(-25/9) = 23
        assert_eq!(
            a.est,
            Some(Est::Ticks {
                srtt: 50,
                rttvar: 23,
                rto: 119
            })
        );
        exchange(&mut a, 20_000_000, 800_000, 0); // SRTT 60; 23 + 7/3 = 25
        assert_eq!(
            a.est,
            Some(Est::Ticks {
                srtt: 60,
                rttvar: 25,
                rto: 135
            })
        );
        exchange(&mut a, 30_000_000, 400_000, 0); // SRTT 60 + trunc(-20/3) = 54
        assert_eq!(
            a.est,
            Some(Est::Ticks {
                srtt: 54,
                rttvar: 25,
                rto: 129
            })
        );
        assert_eq!(a.rto(), us(1_290_000));
    }

    #[test]
    fn contiki_ticks_of_1_128_s() {
        // 0.5 s = 64 ticks: SRTT 64, RTTVAR 32, RTO 160 ticks = 1.25 s; 0.3 s = 38 ticks
        // (38.4 truncated): SRTT 64 + trunc(-26/3) = 56, RTO 56 + 96 = 152 ticks = 1.1875 s.
        let mut a = eifel(&["eifel_arith=ticks", "tick_s=0.0078125"]);
        exchange(&mut a, 0, 500_000, 0);
        assert_eq!(a.rto(), us(1_250_000));
        exchange(&mut a, 10_000_000, 300_000, 0);
        assert_eq!(
            a.est,
            Some(Est::Ticks {
                srtt: 56,
                rttvar: 32,
                rto: 152
            })
        );
        assert_eq!(a.rto(), us(1_187_500));
    }

    #[test]
    fn reset_returns_to_the_initial_rto() {
        let mut a = eifel(&[]);
        exchange(&mut a, 0, 500_000, 0);
        a.reset(Instant::from_secs(50));
        assert_eq!(a.rto(), Duration::from_secs(2));
        assert_eq!(a.snapshot().vars, [("eifel_rto_s", 2.0)]);
    }
}
