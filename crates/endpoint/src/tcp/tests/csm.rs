//! RFC 8323 §5.3: CSM ordering, a missing CSM, a bad CSM.

use coaplab_wire::frame::FrameBuf;
use coaplab_wire::{Code, DecodeError, Token};

use super::{client, events, pump, server, t, write_bytes, writes};
use crate::event::RequestId;
use crate::request::Request;
use crate::tcp::{SessionEvent, SessionFailReason, Side, WriteKind};

/// The client's CSM: Max-Message-Size (option 2) = 131,072 in 3 bytes.
const CLIENT_CSM: [u8; 6] = [0x40, 0xe1, 0x23, 0x02, 0x00, 0x00];
/// GET /f with the 1-B token 0x00.
const GET_F: [u8; 5] = [0x21, 0x01, 0x00, 0xb1, b'f'];

#[test]
fn client_csm_then_get_are_two_writes() {
    let mut c = client();
    assert_eq!(c.request(t(0), &Request::get("f")), Ok(RequestId(0)));
    let w = writes(&mut c);
    assert_eq!(w.len(), 2);
    assert_eq!(
        (w[0].bytes.as_slice(), w[0].kind),
        (&CLIENT_CSM[..], WriteKind::Signal(Code::CSM))
    );
    assert_eq!(
        (w[1].bytes.as_slice(), w[1].kind),
        (&GET_F[..], WriteKind::Request(RequestId(0)))
    );
    assert_eq!(
        events(&mut c),
        [SessionEvent::RequestSent {
            request: RequestId(0),
            token: Token::new(&[0]).unwrap(),
            bytes: 5,
            at: t(0),
        }]
    );
}

#[test]
fn server_sends_its_csm_on_accept_before_reading() {
    let mut s = server();
    assert_eq!(write_bytes(&mut s), [vec![0x00, 0xe1]]);
    assert!(events(&mut s).is_empty());
    // The client's CSM then sets the limit for what the server sends.
    let mut c = client();
    pump(&mut c, &mut s, t(7));
    assert_eq!(
        events(&mut s),
        [SessionEvent::CsmReceived {
            max_message_size: 131_072,
            block_wise_transfer: false,
            at: t(7),
        }]
    );
    assert_eq!(s.peer_max_message_size(), 131_072);
    assert!(write_bytes(&mut s).is_empty());
}

#[test]
fn a_request_before_the_csm_aborts() {
    let mut s = server();
    let _ = writes(&mut s);
    s.handle_stream_bytes(t(3), &GET_F);
    let mut abort = vec![0xd0, 32 - 13, 0xe5, 0xff];
    abort.extend_from_slice(b"the first message must be a CSM");
    assert_eq!(write_bytes(&mut s), [abort]);
    assert_eq!(
        events(&mut s),
        [SessionEvent::Aborted {
            by: Side::Local,
            bad_csm_option: None,
            diagnostic: "the first message must be a CSM".into(),
            at: t(3),
        }]
    );
    assert!(s.should_close());
    // Nothing more is read or written.
    s.handle_stream_bytes(t(4), &CLIENT_CSM);
    assert!(write_bytes(&mut s).is_empty() && events(&mut s).is_empty());
}

#[test]
fn an_unknown_critical_csm_option_aborts_naming_it() {
    let mut c = client();
    c.request(t(0), &Request::get("f")).unwrap();
    let _ = (writes(&mut c), events(&mut c));
    // CSM with option 3 (odd: critical), unknown in a CSM.
    c.handle_stream_bytes(t(9), &[0x10, 0xe1, 0x30]);
    let mut abort = vec![0xd0, 30 - 13, 0xe5, 0x21, 0x03, 0xff];
    abort.extend_from_slice(b"unknown critical CSM option");
    assert_eq!(write_bytes(&mut c), [abort]);
    assert_eq!(
        events(&mut c),
        [
            SessionEvent::RequestFailed {
                request: RequestId(0),
                reason: SessionFailReason::Aborted(Side::Local),
                at: t(9),
            },
            SessionEvent::Aborted {
                by: Side::Local,
                bad_csm_option: Some(3),
                diagnostic: "unknown critical CSM option".into(),
                at: t(9),
            },
        ]
    );
    assert_eq!(
        c.request(t(10), &Request::get("f")),
        Err(crate::tcp::RequestError::NotOpen)
    );
}

#[test]
fn a_bad_max_message_size_value_aborts_with_option_2() {
    let mut s = server();
    let _ = writes(&mut s);
    // Max-Message-Size of 5 bytes (RFC 8323 §5.3.1: uint 0-4).
    s.handle_stream_bytes(t(1), &[0x60, 0xe1, 0x25, 1, 2, 3, 4, 5]);
    let mut abort = vec![0xd0, 23 - 13, 0xe5, 0x21, 0x02, 0xff];
    abort.extend_from_slice(b"bad CSM option value");
    assert_eq!(write_bytes(&mut s), [abort]);
    assert!(matches!(
        events(&mut s)[..],
        [SessionEvent::Aborted {
            by: Side::Local,
            bad_csm_option: Some(2),
            ..
        }]
    ));
}

#[test]
fn an_unknown_elective_csm_option_is_ignored() {
    let mut s = server();
    let _ = writes(&mut s);
    let mut csm = FrameBuf::new(Code::CSM, Token::EMPTY);
    csm.options.push(6, [1]);
    s.handle_stream_bytes(t(1), &csm.to_bytes().unwrap());
    assert_eq!(
        events(&mut s),
        [SessionEvent::CsmReceived {
            max_message_size: 1152,
            block_wise_transfer: false,
            at: t(1),
        }]
    );
    assert!(!s.should_close());
}

#[test]
fn the_peers_abort_fails_outstanding_requests() {
    let (mut c, mut s) = (client(), server());
    c.request(t(0), &Request::get("f")).unwrap();
    let _ = events(&mut c);
    pump(&mut s, &mut c, t(1));
    let _ = events(&mut c);
    // Abort with Bad-CSM-Option 4 and diagnostic "x".
    c.handle_stream_bytes(t(2), &[0x40, 0xe5, 0x21, 0x04, 0xff, b'x']);
    assert_eq!(
        events(&mut c),
        [
            SessionEvent::RequestFailed {
                request: RequestId(0),
                reason: SessionFailReason::Aborted(Side::Peer),
                at: t(2),
            },
            SessionEvent::Aborted {
                by: Side::Peer,
                bad_csm_option: Some(4),
                diagnostic: "x".into(),
                at: t(2),
            },
        ]
    );
    assert!(c.should_close());
    assert_eq!(write_bytes(&mut c), [CLIENT_CSM.to_vec(), GET_F.to_vec()]);
}

#[test]
fn malformed_and_oversized_frames_abort() {
    let mut s = server();
    pump(&mut client(), &mut s, t(0));
    let _ = (writes(&mut s), events(&mut s));
    // TKL 9 is not a frame.
    s.handle_stream_bytes(t(1), &[0x09]);
    let ev = events(&mut s);
    assert_eq!(
        ev[0],
        SessionEvent::Malformed {
            error: DecodeError::InvalidTokenLength { tkl: 9 },
            at: t(1),
        }
    );
    assert!(s.should_close());

    // A header announcing more than the server's 1,152-B limit is refused at once.
    let mut s = server();
    pump(&mut client(), &mut s, t(0));
    let _ = (writes(&mut s), events(&mut s));
    s.handle_stream_bytes(t(1), &[0xe0, 0x07, 0x00]);
    assert_eq!(
        events(&mut s)[0],
        SessionEvent::Malformed {
            error: DecodeError::FrameTooLarge {
                len: 2_065,
                max: 1_152
            },
            at: t(1),
        }
    );
}
