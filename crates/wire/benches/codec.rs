//! Encode + decode cost of the two messages the experiments send most:
//! the 60-byte CON POST of the short-lived workloads (docs/experiments.md §4.2) and the
//! 267-byte Block2 response of the long-lived transfer (docs/experiments.md §4.1; 295 bytes on IP).
//!
//! Run: `cargo bench -p coaplab-wire --bench codec`

// criterion_main! generates an undocumented `main`.
#![allow(missing_docs)]

use std::hint::black_box;

use coaplab_wire::frame::{Decoded, Frame, FrameWriter};
use coaplab_wire::option::number;
use coaplab_wire::{
    Block, Code, Message, MessageBuf, MessageType, MessageWriter, ReadOptions, Token,
};
use criterion::{criterion_group, criterion_main, Criterion, Throughput};

fn token() -> Token {
    Token::new(&[0x4a, 0x1f]).unwrap()
}

fn encode_request(buf: &mut [u8], payload: &[u8]) -> usize {
    let mut w = MessageWriter::new(buf, MessageType::Con, Code::POST, 0x1234, token()).unwrap();
    w.option(number::URI_PATH, b"f").unwrap();
    w.payload(payload).unwrap()
}

fn encode_block_response(buf: &mut [u8], payload: &[u8]) -> usize {
    let mut w = MessageWriter::new(buf, MessageType::Ack, Code::CONTENT, 0x1234, token()).unwrap();
    w.option_uint(
        number::BLOCK2,
        Block::with_size(200, true, 256).unwrap().to_uint(),
    )
    .unwrap();
    w.payload(payload).unwrap()
}

fn udp(c: &mut Criterion) {
    let mut g = c.benchmark_group("udp");
    g.throughput(Throughput::Elements(1));
    let mut buf = [0u8; 1500];
    let req_payload = [0x61u8; 51];
    let blk_payload = [0x62u8; 256];

    g.bench_function("request_60B_encode+decode", |b| {
        b.iter(|| {
            let n = encode_request(&mut buf, black_box(&req_payload));
            let m = Message::decode(black_box(&buf[..n])).unwrap();
            black_box((m.first(number::URI_PATH).map(|v| v.len()), m.payload.len()))
        })
    });
    g.bench_function("block_response_267B_encode+decode", |b| {
        b.iter(|| {
            let n = encode_block_response(&mut buf, black_box(&blk_payload));
            let m = Message::decode(black_box(&buf[..n])).unwrap();
            black_box((m.block2().unwrap(), m.payload.len()))
        })
    });
    let n = encode_request(&mut buf, &req_payload);
    let req = buf[..n].to_vec();
    g.bench_function("request_60B_decode", |b| {
        b.iter(|| {
            let m = Message::decode(black_box(&req)).unwrap();
            black_box((m.first(number::URI_PATH).map(|v| v.len()), m.payload.len()))
        })
    });
    g.bench_function("request_60B_owned_roundtrip(MessageBuf)", |b| {
        b.iter(|| {
            let m = MessageBuf::from(Message::decode(black_box(&req)).unwrap());
            black_box(m.to_bytes().unwrap())
        })
    });
    // The same request through coap-lite 0.13, for docs/wire-codec.md's build-or-reuse call.
    g.bench_function("request_60B_decode+encode(coap-lite 0.13)", |b| {
        b.iter(|| {
            let p = coap_lite::Packet::from_bytes(black_box(&req)).unwrap();
            black_box(p.to_bytes().unwrap())
        })
    });
    let n = encode_block_response(&mut buf, &blk_payload);
    let blk = buf[..n].to_vec();
    g.bench_function("block_response_267B_decode+encode(coap-lite 0.13)", |b| {
        b.iter(|| {
            let p = coap_lite::Packet::from_bytes(black_box(&blk)).unwrap();
            black_box(p.to_bytes().unwrap())
        })
    });
    g.bench_function("block_response_267B_owned_roundtrip(MessageBuf)", |b| {
        b.iter(|| {
            let m = MessageBuf::from(Message::decode(black_box(&blk)).unwrap());
            black_box(m.to_bytes().unwrap())
        })
    });
    g.finish();
}

fn tcp(c: &mut Criterion) {
    let mut g = c.benchmark_group("tcp");
    g.throughput(Throughput::Elements(1));
    let mut buf = [0u8; 1500];
    let payload = [0x63u8; 256];
    g.bench_function("frame_265B_encode+decode_stream", |b| {
        b.iter(|| {
            let mut w = FrameWriter::new(&mut buf, Code::CONTENT, token()).unwrap();
            w.option(number::CONTENT_FORMAT, &[]).unwrap();
            let n = w.payload(black_box(&payload)).unwrap();
            match Frame::decode_stream(black_box(&buf[..n]), 1 << 20).unwrap() {
                Decoded::Frame { frame, consumed } => black_box((frame.payload.len(), consumed)),
                Decoded::NeedMore(_) => unreachable!(),
            }
        })
    });
    g.finish();
}

criterion_group!(benches, udp, tcp);
criterion_main!(benches);
