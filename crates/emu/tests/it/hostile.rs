//! Hostile peers for the hardening tests (coaplab issue 32), loopback only and bounded in
//! time: a UDP relay that delays every datagram (a long path), a flood of ClientHellos from
//! many loopback addresses (127.x.y.z: Linux routes all of 127/8 to `lo`, so each is a source
//! the server has never seen and that never answers), and TCP peers that connect and stall.

use std::net::{Ipv4Addr, SocketAddr};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use tokio::net::{TcpSocket, TcpStream, UdpSocket};

/// A UDP relay on a loopback port: what the first client sends goes to `server` after
/// `delay`, and what the server answers goes back after `delay` (so `2 × delay` of round
/// trip). The server sees the relay's second socket as the client.
pub(crate) async fn delay_relay(server: SocketAddr, delay: Duration) -> SocketAddr {
    let front = Arc::new(UdpSocket::bind("127.0.0.1:0").await.unwrap());
    let back = Arc::new(UdpSocket::bind("127.0.0.1:0").await.unwrap());
    back.connect(server).await.unwrap();
    let addr = front.local_addr().unwrap();
    let client: Arc<std::sync::Mutex<Option<SocketAddr>>> = Arc::default();
    let (f, b, c) = (front.clone(), back.clone(), client.clone());
    tokio::spawn(async move {
        let mut buf = vec![0u8; 65_536];
        while let Ok((n, from)) = f.recv_from(&mut buf).await {
            *c.lock().unwrap() = Some(from);
            let (d, b) = (buf[..n].to_vec(), b.clone());
            tokio::spawn(async move {
                tokio::time::sleep(delay).await;
                let _ = b.send(&d).await;
            });
        }
    });
    tokio::spawn(async move {
        let mut buf = vec![0u8; 65_536];
        while let Ok(n) = back.recv(&mut buf).await {
            let Some(to) = *client.lock().unwrap() else {
                continue;
            };
            let (d, f) = (buf[..n].to_vec(), front.clone());
            tokio::spawn(async move {
                tokio::time::sleep(delay).await;
                let _ = f.send_to(&d, to).await;
            });
        }
    });
    addr
}

/// The loopback address number `i` of a flood (127.1.0.1 and up, never 127.0.0.1).
pub(crate) fn flood_source(i: u32) -> Ipv4Addr {
    Ipv4Addr::from(0x7f01_0001u32 + i)
}

/// Sends `datagram` to `target` about `per_second` times a second, round robin from
/// `sources` sockets each bound to its own loopback address, until `stop` is set; returns the
/// number sent. Answers are never read.
pub(crate) async fn flood(
    target: SocketAddr,
    datagrams: Vec<Vec<u8>>,
    sources: u32,
    per_second: u32,
    stop: Arc<AtomicBool>,
) -> u64 {
    let mut sockets = Vec::new();
    for i in 0..sources {
        let a = SocketAddr::from((flood_source(i), 0));
        sockets.push(UdpSocket::bind(a).await.unwrap());
    }
    let sent = AtomicU64::new(0);
    let per_tick = (per_second / 1000).max(1);
    let mut tick = tokio::time::interval(Duration::from_millis(1));
    let mut k = 0usize;
    while !stop.load(Ordering::Relaxed) {
        tick.tick().await;
        for _ in 0..per_tick {
            let s = &sockets[k % sockets.len()];
            let d = &datagrams[k % datagrams.len()];
            if s.send_to(d, target).await.is_ok() {
                sent.fetch_add(1, Ordering::Relaxed);
            }
            k += 1;
        }
    }
    sent.load(Ordering::Relaxed)
}

/// A TCP connection to `addr` from the loopback address `from` (port chosen by the kernel).
pub(crate) async fn connect_from(from: Ipv4Addr, addr: SocketAddr) -> std::io::Result<TcpStream> {
    let s = TcpSocket::new_v4()?;
    s.bind(SocketAddr::from((from, 0)))?;
    s.connect(addr).await
}
