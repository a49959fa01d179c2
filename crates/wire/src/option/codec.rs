//! The option delta/length encoding shared by RFC 7252 datagrams and RFC 8323 frames
//! (RFC 7252 §3.1; RFC 8323 §3.2 reuses it unchanged).

use crate::error::{DecodeError, EncodeError};

/// The byte that separates options from the payload (RFC 7252 §3).
pub(crate) const PAYLOAD_MARKER: u8 = 0xff;

/// Which option numbers a validated options region holds, as a bit set found by the scan that
/// validates it: bit `n` for a number `n` below 63, bit 63 for any number from 63 up. A
/// lookup of a number whose bit is clear needs no walk over the options: most of a request's
/// and a response's lookups are of options it does not carry (Block1, Block2, Observe, Echo,
/// Accept, Size1, ...), and each walk decoded every option header before the number.
#[derive(Clone, Copy, PartialEq, Eq, Default)]
pub(crate) struct Present(u64);

impl Present {
    /// The bit standing for `number`.
    #[inline]
    fn bit(number: u32) -> u64 {
        1 << number.min(63)
    }

    /// Whether an option `number` may be in the region (`false`: certainly not).
    #[inline]
    pub(crate) fn may_hold(self, number: u16) -> bool {
        self.0 & Present::bit(u32::from(number)) != 0
    }
}

/// Validates the options region at the start of `bytes` (everything after the token) and
/// splits it from the payload. Returns `(options, payload, which numbers the options hold)`;
/// `options` holds only well-formed options, so iterating over it cannot fail.
pub(crate) fn split_options(bytes: &[u8]) -> Result<(&[u8], &[u8], Present), DecodeError> {
    match find_payload_marker(bytes)? {
        // RFC 7252 §3: a marker followed by nothing is a format error.
        (Some(pos), _) if pos + 1 == bytes.len() => Err(DecodeError::PayloadMarkerWithoutPayload),
        (Some(pos), present) => Ok((&bytes[..pos], &bytes[pos + 1..], present)),
        (None, present) => Ok((bytes, &[], present)),
    }
}

/// Where the payload marker lies in the first bytes of an options region (`prefix`; the
/// region goes on beyond it), and which numbers the options before it hold: `Some` once every
/// option before the marker is present and well formed, `None` while one is incomplete or
/// the prefix holds no marker yet, and for malformed options, which [`split_options`] reports
/// once the region is whole. The offset is the one [`split_options`] finds in the whole
/// region (the same scan).
pub(crate) fn payload_marker_in_prefix(prefix: &[u8]) -> Option<(usize, Present)> {
    match find_payload_marker(prefix) {
        Ok((Some(pos), present)) => Some((pos, present)),
        _ => None,
    }
}

/// Walks the options at the start of `bytes`, checking each: the offset of the payload
/// marker (`None` when the options run to the end of `bytes`) and the numbers seen before it.
#[inline]
fn find_payload_marker(bytes: &[u8]) -> Result<(Option<usize>, Present), DecodeError> {
    let mut pos = 0;
    let mut number: u32 = 0;
    let mut present = 0;
    while pos < bytes.len() {
        if bytes[pos] == PAYLOAD_MARKER {
            return Ok((Some(pos), Present(present)));
        }
        let (delta, len, next) = read_header(bytes, pos)?;
        number += delta;
        if number > u16::MAX as u32 {
            return Err(DecodeError::OptionNumberOverflow { number });
        }
        present |= Present::bit(number);
        let end = next + len;
        if end > bytes.len() {
            return Err(DecodeError::TruncatedOption { offset: pos });
        }
        pos = end;
    }
    Ok((None, Present(present)))
}

/// Reads one option header at `pos` (the byte there is not the payload marker).
/// Returns `(delta, value length, offset of the value)`.
#[inline]
fn read_header(bytes: &[u8], pos: usize) -> Result<(u32, usize, usize), DecodeError> {
    let first = bytes[pos];
    let mut at = pos + 1;
    let delta = read_extended(
        bytes,
        first >> 4,
        &mut at,
        pos,
        DecodeError::ReservedOptionDelta,
    )?;
    let len = read_extended(
        bytes,
        first & 0x0f,
        &mut at,
        pos,
        DecodeError::ReservedOptionLength,
    )?;
    Ok((delta, len as usize, at))
}

/// RFC 7252 §3.1: nibble 0–12 is the value; 13 adds one byte (+13); 14 adds two (+269); 15 is
/// reserved (the caller already handled the 0xFF payload marker).
#[inline]
fn read_extended(
    bytes: &[u8],
    nibble: u8,
    at: &mut usize,
    option_start: usize,
    reserved: DecodeError,
) -> Result<u32, DecodeError> {
    match nibble {
        0..=12 => Ok(nibble as u32),
        13 => {
            let b = *bytes.get(*at).ok_or(DecodeError::TruncatedOption {
                offset: option_start,
            })?;
            *at += 1;
            Ok(b as u32 + 13)
        }
        14 => {
            if *at + 2 > bytes.len() {
                return Err(DecodeError::TruncatedOption {
                    offset: option_start,
                });
            }
            let v = u16::from_be_bytes([bytes[*at], bytes[*at + 1]]);
            *at += 2;
            Ok(v as u32 + 269)
        }
        _ => Err(reserved),
    }
}

/// Iterates over a region already validated by [`split_options`].
#[derive(Debug, Clone)]
pub struct OptionIter<'a> {
    bytes: &'a [u8],
    pos: usize,
    number: u16,
}

impl<'a> OptionIter<'a> {
    pub(crate) fn new(validated: &'a [u8]) -> Self {
        OptionIter {
            bytes: validated,
            pos: 0,
            number: 0,
        }
    }
}

impl<'a> Iterator for OptionIter<'a> {
    type Item = (u16, &'a [u8]);

    #[inline]
    fn next(&mut self) -> Option<Self::Item> {
        if self.pos >= self.bytes.len() {
            return None;
        }
        // The region was validated, so this cannot fail; stop quietly if it somehow does.
        let (delta, len, at) = read_header(self.bytes, self.pos).ok()?;
        self.number = self.number.wrapping_add(delta as u16);
        self.pos = at + len;
        Some((self.number, self.bytes.get(at..at + len)?))
    }
}

/// Bytes the extended field of `v` takes (0, 1 or 2).
#[inline]
const fn extended_len(v: usize) -> usize {
    if v < 13 {
        0
    } else if v < 269 {
        1
    } else {
        2
    }
}

/// Largest delta or length one option header can express: 65535 + 269.
pub(crate) const MAX_EXTENDED: usize = 65535 + 269;

/// Encoded size of an option with `delta` from the previous number and a `len`-byte value.
#[inline]
pub(crate) const fn encoded_len(delta: u16, len: usize) -> usize {
    1 + extended_len(delta as usize) + extended_len(len) + len
}

#[inline]
fn nibble_and_ext(v: usize) -> (u8, [u8; 2], usize) {
    if v < 13 {
        (v as u8, [0, 0], 0)
    } else if v < 269 {
        (13, [(v - 13) as u8, 0], 1)
    } else {
        let e = ((v - 269) as u16).to_be_bytes();
        (14, e, 2)
    }
}

/// Writes one option at `out[*pos..]`, advancing `pos`. Uses the shortest header form.
pub(crate) fn write_option(
    out: &mut [u8],
    pos: &mut usize,
    previous: u16,
    number: u16,
    value: &[u8],
) -> Result<(), EncodeError> {
    if number < previous {
        return Err(EncodeError::OptionOutOfOrder { previous, number });
    }
    if value.len() > MAX_EXTENDED {
        return Err(EncodeError::OptionTooLong {
            number,
            len: value.len(),
        });
    }
    let delta = number - previous;
    let need = encoded_len(delta, value.len());
    let available = out.len().saturating_sub(*pos);
    if need > available {
        return Err(EncodeError::BufferTooSmall {
            needed: *pos + need,
            available: out.len(),
        });
    }
    let (dn, de, dl) = nibble_and_ext(delta as usize);
    let (ln, le, ll) = nibble_and_ext(value.len());
    let mut at = *pos;
    out[at] = (dn << 4) | ln;
    at += 1;
    out[at..at + dl].copy_from_slice(&de[..dl]);
    at += dl;
    out[at..at + ll].copy_from_slice(&le[..ll]);
    at += ll;
    out[at..at + value.len()].copy_from_slice(value);
    *pos = at + value.len();
    Ok(())
}

/// Where the next option or payload byte goes and the last option number written: the state
/// the datagram writer and the frame writer share.
#[derive(Debug, Clone, Copy)]
pub(crate) struct BodyCursor {
    /// Offset of the next byte in the output buffer.
    pub(crate) pos: usize,
    last_number: u16,
}

impl BodyCursor {
    /// A cursor whose body starts at `pos`.
    pub(crate) fn new(pos: usize) -> Self {
        BodyCursor {
            pos,
            last_number: 0,
        }
    }

    /// Appends an option; numbers must not decrease.
    pub(crate) fn option(
        &mut self,
        out: &mut [u8],
        number: u16,
        value: &[u8],
    ) -> Result<(), EncodeError> {
        write_option(out, &mut self.pos, self.last_number, number, value)?;
        self.last_number = number;
        Ok(())
    }

    /// Appends a uint option in its minimal encoding.
    pub(crate) fn option_uint(
        &mut self,
        out: &mut [u8],
        number: u16,
        v: u32,
    ) -> Result<(), EncodeError> {
        let mut b = [0; 4];
        let n = super::uint::encode(v, &mut b);
        self.option(out, number, &b[..n])
    }

    /// Copies an options region that is already encoded; no option may follow it.
    pub(crate) fn raw(&mut self, out: &mut [u8], encoded: &[u8]) -> Result<(), EncodeError> {
        self.copy(out, encoded)?;
        self.last_number = u16::MAX;
        Ok(())
    }

    /// Appends the payload behind its marker; an empty payload writes nothing.
    pub(crate) fn payload(&mut self, out: &mut [u8], payload: &[u8]) -> Result<(), EncodeError> {
        if payload.is_empty() {
            return Ok(());
        }
        self.copy(out, &[PAYLOAD_MARKER])?;
        self.copy(out, payload)
    }

    fn copy(&mut self, out: &mut [u8], bytes: &[u8]) -> Result<(), EncodeError> {
        let end = self.pos + bytes.len();
        let available = out.len();
        let dst = out
            .get_mut(self.pos..end)
            .ok_or(EncodeError::BufferTooSmall {
                needed: end,
                available,
            })?;
        dst.copy_from_slice(bytes);
        self.pos = end;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_region_without_options_is_split_as_the_scan_splits_it() {
        // Nothing, or the marker first (most responses): the scan's answers, RFC 7252 §3's.
        for bytes in [
            &[][..],
            &[0xff],
            &[0xff, 1],
            &[0xff, 0xff, 7],
            &[0xb1, b'a', 0xff, 9],
        ] {
            let scanned = match find_payload_marker(bytes) {
                Ok((Some(pos), _)) if pos + 1 == bytes.len() => None,
                Ok((Some(pos), p)) => Some((&bytes[..pos], &bytes[pos + 1..], p)),
                Ok((None, p)) => Some((bytes, &[][..], p)),
                Err(_) => unreachable!(),
            };
            assert!(split_options(bytes).ok() == scanned, "{bytes:?}");
        }
        let split = split_options(&[0xff, 1, 2]).unwrap();
        assert!(split == (&[][..], &[1u8, 2][..], Present::default()));
        assert!(matches!(
            split_options(&[0xff]),
            Err(DecodeError::PayloadMarkerWithoutPayload)
        ));
    }

    fn encode_one(number: u16, value: &[u8]) -> Vec<u8> {
        let mut buf = vec![0; 70_000];
        let mut pos = 0;
        write_option(&mut buf, &mut pos, 0, number, value).unwrap();
        buf.truncate(pos);
        buf
    }

    #[test]
    fn delta_12_fits_the_nibble() {
        // RFC 7252 §3.1: deltas 0-12 are the nibble itself.
        assert_eq!(encode_one(12, &[0x2a]), [0xc1, 0x2a]);
    }

    #[test]
    fn delta_13_and_268_use_the_one_byte_form() {
        // RFC 7252 §3.1: nibble 13, extended byte = delta - 13.
        assert_eq!(encode_one(13, &[]), [0xd0, 0x00]);
        assert_eq!(encode_one(268, &[]), [0xd0, 0xff]);
    }

    #[test]
    fn delta_269_and_up_use_the_two_byte_form() {
        // RFC 7252 §3.1: nibble 14, extended 16-bit = delta - 269.
        assert_eq!(encode_one(269, &[]), [0xe0, 0x00, 0x00]);
        assert_eq!(encode_one(65535, &[]), [0xe0, 0xfe, 0xf2]);
    }

    #[test]
    fn long_values_use_extended_lengths() {
        let v13 = encode_one(1, &[7; 13]);
        assert_eq!(&v13[..2], [0x1d, 0x00]);
        let v300 = encode_one(1, &[7; 300]);
        assert_eq!(&v300[..3], [0x1e, 0x00, 31]);
        assert_eq!(v300.len(), 303);
    }

    #[test]
    fn iterator_accumulates_deltas() {
        let mut buf = [0u8; 32];
        let mut pos = 0;
        write_option(&mut buf, &mut pos, 0, 11, b"a").unwrap();
        write_option(&mut buf, &mut pos, 11, 11, b"b").unwrap();
        write_option(&mut buf, &mut pos, 11, 300, b"").unwrap();
        let (opts, payload, present) = split_options(&buf[..pos]).unwrap();
        assert!(present.may_hold(11) && present.may_hold(300) && present.may_hold(64));
        assert!(!present.may_hold(0) && !present.may_hold(12) && !present.may_hold(62));
        assert!(payload.is_empty());
        let got: Vec<_> = OptionIter::new(opts).collect();
        assert_eq!(got, [(11, &b"a"[..]), (11, &b"b"[..]), (300, &b""[..])]);
    }

    #[test]
    fn out_of_order_is_refused() {
        let mut buf = [0u8; 8];
        let mut pos = 0;
        assert_eq!(
            write_option(&mut buf, &mut pos, 11, 3, b""),
            Err(EncodeError::OptionOutOfOrder {
                previous: 11,
                number: 3
            })
        );
    }
}
