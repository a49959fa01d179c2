//! The uint option format: unsigned, network byte order, minimal length (RFC 7252 §3.2).

/// Decodes up to 4 bytes (callers check the length against the option's format first).
/// Leading zero bytes are tolerated on input, as RFC 7252 §3.2 asks of recipients.
pub fn decode(value: &[u8]) -> u64 {
    value.iter().fold(0u64, |acc, b| (acc << 8) | *b as u64)
}

/// Encodes `v` with no leading zero bytes into `out`; 0 encodes as zero bytes. Returns the
/// length used.
pub fn encode(v: u32, out: &mut [u8; 4]) -> usize {
    let bytes = v.to_be_bytes();
    let skip = (v.leading_zeros() / 8) as usize;
    let n = 4 - skip;
    out[..n].copy_from_slice(&bytes[skip..]);
    n
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn minimal_length() {
        let mut out = [0; 4];
        assert_eq!(encode(0, &mut out), 0);
        assert_eq!(encode(60, &mut out), 1);
        assert_eq!(encode(256, &mut out), 2);
        assert_eq!(&out[..2], [1, 0]);
        assert_eq!(encode(u32::MAX, &mut out), 4);
        assert_eq!(decode(&[0, 0, 1, 0]), 256);
        assert_eq!(decode(&[]), 0);
    }
}
