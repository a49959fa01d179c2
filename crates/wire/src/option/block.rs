//! The Block1/Block2 option value (RFC 7959 §2.2) and BERT (RFC 8323 §6).

use core::fmt;

use super::uint;

/// A block option value: block number, more flag and size exponent.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Block {
    /// NUM: the block number, 0 ..= 2^20 - 1.
    pub num: u32,
    /// M: more blocks follow (Block2 in a response, Block1 in a request).
    pub more: bool,
    /// SZX: the size exponent, block size = 2^(SZX + 4). 7 is reserved in UDP and means BERT
    /// over reliable transports (RFC 8323 §6).
    pub szx: u8,
}

/// Why bytes are not a valid block option value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BlockError {
    /// More than 3 bytes (RFC 7959 §2.2: the value is a 0–3 byte uint).
    TooLong {
        /// Bytes given.
        len: usize,
    },
    /// SZX 7 over UDP (RFC 7959 §2.2: reserved; only RFC 8323 gives it a meaning, BERT).
    ReservedSzx,
}

impl fmt::Display for BlockError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            BlockError::TooLong { len } => {
                write!(f, "block option of {len} bytes (RFC 7959 §2.2: 0-3 bytes)")
            }
            BlockError::ReservedSzx => {
                f.write_str("SZX 7 is reserved over UDP (RFC 7959 §2.2; BERT is RFC 8323 §6 only)")
            }
        }
    }
}

impl std::error::Error for BlockError {}

impl Block {
    /// Largest block number: 20 bits (RFC 7959 §2.2).
    pub const MAX_NUM: u32 = (1 << 20) - 1;

    /// A block of `size_bytes` (16, 32, …, 1024); `None` if the size is not a power of two in
    /// that range.
    pub fn with_size(num: u32, more: bool, size_bytes: usize) -> Option<Block> {
        let szx = match size_bytes {
            16 => 0,
            32 => 1,
            64 => 2,
            128 => 3,
            256 => 4,
            512 => 5,
            1024 => 6,
            _ => return None,
        };
        Some(Block { num, more, szx })
    }

    /// Decodes a value that may be BERT (reliable transports, RFC 8323 §6).
    pub fn decode(value: &[u8]) -> Result<Block, BlockError> {
        if value.len() > 3 {
            return Err(BlockError::TooLong { len: value.len() });
        }
        let v = uint::decode(value) as u32;
        Ok(Block {
            num: v >> 4,
            more: v & 0x08 != 0,
            szx: (v & 0x07) as u8,
        })
    }

    /// Decodes a value received over UDP, where SZX 7 is reserved.
    pub fn decode_udp(value: &[u8]) -> Result<Block, BlockError> {
        let b = Block::decode(value)?;
        if b.is_bert() {
            return Err(BlockError::ReservedSzx);
        }
        Ok(b)
    }

    /// The uint value `NUM << 4 | M << 3 | SZX`, truncating NUM to 20 bits.
    pub fn to_uint(self) -> u32 {
        ((self.num & Self::MAX_NUM) << 4) | ((self.more as u32) << 3) | (self.szx as u32 & 7)
    }

    /// The minimal-length encoding (0–3 bytes) into `out`; returns the bytes used.
    pub fn encode(self, out: &mut [u8; 4]) -> usize {
        uint::encode(self.to_uint(), out)
    }

    /// SZX 7: BERT (RFC 8323 §6).
    pub fn is_bert(self) -> bool {
        self.szx == 7
    }

    /// Block size in bytes: 2^(SZX+4); BERT blocks are 1024 bytes each (RFC 8323 §6).
    pub fn size_bytes(self) -> usize {
        if self.is_bert() {
            1024
        } else {
            1 << (self.szx + 4)
        }
    }

    /// Offset of this block's first byte in the body (`NUM * size`).
    pub fn offset_bytes(self) -> usize {
        self.num as usize * self.size_bytes()
    }
}

impl fmt::Display for Block {
    /// RFC 7959's notation `NUM/M/SIZE`, e.g. `2/1/256`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.is_bert() {
            write!(f, "{}/{}/BERT", self.num, self.more as u8)
        } else {
            write!(f, "{}/{}/{}", self.num, self.more as u8, self.size_bytes())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn packs_num_more_szx() {
        // RFC 7959 §2.2: 0/1/128 is NUM 0, M 1, SZX 3 = 0x0b in one byte.
        let b = Block::with_size(0, true, 128).unwrap();
        let mut out = [0; 4];
        let n = b.encode(&mut out);
        assert_eq!(&out[..n], [0x0b]);
        // NUM 0, M 0, SZX 0 is the value 0: the empty encoding.
        assert_eq!(Block::with_size(0, false, 16).unwrap().encode(&mut out), 0);
        // 400/0/256: 400 << 4 | 4 = 0x1904, two bytes.
        let n = Block::with_size(400, false, 256).unwrap().encode(&mut out);
        assert_eq!(&out[..n], [0x19, 0x04]);
        assert_eq!(
            Block::decode(&[0x19, 0x04]).unwrap().to_string(),
            "400/0/256"
        );
    }

    #[test]
    fn szx_7_is_bert_over_tcp_and_reserved_over_udp() {
        assert_eq!(Block::decode_udp(&[0x0f]), Err(BlockError::ReservedSzx));
        let b = Block::decode(&[0x0f]).unwrap();
        assert!(b.is_bert() && b.more && b.size_bytes() == 1024);
    }

    #[test]
    fn four_bytes_are_too_long() {
        assert_eq!(
            Block::decode(&[0, 0, 0, 1]),
            Err(BlockError::TooLong { len: 4 })
        );
    }
}
