//! The client's tables: the exchanges (one per outgoing CON/NON message) with the token
//! counter that names them, and the application requests. Each is a slab: a freed slot is
//! reused, keeping its buffers' capacity, and derefs to the slice of all slots (live or not).

use std::ops::{Deref, DerefMut};

use coaplab_cc::time::Instant;
use coaplab_wire::Token;

use crate::event::{ExchangeId, RequestId};
use crate::exchange::{Exch, Owner, Req, XState};

/// Every exchange slot, the free ones, and the exchange-id and token counters.
pub(crate) struct Exchanges {
    slots: Vec<Exch>,
    free: Vec<usize>,
    next_id: u64,
    next_token: u64,
}

impl Exchanges {
    /// No exchanges; tokens count from `initial_token` ([`crate::Config::initial_token`]).
    pub(crate) fn new(initial_token: u64) -> Exchanges {
        Exchanges {
            slots: Vec::new(),
            free: Vec::new(),
            next_id: 0,
            next_token: initial_token,
        }
    }

    /// A slot for a new exchange (a freed one first) and its id; the caller fills it in.
    pub(crate) fn take(&mut self) -> (usize, ExchangeId) {
        let slot = self.free.pop().unwrap_or_else(|| {
            self.slots.push(Exch::empty());
            self.slots.len() - 1
        });
        let id = ExchangeId(self.next_id);
        self.next_id += 1;
        (slot, id)
    }

    /// A new live exchange for `owner` to peer `p`, with its Message ID and token, waiting
    /// for the NSTART gate ([`XState::Queued`]); its slot.
    pub(crate) fn start(
        &mut self,
        owner: Owner,
        peer: usize,
        message_id: u16,
        token: Token,
        confirmable: bool,
    ) -> usize {
        let (slot, id) = self.take();
        let x = &mut self.slots[slot];
        x.id = id;
        x.live = true;
        x.owner = owner;
        x.peer = peer;
        x.message_id = message_id;
        x.token = token;
        x.token_mode = false;
        x.rexmit = None;
        x.confirmable = confirmable;
        x.gated = false;
        x.holds_slot = false;
        x.bytes.clear();
        x.tx_times.clear();
        x.cc = coaplab_cc::Exchange::new();
        x.state = XState::Queued;
        x.deadline = None;
        slot
    }

    /// Frees an exchange slot for reuse (its buffers keep their capacity).
    pub(crate) fn free(&mut self, slot: usize) {
        let x = &mut self.slots[slot];
        x.live = false;
        x.deadline = None;
        x.state = XState::Done;
        self.free.push(slot);
    }

    /// The token counter's next value.
    pub(crate) fn next_token(&self) -> u64 {
        self.next_token
    }

    /// A fresh token of `len` bytes, not used by any live exchange to peer `p`.
    pub(crate) fn alloc_token(&mut self, p: usize, len: usize) -> Token {
        let modulus_bits = 8 * len as u32;
        for _ in 0..1024 {
            let v = self.next_token;
            self.next_token = v.wrapping_add(1);
            let v = if modulus_bits >= 64 {
                v
            } else {
                v & ((1u64 << modulus_bits) - 1)
            };
            let t = Token::from_u64(v, len);
            let clash = self
                .slots
                .iter()
                .any(|x| x.live && x.peer == p && x.token.as_bytes().starts_with(t.as_bytes()));
            if !clash || len == 0 {
                return t;
            }
        }
        Token::from_u64(self.next_token, len)
    }

    /// The token of request `id`'s live exchange.
    pub(crate) fn token_of(&self, requests: &Requests, id: RequestId) -> Option<Token> {
        self.slots.iter().find_map(|x| match x.owner {
            Owner::Request(r) if x.live && requests[r].id == id => Some(x.token),
            _ => None,
        })
    }

    /// The earliest deadline of a live exchange (the retransmission timer).
    #[inline]
    pub(crate) fn next_deadline(&self) -> Option<Instant> {
        self.slots
            .iter()
            .filter(|x| x.live)
            .filter_map(|x| x.deadline)
            .min()
    }

    /// The exchange slot whose deadline is earliest and due at `now`.
    pub(crate) fn next_due(&self, now: Instant) -> Option<usize> {
        self.slots
            .iter()
            .enumerate()
            .filter(|(_, x)| x.live && x.deadline.is_some_and(|d| d <= now))
            .min_by_key(|(_, x)| (x.deadline, x.id))
            .map(|(i, _)| i)
    }
}

impl Deref for Exchanges {
    type Target = [Exch];
    fn deref(&self) -> &[Exch] {
        &self.slots
    }
}

impl DerefMut for Exchanges {
    fn deref_mut(&mut self) -> &mut [Exch] {
        &mut self.slots
    }
}

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
