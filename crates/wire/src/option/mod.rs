//! CoAP options: numbers and classification, the delta/length codec, typed accessors, and an
//! owned list for building messages.
//!
//! Two containers implement [`ReadOptions`]: [`Options`], a zero-copy view into a decoded
//! message, and [`OptionList`], an owned, ordered list for composing one. Unknown options are
//! kept in order in both; typed accessors check each value against its registered format
//! (RFC 7252 §5.4.3: a value of the wrong length is treated like an unrecognised option, so
//! accessors report it as an [`OptionValueError`] rather than guessing).

pub mod block;
pub(crate) mod codec;
pub mod number;
pub mod uint;

use core::fmt;

pub use block::{Block, BlockError};
pub use codec::OptionIter;
pub use number::{format_of, OptionFormat, ValueFormat};

/// A zero-copy view of a validated options region.
#[derive(Clone, Copy, PartialEq, Eq, Default)]
pub struct Options<'a> {
    bytes: &'a [u8],
    /// The numbers `bytes` holds (a function of `bytes`, found when they were validated).
    present: codec::Present,
}

impl<'a> Options<'a> {
    /// Wraps bytes that [`codec::split_options`] validated, holding `present`.
    pub(crate) fn from_validated(bytes: &'a [u8], present: codec::Present) -> Self {
        Options { bytes, present }
    }

    /// The raw encoded region (delta/length form), for copying into another message.
    pub fn as_bytes(&self) -> &'a [u8] {
        self.bytes
    }

    /// `(number, value)` in wire order (non-decreasing numbers).
    pub fn iter(&self) -> OptionIter<'a> {
        OptionIter::new(self.bytes)
    }

    /// True when there are no options.
    pub fn is_empty(&self) -> bool {
        self.bytes.is_empty()
    }
}

impl fmt::Debug for Options<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}

/// An owned option list in non-decreasing number order; repeated options keep the order in
/// which they were added.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct OptionList {
    entries: Vec<(u16, Vec<u8>)>,
}

impl OptionList {
    /// No options.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds an option after any existing options with the same number.
    pub fn push(&mut self, number: u16, value: impl Into<Vec<u8>>) -> &mut Self {
        let at = self.entries.partition_point(|(n, _)| *n <= number);
        self.entries.insert(at, (number, value.into()));
        self
    }

    /// Adds a uint option in its minimal encoding.
    pub fn push_uint(&mut self, number: u16, v: u32) -> &mut Self {
        let mut out = [0; 4];
        let n = uint::encode(v, &mut out);
        self.push(number, &out[..n])
    }

    /// Adds a block option.
    pub fn push_block(&mut self, number: u16, block: Block) -> &mut Self {
        self.push_uint(number, block.to_uint())
    }

    /// Replaces every occurrence of `number` with one value.
    pub fn set(&mut self, number: u16, value: impl Into<Vec<u8>>) -> &mut Self {
        self.remove(number);
        self.push(number, value)
    }

    /// Replaces every occurrence of `number` with one uint value.
    pub fn set_uint(&mut self, number: u16, v: u32) -> &mut Self {
        self.remove(number);
        self.push_uint(number, v)
    }

    /// Removes every occurrence of `number`.
    pub fn remove(&mut self, number: u16) -> &mut Self {
        self.entries.retain(|(n, _)| *n != number);
        self
    }

    /// `(number, value)` in order.
    pub fn iter(&self) -> impl Iterator<Item = (u16, &[u8])> + '_ {
        self.entries.iter().map(|(n, v)| (*n, v.as_slice()))
    }

    /// Number of options.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// True when there are no options.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Bytes the options take on the wire.
    pub fn encoded_len(&self) -> usize {
        let mut prev = 0;
        self.entries
            .iter()
            .map(|(n, v)| {
                let len = codec::encoded_len(n - prev, v.len());
                prev = *n;
                len
            })
            .sum()
    }
}

impl<'a> From<Options<'a>> for OptionList {
    fn from(view: Options<'a>) -> Self {
        OptionList {
            entries: view.iter().map(|(n, v)| (n, v.to_vec())).collect(),
        }
    }
}

/// An option value that does not match its registered format.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OptionValueError {
    /// The option number.
    pub number: u16,
    /// The value's length.
    pub len: usize,
    /// What is wrong.
    pub reason: ValueProblem,
}

/// What is wrong with an option value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ValueProblem {
    /// Length outside the registered range (RFC 7252 §5.4.3).
    Length,
    /// A string option that is not UTF-8 (RFC 7252 §3.2 "Net-Unicode").
    NotUtf8,
    /// A non-repeatable option given more than once (RFC 7252 §5.4.5).
    Repeated,
    /// A block option with a problem ([`BlockError`]).
    Block(BlockError),
}

impl fmt::Display for OptionValueError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let name = format_of(self.number).map_or("option", |f| f.name);
        match self.reason {
            ValueProblem::Length => {
                let fmt = format_of(self.number);
                let (lo, hi) = fmt.map_or((0, 0), |f| (f.min_len, f.max_len));
                write!(
                    f,
                    "{name} ({}) of {} bytes: allowed {lo}-{hi} (RFC 7252 §5.4.3)",
                    self.number, self.len
                )
            }
            ValueProblem::NotUtf8 => {
                write!(f, "{name} ({}) is not UTF-8 (RFC 7252 §3.2)", self.number)
            }
            ValueProblem::Repeated => write!(
                f,
                "{name} ({}) is not repeatable (RFC 7252 §5.4.5)",
                self.number
            ),
            ValueProblem::Block(e) => write!(f, "{name} ({}): {e}", self.number),
        }
    }
}

impl std::error::Error for OptionValueError {}

/// Typed read access to any option container.
///
/// Single-valued accessors return `Ok(None)` when the option is absent, `Ok(Some(v))` when it
/// is present and well formed, and `Err` when its value breaks the registered format.
pub trait ReadOptions {
    /// `(number, value)` in wire order.
    fn option_iter(&self) -> impl Iterator<Item = (u16, &[u8])>;

    /// Whether an option `number` may be present: `false` only when it certainly is not, so
    /// that [`ReadOptions::first`], [`ReadOptions::has`] and [`ReadOptions::single`] answer
    /// without walking the options. A decoded view ([`Options`], [`crate::Message`],
    /// [`crate::Frame`]) knows which numbers it holds; the default does not.
    fn may_hold(&self, number: u16) -> bool {
        let _ = number;
        true
    }

    /// The first value of `number`.
    fn first(&self, number: u16) -> Option<&[u8]> {
        if !self.may_hold(number) {
            return None;
        }
        self.option_iter()
            .find(|(n, _)| *n == number)
            .map(|(_, v)| v)
    }

    /// Every value of `number`, in order.
    fn all(&self, number: u16) -> impl Iterator<Item = &[u8]> {
        self.option_iter()
            .filter(move |(n, _)| *n == number)
            .map(|(_, v)| v)
    }

    /// Whether `number` is present.
    fn has(&self, number: u16) -> bool {
        self.first(number).is_some()
    }

    /// The single value of a non-repeatable registered option, length-checked.
    fn single(&self, number: u16) -> Result<Option<&[u8]>, OptionValueError> {
        if !self.may_hold(number) {
            return Ok(None);
        }
        let mut it = self.all(number);
        let Some(v) = it.next() else { return Ok(None) };
        let err = |reason| OptionValueError {
            number,
            len: v.len(),
            reason,
        };
        if it.next().is_some() {
            return Err(err(ValueProblem::Repeated));
        }
        if let Some(f) = format_of(number) {
            if v.len() < f.min_len || v.len() > f.max_len {
                return Err(err(ValueProblem::Length));
            }
        }
        Ok(Some(v))
    }

    /// A single uint option.
    fn uint(&self, number: u16) -> Result<Option<u32>, OptionValueError> {
        Ok(self.single(number)?.map(|v| uint::decode(v) as u32))
    }

    /// A single string option.
    fn string(&self, number: u16) -> Result<Option<&str>, OptionValueError> {
        self.single(number)?
            .map(|v| {
                core::str::from_utf8(v).map_err(|_| OptionValueError {
                    number,
                    len: v.len(),
                    reason: ValueProblem::NotUtf8,
                })
            })
            .transpose()
    }

    /// Every value of a repeatable string option, each length- and UTF-8-checked.
    fn strings(&self, number: u16) -> Result<Vec<&str>, OptionValueError> {
        let fmt = format_of(number);
        self.all(number)
            .map(|v| {
                let err = |reason| OptionValueError {
                    number,
                    len: v.len(),
                    reason,
                };
                if let Some(f) = fmt {
                    if v.len() < f.min_len || v.len() > f.max_len {
                        return Err(err(ValueProblem::Length));
                    }
                }
                core::str::from_utf8(v).map_err(|_| err(ValueProblem::NotUtf8))
            })
            .collect()
    }

    /// Uri-Host.
    fn uri_host(&self) -> Result<Option<&str>, OptionValueError> {
        self.string(number::URI_HOST)
    }
    /// Uri-Port.
    fn uri_port(&self) -> Result<Option<u16>, OptionValueError> {
        Ok(self.uint(number::URI_PORT)?.map(|v| v as u16))
    }
    /// Uri-Path segments.
    fn uri_path(&self) -> Result<Vec<&str>, OptionValueError> {
        self.strings(number::URI_PATH)
    }
    /// Uri-Query arguments.
    fn uri_query(&self) -> Result<Vec<&str>, OptionValueError> {
        self.strings(number::URI_QUERY)
    }
    /// Content-Format.
    fn content_format(&self) -> Result<Option<u16>, OptionValueError> {
        Ok(self.uint(number::CONTENT_FORMAT)?.map(|v| v as u16))
    }
    /// Accept.
    fn accept(&self) -> Result<Option<u16>, OptionValueError> {
        Ok(self.uint(number::ACCEPT)?.map(|v| v as u16))
    }
    /// ETag values (a response carries one; a GET may carry several).
    fn etags(&self) -> impl Iterator<Item = &[u8]> {
        self.all(number::ETAG)
    }
    /// If-Match values.
    fn if_match(&self) -> impl Iterator<Item = &[u8]> {
        self.all(number::IF_MATCH)
    }
    /// If-None-Match is present.
    fn if_none_match(&self) -> bool {
        self.has(number::IF_NONE_MATCH)
    }
    /// Max-Age in seconds; absent means the default 60 s (RFC 7252 §5.10.5).
    fn max_age_s(&self) -> Result<u32, OptionValueError> {
        Ok(self.uint(number::MAX_AGE)?.unwrap_or(60))
    }
    /// Location-Path segments.
    fn location_path(&self) -> Result<Vec<&str>, OptionValueError> {
        self.strings(number::LOCATION_PATH)
    }
    /// Location-Query arguments.
    fn location_query(&self) -> Result<Vec<&str>, OptionValueError> {
        self.strings(number::LOCATION_QUERY)
    }
    /// Proxy-Uri.
    fn proxy_uri(&self) -> Result<Option<&str>, OptionValueError> {
        self.string(number::PROXY_URI)
    }
    /// Proxy-Scheme.
    fn proxy_scheme(&self) -> Result<Option<&str>, OptionValueError> {
        self.string(number::PROXY_SCHEME)
    }
    /// Observe.
    fn observe(&self) -> Result<Option<u32>, OptionValueError> {
        self.uint(number::OBSERVE)
    }
    /// Size1 in bytes.
    fn size1(&self) -> Result<Option<u32>, OptionValueError> {
        self.uint(number::SIZE1)
    }
    /// Size2 in bytes.
    fn size2(&self) -> Result<Option<u32>, OptionValueError> {
        self.uint(number::SIZE2)
    }
    /// No-Response bit mask (RFC 7967).
    fn no_response(&self) -> Result<Option<u8>, OptionValueError> {
        Ok(self.uint(number::NO_RESPONSE)?.map(|v| v as u8))
    }
    /// Block1, BERT allowed (check [`Block::is_bert`] over UDP, or use [`Block::decode_udp`]).
    fn block1(&self) -> Result<Option<Block>, OptionValueError> {
        self.block(number::BLOCK1)
    }
    /// Block2, BERT allowed.
    fn block2(&self) -> Result<Option<Block>, OptionValueError> {
        self.block(number::BLOCK2)
    }
    /// A block option by number.
    fn block(&self, number: u16) -> Result<Option<Block>, OptionValueError> {
        self.single(number)?
            .map(|v| {
                Block::decode(v).map_err(|e| OptionValueError {
                    number,
                    len: v.len(),
                    reason: ValueProblem::Block(e),
                })
            })
            .transpose()
    }

    /// The first critical option that `known` does not recognise (RFC 7252 §5.4.1: a CON
    /// request with one gets 4.02 Bad Option, a CON response is rejected).
    fn first_unknown_critical(&self, known: impl Fn(u16) -> bool) -> Option<u16> {
        self.option_iter()
            .map(|(n, _)| n)
            .find(|n| number::is_critical(*n) && !known(*n))
    }
}

impl ReadOptions for Options<'_> {
    fn option_iter(&self) -> impl Iterator<Item = (u16, &[u8])> {
        self.iter()
    }

    #[inline]
    fn may_hold(&self, number: u16) -> bool {
        self.present.may_hold(number)
    }
}

impl ReadOptions for OptionList {
    fn option_iter(&self) -> impl Iterator<Item = (u16, &[u8])> {
        self.iter()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn list_keeps_numbers_ordered_and_repeats_in_insertion_order() {
        let mut l = OptionList::new();
        l.push(number::URI_QUERY, "b=2")
            .push(number::URI_PATH, "x")
            .push(number::URI_PATH, "y")
            .push_uint(number::CONTENT_FORMAT, 0)
            .push(number::URI_QUERY, "a=1");
        let got: Vec<_> = l.iter().map(|(n, v)| (n, v.to_vec())).collect();
        assert_eq!(
            got,
            [
                (11, b"x".to_vec()),
                (11, b"y".to_vec()),
                (12, vec![]),
                (15, b"b=2".to_vec()),
                (15, b"a=1".to_vec())
            ]
        );
        assert_eq!(l.uri_path().unwrap(), ["x", "y"]);
        assert_eq!(l.uri_query().unwrap(), ["b=2", "a=1"]);
        assert_eq!(l.content_format().unwrap(), Some(0));
        assert_eq!(l.max_age_s().unwrap(), 60);
    }

    #[test]
    fn accessors_reject_bad_lengths_and_repeats() {
        let mut l = OptionList::new();
        l.push(number::CONTENT_FORMAT, [0, 0, 1]);
        let e = l.content_format().unwrap_err();
        assert_eq!(e.reason, ValueProblem::Length);
        assert_eq!(
            e.to_string(),
            "Content-Format (12) of 3 bytes: allowed 0-2 (RFC 7252 §5.4.3)"
        );
        let mut l = OptionList::new();
        l.push_uint(number::MAX_AGE, 1)
            .push_uint(number::MAX_AGE, 2);
        assert_eq!(l.max_age_s().unwrap_err().reason, ValueProblem::Repeated);
        let mut l = OptionList::new();
        l.push(number::URI_PATH, [0xff, 0xfe]);
        assert_eq!(l.uri_path().unwrap_err().reason, ValueProblem::NotUtf8);
        let mut l = OptionList::new();
        l.push(number::BLOCK2, [0, 0, 0, 1]);
        assert_eq!(
            l.block2().unwrap_err().reason,
            ValueProblem::Length,
            "the registered 0-3 byte range is checked first"
        );
    }

    #[test]
    fn unknown_critical_options_are_found() {
        let mut l = OptionList::new();
        l.push(number::URI_PATH, "a").push(2049, "x").push(9, "");
        assert_eq!(l.first_unknown_critical(|n| n == number::URI_PATH), Some(9));
        let mut l = OptionList::new();
        l.push(2048, "elective");
        assert_eq!(l.first_unknown_critical(|_| false), None);
    }
}
