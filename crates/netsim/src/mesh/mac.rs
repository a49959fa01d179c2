//! IEEE 802.15.4-2006 MAC frames (§7.2) and one node's MAC: a bounded FIFO of frames served
//! by [`Csma`] with acknowledged retransmission, over NullRDC (radio always on, Contiki
//! `core/net/mac/nullrdc.c`).
//!
//! Frame sizes, as Contiki 3.0's `framer-802154.c` builds data frames (PAN ID compression,
//! destination and source addresses of `LINKADDR_CONF_SIZE` octets):
//! * 64-bit addresses: FCF 2 + sequence 1 + destination PAN 2 + destination 8 + source 8 = 21 B
//!   of header (§7.2.1), FCS 2 B (§7.2.1.9): 23 B around the payload, so the payload of a
//!   127-B frame is at most 104 B (Contiki `MAC_MAX_PAYLOAD` 125 − `framer_hdrlen` 21).
//! * 16-bit addresses: 2 + 1 + 2 + 2 + 2 = 9 B header, 11 B around the payload.
//! * A broadcast frame (RPL's DIOs and DISs): the destination is the 2-byte short address
//!   0xFFFF whatever the address size, so 2 + 1 + 2 + 2 + 8 = 15 B of header with 64-bit
//!   source addresses ([`broadcast_psdu_bytes`]).
//! * An immediate ACK (§7.2.2.3): FCF 2 + sequence 1 + FCS 2 = 5 B.

use std::collections::VecDeque;

use coaplab_base::time::{Duration, Instant};

use super::contiki_csma::{ContikiParams, ContikiQueues, Discipline};
use super::csma::Csma;
use super::params::CsmaParams;
use super::phy::{self, MAX_PSDU_OCTETS};

/// FCS bytes (§7.2.1.9).
pub const FCS_BYTES: u32 = 2;
/// Immediate ACK PSDU bytes (§7.2.2.3).
pub const ACK_BYTES: u32 = 5;

/// `aMaxSIFSFrameSize` (§7.4.1 Table 85): frames up to 18 octets are followed by a SIFS, longer
/// ones by a LIFS.
pub const MAX_SIFS_FRAME_BYTES: u32 = 18;
/// `macMinSIFSPeriod` for the 2.4 GHz O-QPSK PHY (Table 86): 12 symbols = 192 µs.
pub const SIFS: Duration = phy::symbols(12);
/// `macMinLIFSPeriod` for the 2.4 GHz O-QPSK PHY (Table 86): 40 symbols = 640 µs.
pub const LIFS: Duration = phy::symbols(40);

/// The interframe space after a frame of `psdu_bytes` (IEEE 802.15.4-2006 §7.5.1.3): two
/// successive frames of a device, or an acknowledged frame's ACK and the device's next frame,
/// are at least this far apart.
pub const fn ifs(psdu_bytes: u32) -> Duration {
    if psdu_bytes <= MAX_SIFS_FRAME_BYTES {
        SIFS
    } else {
        LIFS
    }
}

/// PSDU of a broadcast frame with `payload` bytes: the destination is the 2-byte broadcast
/// short address 0xFFFF, the source 8 bytes with 64-bit addresses (2 with short ones).
pub const fn broadcast_psdu_bytes(payload: u32, short_addresses: bool) -> u32 {
    let src = if short_addresses { 2 } else { 8 };
    // FCF 2 + sequence 1 + PAN 2 + destination 2 + source, then payload and FCS 2.
    2 + 1 + 2 + 2 + src + payload + FCS_BYTES
}

/// MAC header bytes of a data frame with PAN ID compression.
pub const fn header_bytes(short_addresses: bool) -> u32 {
    if short_addresses {
        9
    } else {
        21
    }
}

/// The largest MAC payload: 127 − header − FCS (104 B with 64-bit addresses).
pub const fn max_payload(short_addresses: bool) -> u32 {
    MAX_PSDU_OCTETS - header_bytes(short_addresses) - FCS_BYTES
}

/// One data frame waiting in (or at the head of) a MAC queue.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Frame {
    /// The datagram's slot in the topology.
    pub slot: u32,
    /// The datagram's identity (slots are reused).
    pub datagram: u64,
    /// Fragment index.
    pub fragment: u16,
    /// Fragments of the datagram on this hop.
    pub fragments: u16,
    /// PSDU length in bytes (header + payload + FCS).
    pub psdu_bytes: u16,
    /// The MAC destination (next hop).
    pub to: u16,
    /// MAC sequence number.
    pub seq: u8,
    /// An RPL control message instead of a datagram's fragment (`slot` and `datagram` then
    /// unused); `to` is [`BROADCAST`] for a DIO.
    pub control: Option<Control>,
}

/// The broadcast destination (short address 0xFFFF): no ACK, no retries.
pub const BROADCAST: u16 = u16::MAX;

/// An RPL control message carried by one frame.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Control {
    /// A DIO advertising the sender's rank, and its DTSN (RFC 6550 §6.3.1).
    Dio {
        /// The sender's rank.
        rank: u16,
        /// Destination Advertisement Trigger Sequence Number.
        dtsn: u8,
    },
    /// A DODAG Information Solicitation (RFC 6550 §6.2), multicast.
    Dis,
    /// A storing-mode DAO for `target`.
    Dao {
        /// The node whose route this is.
        target: u16,
        /// A No-Path DAO (lifetime 0): withdraw the route.
        no_path: bool,
    },
}

/// Where a MAC is in its cycle for the head frame.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Phase {
    /// Nothing to send.
    Idle,
    /// Backing off; the CCA follows.
    Backoff,
    /// Sampling the channel since `cca_start`.
    Cca,
    /// RX→TX turnaround after an idle CCA.
    Turnaround,
    /// The head frame is on air.
    Transmitting,
    /// Waiting for the head frame's ACK.
    AwaitAck,
}

/// One node's MAC.
#[derive(Debug, Clone)]
pub struct Mac {
    /// Frames to send, the head being served.
    pub queue: VecDeque<Frame>,
    /// Bound of `queue`.
    pub capacity: usize,
    /// Which MAC this is.
    pub discipline: Discipline,
    /// CSMA/CA state of the head frame ([`Discipline::Ieee802154`]).
    pub csma: Csma,
    /// Contiki's neighbour queues (the Contiki disciplines); the frame being served is moved
    /// to the front of `queue` when its neighbour's turn comes.
    pub contiki: ContikiQueues,
    /// Where the head frame is.
    pub phase: Phase,
    /// Contiki: the head frame's ACK arrived during NullRDC's ACK wait.
    pub acked: bool,
    /// Generation of the pending MAC timer; a timer event of another generation is stale.
    pub generation: u32,
    /// Start of the CCA in progress.
    pub cca_start: Instant,
    /// The interframe space (§7.5.1.3) after this node's last frame, or after the ACK of it,
    /// ends here: no transmission of this node starts earlier.
    pub ifs_until: Instant,
    /// Next sequence number to assign.
    next_seq: u8,
}

impl Mac {
    /// An idle MAC whose queue holds `capacity` frames.
    pub fn new(
        discipline: Discipline,
        params: CsmaParams,
        contiki: ContikiParams,
        capacity: usize,
        first_seq: u8,
    ) -> Mac {
        Mac {
            queue: VecDeque::with_capacity(capacity),
            capacity,
            discipline,
            csma: Csma::new(params),
            contiki: ContikiQueues::new(contiki),
            phase: Phase::Idle,
            acked: false,
            generation: 0,
            cca_start: Instant::ZERO,
            ifs_until: Instant::ZERO,
            next_seq: first_seq,
        }
    }

    /// Room for `frames` more frames to `to` (Contiki's `csma.c` also needs a neighbour
    /// queue for `to`).
    pub fn has_room(&self, frames: usize, to: u16) -> bool {
        self.queue.len() + frames <= self.capacity && self.contiki.admits(to, self.discipline)
    }

    /// Appends `frame` at `now`, giving it the next sequence number.
    pub fn push(&mut self, mut frame: Frame, now: Instant) {
        frame.seq = self.next_seq;
        self.next_seq = self.next_seq.wrapping_add(1);
        if self.discipline != Discipline::Ieee802154 {
            self.contiki.queued(frame.to, now);
        }
        self.queue.push_back(frame);
    }

    /// Transmissions of the head frame so far, this one included.
    pub fn attempt(&self) -> u32 {
        match (self.discipline, self.queue.front()) {
            (Discipline::Ieee802154, _) | (_, None) => self.csma.retries() + 1,
            (_, Some(f)) => self.contiki.transmissions(f.to) + 1,
        }
    }

    /// Contiki: moves the first frame to `to` to the front of the queue (it is served next).
    // Inlined, the walk kept out of line: most often the head is that frame already (the
    // Ch. 6 grid run: 7.6 M instructions in 188,000 calls out of line, most of it the call).
    #[inline(always)]
    pub fn serve(&mut self, to: u16) {
        if !self.queue.front().is_some_and(|f| f.to == to) {
            self.bring_forward(to);
        }
    }

    /// [`Mac::serve`] when the head is another neighbour's frame: a walk over the queue.
    #[inline(never)]
    fn bring_forward(&mut self, to: u16) {
        if let Some(i) = self.queue.iter().position(|f| f.to == to) {
            if i > 0 {
                let f = self.queue.remove(i).expect("index from position");
                self.queue.push_front(f);
            }
        }
    }

    /// Contiki: frames to `to` still queued.
    pub fn has_frames_to(&self, to: u16) -> bool {
        self.queue.iter().any(|f| f.to == to)
    }

    /// The head frame is done at `at`, on air (and acknowledged, if it asked) or `dropped`:
    /// the MAC goes idle and takes it off the queue, a dropped data frame with the rest of its
    /// datagram. What comes next is the discipline's: the IEEE MAC's next frame waits an IFS
    /// after a sent one (§7.5.1.3, from the ACK's end, which is `at`); Contiki's neighbour
    /// queue goes on at once after a sent packet (NullRDC's `send_list`), a timebase later
    /// after one `csma.c` dropped (`free_packet`; nullmac has no queue timer).
    pub fn finish_head(&mut self, at: Instant, dropped: bool) -> Option<Frame> {
        self.bump();
        self.phase = Phase::Idle;
        let frame = self.queue.pop_front()?;
        let whole_datagram = dropped && frame.control.is_none();
        if self.discipline == Discipline::Ieee802154 {
            if whole_datagram {
                while self
                    .queue
                    .front()
                    .is_some_and(|f| f.datagram == frame.datagram)
                {
                    self.queue.pop_front();
                }
            } else if !dropped {
                self.ifs_until = at + ifs(u32::from(frame.psdu_bytes));
            }
            return Some(frame);
        }
        if whole_datagram {
            // Its other fragments may sit behind other neighbours' frames.
            self.queue.retain(|f| f.datagram != frame.datagram);
            let queue = &self.queue;
            self.contiki
                .free_empty(|to| to == frame.to || queue.iter().any(|f| f.to == to));
        }
        let more = self.has_frames_to(frame.to);
        let timer = dropped && self.discipline == Discipline::ContikiCsma;
        self.contiki.done(frame.to, at, more, timer);
        Some(frame)
    }

    /// How long the sender of a unicast frame waits after it before deciding on the ACK:
    /// `macAckWaitDuration`, or NullRDC's `ACK_WAIT_TIME` with the Contiki MACs.
    pub fn ack_wait(&self) -> Duration {
        match self.discipline {
            Discipline::Ieee802154 => self.csma.params().ack_wait,
            _ => self.contiki.params().ack_wait,
        }
    }

    /// From the end of a frame this MAC received to its ACK on air: `aTurnaroundTime` (the
    /// CC2420's hardware auto-ACK), or the Contiki radio's ACK delay.
    pub fn ack_delay(&self) -> Duration {
        match self.discipline {
            Discipline::Ieee802154 => phy::TURNAROUND,
            _ => self.contiki.params().ack_delay,
        }
    }

    /// Invalidates the pending timer and returns the new generation (and forgets an ACK).
    pub fn bump(&mut self) -> u32 {
        self.acked = false;
        self.generation = self.generation.wrapping_add(1);
        self.generation
    }
}
