//! RFC 7252 datagrams: a zero-copy [`Message`] view for decoding, a [`MessageWriter`] that
//! encodes straight into the caller's buffer, and an owned [`MessageBuf`] for convenience.
//!
//! ```text
//!  0                   1                   2                   3
//! |Ver| T |  TKL  |      Code     |          Message ID           |   RFC 7252 §3
//! |   Token (if any, TKL bytes) ...
//! |   Options (if any) ...
//! |1 1 1 1 1 1 1 1|    Payload (if any) ...
//! ```
//!
//! Round trip:
//! ```
//! use coaplab_wire::{Code, Message, MessageBuf, MessageType, Token, option::number};
//! let mut m = MessageBuf::new(MessageType::Con, Code::GET, 0x7d34, Token::new(&[0x4a, 0x1f]).unwrap());
//! m.options.push(number::URI_PATH, "temperature");
//! let bytes = m.to_bytes().unwrap();
//! let view = Message::decode(&bytes).unwrap();
//! assert_eq!(view.message_id, 0x7d34);
//! assert_eq!(MessageBuf::from(view), m);
//! ```

use crate::code::{Code, MessageType};
use crate::error::{DecodeError, EncodeError};
use crate::option::codec::{self, BodyCursor};
use crate::option::{OptionList, Options, ReadOptions};
use crate::token::Token;

/// The only version defined (RFC 7252 §3).
pub const VERSION: u8 = 1;

/// Bytes of the fixed header.
pub const HEADER_LEN: usize = 4;

/// A decoded datagram borrowing the input bytes. Decoding validates everything, so the
/// option iterator cannot fail afterwards.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Message<'a> {
    /// CON, NON, ACK or RST.
    pub mtype: MessageType,
    /// Request method, response code, or 0.00.
    pub code: Code,
    /// The 16-bit message ID.
    pub message_id: u16,
    /// The token bytes (0–8).
    pub token: &'a [u8],
    /// The options.
    pub options: Options<'a>,
    /// The payload (empty when there is none).
    pub payload: &'a [u8],
}

impl<'a> Message<'a> {
    /// Decodes a whole datagram. Never panics; every malformed input gives a [`DecodeError`]
    /// naming the rule it breaks.
    pub fn decode(bytes: &'a [u8]) -> Result<Message<'a>, DecodeError> {
        if bytes.len() < HEADER_LEN {
            return Err(DecodeError::TruncatedHeader { len: bytes.len() });
        }
        let version = bytes[0] >> 6;
        if version != VERSION {
            return Err(DecodeError::UnsupportedVersion { version });
        }
        let mtype = MessageType::from_bits(bytes[0] >> 4);
        let tkl = bytes[0] & 0x0f;
        if tkl > 8 {
            return Err(DecodeError::InvalidTokenLength { tkl });
        }
        let code = Code(bytes[1]);
        let message_id = u16::from_be_bytes([bytes[2], bytes[3]]);
        // RFC 7252 §4.1: nothing may follow the message ID of an Empty message.
        if code.is_empty() && (tkl != 0 || bytes.len() > HEADER_LEN) {
            return Err(DecodeError::NonEmptyEmptyMessage);
        }
        let token_end = HEADER_LEN + tkl as usize;
        if bytes.len() < token_end {
            return Err(DecodeError::TruncatedToken {
                needed: tkl as usize,
                available: bytes.len() - HEADER_LEN,
            });
        }
        let (options, payload, present) = codec::split_options(&bytes[token_end..])?;
        Ok(Message {
            mtype,
            code,
            message_id,
            token: &bytes[HEADER_LEN..token_end],
            options: Options::from_validated(options, present),
            payload,
        })
    }

    /// The token as an inline value.
    pub fn token(&self) -> Token {
        // A decoded token has at most 8 bytes.
        Token::new(self.token).unwrap_or(Token::EMPTY)
    }

    /// Encoded length.
    pub fn encoded_len(&self) -> usize {
        HEADER_LEN
            + self.token.len()
            + self.options.as_bytes().len()
            + if self.payload.is_empty() {
                0
            } else {
                1 + self.payload.len()
            }
    }

    /// Re-encodes this view into `out` (a copy of the validated regions); returns the length.
    pub fn encode(&self, out: &mut [u8]) -> Result<usize, EncodeError> {
        let mut w = MessageWriter::new(out, self.mtype, self.code, self.message_id, self.token())?;
        w.cur.raw(w.out, self.options.as_bytes())?;
        w.payload(self.payload)
    }
}

impl ReadOptions for Message<'_> {
    fn option_iter(&self) -> impl Iterator<Item = (u16, &[u8])> {
        self.options.iter()
    }

    #[inline]
    fn may_hold(&self, number: u16) -> bool {
        self.options.may_hold(number)
    }
}

/// Encodes a datagram directly into a caller's buffer, options in non-decreasing order.
///
/// ```
/// use coaplab_wire::{Code, MessageType, MessageWriter, Token, option::number};
/// let mut buf = [0u8; 64];
/// let mut w = MessageWriter::new(&mut buf, MessageType::Ack, Code::CONTENT, 1, Token::EMPTY).unwrap();
/// w.option(number::CONTENT_FORMAT, &[]).unwrap();
/// let len = w.payload(b"22.5").unwrap();
/// assert_eq!(&buf[..len], [0x60, 0x45, 0x00, 0x01, 0xc0, 0xff, b'2', b'2', b'.', b'5']);
/// ```
#[derive(Debug)]
pub struct MessageWriter<'b> {
    out: &'b mut [u8],
    cur: BodyCursor,
    empty: bool,
}

impl<'b> MessageWriter<'b> {
    /// Writes the header and token.
    pub fn new(
        out: &'b mut [u8],
        mtype: MessageType,
        code: Code,
        message_id: u16,
        token: Token,
    ) -> Result<Self, EncodeError> {
        if code.is_empty() && !token.is_empty() {
            return Err(EncodeError::NonEmptyEmptyMessage);
        }
        let need = HEADER_LEN + token.len();
        if out.len() < need {
            return Err(EncodeError::BufferTooSmall {
                needed: need,
                available: out.len(),
            });
        }
        out[0] = (VERSION << 6) | (mtype.bits() << 4) | token.len() as u8;
        out[1] = code.0;
        out[2..4].copy_from_slice(&message_id.to_be_bytes());
        out[4..need].copy_from_slice(token.as_bytes());
        Ok(MessageWriter {
            out,
            cur: BodyCursor::new(need),
            empty: code.is_empty(),
        })
    }

    /// Appends an option; numbers must not decrease.
    pub fn option(&mut self, number: u16, value: &[u8]) -> Result<&mut Self, EncodeError> {
        if self.empty {
            return Err(EncodeError::NonEmptyEmptyMessage);
        }
        self.cur.option(self.out, number, value)?;
        Ok(self)
    }

    /// Appends a uint option in minimal form.
    pub fn option_uint(&mut self, number: u16, v: u32) -> Result<&mut Self, EncodeError> {
        if self.empty {
            return Err(EncodeError::NonEmptyEmptyMessage);
        }
        self.cur.option_uint(self.out, number, v)?;
        Ok(self)
    }

    /// Appends every option of a list (which is kept in order).
    pub fn options(&mut self, list: &OptionList) -> Result<&mut Self, EncodeError> {
        for (n, v) in list.iter() {
            self.option(n, v)?;
        }
        Ok(self)
    }

    /// Appends the payload (with its marker when non-empty) and returns the message length.
    pub fn payload(mut self, payload: &[u8]) -> Result<usize, EncodeError> {
        if self.empty && !payload.is_empty() {
            return Err(EncodeError::NonEmptyEmptyMessage);
        }
        self.cur.payload(self.out, payload)?;
        Ok(self.cur.pos)
    }

    /// Ends a message without payload; returns its length.
    pub fn finish(self) -> usize {
        self.cur.pos
    }
}

/// An owned datagram, for code that builds or keeps messages.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MessageBuf {
    /// CON, NON, ACK or RST.
    pub mtype: MessageType,
    /// Request method, response code, or 0.00.
    pub code: Code,
    /// The 16-bit message ID.
    pub message_id: u16,
    /// The token.
    pub token: Token,
    /// The options, kept in order.
    pub options: OptionList,
    /// The payload.
    pub payload: Vec<u8>,
}

impl MessageBuf {
    /// A message with no options and no payload.
    pub fn new(mtype: MessageType, code: Code, message_id: u16, token: Token) -> Self {
        MessageBuf {
            mtype,
            code,
            message_id,
            token,
            options: OptionList::new(),
            payload: Vec::new(),
        }
    }

    /// Encoded length.
    pub fn encoded_len(&self) -> usize {
        HEADER_LEN
            + self.token.len()
            + self.options.encoded_len()
            + if self.payload.is_empty() {
                0
            } else {
                1 + self.payload.len()
            }
    }

    /// Encodes into `out`; returns the length.
    pub fn encode(&self, out: &mut [u8]) -> Result<usize, EncodeError> {
        let mut w = MessageWriter::new(out, self.mtype, self.code, self.message_id, self.token)?;
        w.options(&self.options)?;
        w.payload(&self.payload)
    }

    /// Encodes into a new vector.
    pub fn to_bytes(&self) -> Result<Vec<u8>, EncodeError> {
        let mut out = vec![0; self.encoded_len()];
        let n = self.encode(&mut out)?;
        out.truncate(n);
        Ok(out)
    }
}

impl From<Message<'_>> for MessageBuf {
    fn from(m: Message<'_>) -> Self {
        MessageBuf {
            mtype: m.mtype,
            code: m.code,
            message_id: m.message_id,
            token: m.token(),
            options: m.options.into(),
            payload: m.payload.to_vec(),
        }
    }
}

impl ReadOptions for MessageBuf {
    fn option_iter(&self) -> impl Iterator<Item = (u16, &[u8])> {
        self.options.iter()
    }
}
