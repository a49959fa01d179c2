//! A TCP segment as the model sees it: sequence numbers, flags and the payload bytes.
//!
//! Sequence numbers are 64-bit and absolute, each side's initial sequence number is 0 (the SYN
//! occupies sequence 0, data starts at 1), so they never wrap. There is no window field (the
//! receive window never limits, docs/experiments.md §5.3), no options (no SACK, no timestamps)
//! except TCP Fast Open's in a SYN ([`TFO_OPTION_BYTES`]), and no checksum.

/// IPv4 header bytes (no options).
pub const IPV4_HEADER_BYTES: u32 = 20;
/// TCP header bytes (no options: timestamps and SACK are off).
pub const TCP_HEADER_BYTES: u32 = 20;
/// IPv4 + TCP header bytes of every segment.
pub const HEADER_BYTES: u32 = IPV4_HEADER_BYTES + TCP_HEADER_BYTES;

/// TCP option bytes of a SYN carrying a TFO cookie (RFC 7413 §4.1.1): kind 34, length 10, an
/// 8-B cookie (Linux's), padded with two NOPs to a 4-B multiple.
pub const TFO_OPTION_BYTES: u32 = 12;

/// TCP option bytes of a SYN asking for a TFO cookie (RFC 7413 §4.1.1): kind 34, length 2
/// (no cookie), padded with two NOPs (Linux `tcp_options_write`).
pub const TFO_REQUEST_OPTION_BYTES: u32 = 4;

/// Linux's largest TCP option space (`MAX_TCP_OPTION_SPACE`): a SYN carries at most MSS − 40
/// data bytes (`tcp_send_syn_data`), 48 B at MTU 128.
pub const MAX_TCP_OPTION_SPACE: u32 = 40;

/// One segment on the wire.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Segment {
    /// Sequence number of the first byte (or of the SYN/FIN).
    pub seq: u64,
    /// Cumulative acknowledgement (`Some` iff the ACK flag is set).
    pub ack: Option<u64>,
    /// SYN flag.
    pub syn: bool,
    /// FIN flag.
    pub fin: bool,
    /// Payload bytes.
    pub payload: Vec<u8>,
    /// TCP option bytes (padded): [`TFO_OPTION_BYTES`] on a Fast Open SYN and on the SYN-ACK
    /// that hands a cookie out, [`TFO_REQUEST_OPTION_BYTES`] on a SYN asking for one, plus
    /// `syn_options_bytes` on every SYN and SYN-ACK; else 0.
    pub options_bytes: u32,
}

impl Segment {
    /// IP length: 40 header bytes + options + payload. This is what a netsim link is offered.
    pub fn ip_len(&self) -> u32 {
        HEADER_BYTES + self.options_bytes + self.payload.len() as u32
    }

    /// TCP length: the 20-B header, options and payload ([`Segment::ip_len`] without IPv4's
    /// header), what [`crate::Topology::send_tcp`] carries after its own IP header.
    pub fn tcp_len(&self) -> u32 {
        TCP_HEADER_BYTES + self.options_bytes + self.payload.len() as u32
    }

    /// Sequence space the segment occupies: payload plus one each for SYN and FIN.
    pub fn seq_len(&self) -> u64 {
        self.payload.len() as u64 + u64::from(self.syn) + u64::from(self.fin)
    }

    /// A pure ACK: no payload, no SYN, no FIN.
    pub fn is_pure_ack(&self) -> bool {
        self.ack.is_some() && self.seq_len() == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_count_forty_header_bytes() {
        let full = Segment {
            seq: 1,
            ack: Some(1),
            syn: false,
            fin: false,
            payload: vec![0; 256],
            options_bytes: 0,
        };
        assert_eq!(full.ip_len(), 296);
        assert_eq!(full.seq_len(), 256);
        let syn = Segment {
            seq: 0,
            ack: None,
            syn: true,
            fin: false,
            payload: Vec::new(),
            options_bytes: 0,
        };
        assert_eq!(syn.ip_len(), 40);
        assert_eq!(syn.seq_len(), 1);
        assert!(!syn.is_pure_ack());
    }
}
