//! Any byte stream, split at a fuzzer-chosen point: the incremental decoder must not panic,
//! must give the same frames whether the bytes arrive whole or in two parts, and every frame
//! must re-encode to the bytes it was decoded from.
#![no_main]

use coaplab_wire::frame::{Decoded, Frame, FrameBuf};
use coaplab_wire::signal::SignalMessage;
use libfuzzer_sys::fuzz_target;

const MAX_FRAME: usize = 1 << 16;

fn frames(stream: &[u8]) -> (Vec<Vec<u8>>, bool) {
    let mut out = Vec::new();
    let mut at = 0;
    loop {
        match Frame::decode_stream(&stream[at..], MAX_FRAME) {
            Ok(Decoded::Frame { frame, consumed }) => {
                if frame.code.is_signal() {
                    let _ = SignalMessage::from_frame(&frame);
                }
                let re = FrameBuf::from(frame).to_bytes().expect("a decoded frame encodes");
                assert_eq!(re, &stream[at..at + consumed]);
                out.push(re);
                at += consumed;
            }
            Ok(Decoded::NeedMore(n)) => {
                assert!(n >= 1);
                return (out, false);
            }
            Err(_) => return (out, true),
        }
    }
}

fuzz_target!(|data: &[u8]| {
    if data.is_empty() {
        return;
    }
    let split = data[0] as usize % data.len();
    let stream = &data[1..];
    let (whole, _) = frames(stream);
    // The same bytes delivered in two reads: the frames of the first read are a prefix.
    let (first, _) = frames(&stream[..split.min(stream.len())]);
    assert!(first.len() <= whole.len());
    assert_eq!(first[..], whole[..first.len()]);
});
