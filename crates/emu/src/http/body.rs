//! The response body of `/data/N`: the CoAP server's pattern (byte i = i mod 256, written by
//! `coaplab_endpoint::resource::write_pattern`), produced one chunk at a time as hyper asks
//! for it, so a large N never sits whole in memory (as the CoAP TCP server's
//! `WRITE_CHUNK_BYTES`).

use std::convert::Infallible;
use std::pin::Pin;
use std::task::{Context, Poll};

use bytes::Bytes;
use hyper::body::{Frame, SizeHint};

/// Bytes produced per body frame: the CoAP TCP server's write chunk. Bodies up to this size go
/// out as one frame, as they did when the whole body was built at once.
pub const BODY_CHUNK_BYTES: usize = crate::tcp::WRITE_CHUNK_BYTES;

/// `len_bytes` bytes of the `/data/N` pattern; the exact size is known, so hyper sends
/// `content-length`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PatternBody {
    /// Bytes already produced.
    sent_bytes: usize,
    /// Body length.
    len_bytes: usize,
}

impl PatternBody {
    /// The first `len_bytes` bytes of the pattern.
    pub fn new(len_bytes: usize) -> Self {
        PatternBody {
            sent_bytes: 0,
            len_bytes,
        }
    }

    /// An empty body (the error answers).
    pub fn empty() -> Self {
        PatternBody::new(0)
    }

    /// The next chunk, if any remains.
    fn next_chunk(&mut self) -> Option<Bytes> {
        let n = BODY_CHUNK_BYTES.min(self.len_bytes - self.sent_bytes);
        if n == 0 {
            return None;
        }
        let mut chunk = vec![0u8; n];
        coaplab_endpoint::resource::write_pattern(self.sent_bytes, &mut chunk);
        self.sent_bytes += n;
        Some(Bytes::from(chunk))
    }
}

impl hyper::body::Body for PatternBody {
    type Data = Bytes;
    type Error = Infallible;

    fn poll_frame(
        self: Pin<&mut Self>,
        _cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Infallible>>> {
        Poll::Ready(self.get_mut().next_chunk().map(|b| Ok(Frame::data(b))))
    }

    fn is_end_stream(&self) -> bool {
        self.sent_bytes == self.len_bytes
    }

    fn size_hint(&self) -> SizeHint {
        SizeHint::with_exact((self.len_bytes - self.sent_bytes) as u64)
    }
}

/// The whole body at once (tests, and the comparison with the CoAP server's bytes).
pub fn collect(mut body: PatternBody) -> Vec<u8> {
    let mut out = Vec::with_capacity(body.len_bytes);
    while let Some(chunk) = body.next_chunk() {
        out.extend_from_slice(&chunk);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use hyper::body::Body;

    #[test]
    fn chunks_continue_the_pattern() {
        let n = 2 * BODY_CHUNK_BYTES + 3;
        let body = PatternBody::new(n);
        assert_eq!(body.size_hint().exact(), Some(n as u64));
        let all = collect(body);
        assert_eq!(all.len(), n);
        assert!(all.iter().enumerate().all(|(i, b)| *b == (i & 0xff) as u8));
        assert!(PatternBody::empty().is_end_stream());
        assert_eq!(PatternBody::empty().size_hint().exact(), Some(0));
    }
}
