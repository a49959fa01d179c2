//! RFC 7252 message-layer behaviour through the harness: NSTART queueing, RST for unexpected
//! messages, malformed input, the token-mode replay caveat, the duplicate cache's lifetime,
//! destination reset and the transmit buffer swap.

use crate::common::*;
use coaplab_cc::time::{Duration, Instant};
use coaplab_endpoint::{AnswerKind, Config, Event, IgnoreReason, Router, TransmitMeta};
use coaplab_wire::{Code, Message, MessageBuf, MessageType, Token};

/// NSTART = 1: the second and third requests wait in FIFO order and start when the previous
/// exchange is answered; NSTART = 2 lets two out at once.
#[test]
fn nstart_queues_requests_fifo() {
    let mut pair = Pair::default_client(Config::default(), router());
    let s = addr(SERVER);
    let ids: Vec<_> = (0..3)
        .map(|_| pair.client.request(Instant::ZERO, s, &post()))
        .collect();
    assert_eq!(pair.client.in_flight(s), 1);
    assert_eq!(pair.client.queued(s), 2);
    pair.drive(1000);
    assert_eq!(pair.up_times(), [0, 200, 400].map(ms));
    let done = pair.client(|e| match e {
        Event::RequestCompleted { request, at, .. } => Some((*request, *at)),
        _ => None,
    });
    assert_eq!(
        done,
        [(ids[0], ms(200)), (ids[1], ms(400)), (ids[2], ms(600))]
    );
    assert_eq!(pair.client.in_flight(s), 0);

    let mut pair = Pair::with(
        Config {
            nstart: 2,
            ..Config::default()
        },
        factory("default", &[], 0.0),
        Config::default(),
        router(),
    );
    for _ in 0..3 {
        pair.client.request(Instant::ZERO, s, &post());
    }
    pair.drive(1000);
    assert_eq!(pair.up_times(), [0, 0, 200].map(ms));
}

/// A CON response nobody asked for is rejected with RST (RFC 7252 §4.2); an unmatched ACK is
/// counted and ignored.
#[test]
fn unexpected_con_response_gets_rst() {
    let mut pair = Pair::default_client(Config::default(), Router::new());
    let stray = MessageBuf::new(
        MessageType::Con,
        Code::CONTENT,
        0x1234,
        Token::new(&[9, 9]).unwrap(),
    );
    pair.client
        .handle_datagram(ms(5), addr(SERVER), &stray.to_bytes().unwrap());
    let t = pair.client.poll_transmit(ms(5)).unwrap();
    assert_eq!(t.contents, [0x70, 0x00, 0x12, 0x34]);
    assert_eq!(t.destination, addr(SERVER));
    assert_eq!(
        t.meta,
        TransmitMeta::Reply {
            message_id: 0x1234,
            replayed: false
        }
    );
    assert_eq!(
        pair.client.poll_event(),
        Some(Event::Rejected {
            from: addr(SERVER),
            message_id: 0x1234,
            at: ms(5)
        })
    );
    // An empty CON ("ping") is rejected too; a stray ACK is ignored.
    pair.client
        .handle_datagram(ms(6), addr(SERVER), &[0x40, 0x00, 0x00, 0x07]);
    assert_eq!(
        pair.client.poll_transmit(ms(6)).unwrap().contents,
        [0x70, 0x00, 0x00, 0x07]
    );
    let _ = pair.client.poll_event();
    pair.client
        .handle_datagram(ms(7), addr(SERVER), &[0x60, 0x00, 0x00, 0x08]);
    assert!(pair.client.poll_transmit(ms(7)).is_none());
    assert_eq!(
        pair.client.poll_event(),
        Some(Event::Ignored {
            from: addr(SERVER),
            reason: IgnoreReason::UnmatchedAck,
            at: ms(7)
        })
    );
}

/// An RST answering our CON fails the exchange and the request.
#[test]
fn rst_fails_the_exchange() {
    let mut pair = Pair::default_client(Config::default(), Router::new());
    let r = pair.client.request(ms(0), addr(SERVER), &post());
    let t = pair.client.poll_transmit(ms(0)).unwrap();
    let mid = Message::decode(&t.contents).unwrap().message_id;
    let rst = [0x70, 0x00, (mid >> 8) as u8, mid as u8];
    pair.client.handle_datagram(ms(50), addr(SERVER), &rst);
    let failed = std::iter::from_fn(|| pair.client.poll_event())
        .filter_map(|e| match e {
            Event::RequestFailed {
                request, reason, ..
            } => Some((request, reason)),
            _ => None,
        })
        .collect::<Vec<_>>();
    assert_eq!(failed, [(r, coaplab_endpoint::FailReason::Reset)]);
    assert_eq!(pair.client.poll_timeout(), None);
}

/// Malformed datagrams are counted by cause and never panic; a malformed CON with a readable
/// header is rejected with RST.
#[test]
fn malformed_input_is_counted_without_panic() {
    let mut pair = Pair::default_client(Config::default(), router());
    let server = &mut pair.server;
    server.handle_datagram(ms(1), addr(CLIENT), &[0x40]);
    // CON GET with TKL 9.
    server.handle_datagram(ms(2), addr(CLIENT), &[0x49, 0x01, 0x00, 0x02]);
    // CON GET with a payload marker and no payload.
    server.handle_datagram(ms(3), addr(CLIENT), &[0x40, 0x01, 0x00, 0x03, 0xff]);
    let labels: Vec<&str> = std::iter::from_fn(|| server.poll_event())
        .filter_map(|e| match e {
            Event::Malformed { error, .. } => Some(error.label()),
            _ => None,
        })
        .collect();
    assert_eq!(
        labels,
        [
            "truncated-header",
            "invalid-token-length",
            "payload-marker-without-payload"
        ]
    );
    let rsts: Vec<Vec<u8>> = std::iter::from_fn(|| server.poll_transmit(ms(3)))
        .map(|t| t.contents)
        .collect();
    assert_eq!(rsts, [vec![0x70, 0, 0, 2], vec![0x70, 0, 0, 3]]);

    // Seeded random bytes into both endpoints: no panic, ever.
    use coaplab_cc::rng::{Random, SeededRandom};
    let mut rng = SeededRandom::new(42);
    for i in 0..20_000 {
        let len = rng.below(40) as usize;
        let mut bytes: Vec<u8> = (0..len).map(|_| rng.below(256) as u8).collect();
        if len > 0 && i % 2 == 0 {
            bytes[0] = 0x40 | (bytes[0] & 0x3f); // mostly version 1
        }
        let now = Instant::from_millis(10 + i);
        pair.server.handle_datagram(now, addr(CLIENT), &bytes);
        pair.client.handle_datagram(now, addr(SERVER), &bytes);
        pair.drain();
    }
}

/// FASOR+token: a reply replayed from the dedup cache echoes the earlier copy's token, so the
/// sample is conservative (Globecom 2018; draft-ietf-core-fasor-02).
#[test]
fn token_mode_replay_names_the_earlier_copy() {
    let mut pair = Pair::with_factory(factory("fasor-token", &["dither=false"], 0.0));
    pair.drop_down = vec![0];
    pair.client.request(ms(0), addr(SERVER), &post());
    pair.drive(1000);
    // FastRTO 2 s undithered: copy 1 at 2.0, replayed reply (token ‖ 0) at 2.2.
    assert_eq!(pair.up_times(), [ms(0), ms(2000)]);
    let downs = pair.down_bytes();
    assert_eq!(downs[1][5], 0);
    assert_eq!(
        answers(&pair),
        [(
            2,
            Duration::from_millis(2200),
            Some(0),
            AnswerKind::Piggybacked,
            ms(2200)
        )]
    );
}

/// The duplicate cache forgets after its lifetime: a copy arriving later runs the handler
/// again.
#[test]
fn dedup_lifetime_bounds_the_cache() {
    // The response to the original is lost; copy 1 (sent at 2 s) reaches the server at
    // 3.5 s, 2 s after the original: remembered with a 3-s lifetime, forgotten with 1.5 s.
    let lost_response = |dedup_lifetime: Duration| {
        let mut pair = Pair::default_client(
            Config {
                dedup_lifetime: Some(dedup_lifetime),
                ..Config::default()
            },
            router(),
        );
        pair.delay = Duration::from_millis(1500);
        pair.drop_down = vec![0];
        pair.client.request(ms(0), addr(SERVER), &post());
        pair.drive(1000);
        pair
    };

    let pair = lost_response(Duration::from_secs(3));
    let served = pair.server(|e| matches!(e, Event::Served { .. }).then_some(()));
    assert_eq!(served.len(), 1);
    assert_eq!(pair.server.dedup_entries(), 1);

    let pair = lost_response(Duration::from_millis(1500));
    let served = pair.server(|e| match e {
        Event::Served { at, .. } => Some(*at),
        _ => None,
    });
    assert_eq!(served, [ms(1500), ms(3500)]);
}

/// Resetting a destination gives the algorithm fresh state; message IDs continue.
#[test]
fn reset_destination_forgets_the_estimator() {
    let mut pair = Pair::with_factory(factory("fasor", &["dither=false"], 0.0));
    let s = addr(SERVER);
    pair.client.request(pair.now, s, &post());
    pair.drive(100);
    let rto = |p: &Pair| p.client.controller(s).unwrap().algorithm.rto();
    assert_eq!(rto(&pair), Duration::from_millis(300));
    pair.client.reset_destination(pair.now, s);
    assert_eq!(rto(&pair), Duration::from_secs(2));
    pair.client.request(pair.now, s, &post());
    pair.drive(100);
    let mids: Vec<u16> = pair
        .up_bytes()
        .iter()
        .map(|b| Message::decode(b).unwrap().message_id)
        .collect();
    assert_eq!(mids, [0, 1]);
}

/// `poll_transmit_into` writes the same bytes as `poll_transmit`, swapping buffers.
#[test]
fn poll_transmit_into_reuses_the_callers_buffer() {
    let mut pair = Pair::default_client(Config::default(), router());
    let s = addr(SERVER);
    pair.client.request(ms(0), s, &post());
    let mut buf = Vec::with_capacity(128);
    let head = pair.client.poll_transmit_into(ms(0), &mut buf).unwrap();
    assert_eq!(head.destination, s);
    assert!(matches!(
        head.meta,
        TransmitMeta::Exchange { ordinal: 0, .. }
    ));
    assert_eq!(buf.len(), 60);
    assert_eq!(&buf[..4], [0x42, 0x02, 0x00, 0x00]);
    assert!(pair.client.poll_transmit_into(ms(0), &mut buf).is_none());
    pair.server.handle_datagram(ms(100), addr(CLIENT), &buf);
    let head = pair.server.poll_transmit_into(ms(100), &mut buf).unwrap();
    assert_eq!(
        head.meta,
        TransmitMeta::Reply {
            message_id: 0,
            replayed: false
        }
    );
    assert_eq!(buf.len(), 60);
    assert_eq!(&buf[..4], [0x62, 0x44, 0x00, 0x00]);
}

/// `poll_transmit_with` hands the queued datagram over in place: the caller may take its
/// buffer (swapping in one of its own) and gets the same bytes as `poll_transmit_into`.
#[test]
fn poll_transmit_with_hands_the_datagram_over_in_place() {
    let mut pair = Pair::default_client(Config::default(), router());
    let s = addr(SERVER);
    pair.client.request(ms(0), s, &post());
    let mut taken = Vec::new();
    let sent = pair.client.poll_transmit_with(ms(0), |head, datagram| {
        std::mem::swap(&mut taken, datagram);
        (head.destination, head.meta)
    });
    assert!(matches!(
        sent,
        Some((d, TransmitMeta::Exchange { ordinal: 0, .. })) if d == s
    ));
    assert_eq!(taken.len(), 60);
    assert_eq!(&taken[..4], [0x42, 0x02, 0x00, 0x00]);
    assert_eq!(pair.client.poll_transmit_with(ms(0), |_, _| ()), None);
    pair.server.handle_datagram(ms(100), addr(CLIENT), &taken);
    let mut reply = Vec::new();
    let meta = pair
        .server
        .poll_transmit_with(ms(100), |head, datagram| {
            reply.extend_from_slice(datagram);
            head.meta
        })
        .unwrap();
    assert_eq!(
        meta,
        TransmitMeta::Reply {
            message_id: 0,
            replayed: false
        }
    );
    assert_eq!(&reply[..4], [0x62, 0x44, 0x00, 0x00]);
}

/// `has_output` is whether a poll would return something: a request's datagram, then its
/// `Sent` event, then nothing.
#[test]
fn has_output_is_what_the_next_poll_returns() {
    let mut client = coaplab_endpoint::Endpoint::new(
        Config::default(),
        factory("default", &[], 0.0),
        Router::new(),
    )
    .unwrap();
    assert!(!client.has_output());
    client.request(ms(0), addr(SERVER), &post());
    assert!(client.has_output());
    assert!(client.poll_transmit(ms(0)).is_some());
    assert!(client.has_output());
    while client.poll_event().is_some() {}
    assert!(!client.has_output());
    assert!(client.poll_transmit(ms(0)).is_none());
}
