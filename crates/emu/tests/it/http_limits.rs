//! `coaplab_emu::http::server` under abuse (coaplab issue 32, items 3 and 4), over loopback
//! with bounded counts and times: one source's silent, preface-only and partial-head
//! connections neither lock a second source out nor stay open past the header timeout; and
//! h2 clients that open many streams of a 1-GiB body with maximum windows and never read hold
//! at most the body budget (counted, and the process's VmRSS).

use std::net::{Ipv4Addr, SocketAddr};
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Duration;

use coaplab_emu::http::server::{self, ServerConfig, ServerCounters};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

use crate::hostile::connect_from;

const PREFACE: &[u8] = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";

async fn start(config: ServerConfig) -> (SocketAddr, Arc<ServerCounters>) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let counters = Arc::new(ServerCounters::default());
    tokio::spawn(server::serve(listener, config, counters.clone()));
    (addr, counters)
}

/// GET `path` over HTTP/1.1 from `from`: the status line and the body's length.
async fn get_from(from: Ipv4Addr, addr: SocketAddr, path: &str) -> (String, usize) {
    let mut s = connect_from(from, addr).await.unwrap();
    let req = format!("GET {path} HTTP/1.1\r\nhost: a\r\nconnection: close\r\n\r\n");
    s.write_all(req.as_bytes()).await.unwrap();
    let mut all = Vec::new();
    tokio::time::timeout(Duration::from_secs(5), s.read_to_end(&mut all))
        .await
        .expect("answered in time")
        .unwrap();
    let end = all.windows(4).position(|w| w == b"\r\n\r\n");
    let (head, body) = match end {
        Some(i) => (&all[..i], all.len() - i - 4),
        None => (&all[..], 0),
    };
    let head = String::from_utf8_lossy(head);
    (head.lines().next().unwrap_or("").to_owned(), body)
}

/// Whether the server closed `s` (EOF or reset) within `limit`.
async fn closed_within(s: &mut TcpStream, limit: Duration) -> bool {
    let mut buf = [0u8; 1024];
    let until = tokio::time::Instant::now() + limit;
    loop {
        match tokio::time::timeout_at(until, s.read(&mut buf)).await {
            Err(_) => return false,
            Ok(Ok(0) | Err(_)) => return true,
            Ok(Ok(_)) => {}
        }
    }
}

#[tokio::test]
async fn one_hostile_source_neither_locks_out_another_nor_stays() {
    let config = ServerConfig {
        max_connections: 32,
        max_connections_per_source: 8,
        header_timeout: Duration::from_millis(800),
        idle_timeout: Duration::from_millis(1_200),
        ..ServerConfig::default()
    };
    let (addr, counters) = start(config).await;
    let hostile = Ipv4Addr::new(127, 32, 0, 1);
    // 40 connections from one address, more than the whole table: silent ones, ones that
    // send the h2 preface and stop, ones that stop inside an HTTP/1.1 head.
    let mut held = Vec::new();
    for i in 0..40 {
        let Ok(mut s) = connect_from(hostile, addr).await else {
            continue;
        };
        let _ = match i % 3 {
            0 => Ok(()),
            1 => s.write_all(PREFACE).await,
            _ => {
                s.write_all(b"GET /data/1 HTTP/1.1\r\nhost: a\r\nx-slow: ")
                    .await
            }
        };
        held.push(s);
    }
    tokio::time::sleep(Duration::from_millis(100)).await;
    // Another address is served at once.
    let (status, body) = get_from(Ipv4Addr::new(127, 32, 0, 2), addr, "/data/100").await;
    assert_eq!((status.as_str(), body), ("HTTP/1.1 200 OK", 100));
    assert_eq!(counters.refused_source.load(Ordering::Relaxed), 32);
    assert_eq!(counters.refused.load(Ordering::Relaxed), 0);
    // The 8 that were taken are closed by the header timeout (800 ms), none later than 3 s.
    let mut closed = 0;
    for s in &mut held {
        if closed_within(s, Duration::from_secs(3)).await {
            closed += 1;
        }
    }
    assert_eq!(closed, 40, "every hostile connection ends");
    // Ours, or hyper's header read timeout (the same limit) for a partial HTTP/1.1 head.
    let timeouts = counters.header_timeouts.load(Ordering::Relaxed);
    let errors = counters.errors.load(Ordering::Relaxed);
    assert_eq!(timeouts + errors, 8, "{}", counters.line());
    assert!(timeouts >= 5, "{}", counters.line());
    // And the hostile address is served again once its connections are gone.
    let (status, _) = get_from(hostile, addr, "/data/1").await;
    assert_eq!(status, "HTTP/1.1 200 OK");
    // An HTTP/1.1 keep-alive connection waiting for its next head: hyper's header read
    // timeout (the same --header-timeout) closes it.
    let mut s = connect_from(hostile, addr).await.unwrap();
    s.write_all(b"GET /data/3 HTTP/1.1\r\nhost: a\r\n\r\n")
        .await
        .unwrap();
    let t0 = tokio::time::Instant::now();
    assert!(closed_within(&mut s, Duration::from_secs(4)).await);
    let took = t0.elapsed();
    assert!(took >= Duration::from_millis(700), "{took:?}");
    // An h2 connection after its one stream: the idle timeout (1.2 s) closes it.
    let mut s = h2_stream_flood(hostile, addr, 1, "/data/3").await;
    let t0 = tokio::time::Instant::now();
    assert!(closed_within(&mut s, Duration::from_secs(4)).await);
    let took = t0.elapsed();
    assert!(took >= Duration::from_millis(1_100), "{took:?}");
    assert_eq!(counters.idle_closed.load(Ordering::Relaxed), 1);
}

/// An h2 frame.
fn frame(kind: u8, flags: u8, stream: u32, payload: &[u8]) -> Vec<u8> {
    let mut f = (payload.len() as u32).to_be_bytes()[1..].to_vec();
    f.push(kind);
    f.push(flags);
    f.extend_from_slice(&stream.to_be_bytes());
    f.extend_from_slice(payload);
    f
}

/// h2 (prior knowledge) from `from`: maximum windows, then `streams` GETs of `path`; the
/// responses are never read. Returns the connection (to keep it open).
async fn h2_stream_flood(from: Ipv4Addr, addr: SocketAddr, streams: u32, path: &str) -> TcpStream {
    let mut s = connect_from(from, addr).await.unwrap();
    let mut out = PREFACE.to_vec();
    // SETTINGS_INITIAL_WINDOW_SIZE = 2^31 - 1, and the connection window to the same.
    out.extend(frame(4, 0, 0, &[0, 4, 0x7f, 0xff, 0xff, 0xff]));
    out.extend(frame(8, 0, 0, &(0x7fff_ffffu32 - 65_535).to_be_bytes()));
    s.write_all(&out).await.unwrap();
    // The server's SETTINGS first, then our ACK of it.
    let mut buf = [0u8; 4096];
    let _ = tokio::time::timeout(Duration::from_millis(500), s.read(&mut buf)).await;
    let mut out = frame(4, 1, 0, &[]);
    // HPACK: :method GET (2), :scheme http (6), :path literal (name 4), :authority literal (1).
    let mut block = vec![0x82, 0x86, 0x04, path.len() as u8];
    block.extend_from_slice(path.as_bytes());
    block.extend_from_slice(&[0x01, 1, b'a']);
    for i in 0..streams {
        out.extend(frame(1, 0x5, 1 + 2 * i, &block));
    }
    s.write_all(&out).await.unwrap();
    s
}

/// This process's resident set, from /proc/self/status (kB → bytes).
fn vm_rss_bytes() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    let kb: u64 = status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.split_whitespace().next())
        .and_then(|v| v.parse().ok())
        .unwrap();
    kb * 1024
}

/// Set in the child process that runs the memory test alone.
const ALONE: &str = "COAPLAB_TEST_RSS_ALONE";

/// The VmRSS assertion measures the whole process, so the test runs in a process of its own
/// (this test binary again, with only this test): the other tests of the binary, running in
/// parallel threads, would otherwise count in its resident set.
#[test]
fn h2_streams_nobody_reads_hold_at_most_the_body_budget() {
    if std::env::var_os(ALONE).is_some() {
        return tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap()
            .block_on(h2_stream_flood_alone());
    }
    let name = "http_limits::h2_streams_nobody_reads_hold_at_most_the_body_budget";
    let out = std::process::Command::new(std::env::current_exe().unwrap())
        .args([name, "--exact", "--nocapture", "--test-threads", "1"])
        .env(ALONE, "1")
        .output()
        .unwrap();
    let text =
        String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success(),
        "the test in its own process failed:\n{text}"
    );
    assert!(
        text.contains("1 passed"),
        "the test did not run in its own process:\n{text}"
    );
}

async fn h2_stream_flood_alone() {
    let config = ServerConfig::default();
    let (addr, counters) = start(config).await;
    let before = vm_rss_bytes();
    let mut conns = Vec::new();
    for i in 0..6u8 {
        let from = Ipv4Addr::new(127, 33, 0, 1 + i);
        conns.push(h2_stream_flood(from, addr, 200, "/data/1073741824").await);
    }
    tokio::time::sleep(Duration::from_secs(2)).await;
    let peak = counters.body.peak.load(Ordering::Relaxed);
    let rss = vm_rss_bytes().saturating_sub(before);
    let cap = 6 * config.max_buffered_bytes_per_connection as u64;
    // Every connection filled its budget, and no more.
    assert!(peak <= cap, "body bytes peak {peak} > {cap}");
    assert!(
        peak >= cap / 2,
        "the flood did not load the server: peak {peak}"
    );
    assert!(counters.body.waits.load(Ordering::Relaxed) > 0);
    // Before the budget: about 464 KiB per stream, 16 × 6 streams here ≈ 45 MB and 200 × 6
    // (hyper's default stream limit) ≈ 557 MB.
    assert!(rss < 32 << 20, "VmRSS grew by {rss} B");
    // Others are still served meanwhile.
    let (status, body) = get_from(Ipv4Addr::new(127, 33, 1, 1), addr, "/data/1000").await;
    assert_eq!((status.as_str(), body), ("HTTP/1.1 200 OK", 1000));
    drop(conns);
}
