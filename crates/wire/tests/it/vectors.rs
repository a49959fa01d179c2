//! Known-answer vectors written by hand from the RFC rules; each byte is explained where it
//! is built, with the section that fixes it.

use coaplab_wire::frame::{Decoded, Frame, FrameBuf};
use coaplab_wire::option::number;
use coaplab_wire::signal::{Signal, SignalMessage};
use coaplab_wire::{Block, Code, Message, MessageBuf, MessageType, ReadOptions, Token};

fn token_4a1f() -> Token {
    Token::new(&[0x4a, 0x1f]).unwrap()
}

#[test]
fn con_get_with_two_uri_path_segments_and_a_two_byte_token() {
    let expected: Vec<u8> = [
        &[0x42][..],   // RFC 7252 §3: Ver=1 (01), T=CON (00), TKL=2 (0010)
        &[0x01],       // Code 0.01 GET
        &[0x7d, 0x34], // Message ID 0x7d34, network byte order
        &[0x4a, 0x1f], // Token
        &[0xb7],       // §3.1: delta 11 (Uri-Path), length 7
        b"sensors",
        &[0x04], // delta 0 (Uri-Path again), length 4
        b"temp",
    ]
    .concat();
    let mut m = MessageBuf::new(MessageType::Con, Code::GET, 0x7d34, token_4a1f());
    m.options
        .push(number::URI_PATH, "sensors")
        .push(number::URI_PATH, "temp");
    assert_eq!(m.to_bytes().unwrap(), expected);

    let d = Message::decode(&expected).unwrap();
    assert_eq!(d.mtype, MessageType::Con);
    assert_eq!(d.code, Code::GET);
    assert_eq!(d.message_id, 0x7d34);
    assert_eq!(d.token, [0x4a, 0x1f]);
    assert_eq!(d.uri_path().unwrap(), ["sensors", "temp"]);
    assert!(d.payload.is_empty());
}

#[test]
fn piggybacked_2_05_with_block2_size2_and_payload() {
    let payload = [0xabu8; 256];
    let expected: Vec<u8> = [
        &[0x62][..],               // Ver=1, T=ACK (10), TKL=2
        &[0x45],                   // 2.05 Content = 0b010_00101
        &[0x7d, 0x34],             // the request's Message ID (RFC 7252 §5.2.1 piggybacked)
        &[0x4a, 0x1f],             // the request's token
        &[0xc0],                   // delta 12 Content-Format, length 0 (uint 0 = text/plain)
        &[0xb1, 0x1c], // delta 11 -> 23 Block2, 1 byte: NUM 1, M 1, SZX 4 (RFC 7959 §2.2)
        &[0x53, 0x01, 0x90, 0x00], // delta 5 -> 28 Size2, 3 bytes: 102400 (RFC 7959 §4)
        &[0xff],       // payload marker
        &payload,
    ]
    .concat();
    let mut m = MessageBuf::new(MessageType::Ack, Code::CONTENT, 0x7d34, token_4a1f());
    m.options
        .push_uint(number::CONTENT_FORMAT, 0)
        .push_block(number::BLOCK2, Block::with_size(1, true, 256).unwrap())
        .push_uint(number::SIZE2, 102_400);
    m.payload = payload.to_vec();
    assert_eq!(m.to_bytes().unwrap(), expected);
    assert_eq!(expected.len(), 4 + 2 + 1 + 2 + 4 + 1 + 256);

    let d = Message::decode(&expected).unwrap();
    assert_eq!(d.content_format().unwrap(), Some(0));
    let b = d.block2().unwrap().unwrap();
    assert_eq!(
        (b.num, b.more, b.size_bytes(), b.offset_bytes()),
        (1, true, 256, 256)
    );
    assert_eq!(d.size2().unwrap(), Some(102_400));
    assert_eq!(d.payload, payload);
}

#[test]
fn option_deltas_12_13_268_269_in_one_message() {
    // RFC 7252 §3.1: running numbers 12, 25, 293, 562: deltas 12, 13, 268, 269.
    let expected: Vec<u8> = [
        &[0x50, 0x01, 0x00, 0x07][..], // NON GET, MID 7, no token
        &[0xc0],                       // delta 12: nibble 12
        &[0xd0, 0x00],                 // delta 13: nibble 13, extended byte 13-13 = 0
        &[0xd0, 0xff],                 // delta 268: nibble 13, extended byte 255
        &[0xe0, 0x00, 0x00],           // delta 269: nibble 14, extended 16 bits 0
    ]
    .concat();
    let d = Message::decode(&expected).unwrap();
    let numbers: Vec<u16> = d.options.iter().map(|(n, _)| n).collect();
    assert_eq!(numbers, [12, 25, 293, 562]);
    let mut m = MessageBuf::new(MessageType::Non, Code::GET, 7, Token::EMPTY);
    for n in [12, 25, 293, 562] {
        m.options.push(n, []);
    }
    assert_eq!(m.to_bytes().unwrap(), expected);
}

#[test]
fn empty_ack_and_reset_are_four_bytes() {
    // RFC 7252 §4.1/§4.2: an Empty ACK is the header alone.
    let ack = MessageBuf::new(MessageType::Ack, Code::EMPTY, 0xbeef, Token::EMPTY);
    assert_eq!(ack.to_bytes().unwrap(), [0x60, 0x00, 0xbe, 0xef]);
    let rst = MessageBuf::new(MessageType::Rst, Code::EMPTY, 1, Token::EMPTY);
    assert_eq!(rst.to_bytes().unwrap(), [0x70, 0x00, 0x00, 0x01]);
}

#[test]
fn csm_with_max_message_size_and_block_wise_transfer() {
    let expected = [
        0x40, // RFC 8323 §3.2: Len 4 (options), TKL 0
        0xe1, // 7.01 CSM
        0x22, 0x04, 0x80, // option 2 Max-Message-Size, 2 bytes: 1152 (RFC 8323 §5.3.1)
        0x20, // option 4 Block-Wise-Transfer, empty (RFC 8323 §5.3.2)
    ];
    let csm = SignalMessage::new(Signal::Csm {
        max_message_size: Some(1152),
        block_wise_transfer: true,
    });
    assert_eq!(csm.to_frame().to_bytes().unwrap(), expected);
    let f = Frame::decode(&expected).unwrap();
    assert_eq!(SignalMessage::from_frame(&f).unwrap(), csm);
}

#[test]
fn abort_ping_pong_and_release() {
    let abort = SignalMessage {
        signal: Signal::Abort {
            bad_csm_option: Some(2),
        },
        token: Token::EMPTY,
        diagnostic: b"bad".to_vec(),
        unknown_critical: None,
    };
    // Len 6 = option (0x21 0x02) + marker + "bad"; code 7.05 = 0xe5.
    let bytes = abort.to_frame().to_bytes().unwrap();
    assert_eq!(bytes, [0x60, 0xe5, 0x21, 0x02, 0xff, b'b', b'a', b'd']);
    assert_eq!(
        SignalMessage::from_frame(&Frame::decode(&bytes).unwrap()).unwrap(),
        abort
    );

    let ping = SignalMessage {
        signal: Signal::Ping { custody: true },
        token: Token::new(&[9]).unwrap(),
        diagnostic: vec![],
        unknown_critical: None,
    };
    assert_eq!(
        ping.to_frame().to_bytes().unwrap(),
        [0x11, 0xe2, 0x09, 0x20]
    );

    let release = SignalMessage::new(Signal::Release {
        alternative_addresses: vec!["h:1".into()],
        hold_off_s: Some(30),
    });
    let bytes = release.to_frame().to_bytes().unwrap();
    assert_eq!(bytes, [0x60, 0xe4, 0x23, b'h', b':', b'1', 0x21, 30]);
    assert_eq!(
        SignalMessage::from_frame(&Frame::decode(&bytes).unwrap()).unwrap(),
        release
    );
}

#[test]
fn csm_with_an_unknown_critical_option_is_flagged() {
    // Option 3 is critical and undefined for CSM: RFC 8323 §5.3 requires an Abort.
    let f = Frame::decode(&[0x10, 0xe1, 0x30]).unwrap();
    assert_eq!(
        SignalMessage::from_frame(&f).unwrap().unknown_critical,
        Some(3)
    );
}

/// A GET frame with `payload_len` payload bytes and a 1-byte token.
fn frame_with_payload(payload_len: usize) -> Vec<u8> {
    let mut f = FrameBuf::new(Code::CONTENT, Token::new(&[0x77]).unwrap());
    f.payload = vec![0x5a; payload_len];
    f.to_bytes().unwrap()
}

#[test]
fn tcp_frame_length_forms() {
    // RFC 8323 §3.2: Len counts marker + payload here.
    // Len 12 fits the nibble: 0xc1 = Len 12, TKL 1.
    let b = frame_with_payload(11);
    assert_eq!(&b[..3], [0xc1, 0x45, 0x77]);
    assert_eq!(b.len(), 3 + 12);
    // Len 13: nibble 13, 8-bit extension 0.
    let b = frame_with_payload(12);
    assert_eq!(&b[..4], [0xd1, 0x00, 0x45, 0x77]);
    // Len 268: nibble 13, extension 255.
    let b = frame_with_payload(267);
    assert_eq!(&b[..4], [0xd1, 0xff, 0x45, 0x77]);
    // Len 269: nibble 14, 16-bit extension 0.
    let b = frame_with_payload(268);
    assert_eq!(&b[..5], [0xe1, 0x00, 0x00, 0x45, 0x77]);
    // Len 65804: nibble 14, extension 0xffff.
    let b = frame_with_payload(65803);
    assert_eq!(&b[..5], [0xe1, 0xff, 0xff, 0x45, 0x77]);
    // Len 65805: nibble 15, 32-bit extension 0.
    let b = frame_with_payload(65804);
    assert_eq!(&b[..7], [0xf1, 0x00, 0x00, 0x00, 0x00, 0x45, 0x77]);
    assert_eq!(b.len(), 7 + 65805);
    for len in [0, 11, 12, 267, 268, 65803, 65804, 102_400] {
        let b = frame_with_payload(len);
        let f = Frame::decode(&b).unwrap();
        assert_eq!(f.payload.len(), len);
        assert_eq!(f.token, [0x77]);
    }
}

#[test]
fn stream_decoder_says_how_many_bytes_it_needs() {
    let b = frame_with_payload(300); // Len 301: 0xe1, ext 2 bytes, code, token
    let total = b.len();
    assert_eq!(
        Frame::decode_stream(&[], 1 << 20).unwrap(),
        Decoded::NeedMore(1)
    );
    // After the first byte: the 2 extended-length bytes and the code are still missing.
    assert_eq!(
        Frame::decode_stream(&b[..1], 1 << 20).unwrap(),
        Decoded::NeedMore(3)
    );
    // With the length known, the exact remainder.
    assert_eq!(
        Frame::decode_stream(&b[..3], 1 << 20).unwrap(),
        Decoded::NeedMore(total - 3)
    );
    // Two frames back to back: the first is returned with the bytes it used.
    let mut two = b.clone();
    two.extend_from_slice(&frame_with_payload(0));
    match Frame::decode_stream(&two, 1 << 20).unwrap() {
        Decoded::Frame { frame, consumed } => {
            assert_eq!(consumed, total);
            assert_eq!(frame.payload.len(), 300);
        }
        other => panic!("expected a frame, got {other:?}"),
    }
}

/// docs/experiments.md §4.1–4.2: the sizes every simulated packet is charged for.
#[test]
fn experiment_message_sizes() {
    let tok = token_4a1f();
    let request = |num: Option<u32>| {
        let mut m = MessageBuf::new(MessageType::Con, Code::GET, 1, tok);
        m.options.push(number::URI_PATH, "f");
        if let Some(n) = num {
            m.options
                .push_block(number::BLOCK2, Block::with_size(n, false, 256).unwrap());
        }
        m.encoded_len()
    };
    assert_eq!(request(None), 8);
    assert_eq!(request(Some(1)), 10);
    assert_eq!(request(Some(15)), 10);
    assert_eq!(request(Some(16)), 11);
    assert_eq!(request(Some(399)), 11);
    let response = |num: u32| {
        let mut m = MessageBuf::new(MessageType::Ack, Code::CONTENT, 1, tok);
        m.options.push_block(
            number::BLOCK2,
            Block::with_size(num, num < 399, 256).unwrap(),
        );
        m.payload = vec![0; 256];
        m.encoded_len()
    };
    assert_eq!(response(0), 266);
    assert_eq!(response(15), 266);
    assert_eq!(response(16), 267);
    assert_eq!(response(399), 267);
    // docs/experiments.md §4.2: 60-byte POST and 2.04 response.
    let mut post = MessageBuf::new(MessageType::Con, Code::POST, 1, tok);
    post.options.push(number::URI_PATH, "f");
    post.payload = vec![0; 51];
    assert_eq!(post.to_bytes().unwrap().len(), 60);
    let mut changed = MessageBuf::new(MessageType::Ack, Code::CHANGED, 1, tok);
    changed.payload = vec![0; 53];
    assert_eq!(changed.to_bytes().unwrap().len(), 60);
}
