//! Partial Block1 uploads expire (RFC 7959 §2.5): a server forgets an upload exactly
//! `upload_lifetime` after its last block (EXCHANGE_LIFETIME, 247 s, by default), answers a
//! later block of it 4.08 Request Entity Incomplete (§2.3), and takes at most
//! `max_pending_uploads` partial uploads at once (5.03 with Max-Age beyond, RFC 7252 §5.9.3.4).

use std::net::SocketAddr;

use crate::common::*;
use coaplab_cc::time::{Duration, Instant};
use coaplab_endpoint::{Config, Endpoint, Event, FailReason, Request, Router, EXCHANGE_LIFETIME};
use coaplab_wire::option::number;
use coaplab_wire::{Code, Message, ReadOptions};

/// A CON PUT /echo carrying Block1 `num` of 256-B blocks with `more`, and `payload`.
fn block1(mid: u16, num: u32, more: bool, payload: &[u8]) -> Vec<u8> {
    block1_put(mid, num, more, 4, payload)
}

/// The server's answer to `bytes` from `from` at `now`.
fn answer(s: &mut Endpoint, now: Instant, from: SocketAddr, bytes: &[u8]) -> Vec<u8> {
    s.handle_datagram(now, from, bytes);
    let t = s.poll_transmit(now).unwrap();
    assert!(s.poll_transmit(now).is_none());
    t.contents
}

fn code(bytes: &[u8]) -> Code {
    Message::decode(bytes).unwrap().code
}

/// Peer, bytes received and time of an `UploadExpired` event.
fn upload_expired(e: &Event) -> Option<(SocketAddr, usize, Instant)> {
    match e {
        Event::UploadExpired {
            from,
            received_bytes,
            at,
        } => Some((*from, *received_bytes, *at)),
        _ => None,
    }
}

fn expired(events: &mut Vec<Event>, s: &mut Endpoint) -> Vec<(SocketAddr, usize, Instant)> {
    events.extend(std::iter::from_fn(|| s.poll_event()));
    events.iter().filter_map(upload_expired).collect()
}

/// A client gives up after 2 of 5 blocks (block 2 and its four retransmissions are lost). The
/// server drops the 512 partial bytes exactly at last-block arrival + 247 s, not a nanosecond
/// earlier; block 2 arriving afterwards gets 4.08; a fresh upload to the same resource from the
/// same client then comes back with exactly its own bytes.
#[test]
fn an_abandoned_upload_expires_at_last_block_plus_lifetime() {
    let mut pair = Pair::blockwise(256);
    let stale: Vec<u8> = (0..1200).map(|i| (i * 7 % 251) as u8).collect();
    pair.drop_up = vec![2, 3, 4, 5, 6];
    pair.client
        .request(pair.now, addr(SERVER), &Request::put("echo", stale.clone()));
    // Block 0 arrives at 100 ms, its 2.31 at 200 ms; block 1 (the last one the server sees)
    // arrives at 300 ms.
    let last_block = ms(300);
    let deadline = last_block + EXCHANGE_LIFETIME;
    pair.drive_until(deadline - Duration::from_nanos(1));
    let failed = pair.client(|e| match e {
        Event::RequestFailed { reason, .. } => Some(*reason),
        _ => None,
    });
    assert_eq!(failed, [FailReason::GiveUp]);
    let arrivals: Vec<Instant> = pair
        .wire
        .iter()
        .filter(|w| w.up && !w.lost)
        .map(|w| w.at + pair.delay)
        .collect();
    assert_eq!(arrivals, [ms(100), last_block]);
    assert_eq!(pair.server.pending_uploads(), 1);
    assert_eq!(pair.server.poll_timeout(), Some(deadline));
    assert!(pair
        .server(|e| matches!(e, Event::UploadExpired { .. }).then_some(()))
        .is_empty());
    // An early call is a no-op.
    pair.server
        .handle_timeout(deadline - Duration::from_nanos(1));
    assert_eq!(pair.server.pending_uploads(), 1);

    assert!(pair.step());
    assert_eq!(pair.now, deadline);
    assert_eq!(pair.server.pending_uploads(), 0);
    assert_eq!(pair.server.poll_timeout(), None);
    let dropped = pair.server(upload_expired);
    assert_eq!(dropped, [(addr(CLIENT), 512, deadline)]);

    // Block 2 of the forgotten upload: 4.08 Request Entity Incomplete, nothing kept.
    let late = deadline + Duration::from_secs(1);
    let reply = answer(
        &mut pair.server,
        late,
        addr(CLIENT),
        &block1(0x9000, 2, true, &stale[512..768]),
    );
    assert_eq!(code(&reply), Code::REQUEST_ENTITY_INCOMPLETE);
    assert_eq!(pair.server.pending_uploads(), 0);

    // A fresh upload from the same client to the same resource: exactly its own bytes.
    pair.now = late;
    let fresh: Vec<u8> = (0..700).map(|i| (i * 13 % 241) as u8 ^ 0xa5).collect();
    pair.client
        .request(pair.now, addr(SERVER), &Request::put("echo", fresh.clone()));
    pair.drive(1000);
    let done = pair.client(|e| match e {
        Event::RequestCompleted { code, body, .. } => Some((*code, body.clone())),
        _ => None,
    });
    assert_eq!(done, [(Code::CHANGED, fresh)]);
    assert_eq!(pair.server.pending_uploads(), 0);
    let expirations = pair.server(|e| matches!(e, Event::UploadExpired { .. }).then_some(()));
    assert_eq!(expirations.len(), 1);
}

/// At most `max_pending_uploads` partial uploads: the first block of one more gets 5.03 with
/// Max-Age = seconds until the oldest expires (and an `UploadRefused` event), while uploads
/// under way continue, a later block of an unknown upload still gets 4.08 and a single-block
/// Block1 request needs no slot. Once the oldest has expired a new upload is taken, even
/// before `handle_timeout` runs.
#[test]
fn the_number_of_partial_uploads_is_capped() {
    let lifetime = Duration::from_secs(10);
    let mut s = Endpoint::new(
        Config {
            block_size_bytes: 256,
            upload_lifetime: Some(lifetime),
            max_pending_uploads: 3,
            ..Config::default()
        },
        factory("default", &[], 0.0),
        Router::new(),
    )
    .unwrap();
    let peer = |i: u16| SocketAddr::from(([127, 0, 0, 1], 20_000 + i));
    let chunk = [0x5a; 256];
    let mut events = Vec::new();
    for i in 0..3u16 {
        let t = Instant::from_secs(i64::from(i));
        let reply = answer(&mut s, t, peer(i), &block1(1, 0, true, &chunk));
        assert_eq!(code(&reply), Code::CONTINUE);
    }
    assert_eq!(s.pending_uploads(), 3);
    assert_eq!(s.poll_timeout(), Some(Instant::ZERO + lifetime));

    // One more: 5.03, retry after 7 s (the upload of peer 0 expires at 10 s).
    let t3 = Instant::from_secs(3);
    let reply = answer(&mut s, t3, peer(3), &block1(1, 0, true, &chunk));
    let m = Message::decode(&reply).unwrap();
    assert_eq!(m.code, Code::SERVICE_UNAVAILABLE);
    assert_eq!(m.uint(number::MAX_AGE).unwrap(), Some(7));
    events.extend(std::iter::from_fn(|| s.poll_event()));
    let refused: Vec<_> = events
        .iter()
        .filter_map(|e| match e {
            Event::UploadRefused { from, at } => Some((*from, *at)),
            _ => None,
        })
        .collect();
    assert_eq!(refused, [(peer(3), t3)]);
    // A later block of the refused upload: 4.08, not 5.03.
    let reply = answer(&mut s, t3, peer(3), &block1(2, 1, true, &chunk));
    assert_eq!(code(&reply), Code::REQUEST_ENTITY_INCOMPLETE);
    // A whole body in one Block1 block is not held, so it is served at the cap.
    let reply = answer(&mut s, t3, peer(3), &block1(3, 0, false, &chunk[..10]));
    assert_eq!(code(&reply), Code::CHANGED);
    // An upload under way continues, and its deadline moves to its last block + 10 s.
    let reply = answer(&mut s, t3, peer(1), &block1(2, 1, true, &chunk));
    assert_eq!(code(&reply), Code::CONTINUE);
    assert_eq!(s.pending_uploads(), 3);
    assert_eq!(s.poll_timeout(), Some(Instant::ZERO + lifetime));

    // At 10 s peer 0's upload is over its lifetime: peer 3's new upload takes its place
    // without a handle_timeout call in between.
    let t10 = Instant::ZERO + lifetime;
    let reply = answer(&mut s, t10, peer(3), &block1(4, 0, true, &chunk));
    assert_eq!(code(&reply), Code::CONTINUE);
    assert_eq!(expired(&mut events, &mut s), [(peer(0), 256, t10)]);
    assert_eq!(s.pending_uploads(), 3);
    let refusals = events
        .iter()
        .filter(|e| matches!(e, Event::UploadRefused { .. }))
        .count();
    assert_eq!(refusals, 1);
    // Peer 2 (last block at 2 s) goes next, then peer 1 (3 s), then peer 3 (10 s).
    assert_eq!(s.poll_timeout(), Some(Instant::from_secs(12)));
    s.handle_timeout(Instant::from_secs(13));
    assert_eq!(
        expired(&mut events, &mut s)[1..],
        [
            (peer(2), 256, Instant::from_secs(13)),
            (peer(1), 512, Instant::from_secs(13))
        ]
    );
    assert_eq!(s.poll_timeout(), Some(Instant::from_secs(20)));
}

/// Without a lifetime (the simulator's server) partial uploads are kept and never wake the
/// endpoint.
#[test]
fn no_lifetime_keeps_partial_uploads() {
    let mut s = Endpoint::new(
        Config {
            block_size_bytes: 256,
            upload_lifetime: None,
            ..Config::default()
        },
        factory("default", &[], 0.0),
        Router::new(),
    )
    .unwrap();
    let from = addr(CLIENT);
    let reply = answer(&mut s, Instant::ZERO, from, &block1(1, 0, true, &[1; 256]));
    assert_eq!(code(&reply), Code::CONTINUE);
    assert_eq!(s.poll_timeout(), None);
    let much_later = Instant::from_secs(1_000_000);
    s.handle_timeout(much_later);
    let reply = answer(&mut s, much_later, from, &block1(2, 1, false, &[2; 3]));
    assert_eq!(code(&reply), Code::CHANGED);
    assert_eq!(Message::decode(&reply).unwrap().payload.len(), 256);
}
