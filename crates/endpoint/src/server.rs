//! The serving side: a request is deduplicated, routed to a [`crate::Resource`] and answered
//! piggybacked in the ACK (zero processing time), as a NON response to a NON, or, with a
//! processing delay, by an empty ACK and a separate CON response (RFC 7252 §5.2). Block-wise
//! (RFC 7959): Block1 uploads are reassembled per (client, path) with 2.31 Continue; bodies
//! larger than a block, or requests carrying Block2, are answered in blocks of
//! `min(requested, configured)` size; Size2 is sent when the request asks for it. Duplicates
//! are answered again from the duplicate cache within the amplification rule (RFC 7252 §4.5,
//! RFC 9175 §2.4).
//!
//! A component of [`crate::Endpoint`]: [`Server`] owns the resources, the partial uploads, the
//! echo resource's state, the Echo guard and the observers; the endpoint's settings, client
//! (for Message IDs and separate responses), peers, outputs and duplicate cache come in as
//! arguments. Replies are encoded by `crate::response`.

use std::collections::HashMap;
use std::net::SocketAddr;

use coaplab_cc::time::Instant;
use coaplab_wire::option::number;
use coaplab_wire::{Block, Code, Message, MessageType, ReadOptions};

use crate::client::Client;
use crate::config::{szx_of, Config};
use crate::dedup::DedupCache;
use crate::echo_guard::EchoGuard;
use crate::event::{Event, IgnoreReason, Transmit, TransmitMeta};
use crate::media::{self, Etag};
use crate::message_ids::MessageIds;
use crate::observe::{NotifyPolicy, Observers};
use crate::outputs::Outputs;
use crate::peers::Peers;
use crate::request_options;
use crate::resource::{Action, Body, Router};
use crate::response::{bare, challenge, known_critical, request_tag, write, Head, To};
use crate::uploads::{UploadKey, Uploads, MAX_UPLOAD_BYTES};

/// The server's state.
pub(crate) struct Server {
    /// The resources served.
    router: Router,
    /// Partial Block1 uploads by (client, path, Request-Tag), each with its last block's
    /// arrival time.
    uploads: Uploads,
    /// The `echo` resource's bodies still being served block-wise (Block2), by (client, path).
    echo_bodies: HashMap<(SocketAddr, Vec<u8>), Vec<u8>>,
    /// The entity tag of what the last PUT to `echo` stored (`None`: nothing yet), against
    /// which If-Match and If-None-Match are evaluated (`crate::media`).
    echo_etag: Option<Etag>,
    /// Verified sources and unverified ones' allowances (RFC 9175 §2.4).
    echo_guard: EchoGuard,
    /// Observers of the observable resources (RFC 7641, server side).
    observers: Observers,
}

impl Server {
    /// Serving `router`'s resources under `config`'s limits.
    pub(crate) fn new(config: &Config, router: Router) -> Server {
        Server {
            router,
            uploads: Uploads::new(
                config.upload_lifetime,
                config.max_pending_uploads,
                config.max_pending_uploads_per_source,
            ),
            echo_bodies: HashMap::new(),
            echo_etag: None,
            echo_guard: EchoGuard::new(config.amplification.clone()),
            observers: Observers::default(),
        }
    }

    /// The resources served.
    pub(crate) fn router_mut(&mut self) -> &mut Router {
        &mut self.router
    }

    /// Source addresses verified by an Echo value.
    pub(crate) fn verified_sources(&self) -> usize {
        self.echo_guard.verified_sources()
    }

    /// Partial Block1 uploads being reassembled.
    pub(crate) fn pending_uploads(&self) -> usize {
        self.uploads.len()
    }

    /// Observers registered now.
    pub(crate) fn observers(&self) -> usize {
        self.observers.len()
    }

    /// Observers are registered (the endpoint asks before the observe timer and before
    /// [`Server::on_notification_answer`]: without observers neither costs anything).
    #[inline]
    pub(crate) fn any_observers(&self) -> bool {
        !self.observers.is_empty()
    }

    /// When the earliest partial upload expires.
    #[inline]
    pub(crate) fn upload_deadline(&self) -> Option<Instant> {
        self.uploads.next_expiry()
    }

    /// When a notification is due or a CON notification times out.
    #[inline]
    pub(crate) fn observe_deadline(&self) -> Option<Instant> {
        self.observers.next_deadline()
    }

    /// Forgets the partial uploads whose lifetime ended by `now`.
    #[inline]
    pub(crate) fn expire_uploads(&mut self, out: &mut Outputs, now: Instant) {
        self.uploads.expire_all(now, &mut out.events);
    }

    /// Sends the notifications and retransmissions due at `now` (Message IDs from `ids`).
    pub(crate) fn on_observe_timer(
        &mut self,
        peers: &mut Peers,
        ids: &mut MessageIds,
        out: &mut Outputs,
        now: Instant,
    ) {
        let router = &self.router;
        let policy: NotifyPolicy = router.notify;
        self.observers.on_timeout(
            now,
            &|r, at| router.observable_state(r, at),
            policy,
            peers,
            ids,
            out,
        );
    }

    /// An empty ACK or RST from `from` that may answer a notification; returns whether it did.
    pub(crate) fn on_notification_answer(
        &mut self,
        peers: &mut Peers,
        out: &mut Outputs,
        now: Instant,
        from: SocketAddr,
        mid: u16,
        rst: bool,
    ) -> bool {
        self.observers
            .on_ack_or_rst(self.router.notify.timer, peers, out, now, from, mid, rst)
    }
    /// A CON or NON request of `len` bytes arrived. Returns whether `client` was used (a
    /// Message ID for a NON or separate response, the separate response's exchange): the
    /// endpoint's deadlines may then have moved.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn on_request(
        &mut self,
        config: &Config,
        client: &mut Client,
        peers: &mut Peers,
        outputs: &mut Outputs,
        dedup: &mut DedupCache,
        now: Instant,
        from: SocketAddr,
        msg: &Message<'_>,
        len: usize,
    ) -> bool {
        let con = msg.mtype == MessageType::Con;
        let separate = con && config.processing_delay > coaplab_cc::Duration::ZERO;
        let mut duplicate = false;
        if reprocesses(config, msg, separate) {
            if dedup.get(now, from, msg.message_id).is_some() {
                duplicate = true;
                if config.emit_request_events {
                    outputs.events.push_back(Event::DuplicateRequest {
                        from,
                        message_id: msg.message_id,
                        at: now,
                    });
                }
            }
        } else if self.replay_duplicate(config, outputs, dedup, now, from, msg, len) {
            return false;
        }
        let mut out = outputs.buffer();
        let (reply_type, reply_mid) = match (con, separate) {
            (true, false) => (MessageType::Ack, msg.message_id),
            (true, true) => (MessageType::Con, client.message_ids().alloc(now)),
            (false, _) => (MessageType::Non, client.message_ids().alloc(now)),
        };
        let mut received = len;
        let mut code = self.respond(
            config,
            outputs,
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
            code = challenge(key(config), now, from, msg, reply_type, reply_mid, &mut out);
            outputs.events.push_back(Event::EchoChallenged {
                from,
                request_bytes: received,
                response_bytes,
                at: now,
            });
        }
        if config.emit_request_events {
            outputs.events.push_back(Event::Served {
                from,
                message_id: msg.message_id,
                code,
                at: now,
            });
        }
        if !separate {
            if con {
                outputs.queue_reply(dedup, now, from, msg.message_id, out, false);
            } else {
                // NON duplicates are dropped, not answered again (RFC 7252 §4.5).
                dedup.remember_unanswered(now, from, msg.message_id);
                outputs.transmits.push_back(crate::event::Transmit {
                    destination: from,
                    contents: out,
                    meta: crate::event::TransmitMeta::Reply {
                        message_id: reply_mid,
                        replayed: false,
                    },
                });
            }
            return !con;
        }
        // §5.2.2: acknowledge now, respond after the processing delay as a CON of our own.
        outputs.send_empty(dedup, now, from, MessageType::Ack, msg.message_id);
        let delay = config.processing_delay;
        let old = client.delay_response(peers, now, from, reply_mid, msg.token(), out, delay);
        outputs.recycle(old);
        true
    }

    /// Runs the resource and encodes the reply into `out`; returns the response code.
    /// `received` is the request's size in bytes: when it completes a Block1 upload, the
    /// upload's earlier bytes are added (the response answers all of them).
    #[allow(clippy::too_many_arguments)]
    fn respond(
        &mut self,
        config: &Config,
        outputs: &mut Outputs,
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
                    let seq = self
                        .observers
                        .register(outputs, limit, now, from, token, index, observe, period);
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
            Action::Data { len_bytes } if config.etags => Some(media::data_etag(len_bytes)),
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
        let echo = config
            .rexmit_cnt_echo
            .filter(|_| reply_type == MessageType::Ack)
            .and_then(|n| msg.first(n).map(|v| (n, v)));
        let server_szx = szx_of(config.block_size_bytes).unwrap_or(6);
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
                self.uploads.expire(now, &k, &mut outputs.events);
            }
            // Only a first block that leaves a partial upload behind needs a slot.
            if b1.num == 0 && b1.more && !self.uploads.contains(&k) && self.uploads.full(from) {
                self.uploads.expire_all(now, &mut outputs.events);
                if self.uploads.full(from)
                    && !self.uploads.evict_for(now, from, &mut outputs.events)
                {
                    outputs
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
                self.echo_bodies.get(&key()).cloned()
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
            etag = config.etags.then_some(tag);
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
            && (self.echo_bodies.len() < config.max_pending_uploads
                || self.echo_bodies.contains_key(&key()))
        {
            let body = request_body.to_vec();
            self.echo_bodies.insert(key(), body);
        }
        write(out, to, head, body, start, n)
    }

    /// Replays the cached reply to a duplicate CON/NON of `len` bytes; true when `mid` was a
    /// duplicate. A duplicate request gets at most one reply, and the amplification rule of
    /// fresh requests (RFC 9175 §2.4) holds for replays too: a cached answer more than the
    /// factor times the duplicate's size, to an unverified source, is replayed only within
    /// that source's replay budget and the unverified-CON allowance; else the duplicate is
    /// answered 4.01 + Echo (not cached: the cached answer stays for a verified copy).
    ///
    /// Inlined into its callers (issue 35): every request looks itself up here first, and
    /// the call with its eight arguments cost about 20 instructions per request.
    #[allow(clippy::too_many_arguments)]
    #[inline(always)]
    pub(crate) fn replay_duplicate(
        &mut self,
        config: &Config,
        outputs: &mut Outputs,
        dedup: &mut DedupCache,
        now: Instant,
        from: SocketAddr,
        msg: &Message<'_>,
        len: usize,
    ) -> bool {
        let Some(reply) = dedup.get(now, from, msg.message_id) else {
            return false;
        };
        match (reply, msg.mtype) {
            (Some(reply), MessageType::Con) => {
                let mut contents = outputs.buffer();
                contents.extend_from_slice(reply);
                let request = msg.code.is_request();
                let response_bytes = contents.len();
                if request
                    && self
                        .echo_guard
                        .needs_echo(now, from, msg, len, response_bytes, true)
                {
                    challenge(
                        key(config),
                        now,
                        from,
                        msg,
                        MessageType::Ack,
                        msg.message_id,
                        &mut contents,
                    );
                    outputs.events.push_back(Event::EchoChallenged {
                        from,
                        request_bytes: len,
                        response_bytes,
                        at: now,
                    });
                }
                let reply_mid = u16::from_be_bytes([contents[2], contents[3]]);
                outputs.transmits.push_back(Transmit {
                    destination: from,
                    contents,
                    meta: TransmitMeta::Reply {
                        message_id: reply_mid,
                        replayed: true,
                    },
                });
                if request && config.emit_request_events {
                    outputs.events.push_back(Event::DuplicateRequest {
                        from,
                        message_id: msg.message_id,
                        at: now,
                    });
                }
            }
            _ => outputs.ignore(now, from, IgnoreReason::DuplicateNon),
        }
        true
    }
}

/// Whether a duplicate of `msg` is processed anew rather than replayed from the cache
/// ([`crate::ServerDuplicates::Reprocess`]): a CON answered piggybacked, without Block1
/// (a block already reassembled would be taken for one out of sequence).
fn reprocesses(config: &Config, msg: &Message<'_>, separate: bool) -> bool {
    config.server_duplicates == crate::ServerDuplicates::Reprocess
        && msg.mtype == MessageType::Con
        && !separate
        && !msg.has(number::BLOCK1)
}

/// The key of Echo values ([`crate::Amplification::key`]; zeros without amplification).
fn key(config: &Config) -> &[u8; 16] {
    const NONE: [u8; 16] = [0; 16];
    config.amplification.as_ref().map_or(&NONE, |a| &a.key)
}
