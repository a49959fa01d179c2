//! The built-in `data/N` over UDP: N beyond [`MAX_DATA_BYTES`] (however many digits) is an
//! empty 4.00, N at the limit is served block by block, never materialised (coaplab issue 11,
//! item 1: `/data/18446744073709551615` and friends must neither panic nor allocate N).

use crate::common::{addr, factory, CLIENT};
use coaplab_cc::time::Instant;
use coaplab_endpoint::{Config, Endpoint, Router, MAX_DATA_BYTES};
use coaplab_wire::option::number;
use coaplab_wire::{Block, Code, Message, MessageType, MessageWriter, ReadOptions, Token};

/// A CON GET /data/`n` (MID 0x1234, token 0x07), with Block2 `num` (1,024-B blocks) when given.
fn get(n: &str, block2: Option<u32>) -> Vec<u8> {
    let mut out = vec![0; 64];
    let mut w = MessageWriter::new(
        &mut out,
        MessageType::Con,
        Code::GET,
        0x1234,
        Token::from_u64(7, 1),
    )
    .unwrap();
    w.option(number::URI_PATH, b"data").unwrap();
    w.option(number::URI_PATH, n.as_bytes()).unwrap();
    if let Some(num) = block2 {
        let b = Block {
            num,
            more: false,
            szx: 6,
        };
        w.option_uint(number::BLOCK2, b.to_uint()).unwrap();
    }
    let len = w.finish();
    out.truncate(len);
    out
}

/// The server's reply to one datagram.
fn ask(request: &[u8]) -> Vec<u8> {
    let mut server = Endpoint::new(
        Config::default(),
        factory("default", &[], 0.0),
        Router::new(),
    )
    .unwrap();
    server.handle_datagram(Instant::ZERO, addr(CLIENT), request);
    let t = server.poll_transmit(Instant::ZERO).expect("a reply");
    assert!(server.poll_transmit(Instant::ZERO).is_none());
    t.contents
}

#[test]
fn data_beyond_the_limit_is_an_empty_4_00() {
    for n in [
        "1099511627776",
        "9223372036854775808",
        "18446744073709551615",
        "18446744073709551616",
        "1073741825",
    ] {
        // ACK 4.00, MID and token echoed, nothing else.
        assert_eq!(ask(&get(n, None)), [0x61, 0x80, 0x12, 0x34, 0x07], "{n}");
        // Asking for its first block gets the same code (an empty body has no later block).
        let reply = ask(&get(n, Some(0)));
        assert_eq!(
            Message::decode(&reply).unwrap().code,
            Code::BAD_REQUEST,
            "{n}"
        );
    }
}

#[test]
fn data_at_the_limit_is_served_one_block_at_a_time() {
    let n = MAX_DATA_BYTES.to_string();
    // The last block: num 2^20 - 1 of 1,024 B, byte i = i mod 256.
    let reply = ask(&get(&n, Some((1 << 20) - 1)));
    let msg = Message::decode(&reply).unwrap();
    assert_eq!(msg.code, Code::CONTENT);
    let b2 = msg.block2().unwrap().unwrap();
    assert_eq!((b2.num, b2.more, b2.szx), ((1 << 20) - 1, false, 6));
    assert_eq!(msg.payload, (0..1024).map(|i| i as u8).collect::<Vec<_>>());
    // Without Block2 the first block comes, not the whole body.
    let reply = ask(&get(&n, None));
    let msg = Message::decode(&reply).unwrap();
    assert_eq!(msg.payload.len(), 1024);
    assert!(msg.block2().unwrap().unwrap().more);
}
