//! The encoding of a server's replies: the head of a response (code and options) and its
//! body, written into a datagram buffer; and the request options the server reads to route
//! a request (Request-Tag, the critical options it understands).

use coaplab_cc::time::Instant;
use coaplab_wire::option::number;
use coaplab_wire::{
    Block, Code, EncodeError, Message, MessageType, MessageWriter, ReadOptions, Token,
};
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
    /// Whether the head carries no option at all.
    #[inline]
    fn is_bare(&self) -> bool {
        self.etag.is_none()
            && self.observe.is_none()
            && self.content_format.is_none()
            && self.max_age.is_none()
            && self.block2.is_none()
            && self.block1.is_none()
            && self.size2.is_none()
            && self.size1.is_none()
            && self.echo.is_none()
    }

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

/// Bytes of a head that [`write`] encodes on its stack before copying it into `out`: the
/// room its buffer always had before the payload (header 4 + token 8 + ETag ≤ 9 B + Observe
/// ≤ 4 B + Content-Format ≤ 3 B + Max-Age ≤ 5 B + Block2/Block1 ≤ 4 B each + Size2 and Size1
/// ≤ 6 B each + marker).
const HEAD_ROOM: usize = 4 + 8 + 9 + 4 + 3 + 5 + 4 + 4 + 6 + 6 + 1;

/// Encodes a reply with `n` bytes of `body` from `start` into `out`; returns its code.
///
/// The head is encoded on the stack and `out` gets each byte once: the head, the marker and
/// the body appended, rather than `out` zero-filled to its largest size, written over, and
/// the body's zeros written again (issue 35: measured, about 2 of a reply's ~210 instructions:
/// the two copies cost about what the fills did).
/// A head larger than [`HEAD_ROOM`] (only with a long Rexmit-Cnt echo) takes the path that
/// encodes into `out` itself, whose room grows with the body.
pub(crate) fn write(
    out: &mut Vec<u8>,
    to: To,
    head: Head<'_>,
    body: Body<'_>,
    start: usize,
    n: usize,
) -> Code {
    let mut buf = [0u8; HEAD_ROOM];
    let Ok(len) = encode_head(&mut buf, to, &head) else {
        return write_in_place(out, to, head, body, start, n);
    };
    out.clear();
    out.extend_from_slice(&buf[..len]);
    if n > 0 && len > 0 {
        out.push(0xff);
        body.append(start, n, out);
    }
    head.code
}

/// [`write`] into `out` itself, zero-filled to the head's room plus the body first.
fn write_in_place(
    out: &mut Vec<u8>,
    to: To,
    head: Head<'_>,
    body: Body<'_>,
    start: usize,
    n: usize,
) -> Code {
    out.clear();
    out.resize(HEAD_ROOM + n, 0);
    let mut len = encode_head(out, to, &head).unwrap_or(0);
    if n > 0 && len > 0 {
        out[len] = 0xff;
        body.write(start, &mut out[len + 1..len + 1 + n]);
        len += 1 + n;
    }
    out.truncate(len);
    head.code
}

/// Encodes the header, token and options of `head` at the start of `out`; returns their
/// length.
#[inline(always)]
fn encode_head(out: &mut [u8], to: To, head: &Head<'_>) -> Result<usize, EncodeError> {
    let To { mtype, mid, token } = to;
    let mut w = MessageWriter::new(out, mtype, head.code, mid, token)?;
    if head.is_bare() {
        // Most replies (a piggybacked 2.04 or 2.05) carry no option: one test, not nine.
        return Ok(w.finish());
    }
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
    Ok(w.finish())
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

#[cfg(test)]
mod tests {
    use super::*;

    fn head<'a>(code: Code, echo: Option<(u16, &'a [u8])>, size2: Option<u32>) -> Head<'a> {
        Head {
            etag: Some(Etag::default()),
            size2,
            block2: Some(Block {
                num: 3,
                more: true,
                szx: 6,
            }),
            echo,
            ..Head::code(code)
        }
    }

    #[test]
    fn the_stack_head_gives_the_bytes_the_in_place_encoding_gives() {
        let token = Token::new(&[9, 8, 7, 6, 5, 4, 3, 2]).unwrap();
        let to = |mtype| To {
            mtype,
            mid: 0x1234,
            token,
        };
        let data = [7u8; 300];
        let long = [0xabu8; 200];
        let bodies = [
            Body::Zeros(40),
            Body::Pattern(1_000),
            Body::Bytes(&data),
            Body::Zeros(0),
        ];
        let mut cases = 0;
        for body in bodies {
            for (start, n) in [(0, 0), (0, 1), (5, 33), (0, body.len().min(256))] {
                if start + n > body.len() {
                    continue;
                }
                for echo in [
                    None,
                    Some((number::ECHO, &long[..4])),
                    Some((2052, &long[..])),
                ] {
                    // A head past HEAD_ROOM only fits without a body (with one, the in-place
                    // encoding's buffer is too small for it or for the body behind it).
                    if echo.is_some_and(|(_, v)| v.len() > 4) && n > 1 {
                        continue;
                    }
                    let heads = [
                        Head::code(Code::CHANGED),
                        head(Code::CONTENT, echo, Some(1_000)),
                        Head {
                            echo,
                            ..Head::code(Code::CONTENT)
                        },
                        Head::code(Code::EMPTY),
                    ];
                    for h in heads {
                        let (code, copy) = (h.code, Head { ..h });
                        let mut fast = vec![0xee; 7];
                        let mut slow = vec![0xdd; 3];
                        let t = if code == Code::EMPTY {
                            // An Empty message with a token cannot be encoded: nothing is.
                            to(MessageType::Ack)
                        } else {
                            to(MessageType::Non)
                        };
                        assert_eq!(write(&mut fast, t, h, body, start, n), code);
                        write_in_place(&mut slow, t, copy, body, start, n);
                        assert_eq!(fast, slow, "{code:?} {start}+{n}");
                        cases += usize::from(!fast.is_empty() && n > 0);
                    }
                }
            }
        }
        assert!(cases > 20, "{cases}");
    }
}
