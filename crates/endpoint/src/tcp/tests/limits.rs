//! Serving within bounds (coaplab issue 11, items 1–2): `data/N` beyond the router's limit is
//! an empty 4.00, a response beyond the peer's Max-Message-Size an empty 5.00, one beyond the
//! write queue's room an empty 5.03, all decided before any body is produced; a generated body
//! allowed by the peer is produced chunk by chunk as it is written.

use coaplab_wire::Token;

use super::{events, pump, t, writes};
use crate::request::Request;
use crate::resource::{Router, MAX_DATA_BYTES};
use crate::tcp::{Session, SessionConfig, SessionEvent, QUEUED_MESSAGE_BYTES};

/// A client advertising Max-Message-Size 2^32 - 1 and a server with the built-in routes, the
/// server's CSM already written and the client's CSM received.
fn pair(server: SessionConfig) -> (Session, Session) {
    let client = SessionConfig {
        max_message_size: Some(u32::MAX),
        ..SessionConfig::client()
    };
    let mut c = Session::new(client, Router::new()).unwrap();
    let mut s = Session::new(server, Router::new()).unwrap();
    pump(&mut s, &mut c, t(0));
    pump(&mut c, &mut s, t(0));
    let _ = (events(&mut c), events(&mut s));
    (c, s)
}

/// The server's answer to `request`: its writes' bytes, its events.
fn ask(c: &mut Session, s: &mut Session, request: &Request) -> (Vec<Vec<u8>>, Vec<SessionEvent>) {
    c.request(t(1), request).unwrap();
    pump(c, s, t(2));
    let w = writes(s).into_iter().map(|w| w.bytes).collect();
    (w, events(s))
}

#[test]
fn data_beyond_the_limit_is_an_empty_4_00_over_tcp() {
    let (mut c, mut s) = pair(SessionConfig::server());
    for n in [
        "1099511627776",
        "9223372036854775808",
        "18446744073709551615",
        "1073741825",
    ] {
        let (w, _) = ask(&mut c, &mut s, &Request::get(&format!("data/{n}")));
        // Len 0, 1-B token; 4.00; the token.
        assert_eq!(w, [vec![0x01, 0x80, c.outstanding() as u8 - 1]], "{n}");
    }
}

#[test]
fn a_1_gib_body_allowed_by_the_peer_is_produced_only_as_written() {
    let (mut c, mut s) = pair(SessionConfig::server());
    c.request(t(1), &Request::get(&format!("data/{MAX_DATA_BYTES}")))
        .unwrap();
    pump(&mut c, &mut s, t(2));
    // In memory: the 8-B head (Len 15, 32-bit length 2^30 + 1 - 65,805, 2.05, token, marker).
    assert_eq!(s.queued_bytes(), 8 + QUEUED_MESSAGE_BYTES);
    assert_eq!(s.pending_write_bytes(), 8 + (1 << 30));
    let served = events(&mut s).into_iter().find_map(|e| match e {
        SessionEvent::Served { response_bytes, .. } => Some(response_bytes),
        _ => None,
    });
    assert_eq!(served, Some(8 + (1 << 30)));
    let mut buf = Vec::new();
    let chunk = s.poll_write_chunk(&mut buf, 65_536).unwrap();
    assert_eq!((chunk.message_bytes, chunk.last), (8 + (1 << 30), false));
    assert_eq!(buf.len(), 65_536);
    let ext = ((1u32 << 30) + 1 - 65_805).to_be_bytes();
    assert_eq!(
        buf[..8],
        [0xf1, ext[0], ext[1], ext[2], ext[3], 0x45, 0x00, 0xff]
    );
    assert!(buf[8..].iter().enumerate().all(|(i, b)| *b == i as u8));
    // The next chunk carries on the pattern where the first stopped.
    let _ = s.poll_write_chunk(&mut buf, 3).unwrap();
    assert_eq!(buf, [(65_528 % 256) as u8, 249, 250]);
    assert_eq!(s.pending_write_bytes(), 8 + (1 << 30) - 65_539);
}

/// Two identical client/server pairs whose servers have queued the same two answers (a
/// generated 200,000-B body, then a 70,000-B echo): the whole writes of the first, and the
/// second pair to take the same answers apart.
fn two_answers() -> (Vec<Vec<u8>>, Session, Session) {
    let get = Request::get("data/200000");
    let server = SessionConfig {
        max_message_size: Some(1 << 20),
        ..SessionConfig::server()
    };
    let (mut c1, mut s1) = pair(server.clone());
    let (mut c2, mut s2) = pair(server);
    for (c, s) in [(&mut c1, &mut s1), (&mut c2, &mut s2)] {
        c.request(t(1), &get).unwrap();
        c.request(t(1), &Request::post("echo", vec![7; 70_000]))
            .unwrap();
        pump(c, s, t(2));
    }
    let whole = writes(&mut s1).into_iter().map(|w| w.bytes).collect();
    (whole, c2, s2)
}

#[test]
fn chunks_put_together_are_the_whole_messages() {
    let (whole, _, mut s2) = two_answers();
    assert_eq!(
        whole.iter().map(Vec::len).collect::<Vec<_>>(),
        [200_008, 70_008]
    );
    let mut got = vec![Vec::new()];
    let mut buf = Vec::new();
    while let Some(chunk) = s2.poll_write_chunk(&mut buf, 65_536) {
        assert!(buf.len() <= 65_536);
        got.last_mut().unwrap().extend_from_slice(&buf);
        if chunk.last {
            assert_eq!(got.last().unwrap().len(), chunk.message_bytes);
            got.push(Vec::new());
        }
    }
    got.pop();
    assert_eq!(got, whole);
    assert_eq!((s2.queued_bytes(), s2.pending_write_bytes()), (0, 0));
}

#[test]
fn a_1_gib_body_beyond_the_peers_limit_is_refused_before_it_is_built() {
    // The experiments' client: Max-Message-Size 131,072.
    let mut c = Session::new(SessionConfig::client(), Router::new()).unwrap();
    let mut s = Session::new(SessionConfig::server(), Router::new()).unwrap();
    pump(&mut s, &mut c, t(0));
    let (w, e) = ask(
        &mut c,
        &mut s,
        &Request::get(&format!("data/{MAX_DATA_BYTES}")),
    );
    assert_eq!(w, [vec![0x01, 0xa0, 0x00]]);
    assert!(e.contains(&SessionEvent::ResponseRefused {
        token: Token::new(&[0]).unwrap(),
        len: 8 + (1 << 30),
        max: 131_072,
        at: t(2),
    }));
}

#[test]
fn a_response_beyond_the_queue_room_is_an_empty_5_03() {
    let server = SessionConfig {
        max_queued_bytes: 1_000,
        ..SessionConfig::server()
    };
    let (mut c, mut s) = pair(server);
    // Len/TKL, 2-B extended length, code, token, marker, 950 B of echo: 956 B, + 64.
    let (w, e) = ask(&mut c, &mut s, &Request::post("echo", vec![1; 950]));
    assert_eq!(w, [vec![0x01, 0xa3, 0x00]]);
    assert!(e.contains(&SessionEvent::QueueFull {
        token: Token::new(&[0]).unwrap(),
        len: 956 + QUEUED_MESSAGE_BYTES,
        room: 1_000,
        at: t(2),
    }));
    // A generated body costs only its head.
    let (w, _) = ask(&mut c, &mut s, &Request::get("data/100000"));
    assert_eq!(w[0].len(), 100_008);
    // The driver's share of a budget applies as well.
    s.set_queue_budget(100);
    let (w, _) = ask(&mut c, &mut s, &Request::post("echo", vec![1; 40]));
    assert_eq!(w, [vec![0x01, 0xa3, 0x02]]);
    let (w, _) = ask(&mut c, &mut s, &Request::post("echo", vec![1; 30]));
    assert_eq!(w[0].len(), 35);
}

#[test]
fn stalled_since_covers_a_missing_csm_and_a_frame_left_incomplete() {
    let mut s = Session::new(SessionConfig::server(), Router::new()).unwrap();
    let opened = t(5);
    // Nothing, or half a CSM: stalled since the connection opened.
    assert_eq!(s.stalled_since(opened), Some(opened));
    s.handle_stream_bytes(t(10), &[0x00]);
    assert_eq!(s.stalled_since(opened), Some(opened));
    s.handle_stream_bytes(t(20), &[0xe1]);
    assert_eq!(s.stalled_since(opened), None);
    // One byte of a GET: stalled since it arrived; the rest completes it.
    s.handle_stream_bytes(t(30), &[0x01]);
    assert_eq!(s.stalled_since(opened), Some(t(30)));
    s.handle_stream_bytes(t(40), &[0x01]);
    assert_eq!(s.stalled_since(opened), Some(t(40)));
    s.handle_stream_bytes(t(50), &[0x07]);
    assert_eq!(s.stalled_since(opened), None);
    let _ = (writes(&mut s), events(&mut s));
    // A driver's abort: 7.05 with the diagnostic, then nothing is stalled.
    s.abort_with(t(60), "timeout");
    let w = writes(&mut s);
    assert_eq!(w[0].bytes, b"\x80\xe5\xfftimeout");
    assert!(s.should_close());
    assert_eq!(s.stalled_since(opened), None);
}

#[test]
fn discarded_writes_are_never_produced() {
    let (mut c, mut s) = pair(SessionConfig::server());
    c.request(t(1), &Request::get(&format!("data/{MAX_DATA_BYTES}")))
        .unwrap();
    pump(&mut c, &mut s, t(2));
    let mut buf = Vec::new();
    let _ = s.poll_write_chunk(&mut buf, 100).unwrap();
    s.discard_writes();
    assert_eq!((s.queued_bytes(), s.pending_write_bytes()), (0, 0));
    assert!(s.poll_write_chunk(&mut buf, 100).is_none());
    // The queue works on afterwards, from the start of the next message.
    let (w, _) = ask(&mut c, &mut s, &Request::get("data/2"));
    assert_eq!(w, [vec![0x31, 0x45, 0x01, 0xff, 0, 1]]);
}

#[test]
fn parts_put_together_are_the_whole_messages_and_a_generated_body_is_not_produced() {
    // issue 17: `poll_write_parts` hands out a generated body ungenerated, so a transport that
    // produces it as it sends holds only the frame's head.
    let (whole, mut c2, mut s2) = two_answers();
    let mut got = Vec::new();
    let mut head = Vec::new();
    while let Some((_, tail)) = s2.poll_write_parts(&mut head) {
        let mut message = head.clone();
        if let Some(tail) = tail {
            assert_eq!((head.len(), tail.len()), (8, 200_000));
            let at = message.len();
            message.resize(at + tail.len(), 0);
            // Produced from any offset, in any pieces.
            tail.write(0, &mut message[at..at + 1000]);
            tail.write(1000, &mut message[at + 1000..]);
        }
        got.push(message);
    }
    assert_eq!(got, whole);
    assert_eq!((s2.queued_bytes(), s2.pending_write_bytes()), (0, 0));
    // The client keeps no bodies, so it holds the 200,008-B frame's front only (its payload
    // is counted as it arrives), never a buffer of the frame's size.
    for piece in got[0].chunks(1000) {
        c2.handle_stream_bytes(t(3), piece);
        assert!(
            c2.inbound.framing.rx.capacity() <= 1000,
            "{}",
            c2.inbound.framing.rx.capacity()
        );
    }
    assert!(c2.inbound.framing.rx.is_empty());
    assert!(events(&mut c2).iter().any(|e| matches!(
        e,
        SessionEvent::RequestCompleted {
            body_len: 200_000,
            ..
        }
    )));
}
