//! Duplicates answered again: remembering an unanswered Message ID, and replaying a cached
//! reply to a duplicate within the amplification rule (RFC 7252 §4.5, RFC 9175 §2.4). The
//! replies themselves are queued by `outputs`.

use std::net::SocketAddr;

use coaplab_cc::time::Instant;
use coaplab_wire::{Message, MessageType};

use crate::endpoint::Endpoint;
use crate::event::{Event, IgnoreReason, Transmit, TransmitMeta};

impl Endpoint {
    /// Replays the cached reply to a duplicate CON/NON of `len` bytes; true when `mid` was a
    /// duplicate. A duplicate request gets at most one reply, and the amplification rule of
    /// fresh requests (RFC 9175 §2.4) holds for replays too: a cached answer more than the
    /// factor times the duplicate's size, to an unverified source, is replayed only within
    /// that source's replay budget and the unverified-CON allowance; else the duplicate is
    /// answered 4.01 + Echo (not cached: the cached answer stays for a verified copy).
    pub(crate) fn replay_duplicate(
        &mut self,
        now: Instant,
        from: SocketAddr,
        msg: &Message<'_>,
        len: usize,
    ) -> bool {
        let Some(reply) = self.dedup.get(now, from, msg.message_id) else {
            return false;
        };
        match (reply, msg.mtype) {
            (Some(reply), MessageType::Con) => {
                let mut contents = self.out.pool.pop().unwrap_or_default();
                contents.clear();
                contents.extend_from_slice(reply);
                let request = msg.code.is_request();
                let response_bytes = contents.len();
                if request
                    && self
                        .echo_guard
                        .needs_echo(now, from, msg, len, response_bytes, true)
                {
                    self.challenge(
                        now,
                        from,
                        msg,
                        MessageType::Ack,
                        msg.message_id,
                        &mut contents,
                    );
                    self.out.events.push_back(Event::EchoChallenged {
                        from,
                        request_bytes: len,
                        response_bytes,
                        at: now,
                    });
                }
                let reply_mid = u16::from_be_bytes([contents[2], contents[3]]);
                self.out.transmits.push_back(Transmit {
                    destination: from,
                    contents,
                    meta: TransmitMeta::Reply {
                        message_id: reply_mid,
                        replayed: true,
                    },
                });
                if request && self.config.emit_request_events {
                    self.out.events.push_back(Event::DuplicateRequest {
                        from,
                        message_id: msg.message_id,
                        at: now,
                    });
                }
            }
            _ => self.out.ignore(now, from, IgnoreReason::DuplicateNon),
        }
        true
    }
}
