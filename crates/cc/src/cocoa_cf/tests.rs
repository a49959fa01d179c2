//! Tests of the cf-compat profile of `cocoa` / `cocoa-strong`: the reference numbers of Californium
//! 3.x Cocoa and each of its switches.

use super::*;
use crate::cocoa::harness::*;
use crate::registry;
use crate::rng::{ConstantRandom, Random, ScriptedRandom};

fn cf(settings: &[&str]) -> Box<dyn RtoAlgorithm> {
    let mut s = crate::params::Settings::parse(settings.iter().copied()).unwrap();
    s.set("profile", "cf-compat");
    registry::build("cocoa", &s, Instant::ZERO).unwrap()
}

fn ms(v: i64) -> Duration {
    Duration::from_millis(v)
}

/// One exchange alone from `t` s, answered 100 ms after its first transmission (the RTT of the
/// reference numbers, Californium 3.x Cocoa).
fn answered_after_100_ms(alg: &mut dyn RtoAlgorithm, t: f64, rng: &mut dyn Random) -> Outcome {
    exchange(alg, at(t), Admission::ALONE, Some(ms(100)), rng)
}

#[test]
fn reference_numbers_1150_713_485() {
    // Californium 3.x Cocoa: RTT 100 ms from the start, u = 0.
    let mut alg = cf(&[]);
    assert_eq!(alg.name(), "cocoa");
    let mut rng = ConstantRandom(0.0);
    let o = answered_after_100_ms(&mut *alg, 0.0, &mut rng);
    assert_eq!(o.timers, [ms(2000)]);
    assert_eq!(var(&*alg, "strong_rto_ms"), 300.0);
    assert_eq!(alg.rto(), ms(1150));
    let o = answered_after_100_ms(&mut *alg, 1.0, &mut rng);
    assert_eq!(o.timers, [ms(1150)]);
    assert_eq!(var(&*alg, "strong_rttvar_ms"), 44.0);
    assert_eq!(var(&*alg, "strong_rto_ms"), 276.0);
    assert_eq!(alg.rto(), ms(713));
    let o = answered_after_100_ms(&mut *alg, 2.0, &mut rng);
    assert_eq!(o.timers, [ms(713)]);
    assert_eq!(var(&*alg, "strong_rttvar_ms"), 39.0);
    assert_eq!(var(&*alg, "strong_rto_ms"), 256.0);
    assert_eq!(alg.rto(), ms(485));
    // The clamp to 500 ms of the next first timer.
    let o = answered_after_100_ms(&mut *alg, 3.0, &mut rng);
    assert_eq!(o.timers, [ms(500)]);
}

fn to_1150(alg: &mut dyn RtoAlgorithm) {
    answered_after_100_ms(alg, 0.0, &mut ConstantRandom(0.0));
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
        answered_after_100_ms(&mut *alg, i as f64, &mut rng);
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
    let mut alg = registry::build("cocoa", &crate::params::Settings::new(), Instant::ZERO).unwrap();
    let mut rng = ConstantRandom(0.0);
    let mut rtos = vec![];
    for i in 0..3 {
        answered_after_100_ms(&mut *alg, i as f64, &mut rng);
        rtos.push(alg.rto());
    }
    assert_eq!(rtos, [us(1_150_000), us(700_000), us(456_250)]);
}

#[test]
fn first_timer_floor_can_be_switched_off() {
    // docs/algorithms.md, ambiguity #25 for the cf-compat profile: the 485 ms RTO of the reference
    // numbers is used as it is when cf_first_timer_min_ms = 0 (500 ms by default).
    for (floor, t0) in [("500", 500), ("0", 485)] {
        let mut alg = cf(&[&format!("cf_first_timer_min_ms={floor}")]);
        let mut rng = ConstantRandom(0.0);
        for i in 0..3 {
            answered_after_100_ms(&mut *alg, f64::from(i), &mut rng);
        }
        assert_eq!(alg.rto(), ms(485));
        let o = answered_after_100_ms(&mut *alg, 3.0, &mut rng);
        assert_eq!(o.timers, [ms(t0)], "cf_first_timer_min_ms={floor}");
    }
}
