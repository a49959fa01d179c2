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
    /// The free slot to reuse first; each free slot names the next ([`Req::next_free`]), last
    /// freed first: a list in the slots, so that reusing one touches no other line (issue 35).
    free: Option<usize>,
    next_id: u64,
}

impl Requests {
    /// A slot for a new request (a freed one first) and its id; the caller fills it in.
    /// Inline: once per request, where the call cost more than its work (issue 35).
    #[inline]
    pub(crate) fn take(&mut self) -> (usize, RequestId) {
        let slot = match self.free {
            Some(slot) => {
                self.free = self.slots[slot].next_free.take().map(|f| f as usize);
                slot
            }
            None => {
                self.slots.push(Req::empty());
                self.slots.len() - 1
            }
        };
        let id = RequestId(self.next_id);
        self.next_id += 1;
        (slot, id)
    }

    /// Slot `r`, whose request ended (its `live` already false), may be reused.
    pub(crate) fn release(&mut self, r: usize) {
        debug_assert!(!self.slots[r].live, "request slot {r} released while live");
        // A slot number fits 32 bits: 2^32 slots of 320 bytes would be 1.3 TB.
        self.slots[r].next_free = self.free.replace(r).map(|f| f as u32);
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn freed_slots_are_reused_last_freed_first() {
        let mut requests = Requests::default();
        let taken: Vec<usize> = (0..3).map(|_| requests.take().0).collect();
        assert_eq!(taken, [0, 1, 2]);
        requests.release(0);
        requests.release(2);
        assert_eq!(requests.take(), (2, RequestId(3)));
        assert_eq!(requests.take(), (0, RequestId(4)));
        assert_eq!(requests.take(), (3, RequestId(5)));
    }
}
