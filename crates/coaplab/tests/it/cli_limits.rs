//! `coaplab get|put|post|delete` against hostile or absent peers (issue 11, items 7–9): an
//! endless Block2 (UDP) or BERT Block2 (TCP) and a huge single message stop at
//! `--max-body-bytes` (exit 4); a payload file is read with that bound (`/dev/zero` fails at
//! once); a dead UDP port is "connection refused" (exit 4) from the ICMP port unreachable;
//! `--timeout` bounds a coap:// request (exit 3); multicast destinations and GET/DELETE
//! payloads are refused (exit 2). Every peer here is a thread of the test, bounded in count
//! and time; every run is bounded by `run_bounded`.

use crate::support;

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream, UdpSocket};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

use coaplab_wire::frame::{Decoded, Frame, FrameBuf};
use coaplab_wire::option::number;
use coaplab_wire::signal::{Signal, SignalMessage};
use coaplab_wire::{Block, Code, Message, MessageBuf, MessageType, ReadOptions};
use support::{coaplab, run_bounded, OurServer};

/// Bound of every run: far above what a fixed client needs (well under a second each), far
/// below what the unfixed one took (endless, or 72–247 s).
const LIMIT: Duration = Duration::from_secs(20);

/// Most requests a hostile peer answers before it stops on its own.
const MAX_ANSWERS: usize = 100_000;

fn stderr(o: &std::process::Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// A UDP peer answering every CON request with the block it asks for (Block2 NUM, 1024 B,
/// M=1): an endless body. Stops after [`MAX_ANSWERS`] or when `stop` is set; returns the
/// number of distinct blocks asked for (a retransmitted request counts once).
fn endless_block2_peer() -> (u16, Arc<AtomicBool>, JoinHandle<usize>) {
    endless_block2_peer_with(|_| {})
}

/// [`endless_block2_peer`] whose every answer gets the options `extra` adds.
fn endless_block2_peer_with(
    extra: impl Fn(&mut MessageBuf) + Send + 'static,
) -> (u16, Arc<AtomicBool>, JoinHandle<usize>) {
    let sock = UdpSocket::bind("127.0.0.1:0").unwrap();
    sock.set_read_timeout(Some(Duration::from_millis(50)))
        .unwrap();
    let port = sock.local_addr().unwrap().port();
    let stop = Arc::new(AtomicBool::new(false));
    let flag = stop.clone();
    let h = std::thread::spawn(move || {
        let mut buf = [0u8; 2048];
        let mut answered = 0;
        let mut blocks = std::collections::BTreeSet::new();
        while answered < MAX_ANSWERS && !flag.load(Ordering::Relaxed) {
            let Ok((n, from)) = sock.recv_from(&mut buf) else {
                continue;
            };
            let Ok(req) = Message::decode(&buf[..n]) else {
                continue;
            };
            let num = req.block2().ok().flatten().map_or(0, |b| b.num);
            blocks.insert(num);
            let mut ack =
                MessageBuf::new(MessageType::Ack, Code::CONTENT, req.message_id, req.token());
            let block = Block::with_size(num, true, 1024).unwrap();
            ack.options.push_uint(number::BLOCK2, block.to_uint());
            ack.payload = vec![0x55; 1024];
            extra(&mut ack);
            sock.send_to(&ack.to_bytes().unwrap(), from).unwrap();
            answered += 1;
        }
        blocks.len()
    });
    (port, stop, h)
}

/// An endless Block2 over UDP stops at --max-body-bytes: 97 blocks (99,328 B) fit in
/// 100,000 B, the 98th would pass it, so exactly blocks 0–97 are asked for and the client
/// exits 4 saying why. (Before: the client asked for blocks forever, growing ~40 MB/s.)
#[test]
fn an_endless_block2_over_udp_stops_at_max_body_bytes() {
    let (port, stop, h) = endless_block2_peer();
    let uri = format!("coap://127.0.0.1:{port}/endless");
    let o = run_bounded(
        coaplab().args(["get", &uri, "--max-body-bytes", "100000"]),
        None,
        LIMIT,
    );
    stop.store(true, Ordering::Relaxed);
    let blocks = h.join().unwrap();
    assert_eq!(o.status.code(), Some(4), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("the response body is larger than --max-body-bytes (100000 B)"),
        "{}",
        stderr(&o)
    );
    assert!(o.stdout.is_empty());
    assert_eq!(blocks, 98);
}

/// Issue 32 #5: an endless Block2 announcing Size2 = 10^12 (5 bytes, beyond Size2's 4-byte
/// format, so it was dropped as unreadable and the download ran on to --max-body-bytes)
/// stops at its first block: exit 4, block 0 only asked for.
#[test]
fn a_size2_of_a_terabyte_stops_the_download_at_the_first_block() {
    let (port, stop, h) = endless_block2_peer_with(|ack| {
        ack.options.push(
            number::SIZE2,
            1_000_000_000_000u64.to_be_bytes()[3..].to_vec(),
        );
    });
    let uri = format!("coap://127.0.0.1:{port}/endless");
    let o = run_bounded(coaplab().args(["get", &uri]), None, LIMIT);
    stop.store(true, Ordering::Relaxed);
    let blocks = h.join().unwrap();
    assert_eq!(o.status.code(), Some(4), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("the total its Size2 announces"),
        "{}",
        stderr(&o)
    );
    assert!(o.stdout.is_empty());
    assert_eq!(blocks, 1);
}

/// Issue 32 #5: a response with an unrecognised critical option (2049) is rejected (RFC
/// 7252 §5.4.1): exit 4 naming it, nothing on stdout. (Before: its payload was printed and
/// the exit was 0.)
#[test]
fn a_response_with_an_unknown_critical_option_exits_4() {
    let (port, stop, h) = endless_block2_peer_with(|ack| {
        ack.options.push(2049, b"x".to_vec());
    });
    let uri = format!("coap://127.0.0.1:{port}/x");
    let o = run_bounded(coaplab().args(["get", &uri]), None, LIMIT);
    stop.store(true, Ordering::Relaxed);
    assert_eq!(h.join().unwrap(), 1);
    assert_eq!(o.status.code(), Some(4), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("critical option 2049"),
        "{}",
        stderr(&o)
    );
    assert!(o.stdout.is_empty());
}

/// Reads one frame from `s` into `rx` (bytes after it are kept); `None` at the end.
fn read_frame(s: &mut TcpStream, rx: &mut Vec<u8>) -> Option<(Code, coaplab_wire::Token, u32)> {
    loop {
        if let Ok(Decoded::Frame { frame, consumed }) = Frame::decode_stream(rx, 1 << 20) {
            let num = frame.block2().ok().flatten().map_or(0, |b| b.num);
            let out = (frame.code, frame.token(), num);
            rx.drain(..consumed);
            return Some(out);
        }
        let mut buf = [0u8; 4096];
        match s.read(&mut buf) {
            Ok(0) | Err(_) => return None,
            Ok(n) => rx.extend_from_slice(&buf[..n]),
        }
    }
}

/// A CSM advertising 1-MiB messages and Block-Wise-Transfer.
fn csm() -> Vec<u8> {
    SignalMessage::new(Signal::Csm {
        max_message_size: Some(1 << 20),
        block_wise_transfer: true,
    })
    .to_frame()
    .to_bytes()
    .unwrap()
}

/// A TCP peer that runs `script` on its one connection, after sending its CSM.
fn tcp_peer<T: Send + 'static>(
    script: impl FnOnce(TcpStream) -> T + Send + 'static,
) -> (u16, JoinHandle<T>) {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = l.local_addr().unwrap().port();
    let h = std::thread::spawn(move || {
        let (mut s, _) = l.accept().unwrap();
        s.set_read_timeout(Some(LIMIT)).unwrap();
        s.write_all(&csm()).unwrap();
        script(s)
    });
    (port, h)
}

/// An endless BERT Block2 over TCP (RFC 8323 §6: SZX 7, 8 KiB per message, M=1 forever)
/// stops at --max-body-bytes: 12 messages (98,304 B) fit in 100,000 B, the 13th would pass
/// it, so exactly 13 requests are answered, and the client exits 4. (Before: 857 MB in 3.7 s.)
#[test]
fn an_endless_bert_block2_over_tcp_stops_at_max_body_bytes() {
    let (port, h) = tcp_peer(|mut s| {
        let mut rx = Vec::new();
        let mut answered = 0;
        while answered < MAX_ANSWERS {
            let Some((code, token, num)) = read_frame(&mut s, &mut rx) else {
                break;
            };
            if code != Code::GET {
                continue;
            }
            let mut f = FrameBuf::new(Code::CONTENT, token);
            f.options.push_block(
                number::BLOCK2,
                Block {
                    num,
                    more: true,
                    szx: 7,
                },
            );
            f.payload = vec![0x55; 8192];
            if s.write_all(&f.to_bytes().unwrap()).is_err() {
                break;
            }
            answered += 1;
        }
        answered
    });
    let uri = format!("coap+tcp://127.0.0.1:{port}/endless");
    let o = run_bounded(
        coaplab().args(["get", &uri, "--max-body-bytes", "100000"]),
        None,
        LIMIT,
    );
    assert_eq!(o.status.code(), Some(4), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("the response body is larger than --max-body-bytes (100000 B)"),
        "{}",
        stderr(&o)
    );
    assert_eq!(h.join().unwrap(), 13);
}

/// A single response announcing 200 MB: refused from its header (our CSM advertised
/// --max-body-bytes + 1 KiB = 101,024 B), with an Abort naming the cause, exit 4.
#[test]
fn a_huge_single_message_over_tcp_is_refused_from_its_header() {
    let (port, h) = tcp_peer(|mut s| {
        let mut rx = Vec::new();
        // The client's CSM: its Max-Message-Size.
        let their_csm = loop {
            let Ok(Decoded::Frame { frame, consumed }) = Frame::decode_stream(&rx, 1 << 20) else {
                let mut buf = [0u8; 4096];
                let n = s.read(&mut buf).unwrap();
                assert!(n > 0);
                rx.extend_from_slice(&buf[..n]);
                continue;
            };
            let m = SignalMessage::from_frame(&frame).unwrap();
            rx.drain(..consumed);
            break m.signal;
        };
        let Some((_, token, _)) = read_frame(&mut s, &mut rx) else {
            panic!("no request");
        };
        // Len 15: a 4-byte extended length, 200,000,000 - 65,805 body bytes; then 1 KiB.
        let mut head = vec![0xf0 | token.as_bytes().len() as u8];
        head.extend_from_slice(&(200_000_000u32 - 65_805).to_be_bytes());
        head.push(Code::CONTENT.0);
        head.extend_from_slice(token.as_bytes());
        head.push(0xff);
        head.extend_from_slice(&[0x55; 1024]);
        let _ = s.write_all(&head);
        let mut rest = Vec::new();
        let _ = s.read_to_end(&mut rest);
        their_csm
    });
    let uri = format!("coap+tcp://127.0.0.1:{port}/huge");
    let o = run_bounded(
        coaplab().args(["get", &uri, "--max-body-bytes", "100000"]),
        None,
        LIMIT,
    );
    assert_eq!(o.status.code(), Some(4), "{}", stderr(&o));
    assert!(
        stderr(&o).contains(
            "we aborted the session: message larger than our Max-Message-Size (101024 B, \
from --max-body-bytes)"
        ),
        "{}",
        stderr(&o)
    );
    assert_eq!(
        h.join().unwrap(),
        Signal::Csm {
            max_message_size: Some(101_024),
            block_wise_transfer: true,
        }
    );
}

/// `put --payload-file /dev/zero` reads at most --max-body-bytes + 1 bytes and exits 4 at
/// once (before: it read forever); a payload of exactly the limit goes through.
#[test]
fn an_upload_past_max_body_bytes_fails_before_sending() {
    // Nothing listens there: the payload is refused before any socket is opened.
    let uri = format!("coap://127.0.0.1:{}/echo", support::free_udp_port());
    let o = run_bounded(
        coaplab().args(["put", &uri, "--payload-file", "/dev/zero"]),
        None,
        LIMIT,
    );
    assert_eq!(o.status.code(), Some(4), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("the payload is larger than --max-body-bytes (67108864 B)"),
        "{}",
        stderr(&o)
    );
    let o = run_bounded(
        coaplab().args([
            "post",
            &uri,
            "--payload-file",
            "-",
            "--max-body-bytes",
            "1000",
        ]),
        Some(&[1; 1001]),
        LIMIT,
    );
    assert_eq!(o.status.code(), Some(4), "{}", stderr(&o));
    let server = OurServer::start(&[]);
    let o = run_bounded(
        coaplab().args([
            "put",
            &server.uri("echo"),
            "--payload-file",
            "-",
            "--max-body-bytes",
            "1000",
        ]),
        Some(&[1; 1000]),
        LIMIT,
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(o.stdout, [1; 1000]);
    server.stop();
}

/// Nobody listens on the port: the ICMP port unreachable of the first copy ends the request
/// as "connection refused", exit 4, after one send (before: 72–82 s of silent retransmissions,
/// then exit 3).
#[test]
fn a_dead_udp_port_is_connection_refused() {
    let uri = format!("coap://127.0.0.1:{}/x", support::free_udp_port());
    let o = run_bounded(coaplab().args(["get", &uri, "-v"]), None, LIMIT);
    assert_eq!(o.status.code(), Some(4), "{}", stderr(&o));
    let err = stderr(&o);
    let lines: Vec<&str> = err.lines().collect();
    assert_eq!(lines.len(), 2, "{err}");
    assert!(
        lines[0].contains(" send exchange=0 copy=0 bytes=10 to=127.0.0.1:"),
        "{err}"
    );
    assert!(
        lines[1].starts_with("coaplab: connection refused: nothing listens on 127.0.0.1:"),
        "{err}"
    );
}

/// A peer that reads and never answers: --timeout 1s ends a NON request (before: 247 s) and
/// a CON request (before: ~93 s) at 1 s with exit 3.
#[test]
fn timeout_bounds_a_coap_request() {
    let silent = UdpSocket::bind("127.0.0.1:0").unwrap();
    let uri = format!("coap://127.0.0.1:{}/x", silent.local_addr().unwrap().port());
    for extra in [&["--non"][..], &[]] {
        let o = run_bounded(
            coaplab().args(["get", &uri, "--timeout", "1s"]).args(extra),
            None,
            LIMIT,
        );
        assert_eq!(o.status.code(), Some(3), "{extra:?}: {}", stderr(&o));
        assert_eq!(stderr(&o), "coaplab: timeout: no response within 1s\n");
    }
}

/// A multicast or broadcast destination is refused with exit 2 and a reason (before: the
/// request hung).
#[test]
fn group_destinations_are_refused() {
    for (uri, what) in [
        ("coap://224.0.1.187/x", "224.0.1.187 is a multicast address"),
        ("coap://[ff02::fd]/x", "ff02::fd is a multicast address"),
        ("coap+tcp://239.1.2.3/x", "239.1.2.3 is a multicast address"),
        (
            "coap://255.255.255.255/x",
            "255.255.255.255 is the broadcast address",
        ),
    ] {
        let o = run_bounded(coaplab().args(["get", uri]), None, LIMIT);
        assert_eq!(o.status.code(), Some(2), "{uri}: {}", stderr(&o));
        assert!(stderr(&o).contains(what), "{uri}: {}", stderr(&o));
        assert!(stderr(&o).contains("RFC 7252 §8"), "{}", stderr(&o));
    }
    let o = run_bounded(
        coaplab().args(["bench", "coap://224.0.1.187/x", "--duration", "100ms"]),
        None,
        LIMIT,
    );
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
}

/// GET and DELETE carry no payload (RFC 7252 §5.5): `--payload` or `--payload-file` with
/// them is refused, exit 2, before anything is sent (before: sent silently).
#[test]
fn get_and_delete_refuse_a_payload() {
    let uri = format!("coap://127.0.0.1:{}/x", support::free_udp_port());
    for (args, name) in [
        (&["get", &uri, "--payload", "x"][..], "GET"),
        (&["get", &uri, "--payload-file", "-"], "GET"),
        (&["delete", &uri, "--payload", "x"], "DELETE"),
    ] {
        let o = run_bounded(coaplab().args(args), Some(b"x"), LIMIT);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", stderr(&o));
        assert_eq!(
            stderr(&o),
            format!(
                "coaplab: a {name} request carries no payload (RFC 7252 §5.5); use put, post, fetch, \
                 patch or ipatch\n"
            )
        );
    }
}

/// A UDP peer answering every CON request piggybacked with 2.05 "42" and no Observe option,
/// as a server whose observer table is full does (RFC 7641 §4.1); stops when `stop` is set.
/// Returns the requests seen.
fn unobservable_peer() -> (u16, Arc<AtomicBool>, JoinHandle<usize>) {
    let sock = UdpSocket::bind("127.0.0.1:0").unwrap();
    sock.set_read_timeout(Some(Duration::from_millis(50)))
        .unwrap();
    let port = sock.local_addr().unwrap().port();
    let stop = Arc::new(AtomicBool::new(false));
    let flag = stop.clone();
    let h = std::thread::spawn(move || {
        let mut buf = [0u8; 2048];
        let mut seen = 0;
        while seen < MAX_ANSWERS && !flag.load(Ordering::Relaxed) {
            let Ok((n, from)) = sock.recv_from(&mut buf) else {
                continue;
            };
            let Ok(req) = Message::decode(&buf[..n]) else {
                continue;
            };
            seen += 1;
            let mut ack =
                MessageBuf::new(MessageType::Ack, Code::CONTENT, req.message_id, req.token());
            ack.payload = b"42".to_vec();
            sock.send_to(&ack.to_bytes().unwrap(), from).unwrap();
        }
        seen
    });
    (port, stop, h)
}

/// Issue 32 #6: `get --observe --count 3` against a server that answers without Observe (its
/// observer table full) printed the one value and exited 0 silently. Now it says why and
/// exits 4; `--count 1` (only the first value asked for) still exits 0.
#[test]
fn an_observation_the_server_does_not_register_fails_and_says_why() {
    for (count, exit) in [("3", 4), ("1", 0)] {
        let (port, stop, h) = unobservable_peer();
        let uri = format!("coap://127.0.0.1:{port}/counter");
        let o = run_bounded(
            coaplab().args(["get", "--observe", "--count", count, &uri]),
            None,
            LIMIT,
        );
        stop.store(true, Ordering::Relaxed);
        h.join().unwrap();
        assert_eq!(o.status.code(), Some(exit), "{}", stderr(&o));
        assert_eq!(o.stdout, b"42\n");
        if exit == 4 {
            assert!(
                stderr(&o).contains("not registered as an observer"),
                "{}",
                stderr(&o)
            );
        }
    }
}
