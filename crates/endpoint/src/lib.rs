//! Sans-IO CoAP-over-UDP endpoints (RFC 7252 message layer, RFC 7959 block-wise), with
//! retransmission driven by the [`coaplab_cc`] algorithms.
//!
//! An [`Endpoint`] takes bytes and instants as arguments and is polled for output, in the
//! style of quinn-proto's `Connection`; the simulator and the socket drivers run the very
//! same code. A tour:
//!
//! - [`endpoint`]: the [`Endpoint`] type, its call order and time rule; it holds the
//!   components below, each owning its state (quinn-proto's `connection/` is the model).
//!   `request` (private): [`Request`], what a client asks to send.
//! - Components (private), each owning its fields with its own `impl`: `timer` names the
//!   endpoint's deadlines ([`Endpoint::poll_timeout`] is the earliest, one `next_deadline`);
//!   `outputs` the datagrams, events and buffer pool for the driver, and the replies (ACK,
//!   RST) it queues and caches; `peers` the destinations with their controllers and NSTART
//!   gates; `slots` the client's exchanges (with token allocation and the retransmission
//!   deadline) and requests; `uploads` the server's partial Block1 uploads and their limits;
//!   `echo_guard` the server's verified sources and unverified allowances (RFC 9175 §2.4).
//!   The logic spanning several components is still `impl Endpoint` in the files below
//!   (issue 34).
//! - [`controller`]: one [`Controller`] (RTO algorithm + random stream + token mode) per
//!   destination, built lazily by a [`ControllerFactory`], e.g. [`registry_factory`].
//! - `client` and `inbound` (private): requests and exchanges, the NSTART gate and FIFO
//!   queue, Message-ID and token allocation, retransmission under the algorithm (`start` →
//!   `expired`* → `completed` | `failed`); matching ACKs, RSTs and responses.
//! - `marking` (private): FASOR+token and Rexmit-Cnt marking of copies (Globecom 2018;
//!   draft-ietf-core-fasor-02).
//! - `blockwise` (private): Block2 follow-ups and Block1 uploads on the client.
//! - `server` (private) and [`resource`]: deduplicated request handling, piggybacked, NON and
//!   separate responses, Block1 reassembly, Block2 serving, the `data/N` and `echo`
//!   resources.
//! - [`content`]: GET-only content resources with a Content-Format (`/.well-known/core`,
//!   `/time`), added with [`Router::content`] and [`Router::clock`].
//! - [`links`]: the RFC 6690 `/.well-known/core` listing made from [`Router::link`]
//!   descriptions, with query filtering.
//! - [`media`]: Content-Formats `/echo` accepts (4.15 otherwise), the FETCH/PATCH/iPATCH echo
//!   codes (RFC 8132), entity tags and conditional requests (If-Match, If-None-Match).
//! - `dedup` and `reply` (private): the duplicate cache, bounded by lifetime, entries and
//!   bytes, and the replays of cached replies to duplicates it feeds.
//! - `echo` (private): the RFC 9175 Echo option against amplification (RFC 7252 §11.3):
//!   challenge values, their check, and the table of verified sources.
//! - `request_options` (private): the request-option check both the UDP server and the
//!   RFC 8323 session's server run (unknown or repeated critical options, proxying, Accept).
//! - [`event`]: [`Transmit`] and the [`Event`] metric taps; the endpoint counts nothing itself.
//! - [`config`]: [`Config`], the message-layer settings.
//! - [`tcp`]: RFC 8323 sessions (CoAP over one TCP connection): [`tcp::Session`].
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
pub use controller::{registry_factory, Controller, ControllerFactory, Marking};
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
