//! Sans-IO CoAP-over-UDP endpoints (RFC 7252 message layer, RFC 7959 block-wise), with
//! retransmission driven by the [`coaplab_cc`] algorithms.
//!
//! An [`Endpoint`] takes bytes and instants as arguments and is polled for output, in the
//! style of quinn-proto's `Connection`; the simulator and the socket drivers run the very
//! same code. A tour:
//!
//! - [`endpoint`]: the [`Endpoint`] type, its call order and time rule, and [`Request`].
//! - [`controller`]: one [`Controller`] (RTO algorithm + random stream + token mode) per
//!   destination, built lazily by a [`ControllerFactory`], e.g. [`registry_factory`].
//! - `client` and `inbound` (private): requests and exchanges, the NSTART gate and FIFO
//!   queue, Message-ID and token allocation, retransmission under the algorithm (`start` →
//!   `expired`* → `completed` | `failed`); matching ACKs, RSTs and responses.
//! - `marking` (private): FASOR+token and Rexmit-Cnt marking of copies (spec §7.6).
//! - `blockwise` (private): Block2 follow-ups and Block1 uploads on the client.
//! - `server` (private) and [`resource`]: deduplicated request handling, piggybacked, NON and
//!   separate responses, Block1 reassembly, Block2 serving, the `data/N` and `echo`
//!   resources.
//! - [`content`]: GET-only content resources with a Content-Format (`/.well-known/core`,
//!   `/time`), added with [`Router::content`] and [`Router::clock`].
//! - `dedup` and `reply` (private): the duplicate cache, bounded by lifetime and size, and
//!   the ACKs, RSTs and replays it feeds.
//! - [`event`]: [`Transmit`] and the [`Event`] metric taps; the endpoint counts nothing itself.
//! - [`config`]: [`Config`], the message-layer settings.
//! - [`tcp`]: RFC 8323 sessions (CoAP over one TCP connection): [`tcp::Session`].

pub mod config;
pub mod content;
pub mod controller;
pub mod endpoint;
pub mod event;
pub mod resource;
pub mod tcp;

mod blockwise;
mod client;
mod dedup;
mod exchange;
mod inbound;
mod marking;
mod reply;
mod server;

pub use config::{Config, ConfigError, EXCHANGE_LIFETIME};
pub use content::{Content, CONTENT_FORMAT_LINK, CONTENT_FORMAT_TEXT};
pub use controller::{registry_factory, Controller, ControllerFactory, Marking};
pub use endpoint::{Endpoint, Request, TransmitHeader};
pub use event::{
    AnswerKind, Event, ExchangeId, FailReason, IgnoreReason, RequestId, Transmit, TransmitMeta,
};
pub use resource::{Action, Resource, Router, MAX_DATA_BYTES};
pub use server::{MAX_PENDING_UPLOADS, MAX_UPLOAD_BYTES};
