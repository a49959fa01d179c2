//! `Config::max_body_bytes`: a response body (over all its Block2 blocks) larger than the
//! limit, or announced larger by Size2, fails the request with `FailReason::BodyTooLarge`
//! and no further block is asked for, so an endless Block2 cannot grow the client.

use crate::common::*;
use coaplab_cc::time::Instant;
use coaplab_endpoint::{Config, Event, FailReason, Request, Router};
use coaplab_wire::option::number;
use coaplab_wire::{Block, Code, Message, MessageBuf, MessageType};

/// 1024-B blocks on both sides, the client accepting `max` body bytes.
fn pair(max: usize) -> Pair {
    Pair::with(
        Config {
            max_body_bytes: max,
            ..block_config(1024)
        },
        factory("default", &[], 0.0),
        block_config(1024),
        Router::new(),
    )
}

fn failed(pair: &Pair) -> Vec<(FailReason, Instant)> {
    pair.client(|e| match e {
        Event::RequestFailed { reason, at, .. } => Some((*reason, *at)),
        _ => None,
    })
}

fn completed(pair: &Pair) -> Vec<usize> {
    pair.client(|e| match e {
        Event::RequestCompleted { body_len, .. } => Some(*body_len),
        _ => None,
    })
}

/// 10,000 B against a 4,096-B limit: blocks 0–3 fill it exactly, block 4 would pass it, so
/// the request fails on its arrival (5 round trips of 200 ms) and block 5 is never asked for.
#[test]
fn a_body_past_the_limit_fails_and_stops_asking() {
    let mut pair = pair(4096);
    pair.client
        .request(pair.now, addr(SERVER), &Request::get("data/10000"));
    pair.drive(1000);
    assert_eq!(pair.up_bytes().len(), 5);
    assert_eq!(failed(&pair), [(FailReason::BodyTooLarge, ms(1000))]);
    assert_eq!(completed(&pair), Vec::<usize>::new());
}

/// A body of exactly the limit completes.
#[test]
fn a_body_of_exactly_the_limit_completes() {
    let mut pair = pair(4096);
    pair.client
        .request(pair.now, addr(SERVER), &Request::get("data/4096"));
    pair.drive(1000);
    assert_eq!(completed(&pair), [4096]);
    assert_eq!(failed(&pair), []);
}

/// A single (non-block-wise) response larger than the limit fails too.
#[test]
fn a_single_response_past_the_limit_fails() {
    let mut pair = pair(100);
    pair.client
        .request(pair.now, addr(SERVER), &Request::get("data/101"));
    pair.drive(1000);
    assert_eq!(failed(&pair), [(FailReason::BodyTooLarge, ms(200))]);
}

/// The first block announces a 1-MB body with Size2 (RFC 7959 §4): the client gives up at
/// once instead of asking for block 1.
#[test]
fn a_size2_past_the_limit_fails_at_the_first_block() {
    let config = Config {
        max_body_bytes: 100_000,
        ..block_config(1024)
    };
    let mut client =
        coaplab_endpoint::Endpoint::new(config, factory("default", &[], 0.0), Router::new())
            .unwrap();
    let server = addr(SERVER);
    client.request(Instant::ZERO, server, &Request::get("big"));
    let t = client.poll_transmit(Instant::ZERO).unwrap();
    let req = Message::decode(&t.contents).unwrap();
    let mut ack = MessageBuf::new(MessageType::Ack, Code::CONTENT, req.message_id, req.token());
    let b2 = Block::with_size(0, true, 1024).unwrap();
    ack.options.push_uint(number::BLOCK2, b2.to_uint());
    ack.options.push_uint(number::SIZE2, 1_000_000);
    ack.payload = vec![0; 1024];
    client.handle_datagram(ms(10), server, &ack.to_bytes().unwrap());
    assert_eq!(client.poll_transmit(ms(10)), None);
    let failed: Vec<_> = std::iter::from_fn(|| client.poll_event())
        .filter_map(|e| match e {
            Event::RequestFailed { reason, .. } => Some(reason),
            _ => None,
        })
        .collect();
    assert_eq!(failed, [FailReason::BodyTooLarge]);
}

/// A client at `ms(0)` with one GET sent; returns it, the server address and the request.
fn scripted(max: usize) -> (coaplab_endpoint::Endpoint, std::net::SocketAddr, Vec<u8>) {
    let config = Config {
        max_body_bytes: max,
        ..block_config(1024)
    };
    let mut client =
        coaplab_endpoint::Endpoint::new(config, factory("default", &[], 0.0), Router::new())
            .unwrap();
    let server = addr(SERVER);
    client.request(Instant::ZERO, server, &Request::get("big"));
    let t = client.poll_transmit(Instant::ZERO).unwrap();
    (client, server, t.contents)
}

fn failures(client: &mut coaplab_endpoint::Endpoint) -> Vec<FailReason> {
    std::iter::from_fn(|| client.poll_event())
        .filter_map(|e| match e {
            Event::RequestFailed { reason, .. } => Some(reason),
            _ => None,
        })
        .collect()
}

/// Issue 32 #5: a Size2 of 10^12 (5 bytes, beyond Size2's 4-byte format) was dropped as
/// unreadable and the download went on; it now counts as the total it announces.
#[test]
fn an_oversized_size2_value_stops_the_download_too() {
    for size2 in [&[0xe8, 0xd4, 0xa5, 0x10, 0x00][..], &[0xff; 9][..]] {
        let (mut client, server, req) = scripted(100_000);
        let req = Message::decode(&req).unwrap();
        let mut ack = MessageBuf::new(MessageType::Ack, Code::CONTENT, req.message_id, req.token());
        let b2 = Block::with_size(0, true, 1024).unwrap();
        ack.options.push_uint(number::BLOCK2, b2.to_uint());
        ack.options.push(number::SIZE2, size2);
        ack.payload = vec![0; 1024];
        client.handle_datagram(ms(10), server, &ack.to_bytes().unwrap());
        assert_eq!(client.poll_transmit(ms(10)), None, "no block 1 asked for");
        assert_eq!(failures(&mut client), [FailReason::BodyTooLarge]);
    }
}

/// Issue 32 #5: RFC 7252 §5.4.1: a response with a critical option the client does not
/// recognise is rejected (RST for a CON response), and the request fails at once.
#[test]
fn a_response_with_an_unknown_critical_option_is_rejected() {
    let unknown = 2049; // odd: critical, unregistered
                        // Piggybacked in the ACK: not used, the request fails (no retransmission follows).
    let (mut client, server, req) = scripted(100_000);
    let req = Message::decode(&req).unwrap();
    let mut ack = MessageBuf::new(MessageType::Ack, Code::CONTENT, req.message_id, req.token());
    ack.options.push(unknown, b"x");
    ack.payload = b"hello".to_vec();
    client.handle_datagram(ms(10), server, &ack.to_bytes().unwrap());
    assert_eq!(client.poll_transmit(ms(10)), None);
    let events: Vec<Event> = std::iter::from_fn(|| client.poll_event()).collect();
    assert!(!events
        .iter()
        .any(|e| matches!(e, Event::RequestCompleted { .. })));
    assert!(events.iter().any(|e| matches!(
        e,
        Event::RequestFailed {
            reason: FailReason::UnknownCriticalOption { number: 2049 },
            ..
        }
    )));
    assert_eq!(client.poll_timeout(), None, "nothing left to retransmit");
    // An elective unknown option (even) is ignored as before.
    let (mut client, server, req) = scripted(100_000);
    let req = Message::decode(&req).unwrap();
    let mut ack = MessageBuf::new(MessageType::Ack, Code::CONTENT, req.message_id, req.token());
    ack.options.push(2048, b"x");
    client.handle_datagram(ms(10), server, &ack.to_bytes().unwrap());
    assert!(std::iter::from_fn(|| client.poll_event())
        .any(|e| matches!(e, Event::RequestCompleted { .. })));
    // A separate CON response: rejected with RST, and the request fails.
    let (mut client, server, req) = scripted(100_000);
    let req = Message::decode(&req).unwrap();
    let empty = MessageBuf::new(
        MessageType::Ack,
        Code::EMPTY,
        req.message_id,
        coaplab_wire::Token::EMPTY,
    );
    client.handle_datagram(ms(10), server, &empty.to_bytes().unwrap());
    let mut con = MessageBuf::new(MessageType::Con, Code::CONTENT, 0x7777, req.token());
    con.options.push(unknown, b"");
    client.handle_datagram(ms(20), server, &con.to_bytes().unwrap());
    let reply = client.poll_transmit(ms(20)).expect("an RST");
    let reply = Message::decode(&reply.contents).unwrap();
    assert_eq!((reply.mtype, reply.message_id), (MessageType::Rst, 0x7777));
    assert_eq!(
        failures(&mut client),
        [FailReason::UnknownCriticalOption { number: 2049 }]
    );
}
