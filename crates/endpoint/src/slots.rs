//! The client's application requests: a slab, where a freed slot is reused, keeping its
//! buffers' capacity, and which derefs to the slice of all slots (live or not). The
//! exchanges they make are in `crate::exchanges`.

use std::ops::{Deref, DerefMut};

use crate::event::RequestId;
use crate::exchange::Req;

/// Every request slot, the free ones, and the request-id counter.
#[derive(Default)]
pub(crate) struct Requests {
    slots: Vec<Req>,
    free: Vec<usize>,
    next_id: u64,
}

impl Requests {
    /// A slot for a new request (a freed one first) and its id; the caller fills it in.
    pub(crate) fn take(&mut self) -> (usize, RequestId) {
        let slot = self.free.pop().unwrap_or_else(|| {
            self.slots.push(Req::empty());
            self.slots.len() - 1
        });
        let id = RequestId(self.next_id);
        self.next_id += 1;
        (slot, id)
    }

    /// Slot `r`, whose request ended (its `live` already false), may be reused.
    pub(crate) fn release(&mut self, r: usize) {
        self.free.push(r);
    }

    /// Requests not yet completed or failed.
    pub(crate) fn open(&self) -> usize {
        self.slots.iter().filter(|r| r.live).count()
    }
}

impl Deref for Requests {
    type Target = [Req];
    fn deref(&self) -> &[Req] {
        &self.slots
    }
}

impl DerefMut for Requests {
    fn deref_mut(&mut self) -> &mut [Req] {
        &mut self.slots
    }
}
