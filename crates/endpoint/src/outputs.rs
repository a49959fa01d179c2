//! What an [`crate::Endpoint`] hands its driver: the datagrams to send, the events, and the
//! pool of spare datagram buffers they cycle through; and the queueing of replies (empty
//! ACKs, RSTs, piggybacked responses), cached in the duplicate cache as they go out
//! (RFC 7252 §4.2–4.5).

use std::collections::VecDeque;
use std::net::SocketAddr;

use coaplab_cc::time::Instant;

use coaplab_wire::{Code, MessageType, MessageWriter, Token};

use crate::dedup::DedupCache;
use crate::event::{Event, IgnoreReason, Transmit, TransmitMeta};

/// Spare buffers kept at most (a burst beyond this is freed, bounding memory).
pub(crate) const POOL_MAX: usize = 64;

/// The endpoint's output queues and buffer pool.
#[derive(Default)]
pub(crate) struct Outputs {
    /// Datagrams to send, oldest first.
    pub(crate) transmits: VecDeque<Transmit>,
    /// Events not yet polled, oldest first.
    pub(crate) events: VecDeque<Event>,
    /// The spare buffer to use next (none when it has no capacity): the top of the pool,
    /// kept here rather than in `pool`, so that an endpoint with at most one spare (a client
    /// sending one datagram per input) never touches `pool`'s heap line (issue 35).
    spare: Vec<u8>,
    /// The other spare datagram buffers: `Endpoint::poll_transmit_into` swaps them with the
    /// caller's, so a steady state allocates nothing per datagram.
    pool: Vec<Vec<u8>>,
}

impl Outputs {
    /// An empty buffer, from the pool when one is spare (the last returned first).
    pub(crate) fn buffer(&mut self) -> Vec<u8> {
        let mut b = if self.spare.capacity() > 0 {
            std::mem::take(&mut self.spare)
        } else {
            self.pool.pop().unwrap_or_default()
        };
        b.clear();
        b
    }

    /// Returns a buffer to the pool, which keeps at most [`POOL_MAX`].
    pub(crate) fn recycle(&mut self, buf: Vec<u8>) {
        if buf.capacity() == 0 {
            return;
        }
        if self.spare.capacity() == 0 {
            self.spare = buf;
        } else if self.pool.len() + 1 < POOL_MAX {
            self.pool.push(std::mem::replace(&mut self.spare, buf));
        }
    }

    /// Queues an RST for Message ID `mid` of `from` and remembers it in `dedup` for duplicates.
    pub(crate) fn reject(
        &mut self,
        dedup: &mut DedupCache,
        now: Instant,
        from: SocketAddr,
        mid: u16,
    ) {
        self.send_empty(dedup, now, from, MessageType::Rst, mid);
        self.events.push_back(Event::Rejected {
            from,
            message_id: mid,
            at: now,
        });
    }

    /// Queues an empty ACK or RST for Message ID `mid` of `to`, cached in `dedup` for duplicates.
    pub(crate) fn send_empty(
        &mut self,
        dedup: &mut DedupCache,
        now: Instant,
        to: SocketAddr,
        mtype: MessageType,
        mid: u16,
    ) {
        let mut buf = [0u8; 4];
        let n = MessageWriter::new(&mut buf, mtype, Code::EMPTY, mid, Token::EMPTY)
            .map(|w| w.finish())
            .unwrap_or(0);
        self.send_reply(dedup, now, to, mid, &buf[..n], false);
    }

    /// Queues `reply` (to the message `to` sent with `mid`) and, unless it is itself a
    /// replay, caches it in `dedup` for duplicates.
    pub(crate) fn send_reply(
        &mut self,
        dedup: &mut DedupCache,
        now: Instant,
        to: SocketAddr,
        mid: u16,
        reply: &[u8],
        replayed: bool,
    ) {
        let mut contents = self.buffer();
        contents.extend_from_slice(reply);
        self.queue_reply(dedup, now, to, mid, contents, replayed);
    }

    /// [`Outputs::send_reply`] with the reply in a buffer of its own, which is queued as it
    /// is (no copy).
    pub(crate) fn queue_reply(
        &mut self,
        dedup: &mut DedupCache,
        now: Instant,
        to: SocketAddr,
        mid: u16,
        contents: Vec<u8>,
        replayed: bool,
    ) {
        let reply_mid = if contents.len() >= 4 {
            u16::from_be_bytes([contents[2], contents[3]])
        } else {
            mid
        };
        if !replayed {
            dedup.insert(now, to, mid, Some(&contents));
        }
        self.transmits.push_back(Transmit {
            destination: to,
            contents,
            meta: TransmitMeta::Reply {
                message_id: reply_mid,
                replayed,
            },
        });
    }

    /// A datagram from `from` was dropped for `reason` ([`Event::Ignored`]).
    pub(crate) fn ignore(&mut self, now: Instant, from: SocketAddr, reason: IgnoreReason) {
        self.events.push_back(Event::Ignored {
            from,
            reason,
            at: now,
        });
    }

    /// Called at each input: an emptied queue starts again at the front of its buffer
    /// (`clear` on an empty `VecDeque` only moves its head to 0). A driver drains both queues
    /// after every input, so each input's datagrams and events are written to the same first
    /// cache lines of their buffers rather than round their rings: 1.8 fewer L2 misses per
    /// link packet at 400 UDP flows (issue 35). Here rather than where they are popped, which
    /// would move each popped item once more.
    #[inline]
    pub(crate) fn rewind(&mut self) {
        if self.transmits.is_empty() {
            self.transmits.clear();
        }
        if self.events.is_empty() {
            self.events.clear();
        }
    }

    /// Whether a datagram or an event is waiting.
    pub(crate) fn any(&self) -> bool {
        !self.transmits.is_empty() || !self.events.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn with_capacity(n: usize) -> Vec<u8> {
        Vec::with_capacity(n)
    }

    #[test]
    fn an_emptied_queue_starts_again_at_the_front_of_its_buffer() {
        let mut out = Outputs::default();
        let tx = |message_id| Transmit {
            destination: "198.18.0.1:5683".parse().unwrap(),
            contents: Vec::new(),
            meta: TransmitMeta::Reply {
                message_id,
                replayed: false,
            },
        };
        out.rewind();
        out.transmits.push_back(tx(1));
        let front = out.transmits.as_slices().0.as_ptr();
        out.transmits.push_back(tx(2));
        assert!(out.transmits.pop_front().is_some() && out.transmits.pop_front().is_some());
        out.transmits.push_back(tx(3));
        assert_ne!(
            out.transmits.as_slices().0.as_ptr(),
            front,
            "a ring goes round"
        );
        out.rewind();
        assert_eq!(
            out.transmits.len(),
            1,
            "a queue holding datagrams is left alone"
        );
        assert!(out.transmits.pop_front().is_some());
        out.rewind();
        out.transmits.push_back(tx(4));
        assert_eq!(out.transmits.as_slices().0.as_ptr(), front);
    }

    #[test]
    fn buffers_come_back_last_returned_first_and_at_most_pool_max_are_kept() {
        let mut out = Outputs::default();
        out.recycle(Vec::new());
        assert_eq!(out.buffer().capacity(), 0, "an empty buffer is not kept");
        for n in 1..=POOL_MAX + 2 {
            out.recycle(with_capacity(n * 100));
        }
        let mut caps: Vec<usize> = (0..POOL_MAX).map(|_| out.buffer().capacity()).collect();
        assert_eq!(out.buffer().capacity(), 0, "no more than POOL_MAX kept");
        caps.reverse();
        let kept: Vec<usize> = (1..=POOL_MAX).map(|n| n * 100).collect();
        assert!(caps.iter().zip(&kept).all(|(c, k)| c >= k), "{caps:?}");
        assert!(caps.windows(2).all(|w| w[0] < w[1]), "{caps:?}");
    }
}
