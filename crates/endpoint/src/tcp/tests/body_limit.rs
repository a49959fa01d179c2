//! `SessionConfig::max_body_bytes` on the client side: an endless BERT Block2 and a single
//! response past the limit fail the request (no further block asked for, session kept open),
//! and a frame past our Max-Message-Size aborts with a diagnostic that says so.

use coaplab_wire::frame::FrameBuf;
use coaplab_wire::option::number;
use coaplab_wire::{Block, Code, Token};

use super::{events, t, write_bytes};
use crate::event::RequestId;
use crate::request::Request;
use crate::resource::Router;
use crate::tcp::{Session, SessionConfig, SessionEvent, SessionFailReason};

/// A CSM without options.
const CSM: [u8; 2] = [0x00, 0xe1];

/// A block-wise client accepting 4,096 body bytes and 8-kB frames, its GET written and the
/// server's CSM read.
fn client() -> Session {
    let config = SessionConfig {
        block_wise_transfer: true,
        keep_bodies: true,
        max_message_size: Some(8192),
        max_body_bytes: 4096,
        ..SessionConfig::client()
    };
    let mut c = Session::new(config, Router::new()).unwrap();
    c.request(t(0), &Request::get("big")).unwrap();
    let _ = write_bytes(&mut c);
    c.handle_stream_bytes(t(1), &CSM);
    let _ = events(&mut c);
    c
}

/// A 2.05 response with `payload_len` bytes, Block2 `block` if any.
fn response(block: Option<Block>, payload_len: usize) -> Vec<u8> {
    let mut f = FrameBuf::new(Code::CONTENT, Token::new(&[0]).unwrap());
    if let Some(b) = block {
        f.options.push_block(number::BLOCK2, b);
    }
    f.payload = vec![7; payload_len];
    f.to_bytes().unwrap()
}

fn failed(c: &mut Session) -> Vec<SessionEvent> {
    events(c)
        .into_iter()
        .filter(|e| matches!(e, SessionEvent::RequestFailed { .. }))
        .collect()
}

/// An endless BERT Block2 (RFC 8323 §6: SZX 7, 2,048 B per message, M=1 forever): two
/// messages fill the 4,096 B exactly and are followed; the third fails the request and asks
/// for nothing more.
#[test]
fn an_endless_bert_block2_stops_at_the_limit() {
    let mut c = client();
    let bert = |num| Block {
        num,
        more: true,
        szx: 7,
    };
    c.handle_stream_bytes(t(2), &response(Some(bert(0)), 2048));
    assert_eq!(write_bytes(&mut c).len(), 1);
    c.handle_stream_bytes(t(3), &response(Some(bert(2)), 2048));
    assert_eq!(write_bytes(&mut c).len(), 1);
    let _ = events(&mut c);
    c.handle_stream_bytes(t(4), &response(Some(bert(4)), 2048));
    assert_eq!(write_bytes(&mut c), Vec::<Vec<u8>>::new());
    assert_eq!(
        failed(&mut c),
        [SessionEvent::RequestFailed {
            request: RequestId(0),
            reason: SessionFailReason::BodyTooLarge,
            at: t(4),
        }]
    );
    assert_eq!(c.outstanding(), 0);
    assert!(!c.should_close());
}

/// One response whose payload alone passes the limit (its frame within Max-Message-Size).
#[test]
fn a_single_response_past_the_limit_fails() {
    let mut c = client();
    c.handle_stream_bytes(t(2), &response(None, 4097));
    assert_eq!(
        failed(&mut c),
        [SessionEvent::RequestFailed {
            request: RequestId(0),
            reason: SessionFailReason::BodyTooLarge,
            at: t(2),
        }]
    );
    assert!(!c.should_close());
}

/// Size2 (RFC 7959 §4) announcing more than the limit fails at the first block.
#[test]
fn a_size2_past_the_limit_fails_at_the_first_block() {
    let mut c = client();
    let mut f = FrameBuf::new(Code::CONTENT, Token::new(&[0]).unwrap());
    f.options.push_block(
        number::BLOCK2,
        Block {
            num: 0,
            more: true,
            szx: 6,
        },
    );
    f.options.push_uint(number::SIZE2, 1_000_000);
    f.payload = vec![0; 1024];
    c.handle_stream_bytes(t(2), &f.to_bytes().unwrap());
    assert_eq!(write_bytes(&mut c), Vec::<Vec<u8>>::new());
    assert_eq!(failed(&mut c).len(), 1);
}

/// A frame whose header announces more than our 8,192-B Max-Message-Size is refused before
/// its body is buffered; the Abort's diagnostic names the cause.
#[test]
fn a_frame_past_max_message_size_aborts_with_a_diagnostic() {
    let mut c = client();
    c.handle_stream_bytes(t(2), &response(None, 9000)[..8]);
    assert_eq!(c.buffered_bytes(), 0);
    assert!(c.should_close());
    let aborted: Vec<String> = events(&mut c)
        .into_iter()
        .filter_map(|e| match e {
            SessionEvent::Aborted { diagnostic, .. } => Some(diagnostic),
            _ => None,
        })
        .collect();
    assert_eq!(aborted, ["message larger than our Max-Message-Size"]);
}

/// A response with a critical option the client does not know (option 9, critical and
/// unassigned) fails its request (RFC 7252 §5.4.1) instead of completing it.
#[test]
fn a_response_with_an_unknown_critical_option_fails() {
    let mut c = client();
    let mut f = FrameBuf::new(Code::CONTENT, Token::new(&[0]).unwrap());
    f.options.push_uint(9, 1);
    f.payload = vec![1; 10];
    c.handle_stream_bytes(t(2), &f.to_bytes().unwrap());
    assert_eq!(
        failed(&mut c),
        [SessionEvent::RequestFailed {
            request: RequestId(0),
            reason: SessionFailReason::UnknownCriticalOption { number: 9 },
            at: t(2),
        }]
    );
    assert_eq!(c.outstanding(), 0);
    assert!(!c.should_close());
}
