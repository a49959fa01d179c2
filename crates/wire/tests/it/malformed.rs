//! One test per malformed class: each gives its typed error (and never a panic).

use coaplab_wire::frame::Frame;
use coaplab_wire::{DecodeError, Message};

fn err(bytes: &[u8]) -> DecodeError {
    Message::decode(bytes).expect_err("must be rejected")
}

/// A CON GET header with MID 1 and no token, followed by `rest`.
fn con_get(rest: &[u8]) -> Vec<u8> {
    [&[0x40, 0x01, 0x00, 0x01][..], rest].concat()
}

#[test]
fn truncated_header() {
    for len in 0..4 {
        assert_eq!(
            err(&[0x40, 0x01, 0x00][..len.min(3)]),
            DecodeError::TruncatedHeader { len: len.min(3) }
        );
    }
}

#[test]
fn version_other_than_1() {
    for (byte, version) in [(0x00, 0), (0x80, 2), (0xc0, 3)] {
        assert_eq!(
            err(&[byte, 0x01, 0, 1]),
            DecodeError::UnsupportedVersion { version }
        );
    }
}

#[test]
fn token_length_9_to_15() {
    for tkl in 9..=15u8 {
        let mut m = vec![0x40 | tkl, 0x01, 0, 1];
        m.extend_from_slice(&[0; 15]);
        assert_eq!(err(&m), DecodeError::InvalidTokenLength { tkl });
    }
}

#[test]
fn truncated_token() {
    assert_eq!(
        err(&[0x48, 0x01, 0, 1, 1, 2, 3]),
        DecodeError::TruncatedToken {
            needed: 8,
            available: 3
        }
    );
}

#[test]
fn reserved_nibble_15_in_delta() {
    // 0xf1: delta 15 with length 1 is not the payload marker (RFC 7252 §3.1).
    assert_eq!(
        err(&con_get(&[0xf1, 0x00])),
        DecodeError::ReservedOptionDelta
    );
    assert_eq!(err(&con_get(&[0xf0])), DecodeError::ReservedOptionDelta);
}

#[test]
fn reserved_nibble_15_in_length() {
    assert_eq!(
        err(&con_get(&[0xbf, 0x00])),
        DecodeError::ReservedOptionLength
    );
}

#[test]
fn truncated_options() {
    // Extended delta byte missing.
    assert_eq!(
        err(&con_get(&[0xd0])),
        DecodeError::TruncatedOption { offset: 0 }
    );
    // 16-bit extended delta cut after one byte.
    assert_eq!(
        err(&con_get(&[0xe0, 0x00])),
        DecodeError::TruncatedOption { offset: 0 }
    );
    // Extended length missing after a complete first option.
    assert_eq!(
        err(&con_get(&[0xb0, 0x0d])),
        DecodeError::TruncatedOption { offset: 1 }
    );
    // Value shorter than announced.
    assert_eq!(
        err(&con_get(&[0xb4, b'a', b'b'])),
        DecodeError::TruncatedOption { offset: 0 }
    );
}

#[test]
fn payload_marker_followed_by_nothing() {
    assert_eq!(
        err(&con_get(&[0xff])),
        DecodeError::PayloadMarkerWithoutPayload
    );
    assert_eq!(
        err(&con_get(&[0xb1, b'a', 0xff])),
        DecodeError::PayloadMarkerWithoutPayload
    );
}

#[test]
fn option_number_overflow() {
    // delta 65535 + 269 = 65804 > 65535.
    assert_eq!(
        err(&con_get(&[0xe0, 0xff, 0xff])),
        DecodeError::OptionNumberOverflow { number: 65804 }
    );
    // Two legal deltas whose sum passes 65535: 65000 then 1000.
    let d1 = (65000u16 - 269).to_be_bytes();
    let d2 = (1000u16 - 269).to_be_bytes();
    assert_eq!(
        err(&con_get(&[0xe0, d1[0], d1[1], 0xe0, d2[0], d2[1]])),
        DecodeError::OptionNumberOverflow { number: 66000 }
    );
}

#[test]
fn empty_message_with_token_options_or_payload() {
    // RFC 7252 §4.1: 0.00 with TKL > 0, with an option, with a payload.
    assert_eq!(
        err(&[0x61, 0x00, 0, 1, 0xaa]),
        DecodeError::NonEmptyEmptyMessage
    );
    assert_eq!(
        err(&[0x60, 0x00, 0, 1, 0xb0]),
        DecodeError::NonEmptyEmptyMessage
    );
    assert_eq!(
        err(&[0x60, 0x00, 0, 1, 0xff, 1]),
        DecodeError::NonEmptyEmptyMessage
    );
    assert!(Message::decode(&[0x60, 0x00, 0, 1]).is_ok());
}

#[test]
fn every_error_names_its_rfc_section() {
    let e = err(&con_get(&[0xf1, 0x00]));
    assert_eq!(
        e.to_string(),
        "option delta 15 (RFC 7252 §3.1: option delta 15 is reserved for the payload marker)"
    );
    assert_eq!(e.label(), "reserved-option-delta");
}

#[test]
fn tcp_frames_reject_the_same_classes() {
    // TKL 9 in a frame.
    assert_eq!(
        Frame::decode(&[0x09, 0x01]),
        Err(DecodeError::InvalidTokenLength { tkl: 9 })
    );
    // Reserved delta inside a frame body: Len 2, code, then 0xf1 0x00.
    assert_eq!(
        Frame::decode(&[0x20, 0x01, 0xf1, 0x00]),
        Err(DecodeError::ReservedOptionDelta)
    );
    // Marker with nothing after it: Len 1, code, 0xff.
    assert_eq!(
        Frame::decode(&[0x10, 0x01, 0xff]),
        Err(DecodeError::PayloadMarkerWithoutPayload)
    );
    // Len says 5 bytes follow the code, only 2 do.
    assert_eq!(
        Frame::decode(&[0x50, 0x01, 0xb1, b'a']),
        Err(DecodeError::TruncatedFrame {
            needed: 7,
            available: 4
        })
    );
    // A missing extended length.
    assert_eq!(
        Frame::decode(&[0xe0]),
        Err(DecodeError::TruncatedFrame {
            needed: 4,
            available: 1
        })
    );
    assert_eq!(
        Frame::decode(&[0x00, 0x01, 0x00]),
        Err(DecodeError::TrailingBytes { extra: 1 })
    );
}

#[test]
fn tcp_stream_refuses_oversized_frames_from_the_header_alone() {
    // Len nibble 15 with a 32-bit extension of 0xffffffff: about 4 GiB announced.
    let e = Frame::decode_stream(&[0xf0, 0xff, 0xff, 0xff, 0xff], 1152).unwrap_err();
    assert_eq!(
        e,
        DecodeError::FrameTooLarge {
            len: 0xffff_ffff + 65805 + 6,
            max: 1152
        }
    );
}
