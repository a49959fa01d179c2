//! Block-wise transfers over a session: Block1 uploads reassembled by the server (BERT
//! included, RFC 8323 §6), Block2 responses followed by a client with `block_wise_transfer`.

use coaplab_wire::frame::{Frame, FrameBuf};
use coaplab_wire::option::{number, OptionList};
use coaplab_wire::{Block, Code, Token};

use super::{events, t, write_bytes};
use crate::event::RequestId;
use crate::request::Request;
use crate::resource::Router;
use crate::tcp::{Session, SessionConfig, SessionEvent};

/// A CSM without options.
const CSM: [u8; 2] = [0x00, 0xe1];

/// A server session (accepting 8-kB frames) that has read a client's CSM.
fn ready_server() -> Session {
    let config = SessionConfig {
        max_message_size: Some(8192),
        ..SessionConfig::server()
    };
    let mut s = Session::new(config, Router::new()).unwrap();
    // The experiments' client CSM: Max-Message-Size 131,072, so the echo fits.
    s.handle_stream_bytes(t(0), &[0x40, 0xe1, 0x23, 0x02, 0x00, 0x00]);
    let _ = write_bytes(&mut s);
    let _ = events(&mut s);
    s
}

/// A PUT /echo carrying Block1 `block` and `payload`, token 0x07.
fn put_block(block: Block, payload: &[u8]) -> Vec<u8> {
    let mut f = FrameBuf::new(Code::PUT, Token::new(&[7]).unwrap());
    f.options.push(number::URI_PATH, &b"echo"[..]);
    f.options.push_block(number::BLOCK1, block);
    f.payload = payload.to_vec();
    f.to_bytes().unwrap()
}

/// Code, Block1 option and payload of a response frame.
fn answer(bytes: &[u8]) -> (Code, Option<Block>, Vec<u8>) {
    let f = Frame::decode(bytes).unwrap();
    let b1 = f
        .options
        .iter()
        .find(|(n, _)| *n == number::BLOCK1)
        .map(|(_, v)| Block::decode(v).unwrap());
    (f.code, b1, f.payload.to_vec())
}

fn bert(num: u32, more: bool) -> Block {
    Block { num, more, szx: 7 }
}

#[test]
fn a_bert_block1_upload_is_reassembled_then_echoed_with_the_last_block1() {
    let mut s = ready_server();
    let body: Vec<u8> = (0..3572).map(|i| (i * 7 % 251) as u8).collect();
    // BERT: 2,048 B (blocks 0-1), 1,024 B (block 2), then the last 500 B (block 3).
    s.handle_stream_bytes(t(1), &put_block(bert(0, true), &body[..2048]));
    s.handle_stream_bytes(t(2), &put_block(bert(2, true), &body[2048..3072]));
    s.handle_stream_bytes(t(3), &put_block(bert(3, false), &body[3072..]));
    let w = write_bytes(&mut s);
    assert_eq!(w.len(), 3);
    // 2.31 Continue echoing Block1 0/1/BERT: Len 3 (option 0xd1 0x0e 0x0f), 1-B token 7.
    assert_eq!(w[0], [0x31, 0x5f, 0x07, 0xd1, 0x0e, 0x0f]);
    assert_eq!(
        answer(&w[1]),
        (Code::CONTINUE, Some(bert(2, true)), Vec::new())
    );
    assert_eq!(answer(&w[2]), (Code::CHANGED, Some(bert(3, false)), body));
    assert!(s.server.no_uploads());
}

#[test]
fn a_block1_out_of_sequence_is_4_08_and_a_fresh_block_0_restarts() {
    let mut s = ready_server();
    let b = |num, more| Block { num, more, szx: 6 };
    s.handle_stream_bytes(t(1), &put_block(b(0, true), &[1; 1024]));
    s.handle_stream_bytes(t(2), &put_block(b(2, false), &[2; 10]));
    s.handle_stream_bytes(t(3), &put_block(b(0, true), &[3; 1024]));
    s.handle_stream_bytes(t(4), &put_block(b(1, false), &[4; 10]));
    let w = write_bytes(&mut s);
    assert_eq!(
        answer(&w[1]),
        (Code::REQUEST_ENTITY_INCOMPLETE, None, Vec::new())
    );
    let mut expected = vec![3; 1024];
    expected.extend_from_slice(&[4; 10]);
    assert_eq!(answer(&w[3]), (Code::CHANGED, Some(b(1, false)), expected));
}

#[test]
fn a_client_follows_block2_to_the_whole_body_with_the_same_token_and_options() {
    let config = SessionConfig {
        block_wise_transfer: true,
        keep_bodies: true,
        ..SessionConfig::client()
    };
    let mut c = Session::new(config, Router::new()).unwrap();
    let mut req = Request::get("big");
    req.query = vec!["q".to_owned()];
    c.request(t(0), &req).unwrap();
    let _ = write_bytes(&mut c);
    let _ = events(&mut c);
    c.handle_stream_bytes(t(1), &CSM);
    let block = |num, more, len: usize| {
        let mut f = FrameBuf::new(Code::CONTENT, Token::new(&[0]).unwrap());
        f.options
            .push_block(number::BLOCK2, Block { num, more, szx: 6 });
        f.payload = vec![num as u8; len];
        f.to_bytes().unwrap()
    };
    let first = block(0, true, 1024);
    c.handle_stream_bytes(t(2), &first);
    // The follow-up: GET, token 0, Uri-Path "big", Uri-Query "q", Block2 1/0/1024 (0x16).
    let mut follow = vec![0x81, 0x01, 0x00, 0xb3];
    follow.extend_from_slice(b"big");
    follow.extend_from_slice(&[0x41, b'q', 0x81, 0x16]);
    assert_eq!(write_bytes(&mut c), [follow.clone()]);
    let last = block(1, false, 100);
    c.handle_stream_bytes(t(3), &last);
    let mut body = vec![0; 1024];
    body.extend_from_slice(&[1; 100]);
    let ev = events(&mut c);
    assert_eq!(
        ev[2],
        SessionEvent::RequestCompleted {
            request: RequestId(0),
            code: Code::CONTENT,
            body_len: 1124,
            body,
            // The last block's options.
            options: {
                let mut o = OptionList::new();
                o.push_block(
                    number::BLOCK2,
                    Block {
                        num: 1,
                        more: false,
                        szx: 6,
                    },
                );
                o
            },
            bytes: first.len() + last.len(),
            started: t(0),
            at: t(3),
        }
    );
    assert_eq!(
        ev[1],
        SessionEvent::RequestSent {
            request: RequestId(0),
            token: Token::new(&[0]).unwrap(),
            bytes: follow.len(),
            at: t(2),
        }
    );
    assert_eq!(c.outstanding(), 0);
}

#[test]
fn a_block2_out_of_sequence_aborts() {
    let config = SessionConfig {
        block_wise_transfer: true,
        ..SessionConfig::client()
    };
    let mut c = Session::new(config, Router::new()).unwrap();
    c.request(t(0), &Request::get("big")).unwrap();
    let _ = write_bytes(&mut c);
    c.handle_stream_bytes(t(1), &CSM);
    let mut f = FrameBuf::new(Code::CONTENT, Token::new(&[0]).unwrap());
    f.options.push_block(
        number::BLOCK2,
        Block {
            num: 3,
            more: true,
            szx: 6,
        },
    );
    c.handle_stream_bytes(t(2), &f.to_bytes().unwrap());
    assert!(c.should_close());
    assert!(events(&mut c)
        .iter()
        .any(|e| matches!(e, SessionEvent::Aborted { .. })));
}
