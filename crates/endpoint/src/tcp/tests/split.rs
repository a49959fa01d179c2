//! The stream fed at random split points gives the same events as whole writes.

use proptest::prelude::*;

use super::{client, events, server, t, writes};
use crate::request::Request;
use crate::resource::Router;
use crate::tcp::{Session, SessionConfig, SessionEvent};

/// Feeds `stream` to `s` cut at `cuts` (sorted, deduplicated, inside the stream).
fn feed_split(s: &mut Session, stream: &[u8], cuts: &[usize]) -> Vec<SessionEvent> {
    let mut start = 0;
    for &c in cuts.iter().chain(std::iter::once(&stream.len())) {
        s.handle_stream_bytes(t(1), &stream[start..c]);
        start = c;
    }
    events(s)
}

/// The client's bytes (CSM 6 + GET 5 + GET 12 + POST 30 + Ping 3) and the server's answer
/// (CSM 2 + 102,408 + 306 + 25 + Pong 3).
fn transcript() -> (Vec<u8>, Vec<u8>) {
    let mut c = client();
    c.request(t(0), &Request::get("f")).unwrap();
    c.request(t(0), &Request::get("data/300")).unwrap();
    c.request(t(0), &Request::post("echo", vec![5; 20]))
        .unwrap();
    c.ping(t(0), false).unwrap();
    let up: Vec<u8> = writes(&mut c).into_iter().flat_map(|w| w.bytes).collect();
    let mut s = server();
    s.handle_stream_bytes(t(1), &up);
    let down: Vec<u8> = writes(&mut s).into_iter().flat_map(|w| w.bytes).collect();
    (up, down)
}

/// A client in the state `transcript`'s server answers: the same requests and Ping sent.
fn asking_client(config: SessionConfig) -> Session {
    let mut cl = Session::new(config, Router::new()).unwrap();
    cl.request(t(0), &Request::get("f")).unwrap();
    cl.request(t(0), &Request::get("data/300")).unwrap();
    cl.request(t(0), &Request::post("echo", vec![5; 20]))
        .unwrap();
    cl.ping(t(0), false).unwrap();
    let _ = (events(&mut cl), writes(&mut cl));
    cl
}

/// The server's answer fed in `chunk`-B pieces: the events, and the most bytes the client
/// held in its receive buffer meanwhile (the buffer's size, not just what it holds).
fn feed_chunks(cl: &mut Session, down: &[u8], chunk: usize) -> (Vec<SessionEvent>, usize) {
    let mut most = 0;
    for piece in down.chunks(chunk) {
        cl.handle_stream_bytes(t(1), piece);
        most = most.max(cl.inbound.framing.rx.capacity());
    }
    (events(cl), most)
}

#[test]
fn a_response_payload_not_kept_is_counted_not_buffered() {
    let (_, down) = transcript();
    let whole = feed_split(&mut asking_client(SessionConfig::client()), &down, &[]);
    let completed = |ev: &[SessionEvent]| {
        ev.iter()
            .filter_map(|e| match e {
                SessionEvent::RequestCompleted {
                    body_len,
                    body,
                    bytes,
                    ..
                } => Some((*body_len, body.len(), *bytes)),
                _ => None,
            })
            .collect::<Vec<_>>()
    };
    assert_eq!(
        completed(&whole),
        [(102_400, 0, 102_408), (300, 0, 306), (20, 0, 25)]
    );
    // A TCP segment's worth at a time (and one byte at a time over the small frames): the
    // same events, and only the 102,408-B frame's 8-B front is held while its payload
    // arrives (the CSM's 2 B and the 1,448-B piece's partial frames are the rest).
    for chunk in [1, 7, 1_448, 65_536] {
        let mut cl = asking_client(SessionConfig::client());
        let (ev, most) = feed_chunks(&mut cl, &down, chunk);
        assert_eq!(ev, whole, "chunk {chunk}");
        assert!(most <= 1_448, "chunk {chunk}: {most} B held");
        assert_eq!(cl.buffered_bytes(), 0);
    }
    // A client that keeps bodies holds the frame whole and reports its bytes exactly.
    let keep = || {
        asking_client(SessionConfig {
            keep_bodies: true,
            ..SessionConfig::client()
        })
    };
    let whole_kept = feed_split(&mut keep(), &down, &[]);
    let mut cl = keep();
    let mut room = 0;
    for piece in down.chunks(1_448) {
        cl.handle_stream_bytes(t(1), piece);
        room = room.max(cl.inbound.framing.rx.capacity());
    }
    assert_eq!(events(&mut cl), whole_kept);
    // Held at its exact length, without a doubling vector's slack.
    assert_eq!(room, 102_408);
    let body = whole_kept.iter().find_map(|e| match e {
        SessionEvent::RequestCompleted { body, .. } if body.len() == 102_400 => Some(body),
        _ => None,
    });
    assert!(body.is_some());
}

fn cuts(len: usize) -> impl Strategy<Value = Vec<usize>> {
    proptest::collection::vec(1..len, 0..40).prop_map(|mut v| {
        v.sort_unstable();
        v.dedup();
        v
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn server_sees_the_same_events_at_any_split(c in cuts(56)) {
        let (up, _) = transcript();
        prop_assert_eq!(up.len(), 56);
        let whole = feed_split(&mut server(), &up, &[]);
        let mut s = server();
        prop_assert_eq!(feed_split(&mut s, &up, &c), whole);
        prop_assert_eq!(s.buffered_bytes(), 0);
    }

    #[test]
    fn client_sees_the_same_events_at_any_split(c in cuts(102_744)) {
        let (up, down) = transcript();
        prop_assert_eq!(down.len(), 102_744);
        let run = |cuts: &[usize]| {
            let mut cl = asking_client(SessionConfig::client());
            let _ = &up;
            let ev = feed_split(&mut cl, &down, cuts);
            (ev, cl.outstanding(), cl.buffered_bytes())
        };
        let whole = run(&[]);
        prop_assert_eq!(whole.0.len(), 5);
        prop_assert_eq!(run(&c), whole);
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    /// Any bytes after a valid CSM: no panic, the same events at any split, at most one
    /// partial frame buffered, and nothing read after the session ends.
    #[test]
    fn arbitrary_bytes_never_panic(
        bytes in proptest::collection::vec(any::<u8>(), 0..300),
        c in cuts(300),
    ) {
        let run = |cuts: &[usize]| {
            let mut s = server();
            s.handle_stream_bytes(t(0), &[0x00, 0xe1]);
            let cuts: Vec<usize> = cuts.iter().copied().filter(|&x| x < bytes.len()).collect();
            let ev = feed_split(&mut s, &bytes, &cuts);
            prop_assert!(s.buffered_bytes() <= s.config().receive_limit());
            let w: Vec<_> = writes(&mut s);
            Ok((ev, w, s.should_close(), s.buffered_bytes()))
        };
        let whole = run(&[])?;
        prop_assert_eq!(run(&c)?, whole);
    }
}
