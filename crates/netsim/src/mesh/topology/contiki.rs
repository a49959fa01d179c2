//! Contiki 3.0's MACs on the mesh's channel ([`Discipline::ContikiCsma`],
//! [`Discipline::ContikiNullmac`]): when each neighbour queue is served, and what a busy channel
//! or a missing ACK does. The rules and their sources are in [`crate::mesh::contiki_csma`]; the
//! channel, CCA, transmission and ACK are the same as for the IEEE 802.15.4 MAC.

use coaplab_base::time::{Duration, Instant};

use super::{Ev, Mesh};
use crate::mesh::contiki_csma::Discipline;
use crate::mesh::csma::{Failure, Next};
use crate::mesh::mac::Phase;
use crate::mesh::phy;

impl Mesh {
    /// Schedules the next attempt of an idle (or waiting) Contiki MAC: when the earliest
    /// neighbour queue's timer fires, not before the interframe space after the last frame.
    /// A packet for a new neighbour is due at once, so a waiting MAC is rescheduled.
    // Always inlined: it runs after every frame and every busy CCA, and out of line its
    // register saves and restores were a fifth of its 20 M instructions on the Ch. 6 grid run
    // (docs/mesh-model.md, "Simulation cost").
    #[inline(always)]
    pub(super) fn contiki_kick(&mut self, node: u16, now: Instant) {
        let m = &mut self.macs[node as usize];
        if !matches!(m.phase, Phase::Idle | Phase::Backoff) || m.queue.is_empty() {
            return;
        }
        let Some(next) = m.contiki.next_due() else {
            return;
        };
        let at = now.max(next.due).max(m.ifs_until);
        let gen = m.bump();
        m.phase = Phase::Backoff;
        self.events.schedule(at, Ev::BackoffEnd { node, gen });
    }

    /// The neighbour queue whose timer fired is served at `at`: with ACKs, NullRDC's
    /// `send_one_packet` first refuses to send while the radio is receiving a frame
    /// (`receiving_packet()`, which a neighbour at the edge of the range does not make busy
    /// for the CCA); then the radio's send takes `contiki_tx_delay_us` until the frame is on
    /// air, its CCA (`channel_clear`) in the CCA window before the last turnaround.
    // Always inlined (into `Mesh::handle`, its one caller), as are `contiki_ack_wait_over`
    // and `contiki_cca_done`: out of line, their register saves and restores ran at every
    // data frame's backoff end, CCA and ACK wait (docs/mesh-model.md, "Simulation cost").
    #[inline(always)]
    pub(super) fn contiki_attempt(&mut self, node: u16, at: Instant) {
        let m = &mut self.macs[node as usize];
        if let Some(n) = m.contiki.next_due() {
            m.serve(n.to);
        }
        if self.params.mac_ack_request && self.medium.is_receiving(node) {
            return self.contiki_cca_done(node, at, true);
        }
        let delay = self.params.contiki.tx_delay.max(phy::CCA + phy::TURNAROUND);
        let m = &mut self.macs[node as usize];
        m.phase = Phase::Cca;
        m.cca_start = at + delay - (phy::CCA + phy::TURNAROUND);
        let gen = m.generation;
        self.events
            .schedule(m.cca_start + phy::CCA, Ev::CcaEnd { node, gen });
    }

    /// The CCA before the head frame (the radio's `channel_clear`) ended at `at`. Busy:
    /// `csma.c` backs the neighbour queue off (`MAC_TX_COLLISION`, not counted), `nullmac.c`
    /// gives the packet up.
    #[inline(always)]
    pub(super) fn contiki_cca_done(&mut self, node: u16, at: Instant, busy: bool) {
        if !busy {
            return self.csma_next(node, at, Next::Transmit(at + phy::TURNAROUND));
        }
        let m = &mut self.macs[node as usize];
        let Some(to) = m.queue.front().map(|f| f.to) else {
            return;
        };
        if m.discipline == Discipline::ContikiNullmac {
            return self.csma_next(node, at, Next::Fail(Failure::ChannelAccess));
        }
        m.contiki
            .collision(to, at, &mut self.mac_rngs[node as usize]);
        m.bump();
        m.phase = Phase::Idle;
        self.contiki_kick(node, at);
    }

    /// NullRDC's `ACK_WAIT_TIME` after the head frame is over (`send_one_packet`): anything
    /// on the radio (an ACK received or arriving, another frame, energy) is waited for another
    /// `AFTER_ACK_DETECTED_WAIT_TIME` and then read; nothing is `MAC_TX_NOACK`.
    #[inline(always)]
    pub(super) fn contiki_ack_wait_over(&mut self, node: u16, at: Instant) {
        let m = &self.macs[node as usize];
        let detected = m.acked || self.medium.is_receiving(node) || self.medium.cca_busy(node, at);
        if !detected {
            return self.contiki_no_ack(node, at);
        }
        let after = self.params.contiki.after_ack_wait;
        if after == Duration::ZERO {
            return self.contiki_ack_read(node, at);
        }
        let gen = m.generation;
        self.events.schedule(at + after, Ev::AckRead { node, gen });
    }

    /// NullRDC reads the radio: our ACK is `MAC_TX_OK`; anything else is `MAC_TX_COLLISION`
    /// ("not an ack or ack not for us"), backed off without counting.
    pub(super) fn contiki_ack_read(&mut self, node: u16, at: Instant) {
        if self.macs[node as usize].acked {
            return self.head_sent(node, at);
        }
        self.contiki_cca_done(node, at, true);
    }

    /// The head frame's ACK did not come (`MAC_TX_NOACK`): `csma.c` retries after a backoff
    /// until `mac_max_transmissions`, `nullmac.c` never.
    pub(super) fn contiki_no_ack(&mut self, node: u16, at: Instant) {
        let m = &mut self.macs[node as usize];
        let Some(to) = m.queue.front().map(|f| f.to) else {
            return;
        };
        let retry = m.discipline == Discipline::ContikiCsma
            && m.contiki.no_ack(to, at, &mut self.mac_rngs[node as usize]);
        if !retry {
            return self.csma_next(node, at, Next::Fail(Failure::NoAck));
        }
        m.bump();
        m.phase = Phase::Idle;
        self.head_stats(node).retries += 1;
        self.contiki_kick(node, at);
    }
}
