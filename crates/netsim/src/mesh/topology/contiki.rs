//! Contiki 3.0's MACs on the mesh's channel ([`Discipline::ContikiCsma`],
//! [`Discipline::ContikiNullmac`]): when each neighbour queue is served, and what a busy channel
//! or a missing ACK does. The rules and their sources are in [`crate::mesh::contiki_csma`]; the
//! channel, CCA, transmission and ACK are the same as for the IEEE 802.15.4 MAC.

use coaplab_cc::time::Instant;

use super::{Ev, Mesh};
use crate::mesh::contiki_csma::Discipline;
use crate::mesh::csma::{Failure, Next};
use crate::mesh::mac::Phase;
use crate::mesh::phy;

impl Mesh {
    /// Schedules the next attempt of an idle (or waiting) Contiki MAC: when the earliest
    /// neighbour queue's timer fires, not before the interframe space after the last frame.
    /// A packet for a new neighbour is due at once, so a waiting MAC is rescheduled.
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

    /// The CCA before the head frame (NullRDC's `receiving_packet`, the radio's
    /// `channel_clear`) ended at `at`. Busy: `csma.c` backs the neighbour queue off
    /// (`MAC_TX_COLLISION`, not counted), `nullmac.c` gives the packet up.
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
