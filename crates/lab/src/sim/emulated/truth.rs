//! Ground truth for unnecessary retransmissions in emulated UDP runs (docs/experiments.md §7),
//! derived from the emulator's per-packet log: the packets read from each TUN device, in reading
//! order, with their bytes and whether (and when) they were written to the far device.
//!
//! Real packets carry no simulator tag, so the tag is recovered by decoding each UDP payload
//! with `coaplab_wire`: a client's CON request is copy `k` of the exchange named by its
//! source port and Message ID, `k` being the number of earlier copies of that Message ID from
//! that port; the server's ACK or RST answers the copy of its Message ID that last reached
//! the server before the server sent it (the packet it answers, which is the tag a simulated
//! reply inherits); a separate response (a CON or NON response from the server) is matched to
//! the request by token. [`crate::metrics::FlowMetrics`] then applies the simulator's rule to
//! every answered copy whose reply reached the client before the run ended.

use std::collections::HashMap;

use coaplab_cc::time::Instant;
use coaplab_wire::{Message, MessageType, Token};

/// One packet of the emulator's log.
#[derive(Debug, Clone, Copy)]
pub(crate) struct LoggedPacket<'a> {
    /// Client → server.
    pub up: bool,
    /// When it was read from the near TUN device.
    pub read_at: Instant,
    /// When it was written to the far TUN device (`None`: lost).
    pub written_at: Option<Instant>,
    /// The IPv4 packet.
    pub ip: &'a [u8],
}

/// A copy of a client's request whose reply from the server reached the client.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) struct AnsweredCopy {
    /// The client's (real) UDP port.
    pub port: u16,
    /// The request's Message ID.
    pub message_id: u16,
    /// The request's token.
    pub token: Token,
    /// Copy ordinal (0 = the original).
    pub ordinal: u32,
}

/// The UDP ports and payload of an IPv4/UDP packet.
pub(crate) fn udp_payload(ip: &[u8]) -> Option<(u16, u16, &[u8])> {
    if ip.len() < 20 || ip[0] >> 4 != 4 || ip[9] != 17 {
        return None;
    }
    // A fragment other than the first carries no UDP header.
    if u16::from_be_bytes([ip[6], ip[7]]) & 0x1fff != 0 {
        return None;
    }
    let ihl = usize::from(ip[0] & 0x0f) * 4;
    let total = usize::from(u16::from_be_bytes([ip[2], ip[3]])).min(ip.len());
    let udp = ip.get(ihl..total)?;
    if udp.len() < 8 {
        return None;
    }
    let src = u16::from_be_bytes([udp[0], udp[1]]);
    let dst = u16::from_be_bytes([udp[2], udp[3]]);
    let len = usize::from(u16::from_be_bytes([udp[4], udp[5]])).clamp(8, udp.len());
    Some((src, dst, &udp[8..len]))
}

/// One copy of a request as the log shows it.
#[derive(Debug, Clone, Copy)]
struct Copy {
    token: Token,
    /// When it was written to the server's device.
    reached_server: Option<Instant>,
}

/// Every copy of a client's CON request (sent from any port other than `server_port`, to
/// it) answered by a server reply that reached the client by `end`. `packets` must be in
/// reading order.
pub(crate) fn answered_copies<'a>(
    packets: impl IntoIterator<Item = LoggedPacket<'a>>,
    server_port: u16,
    end: Instant,
) -> Vec<AnsweredCopy> {
    // (client port, Message ID) → its copies in sending order.
    let mut copies: HashMap<(u16, u16), Vec<Copy>> = HashMap::new();
    // (client port, token) → the Message ID of the latest request carrying it.
    let mut by_token: HashMap<(u16, Token), u16> = HashMap::new();
    let mut answered = Vec::new();
    for p in packets {
        let Some((src, dst, payload)) = udp_payload(p.ip) else {
            continue;
        };
        let Ok(msg) = Message::decode(payload) else {
            continue;
        };
        let delivered = p.written_at.filter(|&t| t <= end);
        if p.up {
            if dst != server_port || msg.mtype != MessageType::Con || !msg.code.is_request() {
                continue;
            }
            let token = msg.token();
            copies.entry((src, msg.message_id)).or_default().push(Copy {
                token,
                reached_server: delivered,
            });
            by_token.insert((src, token), msg.message_id);
            continue;
        }
        if src != server_port {
            continue;
        }
        let message_id = match msg.mtype {
            MessageType::Ack | MessageType::Rst => msg.message_id,
            _ if msg.code.is_response() => match by_token.get(&(dst, msg.token())) {
                Some(&mid) => mid,
                None => continue,
            },
            _ => continue,
        };
        let Some(list) = copies.get(&(dst, message_id)) else {
            continue;
        };
        // The copy this reply answers: the last one that reached the server before the
        // server sent the reply.
        let Some((ordinal, copy)) = list
            .iter()
            .enumerate()
            .rev()
            .find(|(_, c)| c.reached_server.is_some_and(|t| t <= p.read_at))
        else {
            continue;
        };
        if delivered.is_some() {
            answered.push(AnsweredCopy {
                port: dst,
                message_id,
                token: copy.token,
                ordinal: ordinal as u32,
            });
        }
    }
    answered
}

#[cfg(test)]
mod tests {
    use super::*;
    use coaplab_wire::{Code, MessageBuf};

    /// An IPv4/UDP packet carrying `msg`.
    fn packet(src: u16, dst: u16, msg: &MessageBuf) -> Vec<u8> {
        let coap = msg.to_bytes().unwrap();
        let total = 28 + coap.len();
        let mut ip = vec![
            0x45,
            0,
            (total >> 8) as u8,
            total as u8,
            0,
            0,
            0x40,
            0,
            64,
            17,
        ];
        ip.extend([0; 10]);
        ip.extend(src.to_be_bytes());
        ip.extend(dst.to_be_bytes());
        ip.extend(((8 + coap.len()) as u16).to_be_bytes());
        ip.extend([0, 0]);
        ip.extend(coap);
        ip
    }

    fn at(ms: i64) -> Instant {
        Instant::from_millis(ms)
    }

    #[test]
    fn replies_answer_the_last_copy_that_reached_the_server() {
        let token = Token::new(&[1, 2]).unwrap();
        let get = MessageBuf::new(MessageType::Con, Code::GET, 7, token);
        let ack = MessageBuf::new(MessageType::Ack, Code::new(2, 5), 7, token);
        let req = packet(40_000, 5683, &get);
        let rep = packet(5683, 40_000, &ack);
        // A separate response to a second request (by token), after its empty ACK was lost.
        let token2 = Token::new(&[3]).unwrap();
        let get2 = MessageBuf::new(MessageType::Con, Code::GET, 8, token2);
        let empty = MessageBuf::new(MessageType::Ack, Code::EMPTY, 8, Token::EMPTY);
        let sep = MessageBuf::new(MessageType::Con, Code::new(2, 5), 500, token2);
        let (req2, empty, sep) = (
            packet(40_000, 5683, &get2),
            packet(5683, 40_000, &empty),
            packet(5683, 40_000, &sep),
        );
        let p = |up, read, written: Option<i64>, ip| LoggedPacket {
            up,
            read_at: at(read),
            written_at: written.map(at),
            ip,
        };
        let log = [
            p(true, 0, Some(10), &req[..]),   // copy 0 reaches the server at 10 ms
            p(true, 5, None, &req[..]),       // copy 1 is lost
            p(false, 11, Some(40), &rep[..]), // the reply to copy 0 arrives
            p(true, 15, Some(25), &req[..]),  // copy 2 reaches the server
            p(false, 26, Some(90), &rep[..]), // its reply arrives after the end
            p(true, 30, Some(35), &req2[..]),
            p(false, 36, None, &empty[..]),
            p(false, 50, Some(60), &sep[..]),
        ];
        let answered = answered_copies(log, 5683, at(80));
        let copy = |message_id, token, ordinal| AnsweredCopy {
            port: 40_000,
            message_id,
            token,
            ordinal,
        };
        assert_eq!(answered, vec![copy(7, token, 0), copy(8, token2, 0)]);
        assert_eq!(udp_payload(&req[..20]), None);
    }
}
