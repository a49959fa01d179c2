//! The response body of `/data/N`: the CoAP server's pattern (byte i = i mod 256, written by
//! `coaplab_endpoint::resource::write_pattern`), produced one chunk at a time as hyper asks
//! for it, so a large N never sits whole in memory (as the CoAP TCP server's
//! `WRITE_CHUNK_BYTES`).
//!
//! With a [`BodyBudget`] a chunk is made only when its bytes fit the connection's and the
//! server's budgets, and its bytes count until hyper has written them to the socket (the
//! chunk is dropped): a client that never reads holds at most its connection's budget, and
//! all clients together at most the server's, however many streams they open.

use std::convert::Infallible;
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::task::{Context, Poll};

use bytes::Bytes;
use hyper::body::{Frame, SizeHint};
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

/// Bytes produced per body frame: the CoAP TCP server's write chunk. Bodies up to this size go
/// out as one frame, as they did when the whole body was built at once.
pub const BODY_CHUNK_BYTES: usize = crate::tcp::WRITE_CHUNK_BYTES;

/// Bytes of body chunks made and not yet written, over a whole server: the gauge and its
/// peak (all monotonic but `held`).
#[derive(Debug, Default)]
pub struct BodyGauge {
    /// Bytes held now.
    pub held: AtomicU64,
    /// The most ever held at once.
    pub peak: AtomicU64,
    /// Chunks that had to wait for budget (a connection's or the server's).
    pub waits: AtomicU64,
}

/// The budgets a body's chunks are taken from: its connection's and the server's, in bytes.
#[derive(Debug, Clone)]
pub struct BodyBudget {
    connection: Arc<Semaphore>,
    server: Arc<Semaphore>,
    gauge: Arc<BodyGauge>,
    /// The largest chunk: no more than either budget, so one chunk always fits.
    chunk_bytes: usize,
}

impl BodyBudget {
    /// A connection's budget of `connection_bytes`, within the server's `server` semaphore
    /// (as many permits as bytes), counted in `gauge`.
    pub fn new(
        connection_bytes: usize,
        server: Arc<Semaphore>,
        server_bytes: usize,
        gauge: Arc<BodyGauge>,
    ) -> BodyBudget {
        let connection_bytes = connection_bytes.clamp(1, Semaphore::MAX_PERMITS);
        BodyBudget {
            connection: Arc::new(Semaphore::new(connection_bytes)),
            server,
            gauge,
            chunk_bytes: BODY_CHUNK_BYTES
                .min(connection_bytes)
                .min(server_bytes.max(1))
                .min(u32::MAX as usize),
        }
    }
}

type Permits = Option<(OwnedSemaphorePermit, OwnedSemaphorePermit)>;

/// A chunk's bytes and the budget they hold until hyper drops them.
struct Chunk {
    data: Vec<u8>,
    _permits: Permits,
    gauge: Option<Arc<BodyGauge>>,
}

impl AsRef<[u8]> for Chunk {
    fn as_ref(&self) -> &[u8] {
        &self.data
    }
}

impl Drop for Chunk {
    fn drop(&mut self) {
        if let Some(g) = &self.gauge {
            g.held.fetch_sub(self.data.len() as u64, Ordering::Relaxed);
        }
    }
}

/// Called once when the body is dropped (the response was sent, or the stream ended).
pub type OnDone = Box<dyn FnOnce() + Send>;

/// `len_bytes` bytes of the `/data/N` pattern; the exact size is known, so hyper sends
/// `content-length`.
pub struct PatternBody {
    /// Bytes already produced.
    sent_bytes: usize,
    /// Body length.
    len_bytes: usize,
    budget: Option<BodyBudget>,
    pending: Option<Pin<Box<dyn Future<Output = Permits> + Send>>>,
    on_done: Option<OnDone>,
}

impl std::fmt::Debug for PatternBody {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PatternBody")
            .field("sent_bytes", &self.sent_bytes)
            .field("len_bytes", &self.len_bytes)
            .field("budget", &self.budget.is_some())
            .finish()
    }
}

impl Drop for PatternBody {
    fn drop(&mut self) {
        if let Some(f) = self.on_done.take() {
            f();
        }
    }
}

impl PatternBody {
    /// The first `len_bytes` bytes of the pattern.
    pub fn new(len_bytes: usize) -> Self {
        PatternBody {
            sent_bytes: 0,
            len_bytes,
            budget: None,
            pending: None,
            on_done: None,
        }
    }

    /// An empty body (the error answers).
    pub fn empty() -> Self {
        PatternBody::new(0)
    }

    /// Chunks made only within `budget`.
    pub fn with_budget(mut self, budget: BodyBudget) -> Self {
        self.budget = Some(budget);
        self
    }

    /// `f` runs when the body is dropped.
    pub fn on_done(mut self, f: OnDone) -> Self {
        self.on_done = Some(f);
        self
    }

    /// The length of the next chunk (0 at the end).
    fn next_len(&self) -> usize {
        let max = self
            .budget
            .as_ref()
            .map_or(BODY_CHUNK_BYTES, |b| b.chunk_bytes);
        max.min(self.len_bytes - self.sent_bytes)
    }

    /// The next chunk, holding `permits`.
    fn make_chunk(&mut self, n: usize, permits: Permits) -> Bytes {
        let mut data = vec![0u8; n];
        coaplab_endpoint::resource::write_pattern(self.sent_bytes, &mut data);
        self.sent_bytes += n;
        let gauge = self.budget.as_ref().map(|b| b.gauge.clone());
        if let Some(g) = &gauge {
            let held = g.held.fetch_add(n as u64, Ordering::Relaxed) + n as u64;
            g.peak.fetch_max(held, Ordering::Relaxed);
        }
        Bytes::from_owner(Chunk {
            data,
            _permits: permits,
            gauge,
        })
    }

    /// The next chunk without a budget, if any remains.
    fn next_chunk(&mut self) -> Option<Bytes> {
        let n = BODY_CHUNK_BYTES.min(self.len_bytes - self.sent_bytes);
        (n > 0).then(|| self.make_chunk(n, None))
    }
}

impl hyper::body::Body for PatternBody {
    type Data = Bytes;
    type Error = Infallible;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Infallible>>> {
        let me = self.get_mut();
        let n = me.next_len();
        if n == 0 {
            return Poll::Ready(None);
        }
        let Some(budget) = &me.budget else {
            return Poll::Ready(Some(Ok(Frame::data(me.make_chunk(n, None)))));
        };
        if me.pending.is_none() {
            let (conn, server) = (budget.connection.clone(), budget.server.clone());
            let permits = n as u32; // n <= chunk_bytes <= u32::MAX
            me.pending = Some(Box::pin(async move {
                // The connection's first: a connection at its limit holds none of the server's.
                let c = conn.acquire_many_owned(permits).await.ok()?;
                let s = server.acquire_many_owned(permits).await.ok()?;
                Some((c, s))
            }));
        }
        let Some(fut) = me.pending.as_mut() else {
            return Poll::Pending;
        };
        match fut.as_mut().poll(cx) {
            Poll::Pending => {
                budget.gauge.waits.fetch_add(1, Ordering::Relaxed);
                Poll::Pending
            }
            Poll::Ready(permits) => {
                me.pending = None;
                Poll::Ready(Some(Ok(Frame::data(me.make_chunk(n, permits)))))
            }
        }
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

    #[tokio::test]
    async fn chunks_wait_for_the_budget_and_give_it_back_when_dropped() {
        let server = Arc::new(Semaphore::new(1 << 20));
        let gauge = Arc::new(BodyGauge::default());
        let budget = BodyBudget::new(100_000, server.clone(), 1 << 20, gauge.clone());
        let done = Arc::new(std::sync::atomic::AtomicBool::new(false));
        let d = done.clone();
        let mut body = PatternBody::new(300_000)
            .with_budget(budget)
            .on_done(Box::new(move || d.store(true, Ordering::Relaxed)));
        let waker = std::task::Waker::noop();
        let mut cx = Context::from_waker(waker);
        let mut frame = || match Pin::new(&mut body).poll_frame(&mut cx) {
            Poll::Ready(Some(Ok(f))) => Some(f.into_data().unwrap()),
            Poll::Ready(_) => panic!("ended"),
            Poll::Pending => None,
        };
        let a = frame().unwrap();
        assert_eq!(a.len(), BODY_CHUNK_BYTES);
        // 100,000 B per connection: the second 64-KiB chunk waits until the first is gone.
        assert!(frame().is_none());
        assert_eq!(gauge.held.load(Ordering::Relaxed), BODY_CHUNK_BYTES as u64);
        drop(a);
        assert_eq!(gauge.held.load(Ordering::Relaxed), 0);
        let b = frame().unwrap();
        assert_eq!(b[0], (BODY_CHUNK_BYTES % 256) as u8);
        assert_eq!(gauge.peak.load(Ordering::Relaxed), BODY_CHUNK_BYTES as u64);
        assert!(gauge.waits.load(Ordering::Relaxed) >= 1);
        drop(body);
        assert!(done.load(Ordering::Relaxed));
        drop(b);
        assert_eq!(server.available_permits(), 1 << 20);
    }
}
