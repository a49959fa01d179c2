//! Tests of `cocoa` and `cocoa-strong` (RFC profile): the worked examples of
//! draft-ietf-core-cocoa-03 and every resolved-ambiguity alternative of plain CoCoA
//! (docs/algorithms.md).

use super::harness::*;
use super::*;
use crate::rng::{ConstantRandom, ScriptedRandom};

fn cocoa(settings: &[&str]) -> Cocoa {
    Cocoa::new(&params(GROUPS, settings), Instant::ZERO, false)
}

/// Sets the overall RTO as if a sample had been taken at `t`.
fn with_rto(alg: &mut Cocoa, rto_s: f64, t: Instant) {
    alg.core.rto_s = rto_s;
    alg.core.has_sample = true;
    alg.core.last_update = t;
}

fn first_timer(alg: &mut Cocoa, now: Instant, adm: Admission, u: f64) -> Duration {
    alg.start(now, adm, &mut Exchange::new(), &mut ConstantRandom(u))
}

#[test]
fn example_a_convergence_then_weak_samples() {
    // draft-ietf-core-cocoa-03 A: RTT 0.1 s three times, then 1.2 s; u = 0.
    let mut alg = cocoa(&[]);
    let mut rng = ConstantRandom(0.0);
    let mut t = Instant::ZERO;
    let mut run = |alg: &mut Cocoa, rtt: f64| {
        let o = exchange(alg, t, Admission::ALONE, Some(secs(rtt)), &mut rng);
        t = o.end + secs(0.5);
        o
    };
    // Exchange 1: T0 = 2.0; strong srtt 0.1, rttvar 0.05, E_s 0.3; RTO 1.15.
    assert_eq!(run(&mut alg, 0.1).timers, [us(2_000_000)]);
    close(var(&alg, "strong_srtt_s"), 0.1);
    close(var(&alg, "strong_rttvar_s"), 0.05);
    close(var(&alg, "strong_rto_s"), 0.3);
    close(alg.core.rto_s, 1.15);
    // Exchange 2: T0 = 1.15; rttvar 0.0375, E_s 0.25; RTO 0.7.
    assert_eq!(run(&mut alg, 0.1).timers, [us(1_150_000)]);
    close(var(&alg, "strong_rttvar_s"), 0.0375);
    close(var(&alg, "strong_rto_s"), 0.25);
    close(alg.core.rto_s, 0.7);
    // Exchange 3: T0 = 0.7; rttvar 0.028125, E_s 0.2125; RTO 0.45625.
    assert_eq!(run(&mut alg, 0.1).timers, [us(700_000)]);
    close(var(&alg, "strong_rttvar_s"), 0.028125);
    close(var(&alg, "strong_rto_s"), 0.2125);
    close(alg.core.rto_s, 0.45625);
    assert_eq!(alg.rto(), us(456_250));
    // Exchange 4: 0.45625 expires, ×3 -> 1.36875; ACK 1.2 (r = 1); weak first sample.
    let o = run(&mut alg, 1.2);
    assert_eq!(o.timers, [us(456_250), us(1_368_750)]);
    assert_eq!(o.tx.len(), 2);
    close(var(&alg, "weak_srtt_s"), 1.2);
    close(var(&alg, "weak_rttvar_s"), 0.6);
    close(var(&alg, "weak_rto_s"), 1.8);
    close(alg.core.rto_s, 0.7921875);
    // Exchange 5: 0.7921875, ×3 -> 2.3765625. In exact decimals both are half-µs ties
    // rounding up (792188, 2376563). In f64, E_w = 1.2 + 0.6 = 1.7999999999999998, so the
    // RTO is 0.7921874999999999 and its timer rounds DOWN to 792187 µs (a
    // f64-vs-decimal tie of the rounding rule in docs/algorithms.md, 'Conventions', reported); ×3
    // of the f64 state gives exactly 2.3765625 -> 2376563.
    let o = run(&mut alg, 1.2);
    assert_eq!(o.timers, [us(792_187), us(2_376_563)]);
    close(var(&alg, "weak_rttvar_s"), 0.45);
    close(var(&alg, "weak_rto_s"), 1.65);
    close(alg.core.rto_s, 1.006640625);
    // Exchange 6: 1.006640625, ×2 (1 <= T <= 3) -> 2.01328125.
    let o = run(&mut alg, 1.2);
    assert_eq!(o.timers, [us(1_006_641), us(2_013_281)]);
    close(var(&alg, "weak_rttvar_s"), 0.3375);
    close(var(&alg, "weak_rto_s"), 1.5375);
    close(alg.core.rto_s, 1.13935546875);
    // Exchange 7: u > 0.10645 gives T0 > 1.2 s and a clean exchange.
    let mut below = alg.clone();
    let o = exchange(
        &mut below,
        t,
        Admission::ALONE,
        Some(secs(1.2)),
        &mut ScriptedRandom::new(&[0.1064]),
    );
    assert!(o.timers[0] < secs(1.2) && o.tx.len() == 2, "{o:?}");
    let o = exchange(
        &mut alg,
        t,
        Admission::ALONE,
        Some(secs(1.2)),
        &mut ScriptedRandom::new(&[0.1065]),
    );
    assert!(o.timers[0] > secs(1.2) && o.tx.len() == 1, "{o:?}");
}

#[test]
fn first_timer_is_dithered_by_one_draw() {
    // draft-ietf-core-cocoa-03 A ex 1: u = 0.2 would give 2.2.
    let mut alg = cocoa(&[]);
    let mut rng = ScriptedRandom::new(&[0.2]);
    let t = alg.start(
        Instant::ZERO,
        Admission::ALONE,
        &mut Exchange::new(),
        &mut rng,
    );
    assert_eq!(t, us(2_200_000));
    assert_eq!(rng.consumed(), 1);
}

fn series(alg: &mut Cocoa, u: f64, n: usize) -> Vec<Duration> {
    let mut x = Exchange::new();
    let mut rng = ConstantRandom(u);
    let mut out = vec![alg.start(Instant::ZERO, Admission::ALONE, &mut x, &mut rng)];
    while out.len() < n {
        match alg.expired(Instant::ZERO, &mut x, &mut rng) {
            Expiry::Retransmit(t) => out.push(t),
            Expiry::GiveUp => break,
        }
    }
    out
}

#[test]
fn example_b_vbf_series_truncated_at_32_s() {
    // draft-ietf-core-cocoa-03 B: 0.45, 1.35 (×3), 2.7 (×2), 5.4 (×2, 2.7 <= 3), 8.1 (×1.5), 12.15,
    // 18.225, 27.3375, 32 (truncated), 32.
    let mut alg = cocoa(&["max_retransmit=20"]);
    with_rto(&mut alg, 0.45, Instant::ZERO);
    let expect = [
        450_000, 1_350_000, 2_700_000, 5_400_000, 8_100_000, 12_150_000, 18_225_000, 27_337_500,
        32_000_000, 32_000_000, 32_000_000,
    ];
    assert_eq!(series(&mut alg, 0.0, 11), expect.map(us));
}

#[test]
fn vbf_thresholds_are_strict_so_1_s_and_3_s_double() {
    let mut alg = cocoa(&[]);
    with_rto(&mut alg, 1.0, Instant::ZERO);
    assert_eq!(
        series(&mut alg, 0.0, 3),
        [1, 2, 4].map(|s| us(s * 1_000_000))
    );
    with_rto(&mut alg, 3.0, Instant::ZERO);
    assert_eq!(
        series(&mut alg, 0.0, 3),
        [us(3_000_000), us(6_000_000), us(9_000_000)]
    );
    with_rto(&mut alg, 0.999_999, Instant::ZERO);
    assert_eq!(series(&mut alg, 0.0, 2), [us(999_999), us(2_999_997)]);
}

#[test]
fn vbf_from_first_keeps_the_first_factor() {
    // docs/algorithms.md, ambiguity #9: the factor of the dithered first timer (0.45 s -> ×3) for
    // every step.
    let mut alg = cocoa(&["max_retransmit=20", "vbf_from_first=true"]);
    with_rto(&mut alg, 0.45, Instant::ZERO);
    let expect = [
        450_000, 1_350_000, 4_050_000, 12_150_000, 32_000_000, 32_000_000,
    ];
    assert_eq!(series(&mut alg, 0.0, 6), expect.map(us));
    // The first timer is the dithered one: 0.8·1.5 = 1.2 s -> ×2.
    with_rto(&mut alg, 0.8, Instant::ZERO);
    assert_eq!(
        series(&mut alg, 1.0, 3),
        [1_200_000, 2_400_000, 4_800_000].map(us)
    );
}

#[test]
fn truncation_never_shrinks_unless_literal() {
    // A 40 s first timer (> BACKOFF_CAP): ×1.5 = 60, truncated to max(32, 40) = 40.
    let mut alg = cocoa(&[]);
    with_rto(&mut alg, 40.0, Instant::ZERO);
    assert_eq!(
        series(&mut alg, 0.0, 3),
        [40, 40, 40].map(|s| us(s * 1_000_000))
    );
    // docs/algorithms.md, ambiguity #10 `literal`: min(f·T, 32 s) shrinks it to 32.
    let mut alg = cocoa(&["truncation=literal"]);
    with_rto(&mut alg, 40.0, Instant::ZERO);
    assert_eq!(
        series(&mut alg, 0.0, 3),
        [40, 32, 32].map(|s| us(s * 1_000_000))
    );
    // No cap at all: only TIMER_MAX bounds the series.
    let mut alg = cocoa(&["backoff_cap_s=inf", "max_retransmit=20"]);
    with_rto(&mut alg, 8.0, Instant::ZERO);
    assert_eq!(
        series(&mut alg, 0.0, 6),
        [8.0, 12.0, 18.0, 27.0, 40.5, 60.0].map(secs)
    );
}

#[test]
fn timer_max_caps_the_first_timer() {
    let mut alg = cocoa(&[]);
    with_rto(&mut alg, 50.0, Instant::ZERO);
    assert_eq!(
        first_timer(&mut alg, Instant::ZERO, Admission::ALONE, 0.5),
        secs(60.0)
    );
    let mut alg = cocoa(&["timer_max_s=inf"]);
    with_rto(&mut alg, 50.0, Instant::ZERO);
    assert_eq!(
        first_timer(&mut alg, Instant::ZERO, Admission::ALONE, 0.5),
        secs(62.5)
    );
}

#[test]
fn rto_max_clamps_the_overall_rto() {
    // A 100 s strong sample: E_s = 100 + 4·50 = 300, blend 151 -> clamped to 60.
    let mut alg = cocoa(&["max_retransmit=0"]);
    let o = exchange(
        &mut alg,
        Instant::ZERO,
        Admission::ALONE,
        None,
        &mut ConstantRandom(0.0),
    );
    assert!(!o.acked);
    let tx = [Instant::ZERO];
    let c = Completion {
        ack_time: at(100.0),
        tx_times: &tx,
        answered: None,
        timer_in_force: secs(2.0),
    };
    alg.completed(&c, &mut Exchange::new(), &mut ConstantRandom(0.0));
    close(var(&alg, "strong_rto_s"), 300.0);
    assert_eq!(alg.rto(), secs(60.0));
}

#[test]
fn gives_up_after_max_retransmit_without_state_change() {
    // Default MAX_RETRANSMIT 4: 2, 4, 6 (×1.5 above 3 s), 9, 13.5; then give-up.
    let mut alg = cocoa(&[]);
    let before = alg.snapshot();
    let o = exchange(
        &mut alg,
        Instant::ZERO,
        Admission::ALONE,
        None,
        &mut ConstantRandom(0.0),
    );
    assert!(!o.acked);
    assert_eq!(o.timers, [2.0, 4.0, 6.0, 9.0, 13.5].map(secs));
    assert_eq!(o.end, at(34.5));
    assert_eq!(alg.snapshot(), before);
}

#[test]
fn three_or_more_retransmissions_give_no_sample() {
    let mut alg = cocoa(&[]);
    with_rto(&mut alg, 0.45625, Instant::ZERO);
    let before = alg.snapshot();
    // ANRW 2018 example 1: 0.45625, 1.36875, 2.7375, 5.475; ACK at 5.0 (r = 3).
    let o = exchange(
        &mut alg,
        Instant::ZERO,
        Admission::ALONE,
        Some(secs(5.0)),
        &mut ConstantRandom(0.0),
    );
    assert_eq!(o.timers, [0.45625, 1.36875, 2.7375, 5.475].map(secs));
    assert_eq!(o.tx, [0.0, 0.45625, 1.825, 4.5625].map(at));
    assert_eq!(alg.snapshot(), before);
}

#[test]
fn cocoa_strong_ignores_weak_samples() {
    let mut alg = Cocoa::new(&params(GROUPS, &[]), Instant::ZERO, true);
    assert_eq!(alg.name(), "cocoa-strong");
    let mut rng = ConstantRandom(0.0);
    exchange(
        &mut alg,
        Instant::ZERO,
        Admission::ALONE,
        Some(secs(0.1)),
        &mut rng,
    );
    close(alg.core.rto_s, 1.15);
    // 1.15 expires, 2.3; ACK at 1.5 (r = 1): ignored by cocoa-strong.
    let before = alg.snapshot();
    let o = exchange(
        &mut alg,
        at(1.0),
        Admission::ALONE,
        Some(secs(1.5)),
        &mut rng,
    );
    assert_eq!(o.tx.len(), 2);
    assert_eq!(alg.snapshot(), before);
}

#[test]
fn example_c_aging_is_lazy_strict_and_cumulative() {
    let t0 = Instant::ZERO;
    // RTO 0.3 s, idle 10 s: 10 > 4.8 -> 0.6 with 5.2 s left; 5.2 < 9.6 -> 0.6.
    let mut alg = cocoa(&[]);
    with_rto(&mut alg, 0.3, t0);
    assert_eq!(
        first_timer(&mut alg, at(10.0), Admission::ALONE, 0.0),
        secs(0.6)
    );
    close(alg.core.rto_s, 0.6);
    assert_eq!(alg.core.last_update, at(4.8));
    // Evaluated twice (at 5 s and 10 s), the result is the same: lazy = running timer.
    let mut alg = cocoa(&[]);
    with_rto(&mut alg, 0.3, t0);
    first_timer(&mut alg, at(5.0), Admission::ALONE, 0.0);
    assert_eq!(
        first_timer(&mut alg, at(10.0), Admission::ALONE, 0.0),
        secs(0.6)
    );
    assert_eq!(alg.core.last_update, at(4.8));
    // RTO 0.1 s, idle 10 s: 0.2, 0.4 (last_update advanced 1.6 + 3.2 s) -> 0.4.
    let mut alg = cocoa(&[]);
    with_rto(&mut alg, 0.1, t0);
    assert_eq!(
        first_timer(&mut alg, at(10.0), Admission::ALONE, 0.0),
        secs(0.4)
    );
    assert_eq!(alg.core.last_update, at(4.8));
    // RTO 4 s, idle 16.5 s -> 3.0; idle exactly 16 s -> no change (strict >).
    let mut alg = cocoa(&[]);
    with_rto(&mut alg, 4.0, t0);
    assert_eq!(
        first_timer(&mut alg, at(16.5), Admission::ALONE, 0.0),
        secs(3.0)
    );
    let mut alg = cocoa(&[]);
    with_rto(&mut alg, 4.0, t0);
    assert_eq!(
        first_timer(&mut alg, at(16.0), Admission::ALONE, 0.0),
        secs(4.0)
    );
    // RTO 8 s, idle 60 s: 5 (32 s used), 3.5 (20 s used), 8 s left < 14 -> 3.5.
    let mut alg = cocoa(&[]);
    with_rto(&mut alg, 8.0, t0);
    assert_eq!(
        first_timer(&mut alg, at(60.0), Admission::ALONE, 0.0),
        secs(3.5)
    );
    assert_eq!(alg.core.last_update, at(52.0));
}

#[test]
fn aging_off_keeps_the_rto() {
    let mut alg = cocoa(&["aging=false"]);
    with_rto(&mut alg, 0.1, Instant::ZERO);
    assert_eq!(
        first_timer(&mut alg, at(1000.0), Admission::ALONE, 0.0),
        secs(0.1)
    );
}

#[test]
fn cf_compat_aging_runs_after_the_first_timer_and_loses_the_remainder() {
    // docs/algorithms.md, ambiguity #12 `cf-compat`: RTO 0.1, idle 10 s -> one step to 0.2,
    // last_update = now; the first timer still uses 0.1.
    let mut alg = cocoa(&["aging_style=cf-compat"]);
    with_rto(&mut alg, 0.1, Instant::ZERO);
    assert_eq!(
        first_timer(&mut alg, at(10.0), Admission::ALONE, 0.0),
        secs(0.1)
    );
    close(alg.core.rto_s, 0.2);
    assert_eq!(alg.core.last_update, at(10.0));
    assert_eq!(
        first_timer(&mut alg, at(10.5), Admission::ALONE, 0.0),
        secs(0.2)
    );
}

#[test]
fn example_d_blind_rto_before_any_sample() {
    // NSTART = 4, no sample: 2, 4, 6 s; each dithered ×[1, 1.5).
    let mut alg = cocoa(&[]);
    let adm = |n| Admission {
        in_flight: n,
        dequeued: false,
    };
    for (n, s) in [(1, 2.0), (2, 4.0), (3, 6.0)] {
        assert_eq!(first_timer(&mut alg, Instant::ZERO, adm(n), 0.0), secs(s));
        assert_eq!(
            first_timer(&mut alg, Instant::ZERO, adm(n), 0.5),
            secs(s * 1.25)
        );
    }
    // Capped at RTO_MAX, then TIMER_MAX.
    assert_eq!(
        first_timer(&mut alg, Instant::ZERO, adm(40), 0.0),
        secs(60.0)
    );
    // After a sample the blind rule is over.
    exchange(
        &mut alg,
        Instant::ZERO,
        adm(1),
        Some(secs(0.1)),
        &mut ConstantRandom(0.0),
    );
    assert_eq!(first_timer(&mut alg, at(1.0), adm(3), 0.0), secs(1.15));
    // blind = off: always INITIAL_RTO.
    let mut alg = cocoa(&["blind=off"]);
    assert_eq!(first_timer(&mut alg, Instant::ZERO, adm(3), 0.0), secs(2.0));
}

#[test]
fn cf_compat_blind_excludes_the_new_exchange_and_never_ends() {
    // docs/algorithms.md, ambiguity #11: n' = in flight excluding the new one, unless it was
    // dequeued.
    let mut alg = cocoa(&["blind=cf-compat"]);
    let adm = |n, dequeued| Admission {
        in_flight: n,
        dequeued,
    };
    assert_eq!(
        first_timer(&mut alg, Instant::ZERO, adm(2, false), 0.0),
        secs(2.0)
    );
    assert_eq!(
        first_timer(&mut alg, Instant::ZERO, adm(3, false), 0.0),
        secs(4.0)
    );
    assert_eq!(
        first_timer(&mut alg, Instant::ZERO, adm(2, true), 0.0),
        secs(4.0)
    );
    exchange(
        &mut alg,
        Instant::ZERO,
        adm(1, false),
        Some(secs(0.1)),
        &mut ConstantRandom(0.0),
    );
    assert_eq!(
        first_timer(&mut alg, at(1.0), adm(3, false), 0.0),
        secs(2.3)
    );
}

#[test]
fn pseudocode_literal_estimator_is_selectable() {
    // docs/algorithms.md, ambiguity #6: a rising second sample makes the literal RTTVAR negative.
    let mut alg = cocoa(&["estimator=pseudocode_literal"]);
    let mut rng = ConstantRandom(0.0);
    exchange(
        &mut alg,
        Instant::ZERO,
        Admission::ALONE,
        Some(secs(0.1)),
        &mut rng,
    );
    close(alg.core.rto_s, 1.15);
    exchange(
        &mut alg,
        at(1.0),
        Admission::ALONE,
        Some(secs(1.0)),
        &mut rng,
    );
    close(var(&alg, "strong_rttvar_s"), -0.1875);
    close(var(&alg, "strong_rto_s"), 0.2125 - 0.75);
    close(alg.core.rto_s, 0.5 * (0.2125 - 0.75) + 0.5 * 1.15);
}

#[test]
fn fasor18_preset_turns_aging_off_and_sets_the_caps() {
    use crate::params::Settings;
    let s = Settings::parse(["preset=fasor18"]).unwrap();
    let (_, p) = crate::registry::resolve("cocoa", &s).unwrap();
    assert!(!p.flag("aging"));
    assert_eq!(p.int("max_retransmit"), 20);
    assert_eq!(p.secs("backoff_cap_s"), secs(32.0));
    assert_eq!(p.secs("timer_max_s"), secs(60.0));
    assert_eq!(p.secs("rto_max_s"), secs(60.0));
    for name in [
        "cocoa",
        "cocoa-strong",
        "cocoa-fb1",
        "cocoa-fb2",
        "gsrtc",
        "cocoa++",
    ] {
        let alg = crate::registry::build(name, &s, Instant::ZERO).unwrap();
        assert_eq!(alg.name(), name);
        assert_eq!(alg.max_retransmit(), 20);
        assert_eq!(alg.rto(), secs(2.0));
    }
    let mut s = s.clone();
    s.set("profile", "cf-compat");
    let alg = crate::registry::build("cocoa-strong", &s, Instant::ZERO).unwrap();
    assert_eq!((alg.name(), alg.max_retransmit()), ("cocoa-strong", 20));
}

#[test]
fn reset_forgets_the_destination() {
    let mut alg = cocoa(&[]);
    exchange(
        &mut alg,
        Instant::ZERO,
        Admission::ALONE,
        Some(secs(0.1)),
        &mut ConstantRandom(0.0),
    );
    assert_eq!(alg.rto(), secs(1.15));
    alg.reset(at(100.0));
    let fresh = Cocoa::new(&params(GROUPS, &[]), at(100.0), false);
    assert_eq!(alg.snapshot(), fresh.snapshot());
    assert_eq!(alg.rto(), secs(2.0));
    // The blind rule is back.
    let adm = Admission {
        in_flight: 2,
        dequeued: false,
    };
    assert_eq!(first_timer(&mut alg, at(100.0), adm, 0.0), secs(4.0));
}
