//! Property tests: arbitrary valid messages survive encode -> decode unchanged, any bytes that
//! decode re-encode to the same bytes (the encoding is canonical), and no input panics.

use coaplab_wire::frame::{Decoded, Frame, FrameBuf};
use coaplab_wire::{Code, Message, MessageBuf, MessageType, OptionList, ReadOptions, Token};
use proptest::prelude::*;

fn arb_options() -> impl Strategy<Value = OptionList> {
    // Numbers across all delta forms; values across all length forms.
    let number = prop_oneof![0u16..40, 0u16..300, 0u16..=u16::MAX];
    let value = prop_oneof![
        prop::collection::vec(any::<u8>(), 0..14),
        prop::collection::vec(any::<u8>(), 0..300),
    ];
    prop::collection::vec((number, value), 0..8).prop_map(|opts| {
        let mut l = OptionList::new();
        for (n, v) in opts {
            l.push(n, v);
        }
        l
    })
}

fn arb_message() -> impl Strategy<Value = MessageBuf> {
    (
        0u8..4,
        any::<u8>(),
        any::<u16>(),
        prop::collection::vec(any::<u8>(), 0..=8),
        arb_options(),
        prop::collection::vec(any::<u8>(), 0..600),
    )
        .prop_map(|(t, code, mid, token, options, payload)| {
            let code = Code(code);
            let mut m = MessageBuf::new(
                MessageType::from_bits(t),
                code,
                mid,
                Token::new(&token).unwrap(),
            );
            if !code.is_empty() {
                m.options = options;
                m.payload = payload;
            } else {
                m.token = Token::EMPTY;
            }
            m
        })
}

fn arb_frame() -> impl Strategy<Value = FrameBuf> {
    (
        any::<u8>(),
        prop::collection::vec(any::<u8>(), 0..=8),
        arb_options(),
        prop_oneof![
            prop::collection::vec(any::<u8>(), 0..300),
            prop::collection::vec(any::<u8>(), 65_000..66_000),
        ],
    )
        .prop_map(|(code, token, options, payload)| FrameBuf {
            code: Code(code),
            token: Token::new(&token).unwrap(),
            options,
            payload,
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn udp_messages_round_trip(m in arb_message()) {
        let bytes = m.to_bytes().unwrap();
        prop_assert_eq!(bytes.len(), m.encoded_len());
        let view = Message::decode(&bytes).unwrap();
        prop_assert_eq!(view.encoded_len(), bytes.len());
        prop_assert_eq!(MessageBuf::from(view), m);
    }

    /// A decoded message answers `first`, `has` and `single` from the numbers its options
    /// hold, skipping the walk for the others; the owned list walks every time. Both must
    /// agree for every number, present or not (deleting a bit from the set fails this).
    #[test]
    fn decoded_lookups_agree_with_the_owned_list(m in arb_message(), extra in 0u16..=u16::MAX) {
        let bytes = m.to_bytes().unwrap();
        let view = Message::decode(&bytes).unwrap();
        let numbers = m.options.iter().map(|(n, _)| n).chain([0, 1, 62, 63, 64, 300, extra]);
        for n in numbers.chain(0..70) {
            prop_assert_eq!(view.first(n), m.options.first(n), "first({})", n);
            prop_assert_eq!(view.has(n), m.options.has(n), "has({})", n);
            prop_assert_eq!(view.single(n), m.options.single(n), "single({})", n);
        }
    }

    #[test]
    fn tcp_frames_round_trip_whole_and_byte_by_chunk(f in arb_frame(), chunk in 1usize..64) {
        let bytes = f.to_bytes().unwrap();
        prop_assert_eq!(bytes.len(), f.encoded_len());
        prop_assert_eq!(FrameBuf::from(Frame::decode(&bytes).unwrap()), f.clone());
        // Feed the stream decoder growing prefixes: it must never claim a frame early and
        // its "need N more" must never overshoot the real remainder.
        let mut have = 0;
        loop {
            match Frame::decode_stream(&bytes[..have], usize::MAX).unwrap() {
                Decoded::NeedMore(n) => {
                    prop_assert!(n >= 1 && have + n <= bytes.len());
                    have = (have + chunk.max(1)).min(bytes.len()).max(have + 1);
                }
                Decoded::Frame { frame, consumed } => {
                    prop_assert_eq!(consumed, bytes.len());
                    // The stream decoder's view answers lookups as the owned list does.
                    for n in f.options.iter().map(|(n, _)| n).chain(0..70) {
                        prop_assert_eq!(frame.first(n), f.options.first(n), "first({})", n);
                        prop_assert_eq!(frame.single(n), f.options.single(n), "single({})", n);
                    }
                    prop_assert_eq!(FrameBuf::from(frame), f.clone());
                    break;
                }
            }
        }
    }

    /// A frame's start (all but its last payload byte, [`Frame::decode_start`]) answers
    /// option lookups as the owned list does: its bit set comes from the prefix scan.
    #[test]
    fn frame_starts_answer_lookups_as_the_owned_list(f in arb_frame()) {
        prop_assume!(!f.payload.is_empty());
        let bytes = f.to_bytes().unwrap();
        let start = Frame::decode_start(&bytes[..bytes.len() - 1], usize::MAX).unwrap();
        for n in f.options.iter().map(|(n, _)| n).chain(0..70) {
            prop_assert_eq!(start.frame.first(n), f.options.first(n), "first({})", n);
            prop_assert_eq!(start.frame.single(n), f.options.single(n), "single({})", n);
        }
    }

    #[test]
    fn any_decodable_datagram_re_encodes_to_the_same_bytes(bytes in prop::collection::vec(any::<u8>(), 0..64)) {
        if let Ok(m) = Message::decode(&bytes) {
            let mut out = vec![0; bytes.len()];
            let n = m.encode(&mut out).unwrap();
            prop_assert_eq!(&out[..n], &bytes[..]);
            prop_assert_eq!(MessageBuf::from(m).to_bytes().unwrap(), bytes);
        }
    }

    #[test]
    fn mutated_messages_decode_canonically_or_fail_cleanly(
        m in arb_message(),
        at in any::<prop::sample::Index>(),
        xor in 1u8..=255,
        cut in any::<prop::sample::Index>(),
    ) {
        let mut bytes = m.to_bytes().unwrap();
        let i = at.index(bytes.len());
        bytes[i] ^= xor;
        bytes.truncate(cut.index(bytes.len() + 1).max(i));
        if let Ok(d) = Message::decode(&bytes) {
            prop_assert_eq!(MessageBuf::from(d).to_bytes().unwrap(), bytes);
        }
    }

    #[test]
    fn any_decodable_frame_re_encodes_to_the_same_bytes(bytes in prop::collection::vec(any::<u8>(), 0..64)) {
        if let Ok(Decoded::Frame { frame, consumed }) = Frame::decode_stream(&bytes, 1 << 20) {
            prop_assert_eq!(FrameBuf::from(frame).to_bytes().unwrap(), &bytes[..consumed]);
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(128))]

    #[test]
    fn a_frames_start_is_its_code_token_and_options_once_they_are_in(f in arb_frame()) {
        // Every prefix: nothing until the payload marker is in, then the whole frame's code,
        // token and options, the payload so far, and the lengths; nothing once it is whole.
        let bytes = f.to_bytes().unwrap();
        let payload_len = f.payload.len();
        let head_len = bytes.len() - payload_len;
        let prefixes = (0..=bytes.len().min(head_len + 64)).chain([bytes.len() - 1, bytes.len()]);
        for have in prefixes {
            let start = Frame::decode_start(&bytes[..have], usize::MAX);
            if payload_len == 0 || have < head_len || have == bytes.len() {
                prop_assert_eq!(start, None);
                continue;
            }
            let start = start.unwrap();
            prop_assert_eq!((start.head_len, start.total), (head_len, bytes.len()));
            prop_assert_eq!(start.payload_len(), payload_len);
            prop_assert_eq!(start.frame.payload, &f.payload[..have - head_len]);
            let options = OptionList::from(start.frame.options);
            prop_assert_eq!((start.frame.code, start.frame.token(), &options), (f.code, f.token, &f.options));
        }
        // Longer than allowed: no start either.
        if payload_len > 0 {
            prop_assert_eq!(Frame::decode_start(&bytes[..head_len], bytes.len() - 1), None);
        }
    }
}
