//! The send buffer's memory (issue 17): acknowledged data is released while the rest of a
//! large write is in flight, and a generated body is produced segment by segment, never held.

use std::sync::Arc;

use crate::tcp_util::{nbiot, transfer_observed, Pair};
use coaplab_netsim::tcp::send_buffer::CHUNK_BYTES;
use coaplab_netsim::tcp::{Generate, TcpConfig, TcpState};

#[test]
fn acknowledged_bytes_are_released_during_a_large_write() {
    let (up, down) = nbiot();
    let mut p = Pair::new(TcpConfig::default(), up, down);
    let object = 200_000;
    let mut held = Vec::new();
    transfer_observed(&mut p, object, |p| held.push(p.server.send_buffer_bytes()));
    let peak = *held.iter().max().expect("steps");
    assert_eq!(
        peak,
        object + 2,
        "the CSM and the whole write, once written"
    );
    // Never grows again after the write, and half of it is gone well before the end.
    let from = held.iter().position(|&h| h == peak).expect("peak");
    assert!(held[from..].windows(2).all(|w| w[1] <= w[0]));
    let half = held.iter().position(|&h| h < object / 2).expect("released");
    assert!(
        half < held.len() * 3 / 4,
        "released at step {half} of {}",
        held.len()
    );
    assert_eq!(*held.last().expect("steps"), 0);
    assert!(CHUNK_BYTES < object / 4);
}

/// Byte i is `(i * 7) mod 256`.
#[derive(Debug)]
struct Sevens(u64);

impl Generate for Sevens {
    fn len(&self) -> u64 {
        self.0
    }
    fn write(&self, offset: u64, out: &mut [u8]) {
        for (i, b) in out.iter_mut().enumerate() {
            *b = ((offset + i as u64) * 7 % 256) as u8;
        }
    }
}

#[test]
fn a_generated_body_arrives_whole_without_being_held() {
    let (up, down) = nbiot();
    let mut p = Pair::new(TcpConfig::default(), up, down);
    let body = 300_000u64;
    let (mut wrote, mut got, mut max_held) = (false, Vec::new(), 0);
    let mut buf = vec![0u8; 4096];
    p.run(|p| {
        if p.server.state() == TcpState::Established && !wrote {
            wrote = true;
            p.server
                .write_parts(b"head", Some(Arc::new(Sevens(body))))
                .expect("open");
        }
        loop {
            let n = p.client.read(&mut buf);
            if n == 0 {
                break;
            }
            got.extend_from_slice(&buf[..n]);
        }
        max_held = max_held.max(p.server.send_buffer_bytes());
        wrote && p.server.all_acked()
    });
    assert_eq!(max_held, 4, "only the head bytes are ever held");
    assert_eq!(got.len() as u64, 4 + body);
    assert_eq!(&got[..4], b"head");
    assert!(got[4..]
        .iter()
        .enumerate()
        .all(|(i, &b)| b == (i * 7 % 256) as u8));
}
