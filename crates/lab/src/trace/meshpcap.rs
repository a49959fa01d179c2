//! `mesh.pcapng` (mesh runs only): every 802.15.4 frame on air, as IEEE 802.15.4 frames with
//! their FCS (`LINKTYPE_IEEE802_15_4_WITHFCS`, 195), in the order of `frames.parquet`'s rows
//! (frame N of the capture is row N − 1 of the table), stamped with the frame's start
//! (pcapng, nanoseconds, epoch = the start of the run).
//!
//! Each frame has the length the model counts (`psdu_bytes`), built as Contiki 3.0 builds it:
//! * MAC header: data frames with PAN ID compression (PAN 0xabcd), 64-bit addresses
//!   (`00:12:4b:00:00:00:HH:LL`, HHLL = the node's id in the frame table) or 16-bit ones (`short_addresses`), the ACK
//!   request bit on unicast frames when `mac_ack_request`; a broadcast (DIO, DIS) to 0xffff;
//!   an ACK is FCF + the acknowledged frame's sequence number + FCS.
//! * 6LoWPAN: IPHC (RFC 6282) with the model's header sizes, stateless (link-local prefix
//!   fe80::/64, so that Wireshark decompresses it without a configured context; the model's
//!   context 0 has the same sizes), UDP NHC or, with `rpl_hbh_option`, the RPL hop-by-hop
//!   option (RFC 6553) and the UDP header inline; FRAG1/FRAGN (RFC 4944) with the datagram's
//!   size, a tag (the packet id modulo 2^16) and offset for fragmented datagrams; the UDP
//!   payload is the CoAP message the endpoint sent, UDP checksums correct.
//! * RPL control frames: ICMPv6 RPL DIO (with the DODAG configuration and prefix information
//!   options), DIS, DAO (target and transit information options) of the modelled sizes.
//!
//! Values the model does not keep are placeholders of the right size: the hop limit of a
//! forwarded datagram is 63 on every hop (the model counts the inline byte), the hop-by-hop
//! option's sender rank 256, the DODAG id fd00::1, the DAO's sequence number its MAC one.
//!
//! A frame its addressee did not decode (`decoded = false` in the frame table: a collision, a
//! frame lost to the link; a broadcast no node decoded) carries a packet comment saying so
//! (`tshark -r mesh.pcapng -Y frame.comment`); its bytes are the ones sent, FCS correct.
//!
//! `tshark -r mesh.pcapng -Y coap` lists the CoAP messages.

use std::io::{self, BufWriter};
use std::path::Path;
use std::time::Duration as StdDuration;

use coaplab_emu::pcap::PcapNgWriter;
use coaplab_netsim::mesh::mac::{self, Control, FCS_BYTES};
use coaplab_netsim::mesh::sixlowpan::{Hop, Plan};
use coaplab_netsim::mesh::{DatagramRecord, FrameKind, FrameRecord, MeshParams};

/// `LINKTYPE_IEEE802_15_4_WITHFCS`.
pub const LINKTYPE_IEEE802_15_4_WITHFCS: u32 = 195;
/// The PAN id of the frames.
const PAN: u16 = 0xabcd;
/// Contiki's `RPL_DEFAULT_INSTANCE`.
const RPL_INSTANCE: u8 = 0x1e;

/// Writes `mesh.pcapng` into `dir`.
pub(crate) fn write(
    dir: &Path,
    frames: &[FrameRecord],
    datagrams: &[DatagramRecord],
    params: &MeshParams,
) -> io::Result<()> {
    let stem = dir.join("mesh");
    let tmp = stem.with_extension("pcapng.tmp");
    let mut w = PcapNgWriter::new(
        BufWriter::new(crate::files::create_new(&tmp)?),
        LINKTYPE_IEEE802_15_4_WITHFCS,
    )?;
    let builder = Builder::new(datagrams, params);
    for (row, f) in frames.iter().enumerate() {
        let bytes = builder.frame(f);
        let at = StdDuration::from_nanos(f.start.as_nanos().max(0) as u64);
        let comment = (!f.decoded).then(|| match f.to {
            Some(to) => format!(
                "not decoded by its addressee, node {to} (frames row {row}: decoded = false, \
                 receivers = {})",
                f.receivers
            ),
            None => format!("broadcast decoded by no node (frames row {row}: decoded = false)"),
        });
        w.write_since_epoch(at, &bytes, comment.as_deref())?;
    }
    w.finish()?;
    std::fs::rename(&tmp, stem.with_extension("pcapng"))
}

/// Builds the frames of one run.
pub(crate) struct Builder<'a> {
    datagrams: std::collections::HashMap<u64, &'a DatagramRecord>,
    short: bool,
    hbh: bool,
    ack_request: bool,
}

impl<'a> Builder<'a> {
    pub(crate) fn new(datagrams: &'a [DatagramRecord], params: &MeshParams) -> Self {
        Builder {
            datagrams: datagrams.iter().map(|d| (d.id, d)).collect(),
            short: params.short_addresses,
            hbh: params.rpl_hbh_option,
            ack_request: params.mac_ack_request,
        }
    }

    /// Frame `f`'s PSDU, FCS included, of the model's length `psdu_bytes`.
    pub(crate) fn frame(&self, f: &FrameRecord) -> Vec<u8> {
        let mut out = self.body(f);
        // The model's length, whatever was built (a datagram not found, say).
        let len = usize::from(f.psdu_bytes).saturating_sub(FCS_BYTES as usize);
        out.resize(len, 0);
        let fcs = crc16_kermit(&out);
        out.extend_from_slice(&fcs.to_le_bytes());
        out
    }

    /// Frame `f` as built, without the FCS.
    pub(crate) fn body(&self, f: &FrameRecord) -> Vec<u8> {
        let mut out = Vec::with_capacity(usize::from(f.psdu_bytes));
        match f.kind {
            FrameKind::Ack => {
                out.extend_from_slice(&[0x02, 0x00, f.seq]);
            }
            _ => {
                self.mac_header(&mut out, f);
                match f.control {
                    Some(c) => self.control(&mut out, f, c),
                    None => self.data(&mut out, f),
                }
            }
        }
        out
    }

    fn mac_header(&self, out: &mut Vec<u8>, f: &FrameRecord) {
        let mode: u16 = if self.short { 2 } else { 3 };
        let dst_mode = if f.to.is_some() { mode } else { 2 };
        let ack = f.to.is_some() && self.ack_request;
        let fcf: u16 = 1 | (u16::from(ack) << 5) | (1 << 6) | (dst_mode << 10) | (mode << 14);
        out.extend_from_slice(&fcf.to_le_bytes());
        out.push(f.seq);
        out.extend_from_slice(&PAN.to_le_bytes());
        match f.to {
            Some(to) => self.mac_addr(out, to),
            None => out.extend_from_slice(&[0xff, 0xff]),
        }
        self.mac_addr(out, f.node);
    }

    /// Node `n`'s MAC address, little-endian as on air.
    fn mac_addr(&self, out: &mut Vec<u8>, n: u16) {
        let id = n;
        if self.short {
            out.extend_from_slice(&id.to_le_bytes());
        } else {
            let mut a = eui64(id);
            a.reverse();
            out.extend_from_slice(&a);
        }
    }

    /// Node `n`'s interface identifier (RFC 4944 §6, RFC 6282 §3.2.2).
    fn iid(&self, n: u16) -> [u8; 8] {
        let id = n;
        if self.short {
            let b = id.to_be_bytes();
            [0, 0, 0, 0xff, 0xfe, 0, b[0], b[1]]
        } else {
            let mut a = eui64(id);
            a[0] ^= 0x02;
            a
        }
    }

    fn link_local(&self, n: u16) -> [u8; 16] {
        let mut a = [0u8; 16];
        a[0] = 0xfe;
        a[1] = 0x80;
        a[8..].copy_from_slice(&self.iid(n));
        a
    }

    fn global(&self, n: u16) -> [u8; 16] {
        let mut a = [0u8; 16];
        a[0] = 0xfd;
        a[8..].copy_from_slice(&self.iid(n));
        a
    }

    /// A data frame's 6LoWPAN payload.
    fn data(&self, out: &mut Vec<u8>, f: &FrameRecord) {
        let Some(d) = f.packet.and_then(|p| self.datagrams.get(&p)) else {
            return;
        };
        let Some(to) = f.to else { return };
        let hop = Hop {
            forwarded: f.node != d.src_node,
            src_inline: f.node != d.src_node,
            dst_inline: to != d.dst_node,
            short_addresses: self.short,
            rpl_hbh: self.hbh,
            // Only CoAP-over-UDP mesh runs log their frames (`sim::mesh`).
            tcp: false,
        };
        // The compressed header and the datagram's bytes after what it replaces.
        let src = self.link_local(d.src_node);
        let dst = self.link_local(d.dst_node);
        let mut udp = Vec::with_capacity(8 + d.payload.len());
        let udp_len = (8 + d.payload.len()) as u16;
        udp.extend_from_slice(&d.src.port().to_be_bytes());
        udp.extend_from_slice(&d.dst.port().to_be_bytes());
        udp.extend_from_slice(&udp_len.to_be_bytes());
        udp.extend_from_slice(&[0, 0]);
        udp.extend_from_slice(&d.payload);
        let mut sum = checksum(&src, &dst, 17, &udp);
        if sum == 0 {
            sum = 0xffff;
        }
        udp[6..8].copy_from_slice(&sum.to_be_bytes());
        let hlim = if hop.forwarded { 0b00 } else { 0b10 };
        let nh = u8::from(!self.hbh);
        let am = if self.short { 0b10 } else { 0b01 };
        let sam = if hop.src_inline { am } else { 0b11 };
        let dam = if hop.dst_inline { am } else { 0b11 };
        let mut header = vec![0x60 | (0b11 << 3) | (nh << 2) | hlim, (sam << 4) | dam];
        if self.hbh {
            header.push(0); // hop-by-hop options
        }
        if hop.forwarded {
            header.push(63);
        }
        let iid_bytes = if self.short { 2 } else { 8 };
        if hop.src_inline {
            header.extend_from_slice(&src[16 - iid_bytes..]);
        }
        if hop.dst_inline {
            header.extend_from_slice(&dst[16 - iid_bytes..]);
        }
        let rest: Vec<u8> = if self.hbh {
            // RFC 6553: next header UDP, length 0, option 0x63 of 4 B (flags, instance,
            // sender rank), then the UDP header and payload.
            // The O flag (down) on a datagram from the server; the rank a placeholder.
            let down = if d.up { 0 } else { 0x80 };
            let mut r = vec![17, 0, 0x63, 4, down, RPL_INSTANCE, 0x01, 0x00];
            r.extend_from_slice(&udp);
            r
        } else {
            header.push(0xf0);
            header.extend_from_slice(&udp[..4]);
            header.extend_from_slice(&udp[6..8]);
            udp[8..].to_vec()
        };
        let (model_header, replaced) = hop.header();
        debug_assert_eq!(header.len(), model_header as usize);
        let plan = Plan::new(d.ip_len, hop, mac::max_payload(self.short));
        let (k, n) = f.fragment.unwrap_or((0, 1));
        let size = d.ip_len as u16;
        let tag = (d.id & 0xffff) as u16;
        if n <= 1 {
            out.extend_from_slice(&header);
            out.extend_from_slice(&rest);
            return;
        }
        let first = plan.payload_bytes(0) as usize - header.len() - 4;
        if k == 0 {
            out.extend_from_slice(&(0xc000 | (size & 0x7ff)).to_be_bytes());
            out.extend_from_slice(&tag.to_be_bytes());
            out.extend_from_slice(&header);
            out.extend_from_slice(&rest[..first.min(rest.len())]);
            return;
        }
        let done: usize = first
            + (1..u32::from(k))
                .map(|j| plan.payload_bytes(j) as usize - 5)
                .sum::<usize>();
        let len = plan.payload_bytes(u32::from(k)) as usize - 5;
        out.extend_from_slice(&(0xe000 | (size & 0x7ff)).to_be_bytes());
        out.extend_from_slice(&tag.to_be_bytes());
        out.push(((replaced as usize + done) / 8) as u8);
        let end = (done + len).min(rest.len());
        out.extend_from_slice(&rest[done.min(end)..end]);
    }

    /// An RPL control frame's 6LoWPAN payload: IPHC and the ICMPv6 RPL message.
    fn control(&self, out: &mut Vec<u8>, f: &FrameRecord, c: Control) {
        let src = self.link_local(f.node);
        let mut dst = [0u8; 16];
        let mut icmp = vec![155, 0, 0, 0];
        match c {
            Control::Dio { rank, dtsn } => {
                // IPHC: TF elided, NH inline, hop limit 255, source from the MAC, ff02::1a.
                out.extend_from_slice(&[0x7b, 0x3b, 58, 0x1a]);
                dst[..2].copy_from_slice(&[0xff, 0x02]);
                dst[15] = 0x1a;
                icmp[1] = 1;
                icmp.extend_from_slice(&[RPL_INSTANCE, 240]);
                icmp.extend_from_slice(&rank.to_be_bytes());
                icmp.extend_from_slice(&[0x80 | (2 << 3), dtsn, 0, 0]);
                icmp.extend_from_slice(&dodag_id());
                // DODAG configuration (§6.7.6): Contiki 3.0's defaults, MRHOF (OCP 1).
                icmp.extend_from_slice(&[4, 14, 0, 8, 12, 10, 0x07, 0x00, 0x01, 0x00]);
                icmp.extend_from_slice(&[0x00, 0x01, 0, 0xff, 0xff, 0xff]);
                // Prefix information (§6.7.10): fd00::/64, autonomous.
                icmp.extend_from_slice(&[8, 30, 64, 0x40]);
                icmp.extend_from_slice(&[0xff; 8]);
                icmp.extend_from_slice(&[0; 4]);
                let mut prefix = [0u8; 16];
                prefix[0] = 0xfd;
                icmp.extend_from_slice(&prefix);
            }
            Control::Dis => {
                out.extend_from_slice(&[0x7b, 0x3b, 58, 0x1a]);
                dst[..2].copy_from_slice(&[0xff, 0x02]);
                dst[15] = 0x1a;
                icmp.extend_from_slice(&[0, 0]);
            }
            Control::Dao { target, no_path } => {
                // IPHC: hop limit 64, both link-local addresses from the MAC ones.
                out.extend_from_slice(&[0x7a, 0x33, 58]);
                dst = self.link_local(f.to.unwrap_or(0));
                icmp[1] = 2;
                icmp.extend_from_slice(&[RPL_INSTANCE, 0x40, 0, f.seq]);
                icmp.extend_from_slice(&dodag_id());
                icmp.extend_from_slice(&[5, 18, 0, 128]);
                icmp.extend_from_slice(&self.global(target));
                let lifetime = if no_path { 0 } else { 30 };
                icmp.extend_from_slice(&[6, 4, 0, 0, 0, lifetime]);
            }
        }
        let sum = checksum(&src, &dst, 58, &icmp);
        icmp[2..4].copy_from_slice(&sum.to_be_bytes());
        out.extend_from_slice(&icmp);
    }
}

/// The DODAG id: a fixed global address, fd00::1 (the capture does not name the root).
fn dodag_id() -> [u8; 16] {
    let mut a = [0u8; 16];
    a[0] = 0xfd;
    a[15] = 1;
    a
}

/// The 64-bit MAC address of node id `id` (big-endian, as displayed).
fn eui64(id: u16) -> [u8; 8] {
    let b = id.to_be_bytes();
    [0x00, 0x12, 0x4b, 0x00, 0x00, 0x00, b[0], b[1]]
}

/// The Internet checksum of an upper-layer packet over IPv6 (RFC 8200 §8.1).
fn checksum(src: &[u8; 16], dst: &[u8; 16], next: u8, data: &[u8]) -> u16 {
    let mut sum: u32 = 0;
    let mut add = |bytes: &[u8]| {
        for c in bytes.chunks(2) {
            let hi = u32::from(c[0]) << 8;
            let lo = c.get(1).copied().map_or(0, u32::from);
            sum += hi | lo;
        }
    };
    add(src);
    add(dst);
    add(&(data.len() as u32).to_be_bytes());
    add(&[0, 0, 0, next]);
    add(data);
    while sum > 0xffff {
        sum = (sum & 0xffff) + (sum >> 16);
    }
    !(sum as u16)
}

/// The 802.15.4 FCS: CRC-16 ITU-T, reflected, initial value 0 (CRC-16/KERMIT).
fn crc16_kermit(data: &[u8]) -> u16 {
    let mut crc: u16 = 0;
    for &b in data {
        crc ^= u16::from(b);
        for _ in 0..8 {
            crc = if crc & 1 != 0 {
                (crc >> 1) ^ 0x8408
            } else {
                crc >> 1
            };
        }
    }
    crc
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::scenario::Scenario;

    #[test]
    fn fcs_is_crc16_kermit() {
        assert_eq!(crc16_kermit(b"123456789"), 0x2189);
    }

    /// Every frame built has exactly the model's PSDU length, in each addressing and HBH case,
    /// fragmented datagrams and RPL's control frames included.
    #[test]
    fn frames_have_the_model_lengths() {
        for (short, hbh) in [(false, true), (false, false), (true, true), (true, false)] {
            let text = format!(
                r#"name = "m"
max_sim_time_s = 60
[topology]
kind = "mesh"
rows = 3
cols = 3
routing = "rpl"
[topology.params]
short_addresses = {short}
rpl_hbh_option = {hbh}
[[flows]]
count = 2
cc = "default"
exchanges = 4
payload_bytes = 200
"#
            );
            let spec = &Scenario::parse(&text, "t.toml").unwrap().expand(None, None)[0];
            let (_, trace) = crate::sim::run_traced(spec).unwrap();
            let crate::scenario::Topology::Mesh(mesh) = &spec.config.topology else {
                panic!("mesh");
            };
            let b = Builder::new(&trace.datagrams, &mesh.params);
            let mut fragmented = 0;
            let mut control = 0;
            for f in &trace.frames {
                let body = b.body(f);
                assert_eq!(
                    body.len() + 2,
                    usize::from(f.psdu_bytes),
                    "{short} {hbh} {f:?}"
                );
                assert_eq!(b.frame(f).len(), usize::from(f.psdu_bytes));
                if f.kind == FrameKind::Data {
                    // Every data frame names its datagram, MAC retries after it left included.
                    let p = f.packet.unwrap();
                    assert!(trace
                        .datagrams
                        .iter()
                        .any(|d| d.id == p && Some(d.tag) == f.tag));
                }
                fragmented += usize::from(f.fragment.is_some_and(|(_, n)| n > 1));
                control += usize::from(f.control.is_some());
            }
            assert!(fragmented > 0 && control > 0, "{short} {hbh}");
        }
    }
}
