//! What an [`crate::Endpoint`] hands its driver: the datagrams to send, the events, and the
//! pool of spare datagram buffers they cycle through.

use std::collections::VecDeque;
use std::net::SocketAddr;

use coaplab_cc::time::Instant;

use crate::event::{Event, IgnoreReason, Transmit};

/// Spare buffers kept at most (a burst beyond this is freed, bounding memory).
pub(crate) const POOL_MAX: usize = 64;

/// The endpoint's output queues and buffer pool.
#[derive(Default)]
pub(crate) struct Outputs {
    /// Datagrams to send, oldest first.
    pub(crate) transmits: VecDeque<Transmit>,
    /// Events not yet polled, oldest first.
    pub(crate) events: VecDeque<Event>,
    /// Spare datagram buffers: `Endpoint::poll_transmit_into` swaps them with the caller's,
    /// so a steady state allocates nothing per datagram.
    pub(crate) pool: Vec<Vec<u8>>,
}

impl Outputs {
    /// An empty buffer, from the pool when one is spare.
    pub(crate) fn buffer(&mut self) -> Vec<u8> {
        let mut b = self.pool.pop().unwrap_or_default();
        b.clear();
        b
    }

    /// Returns a buffer to the pool.
    pub(crate) fn recycle(&mut self, buf: Vec<u8>) {
        if self.pool.len() < POOL_MAX && buf.capacity() > 0 {
            self.pool.push(buf);
        }
    }

    /// A datagram from `from` was dropped for `reason` ([`Event::Ignored`]).
    pub(crate) fn ignore(&mut self, now: Instant, from: SocketAddr, reason: IgnoreReason) {
        self.events.push_back(Event::Ignored {
            from,
            reason,
            at: now,
        });
    }

    /// Whether a datagram or an event is waiting.
    pub(crate) fn any(&self) -> bool {
        !self.transmits.is_empty() || !self.events.is_empty()
    }
}
