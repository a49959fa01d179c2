//! Stage 1 of a link direction: the drop-tail FIFO limited in bytes (docs/experiments.md §1.1 item
//! 1).
//!
//! The link computes each packet's serialization interval when the packet is admitted, so the
//! queue does not hold packets: it remembers, for every admitted packet still resident, when it
//! leaves the backlog and how many bytes it was charged. Residents are retired lazily at the next
//! admission, which keeps the backlog exact at every instant a packet is offered.

use std::collections::VecDeque;

use coaplab_base::time::Instant;

/// A byte-limited drop-tail FIFO's occupancy.
#[derive(Debug, Clone)]
pub struct ByteFifo {
    capacity_bytes: u64,
    /// Admitted packets not yet gone: `(leaves_at, charged_bytes)`, in admission order. Leave
    /// times are non-decreasing because the serializer is FIFO.
    resident: VecDeque<(Instant, u32)>,
    backlog_bytes: u64,
}

impl ByteFifo {
    /// An empty queue holding at most `capacity_bytes` charged bytes.
    pub fn new(capacity_bytes: u64) -> Self {
        ByteFifo {
            capacity_bytes,
            resident: VecDeque::new(),
            backlog_bytes: 0,
        }
    }

    /// Forgets every packet that has left the backlog at or before `now`.
    pub fn retire(&mut self, now: Instant) {
        while let Some(&(leaves_at, charge)) = self.resident.front() {
            if leaves_at > now {
                break;
            }
            self.backlog_bytes -= u64::from(charge);
            self.resident.pop_front();
        }
    }

    /// Charged bytes currently resident (call [`ByteFifo::retire`] first).
    pub fn backlog_bytes(&self) -> u64 {
        self.backlog_bytes
    }

    /// Packets currently resident (call [`ByteFifo::retire`] first).
    pub fn backlog_packets(&self) -> u32 {
        self.resident.len() as u32
    }

    /// Whether a packet charged `charge_bytes` fits: `backlog + charge ≤ capacity`.
    pub fn fits(&self, charge_bytes: u32) -> bool {
        self.backlog_bytes + u64::from(charge_bytes) <= self.capacity_bytes
    }

    /// Records an admitted packet that occupies the queue until `leaves_at`.
    pub fn admit(&mut self, leaves_at: Instant, charge_bytes: u32) {
        self.backlog_bytes += u64::from(charge_bytes);
        self.resident.push_back((leaves_at, charge_bytes));
    }
}
