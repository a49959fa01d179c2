//! CoCoA's Californium-compat profile (`cocoa profile=cf-compat`, spec/algorithms.md §4.6):
//! reproduces Californium 3.x's `Cocoa` / `CocoaStrong` numbers exactly.
//!
//! It deviates from the RFC profile (`cocoa.rs`) in nine switches, all here:
//! 1. integer milliseconds, sample `m = max(1, floor(R ms))`;
//! 2. swapped gains, RTTVAR 1/8 and SRTT 1/4, each step rounded with Java's `Math.round`;
//! 3. `G = 100 ms`;
//! 4. `rto = round(w·E + (1−w)·getRTO())`;
//! 5. `getRTO() = min(rto·n, 32000)` for n > 1 registered exchanges, never switched off;
//! 6. first timer `getRTO() + randInt[0, floor(1.5·T) − T]`, clamped to [500, 60000];
//! 7. the VBF computed once from that first timer, `T_k = min(60000, trunc(f·T_{k−1}))`, no 32 s
//!    truncation;
//! 8. aging after the first timer, one step, `last_update = now`;
//! 9. the sample point for an empty ACK is the separate response, which is the exchange layer's
//!    choice (spec §12 #35), not this module's.

use crate::algorithm::{Admission, Completion, Exchange, Expiry, RtoAlgorithm, Scratch, Snapshot};
use crate::common::expire_with;
use crate::java;
use crate::params::{Kind, ParamSpec, Params, Value};
use crate::rng::Random;
use crate::time::{Duration, Instant};

/// The profile switch of `cocoa` / `cocoa-strong` and the constants only the Californium
/// profile uses. The other constants (K, W, WEAK_MAX_RETX, VBF thresholds and factors,
/// TIMER_MAX, INITIAL_RTO, aging thresholds) are the `cocoa` group's, read in milliseconds.
pub const CF_COMPAT: &[ParamSpec] = &[
    ParamSpec {
        key: "profile",
        kind: Kind::Choice(&["rfc", "cf-compat"]),
        default: Value::Choice("rfc"),
        help: "rfc: draft semantics in f64 seconds; cf-compat: Californium 3.x in integer ms (swapped gains, G 100 ms, getRTO multiplier, VBF once, aging after the first timer)",
        source: "spec §4.6, §12 #7 #9 #11 #12",
    },
    ParamSpec {
        key: "cf_g_ms",
        kind: Kind::Int {
            min: 0,
            max: 3_600_000,
        },
        default: Value::Int(100),
        help: "cf-compat: G in E = SRTT + max(G, K*RTTVAR)",
        source: "Californium 3.x Cocoa; spec §4.6 item 3",
    },
    ParamSpec {
        key: "cf_srtt_gain",
        kind: Kind::Float { min: 0.0, max: 1.0 },
        default: Value::Float(0.25),
        help: "cf-compat: SRTT gain (Californium swaps RFC 6298's gains)",
        source: "Californium 3.x Cocoa; spec §4.6 item 2, §12 #7",
    },
    ParamSpec {
        key: "cf_rttvar_gain",
        kind: Kind::Float { min: 0.0, max: 1.0 },
        default: Value::Float(0.125),
        help: "cf-compat: RTTVAR gain (Californium swaps RFC 6298's gains)",
        source: "Californium 3.x Cocoa; spec §4.6 item 2, §12 #7",
    },
    ParamSpec {
        key: "cf_rto_cap_ms",
        kind: Kind::Int {
            min: 1,
            max: 3_600_000,
        },
        default: Value::Int(32_000),
        help: "cf-compat: getRTO() = min(rto * n, this)",
        source: "Californium 3.x RemoteEndpoint.getRTO; spec §4.6 item 5",
    },
    ParamSpec {
        key: "cf_first_timer_min_ms",
        kind: Kind::Int {
            min: 0,
            max: 3_600_000,
        },
        default: Value::Int(500),
        help: "cf-compat: the first timer is clamped to [this, TIMER_MAX]",
        source: "Californium 3.x; spec §4.6 item 6",
    },
];

/// The largest millisecond count a [`Duration`] holds (about 292 years): "no limit".
const MS_MAX: i64 = i64::MAX / 1_000_000;

/// Seconds parameter → integer ms (Californium's unit); infinity saturates at [`MS_MAX`].
fn ms(p: &Params, key: &str) -> i64 {
    let v = (p.float(key) * 1000.0).round();
    if v >= MS_MAX as f64 {
        MS_MAX
    } else {
        v as i64
    }
}

/// The resolved constants of the profile, in ms where they are durations.
#[derive(Debug, Clone)]
struct CfConfig {
    ack_random_factor: f64,
    max_retransmit: u32,
    initial_rto_ms: i64,
    k_strong: f64,
    k_weak: f64,
    w_strong: f64,
    w_weak: f64,
    weak_max_retx: u32,
    strong_only: bool,
    g_ms: i64,
    srtt_gain: f64,
    rttvar_gain: f64,
    rto_cap_ms: i64,
    first_timer_min_ms: i64,
    timer_max_ms: i64,
    vbf_low_thresh_ms: i64,
    vbf_low: f64,
    vbf_high_thresh_ms: i64,
    vbf_high: f64,
    vbf_mid: f64,
    aging: bool,
    age_low_thresh_ms: i64,
    age_low_mult: f64,
    age_high_thresh_ms: i64,
    age_high_mult: f64,
    age_high_base_ms: i64,
    blind: bool,
}

/// One Californium estimator: integer ms.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
struct CfEstimator {
    srtt_ms: i64,
    rttvar_ms: i64,
    rto_ms: f64,
    init: bool,
}

impl CfEstimator {
    /// §4.6 items 2-3. Returns `E`.
    fn update(&mut self, m: i64, k: f64, cfg: &CfConfig) -> f64 {
        if !self.init {
            self.srtt_ms = m;
            self.rttvar_ms = m / 2;
            self.init = true;
        } else {
            // RTTVAR first, with the old SRTT; each step Java-rounded.
            let err = (self.srtt_ms - m).abs() as f64;
            self.rttvar_ms = java::round(
                (1.0 - cfg.rttvar_gain) * self.rttvar_ms as f64 + cfg.rttvar_gain * err,
            );
            self.srtt_ms =
                java::round((1.0 - cfg.srtt_gain) * self.srtt_ms as f64 + cfg.srtt_gain * m as f64);
        }
        self.rto_ms = self.srtt_ms as f64 + (cfg.g_ms as f64).max(k * self.rttvar_ms as f64);
        self.rto_ms
    }
}

/// CoCoA / CoCoA-strong, Californium-compat profile (spec §4.6).
#[derive(Debug, Clone)]
pub struct CocoaCf {
    cfg: CfConfig,
    strong: CfEstimator,
    weak: CfEstimator,
    /// The raw overall RTO in ms (before `getRTO()`'s multiplier and cap).
    rto_ms: i64,
    /// Aging clock; starts at endpoint creation.
    last_update: Instant,
    /// Exchanges started and not yet completed or failed (Californium's registered exchanges).
    in_flight: u32,
}

impl CocoaCf {
    /// `cocoa` (or `cocoa-strong`) with `profile = cf-compat`, created at `now`.
    pub fn new(p: &Params, now: Instant, strong_only: bool) -> CocoaCf {
        let cfg = CfConfig {
            ack_random_factor: p.float("ack_random_factor"),
            max_retransmit: p.int("max_retransmit") as u32,
            initial_rto_ms: ms(p, "initial_rto_s"),
            k_strong: p.float("k_strong"),
            k_weak: p.float("k_weak"),
            w_strong: p.float("w_strong"),
            w_weak: p.float("w_weak"),
            weak_max_retx: p.int("weak_max_retx") as u32,
            strong_only,
            g_ms: p.int("cf_g_ms"),
            srtt_gain: p.float("cf_srtt_gain"),
            rttvar_gain: p.float("cf_rttvar_gain"),
            rto_cap_ms: p.int("cf_rto_cap_ms"),
            first_timer_min_ms: p.int("cf_first_timer_min_ms"),
            timer_max_ms: ms(p, "timer_max_s"),
            vbf_low_thresh_ms: ms(p, "vbf_low_thresh_s"),
            vbf_low: p.float("vbf_low"),
            vbf_high_thresh_ms: ms(p, "vbf_high_thresh_s"),
            vbf_high: p.float("vbf_high"),
            vbf_mid: p.float("vbf_mid"),
            aging: p.flag("aging"),
            age_low_thresh_ms: ms(p, "age_low_thresh_s"),
            age_low_mult: p.float("age_low_mult"),
            age_high_thresh_ms: ms(p, "age_high_thresh_s"),
            age_high_mult: p.float("age_high_mult"),
            age_high_base_ms: ms(p, "age_high_base_s"),
            blind: p.choice("blind") != "off",
        };
        CocoaCf {
            rto_ms: cfg.initial_rto_ms,
            cfg,
            strong: CfEstimator::default(),
            weak: CfEstimator::default(),
            last_update: now,
            in_flight: 0,
        }
    }

    /// `getRTO()` with `n` registered exchanges (§4.6 item 5).
    fn get_rto(&self, n: u32) -> i64 {
        let n = if self.cfg.blind { n } else { 1 };
        if n > 1 {
            self.rto_ms
                .saturating_mul(n as i64)
                .min(self.cfg.rto_cap_ms)
        } else {
            self.rto_ms.min(self.cfg.rto_cap_ms)
        }
    }

    /// The VBF of a first timer (§4.6 item 7): strict thresholds, as in §4.4.
    fn vbf(&self, t_ms: i64) -> f64 {
        if t_ms > self.cfg.vbf_high_thresh_ms {
            self.cfg.vbf_high
        } else if t_ms < self.cfg.vbf_low_thresh_ms {
            self.cfg.vbf_low
        } else {
            self.cfg.vbf_mid
        }
    }

    /// §4.6 item 8: one aging step at most, reading `getRTO()`, `last_update = now`.
    fn age(&mut self, now: Instant, n: u32) {
        let idle_ms = (now - self.last_update).as_millis();
        let rto = self.get_rto(n);
        let c = &self.cfg;
        if rto < c.age_low_thresh_ms && idle_ms as f64 > c.age_low_mult * rto as f64 {
            self.rto_ms = 2 * rto;
            self.last_update = now;
        } else if rto > c.age_high_thresh_ms && idle_ms as f64 > c.age_high_mult * rto as f64 {
            self.rto_ms = c.age_high_base_ms + rto / 2;
            self.last_update = now;
        }
    }
}

impl RtoAlgorithm for CocoaCf {
    fn name(&self) -> &'static str {
        if self.cfg.strong_only {
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
        // The timer is computed before the exchange is registered, unless it was dequeued from
        // the NSTART queue, which registers it first (§4.6 item 5).
        let registered = if admission.dequeued {
            admission.in_flight
        } else {
            admission.in_flight.saturating_sub(1)
        };
        let mut t = self.get_rto(registered);
        // randInt[0, floor(1.5·T) − T], inclusive; always one draw (§0.4).
        let spread = java::trunc(t as f64 * self.cfg.ack_random_factor) - t;
        t += java::next_int(rng, spread.max(0) + 1);
        let t = t
            .min(self.cfg.timer_max_ms)
            .max(self.cfg.first_timer_min_ms.min(self.cfg.timer_max_ms));
        x.retransmissions = 0;
        x.scratch = Scratch::FixedFactor(self.vbf(t));
        x.timer = Duration::from_millis(t);
        self.in_flight = self.in_flight.saturating_add(1);
        if self.cfg.aging {
            // Now registered: n includes this exchange.
            self.age(now, admission.in_flight);
        }
        x.timer
    }

    fn expired(&mut self, _now: Instant, x: &mut Exchange, _rng: &mut dyn Random) -> Expiry {
        let f = match x.scratch {
            Scratch::FixedFactor(f) => f,
            _ => self.vbf(x.timer.as_millis()),
        };
        let timer_max_ms = self.cfg.timer_max_ms;
        expire_with(x, self.cfg.max_retransmit, |x| {
            let t = java::trunc(f * x.timer.as_millis() as f64).min(timer_max_ms);
            Duration::from_millis(t)
        })
    }

    fn completed(&mut self, c: &Completion<'_>, _x: &mut Exchange, _rng: &mut dyn Random) {
        // The completing exchange is still registered while the RTO is updated.
        let n = self.in_flight.max(1);
        self.in_flight = self.in_flight.saturating_sub(1);
        let m = c.rtt_from_original().as_millis().max(1);
        let r = c.retransmissions();
        let (e, w) = if r == 0 {
            (
                self.strong.update(m, self.cfg.k_strong, &self.cfg),
                self.cfg.w_strong,
            )
        } else if r <= self.cfg.weak_max_retx && !self.cfg.strong_only {
            (
                self.weak.update(m, self.cfg.k_weak, &self.cfg),
                self.cfg.w_weak,
            )
        } else {
            return;
        };
        self.rto_ms = java::round(w * e + (1.0 - w) * self.get_rto(n) as f64);
        self.last_update = c.ack_time;
    }

    fn failed(&mut self, _now: Instant, _x: &mut Exchange) {
        self.in_flight = self.in_flight.saturating_sub(1);
    }

    fn reset(&mut self, now: Instant) {
        self.strong = CfEstimator::default();
        self.weak = CfEstimator::default();
        self.rto_ms = self.cfg.initial_rto_ms;
        self.last_update = now;
        self.in_flight = 0;
    }

    fn rto(&self) -> Duration {
        Duration::from_millis(self.get_rto(1))
    }

    fn max_retransmit(&self) -> u32 {
        self.cfg.max_retransmit
    }

    fn snapshot(&self) -> Snapshot {
        Snapshot {
            rto: self.rto(),
            state: None,
            vars: vec![
                ("rto_ms", self.rto_ms as f64),
                ("strong_srtt_ms", self.strong.srtt_ms as f64),
                ("strong_rttvar_ms", self.strong.rttvar_ms as f64),
                ("strong_rto_ms", self.strong.rto_ms),
                ("weak_srtt_ms", self.weak.srtt_ms as f64),
                ("weak_rttvar_ms", self.weak.rttvar_ms as f64),
                ("weak_rto_ms", self.weak.rto_ms),
                ("in_flight", f64::from(self.in_flight)),
                ("last_update_s", self.last_update.as_secs_f64()),
            ],
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cocoa::harness::*;
    use crate::registry;
    use crate::rng::{ConstantRandom, ScriptedRandom};

    fn cf(settings: &[&str]) -> Box<dyn RtoAlgorithm> {
        let mut s = crate::params::Settings::parse(settings.iter().copied()).unwrap();
        s.set("profile", "cf-compat");
        registry::build("cocoa", &s, Instant::ZERO).unwrap()
    }

    fn ms(v: i64) -> Duration {
        Duration::from_millis(v)
    }

    #[test]
    fn reference_numbers_1150_713_485() {
        // spec §4.6: RTT 100 ms from the start, u = 0.
        let mut alg = cf(&[]);
        assert_eq!(alg.name(), "cocoa");
        let mut rng = ConstantRandom(0.0);
        let o = exchange(
            &mut *alg,
            Instant::ZERO,
            Admission::ALONE,
            Some(ms(100)),
            &mut rng,
        );
        assert_eq!(o.timers, [ms(2000)]);
        assert_eq!(var(&*alg, "strong_rto_ms"), 300.0);
        assert_eq!(alg.rto(), ms(1150));
        let o = exchange(
            &mut *alg,
            at(1.0),
            Admission::ALONE,
            Some(ms(100)),
            &mut rng,
        );
        assert_eq!(o.timers, [ms(1150)]);
        assert_eq!(var(&*alg, "strong_rttvar_ms"), 44.0);
        assert_eq!(var(&*alg, "strong_rto_ms"), 276.0);
        assert_eq!(alg.rto(), ms(713));
        let o = exchange(
            &mut *alg,
            at(2.0),
            Admission::ALONE,
            Some(ms(100)),
            &mut rng,
        );
        assert_eq!(o.timers, [ms(713)]);
        assert_eq!(var(&*alg, "strong_rttvar_ms"), 39.0);
        assert_eq!(var(&*alg, "strong_rto_ms"), 256.0);
        assert_eq!(alg.rto(), ms(485));
        // The clamp to 500 ms of the next first timer.
        let o = exchange(
            &mut *alg,
            at(3.0),
            Admission::ALONE,
            Some(ms(100)),
            &mut rng,
        );
        assert_eq!(o.timers, [ms(500)]);
    }

    fn to_1150(alg: &mut dyn RtoAlgorithm) {
        exchange(
            alg,
            Instant::ZERO,
            Admission::ALONE,
            Some(ms(100)),
            &mut ConstantRandom(0.0),
        );
        assert_eq!(alg.rto(), ms(1150));
    }

    #[test]
    fn first_timer_dither_is_an_inclusive_integer_draw() {
        // T = 1150: randInt[0, 1725 - 1150] -> [1150, 1725], one draw.
        let mut alg = cf(&[]);
        to_1150(&mut *alg);
        let mut rng = ScriptedRandom::new(&[0.0, 0.999_999_999, 0.5]);
        for expect in [1150, 1725, 1150 + 288] {
            let t = alg.start(at(1.0), Admission::ALONE, &mut Exchange::new(), &mut rng);
            assert_eq!(t, ms(expect));
        }
        assert_eq!(rng.consumed(), 3);
    }

    #[test]
    fn undithered_1150_backs_off_with_a_fixed_factor_to_60_s() {
        // VBF 2 for 1150 ms, fixed: 2300, 4600, 9200, 18400, 36800, 60000 (no 32 s truncation).
        let mut alg = cf(&["max_retransmit=20"]);
        to_1150(&mut *alg);
        let mut x = Exchange::new();
        let mut rng = ConstantRandom(0.0);
        let mut timers = vec![alg.start(at(1.0), Admission::ALONE, &mut x, &mut rng)];
        for _ in 0..7 {
            match alg.expired(at(1.0), &mut x, &mut rng) {
                Expiry::Retransmit(t) => timers.push(t),
                Expiry::GiveUp => unreachable!(),
            }
        }
        let expect = [1150, 2300, 4600, 9200, 18400, 36800, 60000, 60000];
        assert_eq!(timers, expect.map(ms));
    }

    #[test]
    fn vbf_is_computed_once_from_the_first_timer() {
        // 500 ms (< 1 s) -> ×3 at every step, even past 3 s: 1500, 4500, 13500, 40500, 60000.
        let mut alg = cf(&["max_retransmit=5", "initial_rto_s=0.5"]);
        let o = exchange(
            &mut *alg,
            Instant::ZERO,
            Admission::ALONE,
            None,
            &mut ConstantRandom(0.0),
        );
        let expect = [500, 1500, 4500, 13500, 40500, 60000];
        assert_eq!(o.timers, expect.map(ms));
        assert!(!o.acked);
        // > 3 s -> ×1.5 (trunc): 3001 -> 4501.
        let mut alg = cf(&["max_retransmit=1", "initial_rto_s=3.001"]);
        let o = exchange(
            &mut *alg,
            Instant::ZERO,
            Admission::ALONE,
            None,
            &mut ConstantRandom(0.0),
        );
        assert_eq!(o.timers, [ms(3001), ms(4501)]);
    }

    #[test]
    fn get_rto_multiplier_excludes_the_new_exchange_unless_dequeued() {
        let mut alg = cf(&[]);
        let adm = |n, dequeued| Admission {
            in_flight: n,
            dequeued,
        };
        let t = |alg: &mut dyn RtoAlgorithm, a| {
            alg.start(
                Instant::ZERO,
                a,
                &mut Exchange::new(),
                &mut ConstantRandom(0.0),
            )
        };
        // "two running -> ×2", not the draft's ×3.
        assert_eq!(t(&mut *alg, adm(1, false)), ms(2000));
        assert_eq!(t(&mut *alg, adm(2, false)), ms(2000));
        assert_eq!(t(&mut *alg, adm(3, false)), ms(4000));
        assert_eq!(t(&mut *alg, adm(2, true)), ms(4000));
        // Capped at 32 s by getRTO(), then the timer at 60 s.
        assert_eq!(t(&mut *alg, adm(40, false)), ms(32000));
        // Never switched off after samples (CoCoA's flag is never set).
        let mut alg = cf(&[]);
        to_1150(&mut *alg);
        assert_eq!(t(&mut *alg, adm(3, false)), ms(2300));
        // blind = off disables it.
        let mut alg = cf(&["blind=off"]);
        assert_eq!(t(&mut *alg, adm(3, false)), ms(2000));
    }

    #[test]
    fn overall_update_reads_get_rto_with_the_registered_exchanges() {
        // Two exchanges in flight; the first completes clean at 100 ms while both are
        // registered: rto = round(0.5·300 + 0.5·min(2000·2, 32000)) = 2150.
        let mut alg = cf(&[]);
        let mut rng = ConstantRandom(0.0);
        let mut x1 = Exchange::new();
        let mut x2 = Exchange::new();
        alg.start(Instant::ZERO, Admission::ALONE, &mut x1, &mut rng);
        let adm2 = Admission {
            in_flight: 2,
            dequeued: false,
        };
        alg.start(Instant::ZERO, adm2, &mut x2, &mut rng);
        let tx = [Instant::ZERO];
        let c = Completion {
            ack_time: at(0.1),
            tx_times: &tx,
            answered: None,
            timer_in_force: x1.timer,
        };
        alg.completed(&c, &mut x1, &mut rng);
        assert_eq!(var(&*alg, "rto_ms"), 2150.0);
        assert_eq!(var(&*alg, "in_flight"), 1.0);
        alg.failed(at(5.0), &mut x2);
        assert_eq!(var(&*alg, "in_flight"), 0.0);
        assert_eq!(var(&*alg, "rto_ms"), 2150.0);
    }

    #[test]
    fn weak_samples_floor_the_ms_and_use_k_weak() {
        // 2000 expires, 4000; ACK 2500.9 ms after the original (r = 1): m = 2500,
        // E_w = 2500 + max(100, 1·1250) = 3750; rto = round(0.25·3750 + 0.75·2000) = 2438.
        let mut alg = cf(&[]);
        let o = exchange(
            &mut *alg,
            Instant::ZERO,
            Admission::ALONE,
            Some(Duration::from_micros(2_500_900)),
            &mut ConstantRandom(0.0),
        );
        assert_eq!(o.timers, [ms(2000), ms(4000)]);
        assert_eq!(var(&*alg, "weak_rto_ms"), 3750.0);
        assert_eq!(alg.rto(), ms(2438));
        // cocoa-strong ignores it.
        let mut s = crate::params::Settings::new();
        s.set("profile", "cf-compat");
        let mut alg = registry::build("cocoa-strong", &s, Instant::ZERO).unwrap();
        assert_eq!(alg.name(), "cocoa-strong");
        exchange(
            &mut *alg,
            Instant::ZERO,
            Admission::ALONE,
            Some(ms(2500)),
            &mut ConstantRandom(0.0),
        );
        assert_eq!(alg.rto(), ms(2000));
    }

    #[test]
    fn sub_millisecond_samples_count_as_one_ms() {
        let mut alg = cf(&[]);
        exchange(
            &mut *alg,
            Instant::ZERO,
            Admission::ALONE,
            Some(Duration::from_micros(300)),
            &mut ConstantRandom(0.0),
        );
        assert_eq!(var(&*alg, "strong_srtt_ms"), 1.0);
        assert_eq!(var(&*alg, "strong_rttvar_ms"), 0.0);
        // E = 1 + max(100, 0) = 101; rto = round(50.5 + 1000) = 1051.
        assert_eq!(alg.rto(), ms(1051));
    }

    #[test]
    fn aging_runs_after_the_first_timer_one_step_with_last_update_now() {
        // rto 485 after three samples (last at 2.1 s). Idle 16·485 = 7.76 s is not enough;
        // 8 s is: the first timer still uses 485 -> 500, then rto = 970 and last_update = now.
        let mut alg = cf(&[]);
        let mut rng = ConstantRandom(0.0);
        for i in 0..3 {
            exchange(
                &mut *alg,
                at(i as f64),
                Admission::ALONE,
                Some(ms(100)),
                &mut rng,
            );
        }
        assert_eq!(alg.rto(), ms(485));
        let t = alg.start(
            at(2.1 + 7.76),
            Admission::ALONE,
            &mut Exchange::new(),
            &mut rng,
        );
        assert_eq!((t, alg.rto()), (ms(500), ms(485)));
        let t = alg.start(at(10.2), Admission::ALONE, &mut Exchange::new(), &mut rng);
        assert_eq!((t, alg.rto()), (ms(500), ms(970)));
        assert_eq!(var(&*alg, "last_update_s"), 10.2);
        // The remainder is lost: 30 s later only one more step (970 < 1000 -> 1940).
        alg.start(at(40.2), Admission::ALONE, &mut Exchange::new(), &mut rng);
        assert_eq!(alg.rto(), ms(1940));
        // A high RTO: 8000 ms idle 40 s -> 1000 + 4000 = 5000, once.
        let mut alg = cf(&["initial_rto_s=8"]);
        alg.start(at(40.0), Admission::ALONE, &mut Exchange::new(), &mut rng);
        assert_eq!(alg.rto(), ms(5000));
        // aging = false: no change.
        let mut alg = cf(&["initial_rto_s=8", "aging=false"]);
        alg.start(at(40.0), Admission::ALONE, &mut Exchange::new(), &mut rng);
        assert_eq!(alg.rto(), ms(8000));
    }

    #[test]
    fn unlimited_timer_max_saturates_instead_of_overflowing() {
        let mut alg = cf(&["timer_max_s=inf", "max_retransmit=255"]);
        let o = exchange(
            &mut *alg,
            Instant::ZERO,
            Admission::ALONE,
            None,
            &mut ConstantRandom(0.0),
        );
        assert_eq!(o.timers.len(), 256);
        assert_eq!(o.timers[10], ms(2000 << 10));
        assert_eq!(*o.timers.last().unwrap(), ms(MS_MAX));
    }

    #[test]
    fn gives_up_after_max_retransmit_and_reset_forgets() {
        let mut alg = cf(&[]);
        let o = exchange(
            &mut *alg,
            Instant::ZERO,
            Admission::ALONE,
            None,
            &mut ConstantRandom(0.0),
        );
        assert_eq!(o.timers, [2000, 4000, 8000, 16000, 32000].map(ms));
        assert!(!o.acked);
        assert_eq!(alg.rto(), ms(2000));
        to_1150(&mut *alg);
        alg.reset(at(50.0));
        assert_eq!(alg.rto(), ms(2000));
        assert_eq!(var(&*alg, "strong_srtt_ms"), 0.0);
        assert_eq!(var(&*alg, "last_update_s"), 50.0);
    }

    #[test]
    fn rfc_gains_on_the_same_trace_give_1150_700_456_25() {
        let mut alg =
            registry::build("cocoa", &crate::params::Settings::new(), Instant::ZERO).unwrap();
        let mut rng = ConstantRandom(0.0);
        let mut rtos = vec![];
        for i in 0..3 {
            exchange(
                &mut *alg,
                at(i as f64),
                Admission::ALONE,
                Some(ms(100)),
                &mut rng,
            );
            rtos.push(alg.rto());
        }
        assert_eq!(rtos, [us(1_150_000), us(700_000), us(456_250)]);
    }
}
