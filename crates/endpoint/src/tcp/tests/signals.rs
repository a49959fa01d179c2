//! Ping/Pong, Release, close and the peer's FIN.

use coaplab_cc::time::Duration;
use coaplab_wire::{Code, Token};

use super::{client, events, pump, server, t, write_bytes, writes};
use crate::event::RequestId;
use crate::request::Request;
use crate::resource::Router;
use crate::tcp::{
    RequestError, Session, SessionConfig, SessionEvent, SessionFailReason, Side, WriteKind,
};

#[test]
fn ping_is_answered_by_a_pong_echoing_token_and_custody() {
    let config = SessionConfig {
        first_token: 0x2a,
        ..SessionConfig::client()
    };
    let mut c = Session::new(config, Router::new()).unwrap();
    let mut s = server();
    let token = c.ping(t(0), true).unwrap();
    assert_eq!(token, Token::new(&[0x2a]).unwrap());
    let w = writes(&mut c);
    assert_eq!(w[1].bytes, [0x11, 0xe2, 0x2a, 0x20]);
    assert_eq!(w[1].kind, WriteKind::Signal(Code::PING));
    for x in &w {
        s.handle_stream_bytes(t(30), &x.bytes);
    }
    assert_eq!(
        write_bytes(&mut s),
        [vec![0x00, 0xe1], vec![0x11, 0xe3, 0x2a, 0x20]]
    );
    assert_eq!(
        events(&mut s)[1],
        SessionEvent::PingAnswered {
            token,
            custody: true,
            at: t(30),
        }
    );
    // The server's CSM and Pong, then the same Pong again (no Ping waits for it now).
    c.handle_stream_bytes(t(65), &[0x00, 0xe1, 0x11, 0xe3, 0x2a, 0x20]);
    c.handle_stream_bytes(t(65), &[0x11, 0xe3, 0x2a, 0x20]);
    assert_eq!(
        events(&mut c),
        [
            SessionEvent::CsmReceived {
                max_message_size: 1152,
                block_wise_transfer: false,
                at: t(65),
            },
            SessionEvent::PongReceived {
                token,
                custody: true,
                rtt: Duration::from_millis(65),
                at: t(65),
            },
            SessionEvent::Ignored {
                reason: crate::tcp::StreamIgnoreReason::UnmatchedPong,
                at: t(65),
            },
        ]
    );
}

#[test]
fn release_stops_new_requests_but_not_outstanding_responses() {
    let (mut c, mut s) = (client(), server());
    c.request(t(0), &Request::get("data/1")).unwrap();
    pump(&mut c, &mut s, t(1));
    let _ = events(&mut c);
    s.release(t(1), Some(3));
    assert_eq!(
        s.request(t(1), &Request::get("f")),
        Err(RequestError::NotOpen)
    );
    let w = writes(&mut s);
    // CSM, the response, then Release with Hold-Off (option 4) = 3 s.
    assert_eq!(w[2].bytes, [0x20, 0xe4, 0x41, 0x03]);
    for x in &w {
        c.handle_stream_bytes(t(2), &x.bytes);
    }
    let ev = events(&mut c);
    assert!(matches!(
        ev[1],
        SessionEvent::RequestCompleted {
            request: RequestId(0),
            body_len: 1,
            ..
        }
    ));
    assert_eq!(
        ev[2],
        SessionEvent::ReleaseReceived {
            alternative_addresses: Vec::new(),
            hold_off_s: Some(3),
            at: t(2),
        }
    );
    assert_eq!(
        c.request(t(3), &Request::get("f")),
        Err(RequestError::NotOpen)
    );
    assert!(!c.should_close() && c.is_idle());
    c.close(t(4));
    assert_eq!(
        events(&mut c),
        [SessionEvent::Closed {
            by: Side::Local,
            at: t(4),
        }]
    );
    assert!(c.should_close());
}

#[test]
fn close_and_the_peers_fin_fail_outstanding_requests() {
    let mut c = client();
    c.request(t(0), &Request::get("f")).unwrap();
    let _ = events(&mut c);
    c.close(t(5));
    assert_eq!(
        events(&mut c),
        [
            SessionEvent::RequestFailed {
                request: RequestId(0),
                reason: SessionFailReason::Closed(Side::Local),
                at: t(5),
            },
            SessionEvent::Closed {
                by: Side::Local,
                at: t(5),
            },
        ]
    );
    // Plain FIN, no Release (docs/experiments.md §5.1): only the CSM and the GET were queued.
    assert_eq!(writes(&mut c).len(), 2);

    let mut c = client();
    c.request(t(0), &Request::get("f")).unwrap();
    c.handle_stream_bytes(t(1), &[0x00, 0xe1, 0xf1, 0x00]);
    assert_eq!(c.buffered_bytes(), 2);
    let _ = events(&mut c);
    c.handle_stream_end(t(6));
    assert_eq!(
        events(&mut c),
        [
            SessionEvent::RequestFailed {
                request: RequestId(0),
                reason: SessionFailReason::Closed(Side::Peer),
                at: t(6),
            },
            SessionEvent::Closed {
                by: Side::Peer,
                at: t(6),
            },
        ]
    );
    assert_eq!(c.buffered_bytes(), 0);
}

#[test]
fn idle_since_is_the_last_input_and_none_while_a_request_is_in_progress() {
    use coaplab_wire::frame::FrameBuf;
    use coaplab_wire::option::number;
    use coaplab_wire::Block;

    let mut s = server();
    // Our CSM is queued: busy until it is written.
    assert_eq!(s.idle_since(t(5)), None);
    let _ = writes(&mut s);
    // Nothing heard yet: idle since the connection was set up.
    assert_eq!(s.idle_since(t(5)), Some(t(5)));
    // The client's CSM (Max-Message-Size 131,072).
    s.handle_stream_bytes(t(10), &[0x40, 0xe1, 0x23, 0x02, 0x00, 0x00]);
    assert_eq!(s.idle_since(t(5)), Some(t(10)));
    // Half a GET /f: the peer's request is in progress.
    let get = [0x21, 0x01, 0x07, 0xb1, b'f'];
    s.handle_stream_bytes(t(20), &get[..3]);
    assert_eq!(s.idle_since(t(5)), None);
    s.handle_stream_bytes(t(30), &get[3..]);
    // Answered: busy until the response is written.
    assert_eq!(s.idle_since(t(5)), None);
    let _ = writes(&mut s);
    assert_eq!(s.idle_since(t(5)), Some(t(30)));
    // The first block of a Block1 upload: in progress until its last block.
    let mut put = FrameBuf::new(Code::PUT, Token::new(&[8]).unwrap());
    put.options.push(number::URI_PATH, &b"echo"[..]);
    put.options.push_block(
        number::BLOCK1,
        Block {
            num: 0,
            more: true,
            szx: 0,
        },
    );
    put.payload = vec![1; 16];
    s.handle_stream_bytes(t(40), &put.to_bytes().unwrap());
    let _ = writes(&mut s);
    assert_eq!(s.idle_since(t(5)), None);
    // Idle again, then released: no longer idle, it is closing.
    let mut s = server();
    let _ = writes(&mut s);
    s.release(t(50), None);
    let _ = writes(&mut s);
    assert_eq!(s.idle_since(t(5)), None);
    // A client waiting for its response is busy; once answered, idle since the answer.
    let mut c = client();
    let mut s = server();
    c.request(t(0), &Request::get("f")).unwrap();
    pump(&mut c, &mut s, t(1));
    assert_eq!(c.idle_since(t(0)), None);
    pump(&mut s, &mut c, t(2));
    assert_eq!(c.idle_since(t(0)), Some(t(2)));
    c.close(t(3));
    assert_eq!(c.idle_since(t(0)), None);
}
