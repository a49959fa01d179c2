//! The encoding of a session's responses (RFC 8323 §3.2): the frame's options and body, with
//! the frame's length known before a body is produced, so that a response too large for the
//! peer or the write queue is replaced by an empty 5.00 or 5.03 ([`Refusal`]).

use coaplab_wire::option::{number, uint};
use coaplab_wire::{Block, Code, Token};

use crate::resource::Body;
use crate::tcp::writes::QUEUED_MESSAGE_BYTES;

/// The options a response carries here besides its code and token, all optional.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Extra {
    /// Content-Format.
    pub(crate) content_format: Option<u16>,
    /// Observe (RFC 7641): a registration's answer and every notification.
    pub(crate) observe: Option<u32>,
    /// Max-Age in seconds (an observable resource's answers).
    pub(crate) max_age: Option<u32>,
    /// The last Block1 of an upload.
    pub(crate) block1: Option<Block>,
}

/// A response being encoded, and the limits it must keep.
#[derive(Debug)]
pub(crate) struct Response {
    /// The frame's bytes in memory: header, token, options, and a payload given as bytes.
    pub(crate) bytes: Vec<u8>,
    /// A generated payload, produced as it is written.
    pub(crate) tail: Option<Body<'static>>,
    /// The peer's Max-Message-Size: the largest frame we may send.
    pub(crate) max_frame_bytes: usize,
    /// What the write queue can still take ([`crate::tcp::Session::queued_bytes`]).
    pub(crate) room: usize,
    /// Why the answer was replaced, if it was.
    pub(crate) refused: Option<Refusal>,
}

/// Why a response was replaced by an empty one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Refusal {
    /// Its frame (`len` bytes; `usize::MAX` beyond counting) exceeds the peer's
    /// Max-Message-Size: 5.00.
    TooLarge { len: usize },
    /// It would add `len` bytes to a write queue with `room` left: 5.03.
    QueueFull { len: usize, room: usize },
}

/// Encodes a response frame into `out`: `code`, `token`, the options of `extra` (the only
/// ones a response carries here), and `body` after a marker when
/// it is not empty (RFC 8323 §3.2). Given bytes are copied; a generated body becomes
/// `out.tail`. The frame's length is known first: when it exceeds `out.max_frame_bytes` or
/// its bytes in memory `out.room`, an empty 5.00 or 5.03 is encoded instead and
/// `out.refused` says why. Bodies up to 4 GiB + 65,804 B fit the 32-bit length.
pub(crate) fn encode_response(
    out: &mut Response,
    code: Code,
    token: Token,
    extra: Extra,
    body: Body<'_>,
) {
    // At most four options of at most 4 value bytes: deltas below 269, lengths below 13.
    let mut opts = [0u8; 24];
    let mut opt_len = 0;
    let mut prev = 0;
    let mut put = |number: u16, v: u32| {
        let mut value = [0u8; 4];
        let n = uint::encode(v, &mut value);
        let delta = number - prev;
        prev = number;
        if delta < 13 {
            opts[opt_len] = ((delta as u8) << 4) | n as u8;
            opt_len += 1;
        } else {
            opts[opt_len] = (13 << 4) | n as u8;
            opts[opt_len + 1] = (delta - 13) as u8;
            opt_len += 2;
        }
        opts[opt_len..opt_len + n].copy_from_slice(&value[..n]);
        opt_len += n;
    };
    if let Some(s) = extra.observe {
        put(number::OBSERVE, s);
    }
    if let Some(f) = extra.content_format {
        put(number::CONTENT_FORMAT, u32::from(f));
    }
    if let Some(s) = extra.max_age {
        put(number::MAX_AGE, s);
    }
    if let Some(b) = extra.block1 {
        put(number::BLOCK1, b.to_uint());
    }
    let n = body.len();
    // Options, marker and payload; then the whole frame: Len/TKL, extended length, code,
    // token (RFC 8323 §3.2).
    let body_len = if n == 0 {
        Some(opt_len)
    } else {
        n.checked_add(opt_len + 1)
    };
    let ext_len = match body_len {
        Some(0..=12) => 0,
        Some(13..=268) => 1,
        Some(269..=65804) => 2,
        _ => 4,
    };
    let frame_len = body_len
        .filter(|&b| b <= u32::MAX as usize + 65_805) // the 32-bit extended length
        .and_then(|b| b.checked_add(1 + ext_len + 1 + token.len()));
    let in_memory = frame_len.map(|f| match body {
        Body::Bytes(_) => f,
        Body::Pattern(_) | Body::Zeros(_) => f - n,
    });
    let refusal = match (frame_len, in_memory) {
        (Some(f), Some(m)) if f <= out.max_frame_bytes => {
            let cost = m + QUEUED_MESSAGE_BYTES;
            (cost > out.room).then_some(Refusal::QueueFull {
                len: cost,
                room: out.room,
            })
        }
        (f, _) => Some(Refusal::TooLarge {
            len: f.unwrap_or(usize::MAX),
        }),
    };
    if let (Some(r), None) = (refusal, out.refused) {
        out.refused = Some(r);
        let code = match r {
            Refusal::TooLarge { .. } => Code::INTERNAL_SERVER_ERROR,
            Refusal::QueueFull { .. } => Code::SERVICE_UNAVAILABLE,
        };
        out.bytes.clear();
        out.tail = None;
        return encode_response(out, code, token, Extra::default(), Body::Zeros(0));
    }
    let bytes = &mut out.bytes;
    let body_len = body_len.unwrap_or(0);
    let tkl = token.len() as u8;
    match body_len {
        0..=12 => bytes.push(((body_len as u8) << 4) | tkl),
        13..=268 => bytes.extend_from_slice(&[(13 << 4) | tkl, (body_len - 13) as u8]),
        269..=65804 => {
            bytes.push((14 << 4) | tkl);
            bytes.extend_from_slice(&((body_len - 269) as u16).to_be_bytes());
        }
        _ => {
            bytes.push((15 << 4) | tkl);
            let ext = u32::try_from(body_len - 65805).unwrap_or(u32::MAX);
            bytes.extend_from_slice(&ext.to_be_bytes());
        }
    }
    bytes.push(code.0);
    bytes.extend_from_slice(token.as_bytes());
    bytes.extend_from_slice(&opts[..opt_len]);
    if n > 0 {
        bytes.push(0xff);
        match body {
            Body::Bytes(b) => bytes.extend_from_slice(b),
            Body::Pattern(n) => out.tail = Some(Body::Pattern(n)),
            Body::Zeros(n) => out.tail = Some(Body::Zeros(n)),
        }
    }
}
