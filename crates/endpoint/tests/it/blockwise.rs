//! Block-wise transfers (RFC 7959) through the harness: the long-lived GET layout of
//! docs/experiments.md §4.1, a lost block, and a Block1 upload echoed back block-wise.

use crate::common::*;
use coaplab_cc::time::Duration;
use coaplab_endpoint::{Config, Event, Request, Router};
use coaplab_wire::{Block, Code, Message, ReadOptions};

fn pattern(n: usize) -> Vec<u8> {
    (0..n).map(|i| (i & 0xff) as u8).collect()
}

/// A hand-made CON GET data/`len` with Message ID `mid` and `token`, for the server alone.
fn get_data(mid: u16, token: coaplab_wire::Token, len: &str) -> coaplab_wire::MessageBuf {
    let mut m =
        coaplab_wire::MessageBuf::new(coaplab_wire::MessageType::Con, Code::GET, mid, token);
    m.options
        .push(coaplab_wire::option::number::URI_PATH, "data");
    m.options.push(coaplab_wire::option::number::URI_PATH, len);
    m
}

fn completed(pair: &Pair) -> Vec<(Code, usize, Vec<u8>, u32, coaplab_cc::time::Instant)> {
    pair.client(|e| match e {
        Event::RequestCompleted {
            code,
            body_len,
            body,
            exchanges,
            at,
            ..
        } => Some((*code, *body_len, body.clone(), *exchanges, *at)),
        _ => None,
    })
}

/// docs/experiments.md §4.1: 102,400 B in 256-B blocks = 400 stop-and-wait exchanges; the
/// first GET has no Block2; requests are 8, 10 (NUM 1–15) and 11 bytes; responses 266 and 267.
#[test]
fn long_transfer_layout_and_duration() {
    let mut pair = Pair::with(
        Config {
            keep_bodies: false,
            ..block_config(256)
        },
        factory("default", &[], 0.0),
        block_config(256),
        router(),
    );
    pair.client
        .request(pair.now, addr(SERVER), &Request::get("f"));
    pair.drive(10_000);
    let up: Vec<usize> = pair.up_bytes().iter().map(|b| b.len()).collect();
    let down: Vec<usize> = pair.down_bytes().iter().map(|b| b.len()).collect();
    assert_eq!(up.len(), 400);
    assert_eq!(up[0], 8);
    assert!(up[1..16].iter().all(|&n| n == 10));
    assert!(up[16..].iter().all(|&n| n == 11));
    assert!(down[..16].iter().all(|&n| n == 266));
    assert!(down[16..].iter().all(|&n| n == 267));
    let first = Message::decode(&pair.wire[1].bytes).unwrap();
    assert_eq!(first.block2().unwrap(), Block::with_size(0, true, 256));
    let last = Message::decode(&pair.wire.last().unwrap().bytes).unwrap();
    assert_eq!(last.block2().unwrap(), Block::with_size(399, false, 256));
    // 400 round trips of 200 ms.
    let done = completed(&pair);
    assert_eq!(done, [(Code::CONTENT, 102_400, vec![], 400, ms(80_000))]);
}

/// A lost block is retransmitted under the algorithm; the body is assembled exactly once.
#[test]
fn lost_block_is_retransmitted_and_body_is_exact() {
    let mut pair = Pair::blockwise(256);
    // Down packets: block 0, block 1 (lost), block 1 again, blocks 2 and 3.
    pair.drop_down = vec![1];
    pair.client
        .request(pair.now, addr(SERVER), &Request::get("data/1000"));
    pair.drive(1000);
    // Block 1 requested at 0.2, lost answer, retransmitted at 2.2 (T0 = 2 s).
    assert_eq!(pair.up_times(), [0, 200, 2200, 2400, 2600].map(ms));
    assert_eq!(pair.expired_timers(), [Duration::from_secs(2)]);
    let done = completed(&pair);
    assert_eq!(done, [(Code::CONTENT, 1000, pattern(1000), 4, ms(2800))]);
    let dups = pair.server(|e| matches!(e, Event::DuplicateRequest { .. }).then_some(()));
    assert_eq!(dups.len(), 1);
    // One Message ID per block; the retransmission reuses its block's, the piggybacked
    // responses use the requests'.
    assert_eq!(pair.client.message_ids_issued(), 4);
    assert_eq!(pair.server.message_ids_issued(), 0);
}

/// The client accepts a smaller block size than it asked for (RFC 7959 §2.4).
#[test]
fn client_follows_the_servers_block_size() {
    let mut pair = Pair::with(
        Config {
            request_block2_size_bytes: Some(1024),
            ..block_config(1024)
        },
        factory("default", &[], 0.0),
        block_config(64),
        Router::new(),
    );
    pair.client
        .request(pair.now, addr(SERVER), &Request::get("data/200"));
    pair.drive(1000);
    let blocks: Vec<Block> = pair
        .down_bytes()
        .iter()
        .map(|b| Message::decode(b).unwrap().block2().unwrap().unwrap())
        .collect();
    assert_eq!(
        blocks,
        [(0, true), (1, true), (2, true), (3, false)]
            .map(|(n, m)| Block::with_size(n, m, 64).unwrap())
    );
    assert_eq!(completed(&pair)[0].2, pattern(200));
}

/// Block1 upload of 600 B in 256-B blocks (2.31 Continue twice, Size1 on the first), echoed
/// back in Block2 blocks from the stored body.
#[test]
fn block1_upload_echoed_block_wise() {
    let mut pair = Pair::blockwise(256);
    let body: Vec<u8> = (0..600).map(|i| (i * 7 % 251) as u8).collect();
    pair.client
        .request(pair.now, addr(SERVER), &Request::put("echo", body.clone()));
    pair.drive(1000);
    let codes: Vec<Code> = pair
        .down_bytes()
        .iter()
        .map(|b| Message::decode(b).unwrap().code)
        .collect();
    assert_eq!(
        codes,
        [
            Code::CONTINUE,
            Code::CONTINUE,
            Code::CHANGED,
            Code::CHANGED,
            Code::CHANGED
        ]
    );
    let first = Message::decode(&pair.wire[0].bytes).unwrap();
    assert_eq!(first.size1().unwrap(), Some(600));
    let final_block1 = Message::decode(&pair.wire[5].bytes).unwrap();
    assert_eq!(
        final_block1.block1().unwrap(),
        Block::with_size(2, false, 256)
    );
    assert_eq!(
        final_block1.block2().unwrap(),
        Block::with_size(0, true, 256)
    );
    let done = completed(&pair);
    assert_eq!(done, [(Code::CHANGED, 600, body, 5, ms(1000))]);
    let served = pair.server(|e| matches!(e, Event::Served { .. }).then_some(()));
    assert_eq!(served.len(), 5);
}

/// A Block2 request beyond the end of the body gets 4.02 Bad Option.
#[test]
fn block2_beyond_the_end_is_bad_option() {
    let mut pair = Pair::blockwise(256);
    // A hand-made GET data/100 asking for block 5.
    let mut m = get_data(9, coaplab_wire::Token::new(&[1]).unwrap(), "100");
    m.options.push_block(
        coaplab_wire::option::number::BLOCK2,
        Block::with_size(5, false, 256).unwrap(),
    );
    pair.server
        .handle_datagram(ms(0), addr(CLIENT), &m.to_bytes().unwrap());
    let t = pair.server.poll_transmit(ms(0)).unwrap();
    assert_eq!(Message::decode(&t.contents).unwrap().code, Code::BAD_OPTION);
}

/// Size2 comes back only when the request asks for it (RFC 7959 §4), with the whole length.
#[test]
fn size2_is_sent_when_asked() {
    let mut pair = Pair::blockwise(256);
    let mut m = get_data(3, coaplab_wire::Token::EMPTY, "1000");
    m.options.push_uint(coaplab_wire::option::number::SIZE2, 0);
    pair.server
        .handle_datagram(ms(0), addr(CLIENT), &m.to_bytes().unwrap());
    let t = pair.server.poll_transmit(ms(0)).unwrap();
    let r = Message::decode(&t.contents).unwrap();
    assert_eq!(r.size2().unwrap(), Some(1000));
    assert_eq!(r.block2().unwrap(), Block::with_size(0, true, 256));
    assert_eq!(r.payload, &pattern(256)[..]);
}
