//! Decoding and encoding errors: one variant per broken rule, each naming its RFC section, so
//! malformed input is rejected with a reason and counted by cause.

use core::fmt;

/// Why bytes are not a valid CoAP message or frame. Every variant is a "message format error"
/// in the sense of RFC 7252 §4.2/§4.3 (or RFC 8323 §3.2 for the framing ones).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum DecodeError {
    /// Fewer than the 4 bytes of the fixed header (RFC 7252 §3).
    TruncatedHeader {
        /// Bytes present.
        len: usize,
    },
    /// Version is not 1 (RFC 7252 §3: such messages MUST be silently ignored).
    UnsupportedVersion {
        /// The version found.
        version: u8,
    },
    /// Token Length 9–15, reserved (RFC 7252 §3; RFC 8323 §3.2).
    InvalidTokenLength {
        /// The TKL nibble.
        tkl: u8,
    },
    /// The token runs past the end of the message (RFC 7252 §3).
    TruncatedToken {
        /// Token bytes announced.
        needed: usize,
        /// Bytes left.
        available: usize,
    },
    /// Option delta nibble 15 without length nibble 15 (RFC 7252 §3.1: reserved for the
    /// payload marker).
    ReservedOptionDelta,
    /// Option length nibble 15 (RFC 7252 §3.1: reserved).
    ReservedOptionLength,
    /// An option's extended delta, extended length or value runs past the end (RFC 7252 §3.1).
    TruncatedOption {
        /// Byte offset of the option's first byte within the options region.
        offset: usize,
    },
    /// The running option number exceeds 65535 (RFC 7252 §3.1: option numbers are 16 bits).
    OptionNumberOverflow {
        /// The number reached.
        number: u32,
    },
    /// A payload marker 0xFF followed by no payload (RFC 7252 §3).
    PayloadMarkerWithoutPayload,
    /// Code 0.00 with a token, options or payload (RFC 7252 §4.1).
    NonEmptyEmptyMessage,
    /// An RFC 8323 frame's Length field says more bytes follow than the frame holds
    /// (only from [`crate::frame::Frame::decode`] given a cut frame).
    TruncatedFrame {
        /// Bytes the frame needs.
        needed: usize,
        /// Bytes present.
        available: usize,
    },
    /// An RFC 8323 frame longer than the receiver accepts (its Max-Message-Size, RFC 8323 §5.3.1).
    FrameTooLarge {
        /// Frame length in bytes.
        len: u64,
        /// The limit.
        max: usize,
    },
    /// Bytes after a complete RFC 8323 frame were given to a single-frame decoder.
    TrailingBytes {
        /// Bytes beyond the frame.
        extra: usize,
    },
}

impl DecodeError {
    /// The rule broken, with its section: what a log line or a test should show.
    pub const fn rule(&self) -> &'static str {
        match self {
            DecodeError::TruncatedHeader { .. } => {
                "RFC 7252 §3: a message starts with a 4-byte header"
            }
            DecodeError::UnsupportedVersion { .. } => {
                "RFC 7252 §3: version MUST be 1; other versions are silently ignored"
            }
            DecodeError::InvalidTokenLength { .. } => {
                "RFC 7252 §3: token lengths 9-15 are reserved and processed as a message format error"
            }
            DecodeError::TruncatedToken { .. } => {
                "RFC 7252 §3: the token is TKL bytes long and follows the header"
            }
            DecodeError::ReservedOptionDelta => {
                "RFC 7252 §3.1: option delta 15 is reserved for the payload marker"
            }
            DecodeError::ReservedOptionLength => "RFC 7252 §3.1: option length 15 is reserved",
            DecodeError::TruncatedOption { .. } => {
                "RFC 7252 §3.1: an option's extended fields and value must fit in the message"
            }
            DecodeError::OptionNumberOverflow { .. } => {
                "RFC 7252 §3.1: option numbers are 16-bit (at most 65535)"
            }
            DecodeError::PayloadMarkerWithoutPayload => {
                "RFC 7252 §3: a payload marker followed by a zero-length payload is a message format error"
            }
            DecodeError::NonEmptyEmptyMessage => {
                "RFC 7252 §4.1: an Empty message (0.00) has TKL 0 and no bytes after the message ID"
            }
            DecodeError::TruncatedFrame { .. } => {
                "RFC 8323 §3.2: the frame is shorter than its Len field says"
            }
            DecodeError::FrameTooLarge { .. } => {
                "RFC 8323 §5.3.1: a message larger than Max-Message-Size is refused"
            }
            DecodeError::TrailingBytes { .. } => {
                "RFC 8323 §3.2: a frame's length is given by its Len field"
            }
        }
    }

    /// A short, stable label for counters and CSV columns, e.g. `reserved-option-delta`.
    pub const fn label(&self) -> &'static str {
        match self {
            DecodeError::TruncatedHeader { .. } => "truncated-header",
            DecodeError::UnsupportedVersion { .. } => "unsupported-version",
            DecodeError::InvalidTokenLength { .. } => "invalid-token-length",
            DecodeError::TruncatedToken { .. } => "truncated-token",
            DecodeError::ReservedOptionDelta => "reserved-option-delta",
            DecodeError::ReservedOptionLength => "reserved-option-length",
            DecodeError::TruncatedOption { .. } => "truncated-option",
            DecodeError::OptionNumberOverflow { .. } => "option-number-overflow",
            DecodeError::PayloadMarkerWithoutPayload => "payload-marker-without-payload",
            DecodeError::NonEmptyEmptyMessage => "non-empty-empty-message",
            DecodeError::TruncatedFrame { .. } => "truncated-frame",
            DecodeError::FrameTooLarge { .. } => "frame-too-large",
            DecodeError::TrailingBytes { .. } => "trailing-bytes",
        }
    }
}

impl fmt::Display for DecodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DecodeError::TruncatedHeader { len } => write!(f, "message of {len} bytes")?,
            DecodeError::UnsupportedVersion { version } => write!(f, "version {version}")?,
            DecodeError::InvalidTokenLength { tkl } => write!(f, "token length {tkl}")?,
            DecodeError::TruncatedToken { needed, available } => {
                write!(f, "token of {needed} bytes, {available} present")?
            }
            DecodeError::ReservedOptionDelta => f.write_str("option delta 15")?,
            DecodeError::ReservedOptionLength => f.write_str("option length 15")?,
            DecodeError::TruncatedOption { offset } => {
                write!(f, "option at offset {offset} is cut short")?
            }
            DecodeError::OptionNumberOverflow { number } => write!(f, "option number {number}")?,
            DecodeError::PayloadMarkerWithoutPayload => f.write_str("empty payload after 0xFF")?,
            DecodeError::NonEmptyEmptyMessage => f.write_str("Empty message with content")?,
            DecodeError::TruncatedFrame { needed, available } => {
                write!(f, "frame of {needed} bytes, {available} present")?
            }
            DecodeError::FrameTooLarge { len, max } => {
                write!(f, "frame of {len} bytes exceeds {max}")?
            }
            DecodeError::TrailingBytes { extra } => write!(f, "{extra} bytes after the frame")?,
        }
        write!(f, " ({})", self.rule())
    }
}

impl std::error::Error for DecodeError {}

/// Why a message could not be encoded.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum EncodeError {
    /// The output buffer is too small.
    BufferTooSmall {
        /// Bytes needed (at least).
        needed: usize,
        /// Bytes available.
        available: usize,
    },
    /// Options must be written in non-decreasing number order (RFC 7252 §3.1 delta encoding).
    OptionOutOfOrder {
        /// The previous option number.
        previous: u16,
        /// The option number written after it.
        number: u16,
    },
    /// An option value longer than 65804 bytes cannot be encoded (RFC 7252 §3.1).
    OptionTooLong {
        /// The option number.
        number: u16,
        /// Its value length.
        len: usize,
    },
    /// A token longer than 8 bytes (RFC 7252 §3).
    TokenTooLong {
        /// The length given.
        len: usize,
    },
    /// An Empty message (0.00) cannot carry a token, options or payload (RFC 7252 §4.1).
    NonEmptyEmptyMessage,
    /// An RFC 8323 frame body longer than the 32-bit extended length allows.
    FrameTooLong {
        /// Body length.
        len: usize,
    },
}

impl fmt::Display for EncodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            EncodeError::BufferTooSmall { needed, available } => write!(
                f,
                "output buffer too small: {needed} bytes needed, {available} available"
            ),
            EncodeError::OptionOutOfOrder { previous, number } => write!(
                f,
                "option {number} written after option {previous}: options must be in increasing order (RFC 7252 §3.1)"
            ),
            EncodeError::OptionTooLong { number, len } => write!(
                f,
                "option {number} value of {len} bytes exceeds 65804 (RFC 7252 §3.1)"
            ),
            EncodeError::TokenTooLong { len } => {
                write!(f, "token of {len} bytes exceeds 8 (RFC 7252 §3)")
            }
            EncodeError::NonEmptyEmptyMessage => f.write_str(
                "an Empty message (0.00) carries no token, options or payload (RFC 7252 §4.1)",
            ),
            EncodeError::FrameTooLong { len } => write!(
                f,
                "frame body of {len} bytes exceeds the 32-bit extended length (RFC 8323 §3.2)"
            ),
        }
    }
}

impl std::error::Error for EncodeError {}
