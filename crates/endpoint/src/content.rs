//! GET-only content resources that carry a Content-Format: a fixed document (e.g. the
//! RFC 6690 `/.well-known/core` listing) and a clock (`/time`). They are answered in one
//! message (no Block2), so keep them under a block; other methods get 4.05.
//!
//! The clock reads no clock: the Unix time it answers is the epoch the driver gave
//! ([`crate::Router::clock`]) plus the endpoint time of the request (sans-IO).

use coaplab_cc::time::{Duration, Instant};
use coaplab_wire::Code;

/// Content-Format `text/plain; charset=utf-8` (RFC 7252 §12.3).
pub const CONTENT_FORMAT_TEXT: u16 = 0;
/// Content-Format `application/link-format` (RFC 6690 §7.2).
pub const CONTENT_FORMAT_LINK: u16 = 40;

/// A GET-only resource answered with 2.05 Content and a Content-Format.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Content {
    /// A fixed document.
    Fixed {
        /// Its Content-Format.
        content_format: u16,
        /// Its bytes.
        body: Vec<u8>,
    },
    /// The Unix time of the request in whole seconds, as decimal text/plain.
    Clock {
        /// The Unix time at endpoint time [`Instant::ZERO`].
        unix_at_zero: Duration,
    },
    /// The RFC 6690 listing of the router's links ([`crate::Router::link`]), filtered by the
    /// request's Uri-Query (application/link-format).
    Links,
    /// An observable counter (RFC 7641): the whole number of `period`s since endpoint time
    /// [`Instant::ZERO`], as decimal text/plain; it changes every period, and observers
    /// registered with Observe 0 are notified (`crate::observe`).
    Counter {
        /// How often the value changes.
        period: Duration,
    },
}

impl Content {
    /// Its state at `now` when it is observable: Content-Format, body and period.
    pub(crate) fn observable_state(
        &self,
        now: Instant,
    ) -> Option<(Option<u16>, Vec<u8>, Duration)> {
        match *self {
            Content::Counter { period } => Some((
                Some(CONTENT_FORMAT_TEXT),
                counter_value(now, period).to_string().into_bytes(),
                period,
            )),
            _ => None,
        }
    }

    /// How often an observable resource changes (`None`: not observable, RFC 7641).
    pub(crate) fn observe_period(&self) -> Option<Duration> {
        match self {
            Content::Counter { period } => Some(*period),
            _ => None,
        }
    }

    /// The answer to `method` at `now`: code, Content-Format and payload. `links` and
    /// `query` (the request's Uri-Query values) make the [`Content::Links`] listing.
    pub(crate) fn answer<'q>(
        &self,
        method: Code,
        now: Instant,
        links: &[crate::links::Link],
        query: impl Iterator<Item = &'q [u8]> + Clone,
    ) -> (Code, Option<u16>, Vec<u8>) {
        if method != Code::GET {
            return (Code::METHOD_NOT_ALLOWED, None, Vec::new());
        }
        match self {
            Content::Fixed {
                content_format,
                body,
            } => (Code::CONTENT, Some(*content_format), body.clone()),
            Content::Clock { unix_at_zero } => {
                let t = *unix_at_zero + now.saturating_since(Instant::ZERO);
                let secs = t.as_nanos().div_euclid(1_000_000_000);
                (
                    Code::CONTENT,
                    Some(CONTENT_FORMAT_TEXT),
                    secs.to_string().into_bytes(),
                )
            }
            Content::Counter { period } => (
                Code::CONTENT,
                Some(CONTENT_FORMAT_TEXT),
                counter_value(now, *period).to_string().into_bytes(),
            ),
            Content::Links => (
                Code::CONTENT,
                Some(CONTENT_FORMAT_LINK),
                crate::links::listing(links, query),
            ),
        }
    }
}

/// The value of a counter of `period` at `now`: whole periods since [`Instant::ZERO`].
pub(crate) fn counter_value(now: Instant, period: Duration) -> u64 {
    let p = period.as_nanos().max(1);
    (now.saturating_since(Instant::ZERO).as_nanos() / p) as u64
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Router;
    use crate::{registry_factory, Config, Endpoint, Request};
    use coaplab_cc::Settings;
    use coaplab_wire::Message;

    fn server() -> Endpoint {
        let mut router = Router::new();
        router
            .content(".well-known/core", CONTENT_FORMAT_LINK, b"</time>".to_vec())
            .clock("time", Duration::from_secs(1_700_000_000));
        let factory = registry_factory("default", &Settings::new(), 1).unwrap();
        Endpoint::new(Config::default(), factory, router).unwrap()
    }

    fn ask(request: &Request, at: Instant) -> Vec<u8> {
        let factory = registry_factory("default", &Settings::new(), 2).unwrap();
        let mut client = Endpoint::new(Config::default(), factory, Router::new()).unwrap();
        let mut s = server();
        let (c_addr, s_addr) = (
            "127.0.0.1:1".parse().unwrap(),
            "127.0.0.1:2".parse().unwrap(),
        );
        let _ = client.request(at, s_addr, request);
        let req = client.poll_transmit(at).unwrap();
        s.handle_datagram(at, c_addr, &req.contents);
        s.poll_transmit(at).unwrap().contents
    }

    #[test]
    fn well_known_core_is_link_format() {
        let bytes = ask(&Request::get(".well-known/core"), Instant::ZERO);
        // ACK 2.05, MID 0, token 2 B; Content-Format 40 (delta 12, 1 B); payload.
        assert_eq!(bytes[..2], [0x62, 0x45]);
        assert_eq!(bytes[6..], *b"\xc1\x28\xff</time>");
    }

    #[test]
    fn clock_adds_the_request_time_to_the_epoch() {
        let bytes = ask(&Request::get("time"), Instant::from_millis(2_500));
        let msg = Message::decode(&bytes).unwrap();
        assert_eq!(msg.code, Code::CONTENT);
        assert_eq!(msg.payload, b"1700000002");
    }

    #[test]
    fn other_methods_are_not_allowed() {
        let bytes = ask(&Request::post("time", vec![1]), Instant::ZERO);
        let msg = Message::decode(&bytes).unwrap();
        assert_eq!(msg.code, Code::METHOD_NOT_ALLOWED);
        assert!(msg.payload.is_empty());
    }
}
