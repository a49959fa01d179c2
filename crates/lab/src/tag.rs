//! Packet tags: who sent a packet and, for a client's CON copy, which exchange and copy.
//! The server's reply carries the tag of the packet it answers with [`REPLY`] set.
//!
//! ```text
//! bit 63      REPLY: a server reply to the packet whose tag this was
//! bit 62      COPY: bits 8..44 and 0..8 name an exchange and a copy
//! bits 44..62 flow index (18 bits)
//! bits 8..44  exchange id within the client (36 bits)
//! bits 0..8   copy ordinal (0 = original; saturates at 255)
//! ```

/// Set on a server reply.
pub const REPLY: u64 = 1 << 63;
/// Set when the tag names an exchange copy.
pub const COPY: u64 = 1 << 62;
const FLOW_SHIFT: u32 = 44;
const FLOW_MASK: u64 = (1 << 18) - 1;
const EXCHANGE_MASK: u64 = (1 << 36) - 1;

/// Copy `ordinal` of `exchange` sent by flow `flow`.
pub fn copy(flow: u32, exchange: u64, ordinal: u32) -> u64 {
    COPY | (u64::from(flow) & FLOW_MASK) << FLOW_SHIFT
        | (exchange & EXCHANGE_MASK) << 8
        | u64::from(ordinal.min(255))
}

/// Any other packet of flow `flow`'s client (an ACK or RST it sends).
pub fn from_client(flow: u32) -> u64 {
    (u64::from(flow) & FLOW_MASK) << FLOW_SHIFT
}

/// A packet the server originates towards flow `flow` (a separate response).
pub fn from_server(flow: u32) -> u64 {
    from_client(flow)
}

/// The tag of the server's reply to a packet tagged `rx`.
pub fn reply(rx: u64) -> u64 {
    rx | REPLY
}

/// The flow a tag belongs to.
pub fn flow(tag: u64) -> u32 {
    ((tag >> FLOW_SHIFT) & FLOW_MASK) as u32
}

/// `(exchange, ordinal)` when `tag` names a client's CON copy (or a reply to one).
pub fn copied(tag: u64) -> Option<(u64, u32)> {
    (tag & COPY != 0).then_some(((tag >> 8) & EXCHANGE_MASK, (tag & 0xff) as u32))
}

/// `(exchange, ordinal)` when `tag` is a server reply to a client's CON copy.
pub fn answered(tag: u64) -> Option<(u64, u32)> {
    (tag & REPLY != 0 && tag & COPY != 0)
        .then_some(((tag >> 8) & EXCHANGE_MASK, (tag & 0xff) as u32))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tags_round_trip() {
        let t = copy(399, 123_456, 3);
        assert_eq!(flow(t), 399);
        assert_eq!(answered(t), None);
        assert_eq!(copied(t), Some((123_456, 3)));
        assert_eq!(copied(from_client(7)), None);
        assert_eq!(answered(reply(t)), Some((123_456, 3)));
        assert_eq!(flow(reply(t)), 399);
        assert_eq!(answered(reply(from_client(7))), None);
        assert_eq!(flow(from_client(7)), 7);
    }
}
