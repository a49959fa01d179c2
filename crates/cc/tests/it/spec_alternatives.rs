//! Cross-algorithm checks of the resolved ambiguities and common rules
//! (docs/algorithms.md, 'Conventions'; draft-ietf-core-cocoa-03; Californium 3.x;
//! docs/algorithms.md, 'Resolved ambiguities'):
//!
//! * the resolved-ambiguities table of `docs/algorithms.md` names, for each row #1–#35, a setting
//!   that exists for every algorithm it lists and changes a parameter, so the guide cannot drift
//!   from the registry;
//! * `reset` makes every algorithm equal to a destination created at that instant;
//! * the blind RTO with NSTART > 1 for the CoCoA family (draft-ietf-core-cocoa-03, example D) and
//!   for Californium's Linux RTO and Peak-Hopper (Californium 3.x; Californium 3.x Cocoa), never
//!   for BasicRTO.

use std::collections::BTreeSet;
use std::path::PathBuf;

use coaplab_cc::registry::{self, ALGORITHMS};
use coaplab_cc::rng::{ConstantRandom, SeededRandom};
use coaplab_cc::{
    Admission, Completion, Duration, Exchange, Expiry, Instant, Random, RtoAlgorithm, Settings,
};

/// One row of the resolved-ambiguities table in docs/algorithms.md.
#[derive(Debug)]
struct Row {
    number: u32,
    settings: Vec<String>,
    algorithms: Vec<String>,
}

/// The code spans of a Markdown table cell, in order.
fn code_spans(cell: &str) -> Vec<String> {
    cell.split('`')
        .skip(1)
        .step_by(2)
        .map(str::to_string)
        .collect()
}

/// The rows of the resolved-ambiguities table: lines `| <number> | topic | default | settings |
/// algorithms |`.
fn spec12_rows() -> Vec<Row> {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../docs/algorithms.md");
    let text = std::fs::read_to_string(&path).expect("docs/algorithms.md");
    let section = text
        .split("## Resolved ambiguities and how to select the alternative")
        .nth(1)
        .expect("the resolved-ambiguities section of docs/algorithms.md");
    section
        .lines()
        .filter_map(|line| {
            let cells: Vec<&str> = line.trim().trim_matches('|').split('|').collect();
            let number = cells.first()?.trim().parse().ok()?;
            assert_eq!(cells.len(), 5, "row {number} must have 5 cells: {line}");
            Some(Row {
                number,
                settings: code_spans(cells[3])
                    .into_iter()
                    .filter(|s| s.contains('='))
                    .collect(),
                algorithms: code_spans(cells[4]),
            })
        })
        .collect()
}

#[test]
fn every_spec12_row_is_in_the_guide() {
    let numbers: BTreeSet<u32> = spec12_rows().iter().map(|r| r.number).collect();
    assert_eq!(
        numbers,
        (1..=35).collect(),
        "rows of the resolved-ambiguities table"
    );
}

#[test]
fn every_spec12_alternative_resolves_and_changes_a_parameter() {
    let rows = spec12_rows();
    let mut without = vec![];
    for row in &rows {
        if row.settings.is_empty() {
            assert!(
                row.algorithms.is_empty(),
                "#{}: algorithms without a setting",
                row.number
            );
            without.push(row.number);
            continue;
        }
        assert!(!row.algorithms.is_empty(), "#{}: no algorithm", row.number);
        let settings = Settings::parse(row.settings.iter().map(String::as_str)).unwrap();
        for name in &row.algorithms {
            let (_, defaults) = registry::resolve(name, &Settings::new())
                .unwrap_or_else(|e| panic!("#{}: {e}", row.number));
            let (_, alternative) = registry::resolve(name, &settings)
                .unwrap_or_else(|e| panic!("#{} on {name}: {e}", row.number));
            assert_ne!(
                defaults, alternative,
                "#{} on {name}: {:?} changes nothing",
                row.number, row.settings
            );
        }
    }
    // No alternative (#8, #20, #33), or not an algorithm parameter (#35).
    assert_eq!(without, [8, 20, 33, 35]);
}

/// Drives exchanges on `alg` from `t0`: each `(rtt_s, answered)` is one exchange, answered
/// `rtt_s` after its original (retransmitting as the timers fire) or never (`None`: it gives
/// up). Exchanges follow each other 1 s after the previous one ended. Returns every timer armed
/// and the RTO after each exchange.
fn drive(
    alg: &mut dyn RtoAlgorithm,
    t0: Instant,
    rtts: &[Option<f64>],
    rng: &mut dyn Random,
) -> Vec<(Vec<Duration>, Duration)> {
    let mut now = t0;
    let mut out = vec![];
    for rtt in rtts {
        let mut x = Exchange::new();
        let start = now;
        let mut timers = vec![alg.start(start, Admission::ALONE, &mut x, rng)];
        let mut tx = vec![start];
        let ack = rtt.map(|r| start + Duration::from_secs_f64_round_us(r));
        loop {
            let deadline = *tx.last().unwrap() + x.timer;
            if let Some(t) = ack.filter(|t| *t <= deadline) {
                let c = Completion {
                    ack_time: t,
                    tx_times: &tx,
                    answered: None,
                    timer_in_force: x.timer,
                };
                alg.completed(&c, &mut x, rng);
                now = t;
                break;
            }
            match alg.expired(deadline, &mut x, rng) {
                Expiry::Retransmit(t) => {
                    timers.push(t);
                    tx.push(deadline);
                }
                Expiry::GiveUp => {
                    alg.failed(deadline, &mut x);
                    now = deadline;
                    break;
                }
            }
        }
        out.push((timers, alg.rto()));
        now += Duration::from_secs(1);
    }
    out
}

#[test]
fn reset_equals_a_destination_created_at_that_instant() {
    // Clean, retransmitted, a give-up and a long idle: every kind of state gets learned.
    let history = [Some(0.1), Some(0.1), Some(3.0), None, Some(0.4), Some(0.2)];
    let after = [Some(0.3), Some(5.0), Some(0.3)];
    for info in ALGORITHMS {
        for preset in ["rfc", "fasor18"] {
            let settings = Settings::parse([format!("preset={preset}").as_str()]).unwrap();
            let mut alg = registry::build(info.name, &settings, Instant::ZERO).unwrap();
            drive(
                alg.as_mut(),
                Instant::ZERO,
                &history,
                &mut SeededRandom::new(3),
            );
            let now = Instant::ZERO + Duration::from_secs(500);
            alg.reset(now);
            let mut fresh = registry::build(info.name, &settings, now).unwrap();
            let what = format!("{} with preset {preset}", info.name);
            assert_eq!(alg.snapshot(), fresh.snapshot(), "{what}: snapshot");
            assert_eq!(alg.rto(), fresh.rto(), "{what}: rto");
            assert_eq!(
                drive(alg.as_mut(), now, &after, &mut SeededRandom::new(9)),
                drive(fresh.as_mut(), now, &after, &mut SeededRandom::new(9)),
                "{what}: exchanges after the reset"
            );
        }
    }
}

/// The first timers of exchanges admitted with 1, 2, 3 in flight (none completing), u = 0.
fn first_timers(alg: &mut dyn RtoAlgorithm, now: Instant, dequeued: bool) -> Vec<Duration> {
    (1..=3)
        .map(|n| {
            let a = Admission {
                in_flight: n,
                dequeued,
            };
            alg.start(now, a, &mut Exchange::new(), &mut ConstantRandom(0.0))
        })
        .collect()
}

fn build(name: &str, settings: &[&str]) -> Box<dyn RtoAlgorithm> {
    let s = Settings::parse(settings.iter().copied()).unwrap();
    registry::build(name, &s, Instant::ZERO).unwrap()
}

fn secs(v: &[f64]) -> Vec<Duration> {
    v.iter()
        .map(|s| Duration::from_secs_f64_round_us(*s))
        .collect()
}

fn ms(v: &[i64]) -> Vec<Duration> {
    v.iter().map(|m| Duration::from_millis(*m)).collect()
}

#[test]
fn cocoa_family_blind_rto_with_nstart_above_one() {
    for name in ["cocoa", "cocoa-strong", "cocoa-fb1", "cocoa-fb2", "gsrtc"] {
        // draft-ietf-core-cocoa-03 D: 2 s, 4 s, 6 s while no sample was taken; n includes the new
        // exchange.
        let mut alg = build(name, &[]);
        assert_eq!(
            first_timers(alg.as_mut(), Instant::ZERO, false),
            secs(&[2.0, 4.0, 6.0]),
            "{name}"
        );
        // Capped at RTO_MAX like any base.
        let mut alg = build(name, &["rto_max_s=5"]);
        assert_eq!(
            first_timers(alg.as_mut(), Instant::ZERO, false),
            secs(&[2.0, 4.0, 5.0]),
            "{name}"
        );
        // docs/algorithms.md, ambiguity #11 off: always INITIAL_RTO.
        let mut alg = build(name, &["blind=off"]);
        assert_eq!(
            first_timers(alg.as_mut(), Instant::ZERO, false),
            secs(&[2.0, 2.0, 2.0]),
            "{name}"
        );
        // After the first sample (0.1 s: RTO 1.15) the blind rule is over.
        let mut alg = build(name, &[]);
        drive(
            alg.as_mut(),
            Instant::ZERO,
            &[Some(0.1)],
            &mut ConstantRandom(0.0),
        );
        assert_eq!(alg.rto(), Duration::from_micros(1_150_000), "{name}");
        let now = Instant::ZERO + Duration::from_secs(1);
        assert_eq!(
            first_timers(alg.as_mut(), now, false),
            secs(&[1.15, 1.15, 1.15]),
            "{name}"
        );
    }
}

#[test]
fn californium_blind_multiplier_counts_registered_exchanges_until_a_strong_sample() {
    for name in ["linux-rto", "peakhopper"] {
        // A new exchange is not yet registered: n' = 0, 1, 2 gives x1, x1, x2 (Californium 3.x
        // Cocoa).
        let mut alg = build(name, &[]);
        assert_eq!(
            first_timers(alg.as_mut(), Instant::ZERO, false),
            ms(&[2000, 2000, 4000]),
            "{name}"
        );
        // A dequeued exchange is registered first: n' = 1, 2, 3.
        assert_eq!(
            first_timers(alg.as_mut(), Instant::ZERO, true),
            ms(&[2000, 4000, 6000]),
            "{name}"
        );
        // blind = false: never multiplied.
        let mut alg = build(name, &["blind=false"]);
        assert_eq!(
            first_timers(alg.as_mut(), Instant::ZERO, true),
            ms(&[2000, 2000, 2000]),
            "{name}"
        );
        // A WEAK sample does not end it (rto stays 2000 ms for both: no weak update)...
        let mut alg = build(name, &[]);
        drive(
            alg.as_mut(),
            Instant::ZERO,
            &[Some(3.0)],
            &mut ConstantRandom(0.0),
        );
        let now = Instant::ZERO + Duration::from_secs(10);
        assert_eq!(
            first_timers(alg.as_mut(), now, true),
            ms(&[2000, 4000, 6000]),
            "{name}"
        );
        // ...the first STRONG sample does.
        drive(alg.as_mut(), now, &[Some(0.1)], &mut ConstantRandom(0.0));
        let rto = alg.rto().as_millis();
        let now = now + Duration::from_secs(10);
        assert_eq!(
            first_timers(alg.as_mut(), now, true),
            ms(&[rto.max(500); 3]),
            "{name}"
        );
    }
    // BasicRTO never multiplies (Californium 3.x).
    let mut alg = build("basic-rto", &[]);
    assert_eq!(
        first_timers(alg.as_mut(), Instant::ZERO, true),
        ms(&[2000, 2000, 2000])
    );
}
