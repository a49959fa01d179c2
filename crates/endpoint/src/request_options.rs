//! The check of a request's options that both servers run before routing it: the UDP
//! server (`server.rs`) and the RFC 8323 session's (`tcp/serve.rs`). Each passes the options
//! its transport understands; this module adds the rules that do not depend on it.
//!
//! In order (the first that applies answers):
//! 1. an unrecognised critical option: 4.02 Bad Option (RFC 7252 §5.4.1);
//! 2. a critical option that is not repeatable, repeated (e.g. two Uri-Host): 4.02, as
//!    RFC 7252 §5.4.5 treats it like an unrecognised one; an Accept value longer than 2 bytes
//!    likewise (§5.4.3);
//! 3. Proxy-Uri or Proxy-Scheme: 5.05 Proxying Not Supported (§5.7.2: this server is no
//!    proxy; the options are recognised, so not 4.02);
//! 4. otherwise the Accept value, if any, which [`acceptable`] later compares with the
//!    representation's Content-Format: 4.06 Not Acceptable when it differs (§5.10.4).

use coaplab_wire::option::number;
use coaplab_wire::{Code, ReadOptions};

/// Content-Format `application/octet-stream` (RFC 7252 §12.3): what `/data/N` and `/echo`
/// bodies are, though their responses name no Content-Format.
pub(crate) const CONTENT_FORMAT_OCTET_STREAM: u16 = 42;

/// Checks `options` against the rules above; `known` names the critical options the caller's
/// transport understands (Accept, Proxy-Uri and Proxy-Scheme are understood here). Returns
/// the Accept value, or the error code to answer with.
pub(crate) fn check(
    options: &impl ReadOptions,
    known: impl Fn(u16) -> bool,
) -> Result<Option<u16>, Code> {
    let understood =
        |n: u16| known(n) || matches!(n, number::ACCEPT | number::PROXY_URI | number::PROXY_SCHEME);
    // Rules 1 and 2 in one walk over the options (both answer 4.02, so which is found first
    // does not matter): one decode of each option header instead of two (issue 35).
    // Options arrive in number order (RFC 7252 §3.1 deltas), so a repeat is adjacent.
    let mut previous = None;
    for (n, _) in options.option_iter() {
        if number::is_critical(n) {
            if !understood(n) {
                return Err(Code::BAD_OPTION);
            }
            let repeatable = number::format_of(n).map_or(true, |f| f.repeatable);
            if !repeatable && previous == Some(n) {
                return Err(Code::BAD_OPTION);
            }
        }
        previous = Some(n);
    }
    if options.has(number::PROXY_URI) || options.has(number::PROXY_SCHEME) {
        return Err(Code::PROXYING_NOT_SUPPORTED);
    }
    options.accept().map_err(|_| Code::BAD_OPTION)
}

/// Whether a representation of `content_format` (`None`: an unnamed octet stream) satisfies
/// the request's `accept`.
pub(crate) fn acceptable(accept: Option<u16>, content_format: Option<u16>) -> bool {
    accept.map_or(true, |a| {
        a == content_format.unwrap_or(CONTENT_FORMAT_OCTET_STREAM)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use coaplab_wire::option::OptionList;

    fn check_list(opts: &[(u16, &[u8])]) -> Result<Option<u16>, Code> {
        let mut list = OptionList::new();
        for (n, v) in opts {
            list.push(*n, v.to_vec());
        }
        check(&list, |n| matches!(n, number::URI_HOST | number::URI_PATH))
    }

    #[test]
    fn unknown_and_repeated_critical_options_are_bad_options() {
        assert_eq!(check_list(&[(number::URI_PATH, b"x")]), Ok(None));
        assert_eq!(
            check_list(&[(number::IF_MATCH, b"")]),
            Err(Code::BAD_OPTION)
        );
        let host_twice = [(number::URI_HOST, &b"a"[..]), (number::URI_HOST, b"b")];
        assert_eq!(check_list(&host_twice), Err(Code::BAD_OPTION));
        // Uri-Path is repeatable.
        let path = [(number::URI_PATH, &b"a"[..]), (number::URI_PATH, b"b")];
        assert_eq!(check_list(&path), Ok(None));
        let accept_twice = [(number::ACCEPT, &[0u8][..]), (number::ACCEPT, &[40])];
        assert_eq!(check_list(&accept_twice), Err(Code::BAD_OPTION));
        assert_eq!(
            check_list(&[(number::ACCEPT, &[0, 0, 1])]),
            Err(Code::BAD_OPTION)
        );
    }

    #[test]
    fn proxying_is_not_supported_and_accept_is_understood() {
        let proxy = [(number::PROXY_URI, &b"coap://h/x"[..])];
        assert_eq!(check_list(&proxy), Err(Code::PROXYING_NOT_SUPPORTED));
        let scheme = [(number::PROXY_SCHEME, &b"coap"[..])];
        assert_eq!(check_list(&scheme), Err(Code::PROXYING_NOT_SUPPORTED));
        assert_eq!(check_list(&[(number::ACCEPT, &[])]), Ok(Some(0)));
        assert_eq!(check_list(&[(number::ACCEPT, &[50])]), Ok(Some(50)));
        assert!(acceptable(None, Some(0)));
        assert!(acceptable(Some(0), Some(0)));
        assert!(!acceptable(Some(50), Some(0)));
        assert!(acceptable(Some(42), None));
        assert!(!acceptable(Some(0), None));
    }
}
