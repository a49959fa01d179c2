//! The 0–8 byte token (RFC 7252 §5.3.1), stored inline so messages need no allocation for it.

use core::fmt;

use crate::error::EncodeError;

/// A token of 0 to 8 bytes.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub struct Token {
    len: u8,
    bytes: [u8; 8],
}

impl Token {
    /// The zero-length token.
    pub const EMPTY: Token = Token {
        len: 0,
        bytes: [0; 8],
    };

    /// A token from up to 8 bytes.
    pub fn new(bytes: &[u8]) -> Result<Token, EncodeError> {
        if bytes.len() > 8 {
            return Err(EncodeError::TokenTooLong { len: bytes.len() });
        }
        let mut t = Token {
            len: bytes.len() as u8,
            bytes: [0; 8],
        };
        t.bytes[..bytes.len()].copy_from_slice(bytes);
        Ok(t)
    }

    /// The `len` low-order bytes of `v`, big-endian: a compact way to mint counters as tokens.
    pub fn from_u64(v: u64, len: usize) -> Token {
        let len = len.min(8);
        // The low `len` bytes shifted to the front, not copied: a copy of a length known only
        // at run time is a call of `memcpy`, and a client mints a token per exchange (issue
        // 35: ~25 instructions per exchange).
        let front = if len == 0 { 0 } else { v << (64 - 8 * len) };
        Token {
            len: len as u8,
            bytes: front.to_be_bytes(),
        }
    }

    /// The token bytes.
    pub fn as_bytes(&self) -> &[u8] {
        &self.bytes[..self.len as usize]
    }

    /// Length in bytes.
    pub fn len(&self) -> usize {
        self.len as usize
    }

    /// True for the zero-length token.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// This token with `byte` appended (FASOR+token marks transmission j as `base ‖ j`,
    /// Globecom 2018; draft-ietf-core-fasor-02); fails if the token already has 8 bytes.
    pub fn with_suffix(&self, byte: u8) -> Result<Token, EncodeError> {
        if self.len == 8 {
            return Err(EncodeError::TokenTooLong { len: 9 });
        }
        let mut t = *self;
        t.bytes[t.len as usize] = byte;
        t.len += 1;
        Ok(t)
    }
}

/// Hex, e.g. `0x4a1f`; `0x` for the empty token.
impl fmt::Debug for Token {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("0x")?;
        for b in self.as_bytes() {
            write!(f, "{b:02x}")?;
        }
        Ok(())
    }
}

impl fmt::Display for Token {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self, f)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_of_every_length_are_the_counters_low_bytes() {
        let v = 0x0102_0304_0506_0708u64;
        for len in 0..=9 {
            // What the shift must equal: the low bytes copied, the rest zero.
            let copied = Token::new(&v.to_be_bytes()[8 - len.min(8)..]).unwrap();
            assert_eq!(Token::from_u64(v, len), copied, "len {len}");
        }
        assert_eq!(Token::from_u64(v, 2).as_bytes(), [7, 8]);
        assert_eq!(Token::from_u64(v, 9).as_bytes(), v.to_be_bytes());
    }

    #[test]
    fn tokens_hold_up_to_eight_bytes() {
        assert_eq!(
            Token::new(&[1; 9]),
            Err(EncodeError::TokenTooLong { len: 9 })
        );
        let t = Token::from_u64(0x1234, 2);
        assert_eq!(t.as_bytes(), [0x12, 0x34]);
        assert_eq!(t.with_suffix(7).unwrap().as_bytes(), [0x12, 0x34, 7]);
        assert_eq!(t.to_string(), "0x1234");
        assert!(Token::from_u64(1, 8).with_suffix(0).is_err());
    }
}
