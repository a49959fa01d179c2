//! Registered option numbers (RFC 7252 §12.2, RFC 7959 §6, RFC 7641, RFC 7967) and the
//! classification every number carries in its low bits (RFC 7252 §5.4.6).

/// If-Match (RFC 7252 §5.10.8.1), opaque 0–8, repeatable.
pub const IF_MATCH: u16 = 1;
/// Uri-Host (RFC 7252 §5.10.1), string 1–255.
pub const URI_HOST: u16 = 3;
/// ETag (RFC 7252 §5.10.6), opaque 1–8.
pub const ETAG: u16 = 4;
/// If-None-Match (RFC 7252 §5.10.8.2), empty.
pub const IF_NONE_MATCH: u16 = 5;
/// Observe (RFC 7641 §2), uint 0–3.
pub const OBSERVE: u16 = 6;
/// Uri-Port (RFC 7252 §5.10.1), uint 0–2.
pub const URI_PORT: u16 = 7;
/// Location-Path (RFC 7252 §5.10.7), string 0–255, repeatable.
pub const LOCATION_PATH: u16 = 8;
/// Uri-Path (RFC 7252 §5.10.1), string 0–255, repeatable.
pub const URI_PATH: u16 = 11;
/// Content-Format (RFC 7252 §5.10.3), uint 0–2.
pub const CONTENT_FORMAT: u16 = 12;
/// Max-Age (RFC 7252 §5.10.5), uint 0–4, default 60.
pub const MAX_AGE: u16 = 14;
/// Uri-Query (RFC 7252 §5.10.1), string 0–255, repeatable.
pub const URI_QUERY: u16 = 15;
/// Accept (RFC 7252 §5.10.4), uint 0–2.
pub const ACCEPT: u16 = 17;
/// Location-Query (RFC 7252 §5.10.7), string 0–255, repeatable.
pub const LOCATION_QUERY: u16 = 20;
/// Block2 (RFC 7959 §2.1), uint 0–3.
pub const BLOCK2: u16 = 23;
/// Block1 (RFC 7959 §2.1), uint 0–3.
pub const BLOCK1: u16 = 27;
/// Size2 (RFC 7959 §4), uint 0–4.
pub const SIZE2: u16 = 28;
/// Proxy-Uri (RFC 7252 §5.10.2), string 1–1034.
pub const PROXY_URI: u16 = 35;
/// Proxy-Scheme (RFC 7252 §5.10.2), string 1–255.
pub const PROXY_SCHEME: u16 = 39;
/// Size1 (RFC 7252 §5.10.9), uint 0–4.
pub const SIZE1: u16 = 60;
/// Echo (RFC 9175 §2.2), opaque 1–40: a server's freshness or reachability challenge,
/// repeated by the client (elective, safe to forward).
pub const ECHO: u16 = 252;
/// Request-Tag (RFC 9175 §3.2), opaque 0–8, repeatable, elective: tells apart the body
/// fragments (Block1) of concurrent operations of one client.
pub const REQUEST_TAG: u16 = 292;
/// No-Response (RFC 7967 §2), uint 0–1.
pub const NO_RESPONSE: u16 = 258;

/// Critical options (odd numbers) must be understood or the message rejected
/// (RFC 7252 §5.4.1, §5.4.6).
pub const fn is_critical(number: u16) -> bool {
    number & 0x01 != 0
}

/// Elective options (even numbers) may be ignored when unknown.
pub const fn is_elective(number: u16) -> bool {
    !is_critical(number)
}

/// Unsafe-to-forward options (bit 1 set) must be understood by a proxy (RFC 7252 §5.4.2).
pub const fn is_unsafe(number: u16) -> bool {
    number & 0x02 != 0
}

/// NoCacheKey: a safe-to-forward option whose bits 2–4 are all set is not part of the cache
/// key (RFC 7252 §5.4.6: `(number & 0x1e) == 0x1c`).
pub const fn is_no_cache_key(number: u16) -> bool {
    number & 0x1e == 0x1c
}

/// How a registered option's value is formatted (RFC 7252 §3.2).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ValueFormat {
    /// Zero-length.
    Empty,
    /// Bytes.
    Opaque,
    /// Unsigned integer, network byte order, minimal length (RFC 7252 §3.2).
    Uint,
    /// UTF-8 text (Net-Unicode).
    String,
}

/// The registered format of an option: value type, allowed lengths, repeatability.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OptionFormat {
    /// The option's name, e.g. `Uri-Path`.
    pub name: &'static str,
    /// Value type.
    pub format: ValueFormat,
    /// Shortest valid value in bytes.
    pub min_len: usize,
    /// Longest valid value in bytes.
    pub max_len: usize,
    /// Whether the option may occur more than once.
    pub repeatable: bool,
}

/// The registered format of `number`, or `None` for an option coaplab does not know.
pub const fn format_of(number: u16) -> Option<OptionFormat> {
    use ValueFormat::*;
    let (name, format, min_len, max_len, repeatable) = match number {
        IF_MATCH => ("If-Match", Opaque, 0, 8, true),
        URI_HOST => ("Uri-Host", String, 1, 255, false),
        ETAG => ("ETag", Opaque, 1, 8, true),
        IF_NONE_MATCH => ("If-None-Match", Empty, 0, 0, false),
        OBSERVE => ("Observe", Uint, 0, 3, false),
        URI_PORT => ("Uri-Port", Uint, 0, 2, false),
        LOCATION_PATH => ("Location-Path", String, 0, 255, true),
        URI_PATH => ("Uri-Path", String, 0, 255, true),
        CONTENT_FORMAT => ("Content-Format", Uint, 0, 2, false),
        MAX_AGE => ("Max-Age", Uint, 0, 4, false),
        URI_QUERY => ("Uri-Query", String, 0, 255, true),
        ACCEPT => ("Accept", Uint, 0, 2, false),
        LOCATION_QUERY => ("Location-Query", String, 0, 255, true),
        BLOCK2 => ("Block2", Uint, 0, 3, false),
        BLOCK1 => ("Block1", Uint, 0, 3, false),
        SIZE2 => ("Size2", Uint, 0, 4, false),
        PROXY_URI => ("Proxy-Uri", String, 1, 1034, false),
        PROXY_SCHEME => ("Proxy-Scheme", String, 1, 255, false),
        SIZE1 => ("Size1", Uint, 0, 4, false),
        ECHO => ("Echo", Opaque, 1, 40, false),
        NO_RESPONSE => ("No-Response", Uint, 0, 1, false),
        _ => return None,
    };
    Some(OptionFormat {
        name,
        format,
        min_len,
        max_len,
        repeatable,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classification_follows_the_low_bits() {
        // RFC 7252 §5.10 table: C = critical, U = unsafe, N = NoCacheKey.
        assert!(is_critical(URI_PATH) && is_unsafe(URI_PATH));
        assert!(is_elective(CONTENT_FORMAT) && !is_unsafe(CONTENT_FORMAT));
        assert!(is_no_cache_key(SIZE1) && is_no_cache_key(SIZE2));
        assert!(!is_no_cache_key(ETAG) && !is_no_cache_key(MAX_AGE));
        assert!(is_critical(URI_HOST) && is_unsafe(URI_HOST));
        assert!(is_critical(BLOCK1) && is_critical(BLOCK2) && is_unsafe(BLOCK2));
        assert!(is_critical(PROXY_URI) && is_unsafe(PROXY_URI));
        // 65020 is the FASOR Rexmit-Cnt default: elective, safe, NoCacheKey.
        assert!(is_elective(65020) && !is_unsafe(65020) && is_no_cache_key(65020));
    }
}
