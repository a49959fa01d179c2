//! A TCP model segment carried as the bytes of a network packet, with the flow, the connection
//! and the copy number it belongs to.
//!
//! The segment travels inside the packet ([`coaplab_netsim::Topology::send_tcp`]: the star and
//! the mesh keep the bytes in a reused slot and swap them out on delivery), so a segment
//! dropped by the network is gone with its packet, and nothing is allocated or hashed per
//! packet: the networks' slots and the segments' buffers are reused. The length charged to
//! the network is the segment's [`Segment::tcp_len`] after the network's IP header, not the
//! length of these bytes.
//!
//! The packet is the payload followed by a trailer (the header fields), so that neither end
//! copies the payload: the sender appends the trailer to the segment's own buffer
//! ([`encode`]), the receiver cuts it off the delivered buffer and takes that buffer as the
//! segment's payload ([`decode`]). With a header in front, both ends copied every payload once
//! more, and wrote the header a field at a time (tcp-100 star: ~135 instructions per link
//! packet more, callgrind).

use coaplab_netsim::tcp::Segment;

/// Bytes after the payload: flow, connection, copy, copy-log position (4 × 4), seq, ack
/// (2 × 8), flags (1), option bytes (4).
const TRAILER_BYTES: usize = 37;

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

/// The packet of `seg` and its owner. A segment with a payload carries the trailer in its own
/// buffer, appended here: the caller cuts it off again with [`sent`] once the packet is sent.
/// One without (SYN, pure ACK, a lone FIN) has its trailer written into `spare`, which a
/// buffer of no capacity would otherwise allocate for every ACK.
pub(super) fn encode<'a>(seg: &'a mut Segment, owner: Owner, spare: &'a mut Vec<u8>) -> &'a [u8] {
    let trailer = trailer(owner, seg);
    let out = if seg.payload.is_empty() {
        spare.clear();
        spare
    } else {
        &mut seg.payload
    };
    out.extend_from_slice(&trailer);
    out
}

/// Takes the trailer [`encode`] appended off `seg`'s payload, whose length was `payload_len`.
pub(super) fn sent(seg: &mut Segment, payload_len: usize) {
    seg.payload.truncate(payload_len);
}

/// The trailer of `seg` and its owner, written as one block (one capacity check where a field
/// at a time made eight).
fn trailer(owner: Owner, seg: &Segment) -> [u8; TRAILER_BYTES] {
    let mut t = [0u8; TRAILER_BYTES];
    t[0..4].copy_from_slice(&owner.flow.to_le_bytes());
    t[4..8].copy_from_slice(&owner.conn.to_le_bytes());
    t[8..12].copy_from_slice(&owner.copy.to_le_bytes());
    t[12..16].copy_from_slice(&owner.slot.to_le_bytes());
    t[16..24].copy_from_slice(&seg.seq.to_le_bytes());
    t[24..32].copy_from_slice(&seg.ack.unwrap_or(0).to_le_bytes());
    t[32] = if seg.ack.is_some() { FLAG_ACK } else { 0 }
        | if seg.syn { FLAG_SYN } else { 0 }
        | if seg.fin { FLAG_FIN } else { 0 };
    t[33..37].copy_from_slice(&seg.options_bytes.to_le_bytes());
    t
}

/// The owner of the segment in the packet `bytes` (written by [`encode`]); the segment
/// replaces `seg`. Its payload is `bytes`' buffer, cut before the trailer; `bytes` gets `seg`'s
/// former buffer (swapped, not copied).
pub(super) fn decode(bytes: &mut Vec<u8>, seg: &mut Segment) -> Owner {
    let at = bytes.len() - TRAILER_BYTES;
    let t: &[u8; TRAILER_BYTES] = bytes[at..].try_into().expect("a trailer");
    let u32_at = |i: usize| u32::from_le_bytes(t[i..i + 4].try_into().expect("4 bytes"));
    let u64_at = |i: usize| u64::from_le_bytes(t[i..i + 8].try_into().expect("8 bytes"));
    let flags = t[32];
    let owner = Owner {
        flow: u32_at(0),
        conn: u32_at(4),
        copy: u32_at(8),
        slot: u32_at(12),
    };
    seg.seq = u64_at(16);
    seg.ack = (flags & FLAG_ACK != 0).then(|| u64_at(24));
    seg.syn = flags & FLAG_SYN != 0;
    seg.fin = flags & FLAG_FIN != 0;
    seg.options_bytes = u32_at(33);
    bytes.truncate(at);
    std::mem::swap(bytes, &mut seg.payload);
    owner
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_segment_and_its_owner_come_back_whole() {
        let mut spare = Vec::new();
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
            // A pure ACK: its trailer goes into the spare buffer.
            Segment {
                seq: 9,
                ack: Some(3),
                syn: false,
                fin: false,
                payload: Vec::new(),
                options_bytes: 0,
            },
        ] {
            let owner = Owner {
                flow: 399,
                conn: 7,
                copy: 2,
                slot: 400,
            };
            let mut sending = seg.clone();
            let len = sending.payload.len();
            let mut packet = encode(&mut sending, owner, &mut spare).to_vec();
            sent(&mut sending, len);
            assert_eq!(sending, seg, "the segment is whole again once sent");
            assert_eq!(decode(&mut packet, &mut back), owner);
            assert_eq!(back, seg);
        }
    }
}
