//! Capture files of IP packets ([`PcapNgWriter`]: pcapng of any link type, for the mesh's
//! 802.15.4 frames): link type `LINKTYPE_RAW` (101, each record starts with the
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
        Self::with_linktype(out, LINKTYPE_RAW)
    }

    /// Writes the global header of a capture of link type `linktype` (a tcpdump.org
    /// `LINKTYPE_` value, e.g. 195 for IEEE 802.15.4 frames with their FCS).
    pub fn with_linktype(out: W, linktype: u32) -> io::Result<Self> {
        let header = PcapHeader {
            version_major: 2,
            version_minor: 4,
            ts_correction: 0,
            ts_accuracy: 0,
            snaplen: SNAPLEN,
            datalink: DataLink::from(linktype),
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

/// Writes packets to `out` as a pcapng capture (one interface of one link type, nanosecond
/// timestamps), each packet with an optional comment (tshark: `frame.comment`).
pub struct PcapNgWriter<W: Write> {
    inner: pcap_file::pcapng::PcapNgWriter<W>,
}

impl<W: Write> std::fmt::Debug for PcapNgWriter<W> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PcapNgWriter").finish_non_exhaustive()
    }
}

impl<W: Write> PcapNgWriter<W> {
    /// Writes the section header and the interface (link type `linktype`, nanoseconds).
    pub fn new(out: W, linktype: u32) -> io::Result<Self> {
        use pcap_file::pcapng::blocks::interface_description::{
            InterfaceDescriptionBlock, InterfaceDescriptionOption,
        };
        let mut inner = pcap_file::pcapng::PcapNgWriter::with_endianness(out, Endianness::Little)
            .map_err(io::Error::other)?;
        let idb = InterfaceDescriptionBlock {
            linktype: DataLink::from(linktype),
            snaplen: SNAPLEN,
            options: vec![InterfaceDescriptionOption::IfTsResol(9)],
        };
        inner.write_pcapng_block(idb).map_err(io::Error::other)?;
        Ok(PcapNgWriter { inner })
    }

    /// Appends `packet` stamped `since_epoch` after the Unix epoch, with `comment` if any.
    pub fn write_since_epoch(
        &mut self,
        since_epoch: Duration,
        packet: &[u8],
        comment: Option<&str>,
    ) -> io::Result<()> {
        use pcap_file::pcapng::blocks::enhanced_packet::{
            EnhancedPacketBlock, EnhancedPacketOption,
        };
        let len = u32::try_from(packet.len()).unwrap_or(u32::MAX);
        let kept = &packet[..len.min(SNAPLEN) as usize];
        let epb = EnhancedPacketBlock {
            interface_id: 0,
            timestamp: since_epoch,
            original_len: len,
            data: std::borrow::Cow::Borrowed(kept),
            options: comment
                .map(|c| EnhancedPacketOption::Comment(std::borrow::Cow::Borrowed(c)))
                .into_iter()
                .collect(),
        };
        self.inner
            .write_pcapng_block(epb)
            .map(drop)
            .map_err(io::Error::other)
    }

    /// Flushes the underlying writer and returns it: the capture is complete.
    pub fn finish(self) -> io::Result<W> {
        let mut out = self.inner.into_inner();
        out.flush()?;
        Ok(out)
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
