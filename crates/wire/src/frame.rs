//! RFC 8323 frames for CoAP over TCP/TLS/WebSockets-less streams.
//!
//! ```text
//! |  Len  |  TKL  | Extended Length (0/1/2/4 bytes) |  Code  | Token (TKL bytes) |
//! |  Options (if any) ...  |1 1 1 1 1 1 1 1|  Payload (if any) ...               RFC 8323 §3.2
//! ```
//!
//! `Len` counts the options, payload marker and payload. Nibble 13 adds an 8-bit extended
//! length (+13), 14 a 16-bit one (+269), 15 a 32-bit one (+65805).
//!
//! A stream reader appends received bytes to one buffer and asks [`Frame::decode_stream`]:
//! either "need N more bytes" or a frame borrowed from the buffer plus the bytes it used, so
//! no frame is ever copied out of the receive buffer before it is parsed.
//!
//! ```
//! use coaplab_wire::frame::{Decoded, Frame, FrameBuf};
//! use coaplab_wire::{Code, Token};
//! let bytes = FrameBuf::new(Code::GET, Token::new(&[1]).unwrap()).to_bytes().unwrap();
//! assert_eq!(Frame::decode_stream(&bytes[..1], 1 << 20).unwrap(), Decoded::NeedMore(2));
//! match Frame::decode_stream(&bytes, 1 << 20).unwrap() {
//!     Decoded::Frame { frame, consumed } => assert_eq!((frame.code, consumed), (Code::GET, 3)),
//!     Decoded::NeedMore(_) => unreachable!(),
//! }
//! ```

use crate::code::Code;
use crate::error::{DecodeError, EncodeError};
use crate::option::codec::{self, BodyCursor};
use crate::option::{OptionList, Options, ReadOptions};
use crate::token::Token;

/// A decoded frame borrowing the input bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Frame<'a> {
    /// Request method, response code, signalling code (7.xx) or 0.00.
    pub code: Code,
    /// The token bytes (0–8).
    pub token: &'a [u8],
    /// The options.
    pub options: Options<'a>,
    /// The payload (empty when there is none).
    pub payload: &'a [u8],
}

/// The result of looking at the front of a stream buffer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Decoded<'a> {
    /// At least this many more bytes are needed before anything can be decoded.
    NeedMore(usize),
    /// A complete frame, and how many bytes of the buffer it took.
    Frame {
        /// The frame.
        frame: Frame<'a>,
        /// Bytes to drop from the front of the buffer.
        consumed: usize,
    },
}

/// The front of a frame whose payload is still arriving ([`Frame::decode_start`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FrameStart<'a> {
    /// Code, token and options; `payload` holds the payload bytes present so far.
    pub frame: Frame<'a>,
    /// Bytes from the frame's first byte to its payload's first (the marker included).
    pub head_len: usize,
    /// The whole frame's length in bytes.
    pub total: usize,
}

impl FrameStart<'_> {
    /// The whole payload's length in bytes.
    pub fn payload_len(&self) -> usize {
        self.total - self.head_len
    }
}

/// The header fields that fix a frame's length.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Head {
    /// Bytes before the token: Len/TKL byte, extended length, code.
    fixed_len: usize,
    tkl: usize,
    body_len: u64,
}

impl Head {
    fn total(&self) -> u64 {
        self.fixed_len as u64 + self.tkl as u64 + self.body_len
    }
}

/// Reads the header, or says how many more bytes it needs.
fn read_head(buf: &[u8]) -> Result<Result<Head, usize>, DecodeError> {
    let Some(&first) = buf.first() else {
        return Ok(Err(1));
    };
    let tkl = first & 0x0f;
    if tkl > 8 {
        return Err(DecodeError::InvalidTokenLength { tkl });
    }
    let ext_len = match first >> 4 {
        0..=12 => 0,
        13 => 1,
        14 => 2,
        _ => 4,
    };
    let fixed_len = 1 + ext_len + 1;
    if buf.len() < 1 + ext_len {
        return Ok(Err(fixed_len - buf.len()));
    }
    let ext = &buf[1..1 + ext_len];
    let body_len = match first >> 4 {
        n @ 0..=12 => n as u64,
        13 => ext[0] as u64 + 13,
        14 => u16::from_be_bytes([ext[0], ext[1]]) as u64 + 269,
        _ => u32::from_be_bytes([ext[0], ext[1], ext[2], ext[3]]) as u64 + 65805,
    };
    Ok(Ok(Head {
        fixed_len,
        tkl: tkl as usize,
        body_len,
    }))
}

impl<'a> Frame<'a> {
    /// Looks at the front of a stream buffer: a complete frame, or how many more bytes are
    /// needed. Frames longer than `max_frame_bytes` are refused as soon as their header shows
    /// it, so a hostile length never makes the reader buffer gigabytes.
    pub fn decode_stream(
        buf: &'a [u8],
        max_frame_bytes: usize,
    ) -> Result<Decoded<'a>, DecodeError> {
        let head = match read_head(buf)? {
            Ok(h) => h,
            Err(need) => return Ok(Decoded::NeedMore(need)),
        };
        let total = head.total();
        if total > max_frame_bytes as u64 {
            return Err(DecodeError::FrameTooLarge {
                len: total,
                max: max_frame_bytes,
            });
        }
        let total = total as usize;
        if buf.len() < total {
            return Ok(Decoded::NeedMore(total - buf.len()));
        }
        let frame = Self::parse_body(&buf[..total], &head)?;
        Ok(Decoded::Frame {
            frame,
            consumed: total,
        })
    }

    /// Looks at a stream buffer holding the front of a frame but not all of it: the frame's
    /// code, token and options once they and the payload marker have arrived, so a reader
    /// that keeps no payloads can count the rest of the frame's bytes instead of buffering
    /// them. `None` while they have not, and for a frame that is complete (read it with
    /// [`Frame::decode_stream`]), longer than `max_frame_bytes`, without a payload, or with
    /// malformed options ([`Frame::decode_stream`] reports those once it is whole).
    ///
    /// ```
    /// use coaplab_wire::frame::{Frame, FrameBuf};
    /// use coaplab_wire::{Code, Token};
    /// let mut f = FrameBuf::new(Code::CONTENT, Token::new(&[7]).unwrap());
    /// f.payload = vec![0xab; 1_000];
    /// let bytes = f.to_bytes().unwrap();
    /// assert_eq!(Frame::decode_start(&bytes[..3], 1 << 20), None);
    /// let start = Frame::decode_start(&bytes[..100], 1 << 20).unwrap();
    /// assert_eq!((start.frame.code, start.head_len, start.total), (Code::CONTENT, 6, 1_006));
    /// assert_eq!((start.frame.payload.len(), start.payload_len()), (94, 1_000));
    /// assert_eq!(Frame::decode_start(&bytes, 1 << 20), None);
    /// ```
    pub fn decode_start(buf: &'a [u8], max_frame_bytes: usize) -> Option<FrameStart<'a>> {
        let head = read_head(buf).ok()?.ok()?;
        let total = head.total();
        if total > max_frame_bytes as u64 || buf.len() as u64 >= total {
            return None;
        }
        let total = total as usize;
        let token_end = head.fixed_len + head.tkl;
        let region = buf.get(token_end..)?;
        let (marker, present) = codec::payload_marker_in_prefix(region)?;
        let head_len = token_end + marker + 1;
        Some(FrameStart {
            frame: Frame {
                code: Code(buf[head.fixed_len - 1]),
                token: &buf[head.fixed_len..token_end],
                options: Options::from_validated(&region[..marker], present),
                payload: &buf[head_len..],
            },
            head_len,
            total,
        })
    }

    /// Decodes exactly one frame that fills `bytes`.
    pub fn decode(bytes: &'a [u8]) -> Result<Frame<'a>, DecodeError> {
        let head = match read_head(bytes)? {
            Ok(h) => h,
            Err(need) => {
                return Err(DecodeError::TruncatedFrame {
                    needed: bytes.len() + need,
                    available: bytes.len(),
                })
            }
        };
        let total = head.total();
        if (bytes.len() as u64) < total {
            return Err(DecodeError::TruncatedFrame {
                needed: total.min(usize::MAX as u64) as usize,
                available: bytes.len(),
            });
        }
        if (bytes.len() as u64) > total {
            return Err(DecodeError::TrailingBytes {
                extra: bytes.len() - total as usize,
            });
        }
        Self::parse_body(bytes, &head)
    }

    /// `bytes` is exactly the frame described by `head`.
    fn parse_body(bytes: &'a [u8], head: &Head) -> Result<Frame<'a>, DecodeError> {
        let code = Code(bytes[head.fixed_len - 1]);
        let token_end = head.fixed_len + head.tkl;
        let (options, payload, present) = codec::split_options(&bytes[token_end..])?;
        Ok(Frame {
            code,
            token: &bytes[head.fixed_len..token_end],
            options: Options::from_validated(options, present),
            payload,
        })
    }

    /// The token as an inline value.
    pub fn token(&self) -> Token {
        Token::new(self.token).unwrap_or(Token::EMPTY)
    }
}

impl ReadOptions for Frame<'_> {
    fn option_iter(&self) -> impl Iterator<Item = (u16, &[u8])> {
        self.options.iter()
    }

    #[inline]
    fn may_hold(&self, number: u16) -> bool {
        self.options.may_hold(number)
    }
}

/// Bytes of the Len/TKL byte plus the extended length for a body of `body_len` bytes.
fn length_field_len(body_len: usize) -> usize {
    match body_len {
        0..=12 => 1,
        13..=268 => 2,
        269..=65804 => 3,
        _ => 5,
    }
}

/// Encoded length of a whole frame with a `token_len`-B token and `body_len` bytes counted by
/// the Len field (options, payload marker and payload; RFC 8323 §3.2), e.g. what a peer's
/// Max-Message-Size must admit for a response of known size.
///
/// ```
/// // docs/experiments.md §5.1: a 102,400-B payload behind a 1-B token is a 102,408-B frame.
/// assert_eq!(coaplab_wire::frame::frame_len(1, 1 + 102_400), 102_408);
/// ```
pub fn frame_len(token_len: usize, body_len: usize) -> usize {
    length_field_len(body_len) + 1 + token_len + body_len
}

/// Writes the Len/TKL byte and the extended length into `out` (sized by
/// [`length_field_len`]).
fn write_length_field(out: &mut [u8], body_len: usize, tkl: u8) -> Result<(), EncodeError> {
    match body_len {
        0..=12 => out[0] = ((body_len as u8) << 4) | tkl,
        13..=268 => {
            out[0] = (13 << 4) | tkl;
            out[1] = (body_len - 13) as u8;
        }
        269..=65804 => {
            out[0] = (14 << 4) | tkl;
            out[1..3].copy_from_slice(&((body_len - 269) as u16).to_be_bytes());
        }
        _ => {
            let ext = u32::try_from(body_len - 65805)
                .map_err(|_| EncodeError::FrameTooLong { len: body_len })?;
            out[0] = (15 << 4) | tkl;
            out[1..5].copy_from_slice(&ext.to_be_bytes());
        }
    }
    Ok(())
}

/// Largest header: Len/TKL, 4-byte extended length, code, 8-byte token.
const MAX_HEAD: usize = 1 + 4 + 1;

/// Encodes a frame into a caller's buffer. The body is written first behind room for the
/// largest header; [`FrameWriter::payload`] then writes the real header and slides the frame
/// to the start of the buffer.
#[derive(Debug)]
pub struct FrameWriter<'b> {
    out: &'b mut [u8],
    code: Code,
    token: Token,
    body_start: usize,
    cur: BodyCursor,
}

impl<'b> FrameWriter<'b> {
    /// Starts a frame.
    pub fn new(out: &'b mut [u8], code: Code, token: Token) -> Result<Self, EncodeError> {
        let body_start = MAX_HEAD + token.len();
        if out.len() < body_start {
            return Err(EncodeError::BufferTooSmall {
                needed: body_start,
                available: out.len(),
            });
        }
        Ok(FrameWriter {
            out,
            code,
            token,
            body_start,
            cur: BodyCursor::new(body_start),
        })
    }

    /// Appends an option; numbers must not decrease.
    pub fn option(&mut self, number: u16, value: &[u8]) -> Result<&mut Self, EncodeError> {
        self.cur.option(self.out, number, value)?;
        Ok(self)
    }

    /// Appends a uint option in minimal form.
    pub fn option_uint(&mut self, number: u16, v: u32) -> Result<&mut Self, EncodeError> {
        self.cur.option_uint(self.out, number, v)?;
        Ok(self)
    }

    /// Appends every option of a list.
    pub fn options(&mut self, list: &OptionList) -> Result<&mut Self, EncodeError> {
        for (n, v) in list.iter() {
            self.option(n, v)?;
        }
        Ok(self)
    }

    /// Appends the payload, writes the header and returns the frame's length, which now
    /// starts at the beginning of the buffer.
    pub fn payload(mut self, payload: &[u8]) -> Result<usize, EncodeError> {
        self.cur.payload(self.out, payload)?;
        let pos = self.cur.pos;
        let body_len = pos - self.body_start;
        let lf = length_field_len(body_len);
        let head_len = lf + 1 + self.token.len();
        let start = self.body_start - head_len;
        write_length_field(&mut self.out[start..], body_len, self.token.len() as u8)?;
        self.out[start + lf] = self.code.0;
        self.out[start + lf + 1..self.body_start].copy_from_slice(self.token.as_bytes());
        self.out.copy_within(start..pos, 0);
        Ok(pos - start)
    }

    /// Ends a frame without payload.
    pub fn finish(self) -> Result<usize, EncodeError> {
        self.payload(&[])
    }
}

/// An owned frame.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FrameBuf {
    /// The code.
    pub code: Code,
    /// The token.
    pub token: Token,
    /// The options.
    pub options: OptionList,
    /// The payload.
    pub payload: Vec<u8>,
}

impl FrameBuf {
    /// A frame with no options and no payload.
    pub fn new(code: Code, token: Token) -> Self {
        FrameBuf {
            code,
            token,
            options: OptionList::new(),
            payload: Vec::new(),
        }
    }

    /// Bytes counted by the Len field: options, marker and payload.
    pub fn body_len(&self) -> usize {
        self.options.encoded_len()
            + if self.payload.is_empty() {
                0
            } else {
                1 + self.payload.len()
            }
    }

    /// Encoded length of the whole frame.
    pub fn encoded_len(&self) -> usize {
        frame_len(self.token.len(), self.body_len())
    }

    /// Encodes into `out`; returns the length. Needs `encoded_len()` bytes plus up to 4 bytes
    /// of working room for the header.
    pub fn encode(&self, out: &mut [u8]) -> Result<usize, EncodeError> {
        let mut w = FrameWriter::new(out, self.code, self.token)?;
        w.options(&self.options)?;
        w.payload(&self.payload)
    }

    /// Encodes into a new vector.
    pub fn to_bytes(&self) -> Result<Vec<u8>, EncodeError> {
        let mut out = vec![0; self.encoded_len() + MAX_HEAD];
        let n = self.encode(&mut out)?;
        out.truncate(n);
        Ok(out)
    }
}

impl From<Frame<'_>> for FrameBuf {
    fn from(f: Frame<'_>) -> Self {
        FrameBuf {
            code: f.code,
            token: f.token(),
            options: f.options.into(),
            payload: f.payload.to_vec(),
        }
    }
}

impl ReadOptions for FrameBuf {
    fn option_iter(&self) -> impl Iterator<Item = (u16, &[u8])> {
        self.options.iter()
    }
}
