//! A TCP model segment carried as the bytes of a network packet, with the flow, the connection
//! and the copy number it belongs to.
//!
//! The segment travels inside the packet ([`coaplab_netsim::Topology::send_tcp`]: the star and
//! the mesh keep the bytes in a reused slot and swap them out on delivery), so a segment
//! dropped by the network is gone with its packet, and nothing is allocated or hashed per
//! packet: the networks' slots and the runner's two buffers are reused. The length charged to
//! the network is the segment's [`Segment::tcp_len`] after the network's IP header, not the
//! length of these bytes.

use coaplab_netsim::tcp::Segment;

/// Bytes before the payload: flow, connection, copy, copy-log position (4 × 4), seq, ack
/// (2 × 8), flags (1), option bytes (4).
const HEADER_BYTES: usize = 37;

const FLAG_ACK: u8 = 1;
const FLAG_SYN: u8 = 2;
const FLAG_FIN: u8 = 4;

/// Whose segment a packet carries.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Owner {
    /// The flow's index.
    pub(super) flow: u32,
    /// The flow's `k`-th connection.
    pub(super) conn: u32,
    /// Data segments: which copy (1 = the original); 0 for the others.
    pub(super) copy: u32,
    /// Data segments: the position in the sender's copy log ([`super::tcp_copies`]).
    pub(super) slot: u32,
}

/// Replaces `out` with `seg` and its owner.
pub(super) fn encode(out: &mut Vec<u8>, owner: Owner, seg: &Segment) {
    out.clear();
    out.reserve(HEADER_BYTES + seg.payload.len());
    out.extend_from_slice(&owner.flow.to_le_bytes());
    out.extend_from_slice(&owner.conn.to_le_bytes());
    out.extend_from_slice(&owner.copy.to_le_bytes());
    out.extend_from_slice(&owner.slot.to_le_bytes());
    out.extend_from_slice(&seg.seq.to_le_bytes());
    out.extend_from_slice(&seg.ack.unwrap_or(0).to_le_bytes());
    let flags = if seg.ack.is_some() { FLAG_ACK } else { 0 }
        | if seg.syn { FLAG_SYN } else { 0 }
        | if seg.fin { FLAG_FIN } else { 0 };
    out.push(flags);
    out.extend_from_slice(&seg.options_bytes.to_le_bytes());
    out.extend_from_slice(&seg.payload);
}

/// The owner of the segment in `bytes` (written by [`encode`]); the segment replaces `seg`,
/// whose payload buffer is reused.
pub(super) fn decode(bytes: &[u8], seg: &mut Segment) -> Owner {
    let u32_at = |i: usize| u32::from_le_bytes(bytes[i..i + 4].try_into().expect("4 bytes"));
    let u64_at = |i: usize| u64::from_le_bytes(bytes[i..i + 8].try_into().expect("8 bytes"));
    let flags = bytes[32];
    seg.seq = u64_at(16);
    seg.ack = (flags & FLAG_ACK != 0).then(|| u64_at(24));
    seg.syn = flags & FLAG_SYN != 0;
    seg.fin = flags & FLAG_FIN != 0;
    seg.options_bytes = u32_at(33);
    seg.payload.clear();
    seg.payload.extend_from_slice(&bytes[HEADER_BYTES..]);
    Owner {
        flow: u32_at(0),
        conn: u32_at(4),
        copy: u32_at(8),
        slot: u32_at(12),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_segment_and_its_owner_come_back_whole() {
        let mut buf = Vec::new();
        let mut back = Segment {
            seq: 0,
            ack: None,
            syn: false,
            fin: false,
            payload: vec![9; 3],
            options_bytes: 0,
        };
        for seg in [
            Segment {
                seq: u64::MAX - 7,
                ack: Some(1 << 40),
                syn: false,
                fin: true,
                payload: (0..=255).collect(),
                options_bytes: 0,
            },
            Segment {
                seq: 0,
                ack: None,
                syn: true,
                fin: false,
                payload: vec![1, 2],
                options_bytes: 12,
            },
        ] {
            let owner = Owner {
                flow: 399,
                conn: 7,
                copy: 2,
                slot: 400,
            };
            encode(&mut buf, owner, &seg);
            assert_eq!(decode(&buf, &mut back), owner);
            assert_eq!(back, seg);
        }
    }
}
