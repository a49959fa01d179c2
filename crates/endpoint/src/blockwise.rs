//! The client half of RFC 7959: encoding each block's request (Block1 uploads with Size1,
//! Block2 follow-ups accepting the server's block size) and deciding, on every response,
//! whether the request continues or completes.
//!
//! Layout (docs/experiments.md §4): Uri-Path segments, then Block2 (only in follow-ups, or
//! when early negotiation is configured), Block1, Size1, payload. The first GET carries no
//! Block2, giving the 8/10/11-byte requests of docs/experiments.md §4.1.

use coaplab_wire::option::number;
use coaplab_wire::{Block, Code, Message, MessageType, MessageWriter, ReadOptions, Token};

use crate::config::szx_of;
use crate::event::FailReason;
use crate::exchange::Req;
use crate::resource::segments;

/// [`encode_request`], copying the options and payload from the slot's last encoding when
/// they are the same ([`crate::exchange::RequestTail`]); the bytes are identical either way.
pub(crate) fn encode_request_reusing(r: &mut Req, mid: u16, token: Token, out: &mut Vec<u8>) {
    let reusable = !r.uploading && r.echo.is_empty();
    if reusable && r.tail.block2 == Some(r.b2_next) {
        out.clear();
        out.resize(4 + token.len(), 0);
        if MessageWriter::new(out, message_type(r), r.method, mid, token).is_ok() {
            out.extend_from_slice(&r.tail.bytes);
            return;
        }
    }
    encode_request(r, mid, token, out);
    r.tail.block2 = None;
    if reusable && !out.is_empty() {
        r.tail.bytes.clear();
        r.tail.bytes.extend_from_slice(&out[4 + token.len()..]);
        r.tail.block2 = Some(r.b2_next);
    }
}

fn message_type(r: &Req) -> MessageType {
    if r.confirmable {
        MessageType::Con
    } else {
        MessageType::Non
    }
}

/// Encodes the request's current block into `out` (cleared first; capacity is reused).
pub(crate) fn encode_request(r: &Req, mid: u16, token: Token, out: &mut Vec<u8>) {
    let chunk = if r.uploading {
        let end = (r.b1_offset + r.b1_size).min(r.payload.len());
        &r.payload[r.b1_offset..end]
    } else if r.b2_next.is_some_and(|b| b.num > 0) && r.method != Code::FETCH {
        // Block2 follow-ups carry no payload (RFC 7959 §2.4), except a FETCH's, whose
        // payload is part of what identifies the response (RFC 8132 §2.3.2).
        &[][..]
    } else {
        &r.payload[..]
    };
    let query_bytes: usize = r.query.iter().map(|q| q.len() + 5).sum();
    let echo_bytes = if r.echo.is_empty() {
        0
    } else {
        3 + r.echo.len()
    };
    let extra_bytes: usize = r.options.iter().map(|(_, v)| v.len() + 5).sum();
    let bound = 4
        + 8
        + extra_bytes
        + r.path.len()
        + 5 * (r.path.len() + 1)
        + query_bytes
        + 24
        + echo_bytes
        + 1
        + chunk.len();
    out.clear();
    out.resize(bound, 0);
    let mtype = message_type(r);
    let written = (|| {
        let mut w = MessageWriter::new(out, mtype, r.method, mid, token)?;
        // The caller's options go in among ours, in number order (RFC 7252 §3.1 deltas).
        let mut extra = r.options.iter().peekable();
        let mut before = |w: &mut MessageWriter<'_>, number: u16| {
            while let Some((n, v)) = extra.next_if(|(n, _)| *n < number) {
                w.option(n, v)?;
            }
            Ok::<(), coaplab_wire::EncodeError>(())
        };
        before(&mut w, number::URI_PATH)?;
        for seg in segments(&r.path) {
            w.option(number::URI_PATH, seg.as_bytes())?;
        }
        before(&mut w, number::URI_QUERY)?;
        for q in &r.query {
            w.option(number::URI_QUERY, q.as_bytes())?;
        }
        before(&mut w, number::BLOCK2)?;
        if let Some(b2) = r.b2_next {
            w.option_uint(number::BLOCK2, b2.to_uint())?;
        }
        before(&mut w, number::BLOCK1)?;
        if r.uploading {
            let szx = szx_of(r.b1_size).unwrap_or(6);
            let more = r.b1_offset + r.b1_size < r.payload.len();
            let b1 = Block {
                num: (r.b1_offset / r.b1_size) as u32,
                more,
                szx,
            };
            w.option_uint(number::BLOCK1, b1.to_uint())?;
            before(&mut w, number::SIZE1)?;
            if r.b1_offset == 0 {
                // RFC 7959 §4: Size1 announces the whole body with the first block.
                w.option_uint(number::SIZE1, r.payload.len() as u32)?;
            }
        }
        before(&mut w, number::ECHO)?;
        if !r.echo.is_empty() {
            w.option(number::ECHO, &r.echo)?;
        }
        before(&mut w, u16::MAX)?;
        if let Some((n, v)) = extra.next() {
            w.option(n, v)?;
        }
        w.payload(chunk)
    })();
    // The bound above always fits; an encoding error leaves an empty datagram that the peer
    // counts as malformed rather than a panic here.
    let n = written.unwrap_or(0);
    out.truncate(n);
}

/// The total body size a response's Size2 announces (RFC 7959 §4), 0 without one. A value
/// longer than Size2's 4 bytes is read as far as 8 bytes go (saturating beyond), not
/// dropped as unreadable: a peer announcing 10^12 B must not slip past the body limit.
pub(crate) fn announced_size2(options: &impl ReadOptions) -> u64 {
    options.first(number::SIZE2).map_or(0, |v| {
        if v.len() > 8 {
            u64::MAX
        } else {
            coaplab_wire::option::uint::decode(v)
        }
    })
}

/// The first critical option (RFC 7252 §5.4.1, odd number) of a response that this client
/// does not recognise: every registered critical option is recognised (Block1/Block2 are
/// acted on, the request options are meaningless in a response and harmless).
pub(crate) fn unknown_critical(options: &impl ReadOptions) -> Option<u16> {
    options.option_iter().map(|(n, _)| n).find(|&n| {
        number::is_critical(n)
            && !matches!(
                n,
                number::IF_MATCH
                    | number::URI_HOST
                    | number::IF_NONE_MATCH
                    | number::URI_PORT
                    | number::URI_PATH
                    | number::URI_QUERY
                    | number::ACCEPT
                    | number::BLOCK2
                    | number::BLOCK1
                    | number::PROXY_URI
                    | number::PROXY_SCHEME
            )
    })
}

/// What a response does to the request it answers: the request goes on (another block, or
/// the same request with an Echo value), completes, or fails.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Step {
    /// Its next exchange goes out.
    Next,
    /// It is complete.
    Complete,
    /// It fails for this reason.
    Fail(FailReason),
    /// Its Block1 or Block2 option is unreadable: the response is ignored
    /// ([`crate::IgnoreReason::BadOption`]) and the request fails
    /// ([`FailReason::BlockMismatch`]).
    BadOption,
}

/// Request `req`'s current exchange was answered by `msg`: moves the request on (its blocks,
/// its body, its Echo value) and says what follows. The body is kept with `keep_bodies` and
/// bounded by `max_body_bytes` ([`crate::Config`]); a body past it is released at once.
pub(crate) fn advance(
    req: &mut Req,
    msg: &Message<'_>,
    max_body_bytes: usize,
    keep_bodies: bool,
) -> Step {
    // RFC 9175 §2.4: a 4.01 with an Echo option asks for the same request again with
    // that value, proving we receive at our address. Twice at most: a server that keeps
    // challenging gets its 4.01 delivered.
    let echo = msg
        .first(number::ECHO)
        .filter(|v| (1..=40).contains(&v.len()));
    match echo {
        Some(v) if msg.code == Code::UNAUTHORIZED && req.echo_retries < 2 => {
            req.echo.clear();
            req.echo.extend_from_slice(v);
            req.echo_retries += 1;
            return Step::Next;
        }
        _ => req.echo.clear(),
    }
    let (b1, b2) = match (msg.block1(), msg.block2()) {
        (Ok(b1), Ok(b2)) => (b1, b2),
        _ => return Step::BadOption,
    };
    if req.uploading {
        if msg.code == Code::CONTINUE {
            let Some(b1) = b1 else {
                return Step::Fail(FailReason::BlockMismatch);
            };
            // The server may ask for smaller blocks from now on (RFC 7959 §2.3).
            req.b1_offset += req.b1_size;
            req.b1_size = req.b1_size.min(b1.size_bytes());
            if req.b1_offset >= req.payload.len() {
                return Step::Fail(FailReason::BlockMismatch);
            }
            return Step::Next;
        }
        req.uploading = false;
    }
    // RFC 7959 §4: Size2 announces the whole body; refuse it before asking for more.
    // A Size2 too long for its format (RFC 7959 §4: at most 4 bytes, e.g. 10^12 in 5) is
    // read for its value all the same: it announces more than any limit here.
    let announced = announced_size2(msg);
    let limit = max_body_bytes;
    if announced > limit as u64 || req.body_len + msg.payload.len() > limit {
        // Released now rather than when the slot is reused.
        req.body = Vec::new();
        return Step::Fail(FailReason::BodyTooLarge);
    }
    match b2 {
        Some(b) if !b.is_bert() => {
            if b.offset_bytes() != req.body_len {
                return Step::Fail(FailReason::BlockMismatch);
            }
            req.body_len += msg.payload.len();
            if keep_bodies {
                req.body.extend_from_slice(msg.payload);
            }
            if b.more && msg.code.class() == 2 {
                // Accept the server's block size (RFC 7959 §2.4): the next NUM follows
                // from the bytes received so far.
                let size = b.size_bytes();
                req.b2_next = Some(Block {
                    num: (req.body_len / size) as u32,
                    more: false,
                    szx: b.szx,
                });
                return Step::Next;
            }
        }
        Some(_) => {
            return Step::Fail(FailReason::BlockMismatch);
        }
        None => {
            req.body_len += msg.payload.len();
            if keep_bodies {
                req.body.extend_from_slice(msg.payload);
            }
        }
    }
    Step::Complete
}

#[cfg(test)]
mod tests {
    use super::*;

    fn req(method: Code, path: &str, payload: usize, b2: Option<u32>) -> Req {
        let mut r = Req::empty();
        r.method = method;
        r.path = path.into();
        r.payload = vec![0; payload];
        r.b1_size = 256;
        r.b2_next = b2.map(|n| Block::with_size(n, false, 256).unwrap());
        r
    }

    /// docs/experiments.md §4.1, §4.2, as crates/wire/tests/it/vectors.rs checks them.
    #[test]
    fn experiment_request_sizes() {
        let tok = Token::new(&[0x4a, 0x1f]).unwrap();
        let mut out = Vec::new();
        encode_request(&req(Code::GET, "f", 0, None), 1, tok, &mut out);
        assert_eq!(out, [0x42, 0x01, 0x00, 0x01, 0x4a, 0x1f, 0xb1, b'f']);
        encode_request(&req(Code::GET, "f", 0, Some(1)), 1, tok, &mut out);
        assert_eq!(out.len(), 10);
        assert_eq!(&out[8..], [0xc1, 0x14]);
        encode_request(&req(Code::GET, "f", 0, Some(15)), 1, tok, &mut out);
        assert_eq!(out.len(), 10);
        encode_request(&req(Code::GET, "f", 0, Some(16)), 1, tok, &mut out);
        assert_eq!(out.len(), 11);
        assert_eq!(&out[8..], [0xc2, 0x01, 0x04]);
        encode_request(&req(Code::GET, "f", 0, Some(399)), 1, tok, &mut out);
        assert_eq!(out.len(), 11);
        encode_request(&req(Code::POST, "f", 51, None), 1, tok, &mut out);
        assert_eq!(out.len(), 60);
        assert_eq!(out[8], 0xff);
    }

    #[test]
    fn fetch_follow_ups_repeat_the_payload() {
        let tok = Token::EMPTY;
        let mut out = Vec::new();
        encode_request(&req(Code::FETCH, "echo", 3, Some(1)), 1, tok, &mut out);
        assert_eq!(Message::decode(&out).unwrap().payload, [0, 0, 0]);
        encode_request(&req(Code::POST, "echo", 3, Some(1)), 1, tok, &mut out);
        assert!(Message::decode(&out).unwrap().payload.is_empty());
    }

    #[test]
    fn block1_carries_size1_on_the_first_block_only() {
        let tok = Token::EMPTY;
        let mut r = req(Code::PUT, "echo", 600, None);
        r.uploading = true;
        let mut out = Vec::new();
        encode_request(&r, 9, tok, &mut out);
        let m = Message::decode(&out).unwrap();
        assert_eq!(m.block1().unwrap(), Block::with_size(0, true, 256));
        assert_eq!(m.size1().unwrap(), Some(600));
        assert_eq!(m.payload.len(), 256);
        r.b1_offset = 512;
        encode_request(&r, 10, tok, &mut out);
        let m = Message::decode(&out).unwrap();
        assert_eq!(m.block1().unwrap(), Block::with_size(2, false, 256));
        assert_eq!(m.size1().unwrap(), None);
        assert_eq!(m.payload.len(), 88);
    }

    /// Whatever changes between two requests of one slot, the reused encoding is the one
    /// [`encode_request`] makes from scratch.
    #[test]
    fn a_reused_encoding_is_byte_for_byte_a_fresh_one() {
        let short = Token::new(&[0x4a, 0x1f]).unwrap();
        let long = Token::new(&[1, 2, 3, 4, 5, 6, 7, 8]).unwrap();
        let mut r = req(Code::GET, "sensors/temp", 0, None);
        r.query = vec!["unit=C".into()];
        r.options.push(coaplab_wire::option::number::ACCEPT, [50]);
        let (mut reused, mut fresh) = (Vec::new(), Vec::new());
        let mut check = |r: &mut Req, mid: u16, tok: Token, kept: bool| {
            assert_eq!(r.tail.block2.is_some(), kept, "mid {mid}");
            encode_request_reusing(r, mid, tok, &mut reused);
            encode_request(r, mid, tok, &mut fresh);
            assert_eq!(reused, fresh, "mid {mid}");
        };
        check(&mut r, 1, short, false);
        check(&mut r, 2, long, true);
        check(&mut r, 0xfffe, Token::EMPTY, true);
        r.confirmable = false;
        check(&mut r, 3, short, true);
        // A Block2 follow-up: the kept bytes carry another Block2, so they are made again.
        r.b2_next = Block::with_size(3, false, 256);
        check(&mut r, 4, short, true);
        check(&mut r, 5, short, true);
        r.b2_next = None;
        check(&mut r, 6, short, true);
        // An Echo value or a Block1 upload is per exchange: nothing is kept for them.
        r.echo = vec![9; 8];
        check(&mut r, 7, short, true);
        check(&mut r, 8, short, false);
        r.echo.clear();
        r.payload = vec![7; 600];
        r.uploading = true;
        check(&mut r, 9, short, false);
        check(&mut r, 10, short, false);
    }

    /// A response built from `code`, `options` and `payload`, as the client reads it.
    fn answer(code: Code, options: &[(u16, &[u8])], payload: &[u8]) -> Vec<u8> {
        let mut m = coaplab_wire::MessageBuf::new(MessageType::Ack, code, 1, Token::EMPTY);
        for (n, v) in options {
            m.options.push(*n, *v);
        }
        m.payload = payload.to_vec();
        m.to_bytes().unwrap()
    }

    fn block2(num: u32, more: bool) -> Vec<u8> {
        let b = Block::with_size(num, more, 16).unwrap().to_uint();
        let mut buf = [0; 4];
        let n = coaplab_wire::option::uint::encode(b, &mut buf);
        buf[..n].to_vec()
    }

    #[test]
    fn an_echo_challenge_is_answered_twice_then_delivered() {
        let mut r = req(Code::GET, "data/10", 0, None);
        let challenge = answer(Code::UNAUTHORIZED, &[(number::ECHO, &[7; 8])], &[]);
        let msg = Message::decode(&challenge).unwrap();
        assert_eq!(advance(&mut r, &msg, 100, true), Step::Next);
        assert_eq!((r.echo.as_slice(), r.echo_retries), (&[7; 8][..], 1));
        assert_eq!(advance(&mut r, &msg, 100, true), Step::Next);
        // A third challenge: the 4.01 completes the request, its Echo value dropped.
        assert_eq!(advance(&mut r, &msg, 100, true), Step::Complete);
        assert!(r.echo.is_empty());
    }

    #[test]
    fn block2_asks_for_the_next_block_until_the_last_then_completes() {
        let mut r = req(Code::GET, "data/20", 0, None);
        let first = answer(
            Code::CONTENT,
            &[(number::BLOCK2, &block2(0, true))],
            &[1; 16],
        );
        let step = advance(&mut r, &Message::decode(&first).unwrap(), 100, true);
        assert_eq!(
            (step, r.b2_next, r.body_len),
            (Step::Next, Block::with_size(1, false, 16), 16)
        );
        let last = answer(
            Code::CONTENT,
            &[(number::BLOCK2, &block2(1, false))],
            &[2; 4],
        );
        let step = advance(&mut r, &Message::decode(&last).unwrap(), 100, true);
        assert_eq!((step, r.body_len, r.body.len()), (Step::Complete, 20, 20));
    }

    #[test]
    fn a_block_out_of_sequence_or_past_the_limit_fails_the_request() {
        let mut r = req(Code::GET, "data/40", 0, None);
        let skipped = answer(
            Code::CONTENT,
            &[(number::BLOCK2, &block2(1, true))],
            &[1; 16],
        );
        let step = advance(&mut r, &Message::decode(&skipped).unwrap(), 100, true);
        assert_eq!(step, Step::Fail(FailReason::BlockMismatch));
        let mut r = req(Code::GET, "data/40", 0, None);
        r.body = Vec::with_capacity(64);
        let big = answer(
            Code::CONTENT,
            &[(number::BLOCK2, &block2(0, true))],
            &[1; 16],
        );
        let step = advance(&mut r, &Message::decode(&big).unwrap(), 15, true);
        // The body gathered so far is released at once, not when the slot is reused.
        assert_eq!(
            (step, r.body.capacity()),
            (Step::Fail(FailReason::BodyTooLarge), 0)
        );
        let unreadable = answer(Code::CONTENT, &[(number::BLOCK2, &[1, 2, 3, 4])], &[]);
        let step = advance(&mut r, &Message::decode(&unreadable).unwrap(), 100, true);
        assert_eq!(step, Step::BadOption);
    }
}
