//! 6LoWPAN sizes (RFC 6282 IPHC + UDP NHC, RFC 4944 fragmentation) and Contiki 3.0's
//! reassembly rules (`core/net/ipv6/sicslowpan.c`), for IPv6/UDP datagrams carrying CoAP and
//! IPv6/TCP segments carrying CoAP over TCP or HTTP.
//!
//! **Compression cases** (IPHC, RFC 6282 §3.1, as Contiki 3.0's `compress_hdr_hc06` does it
//! with the border router's prefix as context 0, so CID = 0 and no context byte):
//! * IPHC base: 2 B. Traffic class and flow label zero: elided (TF = 11).
//! * Hop limit: 64 when the packet leaves its source: elided (HLIM = 10); a forwarder has
//!   decremented it to 63: 1 B inline.
//! * Source / destination (SAC/DAC = 1, context 0): elided (SAM/DAM = 11) when the interface
//!   identifier equals the one derived from the MAC source / destination of this hop; otherwise
//!   the IID inline: 8 B with 64-bit MAC addresses (SAM = 01), 2 B with 16-bit ones (SAM = 10).
//! * UDP directly after IPv6: NHC (RFC 6282 §4.3), 1 B + both ports inline (4 B; CoAP's 5683
//!   is not in the 0xF0Bx range) + checksum 2 B = 7 B, replacing 48 B of IPv6 + UDP.
//! * With RPL's hop-by-hop option (RFC 6553, 8 B, Contiki 3.0 `RPL_INSERT_HBH_OPTION`), the
//!   next header is not UDP: NH = 0, the next-header byte inline (1 B), and the 8-B option and
//!   the 8-B UDP header follow uncompressed; only the 40-B IPv6 header is replaced.
//! * TCP after IPv6: RFC 6282 defines no TCP NHC (§4.2–4.3 give extension headers and UDP
//!   only; Contiki's `compress_hdr_hc06` compresses nothing else), so the next header is
//!   inline (NH = 0, 1 B) and the 20-B TCP header with its options follows uncompressed: only
//!   the 40-B IPv6 header is replaced, as with RPL's option (which then follows inline too).
//!
//! **Fragmentation** (RFC 4944 §5.3, Contiki `sicslowpan.c` output): when compressed header +
//! rest of the datagram exceed the MAC payload, FRAG1 (4 B) carries the compressed header and
//! `⌊(payload − header − 4) / 8⌋ · 8` bytes; each FRAGN (5 B) `⌊(payload − 5) / 8⌋ · 8`
//! bytes, the last one the remainder. Offsets count 8-octet units of the uncompressed datagram.

use coaplab_base::time::{Duration, Instant};

/// IPv6 header bytes.
pub const IPV6_HEADER_BYTES: u32 = 40;
/// UDP header bytes.
pub const UDP_HEADER_BYTES: u32 = 8;
/// RPL hop-by-hop option header (RFC 6553 §3: 2 B extension header + 6 B option).
pub const RPL_HBH_BYTES: u32 = 8;
/// FRAG1 header bytes (RFC 4944 §5.3).
pub const FRAG1_HEADER_BYTES: u32 = 4;
/// FRAGN header bytes (RFC 4944 §5.3).
pub const FRAGN_HEADER_BYTES: u32 = 5;
/// IPHC base encoding bytes (RFC 6282 §3.1.1).
pub const IPHC_BASE_BYTES: u32 = 2;
/// UDP NHC with both ports and the checksum inline (RFC 6282 §4.3.3): 1 + 4 + 2.
pub const UDP_NHC_BYTES: u32 = 7;
/// Largest datagram the 11-bit FRAG1 `datagram_size` can carry, bounded by IPv6's
/// minimum MTU (RFC 8200 §5), which Contiki's buffers follow.
pub const MAX_DATAGRAM_BYTES: u32 = 1280;

/// How one hop compresses the IPv6/UDP headers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Hop {
    /// The packet was forwarded (hop limit 63, 1 B inline) rather than originated here.
    pub forwarded: bool,
    /// The IP source is not this hop's MAC source: its IID travels inline.
    pub src_inline: bool,
    /// The IP destination is not this hop's MAC destination: its IID travels inline.
    pub dst_inline: bool,
    /// 16-bit MAC addresses (2-B inline IIDs) instead of 64-bit ones (8 B).
    pub short_addresses: bool,
    /// RPL hop-by-hop option present.
    pub rpl_hbh: bool,
    /// The datagram carries TCP, not UDP: no NHC, the next-header byte and the TCP header
    /// inline (RFC 6282 has no TCP compression).
    pub tcp: bool,
}

impl Hop {
    /// Bytes of the compressed header in the first (or only) frame, and bytes of the
    /// uncompressed datagram it stands for.
    pub fn header(&self) -> (u32, u32) {
        let iid = if self.short_addresses { 2 } else { 8 };
        let iphc = IPHC_BASE_BYTES
            + u32::from(self.forwarded)
            + if self.src_inline { iid } else { 0 }
            + if self.dst_inline { iid } else { 0 };
        if self.rpl_hbh || self.tcp {
            (iphc + 1, IPV6_HEADER_BYTES)
        } else {
            (iphc + UDP_NHC_BYTES, IPV6_HEADER_BYTES + UDP_HEADER_BYTES)
        }
    }
}

/// Uncompressed IPv6 length of a datagram with `udp_payload` bytes of CoAP.
pub fn ipv6_len(udp_payload: u32, rpl_hbh: bool) -> u32 {
    IPV6_HEADER_BYTES + if rpl_hbh { RPL_HBH_BYTES } else { 0 } + UDP_HEADER_BYTES + udp_payload
}

/// Uncompressed IPv6 length of a datagram carrying `tcp_len` bytes of TCP (its 20-B header,
/// options and payload).
pub fn ipv6_tcp_len(tcp_len: u32, rpl_hbh: bool) -> u32 {
    IPV6_HEADER_BYTES + if rpl_hbh { RPL_HBH_BYTES } else { 0 } + tcp_len
}

/// The frames of one datagram on one hop: how many, and each one's MAC payload.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Plan {
    /// Frames (1 = not fragmented).
    pub frames: u32,
    /// MAC payload of the first frame.
    first_bytes: u32,
    /// Uncompressed bytes left after the first frame.
    rest_after_first: u32,
    /// Datagram bytes per FRAGN.
    per_fragn: u32,
}

impl Plan {
    /// Splits a datagram of `ip_len` uncompressed bytes compressed as `hop` into frames of at
    /// most `max_payload` MAC-payload bytes (Contiki: 127 − FCS 2 − MAC header).
    pub fn new(ip_len: u32, hop: Hop, max_payload: u32) -> Plan {
        let (header, replaced) = hop.header();
        let rest = ip_len.saturating_sub(replaced);
        if header + rest <= max_payload {
            return Plan {
                frames: 1,
                first_bytes: header + rest,
                rest_after_first: 0,
                per_fragn: 0,
            };
        }
        let first_data = (max_payload - header - FRAG1_HEADER_BYTES) & !7;
        let per_fragn = (max_payload - FRAGN_HEADER_BYTES) & !7;
        let rest_after_first = rest - first_data;
        Plan {
            frames: 1 + rest_after_first.div_ceil(per_fragn),
            first_bytes: header + FRAG1_HEADER_BYTES + first_data,
            rest_after_first,
            per_fragn,
        }
    }

    /// MAC payload of frame `k` (0-based).
    pub fn payload_bytes(&self, k: u32) -> u32 {
        if k == 0 {
            return self.first_bytes;
        }
        let done = (k - 1) * self.per_fragn;
        FRAGN_HEADER_BYTES + self.per_fragn.min(self.rest_after_first - done)
    }
}

/// What [`Reassembly::input`] did with a frame.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Input {
    /// The datagram is whole.
    Complete,
    /// A fragment was kept; more are needed.
    Partial,
    /// The fragment was dropped (not part of the datagram being reassembled, or a FRAGN
    /// with no reassembly in progress).
    Dropped,
}

/// Contiki 3.0's single reassembly buffer per node (`sicslowpan.c` `input()`, with
/// `PRIORITIZE_NEW_PACKETS`): one datagram at a time; an unfragmented packet or a FRAG1 from
/// another sender discards it; a FRAG1 of a new datagram from the same sender, or any other
/// fragment, is dropped while it is in progress; after `SICSLOWPAN_REASS_MAXAGE` it is
/// discarded on the next input.
#[derive(Debug, Clone, Copy, Default)]
pub struct Reassembly {
    active: bool,
    datagram: u64,
    sender: u16,
    next_fragment: u32,
    expires: Instant,
    /// Datagrams given up part-way (timeout or displaced by another).
    pub discarded: u64,
}

impl Reassembly {
    /// Frame `k` of `frames` of `datagram` from `sender` arrives at `now`.
    pub fn input(
        &mut self,
        now: Instant,
        sender: u16,
        datagram: u64,
        k: u32,
        frames: u32,
        maxage: Duration,
    ) -> Input {
        if self.active && now >= self.expires {
            self.discard();
        }
        if frames == 1 || (k == 0 && self.active && sender != self.sender) {
            if self.active {
                self.discard();
            }
            if frames == 1 {
                return Input::Complete;
            }
        }
        if !self.active {
            if k != 0 {
                return Input::Dropped;
            }
            *self = Reassembly {
                active: true,
                datagram,
                sender,
                next_fragment: 1,
                expires: now + maxage,
                discarded: self.discarded,
            };
            return Input::Partial;
        }
        if datagram != self.datagram || sender != self.sender || k != self.next_fragment {
            return Input::Dropped;
        }
        self.next_fragment += 1;
        if self.next_fragment == frames {
            self.active = false;
            Input::Complete
        } else {
            Input::Partial
        }
    }

    fn discard(&mut self) {
        self.active = false;
        self.discarded += 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Contiki 3.0, 64-bit MAC addresses: 127 − 2 (FCS) − 21 (MAC header) = 104 B.
    const PAYLOAD: u32 = 104;

    fn hop(forwarded: bool, src_inline: bool, dst_inline: bool, rpl_hbh: bool) -> Hop {
        Hop {
            forwarded,
            src_inline,
            dst_inline,
            short_addresses: false,
            rpl_hbh,
            tcp: false,
        }
    }

    #[test]
    fn header_sizes_of_the_cases_used() {
        // One hop, both IIDs from the MAC addresses: IPHC 2 + UDP NHC 7 = 9 B for 48 B.
        assert_eq!(hop(false, false, false, false).header(), (9, 48));
        // A middle hop: hop limit 1 + two 8-B IIDs: 2 + 1 + 16 + 7 = 26 B.
        assert_eq!(hop(true, true, true, false).header(), (26, 48));
        // With RPL's HBH option: IPHC 2 + NH 1 = 3 B for the 40-B IPv6 header only.
        assert_eq!(hop(false, false, false, true).header(), (3, 40));
        assert_eq!(hop(true, true, true, true).header(), (20, 40));
        let short = Hop {
            short_addresses: true,
            ..hop(true, true, false, false)
        };
        assert_eq!(short.header(), (12, 48));
    }

    #[test]
    fn coap_messages_of_a_few_sizes_frame_exactly() {
        // 11 B of CoAP, one hop, no HBH: 9 + 11 = 20 B MAC payload, one frame (MPDU 43 B).
        let p = Plan::new(
            ipv6_len(11, false),
            hop(false, false, false, false),
            PAYLOAD,
        );
        assert_eq!((p.frames, p.payload_bytes(0)), (1, 20));
        // The same with HBH: 3 + (67 − 40 = 27) = 30 B.
        let p = Plan::new(ipv6_len(11, true), hop(false, false, false, true), PAYLOAD);
        assert_eq!((p.frames, p.payload_bytes(0)), (1, 30));
        // 78 B of CoAP on a middle hop without HBH fits exactly: 26 + 78 = 104.
        let p = Plan::new(ipv6_len(78, false), hop(true, true, true, false), PAYLOAD);
        assert_eq!((p.frames, p.payload_bytes(0)), (1, 104));
        // 79 B does not: FRAG1 = 26 + 4 + ⌊(104 − 30)/8⌋·8 = 26 + 4 + 72 = 102 B, leaving
        // 79 − 72 = 7 B for one FRAGN of 5 + 7 = 12 B.
        let p = Plan::new(ipv6_len(79, false), hop(true, true, true, false), PAYLOAD);
        assert_eq!(p.frames, 2);
        assert_eq!((p.payload_bytes(0), p.payload_bytes(1)), (102, 12));
        // 300 B with HBH, originated: datagram 356 B, header 3 (for 40), rest 316.
        // FRAG1: 3 + 4 + ⌊97/8⌋·8 = 96 → 103 B; then 220 B in FRAGNs of 96: 96, 96, 28.
        let p = Plan::new(ipv6_len(300, true), hop(false, false, false, true), PAYLOAD);
        assert_eq!(p.frames, 4);
        let sizes: Vec<u32> = (0..4).map(|k| p.payload_bytes(k)).collect();
        assert_eq!(sizes, vec![103, 101, 101, 33]);
    }

    #[test]
    fn tcp_segments_carry_their_header_inline() {
        let tcp = |forwarded, rpl_hbh| Hop {
            tcp: true,
            ..hop(forwarded, forwarded, forwarded, rpl_hbh)
        };
        // No TCP NHC: IPHC 2 + next header 1 = 3 B for the 40-B IPv6 header, with or without
        // RPL's option (which, like the TCP header, stays in the rest of the datagram).
        assert_eq!(tcp(false, false).header(), (3, 40));
        assert_eq!(tcp(false, true).header(), (3, 40));
        assert_eq!(tcp(true, false).header(), (20, 40));
        // A pure ACK (20-B TCP header), originated: 3 + 20 = 23 B, one frame.
        let ack = Plan::new(ipv6_tcp_len(20, false), tcp(false, false), PAYLOAD);
        assert_eq!((ack.frames, ack.payload_bytes(0)), (1, 23));
        // A 64-B segment fits one frame on the first hop (3 + 84 = 87 B), and on a middle hop
        // (20 + 84 = 104 B) exactly.
        let seg = |mss: u32, forwarded| {
            Plan::new(
                ipv6_tcp_len(20 + mss, false),
                tcp(forwarded, false),
                PAYLOAD,
            )
        };
        assert_eq!(
            (seg(64, false).frames, seg(64, false).payload_bytes(0)),
            (1, 87)
        );
        assert_eq!(
            (seg(64, true).frames, seg(64, true).payload_bytes(0)),
            (1, 104)
        );
        // A 400-B segment on a middle hop: FRAG1 20 + 4 + ⌊80/8⌋·8 = 104 B, the other 340 B
        // in FRAGNs of 96: 96, 96, 96, 52.
        let p = seg(400, true);
        let sizes: Vec<u32> = (0..p.frames).map(|k| p.payload_bytes(k)).collect();
        assert_eq!(sizes, vec![104, 101, 101, 101, 57]);
    }

    #[test]
    fn reassembly_completes_drops_strays_and_times_out() {
        let age = Duration::from_secs(20);
        let t = Instant::from_secs;
        let mut r = Reassembly::default();
        assert_eq!(r.input(t(0), 1, 7, 0, 3, age), Input::Partial);
        // Another datagram's FRAG1 from the same sender is dropped (Contiki 3.0).
        assert_eq!(r.input(t(1), 1, 8, 0, 2, age), Input::Dropped);
        assert_eq!(r.input(t(1), 1, 7, 1, 3, age), Input::Partial);
        assert_eq!(r.input(t(2), 1, 7, 2, 3, age), Input::Complete);
        // A FRAGN with nothing in progress is dropped.
        assert_eq!(r.input(t(3), 1, 9, 1, 3, age), Input::Dropped);
        // Timeout: 20 s after the FRAG1 the partial datagram is discarded on the next input.
        assert_eq!(r.input(t(10), 2, 10, 0, 2, age), Input::Partial);
        assert_eq!(r.input(t(30), 2, 10, 1, 2, age), Input::Dropped);
        assert_eq!(r.discarded, 1);
        // An unfragmented packet displaces a partial datagram; so does another sender's FRAG1.
        assert_eq!(r.input(t(31), 2, 11, 0, 2, age), Input::Partial);
        assert_eq!(r.input(t(31), 3, 12, 0, 1, age), Input::Complete);
        assert_eq!(r.input(t(32), 2, 11, 1, 2, age), Input::Dropped);
        assert_eq!(r.input(t(33), 2, 13, 0, 2, age), Input::Partial);
        assert_eq!(r.input(t(33), 4, 14, 0, 2, age), Input::Partial);
        assert_eq!(r.discarded, 3);
        assert_eq!(r.input(t(34), 4, 14, 1, 2, age), Input::Complete);
    }
}
