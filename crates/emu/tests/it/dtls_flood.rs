//! DTLS under a ClientHello flood (coaplab issue 32, item 1), over loopback: ClientHellos from
//! 256 loopback addresses that never answer, 2,000 a second, while a real `coaps://` client
//! on a 200-ms round-trip path (a delaying relay) completes its handshake and a GET. Before
//! stateless cookies every ClientHello took a session slot, so the client's half-open
//! handshake was evicted between its flights and never completed.

use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use coaplab_base::Settings;
use coaplab_emu::dtls::{hello, ClientState, Credentials, DtlsConfig, DtlsLayer};
use coaplab_emu::UdpDriver;
use coaplab_endpoint::{registry_factory, Config, Endpoint, Event, Request, Router};

use crate::hostile;

fn endpoint(seed: u64) -> Endpoint {
    let factory = registry_factory("default", &Settings::new(), seed).unwrap();
    let config = Config {
        keep_bodies: true,
        ..Config::default()
    };
    Endpoint::new(config, factory, Router::new()).unwrap()
}

fn psk() -> DtlsConfig {
    DtlsConfig::new(Credentials::Psk {
        identity: Some(b"id".to_vec()),
        key: b"secret".to_vec(),
    })
}

/// First ClientHellos as a real client writes them (each with its own random).
fn client_hellos(n: usize) -> Vec<Vec<u8>> {
    let peer: SocketAddr = "127.0.0.1:5684".parse().unwrap();
    (0..n)
        .map(|_| {
            let mut c = DtlsLayer::client(psk(), peer, coaplab_base::time::Instant::ZERO).unwrap();
            let (_, d) = c.poll_transmit().unwrap();
            assert!(hello::parse(&d).is_ok());
            d
        })
        .collect()
}

#[tokio::test]
async fn a_client_hello_flood_does_not_keep_a_real_client_out() {
    let mut config = psk();
    config.max_sessions = 32;
    let mut server = UdpDriver::bind("127.0.0.1:0".parse().unwrap(), endpoint(2))
        .await
        .unwrap();
    server.set_dtls(DtlsLayer::server(config).unwrap());
    let addr = server.local_addr().unwrap();
    let stop = Arc::new(AtomicBool::new(false));
    let (stop_tx, mut stop_rx) = tokio::sync::oneshot::channel::<()>();
    let server_task = tokio::spawn(async move {
        loop {
            tokio::select! {
                _ = &mut stop_rx => return server,
                _ = server.next_event() => {}
            }
        }
    });
    let flood = tokio::spawn(hostile::flood(
        addr,
        client_hellos(8),
        256,
        2_000,
        stop.clone(),
    ));
    tokio::time::sleep(Duration::from_millis(300)).await;

    // The real client, 100 ms each way from the server.
    let relay = hostile::delay_relay(addr, Duration::from_millis(100)).await;
    let mut c = UdpDriver::connect(relay, endpoint(1)).await.unwrap();
    let layer = DtlsLayer::client(psk(), relay, c.now()).unwrap();
    c.set_dtls(layer);
    let state = tokio::time::timeout(Duration::from_secs(8), c.dtls_handshake())
        .await
        .expect("the handshake completes under the flood");
    assert!(
        matches!(state, ClientState::Established { .. }),
        "{state:?}"
    );
    let now = c.now();
    c.endpoint_mut()
        .request(now, relay, &Request::get("data/100"));
    let body = tokio::time::timeout(Duration::from_secs(8), async {
        loop {
            if let Event::RequestCompleted { body, .. } = c.try_next_event().await.unwrap() {
                break body;
            }
        }
    })
    .await
    .expect("the GET completes under the flood");
    assert_eq!(body.len(), 100);
    c.dtls_close().await;
    tokio::time::sleep(Duration::from_millis(300)).await;

    stop.store(true, Ordering::Relaxed);
    let sent = flood.await.unwrap();
    let _ = stop_tx.send(());
    let server = server_task.await.unwrap();
    let s = server.dtls().unwrap().stats();
    let layer = server.dtls().unwrap();
    assert!(sent >= 1_000, "the flood sent {sent}");
    // Every flooded ClientHello was answered statelessly; no slot was taken or evicted.
    assert!(s.hello_verifies_sent >= sent / 2, "{s:?} for {sent}");
    assert_eq!((s.handshakes_evicted, s.sessions_evicted), (0, 0), "{s:?}");
    assert_eq!(s.handshakes_completed, 1, "{s:?}");
    // The client's close_notify freed its slot.
    assert_eq!(s.sessions_closed_by_peer, 1, "{s:?}");
    assert_eq!(layer.sessions(), 0);
}
