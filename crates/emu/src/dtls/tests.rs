//! A client and a server layer on two UdpDrivers over loopback.

use std::net::SocketAddr;

use coaplab_cc::Settings;
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

#[test]
fn client_hellos_are_told_from_other_records() {
    let mut hello = vec![22, 0xfe, 0xfd, 0, 0, 0, 0, 0, 0, 0, 0, 0, 40, 1];
    assert!(is_client_hello(&hello));
    hello[4] = 1; // epoch 1
    assert!(!is_client_hello(&hello));
    assert!(!is_client_hello(&[23, 0xfe, 0xfd, 0, 1]));
    assert!(!is_client_hello(&[]));
}
