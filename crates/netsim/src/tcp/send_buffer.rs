//! The send buffer: the written stream from the oldest unacknowledged byte on, held as pieces
//! that are released as soon as they are acknowledged.
//!
//! A write is either bytes, kept in chunks of at most [`CHUNK_BYTES`] so that acknowledged
//! data is freed while the rest of a large write is still in flight, or a generated body
//! ([`Generate`]) that costs nothing until a segment carries it: its bytes are produced when a
//! segment is cut (and again for a retransmission). A 10-MB response with a generated body
//! thus holds no more than the segment being sent, where a buffer of bytes held all of it
//! until the last byte was acknowledged (Linux holds the unacknowledged part; ns-3's
//! `BulkSendApplication` produces the bytes as the socket takes them).

use std::collections::VecDeque;
use std::fmt::Debug;
use std::sync::Arc;

/// Bytes a write produces on demand: the body of a response generated from its offset
/// (a driver adapts its application's generated body to this).
pub trait Generate: Debug + Send + Sync {
    /// Bytes in the body.
    fn len(&self) -> u64;
    /// Whether the body is empty.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// Writes bytes `offset .. offset + out.len()` of the body into `out`.
    fn write(&self, offset: u64, out: &mut [u8]);
}

/// Largest piece of written bytes: acknowledged data is released in steps of at most this.
pub const CHUNK_BYTES: usize = 16 * 1024;

#[derive(Debug, Clone)]
enum Piece {
    Bytes(Vec<u8>),
    Generated(Arc<dyn Generate>),
}

/// The unacknowledged and unsent part of the stream, by absolute sequence number.
#[derive(Debug, Clone)]
pub struct SendBuffer {
    /// Pieces in stream order, each with the sequence numbers of its first byte and one past
    /// its last (kept: a generated piece's length is a dynamic call, and every segment cut
    /// searches the pieces by their ends; ~27 instructions per link packet, tcp-100 star).
    pieces: VecDeque<(u64, u64, Piece)>,
    /// One past the last byte written.
    end: u64,
}

impl SendBuffer {
    /// Empty; the next byte written has sequence number `start`.
    pub fn new(start: u64) -> Self {
        SendBuffer {
            pieces: VecDeque::new(),
            end: start,
        }
    }

    /// One past the last byte written.
    pub fn end(&self) -> u64 {
        self.end
    }

    /// Appends bytes (copied, in chunks of at most [`CHUNK_BYTES`]).
    pub fn push_bytes(&mut self, bytes: &[u8]) {
        for chunk in bytes.chunks(CHUNK_BYTES) {
            let start = self.end;
            self.end += chunk.len() as u64;
            self.pieces
                .push_back((start, self.end, Piece::Bytes(chunk.to_vec())));
        }
    }

    /// Appends a generated body.
    pub fn push_generated(&mut self, body: Arc<dyn Generate>) {
        let len = body.len();
        if len > 0 {
            let start = self.end;
            self.end += len;
            self.pieces
                .push_back((start, self.end, Piece::Generated(body)));
        }
    }

    /// Writes bytes `seq .. seq + out.len()` (written, not released) over `out`. Over, not
    /// after: the caller's buffer needs no zeroing for a generated piece, which a recycled
    /// buffer of the last segment's length then skips (tcp-100 star: ~28 instructions per link
    /// packet, callgrind).
    pub fn copy_into(&self, seq: u64, out: &mut [u8]) {
        let end = seq + out.len() as u64;
        let first = self
            .pieces
            .partition_point(|&(_, piece_end, _)| piece_end <= seq);
        for &(start, piece_end, ref piece) in self.pieces.range(first..) {
            if start >= end {
                break;
            }
            let from = seq.max(start) - start;
            let to = end.min(piece_end) - start;
            let at = (start + from - seq) as usize;
            let dst = &mut out[at..at + (to - from) as usize];
            match piece {
                Piece::Bytes(b) => dst.copy_from_slice(&b[from as usize..to as usize]),
                Piece::Generated(g) => g.write(from, dst),
            }
        }
    }

    /// Releases the pieces wholly before `seq` (acknowledged).
    pub fn release_before(&mut self, seq: u64) {
        while self
            .pieces
            .front()
            .is_some_and(|&(_, piece_end, _)| piece_end <= seq)
        {
            self.pieces.pop_front();
        }
    }

    /// Bytes of written data this buffer holds in memory (generated bodies cost none).
    pub fn held_bytes(&self) -> usize {
        self.pieces
            .iter()
            .map(|(_, _, p)| match p {
                Piece::Bytes(b) => b.len(),
                Piece::Generated(_) => 0,
            })
            .sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Byte i is `i mod 251`.
    #[derive(Debug)]
    struct Pattern(u64);

    impl Generate for Pattern {
        fn len(&self) -> u64 {
            self.0
        }
        fn write(&self, offset: u64, out: &mut [u8]) {
            for (i, b) in out.iter_mut().enumerate() {
                *b = ((offset + i as u64) % 251) as u8;
            }
        }
    }

    #[test]
    fn ranges_cross_pieces_and_acknowledged_pieces_are_released() {
        let mut buf = SendBuffer::new(1);
        buf.push_bytes(&[7; CHUNK_BYTES + 10]);
        buf.push_generated(Arc::new(Pattern(1000)));
        buf.push_bytes(b"xy");
        assert_eq!(buf.end(), 1 + CHUNK_BYTES as u64 + 10 + 1000 + 2);
        assert_eq!(buf.held_bytes(), CHUNK_BYTES + 12);
        // Stale bytes in the buffer are overwritten.
        let mut out = vec![0xee; 1004];
        // The last 3 bytes of the second chunk, 1000 generated, then "x".
        let gen_start = 1 + CHUNK_BYTES as u64 + 10;
        buf.copy_into(gen_start - 3, &mut out);
        let expected: Vec<u8> = [7, 7, 7]
            .into_iter()
            .chain((0..1000).map(|i| (i % 251) as u8))
            .chain(*b"x")
            .collect();
        assert_eq!(out, expected);
        // The first chunk goes once acknowledged; a partly acknowledged piece stays.
        buf.release_before(1 + CHUNK_BYTES as u64 + 5);
        assert_eq!(buf.held_bytes(), 12);
        let mut out = [0; 3];
        buf.copy_into(gen_start + 500, &mut out);
        assert_eq!(
            out,
            [(500 % 251) as u8, (501 % 251) as u8, (502 % 251) as u8]
        );
        buf.release_before(buf.end());
        assert_eq!(buf.held_bytes(), 0);
    }
}
