//! Tests of `cocoa++`: the interval table of Rathod 2022 ch. 6 and every resolved-ambiguity
//! alternative (docs/algorithms.md, #29–#34).

use super::*;
use crate::cocoa::harness::*;
use crate::rng::{ConstantRandom, ScriptedRandom};

fn pp(settings: &[&str]) -> CocoaPp {
    CocoaPp::new(&params(GROUPS, settings), Instant::ZERO)
}

/// A clean exchange whose ACK arrives at `t` after `rtt`.
fn sample(alg: &mut CocoaPp, t: f64, rtt: f64, rng: &mut dyn Random) {
    let tx = [at(t) - secs(rtt)];
    let c = Completion {
        ack_time: at(t),
        tx_times: &tx,
        answered: None,
        timer_in_force: secs(2.0),
    };
    alg.completed(&c, &mut Exchange::new(), rng);
}

/// The thesis table's samples: every 0.25 s; 0.2 until 3.75, 0.26 at 4.0, then 0.3.
fn table_rtt(k: usize) -> f64 {
    match k {
        1..=15 => 0.2,
        16 => 0.26,
        _ => 0.3,
    }
}

#[test]
fn table_closes_rto_and_probability() {
    let mut alg = pp(&[]);
    let mut rng = ScriptedRandom::new(&[0.5; 9]);
    // (close time, rto in µs) for every close; the first only establishes prev_min/max.
    let closes = [
        (2, 2_000_000),
        (4, 1_400_000),
        (6, 980_000),
        (8, 686_000),
        (10, 480_200),
        (12, 336_140),
        (14, 235_298),
        (16, 334_123),
        (18, 474_455),
        (20, 673_726),
    ];
    let mut k = 0;
    for (i, (at_k, rto_us)) in closes.into_iter().enumerate() {
        while k < at_k {
            k += 1;
            sample(&mut alg, 0.25 * k as f64, table_rtt(k), &mut rng);
            let closed = var(&alg, "intervals_closed") as usize;
            assert_eq!(closed, if k == at_k { i + 1 } else { i }, "sample {k}");
        }
        assert_eq!(alg.rto(), us(rto_us), "close at t = {}", 0.25 * k as f64);
        match k {
            4..=14 => {
                close(var(&alg, "gbar_max_s"), 0.0);
                close(var(&alg, "backoff_p"), 0.0);
            }
            16 => {
                // 0.5 >= 2·0.2075; g_max 0.06, ḡ_max = 0.06/7 = 8.571 ms, P = 0.9426.
                close(var(&alg, "srtt_s"), 0.2075);
                assert!((var(&alg, "gbar_max_s") - 0.06 / 7.0).abs() < 1e-12);
                assert!((var(&alg, "backoff_p") - 0.9426).abs() < 5e-5);
            }
            18 | 20 => {
                // ḡ_max = 0.10/8 = 12.5 ms (the window still holds the rises), P = 0.9845.
                assert!((var(&alg, "gbar_max_s") - 0.0125).abs() < 1e-12);
                assert!((var(&alg, "backoff_p") - 0.9845).abs() < 5e-5);
            }
            _ => {}
        }
    }
    assert_eq!(rng.consumed(), 9);
}

#[test]
fn expiry_backs_off_by_1_42() {
    // A timeout at RTO 0.334123 s: 0.4745, 0.6738, 0.9567, … (×1.42).
    let mut alg = pp(&[]);
    let mut rng = ConstantRandom(0.5);
    for k in 1..=16 {
        sample(&mut alg, 0.25 * k as f64, table_rtt(k), &mut rng);
    }
    let o = exchange(
        &mut alg,
        at(4.0),
        Admission::ALONE,
        None,
        &mut ConstantRandom(0.0),
    );
    assert_eq!(
        o.timers,
        [334_123, 474_455, 673_726, 956_691, 1_358_501].map(us)
    );
    assert!(!o.acked);
    // A give-up changes nothing.
    assert_eq!(alg.rto(), us(334_123));
}

#[test]
fn first_timer_is_dithered_and_capped() {
    let mut alg = pp(&[]);
    let mut rng = ScriptedRandom::new(&[0.2]);
    assert_eq!(
        alg.start(
            Instant::ZERO,
            Admission::ALONE,
            &mut Exchange::new(),
            &mut rng
        ),
        secs(2.2)
    );
    let mut alg = pp(&["initial_rto_s=50"]);
    let t = alg.start(
        Instant::ZERO,
        Admission::ALONE,
        &mut Exchange::new(),
        &mut ConstantRandom(0.5),
    );
    assert_eq!(t, secs(60.0));
}

#[test]
fn retransmitted_exchanges_give_no_sample_unless_all() {
    // docs/algorithms.md, ambiguity #29.
    let retx = |alg: &mut CocoaPp| {
        let o = exchange(
            alg,
            Instant::ZERO,
            Admission::ALONE,
            Some(secs(3.0)),
            &mut ConstantRandom(0.0),
        );
        assert_eq!(o.tx.len(), 2);
    };
    let mut alg = pp(&[]);
    retx(&mut alg);
    close(var(&alg, "srtt_s"), 0.0);
    let mut alg = pp(&["samples=all"]);
    retx(&mut alg);
    close(var(&alg, "srtt_s"), 3.0);
}

#[test]
fn fixed_intervals_close_after_5_s() {
    // docs/algorithms.md, ambiguity #30: samples every 0.25 s close at 5.0 and 10.0.
    let mut alg = pp(&["interval=fixed"]);
    let mut rng = ConstantRandom(0.5);
    for k in 1..=40 {
        sample(&mut alg, 0.25 * k as f64, 0.2, &mut rng);
        let expect = match k {
            1..=19 => 0.0,
            20..=39 => 1.0,
            _ => 2.0,
        };
        assert_eq!(var(&alg, "intervals_closed"), expect, "sample {k}");
    }
    assert_eq!(alg.rto(), secs(1.4));
}

/// Interval 1: min 0.2 / max 0.3; interval 2: min 0.25 / max 0.3 (g_min 0.05, g_max 0).
fn min_rises_max_flat(alg: &mut CocoaPp) {
    let mut rng = ConstantRandom(0.5);
    for (t, r) in [(0.25, 0.2), (0.5, 0.3), (0.75, 0.25), (1.5, 0.3)] {
        sample(alg, t, r, &mut rng);
    }
    assert_eq!(var(alg, "intervals_closed"), 2.0);
}

#[test]
fn gradient_min_first_reacts_to_the_min_rtt() {
    // docs/algorithms.md, ambiguity #31: ḡ_max = 0 → ×0.7 by default; FreeBSD-style ḡ_min = 50 ms →
    // ×1.42.
    let mut alg = pp(&[]);
    min_rises_max_flat(&mut alg);
    assert_eq!(alg.rto(), secs(1.4));
    let mut alg = pp(&["gradient=min_first"]);
    min_rises_max_flat(&mut alg);
    close(var(&alg, "gbar_min_s"), 0.05);
    assert_eq!(alg.rto(), secs(2.84));
}

#[test]
fn average_over_the_whole_window() {
    // docs/algorithms.md, ambiguity #31: at the t = 4.0 close, 0.06/8 = 7.5 ms instead of 0.06/7.
    let mut alg = pp(&["average=window"]);
    let mut rng = ConstantRandom(0.5);
    for k in 1..=16 {
        sample(&mut alg, 0.25 * k as f64, table_rtt(k), &mut rng);
    }
    close(var(&alg, "gbar_max_s"), 0.0075);
    assert!((var(&alg, "backoff_p") - (1.0 - (-2.5f64).exp())).abs() < 1e-12);
    assert_eq!(alg.rto(), us(334_123));
}

#[test]
fn expiry_backoff_alternatives() {
    // docs/algorithms.md, ambiguity #34: ×2, or CoCoA's VBF (0.5 -> ×3 -> 1.5 -> ×2 -> 3 -> ×2 ->
    // 6).
    let mut alg = pp(&["retx_factor=2", "initial_rto_s=0.5"]);
    let o = exchange(
        &mut alg,
        Instant::ZERO,
        Admission::ALONE,
        None,
        &mut ConstantRandom(0.0),
    );
    assert_eq!(o.timers, [0.5, 1.0, 2.0, 4.0, 8.0].map(secs));
    let mut alg = pp(&["expiry_backoff=vbf", "initial_rto_s=0.5"]);
    let o = exchange(
        &mut alg,
        Instant::ZERO,
        Admission::ALONE,
        None,
        &mut ConstantRandom(0.0),
    );
    assert_eq!(o.timers, [0.5, 1.5, 3.0, 6.0, 9.0].map(secs));
    // TIMER_MAX caps the backoff.
    let mut alg = pp(&["initial_rto_s=30", "max_retransmit=3"]);
    let o = exchange(
        &mut alg,
        Instant::ZERO,
        Admission::ALONE,
        None,
        &mut ConstantRandom(0.0),
    );
    assert_eq!(o.timers, [30.0, 42.6, 60.0, 60.0].map(secs));
}

#[test]
fn rto_is_bounded_by_the_interval_max_and_the_floor() {
    // Steady 50 ms samples: ×0.7 per close down to the 100 ms floor.
    let mut alg = pp(&[]);
    let mut rng = ConstantRandom(0.5);
    for k in 1..=200 {
        sample(&mut alg, 0.1 * k as f64, 0.05, &mut rng);
    }
    assert_eq!(alg.rto(), secs(0.1));
    // Steady 0.5 s samples: floored by the interval max RTT instead.
    let mut alg = pp(&[]);
    for k in 1..=200 {
        sample(&mut alg, 1.0 * k as f64, 0.5, &mut rng);
    }
    assert_eq!(alg.rto(), secs(0.5));
    // Rising delay with P ≈ 1: capped at RTO_MAX.
    let mut alg = pp(&["rto_max_s=3"]);
    for k in 1..=60 {
        sample(
            &mut alg,
            1.0 * k as f64,
            0.01 * k as f64,
            &mut ConstantRandom(0.0),
        );
    }
    assert_eq!(alg.rto(), secs(3.0));
}

#[test]
fn reset_forgets_the_intervals() {
    let mut alg = pp(&[]);
    let mut rng = ConstantRandom(0.5);
    for k in 1..=8 {
        sample(&mut alg, 0.25 * k as f64, 0.2, &mut rng);
    }
    assert_eq!(alg.rto(), secs(0.686));
    alg.reset(at(10.0));
    let fresh = CocoaPp::new(&params(GROUPS, &[]), at(10.0));
    assert_eq!(alg.snapshot(), fresh.snapshot());
    // The interval clock restarted at 10 s: a sample at 10.25 does not close.
    sample(&mut alg, 10.25, 0.2, &mut rng);
    assert_eq!(var(&alg, "intervals_closed"), 0.0);
    assert_eq!(alg.name(), "cocoa++");
}

#[test]
fn a_larger_cdg_g_lowers_the_backoff_probability() {
    // docs/algorithms.md, ambiguity #32: with G = 30 ms the rise at t = 4.0 (ḡ_max = 8.571 ms)
    // gives P = 1 - exp(-0.2857) = 0.2485 < X = 0.5, so the RTO shrinks (×0.7) and is floored at
    // the interval's max RTT, 0.26 s; with the default 3 ms it grows to 0.334123 s.
    for (g, rto_us) in [("0.003", 334_123), ("0.03", 260_000)] {
        let mut alg = pp(&[&format!("cdg_g_s={g}")]);
        let mut rng = ConstantRandom(0.5);
        for k in 1..=16 {
            sample(&mut alg, 0.25 * k as f64, table_rtt(k), &mut rng);
        }
        assert_eq!(alg.rto(), us(rto_us), "cdg_g_s={g}");
        let p = 1.0 - (-(0.06 / 7.0) / g.parse::<f64>().unwrap()).exp();
        assert!((var(&alg, "backoff_p") - p).abs() < 1e-12, "cdg_g_s={g}");
    }
}

#[test]
fn steady_rtts_take_the_rto_to_the_100_ms_floor_where_four_retransmissions_span_1_1_s() {
    // Issue 31, item 2, finding 3. Stop-and-wait every 0.4 s on a 50-ms path: every clean sample
    // closes an interval (0.4 s >= 2·SRTT), and an interval whose maximum RTT did not rise above
    // the one CDG_WINDOW intervals back gives ḡ_max <= 0, so PBF_DOWN 0.7 applies at every close
    // whatever X is (docs/algorithms.md §10). Nine closes take 2 s to the floor max(interval max
    // RTT 0.05, RTO_FLOOR 0.1) = 0.1 s. From there the spec's ×1.42 backoff spans only 1.137 s
    // (0.1, 0.142, 0.202, 0.286, 0.407) before MAX_RETRANSMIT 4 gives up (at most 1.5 times that
    // with the dither), where CoCoA's VBF spans 0.1, 0.3, 0.9, 2.7, 5.4 = 9.4 s: on a mesh whose
    // delays reach a second under load, CoCoA++'s exchanges give up where CoCoA's complete. This is
    // the algorithm as specified, not a sample-handling fault.
    let mut alg = pp(&["max_retransmit=4"]);
    let mut rng = ConstantRandom(0.5);
    let mut rtos = Vec::new();
    for k in 1..=11 {
        sample(&mut alg, 0.4 * k as f64, 0.05, &mut rng);
        rtos.push(alg.rto().as_micros());
    }
    assert_eq!(
        rtos,
        [
            2_000_000, 1_400_000, 980_000, 686_000, 480_200, 336_140, 235_298, 164_709, 115_296,
            100_000, 100_000
        ]
    );
    let o = exchange(
        &mut alg,
        at(10.0),
        Admission::ALONE,
        None,
        &mut ConstantRandom(0.0),
    );
    assert_eq!(
        o.timers,
        [100_000, 142_000, 201_640, 286_329, 406_587].map(us)
    );
    assert!(!o.acked);
    assert_eq!(
        o.end,
        at(10.0) + us(100_000 + 142_000 + 201_640 + 286_329 + 406_587)
    );
    // The failed exchange gives no sample and leaves the RTO at the floor.
    assert_eq!(alg.rto(), us(100_000));
    // Ambiguity #34's alternative `expiry_backoff=vbf` backs off as CoCoA does.
    let mut vbf = pp(&["max_retransmit=4", "expiry_backoff=vbf"]);
    for k in 1..=11 {
        sample(&mut vbf, 0.4 * k as f64, 0.05, &mut rng);
    }
    let o = exchange(
        &mut vbf,
        at(10.0),
        Admission::ALONE,
        None,
        &mut ConstantRandom(0.0),
    );
    assert_eq!(
        o.timers,
        [100_000, 300_000, 900_000, 2_700_000, 5_400_000].map(us)
    );
}

#[test]
fn an_rtt_above_every_first_timer_gives_no_clean_sample_and_the_rto_stays_at_2_s() {
    // Issue 31, item 2, finding 3, on a loss-free but bloated link (`quickstart.toml`'s NB-IoT star
    // with a 28,200-B buffer: RTTs of 5-8 s). Only clean exchanges give samples (docs/algorithms.md
    // §10, ambiguity #29), and the first timer is INITIAL_RTO 2 s dithered to [2, 3) s. An RTT
    // above 3 s therefore retransmits every exchange, no interval ever closes, and the RTO stays at
    // 2 s: each exchange sends spurious copies, where CoCoA's weak samples (1-2 retransmissions)
    // lift its RTO above the RTT. The alternative `samples=all` closes intervals on every exchange
    // and reaches the RTT.
    let mut rng = ConstantRandom(0.0);
    let mut clean = pp(&[]);
    for k in 0..5 {
        let o = exchange(
            &mut clean,
            at(10.0 * f64::from(k)),
            Admission::ALONE,
            Some(secs(5.0)),
            &mut rng,
        );
        // 2, 2.84, 4.0328: the ACK 5 s after the original arrives after 2 retransmissions.
        assert_eq!(o.timers, [2_000_000, 2_840_000, 4_032_800].map(us));
        assert_eq!(clean.rto(), us(2_000_000));
    }
    assert_eq!(var(&clean, "intervals_closed"), 0.0);
    // `samples=all`: samples at 5, 15, 25 s; the close at 15 s establishes the previous
    // interval, the one at 25 s applies 0.7 and the floor max(interval max RTT 5 s, 0.1 s).
    let mut all = pp(&["samples=all"]);
    for k in 0..3 {
        let t0 = at(10.0 * f64::from(k));
        exchange(&mut all, t0, Admission::ALONE, Some(secs(5.0)), &mut rng);
    }
    assert_eq!(all.rto(), us(5_000_000));
    let o = exchange(
        &mut all,
        at(30.0),
        Admission::ALONE,
        Some(secs(5.0)),
        &mut rng,
    );
    assert_eq!(o.timers, [us(5_000_000)]); // an ACK at the expiry instant wins: clean
}
