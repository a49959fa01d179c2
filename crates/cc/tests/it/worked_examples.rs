//! The worked examples of each algorithm's source, one per algorithm, run as scripted traces
//! (`coaplab_cc::trace`, the engine of `coaplab trace`) through the registry, as a user would
//! run them. Timers and RTOs are compared to the microsecond.
//!
//! Each exchange is summarised as `timers -> outcome`: the timers armed, in order, then the
//! RTO after the completion (with FASOR's state), or `giveup`. Default CoAP's example is
//! `trace::tests` in the library.

use coaplab_cc::rng::{ConstantRandom, ScriptedRandom};
use coaplab_cc::{registry, trace, Instant, Random, Settings};

/// Runs `text` through algorithm `name` with `settings` and summarises every exchange.
fn run(name: &str, settings: &[&str], text: &str, rng: &mut dyn Random) -> Vec<String> {
    let s = Settings::parse(settings.iter().copied()).unwrap();
    let mut alg = registry::build(name, &s, Instant::ZERO).unwrap();
    let csv = trace::run_text(alg.as_mut(), text, rng).unwrap();
    let mut out: Vec<String> = vec![];
    let mut timers: Vec<String> = vec![];
    for row in csv.lines().skip(1) {
        let f: Vec<&str> = row.split(',').collect();
        let (event, timer, rto, state) = (f[1], f[4], f[5], f[6]);
        match event {
            "transmit" => timers.push(timer.to_string()),
            "complete" | "giveup" => {
                let end = match (event, state) {
                    ("giveup", _) => "giveup".to_string(),
                    (_, "") => rto.to_string(),
                    _ => format!("{rto} {state}"),
                };
                out.push(format!("{} -> {end}", timers.join(" ")));
                timers.clear();
            }
            _ => {}
        }
    }
    out
}

/// A trace of exchanges `(send_s, ack_s)`, in order.
fn trace_of(exchanges: &[(f64, f64)]) -> String {
    exchanges
        .iter()
        .map(|(send, ack)| format!("{send} send\n{ack} ack\n"))
        .collect()
}

/// ANRW 2018 worked example: RTT 6.0 s twice, then 1.0 s four times; TIMER_MAX 60 s.
const SECTION_2: &[(f64, f64)] = &[
    (0.0, 6.0),
    (10.0, 16.0),
    (20.0, 21.0),
    (30.0, 31.0),
    (40.0, 41.0),
    (50.0, 51.0),
];

/// Algorithm `name`'s column of the ANRW 2018 table: [`SECTION_2`] with TIMER_MAX 60 s.
fn section_2(name: &str, rng: &mut dyn Random) -> Vec<String> {
    run(name, &["timer_max_s=60"], &trace_of(SECTION_2), rng)
}

#[test]
fn section_2_default_column() {
    let mut rng = ScriptedRandom::new(&[0.2, 0.6, 0.5, 0.5, 0.5, 0.5]);
    let t = section_2("default", &mut rng);
    assert_eq!(
        t,
        [
            "2.200000 4.400000 -> 2.000000",
            "2.600000 5.200000 -> 2.000000",
            "2.500000 -> 2.000000",
            "2.500000 -> 2.000000",
            "2.500000 -> 2.000000",
            "2.500000 -> 2.000000",
        ]
    );
    assert_eq!(rng.consumed(), 6, "a fresh draw for every exchange");
}

#[test]
fn section_2_fb1_column() {
    // Draws only for exchanges 1, 4, 5 and 6; rto_s reports the carried timer.
    let mut rng = ScriptedRandom::new(&[0.2, 0.5, 0.5, 0.5]);
    let t = section_2("default-fb1", &mut rng);
    assert_eq!(
        t,
        [
            "2.200000 4.400000 -> 4.400000",
            "4.400000 8.800000 -> 8.800000",
            "8.800000 -> 2.000000",
            "2.500000 -> 2.000000",
            "2.500000 -> 2.000000",
            "2.500000 -> 2.000000",
        ]
    );
    assert_eq!(rng.consumed(), 4);
}

#[test]
fn section_2_fb2_column() {
    // Carried 4.4, 8.8, then halved per clean exchange: 4.4, 2.2, 1.1 < 2 -> fresh draw.
    let mut rng = ScriptedRandom::new(&[0.2, 0.5]);
    let t = section_2("default-fb2", &mut rng);
    assert_eq!(
        t,
        [
            "2.200000 4.400000 -> 4.400000",
            "4.400000 8.800000 -> 8.800000",
            "8.800000 -> 4.400000",
            "4.400000 -> 2.200000",
            "2.200000 -> 2.000000",
            "2.500000 -> 2.000000",
        ]
    );
    assert_eq!(rng.consumed(), 2);
}

#[test]
fn section_2_gst_column() {
    // count 1: 8.8/2 = 4.4; count 2: 4.4/4 = 1.1 < 2 -> fresh draws for exchanges 5 and 6.
    let mut rng = ScriptedRandom::new(&[0.2, 0.5, 0.5]);
    let t = section_2("gst", &mut rng);
    assert_eq!(
        t,
        [
            "2.200000 4.400000 -> 4.400000",
            "4.400000 8.800000 -> 8.800000",
            "8.800000 -> 4.400000",
            "4.400000 -> 2.000000",
            "2.500000 -> 2.000000",
            "2.500000 -> 2.000000",
        ]
    );
    assert_eq!(rng.consumed(), 3);
}

#[test]
fn section_3_gst_and_fb2_from_128_s() {
    // Exchange 1 backs off 2, 4, …, 128 (sent at 126) and is answered at 200: carried 128.
    let mut text = String::from("0 send\n200 ack\n");
    for i in 1..=7 {
        text += &format!("{} send\n{}.5 ack\n", 200 + 10 * i, 200 + 10 * i);
    }
    let settings = ["ack_random_factor=1", "max_retransmit=20"];
    let backoff = "2.000000 4.000000 8.000000 16.000000 32.000000 64.000000 128.000000";
    let gst = run("gst", &settings, &text, &mut ConstantRandom(0.0));
    assert_eq!(gst[0], format!("{backoff} -> 128.000000"));
    // 128·½ = 64, 64·¼ = 16, 16·⅛ = 2 (kept: not below 2), 2/16 < 2 -> fresh.
    assert_eq!(
        gst[1..],
        [
            "128.000000 -> 64.000000",
            "64.000000 -> 16.000000",
            "16.000000 -> 2.000000",
            "2.000000 -> 2.000000",
            "2.000000 -> 2.000000",
            "2.000000 -> 2.000000",
            "2.000000 -> 2.000000",
        ]
    );
    let fb2 = run("default-fb2", &settings, &text, &mut ConstantRandom(0.0));
    assert_eq!(fb2[0], format!("{backoff} -> 128.000000"));
    // Halving: GST reaches the 2 s floor after 3 clean exchanges, FB2 after 6.
    assert_eq!(
        fb2[1..],
        [
            "128.000000 -> 64.000000",
            "64.000000 -> 32.000000",
            "32.000000 -> 16.000000",
            "16.000000 -> 8.000000",
            "8.000000 -> 4.000000",
            "4.000000 -> 2.000000",
            "2.000000 -> 2.000000",
        ]
    );
}

/// draft-ietf-core-cocoa-03 A: RTT 0.1 s three times, then 1.2 s three times (u = 0).
const COCOA_A: &[(f64, f64)] = &[
    (0.0, 0.1),
    (1.0, 1.1),
    (2.0, 2.1),
    (3.0, 4.2),
    (5.0, 6.2),
    (7.0, 8.2),
];

#[test]
fn section_4_5_a_cocoa_convergence_then_weak_samples() {
    let t = run("cocoa", &[], &trace_of(COCOA_A), &mut ConstantRandom(0.0));
    assert_eq!(
        t,
        [
            "2.000000 -> 1.150000",
            "1.150000 -> 0.700000",
            "0.700000 -> 0.456250",
            // ×3 below 1 s; the first weak sample: 0.25·1.8 + 0.75·0.45625 = 0.7921875, a
            // half-µs tie that f64 state (0.79218749…) rounds down (see cocoa's unit test).
            "0.456250 1.368750 -> 0.792187",
            "0.792187 2.376563 -> 1.006641",
            // 1 ≤ T ≤ 3: ×2.
            "1.006641 2.013281 -> 1.139355",
        ]
    );
}

#[test]
fn section_4_5_a_cocoa_strong_ignores_the_weak_samples() {
    let t = run(
        "cocoa-strong",
        &[],
        &trace_of(COCOA_A),
        &mut ConstantRandom(0.0),
    );
    assert_eq!(
        t,
        [
            "2.000000 -> 1.150000",
            "1.150000 -> 0.700000",
            "0.700000 -> 0.456250",
            "0.456250 1.368750 -> 0.456250",
            "0.456250 1.368750 -> 0.456250",
            "0.456250 1.368750 -> 0.456250",
        ]
    );
}

/// ANRW 2018 example 1: three clean 0.1 s exchanges, then a 5 s bufferbloat in which every
/// retransmission is spurious. Exchange 5 starts 6.9 s after the last sample, before plain
/// CoCoA's RTO of 0.45625 s would age (16 · 0.45625 = 7.3 s).
const BLOAT_5: &[(f64, f64)] = &[(0.0, 0.1), (1.0, 1.1), (2.0, 2.1), (3.0, 8.0), (9.0, 14.0)];

#[test]
fn section_5_example_1_full_backoff_carries_the_backed_off_timer() {
    for name in ["cocoa-fb1", "cocoa-fb2"] {
        let t = run(name, &[], &trace_of(BLOAT_5), &mut ConstantRandom(0.0));
        assert_eq!(
            t[3..],
            [
                // r = 3: no sample, but the timer in force (5.475) becomes the RTO...
                "0.456250 1.368750 2.737500 5.475000 -> 5.475000",
                // ...and the next first timer, undithered: clean, strong update.
                "5.475000 -> 5.585938",
            ],
            "{name}"
        );
    }
    // Plain CoCoA repeats the three spurious retransmissions.
    let t = run("cocoa", &[], &trace_of(BLOAT_5), &mut ConstantRandom(0.0));
    assert_eq!(
        t[3..],
        [
            "0.456250 1.368750 2.737500 5.475000 -> 0.456250",
            "0.456250 1.368750 2.737500 5.475000 -> 0.456250",
        ]
    );
}

#[test]
fn section_6_gsrtc_weights_then_the_fb2_rule() {
    let t = run(
        "gsrtc",
        &[],
        &trace_of(&[
            (0.0, 0.1),
            (1.0, 1.1),
            (2.0, 2.1),
            (3.0, 3.1),
            (4.0, 4.5),
            (5.0, 5.5),
        ]),
        &mut ConstantRandom(0.0),
    );
    assert_eq!(
        t,
        [
            // W = 0.5, 0.75, 0.875, 0.9375.
            "2.000000 -> 1.150000",
            "1.150000 -> 0.475000",
            "0.475000 -> 0.245313",
            "0.245313 -> 0.188184",
            // RTT 0.5: ×3 = 0.56455078125; FB2 rule max(backed-off, weak update) is carried.
            "0.188184 0.564551 -> 0.564551",
            // Clean, count = 1, W = 0.5.
            "0.564551 -> 0.588916",
        ]
    );
}

/// draft-ietf-core-fasor-02 bufferbloat trace: RTT 0.8 s, then 5.0 s with every retransmission
/// spurious.
const FASOR_BLOAT: &str = "0 send\n0.8 ack\n1 send\n1.8 ack\n3 send\n8 ack\n\
                           10 send\n15 ack\n20 send\n25 ack\n30 send\n35 ack\n";

#[test]
fn section_7_5_fasor_bufferbloat_trace() {
    let t = run(
        "fasor",
        &["dither=false"],
        FASOR_BLOAT,
        &mut ScriptedRandom::new(&[]),
    );
    assert_eq!(
        t,
        [
            "2.000000 -> 1.200000 FAST",
            "1.200000 -> 1.100000 FAST",
            "1.100000 2.200000 4.400000 -> 1.100000 FAST_SLOW_FAST",
            "1.100000 7.500000 -> 1.100000 SLOW_FAST",
            "7.500000 -> 5.750000 FAST",
            "5.750000 -> 8.778125 FAST",
        ]
    );
}

#[test]
fn section_7_5_fasor_token_trace() {
    // Exchange 3's response echoes the original: R = 5.0 is unambiguous.
    let text = "0 send\n0.8 ack\n1 send\n1.8 ack\n3 send\n8 ack 1\n10 send\n15 ack\n";
    let t = run(
        "fasor-token",
        &["dither=false"],
        text,
        &mut ScriptedRandom::new(&[]),
    );
    assert_eq!(
        t,
        [
            "2.000000 -> 1.200000 FAST",
            "1.200000 -> 1.100000 FAST",
            "1.100000 2.200000 4.400000 -> 5.750000 FAST_SLOW_FAST",
            // Loads max(FastRTO 5.75, previous sample 5.0): the spurious retransmission is gone.
            "5.750000 -> 8.778125 FAST",
        ]
    );
}

#[test]
fn section_7_5_fasor_first_timer_dither() {
    // 2 + (2/3)·(0.25 + 0.75·0.5) = 2.41667 s; after R = 0.8 (FastRTO 1.2, SRTT 0.8) the
    // range is [1.4, 2.0] s: u = 0 and u = 1 give its ends.
    let text = "0 send\n0.8 ack\n1 send\n1.8 ack\n";
    for (u, t1) in [(0.0, "1.400000"), (1.0, "2.000000")] {
        let t = run("fasor", &[], text, &mut ScriptedRandom::new(&[0.5, u]));
        assert_eq!(
            t,
            [
                "2.416667 -> 1.200000 FAST".to_string(),
                format!("{t1} -> 1.100000 FAST"),
            ]
        );
    }
}

#[test]
fn section_8_1_basic_rto() {
    // Strong 100 ms: rto 150, first timer max(150, 500) = 500, then 1000, 2000;
    // that exchange is answered 2.5 s after its original (r = 2, weak): rto 3750.
    let t = run(
        "basic-rto",
        &[],
        "0 send\n0.1 ack\n1 send\n3.5 ack\n",
        &mut ScriptedRandom::new(&[]),
    );
    assert_eq!(
        t,
        [
            "2.000000 -> 0.150000",
            "0.500000 1.000000 2.000000 -> 3.750000",
        ]
    );
}

/// Clean exchanges, one per second, with these RTTs in ms.
fn samples_ms(rtts: &[i64]) -> String {
    rtts.iter()
        .enumerate()
        .map(|(i, r)| format!("{i} send\n{}.{r:03} ack\n", i))
        .collect()
}

#[test]
fn section_8_2_linux_rto_table() {
    let t = run(
        "linux-rto",
        &[],
        &samples_ms(&[100, 100, 300, 100, 100]),
        &mut ScriptedRandom::new(&[]),
    );
    let rto: Vec<&str> = t.iter().map(|e| e.rsplit(' ').next().unwrap()).collect();
    assert_eq!(
        rto,
        ["0.300000", "0.300000", "0.417000", "0.402000", "0.379000"]
    );
    // The first timer is clamp(getRTO(), 500, 60000), undithered.
    assert!(t[1].starts_with("0.500000 -> "), "{}", t[1]);
}

#[test]
fn section_8_3_peak_hopper_table() {
    let rtts = [100, 100, 100, 300, 100, 100, 100, 100];
    let rto = |settings: &[&str]| -> Vec<String> {
        run(
            "peakhopper",
            settings,
            &samples_ms(&rtts),
            &mut ScriptedRandom::new(&[]),
        )
        .iter()
        .map(|e| e.rsplit(' ').next().unwrap().to_string())
        .collect()
    };
    let ms = |v: &[i64]| -> Vec<String> {
        v.iter()
            .map(|m| format!("{}.{:03}000", m / 1000, m % 1000))
            .collect()
    };
    assert_eq!(rto(&[]), ms(&[175, 200, 200, 600, 600, 575, 551, 528]));
    // docs/algorithms.md, ambiguity #23, Californium 3.x's integer delta: B = 0.918403 at the peak,
    // rto 575.
    assert_eq!(
        rto(&["ph_int_delta=true"]),
        ms(&[175, 200, 200, 575, 600, 575, 551, 528])
    );
}

#[test]
fn section_9_eifel_table_and_backoff() {
    let text = "0 send\n0.5 ack\n1 send\n1.5 ack\n2 send\n2.8 ack\n3 send\n3.4 ack\n";
    let t = run("eifel", &[], text, &mut ScriptedRandom::new(&[]));
    assert_eq!(
        t,
        [
            "2.000000 -> 1.250000",
            "1.250000 -> 1.166667",
            "1.166667 -> 1.344444",
            "1.344444 -> 1.277778",
        ]
    );
    // A retransmitted exchange starting at RTO 1.25 uses 1.25, 2.5, 5, 10, 20, then gives up.
    let t = run(
        "eifel",
        &[],
        "0 send\n0.5 ack\n1 send\n",
        &mut ScriptedRandom::new(&[]),
    );
    assert_eq!(
        t[1],
        "1.250000 2.500000 5.000000 10.000000 20.000000 -> giveup"
    );
}

/// The samples of Rathod 2022 ch. 6's table as sequential exchanges (one in flight at a time): 0.2
/// s answered every 0.25 s until 3.5, then 0.2 answered at 3.7 and 0.26 at 4.0. The intervals close
/// on the same sample sets as the table's.
fn cocoa_pp_table_prefix() -> String {
    let mut text = String::new();
    for k in 1..=14 {
        let ack = 0.25 * k as f64;
        text += &format!("{} send\n{ack} ack\n", ack - 0.2);
    }
    text + "3.5 send\n3.7 ack\n3.74 send\n4 ack\n"
}

#[test]
fn section_10_cocoa_pp_interval_table() {
    // Then two 0.3 s samples per interval (closing at 4.6 and 5.2 instead of 4.5 and 5.0).
    let text = cocoa_pp_table_prefix()
        + "4 send\n4.3 ack\n4.3 send\n4.6 ack\n4.6 send\n4.9 ack\n4.9 send\n5.2 ack\n";
    // X = 0.5 at every draw (and u = 0.5 for every first timer).
    let t = run("cocoa++", &[], &text, &mut ConstantRandom(0.5));
    let rto: Vec<&str> = t.iter().map(|e| e.rsplit(' ').next().unwrap()).collect();
    let closes = [1, 3, 5, 7, 9, 11, 13, 15, 17, 19];
    assert_eq!(
        closes.map(|i| rto[i]),
        [
            "2.000000", "1.400000", "0.980000", "0.686000", "0.480200", "0.336140", "0.235298",
            // Delay rising: P = 0.9426, 0.9845, 0.9845 > X, so ×1.42.
            "0.334123", "0.474455", "0.673726",
        ]
    );
    // Between closes the RTO does not move.
    assert_eq!(rto[14], "0.235298");
    assert_eq!(rto[18], "0.474455");
}

#[test]
fn section_10_cocoa_pp_expiry_backs_off_by_1_42() {
    // After the close at 4.0 (RTO 0.334123) an unanswered exchange, undithered (u = 0).
    let text = cocoa_pp_table_prefix() + "5 send\n";
    // 16 first-timer draws and 7 interval-close draws at 0.5, then u = 0.
    let mut draws = vec![0.5; 23];
    draws.push(0.0);
    let t = run("cocoa++", &[], &text, &mut ScriptedRandom::new(&draws));
    // 0.235298 · 1.25 = 0.2941225, a half-µs tie that f64 rounds down.
    assert_eq!(t[15], "0.294122 -> 0.334123");
    assert_eq!(
        t[16],
        "0.334123 0.474455 0.673726 0.956691 1.358501 -> giveup"
    );
}
