//! The write-queue budget many TCP sessions share (`coaplab server --tcp`'s
//! `--max-queued-bytes`): its own module because the driver ([`crate::tcp`]) charges it and the
//! server loop ([`crate::tcp_server`]) creates it, and neither should import the other for it.

use std::sync::atomic::{AtomicUsize, Ordering};

/// Bytes of write queues shared by many [`crate::TcpDriver`]s ([`crate::TcpDriver::queue_budget`]): each
/// session may add to its queue only what the others leave of `limit_bytes`.
#[derive(Debug)]
pub struct QueueBudget {
    limit_bytes: usize,
    used_bytes: AtomicUsize,
}

impl QueueBudget {
    /// A budget of `limit_bytes`, none used.
    pub fn new(limit_bytes: usize) -> QueueBudget {
        QueueBudget {
            limit_bytes,
            used_bytes: AtomicUsize::new(0),
        }
    }

    /// Bytes held now over all drivers.
    pub fn used_bytes(&self) -> usize {
        self.used_bytes.load(Ordering::Relaxed)
    }

    /// One holder's use goes from `old` to `new` bytes.
    pub(crate) fn set(&self, old: usize, new: usize) {
        if new > old {
            self.used_bytes.fetch_add(new - old, Ordering::Relaxed);
        } else {
            self.used_bytes.fetch_sub(old - new, Ordering::Relaxed);
        }
    }

    /// What a holder of `mine` bytes may hold in all: the limit less the others' use.
    pub(crate) fn share(&self, mine: usize) -> usize {
        let others = self.used_bytes().saturating_sub(mine);
        self.limit_bytes.saturating_sub(others)
    }
}
