//! An RFC 8323 session's write queue: the messages waiting to be written, in order, each its
//! encoded bytes and possibly a generated body produced only as it is written; what the queue
//! holds in memory against its limits; and the pool of spare buffers the messages cycle
//! through. A component of [`crate::tcp::Session`], owning its fields.

use std::collections::VecDeque;

use coaplab_wire::signal::SignalMessage;
use coaplab_wire::Token;

use crate::resource::Body;
use crate::tcp::event::{SessionEvent, WriteChunk, WriteKind};

/// What one queued message costs besides its bytes in memory
/// ([`crate::tcp::Session::queued_bytes`]), so a flood of tiny messages is bounded too.
pub const QUEUED_MESSAGE_BYTES: usize = 64;

/// Spare buffers kept at most.
const POOL_MAX: usize = 16;

/// The largest buffer kept for reuse: a spare echo of a 1-MiB upload is not kept for ever.
const POOL_BUFFER_MAX_BYTES: usize = 256 * 1024;

/// A message queued for writing: `bytes` (in memory), then `tail` (a generated body, produced
/// only as it is written).
#[derive(Debug)]
pub(crate) struct Queued {
    pub(crate) bytes: Vec<u8>,
    pub(crate) tail: Option<Body<'static>>,
    pub(crate) kind: WriteKind,
    /// The observer (token) this notification is for: a newer one replaces it while it
    /// waits (`crate::tcp::observe`).
    pub(crate) notification: Option<Token>,
}

impl Queued {
    /// The whole frame's length.
    pub(crate) fn len(&self) -> usize {
        self.bytes.len() + self.tail.map_or(0, |t| t.len())
    }

    /// What it costs [`Writes::queued_bytes`].
    pub(crate) fn cost(&self) -> usize {
        self.bytes.len() + QUEUED_MESSAGE_BYTES
    }
}

/// Where a session's server and client put what they send: the write queue and its
/// limits, and the session's events.
pub(crate) struct Sink<'a> {
    pub(crate) writes: &'a mut Writes,
    pub(crate) events: &'a mut VecDeque<SessionEvent>,
    /// The peer's Max-Message-Size.
    pub(crate) max_frame_bytes: usize,
    /// [`crate::tcp::SessionConfig::max_queued_bytes`].
    pub(crate) max_queued_bytes: usize,
}

/// The write queue, its accounting and its buffer pool.
#[derive(Debug)]
pub(crate) struct Writes {
    queue: VecDeque<Queued>,
    /// Bytes of the front message already handed out by [`Writes::chunk`].
    front_sent: usize,
    /// What `queue` holds in memory: every message's [`Queued::cost`].
    queued_bytes: usize,
    /// The driver's share of a budget over many sessions
    /// ([`crate::tcp::Session::set_queue_budget`]).
    budget: usize,
    /// Spare write buffers, swapped with the driver's so a steady state allocates nothing per
    /// message.
    pool: Vec<Vec<u8>>,
}

impl Default for Writes {
    fn default() -> Self {
        Writes {
            queue: VecDeque::new(),
            front_sent: 0,
            queued_bytes: 0,
            budget: usize::MAX,
            pool: Vec::new(),
        }
    }
}

impl Writes {
    /// Nothing is queued.
    pub(crate) fn is_empty(&self) -> bool {
        self.queue.is_empty()
    }

    /// What the queue holds in memory.
    pub(crate) fn queued_bytes(&self) -> usize {
        self.queued_bytes
    }

    /// Bytes still to be written, generated bodies included, less what [`Writes::chunk`]
    /// already handed out.
    pub(crate) fn pending_bytes(&self) -> u64 {
        let all: u64 = self.queue.iter().map(|q| q.len() as u64).sum();
        all - self.front_sent as u64
    }

    /// Limits the queue to `bytes` in all (besides the configured limit).
    pub(crate) fn set_budget(&mut self, bytes: usize) {
        self.budget = bytes;
    }

    /// Bytes a message may still add, under the configured `max_queued_bytes` and the budget.
    pub(crate) fn room(&self, max_queued_bytes: usize) -> usize {
        max_queued_bytes
            .min(self.budget)
            .saturating_sub(self.queued_bytes)
    }

    /// Queues a message for writing.
    pub(crate) fn push(&mut self, q: Queued) {
        self.queued_bytes += q.cost();
        self.queue.push_back(q);
    }

    /// Queues a signalling message as one write.
    pub(crate) fn push_signal(&mut self, msg: &SignalMessage) {
        // Our own signals always encode: options and diagnostics are bounded.
        let bytes = msg.to_frame().to_bytes().unwrap_or_default();
        self.push(Queued {
            bytes,
            tail: None,
            kind: WriteKind::Signal(msg.code()),
            notification: None,
        });
    }

    /// An empty buffer, from the pool when it has one.
    pub(crate) fn buffer(&mut self) -> Vec<u8> {
        self.pool.pop().unwrap_or_default()
    }

    /// Keeps `bytes` for reuse when the pool has room.
    pub(crate) fn recycle(&mut self, mut bytes: Vec<u8>) {
        if self.pool.len() < POOL_MAX && bytes.capacity() <= POOL_BUFFER_MAX_BYTES {
            bytes.clear();
            self.pool.push(bytes);
        }
    }

    /// The queued notification for `token` whose writing has not begun, and its cost.
    pub(crate) fn waiting_notification(&self, token: Token) -> Option<(usize, usize)> {
        let i =
            self.queue.iter().enumerate().position(|(i, q)| {
                q.notification == Some(token) && !(i == 0 && self.front_sent > 0)
            })?;
        Some((i, self.queue[i].cost()))
    }

    /// Message `i` (a [`Writes::waiting_notification`] of cost `freed`) gets newer `bytes`;
    /// the old ones are kept for reuse.
    pub(crate) fn replace(&mut self, i: usize, freed: usize, bytes: Vec<u8>) {
        self.queued_bytes = self.queued_bytes - freed + bytes.len() + QUEUED_MESSAGE_BYTES;
        let old = std::mem::replace(&mut self.queue[i].bytes, bytes);
        self.recycle(old);
    }

    /// The next whole message, into `buf` (swapped, not copied), when writing it has not
    /// begun and it has no generated body; `Err(len)` with what is left of the front message
    /// otherwise, to take by [`Writes::chunk`].
    pub(crate) fn whole(&mut self, buf: &mut Vec<u8>) -> Option<Result<WriteKind, usize>> {
        let front = self.queue.front()?;
        if front.tail.is_some() || self.front_sent > 0 {
            return Some(Err(front.len() - self.front_sent));
        }
        let mut w = self.pop_front()?;
        std::mem::swap(buf, &mut w.bytes);
        self.recycle(w.bytes);
        Some(Ok(w.kind))
    }

    /// The next message's head into `head` and its generated body, when it has one and its
    /// writing has not begun; `Ok(None)` to take it by [`Writes::whole`] otherwise.
    #[allow(clippy::type_complexity)]
    pub(crate) fn parts(
        &mut self,
        head: &mut Vec<u8>,
    ) -> Option<Option<(WriteKind, Option<Body<'static>>)>> {
        let front = self.queue.front()?;
        if front.tail.is_none() || self.front_sent > 0 {
            return Some(None);
        }
        let mut q = self.pop_front()?;
        std::mem::swap(head, &mut q.bytes);
        self.recycle(q.bytes);
        Some(Some((q.kind, q.tail)))
    }

    /// The next at most `max_bytes` (at least 1) of the front message, into `buf` (its
    /// previous contents are discarded); a generated body is produced only as far as asked.
    pub(crate) fn chunk(&mut self, buf: &mut Vec<u8>, max_bytes: usize) -> Option<WriteChunk> {
        let q = self.queue.front()?;
        buf.clear();
        let total = q.len();
        let start = self.front_sent;
        let end = total.min(start.saturating_add(max_bytes.max(1)));
        let head = q.bytes.len();
        if start < head {
            buf.extend_from_slice(&q.bytes[start..end.min(head)]);
        }
        if let (Some(tail), true) = (q.tail, end > head) {
            let from = start.max(head);
            let at = buf.len();
            buf.resize(at + (end - from), 0);
            tail.write(from - head, &mut buf[at..]);
        }
        let chunk = WriteChunk {
            kind: q.kind,
            message_bytes: total,
            last: end == total,
        };
        self.front_sent = end;
        if chunk.last {
            if let Some(q) = self.pop_front() {
                self.recycle(q.bytes);
            }
        }
        Some(chunk)
    }

    /// Drops every queued message without producing it.
    pub(crate) fn discard(&mut self) {
        while let Some(q) = self.pop_front() {
            self.recycle(q.bytes);
        }
    }

    /// Removes the front message from the queue.
    fn pop_front(&mut self) -> Option<Queued> {
        let q = self.queue.pop_front()?;
        self.front_sent = 0;
        self.queued_bytes -= q.cost();
        Some(q)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use coaplab_wire::Code;

    fn message(bytes: usize, notification: Option<Token>) -> Queued {
        Queued {
            bytes: vec![0; bytes],
            tail: None,
            kind: WriteKind::Response(Code::CONTENT),
            notification,
        }
    }

    #[test]
    fn a_waiting_notification_is_replaced_in_place_with_its_cost() {
        let t = Token::new(&[9]).unwrap();
        let mut w = Writes::default();
        w.push(message(10, None));
        w.push(message(20, Some(t)));
        assert_eq!(w.queued_bytes(), 30 + 2 * QUEUED_MESSAGE_BYTES);
        let (i, cost) = w.waiting_notification(t).unwrap();
        assert_eq!((i, cost), (1, 20 + QUEUED_MESSAGE_BYTES));
        w.replace(i, cost, vec![1; 5]);
        assert_eq!(w.queued_bytes(), 15 + 2 * QUEUED_MESSAGE_BYTES);
        assert_eq!(w.pending_bytes(), 15);
        assert_eq!(w.room(100 + 2 * QUEUED_MESSAGE_BYTES), 85);
    }

    #[test]
    fn a_notification_being_written_is_not_replaced() {
        let t = Token::new(&[9]).unwrap();
        let mut w = Writes::default();
        w.push(message(20, Some(t)));
        let mut buf = Vec::new();
        let chunk = w.chunk(&mut buf, 8).unwrap();
        assert_eq!((chunk.message_bytes, chunk.last, buf.len()), (20, false, 8));
        assert_eq!(w.waiting_notification(t), None);
        assert_eq!(w.whole(&mut buf), Some(Err(12)));
        assert_eq!(w.chunk(&mut buf, 100).map(|c| c.last), Some(true));
        assert!(w.is_empty() && w.queued_bytes() == 0);
    }
}
