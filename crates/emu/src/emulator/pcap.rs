//! A minimal pcap writer for IP packets: link type `LINKTYPE_RAW` (101, each record starts with
//! the IPv4 header), nanosecond timestamps (magic `0xa1b23c4d`), readable by tcpdump, Wireshark
//! and tshark.

use std::io::{self, Write};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// `LINKTYPE_RAW`: raw IPv4/IPv6, no link-layer header.
pub const LINKTYPE_RAW: u32 = 101;
/// Magic number of a pcap file with nanosecond timestamps.
pub const MAGIC_NANOS: u32 = 0xa1b2_3c4d;
/// Largest packet stored whole.
pub const SNAPLEN: u32 = 65_535;

/// Writes packets to `out` as a pcap capture.
#[derive(Debug)]
pub struct PcapWriter<W: Write> {
    out: W,
}

impl<W: Write> PcapWriter<W> {
    /// Writes the 24-byte global header.
    pub fn new(mut out: W) -> io::Result<Self> {
        let mut h = Vec::with_capacity(24);
        h.extend_from_slice(&MAGIC_NANOS.to_le_bytes());
        h.extend_from_slice(&2u16.to_le_bytes()); // version 2.4
        h.extend_from_slice(&4u16.to_le_bytes());
        h.extend_from_slice(&0i32.to_le_bytes()); // thiszone
        h.extend_from_slice(&0u32.to_le_bytes()); // sigfigs
        h.extend_from_slice(&SNAPLEN.to_le_bytes());
        h.extend_from_slice(&LINKTYPE_RAW.to_le_bytes());
        out.write_all(&h)?;
        Ok(PcapWriter { out })
    }

    /// Appends `packet` stamped `at` (wall-clock time).
    pub fn write(&mut self, at: SystemTime, packet: &[u8]) -> io::Result<()> {
        let t = at.duration_since(UNIX_EPOCH).unwrap_or(Duration::ZERO);
        let len = u32::try_from(packet.len()).unwrap_or(u32::MAX);
        let kept = len.min(SNAPLEN);
        let mut h = [0u8; 16];
        h[0..4].copy_from_slice(&(t.as_secs() as u32).to_le_bytes());
        h[4..8].copy_from_slice(&t.subsec_nanos().to_le_bytes());
        h[8..12].copy_from_slice(&kept.to_le_bytes());
        h[12..16].copy_from_slice(&len.to_le_bytes());
        self.out.write_all(&h)?;
        self.out.write_all(&packet[..kept as usize])
    }

    /// Flushes the underlying writer.
    pub fn flush(&mut self) -> io::Result<()> {
        self.out.flush()
    }

    /// The underlying writer.
    pub fn into_inner(self) -> W {
        self.out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_and_record_bytes() {
        let mut w = PcapWriter::new(Vec::new()).unwrap();
        let at = UNIX_EPOCH + Duration::new(0x0102_0304, 5);
        w.write(at, &[0x45, 0, 0, 20]).unwrap();
        let b = w.into_inner();
        assert_eq!(
            &b[..24],
            &[
                0x4d, 0x3c, 0xb2, 0xa1, 2, 0, 4, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 0, 0, 101,
                0, 0, 0
            ]
        );
        assert_eq!(
            &b[24..],
            &[4, 3, 2, 1, 5, 0, 0, 0, 4, 0, 0, 0, 4, 0, 0, 0, 0x45, 0, 0, 20]
        );
    }
}
