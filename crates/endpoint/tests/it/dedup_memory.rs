//! The duplicate cache's memory is bounded in bytes and given back on a timer (issue 11 #3:
//! a flood of data/1024 GETs grew it to 1.3 GB, and only new traffic purged it).

use std::net::SocketAddr;

use coaplab_cc::time::{Duration, Instant};
use coaplab_cc::Settings;
use coaplab_endpoint::{
    registry_factory, Config, Endpoint, Request, Router, DEDUP_CAPACITY_BYTES,
    DEDUP_ENTRY_OVERHEAD_BYTES,
};
use coaplab_wire::{Code, Message};

fn server(config: Config) -> Endpoint {
    let factory = registry_factory("default", &Settings::new(), 1).unwrap();
    Endpoint::new(config, factory, Router::new()).unwrap()
}

/// The CON GET of `path` a default client sends with Message ID `mid`.
fn get(mid: u16, path: &str) -> Vec<u8> {
    let factory = registry_factory("default", &Settings::new(), 2).unwrap();
    let config = Config {
        initial_message_id: mid,
        ..Config::default()
    };
    let mut c = Endpoint::new(config, factory, Router::new()).unwrap();
    let _ = c.request(
        Instant::ZERO,
        "198.18.1.1:5683".parse().unwrap(),
        &Request::get(path),
    );
    c.poll_transmit(Instant::ZERO).unwrap().contents
}

const CLIENT: &str = "198.18.0.1:40000";

#[test]
fn the_byte_cap_holds_and_forgets_the_oldest() {
    // Room for four 1,031-B piggybacked answers to data/1024 (header 4, token 2, marker 1,
    // body 1,024), with their overhead.
    let cap = 4 * (1_031 + DEDUP_ENTRY_OVERHEAD_BYTES);
    let mut s = server(Config {
        dedup_capacity_bytes: cap,
        ..Config::default()
    });
    let from: SocketAddr = CLIENT.parse().unwrap();
    for mid in 0..10 {
        s.handle_datagram(
            Instant::from_millis(mid.into()),
            from,
            &get(mid, "data/1024"),
        );
        let reply = s.poll_transmit(Instant::ZERO).unwrap().contents;
        assert_eq!(reply.len(), 1_031);
        assert!(s.dedup_bytes() <= cap, "{} > {cap}", s.dedup_bytes());
    }
    assert_eq!(s.dedup_entries(), 4);
    // The oldest was forgotten: its retransmission runs the resource again (Served, not a
    // replay); the newest is still replayed.
    let t = Instant::from_secs(1);
    s.handle_datagram(t, from, &get(9, "data/1024"));
    let replay = s.poll_transmit(t).unwrap();
    assert!(matches!(
        replay.meta,
        coaplab_endpoint::TransmitMeta::Reply { replayed: true, .. }
    ));
    s.handle_datagram(t, from, &get(0, "data/1024"));
    let again = s.poll_transmit(t).unwrap();
    assert!(matches!(
        again.meta,
        coaplab_endpoint::TransmitMeta::Reply {
            replayed: false,
            ..
        }
    ));
    assert_eq!(
        Message::decode(&again.contents).unwrap().code,
        Code::CONTENT
    );
    // The default is at most 64 MiB.
    assert!(Config::default().dedup_capacity_bytes == DEDUP_CAPACITY_BYTES);
    const { assert!(DEDUP_CAPACITY_BYTES <= 64 << 20) };
}

#[test]
fn an_idle_server_purges_expired_entries_on_its_timer() {
    let lifetime = Duration::from_secs(10);
    let mut s = server(Config {
        dedup_lifetime: Some(lifetime),
        dedup_purge_timer: true,
        ..Config::default()
    });
    let from: SocketAddr = CLIENT.parse().unwrap();
    let t0 = Instant::from_secs(1);
    s.handle_datagram(t0, from, &get(1, "data/1024"));
    s.handle_datagram(t0 + Duration::from_secs(3), from, &get(2, "data/10"));
    while s.poll_transmit(t0).is_some() {}
    assert_eq!(s.dedup_entries(), 2);
    // No traffic: the timer alone frees the entries, each at its own expiry.
    assert_eq!(s.poll_timeout(), Some(t0 + lifetime));
    s.handle_timeout(t0 + lifetime);
    assert_eq!(s.dedup_entries(), 1);
    assert_eq!(s.poll_timeout(), Some(t0 + Duration::from_secs(13)));
    s.handle_timeout(t0 + Duration::from_secs(13));
    assert_eq!((s.dedup_entries(), s.dedup_bytes()), (0, 0));
    assert_eq!(s.poll_timeout(), None);
    // The default (the simulator's setting): no wake-ups for the cache.
    let mut quiet = server(Config {
        dedup_lifetime: Some(lifetime),
        ..Config::default()
    });
    quiet.handle_datagram(t0, from, &get(1, "data/10"));
    assert_eq!(quiet.poll_timeout(), None);
}
