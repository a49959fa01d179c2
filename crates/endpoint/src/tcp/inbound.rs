//! The receive path: the stream reader that cuts the peer's bytes into frames (parsed in
//! place with [`Frame::decode_stream`], a partial frame kept, a response's payload counted
//! rather than kept when bodies are not), the CSM rules of RFC 8323 §5.3 and the other
//! signals (§5.4–5.6). Each frame goes back to the session, which hands requests to the
//! server (`serve.rs`) and responses to the client (`client.rs`).

use std::collections::VecDeque;

use coaplab_cc::time::Instant;
use coaplab_wire::frame::{Decoded, Frame};
use coaplab_wire::option::number;
use coaplab_wire::signal::{Signal, SignalError, SignalMessage, DEFAULT_MAX_MESSAGE_SIZE};
use coaplab_wire::{Code, DecodeError, ReadOptions};

use crate::tcp::client::Client;
use crate::tcp::event::{SessionEvent, StreamIgnoreReason};
use crate::tcp::writes::Writes;

/// What the peer told us and the frame it is sending.
#[derive(Debug)]
pub(crate) struct Inbound {
    /// The peer's CSM arrived (RFC 8323 §5.3: it must be the first message).
    pub(crate) csm_received: bool,
    /// The peer's Max-Message-Size in force for what we send.
    pub(crate) peer_max_message_size: u32,
    /// The peer sent Release.
    pub(crate) peer_released: bool,
    /// When the last bytes from the peer arrived.
    pub(crate) heard_at: Option<Instant>,
    /// The frame being received.
    pub(crate) framing: Framing,
}

/// The stream reader's state: the front of a frame not yet complete.
#[derive(Debug, Default)]
pub(crate) struct Framing {
    /// The front of a frame not yet complete. Holds at most one frame: bytes are appended
    /// only as far as the frame needs, and complete frames are parsed in place from the
    /// caller's slice, so no frame is copied twice.
    pub(crate) rx: Vec<u8>,
    /// The frame in `rx` is a response whose payload is counted, not kept (no
    /// [`crate::tcp::SessionConfig::keep_bodies`]): `rx` holds its front up to the payload
    /// marker.
    elided: Option<Elided>,
}

/// A response frame whose payload is being skipped ([`Framing::elided`]).
#[derive(Debug, Clone, Copy)]
struct Elided {
    /// The whole frame's length.
    total: usize,
    /// Its payload's length.
    payload_len: usize,
    /// Payload bytes still to arrive.
    left: usize,
}

/// What becomes of an incomplete frame's payload ([`payload_fate`]).
enum Payload {
    /// Kept: the frame is buffered whole, at its exact length.
    Keep,
    /// Counted, not kept: the front up to the payload marker (this many bytes) is kept.
    Skip(usize, Elided),
    /// Not known until more of the frame's front arrives: buffered as it comes.
    Unknown,
}

/// What a signal asks of the session beyond what [`Inbound::on_signal`] did itself.
pub(crate) enum Verdict<'a> {
    /// Nothing more.
    Done,
    /// Send Abort (RFC 8323 §5.6) and end the session.
    Abort {
        bad_csm_option: Option<u16>,
        diagnostic: &'static str,
    },
    /// The peer aborted: end the session.
    PeerAbort {
        bad_csm_option: Option<u16>,
        diagnostic: &'a [u8],
    },
}

/// The largest buffer of a partial frame kept for the next one once its frame is complete.
const RX_KEEP_BYTES: usize = 4 * 1024;

impl Inbound {
    /// Nothing heard yet: the peer's Max-Message-Size is the default until its CSM.
    pub(crate) fn new() -> Inbound {
        Inbound {
            csm_received: false,
            peer_max_message_size: DEFAULT_MAX_MESSAGE_SIZE,
            peer_released: false,
            heard_at: None,
            framing: Framing::default(),
        }
    }

    /// A signalling message (RFC 8323 §5): the CSM, Ping, Pong, Release and Abort, the
    /// Pong matched by `client`; a Pong answering a Ping queued on `writes`.
    pub(crate) fn on_signal<'a>(
        &mut self,
        now: Instant,
        frame: &Frame<'a>,
        client: &mut Client,
        writes: &mut Writes,
        events: &mut VecDeque<SessionEvent>,
    ) -> Verdict<'a> {
        let msg = match SignalMessage::from_frame(frame) {
            Ok(m) => m,
            Err(SignalError::UnknownSignal(_)) => {
                events.push_back(SessionEvent::Ignored {
                    reason: StreamIgnoreReason::UnknownSignal,
                    at: now,
                });
                return Verdict::Done;
            }
            Err(SignalError::BadOption { number, .. }) if frame.code == Code::CSM => {
                return abort(Some(number), "bad CSM option value");
            }
            Err(SignalError::BadOption { .. }) if frame.code == Code::ABORT => {
                // An Abort ends the session whatever its options say.
                return Verdict::PeerAbort {
                    bad_csm_option: None,
                    diagnostic: frame.payload,
                };
            }
            Err(SignalError::BadOption { .. }) => {
                return abort(None, "bad signalling option value");
            }
        };
        if let (Some(n), Signal::Csm { .. }) = (msg.unknown_critical, &msg.signal) {
            // RFC 8323 §5.3: an unknown critical CSM option aborts, naming it.
            return abort(Some(n), "unknown critical CSM option");
        }
        if msg.unknown_critical.is_some() && !matches!(msg.signal, Signal::Abort { .. }) {
            return abort(None, "unknown critical signalling option");
        }
        match msg.signal {
            Signal::Csm {
                max_message_size,
                block_wise_transfer,
            } => {
                self.csm_received = true;
                if let Some(m) = max_message_size {
                    self.peer_max_message_size = m;
                }
                events.push_back(SessionEvent::CsmReceived {
                    max_message_size: self.peer_max_message_size,
                    block_wise_transfer,
                    at: now,
                });
            }
            Signal::Ping { custody } => {
                // §5.4: the Pong echoes the token (and Custody); everything before the Ping
                // is already processed, since handling takes no time.
                let mut pong = SignalMessage::new(Signal::Pong { custody });
                pong.token = msg.token;
                writes.push_signal(&pong);
                events.push_back(SessionEvent::PingAnswered {
                    token: msg.token,
                    custody,
                    at: now,
                });
            }
            Signal::Pong { custody } => client.on_pong(events, now, msg.token, custody),
            Signal::Release {
                alternative_addresses,
                hold_off_s,
            } => {
                self.peer_released = true;
                events.push_back(SessionEvent::ReleaseReceived {
                    alternative_addresses,
                    hold_off_s,
                    at: now,
                });
            }
            Signal::Abort { bad_csm_option } => {
                return Verdict::PeerAbort {
                    bad_csm_option,
                    diagnostic: frame.payload,
                }
            }
        }
        Verdict::Done
    }
}

fn abort(bad_csm_option: Option<u16>, diagnostic: &'static str) -> Verdict<'static> {
    Verdict::Abort {
        bad_csm_option,
        diagnostic,
    }
}

impl Framing {
    /// Bytes the stream delivered, in order, split anywhere: every complete frame goes to
    /// `on_frame` with its length and its payload's (more than `frame.payload`'s for a
    /// response whose payload was counted, not kept, and handed in empty), until it returns
    /// false (the session ended). Frames longer than `limit` bytes are an error, as are
    /// bytes that cannot be a frame: the stream cannot be resynchronised.
    pub(crate) fn read<F>(
        &mut self,
        mut bytes: &[u8],
        limit: usize,
        keep_bodies: bool,
        on_frame: &mut F,
    ) -> Result<(), DecodeError>
    where
        F: FnMut(&Frame<'_>, usize, usize) -> bool,
    {
        let mut open = true;
        // Complete the frame begun by an earlier call, taking only the bytes it needs.
        while open && !self.rx.is_empty() && !bytes.is_empty() {
            if let Some(e) = self.elided.as_mut() {
                let take = e.left.min(bytes.len());
                e.left -= take;
                bytes = &bytes[take..];
                if e.left == 0 {
                    open = self.finish_elided(limit, on_frame);
                }
                continue;
            }
            let need = match Frame::decode_stream(&self.rx, limit)? {
                Decoded::NeedMore(n) => n,
                Decoded::Frame { .. } => 0,
            };
            let take = need.min(bytes.len());
            // Exactly the frame's length once its header is known: a large frame is held
            // once, without a doubling vector's slack (unless its payload may be skipped,
            // which is known only once its options are in).
            if keep_bodies {
                self.rx.reserve_exact(need);
            }
            self.rx.extend_from_slice(&bytes[..take]);
            bytes = &bytes[take..];
            let rx = std::mem::take(&mut self.rx);
            match Frame::decode_stream(&rx, limit) {
                Ok(Decoded::Frame { frame, consumed }) => {
                    open = on_frame(&frame, consumed, frame.payload.len());
                }
                Ok(Decoded::NeedMore(more)) => {
                    self.rx = rx;
                    // Room for the whole frame: it is kept, decided already.
                    if self.rx.capacity() < self.rx.len() + more {
                        match payload_fate(&self.rx, limit, keep_bodies) {
                            Payload::Skip(head_len, e) => {
                                self.rx.truncate(head_len);
                                self.rx.shrink_to(RX_KEEP_BYTES);
                                self.elided = Some(e);
                            }
                            Payload::Keep => self.rx.reserve_exact(more),
                            Payload::Unknown => {}
                        }
                    }
                    continue;
                }
                Err(e) => {
                    self.rx = rx;
                    return Err(e);
                }
            }
            self.rx = rx;
            self.rx.clear();
            if self.rx.capacity() > RX_KEEP_BYTES {
                // A large frame's buffer is not kept for the session's lifetime.
                self.rx = Vec::new();
            }
        }
        // Whole frames straight from the caller's bytes; a partial tail is kept.
        while open && !bytes.is_empty() {
            match Frame::decode_stream(bytes, limit)? {
                Decoded::Frame { frame, consumed } => {
                    open = on_frame(&frame, consumed, frame.payload.len());
                    bytes = &bytes[consumed..];
                }
                Decoded::NeedMore(more) => {
                    match payload_fate(bytes, limit, keep_bodies) {
                        Payload::Skip(head_len, e) => {
                            self.rx.extend_from_slice(&bytes[..head_len]);
                            self.elided = Some(e);
                        }
                        Payload::Keep => {
                            self.rx.reserve_exact(bytes.len() + more);
                            self.rx.extend_from_slice(bytes);
                        }
                        Payload::Unknown => self.rx.extend_from_slice(bytes),
                    }
                    return Ok(());
                }
            }
        }
        Ok(())
    }

    /// Forgets the frame being received (the session ended).
    pub(crate) fn clear(&mut self) {
        self.rx.clear();
        self.elided = None;
    }

    /// The last byte of an elided frame arrived: hands it to `on_frame` with an empty
    /// payload and that payload's length; false when the session ended.
    fn finish_elided<F>(&mut self, limit: usize, on_frame: &mut F) -> bool
    where
        F: FnMut(&Frame<'_>, usize, usize) -> bool,
    {
        let Some(e) = self.elided.take() else {
            return true;
        };
        let rx = std::mem::take(&mut self.rx);
        let start = Frame::decode_start(&rx, limit);
        // `rx` is the front `payload_fate` accepted, so it reads the same again.
        debug_assert!(start.is_some(), "an elided frame's front no longer decodes");
        let mut open = true;
        if let Some(start) = start {
            let frame = Frame {
                payload: &[],
                ..start.frame
            };
            open = on_frame(&frame, e.total, e.payload_len);
        }
        self.rx = rx;
        self.rx.clear();
        open
    }
}

/// For the front of an incomplete frame: whether its payload is to be kept or can be
/// counted instead. Only a response's can, when bodies are not kept, and not a Block2
/// block's (whose bytes make up the body the next block is asked for by): its payload is
/// only ever measured.
fn payload_fate(front: &[u8], limit: usize, keep_bodies: bool) -> Payload {
    if keep_bodies {
        return Payload::Keep;
    }
    let Some(start) = Frame::decode_start(front, limit) else {
        // Not all of code, token and options yet (or a frame without payload, whose
        // length the header bounds).
        return Payload::Unknown;
    };
    if !start.frame.code.is_response() || start.frame.has(number::BLOCK2) {
        return Payload::Keep;
    }
    Payload::Skip(
        start.head_len,
        Elided {
            total: start.total,
            payload_len: start.payload_len(),
            left: start.total - front.len(),
        },
    )
}
