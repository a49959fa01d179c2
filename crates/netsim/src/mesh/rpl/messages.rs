//! On-the-wire sizes of RPL's control messages (ICMPv6 type 155, RFC 6550 §6) as Contiki 3.0
//! builds them (`core/net/rpl/rpl-icmp6.c`, `dio_output`, `dao_output`), after 6LoWPAN IPHC
//! (RFC 6282), so control traffic occupies the channel for the right air time; the MAC frame
//! around them is the mesh's (`mac::header_bytes`, `mac::broadcast_psdu_bytes`).
//!
//! * DIO, multicast to ff02::1a from a link-local address: ICMPv6 header 4 + DIO base 24
//!   (instance, version, rank 2, G/MOP/Prf, DTSN, flags, reserved, DODAGID 16) + DODAG
//!   configuration option 16 (§6.7.6) + prefix information option 32 (§6.7.10) = 76 B;
//!   IPHC 2 + next header inline 1 + destination ff02::00XX in 1 B (DAM 11), source and hop
//!   limit 255 elided = 4 B; 80 B of MAC payload, sent as a broadcast frame.
//! * DAO (storing mode), unicast link-local to the parent: ICMPv6 4 + DAO base 4 + DODAGID 16
//!   (the D flag: Contiki sets it when `RPL_MAX_DAG_PER_INSTANCE` > 1, default 2) + RPL target
//!   option 20 (§6.7.7, a /128) + transit information option 6 (§6.7.8, no parent address in
//!   storing mode) = 50 B; IPHC 2 + next header 1, both addresses and hop limit 64 elided
//!   = 3 B; 53 B of MAC payload. A No-Path DAO is the same message with lifetime 0.
//! * DIS, multicast to ff02::1a (`dis_output`): ICMPv6 4 + flags 1 + reserved 1 = 6 B, IPHC as
//!   for a DIO 4 B: 10 B of MAC payload, a broadcast frame.

/// ICMPv6 bytes of a DIO with the DODAG configuration and prefix information options.
pub const DIO_ICMP_BYTES: u32 = 4 + 24 + 16 + 32;
/// Compressed IPv6 header bytes of a DIO.
pub const DIO_IPHC_BYTES: u32 = 4;
/// ICMPv6 bytes of a storing-mode DAO for one target.
pub const DAO_ICMP_BYTES: u32 = 4 + 4 + 16 + 20 + 6;
/// Compressed IPv6 header bytes of a DAO.
pub const DAO_IPHC_BYTES: u32 = 3;

/// ICMPv6 bytes of a DIS without options.
pub const DIS_ICMP_BYTES: u32 = 4 + 2;

/// MAC payload of a DIS (10 B).
pub const fn dis_payload_bytes() -> u32 {
    DIS_ICMP_BYTES + DIO_IPHC_BYTES
}

/// MAC payload of a DIO (80 B).
pub const fn dio_payload_bytes() -> u32 {
    DIO_ICMP_BYTES + DIO_IPHC_BYTES
}

/// MAC payload of a DAO (53 B).
pub const fn dao_payload_bytes() -> u32 {
    DAO_ICMP_BYTES + DAO_IPHC_BYTES
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mesh::mac;

    #[test]
    fn control_messages_fit_one_frame_each() {
        assert_eq!(dio_payload_bytes(), 80);
        assert_eq!(dao_payload_bytes(), 53);
        assert_eq!(dis_payload_bytes(), 10);
        assert_eq!(mac::broadcast_psdu_bytes(dis_payload_bytes(), false), 27);
        // DIO: broadcast header 15 + 80 + FCS 2 = 97 B.
        assert_eq!(mac::broadcast_psdu_bytes(dio_payload_bytes(), false), 97);
        // DAO: unicast header 21 + 53 + FCS 2 = 76 B.
        assert_eq!(
            mac::header_bytes(false) + dao_payload_bytes() + mac::FCS_BYTES,
            76
        );
        assert!(dao_payload_bytes() <= mac::max_payload(false));
    }
}
