//! The Rexmit-Cnt option of FASOR (Globecom 2018; draft-ietf-core-fasor-02): every copy of a
//! request carries its ordinal in an elective option the server echoes in a piggybacked response.
//! The option number (65020 by default) is above every other option, so it is always the last one:
//! each copy is the stored original with this one option spliced in before the payload.
//! (Token marking needs no splicing: copies differ in the last token byte only.)

use coaplab_wire::{Message, ReadOptions};

/// The value an original carries while the destination is being probed.
pub(crate) const PROBE: u8 = 255;

/// Largest ordinal a retransmission can carry (255 is the probe).
const MAX_ORDINAL: u32 = 254;

/// What a destination is known to do with Rexmit-Cnt.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum RexmitPeer {
    /// No piggybacked response yet: originals probe with 255.
    Unknown,
    /// It echoes: originals carry the option empty (= 0), copy j carries j.
    Enabled,
    /// It does not echo: plain FASOR, no option.
    Disabled,
}

/// Where to splice the option into an exchange's stored original.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct RexmitLayout {
    /// The option number.
    pub(crate) option: u16,
    /// Byte offset of the end of the options (the payload marker, or the end).
    pub(crate) split: usize,
    /// The number of the last option before it (0 when there is none).
    pub(crate) last: u16,
    /// The original probes (carries 255).
    pub(crate) probe: bool,
}

impl RexmitLayout {
    /// The layout of an encoded message without the option; `None` if it does not decode or
    /// already has an option numbered at or above `option`.
    pub(crate) fn of(bytes: &[u8], option: u16, probe: bool) -> Option<RexmitLayout> {
        let m = Message::decode(bytes).ok()?;
        let last = m.options.iter().last().map_or(0, |(n, _)| n);
        if last >= option {
            return None;
        }
        Some(RexmitLayout {
            option,
            split: 4 + m.token.len() + m.options.as_bytes().len(),
            last,
            probe,
        })
    }

    /// Copy `ordinal` of `original` into `out`: the option holds 255 (probing original),
    /// nothing (original), or the ordinal.
    pub(crate) fn write_copy(&self, original: &[u8], ordinal: u32, out: &mut Vec<u8>) {
        let value: &[u8] = match ordinal {
            0 if self.probe => &[PROBE],
            0 => &[],
            j => &[j.min(MAX_ORDINAL) as u8],
        };
        out.extend_from_slice(&original[..self.split]);
        push_option(out, self.last, self.option, value);
        out.extend_from_slice(&original[self.split..]);
    }
}

/// The echoed value, if the message carries the option (empty = 0).
pub(crate) fn echo(msg: &Message<'_>, option: u16) -> Option<u32> {
    let v = msg.first(option)?;
    Some(v.iter().fold(0u32, |a, b| (a << 8) | *b as u32))
}

/// The copy an echo names: 255 is the probing original; otherwise the ordinal if it was sent.
pub(crate) fn answered(echo: u32, sent: u32) -> Option<u32> {
    match echo {
        255 => Some(0),
        j if j < sent => Some(j),
        _ => None,
    }
}

/// Appends option `number` (delta from `prev`) with a value of at most 12 bytes
/// (RFC 7252 §3.1 encoding).
fn push_option(out: &mut Vec<u8>, prev: u16, number: u16, value: &[u8]) {
    let delta = (number - prev) as u32;
    let len = value.len() as u8;
    match delta {
        0..=12 => out.push(((delta as u8) << 4) | len),
        13..=268 => out.extend_from_slice(&[0xd0 | len, (delta - 13) as u8]),
        _ => {
            let ext = (delta - 269) as u16;
            out.push(0xe0 | len);
            out.extend_from_slice(&ext.to_be_bytes());
        }
    }
    out.extend_from_slice(value);
}

#[cfg(test)]
mod tests {
    use super::*;
    use coaplab_wire::option::number;
    use coaplab_wire::{Code, MessageBuf, MessageType, Token};

    #[test]
    fn copies_splice_the_option_before_the_payload() {
        let mut m = MessageBuf::new(
            MessageType::Con,
            Code::POST,
            7,
            Token::new(&[1, 2]).unwrap(),
        );
        m.options.push(number::URI_PATH, "f");
        m.payload = vec![9; 3];
        let original = m.to_bytes().unwrap();
        let l = RexmitLayout::of(&original, 65020, true).unwrap();
        assert_eq!((l.split, l.last), (8, number::URI_PATH));
        for (ordinal, probe, value) in [
            (0, true, vec![255]),
            (0, false, vec![]),
            (3, false, vec![3]),
        ] {
            let mut out = Vec::new();
            RexmitLayout { probe, ..l }.write_copy(&original, ordinal, &mut out);
            let mut expected = m.clone();
            expected.options.push(65020, value.clone());
            assert_eq!(out, expected.to_bytes().unwrap());
            let d = Message::decode(&out).unwrap();
            let v = echo(&d, 65020).unwrap();
            assert_eq!(v, value.first().copied().unwrap_or(0) as u32);
        }
        assert_eq!(answered(255, 1), Some(0));
        assert_eq!(answered(2, 3), Some(2));
        assert_eq!(answered(3, 3), None);
    }
}
