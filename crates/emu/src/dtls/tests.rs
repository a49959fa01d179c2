//! A client and a server layer on two UdpDrivers over loopback.

use std::net::SocketAddr;

use coaplab_base::Settings;
use coaplab_endpoint::{registry_factory, Config, Endpoint, Event, Request, Router};

use super::*;
use crate::UdpDriver;

fn endpoint(seed: u64) -> Endpoint {
    let factory = registry_factory("default", &Settings::new(), seed).unwrap();
    let config = Config {
        keep_bodies: true,
        ..Config::default()
    };
    Endpoint::new(config, factory, Router::new()).unwrap()
}

fn psk(identity: &str, key: &str) -> DtlsConfig {
    DtlsConfig::new(Credentials::Psk {
        identity: Some(identity.as_bytes().to_vec()),
        key: key.as_bytes().to_vec(),
    })
}

/// A server on loopback with `config`; returns its address and the task.
async fn server(config: DtlsConfig) -> (SocketAddr, tokio::task::JoinHandle<()>) {
    let any: SocketAddr = "127.0.0.1:0".parse().unwrap();
    let mut driver = UdpDriver::bind(any, endpoint(2)).await.unwrap();
    driver.set_dtls(DtlsLayer::server(config).unwrap());
    let addr = driver.local_addr().unwrap();
    let task = tokio::spawn(async move {
        loop {
            let _ = driver.next_event().await;
        }
    });
    (addr, task)
}

async fn client(config: DtlsConfig, server: SocketAddr) -> UdpDriver {
    let mut c = UdpDriver::connect(server, endpoint(1)).await.unwrap();
    let layer = DtlsLayer::client(config, server, c.now()).unwrap();
    c.set_dtls(layer);
    c
}

#[tokio::test]
async fn psk_client_gets_a_blockwise_body_through_dtls() {
    let (addr, task) = server(psk("id", "secret")).await;
    let mut c = client(psk("id", "secret"), addr).await;
    let state = c.dtls_handshake().await;
    let ClientState::Established { cipher, .. } = state else {
        panic!("{state:?}");
    };
    // RFC 7252 §9.1.3.1's mandatory suite is the first offered and accepted.
    assert_eq!(cipher, "PSK-AES128-CCM8");
    let now = c.now();
    c.endpoint_mut()
        .request(now, addr, &Request::get("data/3000"));
    let body = loop {
        if let Event::RequestCompleted { body, .. } = c.try_next_event().await.unwrap() {
            break body;
        }
    };
    task.abort();
    let expected: Vec<u8> = (0..3000).map(|i| (i % 256) as u8).collect();
    assert_eq!(body, expected);
    let s = c.dtls().unwrap().stats();
    assert_eq!((s.handshakes_completed, s.handshakes_failed), (1, 0));
    // ClientHello, ClientHello with cookie, then the key exchange + Finished flight.
    assert_eq!(s.handshake_datagrams_out, 3);
}

#[tokio::test]
async fn a_wrong_key_fails_the_handshake() {
    let (addr, task) = server(psk("id", "secret")).await;
    let mut config = psk("id", "wrong");
    config.handshake_stall = std::time::Duration::from_millis(1500);
    let mut c = client(config, addr).await;
    let state = tokio::time::timeout(std::time::Duration::from_secs(10), c.dtls_handshake())
        .await
        .unwrap();
    task.abort();
    // DTLS drops the undecryptable Finished silently: the client fails on the stall.
    let ClientState::Failed(why) = state else {
        panic!("{state:?}");
    };
    assert!(why.contains("wrong pre-shared key"), "{why}");
    assert_eq!(c.dtls().unwrap().stats().handshakes_failed, 1);
}

#[tokio::test]
async fn an_unknown_identity_fails_the_handshake() {
    let (addr, task) = server(psk("id", "secret")).await;
    let mut c = client(psk("other", "secret"), addr).await;
    let state = tokio::time::timeout(std::time::Duration::from_secs(10), c.dtls_handshake())
        .await
        .unwrap();
    task.abort();
    assert!(matches!(state, ClientState::Failed(_)), "{state:?}");
}

#[tokio::test]
async fn a_silent_server_times_the_handshake_out() {
    let silent = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
    let addr = silent.local_addr().unwrap();
    let mut config = psk("id", "secret");
    config.handshake_timeout = std::time::Duration::from_millis(300);
    let mut c = client(config, addr).await;
    let state = c.dtls_handshake().await;
    assert_eq!(state, ClientState::TimedOut);
    assert_eq!(c.dtls().unwrap().stats().handshakes_timed_out, 1);
}

// The server's session table, driven in memory: no socket, time chosen by the test.

const SERVER: &str = "198.18.0.2:5684";

fn addr(s: &str) -> SocketAddr {
    s.parse().unwrap()
}

fn at(ms: i64) -> Instant {
    Instant::ZERO + Duration::from_millis(ms)
}

/// Moves every queued record between `server` and `clients` (keyed by their address) until
/// none is left; returns the plaintext each side received.
fn pump(
    server: &mut DtlsLayer,
    clients: &mut [(SocketAddr, &mut DtlsLayer)],
    now: Instant,
) -> Vec<Vec<u8>> {
    let mut got = Vec::new();
    for _ in 0..20 {
        let mut moved = false;
        for (a, c) in clients.iter_mut() {
            while let Some((to, d)) = c.poll_transmit() {
                assert_eq!(to, addr(SERVER));
                server.handle_datagram(now, *a, &d, |p| got.push(p.to_vec()));
                moved = true;
            }
        }
        while let Some((to, d)) = server.poll_transmit() {
            if let Some((_, c)) = clients.iter_mut().find(|(a, _)| *a == to) {
                c.handle_datagram(now, addr(SERVER), &d, |p| got.push(p.to_vec()));
            }
            moved = true;
        }
        if !moved {
            break;
        }
    }
    got
}

fn client_of(now: Instant) -> DtlsLayer {
    DtlsLayer::client(psk("id", "secret"), addr(SERVER), now).unwrap()
}

#[test]
fn a_full_table_evicts_the_least_recently_used_session_with_close_notify() {
    let mut config = psk("id", "secret");
    config.max_sessions = 2;
    let mut server = DtlsLayer::server(config).unwrap();
    let (a, b, c) = (
        addr("198.18.0.1:1000"),
        addr("198.18.0.2:1001"),
        addr("198.18.0.3:1002"),
    );
    let mut ca = client_of(at(0));
    pump(&mut server, &mut [(a, &mut ca)], at(0));
    let mut cb = client_of(at(1));
    pump(&mut server, &mut [(b, &mut cb)], at(1));
    assert_eq!(server.sessions(), 2);
    // A is used again, so B is the least recently used when C comes.
    ca.seal(addr(SERVER), b"a");
    assert_eq!(
        pump(&mut server, &mut [(a, &mut ca)], at(2)),
        vec![b"a".to_vec()]
    );
    let mut cc = client_of(at(3));
    pump(&mut server, &mut [(b, &mut cb), (c, &mut cc)], at(3));
    assert!(matches!(cc.client_state(), ClientState::Established { .. }));
    assert_eq!(server.sessions(), 2);
    let s = server.stats();
    assert_eq!((s.sessions_evicted, s.handshakes_evicted), (1, 0));
    // B was told (close_notify); A's session still carries data.
    assert!(
        matches!(cb.client_state(), ClientState::Failed(_)),
        "{:?}",
        cb.client_state()
    );
    ca.seal(addr(SERVER), b"still");
    assert_eq!(
        pump(&mut server, &mut [(a, &mut ca)], at(4)),
        vec![b"still".to_vec()]
    );
}

#[test]
fn client_hellos_without_a_valid_cookie_leave_no_state() {
    let mut config = psk("id", "secret");
    config.max_sessions = 1;
    let mut server = DtlsLayer::server(config).unwrap();
    let b = addr("198.18.0.1:1001");
    let mut cb = client_of(at(0));
    pump(&mut server, &mut [(b, &mut cb)], at(0));
    assert!(matches!(cb.client_state(), ClientState::Established { .. }));
    // A flood of first ClientHellos from 1,000 addresses: each gets a HelloVerifyRequest
    // smaller than itself, and the table does not move.
    let mut spoofer = client_of(at(1));
    let (_, hello) = spoofer.poll_transmit().unwrap();
    for i in 0..1000u32 {
        let from = SocketAddr::from(([10, 1, (i >> 8) as u8, i as u8], 5000));
        server.handle_datagram(at(1), from, &hello, |_| unreachable!());
        let (to, hvr) = server.poll_transmit().unwrap();
        assert_eq!(to, from);
        assert_eq!(hvr.len(), hello::HELLO_VERIFY_BYTES);
        assert!(hvr.len() <= hello.len());
        assert!(server.poll_transmit().is_none());
    }
    // A forged cookie is refused the same way.
    let h = hello::parse(&hello).unwrap();
    let forged = {
        let mut v = hello[..13 + 12 + 2 + 32 + 1 + h.session_id.len()].to_vec();
        v.push(32);
        v.extend_from_slice(&[0xaa; 32]);
        v.extend_from_slice(h.rest);
        let body = (v.len() - 25) as u32;
        let record = (v.len() - 13) as u16;
        v[11..13].copy_from_slice(&record.to_be_bytes());
        v[14..17].copy_from_slice(&body.to_be_bytes()[1..]);
        v[17..19].copy_from_slice(&[0, 1]);
        v[22..25].copy_from_slice(&body.to_be_bytes()[1..]);
        v
    };
    server.handle_datagram(at(1), addr("198.18.0.9:9"), &forged, |_| unreachable!());
    let s = server.stats();
    assert_eq!(s.hello_verifies_sent, 1001 + 1);
    assert_eq!(s.cookies_invalid, 1);
    assert_eq!((s.handshakes_evicted, s.sessions_evicted), (0, 0));
    assert_eq!(server.sessions(), 1);
    cb.seal(addr(SERVER), b"hello");
    assert_eq!(
        pump(&mut server, &mut [(b, &mut cb)], at(2)),
        vec![b"hello".to_vec()]
    );
}

#[test]
fn one_address_evicts_only_its_own_sessions() {
    let mut config = psk("id", "secret");
    config.max_sessions_per_source = 2;
    let mut server = DtlsLayer::server(config).unwrap();
    let other = addr("198.18.0.2:1000");
    let mut co = client_of(at(0));
    pump(&mut server, &mut [(other, &mut co)], at(0));
    for port in 0..5u16 {
        let a = SocketAddr::from(([198, 18, 0, 1], 2000 + port));
        let mut c = client_of(at(1 + i64::from(port)));
        pump(&mut server, &mut [(a, &mut c)], at(1 + i64::from(port)));
        assert!(matches!(c.client_state(), ClientState::Established { .. }));
    }
    assert_eq!(server.sessions(), 3);
    assert_eq!(server.stats().sessions_evicted, 3);
    co.seal(addr(SERVER), b"mine");
    assert_eq!(
        pump(&mut server, &mut [(other, &mut co)], at(9)),
        vec![b"mine".to_vec()]
    );
}

#[test]
fn a_client_close_frees_the_servers_slot() {
    let mut server = DtlsLayer::server(psk("id", "secret")).unwrap();
    let a = addr("198.18.0.1:1000");
    let mut ca = client_of(at(0));
    pump(&mut server, &mut [(a, &mut ca)], at(0));
    assert_eq!(server.sessions(), 1);
    ca.close();
    pump(&mut server, &mut [(a, &mut ca)], at(1));
    assert_eq!(server.sessions(), 0);
    assert_eq!(server.stats().sessions_closed_by_peer, 1);
}

#[test]
fn idle_and_half_open_sessions_are_freed_by_their_timeouts() {
    let mut config = psk("id", "secret");
    config.idle_timeout = std::time::Duration::from_secs(5);
    config.handshake_timeout = std::time::Duration::from_secs(2);
    let mut server = DtlsLayer::server(config).unwrap();
    let (a, b) = (addr("198.18.0.1:1000"), addr("198.18.0.1:1001"));
    let mut ca = client_of(at(0));
    pump(&mut server, &mut [(a, &mut ca)], at(0));
    assert!(matches!(ca.client_state(), ClientState::Established { .. }));
    // B never gets past its second ClientHello (the one with the cookie).
    let mut cb = client_of(at(0));
    let (_, hello) = cb.poll_transmit().unwrap();
    server.handle_datagram(at(0), b, &hello, |_| {});
    assert_eq!(server.sessions(), 1, "no state before the cookie returns");
    let (_, hvr) = server.poll_transmit().unwrap();
    cb.handle_datagram(at(0), addr(SERVER), &hvr, |_| {});
    let (_, hello) = cb.poll_transmit().unwrap();
    server.handle_datagram(at(0), b, &hello, |_| {});
    while server.poll_transmit().is_some() {}
    assert_eq!(server.sessions(), 2);
    // Nothing happens early; B's handshake times out at 2 s, A idles out at 5 s.
    let mut t = 0;
    while t <= 6_000 {
        server.handle_timeout(at(t));
        t += 50;
    }
    let s = server.stats();
    assert_eq!((s.handshakes_timed_out, s.sessions_idle_closed), (1, 1));
    assert_eq!(server.sessions(), 0);
    // A's close_notify tells the client the session is over; later records are dropped.
    pump(&mut server, &mut [(a, &mut ca)], at(6_000));
    assert!(matches!(ca.client_state(), ClientState::Failed(_)));
    assert_eq!(server.poll_timeout(), None);
}

#[test]
fn records_from_a_peer_without_a_session_are_dropped_and_counted() {
    let mut server = DtlsLayer::server(psk("id", "secret")).unwrap();
    let app_data = [23, 0xfe, 0xfd, 0, 1, 0, 0, 0, 0, 0, 1, 0, 3, 1, 2, 3];
    server.handle_datagram(at(0), addr("198.18.0.1:9"), &app_data, |_| unreachable!());
    server.handle_datagram(at(0), addr("198.18.0.1:9"), &[], |_| unreachable!());
    assert_eq!(server.stats().datagrams_without_session, 2);
    assert_eq!(server.sessions(), 0);
    server.seal(addr("198.18.0.1:9"), b"x");
    assert_eq!(server.stats().sends_without_session, 1);
    assert!(server.poll_transmit().is_none());
}

#[test]
fn dtls_setup_errors_are_typed() {
    assert!(matches!(
        DtlsLayer::server(psk("id", "")),
        Err(DtlsSetupError::EmptyPsk)
    ));
    let no_cert = DtlsConfig {
        credentials: Credentials::Certificate {
            cert: None,
            key: None,
            ca: None,
        },
        ..psk("id", "secret")
    };
    let e = DtlsLayer::server(no_cert).unwrap_err();
    assert!(matches!(e, DtlsSetupError::NoCertificate));
    assert_eq!(
        e.to_string(),
        "DTLS setup: a server needs a certificate (--cert)"
    );
}
