//! Tests of `fasor` and `fasor-token`: the worked examples of draft-ietf-core-fasor-02, the
//! timer-series table of draft-ietf-core-fasor-02 and every resolved-ambiguity alternative
//! (docs/algorithms.md, #16–#22).

use super::*;
use crate::params::Settings;
use crate::rng::{ConstantRandom, ScriptedRandom};
use crate::testutil::{run_exchange, secs, us};

fn fasor(settings: &[&str]) -> Fasor {
    let s = Settings::parse(settings.iter().copied()).unwrap();
    Fasor::new(
        "fasor",
        &Params::resolve("fasor", &[common::COMMON, FASOR, TOKEN_OFF], &s).unwrap(),
    )
}

fn fasor_token(settings: &[&str]) -> Fasor {
    let s = Settings::parse(settings.iter().copied()).unwrap();
    Fasor::new(
        "fasor-token",
        &Params::resolve("fasor-token", &[common::COMMON, FASOR, TOKEN_ON], &s).unwrap(),
    )
}

fn close(a: f64, b: f64) {
    assert!((a - b).abs() < 1e-12, "{a} != {b}");
}

/// No draws allowed: the script is empty.
fn no_draws() -> ScriptedRandom {
    ScriptedRandom::new(&[])
}

/// One exchange at `start_s`, answered `ack_s` after the original; returns its timers.
fn ex(a: &mut Fasor, start_s: f64, ack_s: f64, answered: Option<u32>) -> Vec<Duration> {
    let start = Instant::ZERO + secs(start_s);
    run_exchange(a, start, Some(secs(ack_s)), answered, &mut no_draws()).timers
}

/// Every timer of an exchange that is never answered (on a clone, so the state is kept).
fn series(a: &Fasor, rng: &mut dyn Random) -> Vec<Duration> {
    let mut a = a.clone();
    run_exchange(&mut a, Instant::from_secs(10_000), None, None, rng).timers
}

fn secs_list(v: &[f64]) -> Vec<Duration> {
    v.iter().map(|&s| secs(s)).collect()
}

#[test]
fn first_timer_dither_with_u_half_is_2_41667() {
    // draft-ietf-core-fasor-02: 2 + (2/3)·(0.25 + 0.75·0.5) = 2 + (2/3)·0.625.
    let mut a = fasor(&[]);
    let mut rng = ScriptedRandom::new(&[0.5]);
    let mut x = Exchange::new();
    let t0 = a.start(Instant::ZERO, Admission::ALONE, &mut x, &mut rng);
    assert_eq!(t0, us(2_416_667));
    assert_eq!(rng.consumed(), 1);
}

#[test]
fn dither_range_before_and_after_the_first_sample() {
    // draft-ietf-core-fasor-02: [2.1667, 2.6667] s, then [1.4, 2.0] s after R = 0.8.
    let a = fasor(&[]);
    let first = |u: f64| series(&a, &mut ConstantRandom(u))[0];
    assert_eq!(first(0.0), us(2_166_667));
    assert_eq!(first(1.0), us(2_666_667));
    let mut a = fasor(&[]);
    run_exchange(
        &mut a,
        Instant::ZERO,
        Some(secs(0.8)),
        None,
        &mut ConstantRandom(0.0),
    );
    close(a.fast_rto_s(), 1.2);
    let first = |u: f64| series(&a, &mut ConstantRandom(u))[0];
    assert_eq!(first(0.0), us(1_400_000));
    assert_eq!(first(1.0), us(2_000_000));
}

#[test]
fn one_draw_per_exchange_and_backoff_doubles_the_dithered_register() {
    let a = fasor(&["max_retransmit=3"]);
    let mut rng = ScriptedRandom::new(&[0.5]);
    let t = series(&a, &mut rng);
    assert_eq!(rng.consumed(), 1);
    let b = 2.0 + (2.0 / 3.0) * 0.625;
    assert_eq!(t, secs_list(&[b, 2.0 * b, 4.0 * b, 8.0 * b]));
}

/// The six exchanges of the bufferbloat trace, with the checks of each row.
#[test]
fn bufferbloat_trace_without_dither() {
    let mut a = fasor(&["dither=false"]);
    // 1: FAST, 2.0, clean 0.8 → srtt 0.8, rttvar 0.1, FastRTO 1.2.
    assert_eq!(ex(&mut a, 0.0, 0.8, None), secs_list(&[2.0]));
    close(a.fast.srtt_s, 0.8);
    close(a.fast.rttvar_s, 0.1);
    close(a.fast_rto_s(), 1.2);
    assert_eq!(a.state(), State::Fast);
    // 2: FAST, 1.2, clean 0.8 → rttvar 0.075, FastRTO 1.1.
    assert_eq!(ex(&mut a, 10.0, 0.8, None), secs_list(&[1.2]));
    close(a.fast.rttvar_s, 0.075);
    close(a.fast_rto_s(), 1.1);
    // 3: FAST, 1.1, 2.2, 4.4 (sent at 0, 1.1, 3.3), ACK at 5.0 with r = 2.
    let o = run_exchange(
        &mut a,
        Instant::from_secs(20),
        Some(secs(5.0)),
        None,
        &mut no_draws(),
    );
    assert_eq!(o.timers, secs_list(&[1.1, 2.2, 4.4]));
    assert_eq!(
        o.tx_times,
        [
            Instant::from_secs(20),
            Instant::from_secs(20) + secs(1.1),
            Instant::from_secs(20) + secs(3.3)
        ]
    );
    close(a.slow_rto_s().unwrap(), 7.5);
    close(a.fast_rto_s(), 1.1);
    assert_eq!(a.state(), State::FastSlowFast);
    // 4: FSF, 1.1 then max(7.5, 2.2) = 7.5; ACK 5.0, r = 1 → SLOW_FAST.
    assert_eq!(ex(&mut a, 30.0, 5.0, None), secs_list(&[1.1, 7.5]));
    close(a.slow_rto_s().unwrap(), 7.5);
    assert_eq!(a.state(), State::SlowFast);
    // 5: SF, 7.5, clean 5.0 → rttvar 1.10625, srtt 1.325, FastRTO 5.75; → FAST.
    assert_eq!(ex(&mut a, 40.0, 5.0, None), secs_list(&[7.5]));
    close(a.fast.rttvar_s, 1.10625);
    close(a.fast.srtt_s, 1.325);
    close(a.fast_rto_s(), 5.75);
    assert_eq!(a.state(), State::Fast);
    // 6: FAST, 5.75, clean 5.0 → rttvar 1.7484375, srtt 1.784375, FastRTO 8.778125.
    assert_eq!(ex(&mut a, 60.0, 5.0, None), secs_list(&[5.75]));
    close(a.fast.rttvar_s, 1.7484375);
    close(a.fast.srtt_s, 1.784375);
    close(a.fast_rto_s(), 8.778125);
    assert_eq!(a.rto(), us(8_778_125));
    assert_eq!(a.snapshot().state, Some("FAST"));
}

#[test]
fn bufferbloat_trace_with_token() {
    let mut a = fasor_token(&["dither=false"]);
    assert_eq!(a.name(), "fasor-token");
    ex(&mut a, 0.0, 0.8, Some(0));
    ex(&mut a, 10.0, 0.8, Some(0));
    close(a.fast_rto_s(), 1.1);
    // 3: the response echoes ordinal 0, so R = 5.0 is unambiguous.
    assert_eq!(ex(&mut a, 20.0, 5.0, Some(0)), secs_list(&[1.1, 2.2, 4.4]));
    close(a.fast_rto_s(), 5.75);
    close(a.prev_sample_s.unwrap(), 5.0);
    close(a.slow_rto_s().unwrap(), 7.5);
    assert_eq!(a.state(), State::FastSlowFast);
    // 4: loads max(5.75, 5.0) = 5.75, clean: FastRTO 8.778125, → FAST.
    assert_eq!(ex(&mut a, 30.0, 5.0, Some(0)), secs_list(&[5.75]));
    close(a.fast_rto_s(), 8.778125);
    assert_eq!(a.state(), State::Fast);
}

#[test]
fn token_sample_from_a_retransmission() {
    // draft-ietf-core-fasor-02: the original is lost, the response echoes ordinal 1 and arrives 0.8
    // s after retransmission 1, so Rj = 0.8 feeds FastRTO; SlowRTO still uses R0.
    let mut a = fasor_token(&["dither=false"]);
    // FastRTO 2.0: retransmission 1 at 2.0, response at 2.8.
    assert_eq!(ex(&mut a, 0.0, 2.8, Some(1)), secs_list(&[2.0, 4.0]));
    close(a.fast_rto_s(), 1.2);
    close(a.prev_sample_s.unwrap(), 0.8);
    close(a.slow_rto_s().unwrap(), 1.5 * 2.8);
    assert_eq!(a.state(), State::FastSlowFast);
}

#[test]
fn token_ordinal_is_ignored_when_token_mode_is_off() {
    let mut a = fasor(&["dither=false"]);
    ex(&mut a, 0.0, 2.8, Some(1));
    close(a.fast_rto_s(), 2.0);
    assert!(!a.fast.init);
}

#[test]
fn token_base_alternative_uses_fast_rto_only() {
    // docs/algorithms.md, ambiguity #22 alternative: a previous sample above FastRTO is not used.
    let mut a = fasor_token(&["dither=false", "token_base=fast_rto"]);
    ex(&mut a, 0.0, 0.8, Some(0));
    ex(&mut a, 10.0, 0.8, Some(0));
    ex(&mut a, 20.0, 5.0, Some(0)); // FastRTO 5.75, prev 5.0
    a.fast_rto_s = 4.0; // pretend FastRTO is below the previous sample
    assert_eq!(series(&a, &mut no_draws())[0], secs(4.0));
    let mut b = fasor_token(&["dither=false"]);
    b.prev_sample_s = Some(5.0);
    b.fast_rto_s = 4.0;
    assert_eq!(series(&b, &mut no_draws())[0], secs(5.0));
}

/// A FASOR with FastRTO 1.1 (two clean 0.8 s samples, no dither) in `state`, S = 7.5.
fn with_f_1_1(state: State) -> Fasor {
    let mut a = fasor(&["dither=false", "max_retransmit=4"]);
    ex(&mut a, 0.0, 0.8, None);
    ex(&mut a, 10.0, 0.8, None);
    if state != State::Fast {
        ex(&mut a, 20.0, 5.0, None); // r = 2: S = 7.5, FAST_SLOW_FAST
    }
    if state == State::SlowFast {
        ex(&mut a, 30.0, 5.0, None); // r = 1: S = 7.5, SLOW_FAST
    }
    assert_eq!(a.state(), state);
    close(a.fast_rto_s(), 1.1);
    close(a.slow_rto_s().unwrap_or(7.5), 7.5);
    a
}

#[test]
fn timer_series_table_f_1_1_s_7_5() {
    // draft-ietf-core-fasor-02: FAST 1.1, 2.2, 4.4, 8.8, 17.6; FSF 1.1, 7.5, 2.2, 4.4, 8.8;
    // SF 7.5, 1.1, 2.2, 4.4, 8.8.
    let fast = with_f_1_1(State::Fast);
    assert_eq!(
        series(&fast, &mut no_draws()),
        secs_list(&[1.1, 2.2, 4.4, 8.8, 17.6])
    );
    let fsf = with_f_1_1(State::FastSlowFast);
    assert_eq!(
        series(&fsf, &mut no_draws()),
        secs_list(&[1.1, 7.5, 2.2, 4.4, 8.8])
    );
    let sf = with_f_1_1(State::SlowFast);
    assert_eq!(
        series(&sf, &mut no_draws()),
        secs_list(&[7.5, 1.1, 2.2, 4.4, 8.8])
    );
}

#[test]
fn slow_fast_draws_at_k1_not_at_the_original() {
    let mut sf = with_f_1_1(State::SlowFast);
    sf.dither = true;
    let mut rng = ScriptedRandom::new(&[0.0]);
    let mut x = Exchange::new();
    assert_eq!(
        sf.start(Instant::ZERO, Admission::ALONE, &mut x, &mut rng),
        secs(7.5)
    );
    assert_eq!(rng.consumed(), 0);
    // SRTT = 0.8 after the two clean samples: 1.1 + 0.8/4 = 1.3.
    assert_eq!(
        sf.expired(Instant::ZERO + secs(7.5), &mut x, &mut rng),
        Expiry::Retransmit(secs(1.3))
    );
    assert_eq!(rng.consumed(), 1);
}

#[test]
fn fsf_probe_uses_the_dithered_register_or_fast_rto() {
    // docs/algorithms.md, ambiguity #18: with S small, the k = 1 timer shows which base is used.
    let mut a = with_f_1_1(State::FastSlowFast);
    a.dither = true;
    a.slow_s = Some(1.0);
    // b = 1.1 + 0.8·(0.25 + 0.75·1) = 1.9 (u = 1): k1 = max(1.0, 3.8), k2 = 3.8.
    let t = series(&a, &mut ConstantRandom(1.0));
    assert_eq!(t[..3], secs_list(&[1.9, 3.8, 3.8]));
    a.fsf_probe_from_register = false;
    let t = series(&a, &mut ConstantRandom(1.0));
    assert_eq!(t[..3], secs_list(&[1.9, 2.2, 3.8]));
}

#[test]
fn caps_timer_max_and_rto_max() {
    // docs/algorithms.md, ambiguity #19: FastRTO, SlowRTO and every timer ≤ 60 s.
    let mut a = fasor(&["dither=false", "max_retransmit=8"]);
    ex(&mut a, 0.0, 0.8, None);
    ex(&mut a, 10.0, 0.8, None);
    assert_eq!(
        series(&a, &mut no_draws()),
        secs_list(&[1.1, 2.2, 4.4, 8.8, 17.6, 35.2, 60.0, 60.0, 60.0])
    );
    // An ambiguous RTT of 50 s: SlowRTO min(75, 60) = 60.
    let mut b = fasor(&["dither=false", "max_retransmit=20"]);
    ex(&mut b, 0.0, 50.0, None);
    close(b.slow_rto_s().unwrap(), 60.0);
    // A clean 50 s sample: FastRTO min(75, 60) = 60.
    let mut c = fasor(&["dither=false", "initial_rto_s=100", "timer_max_s=inf"]);
    ex(&mut c, 0.0, 50.0, None);
    close(c.fast_rto_s(), 60.0);
    // Another RTO_MAX (≥ 60 s) lifts both.
    let mut d = fasor(&[
        "dither=false",
        "initial_rto_s=100",
        "timer_max_s=inf",
        "rto_max_s=120",
    ]);
    ex(&mut d, 0.0, 50.0, None);
    close(d.fast_rto_s(), 75.0);
    // A dithered register is capped too.
    let e = fasor(&["initial_rto_s=59.9"]);
    assert_eq!(series(&e, &mut ConstantRandom(0.5))[0], secs(60.0));
}

#[test]
fn rto_min_floors_fast_rto() {
    let mut a = fasor(&["dither=false", "rto_min_s=1"]);
    ex(&mut a, 0.0, 0.1, None);
    close(a.fast_rto_s(), 1.0);
}

#[test]
fn appendix_first_rttvar_alternative() {
    // docs/algorithms.md, ambiguity #16: RTTVAR = R/2 with K = 1: also 1.5·R on the first sample,
    // but the larger RTTVAR is carried forward: rttvar 0.4 (normative: 0.1), FastRTO 0.8 + 0.4 =
    // 1.2.
    let mut a = fasor(&["dither=false", "first_rttvar=appendix"]);
    ex(&mut a, 0.0, 0.8, None);
    close(a.fast.rttvar_s, 0.4);
    close(a.fast_rto_s(), 1.2);
    ex(&mut a, 10.0, 1.0, None);
    // rttvar 0.75·0.4 + 0.25·0.2 = 0.35, srtt 0.825 → 1.175 (normative: 0.825 + 4·0.125).
    close(a.fast.rttvar_s, 0.35);
    close(a.fast_rto_s(), 1.175);
    let mut n = fasor(&["dither=false"]);
    ex(&mut n, 0.0, 0.8, None);
    ex(&mut n, 10.0, 1.0, None);
    close(n.fast_rto_s(), 1.325);
}

#[test]
fn give_up_after_max_retransmit_changes_nothing_by_default() {
    let mut a = fasor(&["dither=false", "max_retransmit=2"]);
    let o = run_exchange(&mut a, Instant::ZERO, None, None, &mut no_draws());
    assert_eq!(o.timers, secs_list(&[2.0, 4.0, 8.0]));
    assert_eq!(o.gave_up, Some(Instant::from_secs(14)));
    assert_eq!(a.state(), State::Fast);
    assert_eq!(a.slow_rto_s(), None);
    assert_eq!(a.rto(), secs(2.0));
}

#[test]
fn give_up_as_ambiguous_alternative() {
    // docs/algorithms.md, ambiguity #21 alternative: S = 1.5 × (give-up time − original send) = 1.5
    // × 14, capped 60.
    let mut a = fasor(&["dither=false", "max_retransmit=2", "give_up=ambiguous"]);
    run_exchange(&mut a, Instant::from_secs(5), None, None, &mut no_draws());
    assert_eq!(a.state(), State::FastSlowFast);
    close(a.slow_rto_s().unwrap(), 21.0);
    run_exchange(&mut a, Instant::from_secs(100), None, None, &mut no_draws());
    assert_eq!(a.state(), State::SlowFast);
}

#[test]
fn parallel_exchanges_use_the_state_at_their_start() {
    // docs/algorithms.md, ambiguity #20: exchange A starts in FAST; B completes ambiguously
    // meanwhile; A keeps the FAST series from its snapshot.
    let mut a = with_f_1_1(State::Fast);
    let mut rng = no_draws();
    let mut xa = Exchange::new();
    let two = Admission {
        in_flight: 2,
        dequeued: false,
    };
    assert_eq!(a.start(Instant::ZERO, two, &mut xa, &mut rng), secs(1.1));
    ex(&mut a, 0.0, 5.0, None); // B: r = 2, → FAST_SLOW_FAST, S = 7.5
    assert_eq!(a.state(), State::FastSlowFast);
    assert_eq!(
        a.expired(Instant::ZERO + secs(1.1), &mut xa, &mut rng),
        Expiry::Retransmit(secs(2.2))
    );
}

#[test]
fn clean_exchange_returns_to_fast() {
    let mut a = with_f_1_1(State::FastSlowFast);
    ex(&mut a, 50.0, 0.8, None);
    assert_eq!(a.state(), State::Fast);
    assert_eq!(a.snapshot().state, Some("FAST"));
}

#[test]
fn reset_forgets_everything() {
    let mut a = with_f_1_1(State::SlowFast);
    a.reset(Instant::from_secs(100));
    assert_eq!(a.state(), State::Fast);
    assert_eq!(a.rto(), secs(2.0));
    assert_eq!(a.slow_rto_s(), None);
    assert_eq!(a.snapshot().vars, [("fast_rto_s", 2.0)]);
    assert_eq!(series(&a, &mut no_draws())[0], secs(2.0));
}

#[test]
fn registry_builds_both_variants_with_their_token_defaults() {
    use crate::registry;
    let f = registry::build("fasor", &Settings::new(), Instant::ZERO).unwrap();
    assert_eq!(f.name(), "fasor");
    let p = Params::resolve(
        "fasor-token",
        registry::lookup("fasor-token").unwrap().params,
        &Settings::new(),
    )
    .unwrap();
    assert_eq!(p.choice("token_mode"), "token");
    assert_eq!(p.int("rexmit_cnt_option"), 65020);
    let t = registry::build("fasor-token", &Settings::new(), Instant::ZERO).unwrap();
    assert_eq!(t.name(), "fasor-token");
    assert_eq!(t.snapshot().state, Some("FAST"));
}
