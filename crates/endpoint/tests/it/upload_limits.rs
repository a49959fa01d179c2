//! The server's memory stays bounded under hostile Block1 uploads: at most
//! `MAX_PENDING_UPLOADS` reassemblies at once (one more gets 5.03), at most
//! `MAX_PENDING_UPLOADS_PER_SOURCE` of them from one IP address, and no upload beyond
//! `MAX_UPLOAD_BYTES` (4.13, RFC 7959 §2.9.3).

use std::net::SocketAddr;

use crate::common::block1_put;
use coaplab_cc::{time::Instant, Settings};
use coaplab_endpoint::{
    registry_factory, Config, Endpoint, Router, MAX_PENDING_UPLOADS,
    MAX_PENDING_UPLOADS_PER_SOURCE, MAX_UPLOAD_BYTES,
};
use coaplab_wire::{Code, Message};

fn server() -> Endpoint {
    let factory = registry_factory("default", &Settings::new(), 1).unwrap();
    Endpoint::new(Config::default(), factory, Router::new()).unwrap()
}

/// A CON PUT /echo carrying Block1 `num` (1024-B blocks, more = true) and 1024 bytes.
fn block1(mid: u16, num: u32) -> Vec<u8> {
    block1_put(mid, num, true, 6, &[0x5a; 1024])
}

/// The response code the server gives `bytes` from `from`.
fn answer(s: &mut Endpoint, from: SocketAddr, bytes: &[u8]) -> Code {
    s.handle_datagram(Instant::ZERO, from, bytes);
    let t = s.poll_transmit(Instant::ZERO).unwrap();
    Message::decode(&t.contents).unwrap().code
}

#[test]
fn one_upload_more_than_the_limit_is_refused_with_5_03() {
    let mut s = server();
    // One client per address: the per-source share is not what is tested here.
    for i in 0..MAX_PENDING_UPLOADS {
        let from = SocketAddr::from(([127, 0, 1, i as u8], 10_000));
        assert_eq!(answer(&mut s, from, &block1(1, 0)), Code::CONTINUE);
    }
    let late: SocketAddr = "127.0.0.2:9".parse().unwrap();
    assert_eq!(
        answer(&mut s, late, &block1(1, 0)),
        Code::SERVICE_UNAVAILABLE
    );
    // A client already uploading continues.
    let first: SocketAddr = "127.0.1.0:10000".parse().unwrap();
    assert_eq!(answer(&mut s, first, &block1(2, 1)), Code::CONTINUE);
}

#[test]
fn one_source_cannot_starve_the_others_of_upload_slots() {
    // Issue 11 #5: 64 first blocks from one host (any ports) used to fill the whole table,
    // and every other client's upload got 5.03 for EXCHANGE_LIFETIME.
    let mut s = server();
    let attacker = |port: u16| SocketAddr::from(([198, 18, 0, 66], port));
    let codes: Vec<Code> = (0..MAX_PENDING_UPLOADS as u16)
        .map(|i| answer(&mut s, attacker(20_000 + i), &block1(i, 0)))
        .collect();
    let continued = codes.iter().filter(|c| **c == Code::CONTINUE).count();
    assert_eq!(continued, MAX_PENDING_UPLOADS_PER_SOURCE);
    assert!(codes[MAX_PENDING_UPLOADS_PER_SOURCE..]
        .iter()
        .all(|c| *c == Code::SERVICE_UNAVAILABLE));
    assert_eq!(s.pending_uploads(), MAX_PENDING_UPLOADS_PER_SOURCE);
    // A legitimate client elsewhere still uploads, to the end.
    let good: SocketAddr = "198.18.0.7:5683".parse().unwrap();
    assert_eq!(answer(&mut s, good, &block1(1, 0)), Code::CONTINUE);
    let last = block1_put(2, 1, false, 6, &[1; 10]);
    assert_eq!(answer(&mut s, good, &last), Code::CHANGED);
}

#[test]
fn an_upload_past_the_size_limit_gets_4_13() {
    let mut s = server();
    let from: SocketAddr = "127.0.0.1:5000".parse().unwrap();
    let last = (MAX_UPLOAD_BYTES / 1024) as u32;
    for num in 0..last {
        assert_eq!(
            answer(&mut s, from, &block1(num as u16, num)),
            Code::CONTINUE
        );
    }
    assert_eq!(
        answer(&mut s, from, &block1(last as u16, last)),
        Code::REQUEST_ENTITY_TOO_LARGE
    );
    // The upload is forgotten: block 1 no longer follows anything (4.08 Request Entity
    // Incomplete).
    assert_eq!(
        answer(&mut s, from, &block1(60_000, 1)),
        Code::REQUEST_ENTITY_INCOMPLETE
    );
}

/// Issue 32 #3: 8 source addresses × 8 partial uploads filled the 64-slot table, and every
/// other client got 5.03 for EXCHANGE_LIFETIME. Now a new source within its share takes the
/// oldest slot of a source holding more; a table of sources holding one each is still full.
#[test]
fn eight_sources_cannot_fill_the_upload_table_for_everyone() {
    let mut s = server();
    let src = |host: u8, port: u16| SocketAddr::from(([198, 18, 1, host], port));
    for host in 0..8u8 {
        for i in 0..MAX_PENDING_UPLOADS_PER_SOURCE as u16 {
            let from = src(host, 30_000 + i);
            assert_eq!(answer(&mut s, from, &block1(i, 0)), Code::CONTINUE);
        }
    }
    assert_eq!(s.pending_uploads(), MAX_PENDING_UPLOADS);
    // A ninth source uploads, to the end.
    let good: SocketAddr = "198.18.9.9:5683".parse().unwrap();
    assert_eq!(answer(&mut s, good, &block1(1, 0)), Code::CONTINUE);
    let evicted: Vec<_> = std::iter::from_fn(|| s.poll_event())
        .filter_map(|e| match e {
            coaplab_endpoint::Event::UploadEvicted { from, .. } => Some(from),
            _ => None,
        })
        .collect();
    // The oldest upload of the heaviest source (all hold 8: the lowest address).
    assert_eq!(evicted, [src(0, 30_000)]);
    assert_eq!(
        answer(&mut s, good, &block1_put(2, 1, false, 6, &[1; 10])),
        Code::CHANGED
    );
    // The evicted upload's next block: 4.08.
    assert_eq!(
        answer(&mut s, src(0, 30_000), &block1(9, 1)),
        Code::REQUEST_ENTITY_INCOMPLETE
    );
    // A table of 64 sources holding one each refuses a 65th (no one holds more than it would).
    let mut s = server();
    for i in 0..MAX_PENDING_UPLOADS {
        let from = SocketAddr::from(([127, 0, 2, i as u8], 10_000));
        assert_eq!(answer(&mut s, from, &block1(1, 0)), Code::CONTINUE);
    }
    let late: SocketAddr = "127.0.3.1:9".parse().unwrap();
    assert_eq!(
        answer(&mut s, late, &block1(1, 0)),
        Code::SERVICE_UNAVAILABLE
    );
}

/// A CON PUT /echo of Block1 `num` (16-B blocks) with Request-Tag `tag` (`None`: none).
fn tagged(mid: u16, num: u32, more: bool, tag: Option<&[u8]>, payload: &[u8]) -> Vec<u8> {
    use coaplab_wire::option::number;
    use coaplab_wire::{Block, MessageType, MessageWriter, Token};
    let mut out = vec![0; 64 + payload.len()];
    let mut w = MessageWriter::new(
        &mut out,
        MessageType::Con,
        Code::PUT,
        mid,
        Token::from_u64(u64::from(mid), 2),
    )
    .unwrap();
    w.option(number::URI_PATH, b"echo").unwrap();
    w.option_uint(number::BLOCK1, Block { num, more, szx: 0 }.to_uint())
        .unwrap();
    if let Some(t) = tag {
        w.option(number::REQUEST_TAG, t).unwrap();
    }
    let n = w.payload(payload).unwrap();
    out.truncate(n);
    out
}

/// Issue 32 #3: two Block1 uploads from one client to one path, interleaved, mixed: B's
/// first block reset A's body and A's blocks went on into it. With Request-Tag (RFC 9175
/// §3) each is reassembled on its own and echoed exactly.
#[test]
fn interleaved_uploads_with_request_tags_do_not_mix() {
    let mut s = server();
    let from: SocketAddr = "198.18.0.5:40000".parse().unwrap();
    let body = |who: u8| -> Vec<u8> {
        (0..40)
            .map(|i| who.wrapping_mul(100).wrapping_add(i))
            .collect()
    };
    let (a, b) = (body(1), body(2));
    let (ta, tb): (Option<&[u8]>, Option<&[u8]>) = (Some(b"A"), Some(b""));
    let script = [
        (ta, &a, 0u32),
        (tb, &b, 0),
        (ta, &a, 1),
        (tb, &b, 1),
        (tb, &b, 2),
        (ta, &a, 2),
    ];
    let mut echoed = Vec::new();
    for (mid, (tag, body, num)) in script.into_iter().enumerate() {
        let start = num as usize * 16;
        let end = (start + 16).min(body.len());
        let more = end < body.len();
        let req = tagged(mid as u16 + 1, num, more, tag, &body[start..end]);
        s.handle_datagram(Instant::ZERO, from, &req);
        let t = s.poll_transmit(Instant::ZERO).unwrap();
        let m = Message::decode(&t.contents).unwrap();
        if more {
            assert_eq!(m.code, Code::CONTINUE, "block {num} of {tag:?}");
        } else {
            assert_eq!(m.code, Code::CHANGED, "last block of {tag:?}");
            echoed.push(m.payload.to_vec());
        }
    }
    // A 40-B body comes back whole in the 2.04 (one 1,024-B response block).
    assert_eq!(echoed, [b.clone(), a.clone()]);
}
