//! The serving side of a session: a request is routed to a [`crate::Resource`] of the same
//! [`crate::Router`] the UDP server uses and answered at once, as one frame however large
//! (no block-wise: spec/experiments.md §5.1 sends the 102,400-B object as one 102,408-B
//! message). The body is written straight into the frame, never materialised apart.

use coaplab_cc::time::Instant;
use coaplab_wire::frame::Frame;
use coaplab_wire::option::number;
use coaplab_wire::{Code, ReadOptions, Token};

use crate::resource::{Action, Body};
use crate::tcp::event::{SessionEvent, Write, WriteKind};
use crate::tcp::session::Session;

/// Request options this server understands (RFC 7252 §5.4.1). Block1/Block2 are not among
/// them: the session has no block-wise transfers, so a request carrying them gets 4.02.
fn known_critical(n: u16) -> bool {
    matches!(
        n,
        number::URI_HOST
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
        let mut code = self.respond(now, frame, &mut bytes);
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
            encode_response(&mut bytes, code, token, None, Body::Zeros(0));
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

    /// Runs the resource and encodes the response into `out`; returns its code.
    fn respond(&self, now: Instant, frame: &Frame<'_>, out: &mut Vec<u8>) -> Code {
        let token = frame.token();
        let (code, body) = 'answer: {
            if frame.first_unknown_critical(known_critical).is_some() {
                break 'answer (Code::BAD_OPTION, Body::Zeros(0));
            }
            let path = frame
                .options
                .iter()
                .filter(|(n, _)| *n == number::URI_PATH)
                .map(|(_, v)| v);
            if let Some(content) = self.router.find_content(path.clone()) {
                let (code, format, body) = content.answer(frame.code, now);
                encode_response(out, code, token, format, Body::Bytes(&body));
                return code;
            }
            let Some(resource) = self.router.find(path) else {
                break 'answer (Code::NOT_FOUND, Body::Zeros(0));
            };
            match resource.action(frame.code) {
                Action::NotAllowed => (Code::METHOD_NOT_ALLOWED, Body::Zeros(0)),
                Action::Data { len_bytes } => (Code::CONTENT, Body::Pattern(len_bytes)),
                Action::Fixed { code, len_bytes } => (code, Body::Zeros(len_bytes)),
                Action::Echo => {
                    let code = if matches!(frame.code, Code::POST | Code::PUT) {
                        Code::CHANGED
                    } else {
                        Code::CONTENT
                    };
                    (code, Body::Bytes(frame.payload))
                }
            }
        };
        encode_response(out, code, token, None, body);
        code
    }
}

/// Appends a response frame: `code`, `token`, an optional Content-Format (the only option a
/// response carries here), and `body` after a marker when it is not empty (RFC 8323 §3.2).
/// Bodies up to 4 GiB + 65,804 B fit the 32-bit length.
pub(crate) fn encode_response(
    out: &mut Vec<u8>,
    code: Code,
    token: Token,
    content_format: Option<u16>,
    body: Body<'_>,
) {
    // Content-Format (12) as a minimal uint: delta 12 fits the option's first nibble.
    let format = content_format.map(|f| {
        let be = f.to_be_bytes();
        let skip = if f == 0 {
            2
        } else if f < 256 {
            1
        } else {
            0
        };
        (be, skip)
    });
    let opt_len = format.map_or(0, |(_, skip)| 1 + 2 - skip);
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
    if let Some((be, skip)) = format {
        out.push(((number::CONTENT_FORMAT as u8) << 4) | (2 - skip) as u8);
        out.extend_from_slice(&be[skip..]);
    }
    if n > 0 {
        out.push(0xff);
        let start = out.len();
        out.resize(start + n, 0);
        body.write(0, &mut out[start..]);
    }
}
