//! Sans-IO CoAP-over-UDP endpoints (RFC 7252 message layer, RFC 7959 block-wise), with
//! retransmission driven by the [`coaplab_cc`] algorithms.
//!
//! An [`Endpoint`] takes bytes and instants as arguments and is polled for output, in the
//! style of quinn-proto's `Connection`; the simulator and the socket drivers run the very
//! same code. A tour:
//!
//! - [`endpoint`]: the [`Endpoint`] type, its call order and time rule, and its one `impl`:
//!   the public surface, the dispatch of received datagrams and the timers, each delegated to
//!   the component that owns the state, the other components it needs passed in as arguments
//!   (quinn-proto's `connection/` is the model). `request` (private): [`Request`], what a
//!   client asks to send.
//! - Components (private), each owning its fields with one `impl` in its own file:
//!   - `client`: the client (requests, their exchanges, Message IDs, observations): each
//!     request's life from its first exchange to its completion or failure, block by block,
//!     Message IDs not reused within their lifetime. Its parts, each a component too:
//!     `exchanges` (the exchanges' table, token allocation, the NSTART gate and FIFO queue,
//!     retransmission under the algorithm: `start` → `expired`* → `completed` | `failed`;
//!     matching ACKs, RSTs and responses), `slots` (the requests' table), `message_ids`, and
//!     `observe::client`'s observations; `exchange` holds the records.
//!   - `server`: the server (the [`Router`], partial Block1 uploads (`uploads`), the echo
//!     resource's state, the amplification guard (`echo_guard`), the observers): deduplicated
//!     request handling, piggybacked, NON and separate responses, Block1 reassembly, Block2
//!     serving, duplicates answered again from the cache; `response` encodes its replies.
//!   - `peers`: the destinations with their controllers and NSTART counters.
//!   - `outputs`: the datagrams, events and buffer pool for the driver, and the replies (ACK,
//!     RST) it queues and caches.
//!   - `dedup`: the duplicate cache, bounded by lifetime, entries and bytes.
//!   - `timer`: the endpoint's deadlines by name ([`Endpoint::poll_timeout`] is the earliest,
//!     one `next_deadline`), each asked of the component that owns it.
//!   - [`observe`]: `Observers` (server) and `observe::client`'s `Observations` (client),
//!     RFC 7641.
//! - [`controller`]: one [`Controller`] (RTO algorithm + random stream + token mode) per
//!   destination, built lazily by a [`ControllerFactory`], e.g. [`registry_factory`].
//! - `marking` (private): FASOR+token and Rexmit-Cnt marking of copies (Globecom 2018;
//!   draft-ietf-core-fasor-02).
//! - `blockwise` (private): the client's RFC 7959 half: each block's request encoding, and
//!   what a response does to its request (`advance`: next block, complete, or fail).
//! - [`resource`]: what a path answers ([`Resource`], `data/N` and `echo`) and the
//!   [`Router`] (its one `impl` in `resource/router.rs`).
//! - [`content`]: GET-only content resources with a Content-Format (`/.well-known/core`,
//!   `/time`), added with [`Router::content`] and [`Router::clock`].
//! - [`links`]: the RFC 6690 `/.well-known/core` listing made from [`Router::link`]
//!   descriptions, with query filtering.
//! - [`media`]: Content-Formats `/echo` accepts (4.15 otherwise), the FETCH/PATCH/iPATCH echo
//!   codes (RFC 8132), entity tags and conditional requests (If-Match, If-None-Match).
//! - `echo` (private): the RFC 9175 Echo option against amplification (RFC 7252 §11.3):
//!   challenge values, their check, and the table of verified sources.
//! - `request_options` (private): the request-option check both the UDP server and the
//!   RFC 8323 session's server run (unknown or repeated critical options, proxying, Accept).
//! - [`event`]: [`Transmit`] and the [`Event`] metric taps; the endpoint counts nothing itself.
//! - [`config`]: [`Config`], the message-layer settings.
//! - [`tcp`]: RFC 8323 sessions (CoAP over one TCP connection): [`tcp::Session`] and its one
//!   `impl` (`tcp::session`), delegating to components that own their state, as
//!   [`Endpoint`] does: the receive path (`tcp::inbound`: stream reader, CSM and signals),
//!   the client side (`tcp::client`: requests, Block2 follow-ups, Pings, observations held),
//!   the serving side (`tcp::serve`), the write queue (`tcp::writes`), response encoding
//!   (`tcp::response`) and observers and observations (`tcp::observe`).
//! - [`http`]: HTTP's sibling of the CoAP endpoint for the simulator: byte-exact HTTP/1.1 and
//!   HTTP/2 (h2c) message models of one download (docs/experiments.md §8e), carried by the
//!   TCP model like an RFC 8323 session.

pub mod config;
pub mod content;
pub mod controller;
pub mod endpoint;
pub mod event;
pub mod http;
pub mod links;
pub mod media;
pub mod observe;
pub mod resource;
pub mod tcp;

mod blockwise;
mod client;
mod dedup;
mod echo;
mod echo_guard;
mod exchange;
mod exchanges;
mod marking;
mod message_ids;
mod outputs;
mod peers;
mod request;
mod request_options;
mod response;
mod server;
mod slots;
mod timer;
mod uploads;

pub use config::{
    Amplification, Config, ConfigError, ServerDuplicates, DEDUP_CAPACITY_BYTES, EXCHANGE_LIFETIME,
    MAX_BODY_BYTES,
};
pub use content::{Content, CONTENT_FORMAT_LINK, CONTENT_FORMAT_TEXT};
pub use controller::{
    registry_factory, Controller, ControllerFactory, Marking, ResolvedController,
};
pub use dedup::ENTRY_OVERHEAD_BYTES as DEDUP_ENTRY_OVERHEAD_BYTES;
pub use echo::{
    REPLAY_SOURCES_MAX, REPLAY_WINDOW, UNVERIFIED_CON_BURST_S, UNVERIFIED_CON_BYTES_PER_S,
    UNVERIFIED_REPLAY_BYTES, VERIFIED_SOURCES_MAX,
};
pub use endpoint::{Endpoint, Request, TransmitHeader};
pub use event::{
    AnswerKind, Event, ExchangeId, FailReason, IgnoreReason, ObserverGone, RequestId, Transmit,
    TransmitMeta,
};
pub use links::Link;
pub use media::{ECHO_CONTENT_FORMATS, ETAG_LEN_BYTES};
pub use resource::{Action, Resource, Router, MAX_DATA_BYTES};
pub use uploads::{MAX_PENDING_UPLOADS, MAX_PENDING_UPLOADS_PER_SOURCE, MAX_UPLOAD_BYTES};
