//! Server resources: what a path answers, per method. The experiments need three kinds
//! (docs/experiments.md §4): a body of N bytes for GET (block-wise when larger than a block),
//! an echo of the request payload, and a fixed-size reply (the 60-B 2.04 of docs/experiments.md
//! §4.2). Handlers take zero processing time.

use coaplab_wire::Code;

mod router;

pub use router::Router;

/// What a resource does for one method.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Action {
    /// 4.05 Method Not Allowed.
    NotAllowed,
    /// 2.05 Content with a body of `len_bytes` bytes; byte i is `i mod 256`.
    Data {
        /// Body length.
        len_bytes: usize,
    },
    /// The request payload (whole, after a Block1 upload) comes back with the request's
    /// Content-Format; 2.04 Changed for POST, PUT, PATCH and iPATCH, 2.05 Content for FETCH
    /// (RFC 8132 §2: FETCH answers like a GET whose query is the payload).
    Echo,
    /// `code` with `len_bytes` zero bytes of payload (docs/experiments.md §4.2: 2.04 with 53 B).
    Fixed {
        /// Response code.
        code: Code,
        /// Payload length.
        len_bytes: usize,
    },
}

/// A resource: an [`Action`] per method.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Resource {
    /// GET.
    pub get: Action,
    /// POST.
    pub post: Action,
    /// PUT.
    pub put: Action,
    /// FETCH (RFC 8132 §2).
    pub fetch: Action,
    /// PATCH and iPATCH (RFC 8132 §3).
    pub patch: Action,
    /// DELETE and any other method.
    pub other: Action,
}

impl Resource {
    /// GET answers `len_bytes` bytes; other methods are not allowed.
    pub const fn data(len_bytes: usize) -> Resource {
        Resource {
            get: Action::Data { len_bytes },
            post: Action::NotAllowed,
            put: Action::NotAllowed,
            fetch: Action::NotAllowed,
            patch: Action::NotAllowed,
            other: Action::NotAllowed,
        }
    }

    /// A `data/N` whose N exceeds [`Router::max_data_bytes`]: GET answers an empty 4.00 Bad
    /// Request (the body is never produced); other methods are not allowed, as for any
    /// `data/N`.
    pub const fn too_large() -> Resource {
        Resource {
            get: Action::Fixed {
                code: Code::BAD_REQUEST,
                len_bytes: 0,
            },
            ..Resource::data(0)
        }
    }

    /// POST, PUT, FETCH, PATCH and iPATCH echo the payload; GET answers an empty 2.05.
    pub const fn echo() -> Resource {
        Resource {
            get: Action::Fixed {
                code: Code::CONTENT,
                len_bytes: 0,
            },
            post: Action::Echo,
            put: Action::Echo,
            fetch: Action::Echo,
            patch: Action::Echo,
            other: Action::NotAllowed,
        }
    }

    /// Every method answers `code` with `len_bytes` of payload.
    pub const fn fixed(code: Code, len_bytes: usize) -> Resource {
        let a = Action::Fixed { code, len_bytes };
        Resource {
            get: a,
            post: a,
            put: a,
            fetch: a,
            patch: a,
            other: a,
        }
    }

    /// The resource of the experiments' path `f` (docs/experiments.md §4): GET answers
    /// `object_bytes` (the long-lived transfer) and POST answers 2.04 with `reply_bytes` (the
    /// short-lived exchanges).
    pub const fn experiment(object_bytes: usize, reply_bytes: usize) -> Resource {
        Resource {
            get: Action::Data {
                len_bytes: object_bytes,
            },
            post: Action::Fixed {
                code: Code::CHANGED,
                len_bytes: reply_bytes,
            },
            put: Action::NotAllowed,
            fetch: Action::NotAllowed,
            patch: Action::NotAllowed,
            other: Action::NotAllowed,
        }
    }

    pub(crate) fn action(&self, method: Code) -> Action {
        match method {
            Code::GET => self.get,
            Code::POST => self.post,
            Code::PUT => self.put,
            Code::FETCH => self.fetch,
            Code::PATCH | Code::IPATCH => self.patch,
            _ => self.other,
        }
    }
}

/// The default largest N of the built-in `data/N` ([`Router::max_data_bytes`]): 1 GiB, the
/// most a UDP client can fetch block-wise (2^20 Block2 numbers of 1,024 B, RFC 7959 §2.2) and
/// below the 4-GiB reach of Size2 and of an RFC 8323 frame length.
pub const MAX_DATA_BYTES: usize = 1 << 30;

/// What a `data/N` path asks for, against the largest N served.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DataLen {
    /// N bytes of the pattern body (byte i is `i mod 256`); N is within the limit.
    Body(usize),
    /// N exceeds the limit (however many digits it has): refused before any body exists.
    TooLarge,
}

/// The `data/N` of `path` (`/`-separated, empty segments ignored, as the CoAP Uri-Path the
/// router matches) against the limit `max_data_bytes` ([`Router::max_data_bytes`]); `None`
/// when `path` is not `data/N`. The HTTP server (`coaplab_emu::http`) answers with this, so
/// both servers accept the same paths and apply the same limit.
pub fn data_len(path: &str, max_data_bytes: usize) -> Option<DataLen> {
    let mut it = segments(path);
    match (it.next(), it.next(), it.next()) {
        (Some("data"), Some(n), None) => data_n(n.as_bytes(), max_data_bytes),
        _ => None,
    }
}

/// N of a `data/N` segment: within `max_data_bytes`, too large, or not a number (`None`).
fn data_n(n: &[u8], max_data_bytes: usize) -> Option<DataLen> {
    match std::str::from_utf8(n).ok()?.parse::<usize>() {
        Ok(n) if n <= max_data_bytes => Some(DataLen::Body(n)),
        Ok(_) => Some(DataLen::TooLarge),
        // More digits than a usize holds: too large as well, not unknown.
        Err(e) if *e.kind() == std::num::IntErrorKind::PosOverflow => Some(DataLen::TooLarge),
        Err(_) => None,
    }
}

/// Fills `out` with bytes `start..start + out.len()` of the `data/N` pattern body (byte i is
/// `i mod 256`), as the CoAP server sends them.
pub fn write_pattern(start: usize, out: &mut [u8]) {
    Body::Pattern(usize::MAX).write(start, out);
}

/// The non-empty segments of a `/`-separated path.
pub(crate) fn segments(path: &str) -> impl Iterator<Item = &str> + Clone {
    path.split('/').filter(|s| !s.is_empty())
}

/// Two periods of the pattern body (byte i is `i mod 256`), so any 256 bytes of it are one
/// slice.
const PATTERN_TWICE: [u8; 512] = {
    let mut t = [0u8; 512];
    let mut i = 0;
    while i < 512 {
        t[i] = (i & 0xff) as u8;
        i += 1;
    }
    t
};

/// Where a response body's bytes come from, so a 100-kB object is never materialised.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Body<'a> {
    /// Byte i is `i mod 256`.
    Pattern(usize),
    /// Zeros.
    Zeros(usize),
    /// Given bytes.
    Bytes(&'a [u8]),
}

impl Body<'_> {
    pub(crate) fn len(&self) -> usize {
        match self {
            Body::Pattern(n) | Body::Zeros(n) => *n,
            Body::Bytes(b) => b.len(),
        }
    }

    /// Bytes `range` of the body.
    pub(crate) fn write(&self, start: usize, out: &mut [u8]) {
        match self {
            Body::Pattern(_) => {
                // The pattern repeats every 256 bytes: copy from one period, starting anywhere.
                let mut at = start & 0xff;
                for chunk in out.chunks_mut(256) {
                    let n = chunk.len();
                    chunk.copy_from_slice(&PATTERN_TWICE[at..at + n]);
                    at = (at + n) & 0xff;
                }
            }
            Body::Zeros(_) => out.fill(0),
            Body::Bytes(src) => out.copy_from_slice(&src[start..start + out.len()]),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn path(p: &str) -> impl Iterator<Item = &[u8]> + Clone {
        segments(p).map(str::as_bytes)
    }

    #[test]
    fn routes_builtins_and_misses() {
        let mut r = Router::new();
        r.route("f", Resource::experiment(102_400, 53));
        assert_eq!(r.find(path("f")), Some(Resource::experiment(102_400, 53)));
        assert_eq!(r.find(path("data/300")), Some(Resource::data(300)));
        assert_eq!(r.find(path("echo")), Some(Resource::echo()));
        assert_eq!(r.find(path("data/x")), None);
        assert_eq!(r.find(path("data/-1")), None);
        assert_eq!(r.find(path("g")), None);
        assert_eq!(r.find(path("")), None);
        r.route("/a/b/", Resource::data(1));
        assert_eq!(r.find(path("a/b")), Some(Resource::data(1)));
        assert_eq!(r.find(path("a")), None);
    }

    #[test]
    fn data_beyond_the_limit_is_too_large_whatever_its_digits() {
        let mut r = Router::new();
        assert_eq!(
            r.find(path("data/1073741824")),
            Some(Resource::data(MAX_DATA_BYTES))
        );
        for n in [
            "1073741825",
            "1099511627776",
            "9223372036854775808",
            "18446744073709551615",
            "18446744073709551616",
            "99999999999999999999999999999",
        ] {
            assert_eq!(
                r.find(path(&format!("data/{n}"))),
                Some(Resource::too_large()),
                "{n}"
            );
        }
        r.max_data_bytes(10);
        assert_eq!(r.find(path("data/10")), Some(Resource::data(10)));
        assert_eq!(r.find(path("data/11")), Some(Resource::too_large()));
        assert_eq!(
            Resource::too_large().action(Code::GET),
            Action::Fixed {
                code: Code::BAD_REQUEST,
                len_bytes: 0
            }
        );
        assert_eq!(Resource::too_large().action(Code::PUT), Action::NotAllowed);
    }

    #[test]
    fn data_len_is_the_routers_data_n() {
        assert_eq!(data_len("/data/300", 1000), Some(DataLen::Body(300)));
        assert_eq!(data_len("data/1000", 1000), Some(DataLen::Body(1000)));
        assert_eq!(data_len("/data/1001", 1000), Some(DataLen::TooLarge));
        assert_eq!(
            data_len("/data/99999999999999999999999", 1000),
            Some(DataLen::TooLarge)
        );
        for p in ["/data/", "/data/x", "/data/-1", "/data/1/x", "/echo", "/"] {
            assert_eq!(data_len(p, 1000), None, "{p}");
        }
        let mut out = [0u8; 4];
        write_pattern(254, &mut out);
        assert_eq!(out, [254, 255, 0, 1]);
    }

    #[test]
    fn pattern_body_is_offset_aware() {
        let mut out = [0u8; 3];
        Body::Pattern(1000).write(255, &mut out);
        assert_eq!(out, [255, 0, 1]);
        for (start, len) in [(0, 1000), (7, 257), (255, 5000), (1 << 30, 70_000)] {
            let mut out = vec![0u8; len];
            Body::Pattern(usize::MAX).write(start, &mut out);
            assert!(out
                .iter()
                .enumerate()
                .all(|(i, b)| *b == ((start + i) & 0xff) as u8));
        }
    }
}
