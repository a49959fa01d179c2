//! Capture files of IP packets: link type `LINKTYPE_RAW` (101, each record starts with the
//! IPv4 header), nanosecond timestamps (magic `0xa1b23c4d`), readable by tcpdump, Wireshark
//! and tshark. The file format is the `pcap-file` crate's; this wrapper fixes the header and
//! takes wall-clock or run-relative instants. The emulator writes its captures with it, and
//! so does the simulator's `coaplab run --trace` (`coaplab_lab::trace::pcap`); it is the one
//! module of this crate built without the `runtime` feature.

use std::io::{self, Write};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use pcap_file::pcap::{PcapHeader, PcapPacket};
use pcap_file::{DataLink, Endianness, TsResolution};

/// `LINKTYPE_RAW`: raw IPv4/IPv6, no link-layer header.
pub const LINKTYPE_RAW: u32 = 101;
/// Magic number of a pcap file with nanosecond timestamps.
pub const MAGIC_NANOS: u32 = 0xa1b2_3c4d;
/// Largest packet stored whole.
pub const SNAPLEN: u32 = 65_535;

/// Writes packets to `out` as a pcap capture.
#[derive(Debug)]
pub struct PcapWriter<W: Write> {
    inner: pcap_file::pcap::PcapWriter<W>,
}

impl<W: Write> PcapWriter<W> {
    /// Writes the 24-byte global header (little-endian, nanoseconds, `LINKTYPE_RAW`).
    pub fn new(out: W) -> io::Result<Self> {
        let header = PcapHeader {
            version_major: 2,
            version_minor: 4,
            ts_correction: 0,
            ts_accuracy: 0,
            snaplen: SNAPLEN,
            datalink: DataLink::RAW,
            ts_resolution: TsResolution::NanoSecond,
            endianness: Endianness::Little,
        };
        let inner =
            pcap_file::pcap::PcapWriter::with_header(out, header).map_err(io::Error::other)?;
        Ok(PcapWriter { inner })
    }

    /// Appends `packet` stamped `at` (wall-clock time).
    pub fn write(&mut self, at: SystemTime, packet: &[u8]) -> io::Result<()> {
        self.write_since_epoch(
            at.duration_since(UNIX_EPOCH).unwrap_or(Duration::ZERO),
            packet,
        )
    }

    /// Appends `packet` stamped `since_epoch` after the Unix epoch (a simulated run writes
    /// its virtual instants: the run starts at the epoch). Packets longer than [`SNAPLEN`]
    /// are cut there, their original length kept in the record.
    pub fn write_since_epoch(&mut self, since_epoch: Duration, packet: &[u8]) -> io::Result<()> {
        let len = u32::try_from(packet.len()).unwrap_or(u32::MAX);
        let kept = &packet[..len.min(SNAPLEN) as usize];
        self.inner
            .write_packet(&PcapPacket::new(since_epoch, len, kept))
            .map(drop)
            .map_err(io::Error::other)
    }

    /// Flushes the underlying writer and returns it: the capture is complete.
    pub fn finish(self) -> io::Result<W> {
        let mut out = self.inner.into_writer();
        out.flush()?;
        Ok(out)
    }

    /// The underlying writer.
    pub fn into_inner(self) -> W {
        self.inner.into_writer()
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
