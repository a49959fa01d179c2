//! Exact instants of the trace-driven link: rate changes, delay changes, loop and hold, outages.

use std::sync::Arc;

use coaplab_base::time::{Duration, Instant};

use super::format::{parse, write};
use super::nbiot::{class_path, generate, NbiotTraceParams, CLASSES};
use super::traced::{Traced, TracedStage};
use super::{LinkTrace, TraceEnd, TraceSegment};
use crate::record::Direction;

fn ns(x: i64) -> Instant {
    Instant::from_nanos(x)
}

fn ms(x: i64) -> Duration {
    Duration::from_millis(x)
}

fn seg(start_ms: i64, rate_bps: u64, delay_ms: i64) -> TraceSegment {
    TraceSegment {
        start: ms(start_ms),
        rate_bps,
        delay: ms(delay_ms),
    }
}

fn stage(segments: Vec<TraceSegment>, end: TraceEnd) -> TracedStage {
    TracedStage::new(Arc::new(LinkTrace::new(segments, end).unwrap()))
}

fn sent(ser_start: i64, ser_end: i64, at: i64) -> Traced {
    Traced {
        ser_start: ns(ser_start),
        ser_end: ns(ser_end),
        at: ns(at),
    }
}

#[test]
fn a_packet_straddling_one_rate_change_is_integrated_across_it() {
    // 8000 bit/s until 100 ms, then 16000 bit/s. A 200-B packet (1600 bit) at 0: 800 bit in
    // the first 100 ms, the other 800 bit at 16 kbit/s take 50 ms: ends at 150 ms exactly.
    let mut s = stage(
        vec![seg(0, 8_000, 10), seg(100, 16_000, 10)],
        TraceEnd::Hold,
    );
    assert_eq!(s.transmit(ns(0), 200), sent(0, 150_000_000, 160_000_000));
    // Back to back: 1600 bit at 16 kbit/s = 100 ms.
    assert_eq!(
        s.transmit(ns(0), 200),
        sent(150_000_000, 250_000_000, 260_000_000)
    );
    assert_eq!(s.busy_time(), Duration::from_millis(250));
}

#[test]
fn several_rate_changes_with_fractional_nanoseconds() {
    // 30 kbit/s, then 7 kbit/s from 50 ms, then 60 kbit/s from 60 ms. A 295-B packet (2360
    // bit) at 0: 1500 bit by 50 ms; 70 bit in the 10 ms at 7 kbit/s; the last 790 bit at
    // 60 kbit/s take 13,166,666.67 ns: the end is 73,166,666.67 ns, reported rounded up.
    let mut s = stage(
        vec![seg(0, 30_000, 0), seg(50, 7_000, 0), seg(60, 60_000, 0)],
        TraceEnd::Hold,
    );
    assert_eq!(s.transmit(ns(0), 295), sent(0, 73_166_667, 73_166_667));
    // The remainder is carried: the next 295 B (2360 bit at 60 kbit/s = 39,333,333.33 ns)
    // starts at the exact end and ends at 112,500,000 exactly (the two thirds add up to 1).
    assert_eq!(
        s.transmit(ns(1), 295),
        sent(73_166_667, 112_500_000, 112_500_000)
    );
}

#[test]
fn a_constant_trace_is_the_constant_serializer_to_the_nanosecond() {
    use crate::link::serializer::Serializer;
    let mut traced = TracedStage::new(Arc::new(LinkTrace::constant(30_000, ms(400))));
    let mut plain = Serializer::new(30_000, 0);
    let arrivals = [0, 0, 0, 78_666_666, 500_000_000, 500_000_001, 2_000_000_000];
    for (i, a) in arrivals.into_iter().enumerate() {
        let bytes = 40 + 37 * i as u32;
        let (start, end) = plain.transmit(ns(a), bytes);
        assert_eq!(
            traced.transmit(ns(a), bytes),
            sent_at(start, end, end + ms(400))
        );
    }
    assert_eq!(traced.busy_time(), plain.busy_time());
}

fn sent_at(ser_start: Instant, ser_end: Instant, at: Instant) -> Traced {
    Traced {
        ser_start,
        ser_end,
        at,
    }
}

#[test]
fn a_delay_decrease_never_reorders() {
    // 80 kbit/s (1 B per 100 µs); delay 500 ms until 10 ms, then 100 ms.
    let mut s = stage(
        vec![seg(0, 80_000, 500), seg(10, 80_000, 100)],
        TraceEnd::Hold,
    );
    // 50 B: ends at 5 ms, delay 500 ms.
    assert_eq!(s.transmit(ns(0), 50), sent(0, 5_000_000, 505_000_000));
    // Ends at exactly 10 ms: the exact end is in the new segment, so 100 ms, but it may not
    // overtake the first packet: delivered with it.
    assert_eq!(
        s.transmit(ns(0), 50),
        sent(5_000_000, 10_000_000, 505_000_000)
    );
    // Much later the new delay applies unclamped.
    assert_eq!(
        s.transmit(ns(1_000_000_000), 50),
        sent(1_000_000_000, 1_005_000_000, 1_105_000_000)
    );
}

#[test]
fn a_delay_increase_applies_at_the_last_bit() {
    let mut s = stage(
        vec![seg(0, 80_000, 100), seg(10, 80_000, 300)],
        TraceEnd::Hold,
    );
    // Ends at 9.9 ms: old delay. The next ends at 19.9 ms: new delay.
    assert_eq!(s.transmit(ns(0), 99), sent(0, 9_900_000, 109_900_000));
    assert_eq!(
        s.transmit(ns(0), 100),
        sent(9_900_000, 19_900_000, 319_900_000)
    );
}

#[test]
fn an_outage_holds_packets_until_the_rate_returns() {
    // 80 kbit/s, nothing from 10 ms to 30 ms, 80 kbit/s again.
    let mut s = stage(
        vec![seg(0, 80_000, 1), seg(10, 0, 1), seg(30, 80_000, 1)],
        TraceEnd::Hold,
    );
    // 150 B at 0: 100 B by 10 ms, waits 20 ms, the last 50 B by 35 ms.
    assert_eq!(s.transmit(ns(0), 150), sent(0, 35_000_000, 36_000_000));
    // Arriving inside the outage: starts when it ends.
    let mut s = stage(
        vec![seg(0, 80_000, 1), seg(10, 0, 1), seg(30, 80_000, 1)],
        TraceEnd::Hold,
    );
    assert_eq!(
        s.transmit(ns(15_000_000), 10),
        sent(30_000_000, 31_000_000, 32_000_000)
    );
    assert_eq!(s.busy_time(), Duration::from_millis(1));
}

#[test]
fn a_looping_trace_repeats_and_a_hold_trace_holds() {
    let segments = || vec![seg(0, 80_000, 0), seg(100, 8_000, 0)];
    let mut looping = stage(segments(), TraceEnd::Loop { period: ms(200) });
    let mut holding = stage(segments(), TraceEnd::Hold);
    // At 250 ms the loop is back in its first segment (80 kbit/s: 10 B = 1 ms)...
    assert_eq!(
        looping.transmit(ns(250_000_000), 10),
        sent(250_000_000, 251_000_000, 251_000_000)
    );
    // ... while the hold trace still runs at 8 kbit/s (10 ms).
    assert_eq!(
        holding.transmit(ns(250_000_000), 10),
        sent(250_000_000, 260_000_000, 260_000_000)
    );
    // A packet straddling the period's end: 10 B at 8 kbit/s from 395 ms, 5 B by 400 ms,
    // then 80 kbit/s: 0.5 ms more.
    assert_eq!(
        looping.transmit(ns(395_000_000), 10),
        sent(395_000_000, 400_500_000, 400_500_000)
    );
    let trace = LinkTrace::new(segments(), TraceEnd::Loop { period: ms(200) }).unwrap();
    assert_eq!(trace.segment_at(ns(1_000_150_000_000)).rate_bps, 8_000);
    assert_eq!(trace.segment_at(ns(-5)).rate_bps, 80_000);
}

#[test]
fn bad_shapes_are_refused() {
    use super::ShapeError;
    assert_eq!(
        LinkTrace::new(vec![], TraceEnd::Hold),
        Err(ShapeError::Empty)
    );
    assert_eq!(
        LinkTrace::new(vec![seg(5, 1, 0)], TraceEnd::Hold),
        Err(ShapeError::FirstNotAtZero)
    );
    assert_eq!(
        LinkTrace::new(vec![seg(0, 1, 0), seg(0, 2, 0)], TraceEnd::Hold),
        Err(ShapeError::NotIncreasing { index: 1 })
    );
    assert_eq!(
        LinkTrace::new(vec![seg(0, 1, 0), seg(10, 0, 0)], TraceEnd::Hold),
        Err(ShapeError::HoldsAnOutage)
    );
    assert_eq!(
        LinkTrace::new(vec![seg(0, 0, 0)], TraceEnd::Loop { period: ms(10) }),
        Err(ShapeError::NeverSends)
    );
    assert_eq!(
        LinkTrace::new(
            vec![seg(0, 1, 0), seg(10, 1, 0)],
            TraceEnd::Loop { period: ms(10) }
        ),
        Err(ShapeError::PeriodTooShort)
    );
}

#[test]
fn the_file_format_round_trips_and_reads_exact_decimals() {
    let text = "# a comment\n\ntime_ms,rate_bps,delay_ms\n0,30000,400\n61250.5,3750,400.000001\n90000,0,12\n120000,loop\n";
    let trace = parse(text).unwrap();
    assert_eq!(
        trace.segments()[1],
        TraceSegment {
            start: Duration::from_nanos(61_250_500_000),
            rate_bps: 3_750,
            delay: Duration::from_nanos(400_000_001),
        }
    );
    assert_eq!(
        trace.end(),
        TraceEnd::Loop {
            period: ms(120_000)
        }
    );
    let written = write(&trace, &["made by a test".to_string()]);
    assert!(
        written.starts_with("# made by a test\ntime_ms,rate_bps,delay_ms\n0,30000,400\n61250.5,")
    );
    assert_eq!(parse(&written).unwrap(), trace);
    // No header, no loop: holds.
    assert_eq!(parse("0, 1000, 5\n").unwrap().end(), TraceEnd::Hold);
}

#[test]
fn bad_files_name_the_line() {
    let err = |text: &str| {
        let e = parse(text).unwrap_err();
        (e.line, e.to_string())
    };
    assert_eq!(err("").0, 0);
    let (line, msg) = err("0,1000,5\n# x\n10,fast,5\n");
    assert_eq!(line, 3);
    assert!(msg.contains("rate_bps: 'fast'"), "{msg}");
    assert_eq!(err("0,1000,5\n10,1000,-1\n").0, 2);
    assert_eq!(err("0,1000,5\n10,1000,0.0000001\n").0, 2);
    assert_eq!(err("0,1000,5\n5,1000\n").0, 2);
    assert_eq!(err("0,1000,5\n5,1000,5\n5,1000,5\n").0, 3);
    assert_eq!(err("3,1000,5\n").0, 1);
    assert_eq!(err("0,1000,5\n10,0,5\n").0, 2);
    assert_eq!(err("0,1000,5\n10,1000,5\n10,loop\n").0, 3);
    assert_eq!(err("0,1000,5\n20,loop\n30,1000,5\n").0, 3);
    assert_eq!(err("0,1000,5\ntime_ms,rate_bps,delay_ms\n").0, 2);
}

#[test]
fn the_nbiot_generator_is_seeded_and_shares_the_class_path() {
    let params = NbiotTraceParams::default();
    let down = generate(&params, 7, Direction::Down);
    let up = generate(&params, 7, Direction::Up);
    assert_eq!(down, generate(&params, 7, Direction::Down));
    assert_ne!(down, generate(&params, 8, Direction::Down));
    assert_eq!(down.segments().len(), up.segments().len());
    assert_eq!(
        down.end(),
        TraceEnd::Loop {
            period: ms(600_000)
        }
    );
    for (d, u) in down.segments().iter().zip(up.segments()) {
        assert_eq!(d.start, u.start);
        let class = CLASSES
            .iter()
            .position(|c| c.down_rate_bps == d.rate_bps)
            .unwrap();
        assert_eq!(u.rate_bps, CLASSES[class].up_rate_bps);
        assert_eq!((d.delay, u.delay), (ms(400), ms(200)));
    }
    // Starts in CE0 (the nbiot preset), each move to a neighbouring class.
    assert_eq!(down.segments()[0].rate_bps, 30_000);
    let mut rng = crate::rng::stream(7, "link-trace/nbiot");
    let path = class_path(&params, &mut rng);
    assert!(path.windows(2).all(|w| w[0].1.abs_diff(w[1].1) == 1));
    // The extra delays apply to their classes.
    let extra = NbiotTraceParams {
        extra_delay: [ms(100), ms(1000)],
        ..params
    };
    let down = generate(&extra, 7, Direction::Down);
    for s in down.segments() {
        let want = match s.rate_bps {
            30_000 => 400,
            3_750 => 500,
            _ => 1400,
        };
        assert_eq!(s.delay, ms(want));
    }
}

#[test]
fn the_nbiot_rates_divide_by_eight_per_class() {
    for pair in CLASSES.windows(2) {
        assert_eq!(pair[1].mcl_db - pair[0].mcl_db, 10);
        for (a, b) in [
            (pair[0].down_rate_bps, pair[1].down_rate_bps),
            (pair[0].up_rate_bps, pair[1].up_rate_bps),
        ] {
            assert_eq!((a as f64 / 8.0).round() as u64, b);
        }
    }
    let preset = crate::NetworkConfig::preset(crate::Preset::Nbiot);
    assert_eq!(CLASSES[0].down_rate_bps, preset.down.rate_bps);
    assert_eq!(CLASSES[0].up_rate_bps, preset.up.rate_bps);
    assert_eq!(
        ms(CLASSES[0].down_delay_ms as i64),
        preset.down.propagation.delay
    );
    assert_eq!(
        ms(CLASSES[0].up_delay_ms as i64),
        preset.up.propagation.delay
    );
}
