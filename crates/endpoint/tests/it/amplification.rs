//! RFC 7252 §11.3 amplification, mitigated with the Echo option of RFC 9175 §2.4: to a source
//! not yet verified, a server sends at most `factor` times the bytes of the request (the 4.01
//! challenge itself included); a client repeating a fresh Echo value gets the response, and
//! its address is verified from then on. Our client repeats such requests by itself.

use std::net::SocketAddr;

use crate::common::Pair;
use coaplab_cc::time::{Duration, Instant};
use coaplab_cc::Settings;
use coaplab_endpoint::{registry_factory, Amplification, Config, Endpoint, Event, Request, Router};
use coaplab_wire::option::number;
use coaplab_wire::{Code, Message, MessageType, MessageWriter, ReadOptions, Token};

const KEY: [u8; 16] = *b"amplification-k!";

fn config(unverified_con_bytes_per_s: u64) -> Config {
    Config {
        amplification: Some(Amplification {
            factor: 3,
            unverified_con_bytes_per_s,
            unverified_replay_bytes: coaplab_endpoint::UNVERIFIED_REPLAY_BYTES,
            key: KEY,
        }),
        ..Config::default()
    }
}

fn server(config: Config) -> Endpoint {
    let factory = registry_factory("default", &Settings::new(), 1).unwrap();
    Endpoint::new(config, factory, Router::new()).unwrap()
}

/// A GET of `data/N` (token 2 B), optionally with an Echo value.
fn get(mtype: MessageType, mid: u16, path: &[u8], echo: Option<&[u8]>) -> Vec<u8> {
    let mut out = vec![0; 128];
    let mut w =
        MessageWriter::new(&mut out, mtype, Code::GET, mid, Token::from_u64(0x4a1f, 2)).unwrap();
    w.option(number::URI_PATH, b"data").unwrap();
    w.option(number::URI_PATH, path).unwrap();
    if let Some(v) = echo {
        w.option(number::ECHO, v).unwrap();
    }
    let n = w.finish();
    out.truncate(n);
    out
}

/// The one datagram the server answers `request` from `from` with, at `at`.
fn answer(s: &mut Endpoint, at: Instant, from: SocketAddr, request: &[u8]) -> Vec<u8> {
    s.handle_datagram(at, from, request);
    let t = s.poll_transmit(at).expect("an answer");
    assert!(s.poll_transmit(at).is_none());
    t.contents
}

#[test]
fn an_unverified_source_gets_at_most_three_times_its_request() {
    // Issue 11 #4: a 14-byte NON GET of data/1024 drew 1,029 bytes (73x).
    let victim: SocketAddr = "198.18.0.9:5683".parse().unwrap();
    let mut s = server(config(0));
    let t = Instant::from_secs(5);
    for (mtype, mid) in [(MessageType::Non, 1), (MessageType::Con, 2)] {
        let req = get(mtype, mid, b"1024", None);
        let reply = answer(&mut s, t, victim, &req);
        let factor = reply.len() as f64 / req.len() as f64;
        assert!(
            factor <= 3.0,
            "{mtype:?}: {} B for {} B",
            reply.len(),
            req.len()
        );
        let m = Message::decode(&reply).unwrap();
        assert_eq!(m.code, Code::UNAUTHORIZED);
        assert_eq!(m.first(number::ECHO).map(<[u8]>::len), Some(12));
        assert!(m.payload.is_empty());
    }
    // Small answers need no proof.
    let req = get(MessageType::Non, 3, b"10", None);
    let reply = answer(&mut s, t, victim, &req);
    let m = Message::decode(&reply).unwrap();
    assert_eq!((m.code, m.payload.len()), (Code::CONTENT, 10));
    assert_eq!(s.verified_sources(), 0);
}

#[test]
fn a_fresh_echo_verifies_the_source_and_a_forged_or_stale_one_does_not() {
    let client: SocketAddr = "198.18.0.9:40000".parse().unwrap();
    let mut s = server(config(0));
    let t = Instant::from_secs(5);
    let challenge = answer(&mut s, t, client, &get(MessageType::Con, 1, b"1024", None));
    let echo = Message::decode(&challenge)
        .unwrap()
        .first(number::ECHO)
        .unwrap()
        .to_vec();
    // Another address cannot use it, nor can a forged value, nor one two minutes old.
    let other: SocketAddr = "198.18.0.10:40000".parse().unwrap();
    let mut forged = echo.clone();
    forged[11] ^= 0x80;
    let late = t + Duration::from_secs(120);
    for (from, value, at) in [
        (other, &echo, t),
        (client, &forged, t),
        (client, &echo, late),
    ] {
        let m = answer(
            &mut s,
            at,
            from,
            &get(MessageType::Con, 9, b"1024", Some(value)),
        );
        assert_eq!(Message::decode(&m).unwrap().code, Code::UNAUTHORIZED);
    }
    // The client repeats the request with the value: the response, and no more challenges.
    let at = t + Duration::from_secs(30);
    let m = answer(
        &mut s,
        at,
        client,
        &get(MessageType::Con, 2, b"1024", Some(&echo)),
    );
    let m = Message::decode(&m).unwrap();
    assert_eq!((m.code, m.payload.len()), (Code::CONTENT, 1024));
    assert_eq!(s.verified_sources(), 1);
    let m = answer(
        &mut s,
        late,
        client,
        &get(MessageType::Non, 3, b"1024", None),
    );
    assert_eq!(Message::decode(&m).unwrap().payload.len(), 1024);
}

#[test]
fn con_requests_draw_on_the_allowance_before_being_challenged() {
    // 4 s of 1,000 B/s: three 1,031-B answers to unverified CON requests, then 4.01.
    let mut s = server(config(1_000));
    let t = Instant::from_secs(1);
    let codes: Vec<Code> = (0..5)
        .map(|i| {
            let from = SocketAddr::from(([198, 18, 0, 20 + i as u8], 7));
            let reply = answer(&mut s, t, from, &get(MessageType::Con, i, b"1024", None));
            Message::decode(&reply).unwrap().code
        })
        .collect();
    assert_eq!(
        codes,
        [
            Code::CONTENT,
            Code::CONTENT,
            Code::CONTENT,
            Code::UNAUTHORIZED,
            Code::UNAUTHORIZED
        ]
    );
    // NON requests never draw on it.
    let mut s = server(config(1_000_000));
    let from: SocketAddr = "198.18.0.30:7".parse().unwrap();
    let reply = answer(&mut s, t, from, &get(MessageType::Non, 1, b"1024", None));
    assert_eq!(Message::decode(&reply).unwrap().code, Code::UNAUTHORIZED);
}

#[test]
fn our_client_repeats_a_challenged_request_with_the_echo_value() {
    // A block-wise GET and a Block1 PUT whose last block's answer is large: each gets one
    // 4.01, repeats with the Echo value, and completes with the right body.
    let s = crate::common::addr(crate::common::SERVER);
    let cases = [
        // 1 challenged + 3 blocks.
        (Request::get("data/3000"), (Code::CONTENT, 3000, 4)),
        // 3 blocks up; the 2-B last block answers 1,024 B for 2,050 B received: no
        // challenge until the first Block2 follow-up (challenged, repeated), then the 2-B
        // last block.
        (
            Request::put("echo", vec![7; 2050]),
            (Code::CHANGED, 2050, 6),
        ),
    ];
    for (request, expected) in cases {
        let mut pair = Pair::default_client(config(0), Router::new());
        pair.client.request(Instant::ZERO, s, &request);
        pair.drive(10_000);
        let done = pair.client(|e| match e {
            Event::RequestCompleted {
                code,
                body_len,
                exchanges,
                ..
            } => Some((*code, *body_len, *exchanges)),
            _ => None,
        });
        assert_eq!(done, [expected], "{}", request.path);
        let challenged = pair.server(|e| matches!(e, Event::EchoChallenged { .. }).then_some(()));
        assert_eq!(challenged.len(), 1, "{}", request.path);
    }
}

/// Issue 32 #1: a CON GET of `data/1024` answered once (within the CON allowance) and then
/// resent with the same Message ID drew the cached 1,038-B answer every time, 74x the 14-B
/// duplicate, without limit, from the cache and with `reprocess` alike. Now a replay to an
/// unverified source above the factor draws on that source's replay budget (and the CON
/// allowance) and, beyond it, is answered 4.01 + Echo: one small reply per duplicate.
#[test]
fn replayed_answers_to_an_unverified_source_are_held_to_a_budget() {
    for mode in [
        coaplab_endpoint::ServerDuplicates::Cache,
        coaplab_endpoint::ServerDuplicates::Reprocess,
    ] {
        let victim: SocketAddr = "198.18.0.9:5683".parse().unwrap();
        let mut cfg = config(1 << 30);
        cfg.server_duplicates = mode;
        if let Some(a) = cfg.amplification.as_mut() {
            a.unverified_replay_bytes = 4_000;
        }
        let mut s = server(cfg);
        let t = Instant::from_secs(5);
        let req = get(MessageType::Con, 77, b"1024", None);
        let first = answer(&mut s, t, victim, &req);
        assert_eq!(Message::decode(&first).unwrap().code, Code::CONTENT);
        let (mut sent, mut full) = (0, 0);
        for i in 0..1_000 {
            let at = t + Duration::from_millis(i);
            s.handle_datagram(at, victim, &req);
            let replies: Vec<_> = std::iter::from_fn(|| s.poll_transmit(at)).collect();
            assert_eq!(replies.len(), 1, "{mode:?}: one reply per duplicate");
            let m = Message::decode(&replies[0].contents).unwrap();
            assert_eq!(m.message_id, 77);
            if m.code == Code::CONTENT {
                full += 1;
            } else {
                assert_eq!(m.code, Code::UNAUTHORIZED, "{mode:?}");
                assert!(m.first(number::ECHO).is_some());
                assert!(replies[0].contents.len() <= 3 * req.len());
            }
            sent += replies[0].contents.len();
        }
        // 4,000 B of budget in the second: three full answers, then challenges.
        assert_eq!(full, 3, "{mode:?}");
        assert!(
            sent <= 4_000 + 3 * 1_000 * req.len(),
            "{mode:?}: {sent} B for {} B",
            1_000 * req.len()
        );
        // The budget refills over its minute; a verified source is never held to it.
        let later = t + Duration::from_secs(61);
        let codes: Vec<Code> = (0..4)
            .map(|_| {
                Message::decode(&answer(&mut s, later, victim, &req))
                    .unwrap()
                    .code
            })
            .collect();
        assert_eq!(codes[..3], [Code::CONTENT; 3], "{mode:?}");
        let challenge = answer(&mut s, later, victim, &req);
        let challenge = Message::decode(&challenge).unwrap();
        assert_eq!(challenge.code, Code::UNAUTHORIZED);
        let echo = challenge.first(number::ECHO).unwrap().to_vec();
        let verify = get(MessageType::Con, 78, b"1024", Some(&echo));
        let m = answer(&mut s, later, victim, &verify);
        assert_eq!(Message::decode(&m).unwrap().code, Code::CONTENT);
        for _ in 0..20 {
            let m = answer(&mut s, later, victim, &req);
            assert_eq!(Message::decode(&m).unwrap().code, Code::CONTENT, "{mode:?}");
        }
    }
}
