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
use crate::endpoint::Endpoint;
use crate::event::Event;
use crate::media::{self, Etag};
use crate::request_options;
use crate::resource::{Action, Body};
use crate::uploads::{UploadKey, MAX_UPLOAD_BYTES};

/// The Request-Tag values of `msg`, each length-prefixed, or `None` without the option.
fn request_tag(msg: &Message<'_>) -> Option<Vec<u8>> {
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
            | number::OBSERVE
    )
}

/// The head of a response: everything but the payload bytes.
struct Head<'a> {
    code: Code,
    /// ETag (RFC 7252 §5.10.6), with [`crate::Config::etags`].
    etag: Option<Etag>,
    /// Observe (RFC 7641 §4.2): the sequence number of a registration's response.
    observe: Option<u32>,
    /// Content-Format (RFC 7252 §5.10.3), when the resource names one.
    content_format: Option<u16>,
    block2: Option<Block>,
    block1: Option<Block>,
    size2: Option<u32>,
    /// Size1 (RFC 7252 §5.10.9): on a 4.13, the largest body accepted.
    size1: Option<u32>,
    /// Max-Age in seconds (RFC 7252 §5.10.5), on a 5.03 refusal: when to retry.
    max_age: Option<u32>,
    /// The Rexmit-Cnt option echoed (number, value), always the last option.
    echo: Option<(u16, &'a [u8])>,
}

impl Head<'_> {
    fn code(code: Code) -> Self {
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

impl Endpoint {
    /// A CON or NON request of `len` bytes arrived.
    pub(crate) fn on_request(
        &mut self,
        now: Instant,
        from: SocketAddr,
        msg: &Message<'_>,
        len: usize,
    ) {
        let con = msg.mtype == MessageType::Con;
        let separate = con && self.config.processing_delay > coaplab_cc::Duration::ZERO;
        let mut duplicate = false;
        if self.reprocesses(msg, separate) {
            if self.dedup.get(now, from, msg.message_id).is_some() {
                duplicate = true;
                if self.config.emit_request_events {
                    self.out.events.push_back(Event::DuplicateRequest {
                        from,
                        message_id: msg.message_id,
                        at: now,
                    });
                }
            }
        } else if self.replay_duplicate(now, from, msg, len) {
            return;
        }
        let mut out = self.out.buffer();
        let (reply_type, reply_mid) = match (con, separate) {
            (true, false) => (MessageType::Ack, msg.message_id),
            (true, true) => (MessageType::Con, self.client.message_ids().alloc(now)),
            (false, _) => (MessageType::Non, self.client.message_ids().alloc(now)),
        };
        let mut received = len;
        let mut code = self.respond(
            now,
            from,
            msg,
            reply_type,
            reply_mid,
            &mut out,
            &mut received,
        );
        if self
            .echo_guard
            .needs_echo(now, from, msg, received, out.len(), duplicate)
        {
            let response_bytes = out.len();
            code = self.challenge(now, from, msg, reply_type, reply_mid, &mut out);
            self.out.events.push_back(Event::EchoChallenged {
                from,
                request_bytes: received,
                response_bytes,
                at: now,
            });
        }
        if self.config.emit_request_events {
            self.out.events.push_back(Event::Served {
                from,
                message_id: msg.message_id,
                code,
                at: now,
            });
        }
        if !separate {
            if con {
                self.out
                    .queue_reply(&mut self.dedup, now, from, msg.message_id, out, false);
            } else {
                // NON duplicates are dropped, not answered again (RFC 7252 §4.5).
                self.dedup.remember_unanswered(now, from, msg.message_id);
                self.out.transmits.push_back(crate::event::Transmit {
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
        self.out
            .send_empty(&mut self.dedup, now, from, MessageType::Ack, msg.message_id);
        let delay = self.config.processing_delay;
        let old = self.client.delay_response(
            &mut self.peers,
            now,
            from,
            reply_mid,
            msg.token(),
            out,
            delay,
        );
        self.out.recycle(old);
    }

    /// Whether a duplicate of `msg` is processed anew rather than replayed from the cache
    /// ([`crate::ServerDuplicates::Reprocess`]): a CON answered piggybacked, without Block1
    /// (a block already reassembled would be taken for one out of sequence).
    fn reprocesses(&self, msg: &Message<'_>, separate: bool) -> bool {
        self.config.server_duplicates == crate::ServerDuplicates::Reprocess
            && msg.mtype == MessageType::Con
            && !separate
            && !msg.has(number::BLOCK1)
    }

    /// Replaces the reply in `out` by 4.01 Unauthorized with an Echo value for `from`
    /// (RFC 9175 §2.4); returns its code. 4 + 8 + 14 bytes at most, so within three times
    /// any request that could draw a large response.
    pub(crate) fn challenge(
        &mut self,
        now: Instant,
        from: SocketAddr,
        msg: &Message<'_>,
        reply_type: MessageType,
        reply_mid: u16,
        out: &mut Vec<u8>,
    ) -> Code {
        let key = self
            .config
            .amplification
            .as_ref()
            .map(|a| a.key)
            .unwrap_or_default();
        let value = crate::echo::value(&key, from, now);
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

    /// Runs the resource and encodes the reply into `out`; returns the response code.
    /// `received` is the request's size in bytes: when it completes a Block1 upload, the
    /// upload's earlier bytes are added (the response answers all of them).
    #[allow(clippy::too_many_arguments)]
    fn respond(
        &mut self,
        now: Instant,
        from: SocketAddr,
        msg: &Message<'_>,
        reply_type: MessageType,
        reply_mid: u16,
        out: &mut Vec<u8>,
        received: &mut usize,
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
        let accept = match request_options::check(msg, known_critical) {
            Ok(accept) => accept,
            Err(code) => return bare(out, to, code),
        };
        if let Some((index, content)) = self.router.find_content(path.clone()) {
            let period = content.observe_period();
            let (code, format, body) = content.answer(
                msg.code,
                now,
                self.router.links(),
                msg.options
                    .iter()
                    .filter(|(n, _)| *n == number::URI_QUERY)
                    .map(|(_, v)| v),
            );
            if code.class() == 2 && !request_options::acceptable(accept, format) {
                return bare(out, to, Code::NOT_ACCEPTABLE);
            }
            // RFC 7641 §4.1: a GET with Observe on an observable resource (un)registers.
            let (observe, max_age) = match period {
                Some(period) if msg.code == Code::GET => {
                    let observe = msg.observe().ok().flatten();
                    let limit = self.router.observer_limit();
                    let seq = self.observers.register(
                        &mut self.out,
                        limit,
                        now,
                        from,
                        token,
                        index,
                        observe,
                        period,
                    );
                    let next = crate::observe::next_tick(now, period);
                    (seq, Some(crate::observe::max_age_s(now, next)))
                }
                _ => (None, None),
            };
            let head = Head {
                content_format: format,
                observe,
                max_age,
                ..Head::code(code)
            };
            let n = body.len();
            return write(out, to, head, Body::Bytes(&body), 0, n);
        }
        let Some(resource) = self.router.find(path.clone()) else {
            return bare(out, to, Code::NOT_FOUND);
        };
        let action = resource.action(msg.code);
        let echoing = matches!(action, Action::Echo);
        // `data/N` bodies are octet streams, an echo has the request's format (4.15 when
        // /echo does not take it); 4.06 when the Accept differs (RFC 7252 §5.10.4).
        let format = match echoing.then(|| media::echo_content_format(msg)) {
            Some(Err(code)) => return bare(out, to, code),
            Some(Ok(f)) => f,
            None => None,
        };
        if !matches!(action, Action::NotAllowed) && !request_options::acceptable(accept, format) {
            return bare(out, to, Code::NOT_ACCEPTABLE);
        }
        // RFC 7252 §5.10.8: a false If-Match or If-None-Match on /echo answers 4.12.
        if echoing && !media::preconditions_hold(msg, self.echo_etag.as_ref()) {
            return bare(out, to, Code::PRECONDITION_FAILED);
        }
        let etag = match action {
            Action::Data { len_bytes } if self.config.etags => Some(media::data_etag(len_bytes)),
            _ => None,
        };
        // RFC 7252 §5.10.6.2: a GET naming the current tag is answered 2.03 Valid, bodiless.
        if let Some(tag) = etag.filter(|t| msg.code == Code::GET && media::validates(msg, t)) {
            let head = Head {
                etag: Some(tag),
                ..Head::code(Code::VALID)
            };
            return write(out, to, head, Body::Zeros(0), 0, 0);
        }
        let wants_size2 = msg.has(number::SIZE2);
        // Globecom 2018; draft-ietf-core-fasor-02: Rexmit-Cnt comes back unmodified, in piggybacked
        // responses only (never in an empty ACK's later separate response).
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
            let (from, path) = key();
            let k = UploadKey {
                from,
                path,
                tag: request_tag(msg),
            };
            // An upload past its lifetime is gone even if handle_timeout has not run yet.
            if self.uploads.expired(now, &k) {
                self.uploads.expire(now, &k, &mut self.out.events);
            }
            // Only a first block that leaves a partial upload behind needs a slot.
            if b1.num == 0 && b1.more && !self.uploads.contains(&k) && self.uploads.full(from) {
                self.uploads.expire_all(now, &mut self.out.events);
                if self.uploads.full(from)
                    && !self.uploads.evict_for(now, from, &mut self.out.events)
                {
                    self.out
                        .events
                        .push_back(Event::UploadRefused { from, at: now });
                    // Retry once the oldest partial upload has expired (whole seconds, up).
                    let max_age = self.uploads.next_expiry().map(|t| {
                        let ns = (t - now).as_nanos().max(0);
                        u32::try_from((ns + 999_999_999) / 1_000_000_000).unwrap_or(u32::MAX)
                    });
                    let head = Head {
                        max_age,
                        ..Head::code(Code::SERVICE_UNAVAILABLE)
                    };
                    return write(out, to, head, Body::Zeros(0), 0, 0);
                }
            }
            if b1.offset_bytes() + msg.payload.len() > MAX_UPLOAD_BYTES {
                self.uploads.remove(&k);
                // RFC 7959 §2.9.3: Size1 tells the largest body this server takes.
                let head = Head {
                    size1: Some(MAX_UPLOAD_BYTES as u32),
                    ..Head::code(Code::REQUEST_ENTITY_TOO_LARGE)
                };
                return write(out, to, head, Body::Zeros(0), 0, 0);
            }
            if b1.num == 0 {
                let u = self.uploads.start(&k);
                u.body.clear();
            }
            // A later block of an unknown (never started, expired, refused) upload, or one out
            // of sequence: 4.08 Request Entity Incomplete (RFC 7959 §2.3).
            let Some(u) = self
                .uploads
                .get_mut(&k)
                .filter(|u| u.body.len() == b1.offset_bytes())
            else {
                self.uploads.remove(&k);
                return bare(out, to, Code::REQUEST_ENTITY_INCOMPLETE);
            };
            u.last = now;
            let buf = &mut u.body;
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
            uploaded = self.uploads.remove(&k).map(|u| u.body);
            // The earlier blocks came from `from` too (the upload is keyed by it).
            *received += uploaded.as_ref().map_or(0, |b| b.len() - msg.payload.len());
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
            Action::Echo => (media::echo_code(msg.code), Body::Bytes(request_body)),
        };
        // A PUT to /echo stores a representation: its tag is what If-Match compares with.
        // Every block of the answer carries the same tag (RFC 7959 §2.4: a client checks it).
        let mut etag = etag;
        if echoing && msg.code == Code::PUT {
            let tag = media::body_etag(request_body);
            if stored.is_none() {
                self.echo_etag = Some(tag);
            }
            etag = self.config.etags.then_some(tag);
        }
        let len = body.len();
        let mut head = Head {
            code,
            etag,
            observe: None,
            content_format: format,
            block2: None,
            block1: head_b1,
            size2: wants_size2.then_some(len as u32),
            size1: None,
            max_age: None,
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
            && (self.pending_bodies.len() < self.config.max_pending_uploads
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
        body.write(start, &mut out[len + 1..len + 1 + n]);
        len += 1 + n;
    }
    out.truncate(len);
    head.code
}
