//! The serving side of a session: a request is routed to a [`crate::Resource`] of the same
//! [`crate::Router`] the UDP server uses and answered at once, as one frame however large
//! (no block-wise: spec/experiments.md §5.1 sends the 102,400-B object as one 102,408-B
//! message). The body is written straight into the frame, never materialised apart. A Block1
//! upload (BERT included) is reassembled first.

use coaplab_cc::time::Instant;
use coaplab_wire::frame::Frame;
use coaplab_wire::option::{number, uint};
use coaplab_wire::{Block, Code, Token};

use crate::request_options;
use crate::resource::{Action, Body};
use crate::server::MAX_UPLOAD_BYTES;
use crate::tcp::event::{SessionEvent, Write, WriteKind};
use crate::tcp::session::{Session, Upload, MAX_UPLOADS};

/// Request options this server understands (RFC 7252 §5.4.1). Block1 is reassembled
/// (`Session::upload`); Block2 is not among them (every answer is one message), so a request
/// carrying it gets 4.02. Accept, Proxy-Uri and Proxy-Scheme are handled by the check shared
/// with the UDP server (`crate::request_options`).
fn known_critical(n: u16) -> bool {
    matches!(
        n,
        number::BLOCK1
            | number::URI_HOST
            | number::URI_PORT
            | number::URI_PATH
            | number::URI_QUERY
            | number::IF_MATCH
            | number::IF_NONE_MATCH
    )
}

impl Session {
    /// A request of `len` bytes arrived.
    pub(crate) fn serve(&mut self, now: Instant, frame: &Frame<'_>, len: usize) {
        let token = frame.token();
        let mut bytes = self.buffer();
        let block1 = frame
            .options
            .iter()
            .find(|(n, _)| *n == number::BLOCK1)
            .map(|(_, v)| v);
        let mut code = match block1 {
            Some(v) => self.upload(now, frame, v, &mut bytes),
            None => self.respond(now, frame, frame.payload, None, &mut bytes),
        };
        let max = self.peer_max_message_size;
        if bytes.len() > max as usize {
            // RFC 8323 §5.3.1: never send more than the peer's Max-Message-Size.
            self.events.push_back(SessionEvent::ResponseRefused {
                token,
                len: bytes.len(),
                max,
                at: now,
            });
            code = Code::INTERNAL_SERVER_ERROR;
            bytes.clear();
            encode_response(&mut bytes, code, token, None, None, Body::Zeros(0));
        }
        self.events.push_back(SessionEvent::Served {
            token,
            method: frame.code,
            code,
            request_bytes: len,
            response_bytes: bytes.len(),
            at: now,
        });
        self.writes.push_back(Write {
            bytes,
            kind: WriteKind::Response(code),
        });
    }

    /// One block of a Block1 upload (RFC 7959 §2.5; BERT, RFC 8323 §6): 2.31 Continue until
    /// the last block, then the resource runs on the whole body and its answer carries the
    /// last Block1. A block out of sequence gets 4.08, a body beyond [`MAX_UPLOAD_BYTES`]
    /// 4.13.
    fn upload(&mut self, now: Instant, frame: &Frame<'_>, value: &[u8], out: &mut Vec<u8>) -> Code {
        let token = frame.token();
        let bare = |out: &mut Vec<u8>, code| {
            encode_response(out, code, token, None, None, Body::Zeros(0));
            code
        };
        let Ok(block) = Block::decode(value) else {
            return bare(out, Code::BAD_OPTION);
        };
        let mut key = vec![frame.code.0];
        for (n, v) in frame.options.iter() {
            if n == number::URI_PATH || n == number::URI_QUERY {
                key.push(n as u8);
                key.push(v.len() as u8);
                key.extend_from_slice(v);
            }
        }
        let at = self.uploads.iter().position(|u| u.key == key);
        if block.num == 0 {
            if let Some(i) = at {
                self.uploads.remove(i);
            }
            if self.uploads.len() >= MAX_UPLOADS {
                self.uploads.remove(0);
            }
            self.uploads.push(Upload {
                key,
                body: Vec::new(),
            });
        }
        let i = if block.num == 0 {
            self.uploads.len() - 1
        } else {
            match at {
                Some(i) if self.uploads[i].body.len() == block.offset_bytes() => i,
                _ => return bare(out, Code::REQUEST_ENTITY_INCOMPLETE),
            }
        };
        if self.uploads[i].body.len() + frame.payload.len() > MAX_UPLOAD_BYTES {
            self.uploads.remove(i);
            return bare(out, Code::REQUEST_ENTITY_TOO_LARGE);
        }
        self.uploads[i].body.extend_from_slice(frame.payload);
        if block.more {
            let code = Code::CONTINUE;
            encode_response(out, code, token, None, Some(block), Body::Zeros(0));
            return code;
        }
        let body = self.uploads.remove(i).body;
        self.respond(now, frame, &body, Some(block), out)
    }

    /// Runs the resource on `payload` and encodes the response into `out`, with `block1`
    /// when it ends an upload; returns its code.
    fn respond(
        &self,
        now: Instant,
        frame: &Frame<'_>,
        payload: &[u8],
        block1: Option<Block>,
        out: &mut Vec<u8>,
    ) -> Code {
        let token = frame.token();
        let (code, body) = 'answer: {
            let accept = match request_options::check(frame, known_critical) {
                Ok(accept) => accept,
                Err(code) => break 'answer (code, Body::Zeros(0)),
            };
            let path = frame
                .options
                .iter()
                .filter(|(n, _)| *n == number::URI_PATH)
                .map(|(_, v)| v);
            if let Some(content) = self.router.find_content(path.clone()) {
                let (code, format, body) = content.answer(frame.code, now);
                if code.class() == 2 && !request_options::acceptable(accept, format) {
                    break 'answer (Code::NOT_ACCEPTABLE, Body::Zeros(0));
                }
                encode_response(out, code, token, format, block1, Body::Bytes(&body));
                return code;
            }
            let Some(resource) = self.router.find(path) else {
                break 'answer (Code::NOT_FOUND, Body::Zeros(0));
            };
            let action = resource.action(frame.code);
            if !matches!(action, Action::NotAllowed) && !request_options::acceptable(accept, None) {
                break 'answer (Code::NOT_ACCEPTABLE, Body::Zeros(0));
            }
            match action {
                Action::NotAllowed => (Code::METHOD_NOT_ALLOWED, Body::Zeros(0)),
                Action::Data { len_bytes } => (Code::CONTENT, Body::Pattern(len_bytes)),
                Action::Fixed { code, len_bytes } => (code, Body::Zeros(len_bytes)),
                Action::Echo => {
                    let code = if matches!(frame.code, Code::POST | Code::PUT) {
                        Code::CHANGED
                    } else {
                        Code::CONTENT
                    };
                    (code, Body::Bytes(payload))
                }
            }
        };
        encode_response(out, code, token, None, block1, body);
        code
    }
}

/// Appends a response frame: `code`, `token`, an optional Content-Format and an optional
/// Block1 (the only options a response carries here), and `body` after a marker when it is
/// not empty (RFC 8323 §3.2). Bodies up to 4 GiB + 65,804 B fit the 32-bit length.
pub(crate) fn encode_response(
    out: &mut Vec<u8>,
    code: Code,
    token: Token,
    content_format: Option<u16>,
    block1: Option<Block>,
    body: Body<'_>,
) {
    // At most two options of at most 3 value bytes: deltas below 269, lengths below 13.
    let mut opts = [0u8; 12];
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
    if let Some(f) = content_format {
        put(number::CONTENT_FORMAT, u32::from(f));
    }
    if let Some(b) = block1 {
        put(number::BLOCK1, b.to_uint());
    }
    let n = body.len();
    let body_len = opt_len + if n == 0 { 0 } else { n + 1 };
    let tkl = token.len() as u8;
    match body_len {
        0..=12 => out.push(((body_len as u8) << 4) | tkl),
        13..=268 => out.extend_from_slice(&[(13 << 4) | tkl, (body_len - 13) as u8]),
        269..=65804 => {
            out.push((14 << 4) | tkl);
            out.extend_from_slice(&((body_len - 269) as u16).to_be_bytes());
        }
        _ => {
            out.push((15 << 4) | tkl);
            let ext = u32::try_from(body_len - 65805).unwrap_or(u32::MAX);
            out.extend_from_slice(&ext.to_be_bytes());
        }
    }
    out.push(code.0);
    out.extend_from_slice(token.as_bytes());
    out.extend_from_slice(&opts[..opt_len]);
    if n > 0 {
        out.push(0xff);
        let start = out.len();
        out.resize(start + n, 0);
        body.write(0, &mut out[start..]);
    }
}
