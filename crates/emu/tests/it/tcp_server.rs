//! `serve_tcp` under abuse (coaplab issue 11, items 1, 2 and 5), over loopback with bounded
//! counts: silent connects beyond the per-source limit are refused at once and a client from
//! elsewhere is served; stalled connections are aborted after the stall timeout and free their
//! slots; a peer that never reads costs one write chunk; the total queue budget answers 5.03;
//! a panicking connection task is reported and the others are served on.

use std::io;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use coaplab_emu::tcp::WRITE_CHUNK_BYTES;
use coaplab_emu::{serve_tcp, TcpDriver, TcpEvent, TcpEventSink, TcpServerLimits};
use coaplab_endpoint::tcp::{Session, SessionConfig, SessionEvent};
use coaplab_endpoint::{Request, Router};
use coaplab_wire::frame::{Decoded, Frame};
use coaplab_wire::Code;
use tokio::net::{TcpListener, TcpSocket, TcpStream};

/// Every event the server's sink saw, in order.
type Seen = Arc<Mutex<Vec<(SocketAddr, TcpEvent)>>>;

/// A server on a loopback port with `limits` and `config`; the sink records every event.
async fn serve(limits: TcpServerLimits, config: SessionConfig) -> (SocketAddr, Seen) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let seen: Seen = Arc::default();
    let log = seen.clone();
    let sink: TcpEventSink = Arc::new(move |peer, e| log.lock().unwrap().push((peer, e.clone())));
    let start = tokio::time::Instant::now();
    tokio::spawn(serve_tcp(
        listener,
        config,
        Router::new(),
        start,
        limits,
        sink,
    ));
    (addr, seen)
}

/// How many events `f` picks out.
fn count(seen: &Seen, f: impl Fn(&TcpEvent) -> bool) -> usize {
    seen.lock().unwrap().iter().filter(|(_, e)| f(e)).count()
}

/// Waits (at most 5 s) until `f` picks out `n` events.
async fn wait_for(seen: &Seen, n: usize, f: impl Fn(&TcpEvent) -> bool) {
    for _ in 0..500 {
        if count(seen, &f) >= n {
            return;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    panic!("{:?}", seen.lock().unwrap());
}

/// A connection to `addr` from the loopback address `from`.
async fn connect_from(from: &str, addr: SocketAddr) -> io::Result<TcpStream> {
    let s = TcpSocket::new_v4()?;
    s.bind(format!("{from}:0").parse().unwrap())?;
    s.connect(addr).await
}

/// A connection to `addr` that reads slowly: a 4-KiB receive buffer, so a peer's writes stop
/// after a few MB rather than after the hundred MB that loopback's autotuning takes.
async fn connect_small(addr: SocketAddr) -> TcpStream {
    let s = TcpSocket::new_v4().unwrap();
    s.set_recv_buffer_size(4096).unwrap();
    s.connect(addr).await.unwrap()
}

/// Writes all of `bytes`.
async fn send(s: &TcpStream, mut bytes: &[u8]) {
    while !bytes.is_empty() {
        s.writable().await.unwrap();
        match s.try_write(bytes) {
            Ok(n) => bytes = &bytes[n..],
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => {}
            Err(e) => panic!("{e}"),
        }
    }
}

/// Reads until the peer closes (at most 5 s).
async fn read_to_end(s: &TcpStream) -> Vec<u8> {
    let mut got = Vec::new();
    let mut buf = [0u8; 4096];
    let read = async {
        loop {
            s.readable().await.unwrap();
            match s.try_read(&mut buf) {
                Ok(0) => return,
                Ok(n) => got.extend_from_slice(&buf[..n]),
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {}
                Err(_) => return,
            }
        }
    };
    tokio::time::timeout(Duration::from_secs(5), read)
        .await
        .unwrap();
    got
}

/// The Abort after the server's 2-B CSM in `got`, as its diagnostic.
fn abort_diagnostic(got: &[u8]) -> String {
    assert_eq!(got[..2], [0x00, 0xe1], "{got:?}");
    let Ok(Decoded::Frame { frame, consumed }) = Frame::decode_stream(&got[2..], 1152) else {
        panic!("{got:?}");
    };
    assert_eq!((frame.code, consumed), (Code::ABORT, got.len() - 2));
    String::from_utf8_lossy(frame.payload).into_owned()
}

/// GET /data/`n` from the loopback address `from`; the response code and body length.
async fn get(from: &str, addr: SocketAddr, n: usize) -> (Code, usize) {
    let stream = connect_from(from, addr).await.unwrap();
    let session = Session::new(SessionConfig::client(), Router::new()).unwrap();
    let mut d = TcpDriver::new(stream, session, tokio::time::Instant::now()).unwrap();
    let now = d.now();
    d.session_mut()
        .request(now, &Request::get(&format!("data/{n}")))
        .unwrap();
    let done = async {
        loop {
            match d.next_event().await {
                TcpEvent::Session(SessionEvent::RequestCompleted { code, body_len, .. }) => {
                    return (code, body_len)
                }
                TcpEvent::Ended => panic!("ended without a response"),
                _ => {}
            }
        }
    };
    tokio::time::timeout(Duration::from_secs(5), done)
        .await
        .unwrap()
}

#[tokio::test]
async fn silent_connects_beyond_the_per_source_limit_evict_their_own_and_others_are_served() {
    let limits = TcpServerLimits {
        max_connections_per_source: 4,
        evict_after: Duration::from_millis(20),
        ..TcpServerLimits::default()
    };
    let (addr, seen) = serve(limits, SessionConfig::server()).await;
    let mut silent = Vec::new();
    for _ in 0..20 {
        silent.push(connect_from("127.0.0.1", addr).await.unwrap());
        // Each gets its chance to speak before the next may take its place.
        tokio::time::sleep(Duration::from_millis(30)).await;
    }
    let evicted = |e: &TcpEvent| {
        matches!(
            e,
            TcpEvent::Evicted {
                csm_received: false
            }
        )
    };
    // Issue 32 #4: each one beyond the share takes the place of the source's oldest silent
    // one (closed after our CSM), instead of being refused while they hold on.
    wait_for(&seen, 16, evicted).await;
    for s in &silent[..16] {
        assert_eq!(read_to_end(s).await, [0x00, 0xe1]);
    }
    // Another address is served at once.
    assert_eq!(get("127.0.0.2", addr, 3).await, (Code::CONTENT, 3));
    assert_eq!(count(&seen, evicted), 16);
    assert_eq!(count(&seen, |e| matches!(e, TcpEvent::Refused { .. })), 0);
    assert_eq!(count(&seen, |e| matches!(e, TcpEvent::TimedOut { .. })), 0);
}

#[tokio::test]
async fn stalled_connections_are_aborted_and_free_their_slots() {
    let limits = TcpServerLimits {
        max_connections: 4,
        stall_timeout: Some(Duration::from_millis(300)),
        ..TcpServerLimits::default()
    };
    let (addr, seen) = serve(limits, SessionConfig::server()).await;
    // Four that send a CSM and one byte of a GET: all slots taken, none idle.
    let mut stalled = Vec::new();
    for _ in 0..4 {
        let s = connect_from("127.0.0.1", addr).await.unwrap();
        send(&s, &[0x00, 0xe1, 0x01]).await;
        stalled.push(s);
    }
    wait_for(&seen, 4, |e| {
        matches!(e, TcpEvent::Session(SessionEvent::CsmReceived { .. }))
    })
    .await;
    // Full of busy connections: one more is turned away at once, the loop accepting on.
    let late = connect_from("127.0.0.3", addr).await.unwrap();
    let got = read_to_end(&late).await;
    assert_eq!(abort_diagnostic(&got), "too many connections");
    // After the stall timeout every one is aborted, saying why.
    for s in &stalled {
        let got = read_to_end(s).await;
        let why = abort_diagnostic(&got);
        // (Not evicted for the late one: busy, a message in progress.)
        assert!(why.starts_with("timeout:"), "{why}");
    }
    wait_for(&seen, 4, |e| *e == TcpEvent::Ended).await;
    assert_eq!(get("127.0.0.3", addr, 5).await, (Code::CONTENT, 5));
    assert_eq!(count(&seen, |e| matches!(e, TcpEvent::TimedOut { .. })), 4);
    assert_eq!(count(&seen, |e| matches!(e, TcpEvent::Refused { .. })), 1);
}

/// Issue 32 #4: silent connects from many addresses (34 × 16 in the probe) filled the table
/// and every new connection was refused until the stall timeout freed them (10 s a wave).
/// Now a new connection takes the place of the oldest one without a CSM, and a real client
/// is served at once while they wait, then the oldest idle one when all have spoken.
#[tokio::test]
async fn a_full_table_of_silent_connects_evicts_the_oldest_for_a_real_client() {
    let limits = TcpServerLimits {
        max_connections: 8,
        max_connections_per_source: 2,
        evict_after: Duration::from_millis(30),
        ..TcpServerLimits::default()
    };
    let (addr, seen) = serve(limits, SessionConfig::server()).await;
    let mut silent = Vec::new();
    for host in 10..14 {
        for _ in 0..2 {
            silent.push(
                connect_from(&format!("127.0.1.{host}"), addr)
                    .await
                    .unwrap(),
            );
        }
    }
    tokio::time::sleep(Duration::from_millis(50)).await;
    assert_eq!(get("127.0.0.2", addr, 7).await, (Code::CONTENT, 7));
    let evicted = |e: &TcpEvent| matches!(e, TcpEvent::Evicted { .. });
    wait_for(&seen, 1, evicted).await;
    // The oldest silent one went, closed after our CSM.
    assert_eq!(read_to_end(&silent[0]).await, [0x00, 0xe1]);
    assert_eq!(count(&seen, |e| matches!(e, TcpEvent::Refused { .. })), 0);
    // Eight connections that each sent a CSM and a GET, answered: idle, all of them. One more
    // takes the place of the one idle longest.
    let (addr, seen) = serve(
        TcpServerLimits {
            max_connections: 8,
            evict_after: Duration::from_millis(30),
            ..TcpServerLimits::default()
        },
        SessionConfig::server(),
    )
    .await;
    let mut idle = Vec::new();
    for _ in 0..8 {
        let s = connect_from("127.0.0.1", addr).await.unwrap();
        // CSM, then GET /data/1 with token 0x07.
        send(&s, b"\x00\xe1\x71\x01\x07\xb4data\x011").await;
        idle.push(s);
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    wait_for(&seen, 8, |e| {
        matches!(e, TcpEvent::Session(SessionEvent::Served { .. }))
    })
    .await;
    tokio::time::sleep(Duration::from_millis(50)).await;
    assert_eq!(get("127.0.0.2", addr, 9).await, (Code::CONTENT, 9));
    assert_eq!(
        count(&seen, |e| matches!(
            e,
            TcpEvent::Evicted { csm_received: true }
        )),
        1
    );
    assert_eq!(count(&seen, |e| matches!(e, TcpEvent::Refused { .. })), 0);
}

/// Issue 32 #4: a CSM then a GET sent one byte every 400 ms: each byte restarted the stall
/// timeout (1 s here), so the connection held its slot for ever (the probe: 1 byte per 8 s
/// from 18 addresses kept new connections refused). With a minimum rate of 256 B/s after
/// the stall timeout's grace it is aborted at about the grace.
#[tokio::test]
async fn a_trickling_peer_is_aborted_for_being_too_slow() {
    let limits = TcpServerLimits {
        stall_timeout: Some(Duration::from_secs(1)),
        ..TcpServerLimits::default()
    };
    let (addr, seen) = serve(limits, SessionConfig::server()).await;
    let s = connect_from("127.0.0.1", addr).await.unwrap();
    send(&s, b"\x00\xe1").await;
    let started = tokio::time::Instant::now();
    let request = b"\x71\x01\x07\xb4data\x011";
    let trickle = async {
        for b in request.iter().take(request.len() - 1) {
            // Once aborted, the writes fail: the trickle simply stops.
            if s.try_write(&[*b]).is_err() {
                break;
            }
            tokio::time::sleep(Duration::from_millis(400)).await;
        }
    };
    tokio::time::timeout(Duration::from_secs(3), trickle)
        .await
        .ok();
    wait_for(&seen, 1, |e| matches!(e, TcpEvent::TimedOut { .. })).await;
    let took = started.elapsed();
    assert!(took < Duration::from_millis(2_500), "{took:?}");
    let got = read_to_end(&s).await;
    assert_eq!(
        abort_diagnostic(&got),
        "timeout: too slow, CSM or message incomplete"
    );
    // Without the minimum rate, the same trickle is not aborted within those 3 s.
    let (addr, seen) = serve(
        TcpServerLimits {
            stall_timeout: Some(Duration::from_secs(1)),
            min_rate_bytes_per_s: None,
            ..TcpServerLimits::default()
        },
        SessionConfig::server(),
    )
    .await;
    let s = connect_from("127.0.0.1", addr).await.unwrap();
    send(&s, b"\x00\xe1").await;
    for b in request.iter().take(7) {
        send(&s, &[*b]).await;
        tokio::time::sleep(Duration::from_millis(400)).await;
    }
    assert_eq!(count(&seen, |e| matches!(e, TcpEvent::TimedOut { .. })), 0);
}

/// A CSM with Max-Message-Size 2^32 - 1, then GET /data/1000000000 (token 0x07): 27 B.
const GREEDY_GET: &[u8] = b"\x50\xe1\x24\xff\xff\xff\xff\xd1\x03\x01\x07\xb4data\x0a1000000000";

#[tokio::test]
async fn a_peer_that_never_reads_costs_one_write_chunk() {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let client = connect_small(addr).await;
    let (stream, _) = listener.accept().await.unwrap();
    let session = Session::new(SessionConfig::server(), Router::new()).unwrap();
    let mut d = TcpDriver::new(stream, session, tokio::time::Instant::now()).unwrap();
    send(&client, GREEDY_GET).await;
    // The driver writes until the socket buffers are full, then waits.
    while let Ok(e) = tokio::time::timeout(Duration::from_millis(500), d.next_event()).await {
        assert_ne!(e, TcpEvent::Ended);
    }
    let stats = d.stats();
    // Part of the response went out (the socket buffers' worth), not all of it.
    assert!(stats.bytes_out > 2 * WRITE_CHUNK_BYTES as u64, "{stats:?}");
    assert!(stats.bytes_out < 1_000_000_000, "{stats:?}");
    // The 1-GB body is never held: the chunk being written and the queue's bookkeeping.
    assert!(
        stats.peak_queued_bytes <= (WRITE_CHUNK_BYTES + 256) as u64,
        "{stats:?}"
    );
    // The rest is still to be produced, but for the chunk being written when we stopped.
    let rest = 1_000_000_008 - (stats.bytes_out - 2);
    let pending = d.session().pending_write_bytes();
    assert!(pending <= rest && pending + WRITE_CHUNK_BYTES as u64 >= rest);
}

#[tokio::test]
async fn the_total_queue_budget_answers_5_03() {
    let limits = TcpServerLimits {
        max_queued_bytes: 1_000,
        ..TcpServerLimits::default()
    };
    let config = SessionConfig {
        max_message_size: Some(1 << 20),
        ..SessionConfig::server()
    };
    let (addr, _) = serve(limits, config).await;
    let stream = TcpStream::connect(addr).await.unwrap();
    let session = Session::new(SessionConfig::client(), Router::new()).unwrap();
    let mut d = TcpDriver::new(stream, session, tokio::time::Instant::now()).unwrap();
    let mut codes = Vec::new();
    for len in [500, 2_000] {
        let now = d.now();
        // Wait for the server's CSM before a request above 1,152 B.
        while !d.session().csm_received() {
            d.next_event().await;
        }
        d.session_mut()
            .request(now, &Request::post("echo", vec![1; len]))
            .unwrap();
        loop {
            if let TcpEvent::Session(SessionEvent::RequestCompleted { code, body_len, .. }) =
                d.next_event().await
            {
                codes.push((code, body_len));
                break;
            }
        }
    }
    assert_eq!(
        codes,
        [(Code::CHANGED, 500), (Code::SERVICE_UNAVAILABLE, 0)]
    );
}

#[tokio::test]
async fn a_panicking_connection_is_reported_and_the_others_served() {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let seen: Seen = Arc::default();
    let log = seen.clone();
    let panicked = AtomicBool::new(false);
    // The first CSM received panics its connection's task (inside the sink, as a bug would).
    let sink: TcpEventSink = Arc::new(move |peer, e| {
        if matches!(e, TcpEvent::Session(SessionEvent::CsmReceived { .. }))
            && !panicked.swap(true, Ordering::Relaxed)
        {
            panic!("a bug in one connection");
        }
        log.lock().unwrap().push((peer, e.clone()));
    });
    let start = tokio::time::Instant::now();
    let limits = TcpServerLimits::default();
    tokio::spawn(serve_tcp(
        listener,
        SessionConfig::server(),
        Router::new(),
        start,
        limits,
        sink,
    ));
    let first = connect_from("127.0.0.1", addr).await.unwrap();
    send(&first, &[0x00, 0xe1]).await;
    // Its task is gone: the connection closes (the CSM sent at accept came first).
    assert_eq!(read_to_end(&first).await, [0x00, 0xe1]);
    wait_for(&seen, 1, |e| *e == TcpEvent::Panicked).await;
    assert_eq!(get("127.0.0.1", addr, 7).await, (Code::CONTENT, 7));
    assert_eq!(count(&seen, |e| *e == TcpEvent::Panicked), 1);
}

#[tokio::test]
async fn a_peer_that_never_reads_is_dropped_after_the_idle_timeout() {
    let limits = TcpServerLimits {
        idle_timeout: Some(Duration::from_millis(300)),
        ..TcpServerLimits::default()
    };
    let (addr, seen) = serve(limits, SessionConfig::server()).await;
    let client = connect_small(addr).await;
    send(&client, GREEDY_GET).await;
    // Its writes stop making progress once the socket buffers are full; 300 ms later the
    // connection is failed and its slot freed.
    wait_for(&seen, 1, |e| *e == TcpEvent::Ended).await;
    let served = count(&seen, |e| {
        matches!(
            e,
            TcpEvent::Session(SessionEvent::Served {
                code: Code::CONTENT,
                ..
            })
        )
    });
    assert_eq!(served, 1);
    drop(client);
}
