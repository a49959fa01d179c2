//! RFC 7252 §4.4: a Message ID is not reused towards a peer within EXCHANGE_LIFETIME (issue
//! 32 #7). A block-wise GET of more than 65,536 blocks used to wrap its 16-bit IDs within
//! the lifetime, and the server's duplicate cache answered the new block with an old one.
//! Now the client waits (`Event::MessageIdsExhausted`) until the next group of IDs is free.

use crate::common::*;
use coaplab_cc::time::{Duration, Instant};
use coaplab_endpoint::{Config, Endpoint, Event, Request, Router};
use coaplab_wire::{Code, Message};

/// 70,000 blocks of 16 B at a 2-ms round trip: IDs wrap at block 65,536 (t ≈ 131 s), well
/// within the server's 247-s duplicate lifetime. The body arrives whole and exact, after a
/// wait until the first group of 1,024 IDs is 247 s old, and no ID repeats within 247 s.
#[test]
fn a_transfer_past_65536_blocks_waits_for_message_ids_and_arrives_exact() {
    const BLOCKS: usize = 70_000;
    let len = BLOCKS * 16;
    let client = Endpoint::new(
        Config {
            initial_message_id: 0xfff0,
            ..block_config(16)
        },
        factory("default", &[], 0.0),
        Router::new(),
    )
    .unwrap();
    let server = Endpoint::new(
        block_config(16),
        factory("default", &[], 0.0),
        Router::new(),
    )
    .unwrap();
    let mut pair = Pair::new(client, server, Duration::from_millis(1));
    pair.client.request(
        Instant::ZERO,
        addr(SERVER),
        &Request::get(&format!("data/{len}")),
    );
    pair.drive(10 * BLOCKS);
    let done = pair.client(|e| match e {
        Event::RequestCompleted { code, body, .. } => Some((*code, body.clone())),
        Event::RequestFailed { reason, .. } => panic!("failed: {reason:?}"),
        _ => None,
    });
    assert_eq!(done.len(), 1);
    let (code, body) = &done[0];
    assert_eq!(*code, Code::CONTENT);
    assert_eq!(body.len(), len);
    assert!(
        body.iter().enumerate().all(|(i, &b)| b == i as u8),
        "exact bytes"
    );
    // The wrap waits: each wait ends when the group of 1,024 IDs to be reused was last
    // used 247 s before.
    let waits = pair.client(|e| match e {
        Event::MessageIdsExhausted { until, at } => Some((*at, *until)),
        _ => None,
    });
    assert!(!waits.is_empty(), "the wrap was reached");
    for &(at, until) in &waits {
        assert!(until > at && until - at <= Duration::from_secs(247));
    }
    // No Message ID sent within 247 s of its previous use.
    let mut last: std::collections::HashMap<u16, Instant> = Default::default();
    let mut seen_ids = std::collections::HashSet::new();
    for w in pair.wire.iter().filter(|w| w.up) {
        let m = Message::decode(&w.bytes).unwrap();
        if !seen_ids.insert((m.message_id, w.at)) {
            continue;
        }
        if let Some(&t) = last.get(&m.message_id) {
            // A retransmission keeps its ID (same exchange, within its own transmission
            // span); a new exchange must wait the lifetime.
            assert!(
                w.at - t < Duration::from_secs(100) || w.at - t >= Duration::from_secs(247),
                "ID {} reused after {:?}",
                m.message_id,
                w.at - t
            );
            if w.at - t < Duration::from_secs(100) {
                continue;
            }
        }
        last.insert(m.message_id, w.at);
    }
    assert_eq!(
        pair.server(|e| matches!(e, Event::DuplicateRequest { .. }).then_some(())),
        Vec::<()>::new(),
        "the server took nothing for a duplicate"
    );
}

/// A stalled request can be cancelled; the endpoint then has nothing to wake for.
#[test]
fn a_request_waiting_for_a_message_id_can_be_cancelled() {
    let mut c = Endpoint::new(
        Config {
            message_id_lifetime: Some(Duration::from_secs(10)),
            ..Config::default()
        },
        factory("default", &[], 0.0),
        Router::new(),
    )
    .unwrap();
    let s = addr(SERVER);
    // 65,536 NON requests, each cancelled at once: every ID used at t = 0.
    for _ in 0..65_536 {
        let id = c.request(Instant::ZERO, s, &Request::get("x").non());
        assert!(c.cancel(Instant::ZERO, id));
    }
    while c.poll_transmit(Instant::ZERO).is_some() {}
    while c.poll_event().is_some() {}
    let id = c.request(ms(5), s, &Request::get("x"));
    assert_eq!(c.poll_transmit(ms(5)), None, "waits");
    assert!(matches!(
        c.poll_event(),
        Some(Event::MessageIdsExhausted { until, .. }) if until == Instant::from_secs(10)
    ));
    assert_eq!(c.poll_timeout(), Some(Instant::from_secs(10)));
    // At 10 s it goes out.
    c.handle_timeout(Instant::from_secs(10));
    assert!(c.poll_transmit(Instant::from_secs(10)).is_some());
    assert!(c.cancel(Instant::from_secs(10), id));
    // Another stall, cancelled while waiting: nothing left to wake for.
    let mut c2 = Endpoint::new(
        Config {
            message_id_lifetime: Some(Duration::from_secs(10)),
            ..Config::default()
        },
        factory("default", &[], 0.0),
        Router::new(),
    )
    .unwrap();
    for _ in 0..65_536 {
        let id = c2.request(Instant::ZERO, s, &Request::get("x").non());
        c2.cancel(Instant::ZERO, id);
    }
    let id = c2.request(ms(5), s, &Request::get("x"));
    assert!(c2.cancel(ms(5), id));
    c2.handle_timeout(Instant::from_secs(10));
    while c2.poll_event().is_some() {}
    while c2.poll_transmit(Instant::from_secs(10)).is_some() {}
    assert_eq!(c2.open_requests(), 0);
}
