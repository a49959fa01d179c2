//! The records the endpoint keeps: per destination ([`Peer`]), per outgoing CON/NON message
//! ([`Exch`]) and per application request ([`Req`]). Slots are reused, keeping their buffers'
//! capacity, so a steady stream of requests allocates nothing but the transmit bytes.

use std::collections::VecDeque;
use std::net::SocketAddr;

use coaplab_cc::time::Instant;
use coaplab_wire::option::OptionList;
use coaplab_wire::{Block, Code, Token};

use crate::controller::Controller;
use crate::event::ExchangeId;
use crate::marking::{RexmitLayout, RexmitPeer};
use crate::request::Request;

/// One destination: its congestion control and its NSTART gate (RFC 7252 §4.7).
///
/// Aligned to a cache line: its 112 bytes, all read for every exchange, span two lines
/// rather than two or three (issue 35).
#[derive(Debug)]
#[repr(align(64))]
pub(crate) struct Peer {
    pub(crate) addr: SocketAddr,
    /// Built lazily by the factory when the first exchange to this peer starts.
    pub(crate) ctl: Option<Controller>,
    /// Outstanding interactions counted against NSTART.
    pub(crate) in_flight: u32,
    /// Exchange slots waiting for the gate, first in first out.
    pub(crate) queue: VecDeque<usize>,
    /// Whether it echoes Rexmit-Cnt (only used with that marking).
    pub(crate) rexmit: RexmitPeer,
}

impl Peer {
    pub(crate) fn new(addr: SocketAddr) -> Self {
        Peer {
            addr,
            ctl: None,
            in_flight: 0,
            queue: VecDeque::new(),
            rexmit: RexmitPeer::Unknown,
        }
    }
}

/// Where an exchange is in its life.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum XState {
    /// Free slot.
    Done,
    /// Waiting in the NSTART queue.
    Queued,
    /// A separate response waiting out the server's processing delay.
    Delayed,
    /// A CON sent, its ACK not yet received: the retransmission timer runs.
    AwaitAck,
    /// Acknowledged by an empty ACK (or a NON request): waiting for the response.
    AwaitResponse,
}

/// Who an exchange works for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Owner {
    /// A client request's (next) block, by request slot.
    Request(usize),
    /// A server's separate CON response.
    Separate,
}

/// One outgoing CON or NON message and its copies.
///
/// `repr(C, align(64))`, fields in this order: what the scans of every slot read (at every
/// datagram and timer: `live`, `state`, `deadline`, `id`, `message_id`, `peer`, `token`)
/// is the slot's first 56 bytes, one cache line, where the compiler's layout put `live` and
/// `deadline` 186 bytes apart (issue 35: 400 simulated clients on one core, each line of
/// their state a cache miss).
#[derive(Debug)]
#[repr(C, align(64))]
pub(crate) struct Exch {
    pub(crate) live: bool,
    pub(crate) state: XState,
    pub(crate) confirmable: bool,
    /// Goes through the NSTART gate (requests do; separate responses do not).
    pub(crate) gated: bool,
    /// Currently counted in the peer's `in_flight`.
    pub(crate) holds_slot: bool,
    pub(crate) token_mode: bool,
    pub(crate) message_id: u16,
    /// The token of the original (in token mode: `base ‖ 0`).
    pub(crate) token: Token,
    pub(crate) peer: usize,
    pub(crate) id: ExchangeId,
    pub(crate) deadline: Option<Instant>,
    pub(crate) owner: Owner,
    /// The next free slot after this one, while this one is free (`crate::exchanges`' free
    /// list, kept in the slots themselves: no list of its own to touch).
    pub(crate) next_free: Option<usize>,
    /// The algorithm's per-exchange scratch `X`.
    pub(crate) cc: coaplab_cc::Exchange,
    /// Rexmit-Cnt marking: where each copy gets its option.
    pub(crate) rexmit: Option<RexmitLayout>,
    /// The encoded original.
    pub(crate) bytes: Vec<u8>,
    /// Send time of every copy; index = ordinal.
    pub(crate) tx_times: Vec<Instant>,
}

impl Exch {
    pub(crate) fn empty() -> Self {
        Exch {
            id: ExchangeId(0),
            live: false,
            owner: Owner::Separate,
            peer: 0,
            message_id: 0,
            token: Token::EMPTY,
            token_mode: false,
            rexmit: None,
            confirmable: true,
            gated: false,
            holds_slot: false,
            bytes: Vec::new(),
            tx_times: Vec::new(),
            cc: coaplab_cc::Exchange::new(),
            state: XState::Done,
            deadline: None,
            next_free: None,
        }
    }

    /// Checks a piggybacked response's token; `Some(answered)` when it matches. In token mode
    /// the echoed last byte names the copy answered (Globecom 2018; draft-ietf-core-fasor-02).
    pub(crate) fn match_token(&self, token: &[u8]) -> Option<Option<u32>> {
        let x = self;
        let ours = x.token.as_bytes();
        if !x.token_mode {
            return (token == ours).then_some(None);
        }
        let base = &ours[..ours.len() - 1];
        if token.len() != ours.len() || !token.starts_with(base) {
            return None;
        }
        let j = token[token.len() - 1] as u32;
        let sent = x.tx_times.len() as u32;
        (j < sent).then_some(Some(j))
    }

    /// Whether a separate response's token belongs to this exchange (token mode: any
    /// ordinal).
    pub(crate) fn token_matches(&self, token: &[u8]) -> bool {
        let ours = self.token.as_bytes();
        if self.token_mode {
            token.len() == ours.len() && token.starts_with(&ours[..ours.len() - 1])
        } else {
            token == ours
        }
    }

    /// The request slot this exchange serves.
    pub(crate) fn request_slot(&self) -> Option<usize> {
        match self.owner {
            Owner::Request(r) => Some(r),
            Owner::Separate => None,
        }
    }
}

/// One application request and its block-wise progress (RFC 7959).
///
/// `repr(C, align(64))`, fields in this order: what every exchange of a request reads or
/// resets comes first, in four cache lines; the request's path, query and options, read
/// only to encode it or to compare it with the next one, come last, where a client that
/// repeats its request ([`crate::Endpoint::request_again`]) does not touch them (issue 35:
/// 400 simulated clients on one core, each line of their state a cache miss).
#[derive(Debug)]
#[repr(C, align(64))]
pub(crate) struct Req {
    pub(crate) id: crate::event::RequestId,
    pub(crate) peer: usize,
    pub(crate) started: Instant,
    pub(crate) b1_offset: usize,
    pub(crate) b1_size: usize,
    pub(crate) body_len: usize,
    /// Block2 to ask for in the next exchange (None: the first request, no Block2).
    pub(crate) b2_next: Option<Block>,
    pub(crate) exchanges: u32,
    pub(crate) live: bool,
    /// Block1 upload in progress: offset and size of the block being sent.
    pub(crate) uploading: bool,
    pub(crate) confirmable: bool,
    pub(crate) method: Code,
    /// Times the request was repeated with an Echo value.
    pub(crate) echo_retries: u8,
    /// The token every exchange of this request uses, instead of a fresh one: an Observe
    /// deregistration must repeat the registration's token (RFC 7641 §3.6).
    pub(crate) fixed_token: Option<Token>,
    pub(crate) body: Vec<u8>,
    /// The Echo value a 4.01 asked this request to repeat (RFC 9175 §2.4); empty: none.
    pub(crate) echo: Vec<u8>,
    pub(crate) payload: Vec<u8>,
    /// The encoding of this slot's last request after its token, reused by the next request
    /// with the same method, path, query, payload and options ([`crate::blockwise::encode_request_reusing`]).
    pub(crate) tail: RequestTail,
    /// The next free slot after this one, while this one is free (`crate::slots`' free list;
    /// 32 bits, so that the fields above end at 192 bytes, three cache lines).
    pub(crate) next_free: Option<u32>,
    pub(crate) path: String,
    /// Uri-Query arguments, sent with every block.
    pub(crate) query: Vec<String>,
    /// The caller's further options ([`crate::Request::options`]), sent with every block.
    pub(crate) options: OptionList,
}

/// What a request's encoding holds after its header and token (its options and payload), kept
/// so that a client asking the same thing again (a load generator, a simulated flow: one
/// request per exchange, each the same GET) writes four header bytes and its token and copies
/// the rest, instead of encoding every option again. Only encodings that depend on nothing
/// but the request's inputs and its Block2 option are kept: no Block1 upload, no Echo.
#[derive(Debug, Default)]
pub(crate) struct RequestTail {
    /// The Block2 option the kept bytes carry; `None`: nothing kept.
    pub(crate) block2: Option<Option<Block>>,
    pub(crate) bytes: Vec<u8>,
}

impl Req {
    /// Takes `request`'s method, path, query, payload, options and message type into the
    /// slot, copying them (and forgetting the kept encoding, [`RequestTail`]) only when they
    /// differ from the slot's last request: a client that repeats one request copies nothing.
    pub(crate) fn take_request(&mut self, request: &Request) {
        let Request {
            method,
            path,
            query,
            payload,
            confirmable,
            options,
        } = request;
        self.take_parts(*method, path, query, payload, options);
        self.confirmable = *confirmable;
    }

    /// [`Req::take_request`] of the request slot `other` holds.
    pub(crate) fn take_request_of(&mut self, other: &Req) {
        let Req {
            method,
            path,
            query,
            payload,
            options,
            confirmable,
            ..
        } = other;
        self.take_parts(*method, path, query, payload, options);
        self.confirmable = *confirmable;
    }

    fn take_parts(
        &mut self,
        method: Code,
        path: &String,
        query: &Vec<String>,
        payload: &Vec<u8>,
        options: &OptionList,
    ) {
        let same = self.method == method
            && self.path == *path
            && self.query == *query
            && self.payload == *payload
            && self.options == *options;
        if !same {
            self.tail.block2 = None;
            self.method = method;
            self.path.clone_from(path);
            self.query.clone_from(query);
            self.payload.clone_from(payload);
            self.options.clone_from(options);
        }
    }

    pub(crate) fn empty() -> Self {
        Req {
            id: crate::event::RequestId(0),
            live: false,
            peer: 0,
            method: Code::GET,
            path: String::new(),
            query: Vec::new(),
            payload: Vec::new(),
            options: OptionList::new(),
            confirmable: true,
            started: Instant::ZERO,
            exchanges: 0,
            uploading: false,
            b1_offset: 0,
            b1_size: 0,
            b2_next: None,
            body: Vec::new(),
            body_len: 0,
            echo: Vec::new(),
            echo_retries: 0,
            fixed_token: None,
            tail: RequestTail::default(),
            next_free: None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::mem::{offset_of, size_of};

    #[test]
    fn what_the_slot_scans_read_is_in_the_first_cache_line() {
        let ends = [
            offset_of!(Exch, live) + 1,
            offset_of!(Exch, state) + 1,
            offset_of!(Exch, message_id) + 2,
            offset_of!(Exch, token) + size_of::<Token>(),
            offset_of!(Exch, peer) + size_of::<usize>(),
            offset_of!(Exch, id) + size_of::<ExchangeId>(),
            offset_of!(Exch, deadline) + size_of::<Option<Instant>>(),
        ];
        assert!(ends.iter().all(|&e| e <= 64), "{ends:?}");
        assert_eq!(std::mem::align_of::<Exch>(), 64);
    }

    #[test]
    fn what_every_exchange_of_a_request_reads_is_in_three_cache_lines() {
        assert_eq!(offset_of!(Req, path), 192);
        assert!(offset_of!(Req, query) > offset_of!(Req, path));
        assert!(offset_of!(Req, options) > offset_of!(Req, query));
        assert_eq!(std::mem::align_of::<Req>(), 64);
    }
}
