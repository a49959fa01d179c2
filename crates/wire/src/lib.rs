//! The CoAP wire codec: RFC 7252 messages, RFC 7959 block options, RFC 8323 framing and
//! signalling, and CoAP URIs. Pure functions on bytes: no I/O, no clock, no allocation when
//! decoding.
//!
//! A tour:
//! - [`message`]: RFC 7252 datagrams. [`Message::decode`] validates the whole datagram and
//!   borrows it; [`MessageWriter`] encodes straight into a caller's buffer; [`MessageBuf`] is
//!   the owned form.
//! - [`frame`]: RFC 8323 frames, with [`frame::Frame::decode_stream`] for incremental stream
//!   reading ("need N more bytes").
//! - [`signal`]: RFC 8323 CSM, Ping, Pong, Release, Abort.
//! - [`option`]: option numbers, critical/unsafe/NoCacheKey classification, typed accessors
//!   ([`option::ReadOptions`]), uint and Block values.
//! - [`uri`]: `coap://` and `coap+tcp://` URIs to and from options.
//! - [`error`]: every malformed input maps to one [`DecodeError`] variant that names the rule
//!   it breaks; decoders never panic.

pub mod code;
pub mod error;
pub mod frame;
pub mod message;
pub mod option;
pub mod signal;
pub mod token;
pub mod uri;

pub use code::{Code, MessageType};
pub use error::{DecodeError, EncodeError};
pub use message::{Message, MessageBuf, MessageWriter};
pub use option::{Block, OptionList, Options, ReadOptions};
pub use token::Token;
