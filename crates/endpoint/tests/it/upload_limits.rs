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
