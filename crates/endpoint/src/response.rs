//! The encoding of a server's replies: the head of a response (code and options) and its
//! body, written into a datagram buffer; and the request options the server reads to route
//! a request (Request-Tag, the critical options it understands).

use coaplab_cc::time::Instant;
use coaplab_wire::option::number;
use coaplab_wire::{Block, Code, Message, MessageType, MessageWriter, ReadOptions, Token};
use std::net::SocketAddr;

use crate::media::Etag;
use crate::resource::Body;

/// The Request-Tag values of `msg`, each length-prefixed, or `None` without the option.
pub(crate) fn request_tag(msg: &Message<'_>) -> Option<Vec<u8>> {
    let mut tags = msg.all(number::REQUEST_TAG).peekable();
    tags.peek()?;
    let mut out = Vec::new();
    for t in tags {
        // At most 8 bytes each (RFC 9175 §3.2); a longer one is still told apart.
        out.push(t.len().min(255) as u8);
        out.extend_from_slice(&t[..t.len().min(255)]);
    }
    Some(out)
}

/// Options a request may carry that this server understands (RFC 7252 §5.4.1).
pub(crate) fn known_critical(n: u16) -> bool {
    matches!(
        n,
        number::URI_HOST
            | number::URI_PORT
            | number::URI_PATH
            | number::URI_QUERY
            | number::BLOCK1
            | number::BLOCK2
            | number::IF_MATCH
            | number::IF_NONE_MATCH
            | number::OBSERVE
    )
}

/// The head of a response: everything but the payload bytes.
pub(crate) struct Head<'a> {
    pub(crate) code: Code,
    /// ETag (RFC 7252 §5.10.6), with [`crate::Config::etags`].
    pub(crate) etag: Option<Etag>,
    /// Observe (RFC 7641 §4.2): the sequence number of a registration's response.
    pub(crate) observe: Option<u32>,
    /// Content-Format (RFC 7252 §5.10.3), when the resource names one.
    pub(crate) content_format: Option<u16>,
    pub(crate) block2: Option<Block>,
    pub(crate) block1: Option<Block>,
    pub(crate) size2: Option<u32>,
    /// Size1 (RFC 7252 §5.10.9): on a 4.13, the largest body accepted.
    pub(crate) size1: Option<u32>,
    /// Max-Age in seconds (RFC 7252 §5.10.5), on a 5.03 refusal: when to retry.
    pub(crate) max_age: Option<u32>,
    /// The Rexmit-Cnt option echoed (number, value), always the last option.
    pub(crate) echo: Option<(u16, &'a [u8])>,
}

impl Head<'_> {
    pub(crate) fn code(code: Code) -> Self {
        Head {
            code,
            etag: None,
            observe: None,
            content_format: None,
            block2: None,
            block1: None,
            size2: None,
            size1: None,
            max_age: None,
            echo: None,
        }
    }
}

/// Where a reply goes: its type, message ID and token.
#[derive(Clone, Copy)]
pub(crate) struct To {
    pub(crate) mtype: MessageType,
    pub(crate) mid: u16,
    pub(crate) token: Token,
}

/// Encodes a reply that is only a response code, e.g. 4.04; returns the code.
pub(crate) fn bare(out: &mut Vec<u8>, to: To, code: Code) -> Code {
    write(out, to, Head::code(code), Body::Zeros(0), 0, 0)
}

/// Encodes a reply with `n` bytes of `body` from `start` into `out`; returns its code.
pub(crate) fn write(
    out: &mut Vec<u8>,
    to: To,
    head: Head<'_>,
    body: Body<'_>,
    start: usize,
    n: usize,
) -> Code {
    let To { mtype, mid, token } = to;
    // Header 4 + token 8 + ETag (≤ 9 B) + Observe (≤ 4 B) + Content-Format (≤ 3 B) + Max-Age (≤ 5 B) +
    // Block2/Block1 (≤ 4 B each) + Size2 and Size1 (≤ 6 B each) + marker.
    out.clear();
    out.resize(4 + 8 + 9 + 4 + 3 + 5 + 4 + 4 + 6 + 6 + 1 + n, 0);
    let written = (|| {
        let mut w = MessageWriter::new(out, mtype, head.code, mid, token)?;
        if let Some(tag) = &head.etag {
            w.option(number::ETAG, tag)?;
        }
        if let Some(s) = head.observe {
            w.option_uint(number::OBSERVE, s)?;
        }
        if let Some(f) = head.content_format {
            w.option_uint(number::CONTENT_FORMAT, u32::from(f))?;
        }
        if let Some(a) = head.max_age {
            w.option_uint(number::MAX_AGE, a)?;
        }
        if let Some(b) = head.block2 {
            w.option_uint(number::BLOCK2, b.to_uint())?;
        }
        if let Some(b) = head.block1 {
            w.option_uint(number::BLOCK1, b.to_uint())?;
        }
        if let Some(s) = head.size2 {
            w.option_uint(number::SIZE2, s)?;
        }
        if let Some(s) = head.size1 {
            w.option_uint(number::SIZE1, s)?;
        }
        if let Some((n, v)) = head.echo {
            w.option(n, v)?;
        }
        Ok::<usize, coaplab_wire::EncodeError>(w.finish())
    })();
    let mut len = written.unwrap_or(0);
    if n > 0 && len > 0 {
        out[len] = 0xff;
        // The buffer was zeroed above (`resize`) and the head ends before the body: zeros
        // are already there (issue 35: a second fill per response).
        if !matches!(body, Body::Zeros(_)) {
            body.write(start, &mut out[len + 1..len + 1 + n]);
        }
        debug_assert!(
            !matches!(body, Body::Zeros(_)) || out[len + 1..len + 1 + n].iter().all(|&b| b == 0)
        );
        len += 1 + n;
    }
    out.truncate(len);
    head.code
}

/// Replaces the reply in `out` by 4.01 Unauthorized with an Echo value for `from`
/// (RFC 9175 §2.4), made with `key`
/// ([`crate::Amplification::key`]); returns its code. 4 + 8 + 14 bytes at most, so within three times
/// any request that could draw a large response.
pub(crate) fn challenge(
    key: &[u8; 16],
    now: Instant,
    from: SocketAddr,
    msg: &Message<'_>,
    reply_type: MessageType,
    reply_mid: u16,
    out: &mut Vec<u8>,
) -> Code {
    let value = crate::echo::value(key, from, now);
    let to = To {
        mtype: reply_type,
        mid: reply_mid,
        token: msg.token(),
    };
    let head = Head {
        echo: Some((number::ECHO, &value)),
        ..Head::code(Code::UNAUTHORIZED)
    };
    write(out, to, head, Body::Zeros(0), 0, 0)
}
