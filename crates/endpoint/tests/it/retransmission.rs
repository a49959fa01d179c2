//! Exact retransmission timelines under `default` and `fasor`, with scripted loss.

use crate::common::*;
use coaplab_cc::time::Duration;
use coaplab_endpoint::{AnswerKind, Config, Event, FailReason, Request};
use coaplab_wire::Code;

fn secs(v: f64) -> Duration {
    Duration::from_secs_f64_round_us(v)
}

/// RFC 7252 §4.2 example: u = 0.4 gives 2.4, 4.8, 9.6, 19.2, 38.4 s; with
/// MAX_RETRANSMIT = 4 and every request lost, the exchange gives up at 74.4 s.
#[test]
fn default_gives_up_after_max_retransmit_with_exact_times() {
    let mut pair = Pair::with_factory(factory("default", &[], 0.4));
    pair.drop_up = (0..10).collect();
    pair.client.request(pair.now, addr(SERVER), &post());
    pair.drive(1000);
    assert_eq!(
        pair.up_times(),
        [ms(0), ms(2400), ms(7200), ms(16800), ms(36000)]
    );
    assert_eq!(pair.expired_timers(), [2.4, 4.8, 9.6, 19.2, 38.4].map(secs));
    let failed = pair.client(|e| match e {
        Event::ExchangeFailed {
            transmissions,
            reason,
            at,
            ..
        } => Some((*transmissions, *reason, *at)),
        _ => None,
    });
    assert_eq!(failed, [(5, FailReason::GiveUp, ms(74_400))]);
    let req_failed = pair.client(|e| match e {
        Event::RequestFailed { reason, at, .. } => Some((*reason, *at)),
        _ => None,
    });
    assert_eq!(req_failed, [(FailReason::GiveUp, ms(74_400))]);
    assert!(pair.server_events.is_empty());
}

/// The fasor18 preset caps the default series at 60 s (docs/algorithms.md, 'Presets').
#[test]
fn default_fasor18_caps_timers_at_60s() {
    let mut pair = Pair::with_factory(factory("default", &["preset=fasor18"], 0.4));
    pair.drop_up = (0..7).collect();
    pair.client.request(pair.now, addr(SERVER), &post());
    pair.drive(1000);
    // Transmissions at 0, 2.4, 7.2, 16.8, 36.0, 74.4, 134.4, 194.4 (the 8th gets through).
    assert_eq!(
        pair.up_times(),
        [0, 2400, 7200, 16800, 36000, 74400, 134_400, 194_400].map(ms)
    );
    assert_eq!(
        pair.expired_timers(),
        [2.4, 4.8, 9.6, 19.2, 38.4, 60.0, 60.0].map(secs)
    );
    let done = pair.client(|e| match e {
        Event::ExchangeCompleted {
            transmissions, rtt, ..
        } => Some((*transmissions, *rtt)),
        _ => None,
    });
    assert_eq!(done, [(8, Duration::from_millis(194_600))]);
}

/// FASOR (draft-ietf-core-fasor-02): a clean exchange seeds FastRTO = 1.5 R, an ambiguous one sets
/// SlowRTO = 1.5 R0 and FAST_SLOW_FAST, whose k = 1 timer is max(SlowRTO, 2F).
fn fasor_trace(name: &str) -> Pair {
    fasor_trace_with(name, &[], Config::default())
}

fn fasor_trace_with(name: &str, extra: &[&str], server: Config) -> Pair {
    let mut settings = vec!["preset=fasor18"];
    settings.extend_from_slice(extra);
    let mut pair = Pair::with(
        Config::default(),
        factory(name, &settings, 0.5),
        server,
        router(),
    );
    // Up packets: #0 ex1; #1,#2 ex2 (original lost); #3,#4,#5 ex3 (two lost).
    pair.drop_up = vec![1, 3, 4];
    let server = addr(SERVER);
    let request = post();
    pair.client.request(pair.now, server, &request);
    pair.drive(1000);
    pair.client.request(pair.now, server, &request);
    pair.drive(1000);
    pair.client.request(pair.now, server, &request);
    pair.drive(1000);
    pair
}

#[test]
fn fasor_timeline_fast_then_fast_slow_fast() {
    let pair = fasor_trace("fasor");
    // ex1 at 0: first timer 2 + (2/3)(1/4 + 3/4 · 0.5) = 2.416667 s, answered at 0.2 s:
    // FastRTO 0.3, SRTT 0.2. ex2 at 0.2: timer 0.3 + 0.2 · 0.625 = 0.425 s, original lost,
    // copy 1 at 0.625, ACK at 0.825: R0 = 0.625, SlowRTO 0.9375, FAST_SLOW_FAST.
    // ex3 at 0.825: F = 0.425; k = 1 timer max(0.9375, 0.85) = 0.9375; k = 2 timer 2F = 0.85.
    assert_eq!(
        pair.up_times(),
        [
            us(0),
            us(200_000),
            us(625_000),
            us(825_000),
            us(1_250_000),
            us(2_187_500)
        ]
    );
    assert_eq!(pair.expired_timers(), [0.425, 0.425, 0.9375].map(secs));
    let done = pair.client(|e| match e {
        Event::ExchangeCompleted {
            transmissions,
            rtt,
            answered,
            kind,
            ..
        } => Some((*transmissions, *rtt, *answered, *kind)),
        _ => None,
    });
    let p = AnswerKind::Piggybacked;
    assert_eq!(
        done,
        [
            (1, Duration::from_millis(200), None, p),
            (2, Duration::from_millis(625), None, p),
            (3, Duration::from_micros(1_562_500), None, p),
        ]
    );
    let snap = &pair
        .client
        .controller(addr(SERVER))
        .unwrap()
        .algorithm
        .snapshot();
    assert_eq!(snap.state, Some("SLOW_FAST"));
}

/// FASOR+token: copy j carries token base ‖ j; the echo names the copy answered, so the
/// ambiguous exchanges still give samples (Globecom 2018; draft-ietf-core-fasor-02).
#[test]
fn fasor_token_marks_copies_and_reads_the_echo() {
    let pair = fasor_trace("fasor-token");
    // Same first two exchanges' timers; ex2's answer names copy 1 (R = 0.2).
    let done = answered(&pair);
    assert_eq!(done[0], (1, Some(0)));
    assert_eq!(done[1], (2, Some(1)));
    // Copies of ex2 differ only in the last token byte; the 2-byte token is base(1) ‖ j.
    let ups = pair.up_bytes();
    assert_eq!(ups[1][0] & 0x0f, 2);
    assert_eq!(ups[1][5], 0);
    assert_eq!(ups[2][5], 1);
    assert_eq!(ups[1][..5], ups[2][..5]);
    assert_eq!(ups[1][6..], ups[2][6..]);
    assert_eq!(ups[1].len(), 60);
    // ex3: ex2's second sample R = 0.2 gave RTTVAR 0.01875 and FastRTO 0.275, prev_sample
    // 0.2; F = max(0.275, 0.2) + 0.2 · 0.625 = 0.4. FAST_SLOW_FAST k = 1: max(0.9375, 0.8).
    assert_eq!(
        pair.up_times(),
        [
            us(0),
            us(200_000),
            us(625_000),
            us(825_000),
            us(1_225_000),
            us(2_162_500)
        ]
    );
    assert_eq!(pair.expired_timers(), [0.425, 0.4, 0.9375].map(secs));
    assert_eq!(done[2], (3, Some(2)));
}

/// A duplicate request (the response was lost) is answered from the cache: the handler does
/// not run again, and the replay is byte-identical.
#[test]
fn lost_response_is_replayed_from_the_cache() {
    let mut pair = Pair::default_client(Config::default(), router());
    pair.drop_down = vec![0];
    pair.client
        .request(pair.now, addr(SERVER), &Request::post("f", vec![7; 51]));
    pair.drive(1000);
    assert_eq!(pair.up_times(), [ms(0), ms(2000)]);
    assert_eq!(pair.down_times(), [ms(100), ms(2100)]);
    let downs = pair.down_bytes();
    assert_eq!(downs[0], downs[1]);
    assert_eq!(downs[0].len(), 60);
    assert_eq!(&downs[0][..2], [0x62, 0x44]); // ACK, TKL 2, 2.04 Changed
    let served = pair.server(|e| matches!(e, Event::Served { .. }).then_some(()));
    let dups = pair.server(|e| match e {
        Event::DuplicateRequest { at, .. } => Some(*at),
        _ => None,
    });
    assert_eq!(served.len(), 1);
    assert_eq!(dups, [ms(2100)]);
    let done = pair.client(|e| match e {
        Event::RequestCompleted {
            code,
            body_len,
            started,
            at,
            ..
        } => Some((*code, *body_len, *started, *at)),
        _ => None,
    });
    assert_eq!(done, [(Code::CHANGED, 53, ms(0), ms(2200))]);
    assert_eq!(pair.expired_timers(), [Duration::from_secs(2)]);
}

/// Transmissions and answered copy of every completed exchange of the client.
fn answered(pair: &Pair) -> Vec<(u32, Option<u32>)> {
    pair.client(|e| match e {
        Event::ExchangeCompleted {
            transmissions,
            answered,
            ..
        } => Some((*transmissions, *answered)),
        _ => None,
    })
}

fn answered_and_sizes(pair: &Pair) -> (Vec<(u32, Option<u32>)>, Vec<usize>) {
    let sizes = pair.up_bytes().iter().map(|b| b.len()).collect();
    (answered(pair), sizes)
}

/// Rexmit-Cnt (Globecom 2018; draft-ietf-core-fasor-02): the first original probes with 255 (4 more
/// bytes: extended delta to 65020 + value); the echo enables the option, so later originals carry
/// it empty (3 B) and copy j carries j. The answers and timers equal the token variant's.
#[test]
fn fasor_rexmit_cnt_probes_then_marks_copies() {
    let pair = fasor_trace_with("fasor", &["token_mode=rexmit_cnt"], Config::default());
    let (done, sizes) = answered_and_sizes(&pair);
    assert_eq!(done, [(1, Some(0)), (2, Some(1)), (3, Some(2))]);
    assert_eq!(sizes, [64, 63, 64, 63, 64, 64]);
    let token = fasor_trace("fasor-token");
    assert_eq!(pair.up_times(), token.up_times());
    assert_eq!(pair.expired_timers(), token.expired_timers());
    let last =
        coaplab_wire::Message::decode(&pair.wire.iter().rfind(|w| !w.up).unwrap().bytes).unwrap();
    assert_eq!(last.options.iter().last(), Some((65020, &[2u8][..])));
}

/// A server that does not echo Rexmit-Cnt turns the option off: plain FASOR.
#[test]
fn fasor_rexmit_cnt_falls_back_without_echo() {
    let server = Config {
        rexmit_cnt_echo: None,
        ..Config::default()
    };
    let pair = fasor_trace_with("fasor", &["token_mode=rexmit_cnt"], server);
    let (done, sizes) = answered_and_sizes(&pair);
    assert_eq!(done, [(1, None), (2, None), (3, None)]);
    assert_eq!(sizes, [64, 60, 60, 60, 60, 60]);
    assert_eq!(pair.up_times(), fasor_trace("fasor").up_times());
}

/// `emit_sent_events = false` (the simulator's clients) leaves out `Event::Sent` and nothing
/// else: the same packets, byte for byte, and every other event in the same order.
#[test]
fn sent_events_off_changes_no_packet() {
    let with = |emit_sent_events| {
        let mut pair = Pair::with(
            Config {
                emit_sent_events,
                ..Config::default()
            },
            factory("default", &["preset=fasor18"], 0.4),
            Config::default(),
            router(),
        );
        pair.drop_up = [0, 1, 3].into();
        pair.client.request(pair.now, addr(SERVER), &post());
        pair.client.request(pair.now, addr(SERVER), &post());
        pair.drive(1000);
        pair
    };
    let (on, off) = (with(true), with(false));
    assert_eq!(on.up_times(), off.up_times());
    assert_eq!(on.up_bytes(), off.up_bytes());
    assert_eq!(on.down_bytes(), off.down_bytes());
    let sent = |e: &Event| match *e {
        Event::Sent {
            exchange, ordinal, ..
        } => Some((exchange, ordinal)),
        _ => None,
    };
    let others = |e: &Event| sent(e).is_none().then(|| format!("{e:?}"));
    // One event per datagram the client sent (all of them copies of its requests).
    assert_eq!(on.client(sent).len(), on.up_times().len());
    assert!(on.up_times().len() > 2);
    assert!(off.client(sent).is_empty());
    assert_eq!(on.client(others), off.client(others));
    assert!(!off.client(others).is_empty());
}
