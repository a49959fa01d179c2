//! Representation rules of the built-in resources that both servers share (the UDP server,
//! `server.rs`, and the RFC 8323 session's, `tcp/serve.rs`): which Content-Formats `/echo`
//! accepts (4.15 otherwise, RFC 7252 §5.10.3), the response code of each echoing method
//! (RFC 8132), and the entity tags of `/data/N` and `/echo` with the conditional requests they
//! answer (RFC 7252 §5.10.6, §5.10.8).

use coaplab_wire::option::number;
use coaplab_wire::{Code, ReadOptions};

/// Content-Formats `/echo` accepts (RFC 7252 §12.3, RFC 7049 §7.3): text/plain (0),
/// application/octet-stream (42), application/json (50) and application/cbor (60). A request
/// without Content-Format is taken as an octet stream. Any other value: 4.15 Unsupported
/// Content-Format.
pub const ECHO_CONTENT_FORMATS: [u16; 4] = [0, 42, 50, 60];

/// The Content-Format of an `/echo` request, if it names an accepted one; `Err`: the code to
/// answer, 4.15 for a format not in [`ECHO_CONTENT_FORMATS`], 4.02 for a malformed value.
pub(crate) fn echo_content_format(options: &impl ReadOptions) -> Result<Option<u16>, Code> {
    match options.content_format() {
        Ok(None) => Ok(None),
        Ok(Some(f)) if ECHO_CONTENT_FORMATS.contains(&f) => Ok(Some(f)),
        Ok(Some(_)) => Err(Code::UNSUPPORTED_CONTENT_FORMAT),
        Err(_) => Err(Code::BAD_OPTION),
    }
}

/// The success code of an echo for `method`: 2.04 Changed for the methods that change a
/// resource (POST, PUT, PATCH, iPATCH: RFC 8132 §3), 2.05 Content otherwise (FETCH returns
/// the result of its query, RFC 8132 §2).
pub(crate) fn echo_code(method: Code) -> Code {
    if matches!(method, Code::POST | Code::PUT | Code::PATCH | Code::IPATCH) {
        Code::CHANGED
    } else {
        Code::CONTENT
    }
}

/// Bytes of an entity tag this server makes (RFC 7252 §5.10.6 allows 1–8).
pub const ETAG_LEN_BYTES: usize = 8;

/// An entity tag.
pub(crate) type Etag = [u8; ETAG_LEN_BYTES];

/// The entity tag of `/data/N`'s body: its length N, big-endian (the body is a function of N,
/// so the tag is stable across restarts and servers).
pub(crate) fn data_etag(len_bytes: usize) -> Etag {
    (len_bytes as u64).to_be_bytes()
}

/// The entity tag of a stored body: a fixed-key SipHash-2-4 of its bytes (stable across
/// restarts; not secret, only a change detector).
pub(crate) fn body_etag(body: &[u8]) -> Etag {
    use std::hash::Hasher;
    // std's SipHasher is SipHash-2-4 with explicit keys; deprecated only in favour of the
    // randomly keyed DefaultHasher, which would not be stable.
    #[allow(deprecated)]
    let mut h = std::hash::SipHasher::new_with_keys(0x636f_6170_6c61_6221, 0x6574_6167);
    h.write(body);
    h.finish().to_be_bytes()
}

/// Whether a GET's ETag options (RFC 7252 §5.10.6.2) name `current`: then 2.03 Valid.
pub(crate) fn validates(options: &impl ReadOptions, current: &Etag) -> bool {
    options.all(number::ETAG).any(|v| v == current)
}

/// Whether the request's If-Match and If-None-Match hold for a resource whose current
/// representation has tag `current` (`None`: it has none). RFC 7252 §5.10.8: If-Match holds
/// when any value is empty and a representation exists, or a value equals its tag;
/// If-None-Match holds when no representation exists. A request failing either gets 4.12
/// Precondition Failed.
pub(crate) fn preconditions_hold(options: &impl ReadOptions, current: Option<&Etag>) -> bool {
    let mut if_match = options.all(number::IF_MATCH).peekable();
    let matched = if_match.peek().is_none()
        || current.is_some_and(|tag| if_match.any(|v| v.is_empty() || v == tag));
    let none_match = !options.has(number::IF_NONE_MATCH) || current.is_none();
    matched && none_match
}

#[cfg(test)]
mod tests {
    use super::*;
    use coaplab_wire::option::OptionList;

    fn list(opts: &[(u16, &[u8])]) -> OptionList {
        let mut l = OptionList::new();
        for (n, v) in opts {
            l.push(*n, v.to_vec());
        }
        l
    }

    #[test]
    fn echo_accepts_four_formats() {
        let cf = number::CONTENT_FORMAT;
        assert_eq!(echo_content_format(&list(&[])), Ok(None));
        assert_eq!(echo_content_format(&list(&[(cf, &[])])), Ok(Some(0)));
        assert_eq!(echo_content_format(&list(&[(cf, &[60])])), Ok(Some(60)));
        assert_eq!(
            echo_content_format(&list(&[(cf, &[40])])),
            Err(Code::UNSUPPORTED_CONTENT_FORMAT)
        );
        assert_eq!(
            echo_content_format(&list(&[(cf, &[0, 0, 50])])),
            Err(Code::BAD_OPTION)
        );
        assert_eq!(echo_code(Code::IPATCH), Code::CHANGED);
        assert_eq!(echo_code(Code::FETCH), Code::CONTENT);
    }

    #[test]
    fn preconditions_follow_rfc_7252_5_10_8() {
        let tag = body_etag(b"x");
        let im = number::IF_MATCH;
        let inm = number::IF_NONE_MATCH;
        assert!(preconditions_hold(&list(&[]), None));
        assert!(!preconditions_hold(&list(&[(im, &[])]), None));
        assert!(preconditions_hold(&list(&[(im, &[])]), Some(&tag)));
        assert!(preconditions_hold(
            &list(&[(im, &[9]), (im, &tag)]),
            Some(&tag)
        ));
        assert!(!preconditions_hold(&list(&[(im, &[9])]), Some(&tag)));
        assert!(preconditions_hold(&list(&[(inm, &[])]), None));
        assert!(!preconditions_hold(&list(&[(inm, &[])]), Some(&tag)));
        assert!(validates(
            &list(&[(number::ETAG, &data_etag(10))]),
            &data_etag(10)
        ));
        assert!(!validates(
            &list(&[(number::ETAG, &data_etag(11))]),
            &data_etag(10)
        ));
    }
}
