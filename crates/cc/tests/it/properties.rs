//! Properties every registered algorithm must have, whatever the event sequence
//! (docs/algorithms.md, 'Conventions'). The algorithms are taken from `registry::ALGORITHMS`, so a
//! newly registered algorithm is covered without touching this file.
//!
//! * every timer returned by `start` / `expired` is > 0 and ≤ the configured timer cap
//!   (`timer_max_s` / `timer_max_ms`); with an infinite cap it is still bounded (see [`bound`]);
//! * the scratch is kept as the contract says (`x.timer` = the returned timer, `k` counted);
//! * give-up happens exactly when the timer of transmission MAX_RETRANSMIT expires;
//! * the same seed and the same events reproduce the same timer series.

use coaplab_cc::params::Value;
use coaplab_cc::registry::{self, ALGORITHMS};
use coaplab_cc::rng::SeededRandom;
use coaplab_cc::{Admission, Completion, Duration, Exchange, Expiry, Instant, Settings};
use proptest::prelude::*;

/// One input to the destination state.
#[derive(Debug, Clone)]
enum Op {
    /// A new exchange is admitted (if fewer than 4 are in flight).
    Start {
        /// The exchange waited in the NSTART queue.
        dequeued: bool,
    },
    /// The timer of in-flight exchange `which % n` fires at its deadline (or now, if later).
    Expire { which: usize },
    /// The answer to in-flight exchange `which % n` arrives `delay_ms` later.
    Complete {
        which: usize,
        delay_ms: u32,
        /// Raw ordinal; `% transmissions` picks the transmission it answers.
        answered: Option<u8>,
    },
    /// In-flight exchange `which % n` is cancelled.
    Fail { which: usize },
    /// Time passes.
    Idle { ms: u32 },
    /// Every in-flight exchange is cancelled and the destination forgotten.
    Reset,
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        3 => any::<bool>().prop_map(|dequeued| Op::Start { dequeued }),
        4 => any::<usize>().prop_map(|which| Op::Expire { which }),
        3 => (any::<usize>(), 0u32..20_000, proptest::option::of(any::<u8>()))
            .prop_map(|(which, delay_ms, answered)| Op::Complete { which, delay_ms, answered }),
        1 => any::<usize>().prop_map(|which| Op::Fail { which }),
        1 => (0u32..400_000).prop_map(|ms| Op::Idle { ms }),
        1 => Just(Op::Reset),
    ]
}

struct Live {
    x: Exchange,
    tx_times: Vec<Instant>,
}

/// The timer cap in seconds as configured (`timer_max_s` or `timer_max_ms`); infinite when the
/// algorithm has neither or it is `inf`.
fn timer_cap_s(name: &str, settings: &Settings) -> f64 {
    let (_, params) = registry::resolve(name, settings).unwrap();
    let mut cap = f64::INFINITY;
    for (key, value) in params.iter() {
        match (key, value) {
            ("timer_max_s", Value::Float(v)) => cap = cap.min(v),
            ("timer_max_ms", Value::Int(v)) => cap = cap.min(v as f64 / 1e3),
            _ => {}
        }
    }
    cap
}

/// Without a finite cap, a sane bound on a timer after `expiries` expiries in the run so far.
///
/// No algorithm's first timer exceeds 90 s (a base RTO clamped to RTO_MAX = 60 s, dithered by
/// at most 1.5) or 4 times the largest RTT it has seen (SRTT plus K·RTTVAR style estimates and
/// FASOR's SRTT dither stay below that), and no backoff grows a timer by more than 3 per expiry
/// (the VBF's largest factor); a carried timer (FB1/FB2/GST) is one of those backed-off timers.
fn bound(expiries: u32, max_rtt_s: f64) -> f64 {
    90f64.max(4.0 * max_rtt_s) * 3f64.powi(expiries as i32 + 1)
}

struct Checker {
    name: &'static str,
    cap_s: f64,
    max_retransmit: u32,
    expiries: u32,
    max_rtt_s: f64,
}

impl Checker {
    fn timer(&self, t: Duration, what: &str) -> Result<(), TestCaseError> {
        let name = self.name;
        prop_assert!(t > Duration::ZERO, "{name}: {what} timer {t} is not > 0");
        if self.cap_s.is_finite() {
            prop_assert!(
                t.as_secs_f64() <= self.cap_s + 1e-6,
                "{name}: {what} timer {t} exceeds the cap {} s",
                self.cap_s
            );
        } else {
            let b = bound(self.expiries, self.max_rtt_s);
            prop_assert!(
                t.as_secs_f64() <= b,
                "{name}: {what} timer {t} exceeds the sane bound {b} s"
            );
            // Duration::MAX ("never") only once the bound itself is beyond i64 nanoseconds.
            prop_assert!(
                t != Duration::MAX || b >= Duration::MAX.as_secs_f64(),
                "{name}: {what} timer is Duration::MAX"
            );
        }
        Ok(())
    }
}

/// Runs `ops` through algorithm `name`; returns every timer armed and every RTO reported.
fn drive(
    name: &'static str,
    settings: &Settings,
    seed: u64,
    ops: &[Op],
) -> Result<Vec<Duration>, TestCaseError> {
    let mut alg = registry::build(name, settings, Instant::ZERO).unwrap();
    let mut rng = SeededRandom::new(seed);
    let mut chk = Checker {
        name,
        cap_s: timer_cap_s(name, settings),
        max_retransmit: alg.max_retransmit(),
        expiries: 0,
        max_rtt_s: 0.0,
    };
    let mut now = Instant::ZERO;
    let mut live: Vec<Live> = vec![];
    let mut series = vec![];
    for op in ops {
        match *op {
            Op::Start { dequeued } => {
                if live.len() >= 4 {
                    continue;
                }
                let admission = Admission {
                    in_flight: live.len() as u32 + 1,
                    dequeued,
                };
                let mut x = Exchange::new();
                let t = alg.start(now, admission, &mut x, &mut rng);
                prop_assert_eq!(x.timer, t, "{}: start must arm its timer", name);
                prop_assert_eq!(x.retransmissions, 0);
                chk.timer(t, "first")?;
                series.push(t);
                live.push(Live {
                    x,
                    tx_times: vec![now],
                });
            }
            Op::Expire { which } if !live.is_empty() => {
                let i = which % live.len();
                let e = &mut live[i];
                let deadline = *e.tx_times.last().unwrap() + e.x.timer;
                now = now.max(deadline);
                let k = e.x.retransmissions;
                match alg.expired(now, &mut e.x, &mut rng) {
                    Expiry::Retransmit(t) => {
                        chk.expiries += 1;
                        prop_assert!(
                            k < chk.max_retransmit,
                            "{}: retransmission #{} beyond MAX_RETRANSMIT {}",
                            name,
                            k + 1,
                            chk.max_retransmit
                        );
                        prop_assert_eq!(e.x.retransmissions, k + 1);
                        prop_assert_eq!(e.x.timer, t);
                        chk.timer(t, "backed-off")?;
                        series.push(t);
                        e.tx_times.push(now);
                    }
                    Expiry::GiveUp => {
                        prop_assert_eq!(
                            k,
                            chk.max_retransmit,
                            "{}: gave up after {} retransmissions, MAX_RETRANSMIT is {}",
                            name,
                            k,
                            chk.max_retransmit
                        );
                        let mut e = live.remove(i);
                        alg.failed(now, &mut e.x);
                    }
                }
            }
            Op::Complete {
                which,
                delay_ms,
                answered,
            } if !live.is_empty() => {
                now += Duration::from_millis(delay_ms.into());
                let mut e = live.remove(which % live.len());
                let n = e.tx_times.len() as u32;
                let c = Completion {
                    ack_time: now,
                    tx_times: &e.tx_times,
                    answered: answered.map(|a| u32::from(a) % n),
                    timer_in_force: e.x.timer,
                };
                chk.max_rtt_s = chk.max_rtt_s.max(c.rtt_from_original().as_secs_f64());
                alg.completed(&c, &mut e.x, &mut rng);
                series.push(alg.rto());
            }
            Op::Fail { which } if !live.is_empty() => {
                let mut e = live.remove(which % live.len());
                alg.failed(now, &mut e.x);
            }
            Op::Idle { ms } => now += Duration::from_millis(ms.into()),
            Op::Reset => {
                for mut e in live.drain(..) {
                    alg.failed(now, &mut e.x);
                }
                alg.reset(now);
                series.push(alg.rto());
            }
            _ => {}
        }
    }
    Ok(series)
}

fn configs(max_retransmit: u32) -> [Settings; 2] {
    let mr = format!("max_retransmit={max_retransmit}");
    [
        Settings::parse([mr.as_str()]).unwrap(),
        Settings::parse(["preset=fasor18", mr.as_str()]).unwrap(),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    #[test]
    fn timers_are_positive_capped_and_give_up_exactly_at_max_retransmit(
        ops in prop::collection::vec(op(), 1..40),
        max_retransmit in 0u32..7,
        seed in any::<u64>(),
    ) {
        for info in ALGORITHMS {
            for settings in &configs(max_retransmit) {
                drive(info.name, settings, seed, &ops)?;
            }
        }
    }

    #[test]
    fn the_same_seed_reproduces_the_same_timer_series(
        ops in prop::collection::vec(op(), 1..40),
        seed in any::<u64>(),
    ) {
        for info in ALGORITHMS {
            let settings = Settings::parse(["max_retransmit=4"]).unwrap();
            let a = drive(info.name, &settings, seed, &ops)?;
            let b = drive(info.name, &settings, seed, &ops)?;
            prop_assert_eq!(a, b, "{}: same seed, different timers", info.name);
        }
    }

    #[test]
    fn an_unanswered_exchange_sends_exactly_max_retransmit_retransmissions(
        warmup in prop::collection::vec(op(), 0..20),
        max_retransmit in 0u32..9,
        seed in any::<u64>(),
    ) {
        for info in ALGORITHMS {
            let settings = Settings::parse([format!("max_retransmit={max_retransmit}").as_str()])
                .unwrap();
            // Learn something first, then one exchange that is never answered.
            let mut alg = registry::build(info.name, &settings, Instant::ZERO).unwrap();
            let mut rng = SeededRandom::new(seed);
            let mut now = Instant::ZERO;
            for op in &warmup {
                // A clean exchange of 0..20 s RTT, or idle time: enough to move estimators.
                if let Op::Complete { delay_ms, .. } = op {
                    let mut x = Exchange::new();
                    alg.start(now, Admission::ALONE, &mut x, &mut rng);
                    let tx = [now];
                    now += Duration::from_millis((*delay_ms).into());
                    let c = Completion {
                        ack_time: now,
                        tx_times: &tx,
                        answered: None,
                        timer_in_force: x.timer,
                    };
                    alg.completed(&c, &mut x, &mut rng);
                } else if let Op::Idle { ms } = op {
                    now += Duration::from_millis((*ms).into());
                }
            }
            let mut x = Exchange::new();
            let mut deadline = now + alg.start(now, Admission::ALONE, &mut x, &mut rng);
            let mut retransmissions = 0;
            while let Expiry::Retransmit(t) = alg.expired(deadline, &mut x, &mut rng) {
                retransmissions += 1;
                prop_assert!(retransmissions <= max_retransmit, "{}", info.name);
                deadline += t;
            }
            prop_assert_eq!(retransmissions, max_retransmit, "{}", info.name);
            prop_assert_eq!(alg.max_retransmit(), max_retransmit, "{}", info.name);
            alg.failed(deadline, &mut x);
        }
    }
}
