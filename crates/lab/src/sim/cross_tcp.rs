//! CoAP over UDP beside CoAP-over-TCP flows on one star (issue 36, "competing with TCP"): the
//! run of a scenario whose first flow groups are CoAP over UDP (any registry algorithm) and
//! whose last are CoAP over TCP (`cc = "tcp-newreno"` or `"tcp-bbr"`), typically one long
//! download (`workload = "long-transfer"`). The TCP segments and the CoAP datagrams share the
//! star's FIFOs: the download's queue is the CoAP flows' queue.
//!
//! The TCP flows live inside a network: [`WithTcp`] wraps netsim's [`Star`] and is itself a
//! [`Topology`], so the CoAP-over-UDP run loop (`Sim`) runs on it unchanged. The wrapper
//! carries its TCP flows' segments through the star (`Star::send_ip`, for a segment's IP
//! length) and hands every other delivery to the loop. Its [`Topology::poll_at`] includes the
//! TCP timers; at each instant it takes in its own deliveries as they arrive, then fires its
//! due timers once the star has nothing more for that instant (deliveries before timers, as in
//! the TCP loop). A TCP packet is told apart by its tag: it names a flow past the CoAP-over-UDP
//! ones ([`super::tag::from_client`] of the TCP flow's index), which no UDP packet does.
//!
//! The TCP flows are the CoAP-over-TCP loop's own ([`TcpSim`], `super::tcp`): the wrapper
//! hands it each TCP delivery ([`TcpSim::deliver`]) and its due deadlines
//! ([`TcpSim::fire`]), so a TCP flow here is that loop's, call for call: one connection of
//! netsim's TCP model with an RFC 8323 session at each end, the same random streams, start
//! instant, requests and measurements (docs/experiments.md §5, §7). Its packets are tagged with
//! their flow ([`Tags::PerFlow`]). With no UDP flow beside it, a TCP flow's record is the pure
//! TCP run's, field for field (tested below). Short-lived clients on fresh connections
//! (`workload = "random"`) are not carried here: refused by `super::dispatch`.
//!
//! Flows are numbered group by group as in every run (results, `under_test` of suites): the
//! UDP flows first, then the TCP flows, whose client addresses and random streams are named by
//! that index. The run ends when every flow of both kinds is done, or at `max_sim_time_s`
//! (an unfinished flow is censored there). runs.csv's `events` adds the TCP flows' deliveries
//! and timer expiries to the UDP loop's.

use std::net::SocketAddr;

use coaplab_cc::time::{earliest, Instant};
use coaplab_netsim::{
    Delivery, Direction, DirectionStats, PacketId, PacketRecord, SendError, Star, Topology,
};

use super::tcp::{Tags, TcpNet, TcpSim};
use super::tcp_coap::CoapApp;
use super::{tag, Sim};
use crate::results::{RunError, RunResult};
use crate::scenario::{RunSpec, Transport};
use crate::trace::RunTrace;

/// Runs `spec`: its CoAP-over-UDP groups (the first ones) in the UDP loop, on a star that
/// carries its CoAP-over-TCP groups (the rest) as well.
pub(super) fn run(spec: &RunSpec) -> Result<RunResult, RunError> {
    let mut sim = simulate(spec, false)?;
    finish(&mut sim)
}

/// [`run`] (the same result), keeping the trace: the UDP clients' events with their
/// algorithms' snapshots, every packet sent (datagrams and segments, in send order), the TCP
/// connections' state after every ACK, and the star's per-packet records.
pub(super) fn run_traced(spec: &RunSpec) -> Result<(RunResult, RunTrace), RunError> {
    let mut sim = simulate(spec, true)?;
    let result = finish(&mut sim)?;
    let mut trace = sim.trace.take().map(|t| *t).unwrap_or_default();
    let tcp = &mut sim.net.tcp;
    if let Some(tcp_trace) = tcp.trace.take() {
        let udp = std::mem::take(&mut trace.packets);
        trace.packets = udp.interleave(tcp_trace.packets, &tcp.sent_ids);
        trace.tcp = tcp_trace.tcp;
    }
    // The star's packets: no TCP flow acts after the run.
    trace.records = super::drain_records(&mut tcp.net);
    Ok((result, trace))
}

/// The run of `spec` (`traced`: the UDP loop and the wrapper keep their traces).
fn simulate(spec: &RunSpec, traced: bool) -> Result<Sim<WithTcp>, RunError> {
    let groups = &spec.config.flows;
    let udp_groups = groups
        .iter()
        .position(|f| !matches!(f.transport, Transport::Udp { .. }))
        .unwrap_or(groups.len());
    let mut udp = spec.clone();
    udp.config.flows.truncate(udp_groups);
    let mut net = WithTcp::new(spec, udp_groups, traced)?;
    if traced {
        net.record_packets(true);
    }
    let mut sim = Sim::assemble(&udp, net, traced)?;
    if traced {
        sim.trace = Some(Box::default());
    }
    sim.net_busy = WithTcp::busy;
    sim.run()?;
    Ok(sim)
}

/// The run's result: the UDP loop's, then the TCP flows' records.
fn finish(sim: &mut Sim<WithTcp>) -> Result<RunResult, RunError> {
    if let Some(e) = sim.net.error.take() {
        return Err(e);
    }
    let mut result = sim.finish();
    result.events += sim.net.tcp.events;
    result.flows.extend(sim.net.tcp.records());
    Ok(result)
}

/// The star with CoAP-over-TCP flows inside: a [`Topology`] whose deliveries are the UDP
/// packets only (see the [module documentation](self)).
pub(super) struct WithTcp {
    /// The TCP flows, on the star ([`TcpNet::Star`]).
    tcp: TcpSim<TcpNet, CoapApp>,
    /// The flow index of the first TCP flow (the number of UDP flows): packets tagged with a
    /// flow from here on are the TCP flows'.
    first: u32,
    /// The first error of a TCP flow (a session or a send refused): the run's error.
    error: Option<RunError>,
}

impl WithTcp {
    /// The star of `spec` carrying the TCP flows of its groups from `first_group` on
    /// (`traced`: they keep their trace).
    fn new(spec: &RunSpec, first_group: usize, traced: bool) -> Result<WithTcp, RunError> {
        let config = &spec.config;
        let star =
            Star::new(&config.network, spec.seed).map_err(|e| RunError::Setup(e.to_string()))?;
        let first: u32 = config.flows[..first_group].iter().map(|f| f.count).sum();
        let tcp = TcpSim::assemble(spec, TcpNet::Star(star), first_group, Tags::PerFlow, traced)?;
        Ok(WithTcp {
            tcp,
            first,
            error: None,
        })
    }

    /// Whether a TCP flow is still running (the UDP loop goes on while one is).
    fn busy(&self) -> bool {
        self.tcp.unfinished > 0
    }
}

impl Topology for WithTcp {
    /// A UDP packet of the loop, straight into the star.
    fn send(
        &mut self,
        now: Instant,
        src: SocketAddr,
        dst: SocketAddr,
        payload: &mut Vec<u8>,
        tag: u64,
    ) -> Result<PacketId, SendError> {
        self.tcp.net.send(now, src, dst, payload, tag)
    }

    /// The star's next event or a TCP flow's deadline.
    fn poll_at(&self) -> Option<Instant> {
        earliest(self.tcp.net.poll_at(), self.tcp.next_deadline())
    }

    /// The next UDP packet arriving by `now`; the TCP segments arriving before it are taken
    /// in on the way, and once the star has nothing more by `now` the TCP deadlines due fire.
    fn poll_delivery(&mut self, now: Instant, buf: &mut Vec<u8>) -> Option<Delivery> {
        self.tcp.now = now;
        while let Some(d) = self.tcp.net.poll_delivery(now, buf) {
            if tag::flow(d.tag) < self.first {
                return Some(d);
            }
            self.tcp.events += 1;
            if let Err(e) = self.tcp.deliver(&d, buf) {
                self.error.get_or_insert(e);
            }
        }
        if let Err(e) = self.tcp.fire(now) {
            self.error.get_or_insert(e);
        }
        None
    }

    fn servers(&self) -> &[SocketAddr] {
        self.tcp.net.servers()
    }

    fn direction_stats(&self, direction: Direction) -> DirectionStats {
        self.tcp.net.direction_stats(direction)
    }

    fn record_packets(&mut self, on: bool) {
        self.tcp.net.record_packets(on);
    }

    fn take_records(&mut self) -> Vec<PacketRecord> {
        self.tcp.net.take_records()
    }
}

#[cfg(test)]
#[path = "cross_tcp_tests.rs"]
mod tests;
