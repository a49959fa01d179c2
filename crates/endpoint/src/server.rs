//! The serving side: a request is deduplicated, routed to a [`crate::Resource`] and answered
//! piggybacked in the ACK (zero processing time), as a NON response to a NON, or, with a
//! processing delay, by an empty ACK and a separate CON response (RFC 7252 §5.2). Block-wise
//! (RFC 7959): Block1 uploads are reassembled per (client, path) with 2.31 Continue; bodies
//! larger than a block, or requests carrying Block2, are answered in blocks of
//! `min(requested, configured)` size; Size2 is sent when the request asks for it.

use std::net::SocketAddr;

use coaplab_cc::time::Instant;
use coaplab_wire::option::number;
use coaplab_wire::{Block, Code, Message, MessageType, MessageWriter, ReadOptions, Token};

use crate::config::szx_of;
use crate::dedup::Entry;
use crate::endpoint::Endpoint;
use crate::event::Event;
use crate::exchange::{Owner, XState};
use crate::resource::{Action, Body};

/// Block1 uploads being reassembled at once, over all clients; one more is refused with 5.03
/// (bounds the server's memory under a flood of first blocks).
pub const MAX_PENDING_UPLOADS: usize = 1024;

/// The largest body a Block1 upload may reach; beyond it the server answers 4.13 Request
/// Entity Too Large (RFC 7959 §2.9.3) and forgets the upload.
pub const MAX_UPLOAD_BYTES: usize = 1 << 20;

/// Options a request may carry that this server understands (RFC 7252 §5.4.1).
fn known_critical(n: u16) -> bool {
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
    )
}

/// The head of a response: everything but the payload bytes.
struct Head<'a> {
    code: Code,
    /// Content-Format (RFC 7252 §5.10.3), when the resource names one.
    content_format: Option<u16>,
    block2: Option<Block>,
    block1: Option<Block>,
    size2: Option<u32>,
    /// The Rexmit-Cnt option echoed (number, value), always the last option.
    echo: Option<(u16, &'a [u8])>,
}

impl Head<'_> {
    fn code(code: Code) -> Self {
        Head {
            code,
            content_format: None,
            block2: None,
            block1: None,
            size2: None,
            echo: None,
        }
    }
}

impl Endpoint {
    /// A CON or NON request arrived.
    pub(crate) fn on_request(&mut self, now: Instant, from: SocketAddr, msg: &Message<'_>) {
        if self.replay_duplicate(now, from, msg) {
            return;
        }
        let con = msg.mtype == MessageType::Con;
        let separate = con && self.config.processing_delay > coaplab_cc::Duration::ZERO;
        let mut out = self.buffer();
        let (reply_type, reply_mid) = match (con, separate) {
            (true, false) => (MessageType::Ack, msg.message_id),
            (true, true) => (MessageType::Con, self.alloc_message_id()),
            (false, _) => (MessageType::Non, self.alloc_message_id()),
        };
        let code = self.respond(now, from, msg, reply_type, reply_mid, &mut out);
        self.events.push_back(Event::Served {
            from,
            message_id: msg.message_id,
            code,
            at: now,
        });
        if !separate {
            if con {
                self.send_reply(now, from, msg.message_id, &out, false);
                self.recycle(out);
            } else {
                // NON duplicates are dropped, not answered again (RFC 7252 §4.5).
                self.dedup
                    .insert(now, from, msg.message_id, Entry { reply: None });
                self.transmits.push_back(crate::event::Transmit {
                    destination: from,
                    contents: out,
                    meta: crate::event::TransmitMeta::Reply {
                        message_id: reply_mid,
                        replayed: false,
                    },
                });
            }
            return;
        }
        // §5.2.2: acknowledge now, respond after the processing delay as a CON of our own.
        self.send_empty(now, from, MessageType::Ack, msg.message_id);
        let p = self.peer(from);
        let slot = self.alloc_exchange(Owner::Separate, p, reply_mid, msg.token(), true);
        let old = std::mem::replace(&mut self.exchanges[slot].bytes, out);
        self.recycle(old);
        let x = &mut self.exchanges[slot];
        x.state = XState::Delayed;
        x.deadline = Some(now + self.config.processing_delay);
    }

    /// Runs the resource and encodes the reply into `out`; returns the response code.
    fn respond(
        &mut self,
        now: Instant,
        from: SocketAddr,
        msg: &Message<'_>,
        reply_type: MessageType,
        reply_mid: u16,
        out: &mut Vec<u8>,
    ) -> Code {
        let token = msg.token();
        let to = To {
            mtype: reply_type,
            mid: reply_mid,
            token,
        };
        let path = msg
            .options
            .iter()
            .filter(|(n, _)| *n == number::URI_PATH)
            .map(|(_, v)| v);
        let (b1, b2) = match (msg.block1(), msg.block2()) {
            (Ok(b1), Ok(b2))
                if !b1.is_some_and(Block::is_bert) && !b2.is_some_and(Block::is_bert) =>
            {
                (b1, b2)
            }
            _ => return bare(out, to, Code::BAD_OPTION),
        };
        if msg.first_unknown_critical(known_critical).is_some() {
            return bare(out, to, Code::BAD_OPTION);
        }
        if let Some(content) = self.router.find_content(path.clone()) {
            let (code, format, body) = content.answer(msg.code, now);
            let head = Head {
                content_format: format,
                ..Head::code(code)
            };
            let n = body.len();
            return write(out, to, head, Body::Bytes(&body), 0, n);
        }
        let Some(resource) = self.router.find(path.clone()) else {
            return bare(out, to, Code::NOT_FOUND);
        };
        let action = resource.action(msg.code);
        let wants_size2 = msg.has(number::SIZE2);
        // spec/algorithms.md §7.6: Rexmit-Cnt comes back unmodified, in piggybacked responses
        // only (never in an empty ACK's later separate response).
        let echo = self
            .config
            .rexmit_cnt_echo
            .filter(|_| reply_type == MessageType::Ack)
            .and_then(|n| msg.first(n).map(|v| (n, v)));
        let server_szx = szx_of(self.config.block_size_bytes).unwrap_or(6);
        let key = || (from, path.clone().collect::<Vec<_>>().join(&b'/'));

        // Block1: reassemble the upload before running the resource.
        let mut head_b1 = None;
        let mut uploaded = None;
        if let Some(b1) = b1 {
            let k = key();
            if self.uploads.len() >= MAX_PENDING_UPLOADS && !self.uploads.contains_key(&k) {
                return bare(out, to, Code::SERVICE_UNAVAILABLE);
            }
            if b1.offset_bytes() + msg.payload.len() > MAX_UPLOAD_BYTES {
                self.uploads.remove(&k);
                return bare(out, to, Code::REQUEST_ENTITY_TOO_LARGE);
            }
            let buf = self.uploads.entry(k.clone()).or_default();
            if b1.num == 0 {
                buf.clear();
            }
            if b1.offset_bytes() != buf.len() {
                self.uploads.remove(&k);
                return bare(out, to, Code::REQUEST_ENTITY_INCOMPLETE);
            }
            buf.extend_from_slice(msg.payload);
            if b1.more {
                let head = Head {
                    block1: Some(b1),
                    echo,
                    ..Head::code(Code::CONTINUE)
                };
                return write(out, to, head, Body::Zeros(0), 0, 0);
            }
            head_b1 = Some(b1);
            uploaded = self.uploads.remove(&k);
        }

        // A later block of an echo's response comes from the stored body (RFC 7959 §2.4).
        let stored = match (action, b2) {
            (Action::Echo, Some(b)) if b.num > 0 && msg.payload.is_empty() => {
                self.pending_bodies.get(&key()).cloned()
            }
            _ => None,
        };
        let request_body: &[u8] = stored
            .as_deref()
            .or(uploaded.as_deref())
            .unwrap_or(msg.payload);
        let (code, body) = match action {
            Action::NotAllowed => (Code::METHOD_NOT_ALLOWED, Body::Zeros(0)),
            Action::Data { len_bytes } => (Code::CONTENT, Body::Pattern(len_bytes)),
            Action::Fixed { code, len_bytes } => (code, Body::Zeros(len_bytes)),
            Action::Echo => {
                let code = if matches!(msg.code, Code::POST | Code::PUT) {
                    Code::CHANGED
                } else {
                    Code::CONTENT
                };
                (code, Body::Bytes(request_body))
            }
        };
        let len = body.len();
        let mut head = Head {
            code,
            content_format: None,
            block2: None,
            block1: head_b1,
            size2: wants_size2.then_some(len as u32),
            echo,
        };
        let (start, n) = match b2 {
            Some(b) => {
                let szx = b.szx.min(server_szx);
                let num = b.num << (b.szx - szx);
                let size = 1usize << (szx + 4);
                let start = num as usize * size;
                if start > len || (start == len && len > 0) {
                    return bare(out, to, Code::BAD_OPTION);
                }
                let n = size.min(len - start);
                head.block2 = Some(Block {
                    num,
                    more: start + n < len,
                    szx,
                });
                (start, n)
            }
            None if len > 1usize << (server_szx + 4) => {
                let size = 1usize << (server_szx + 4);
                head.block2 = Some(Block {
                    num: 0,
                    more: true,
                    szx: server_szx,
                });
                (0, size)
            }
            None => (0, len),
        };
        // Stored echo bodies are bounded like uploads: when full, later blocks are refused.
        if matches!(action, Action::Echo)
            && head.block2.is_some_and(|b| b.num == 0 && b.more)
            && (self.pending_bodies.len() < MAX_PENDING_UPLOADS
                || self.pending_bodies.contains_key(&key()))
        {
            let body = request_body.to_vec();
            self.pending_bodies.insert(key(), body);
        }
        write(out, to, head, body, start, n)
    }
}

/// Where a reply goes: its type, message ID and token.
#[derive(Clone, Copy)]
struct To {
    mtype: MessageType,
    mid: u16,
    token: Token,
}

/// Encodes a reply that is only a response code, e.g. 4.04; returns the code.
fn bare(out: &mut Vec<u8>, to: To, code: Code) -> Code {
    write(out, to, Head::code(code), Body::Zeros(0), 0, 0)
}

/// Encodes a reply with `n` bytes of `body` from `start` into `out`; returns its code.
fn write(
    out: &mut Vec<u8>,
    to: To,
    head: Head<'_>,
    body: Body<'_>,
    start: usize,
    n: usize,
) -> Code {
    let To { mtype, mid, token } = to;
    // Header 4 + token 8 + Content-Format (≤ 3 B) + Block2/Block1 (≤ 4 B each) + Size2 (≤ 5 B) + marker.
    out.clear();
    out.resize(4 + 8 + 3 + 4 + 4 + 5 + 1 + n, 0);
    let written = (|| {
        let mut w = MessageWriter::new(out, mtype, head.code, mid, token)?;
        if let Some(f) = head.content_format {
            w.option_uint(number::CONTENT_FORMAT, u32::from(f))?;
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
        if let Some((n, v)) = head.echo {
            w.option(n, v)?;
        }
        Ok::<usize, coaplab_wire::EncodeError>(w.finish())
    })();
    let mut len = written.unwrap_or(0);
    if n > 0 && len > 0 {
        out[len] = 0xff;
        body.write(start, &mut out[len + 1..len + 1 + n]);
        len += 1 + n;
    }
    out.truncate(len);
    head.code
}
