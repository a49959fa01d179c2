//! The run loop on netsim's multi-hop 802.15.4 [`Mesh`] (`[topology] kind = "mesh"`): the
//! same endpoints and algorithms as on the star, another [`Topology`].

use std::net::SocketAddr;

use coaplab_cc::time::{earliest, Instant};
use coaplab_netsim::mesh::medium::MediumStats;
use coaplab_netsim::mesh::{ControlCounts, Mesh, MeshConfig, MeshStats, Routing};
use coaplab_netsim::{Delivery, Direction, DirectionStats, PacketId, SendError, Star, Topology};

use super::Sim;
use crate::results::{ControlRecord, MeshChannelRecord, RplRecord, RunError, RunResult};
use crate::scenario::RunSpec;
use crate::trace::RunTrace;

/// The mesh with what its counters held when the run started (after any RPL warm-up), so
/// that the run's records count the run only.
pub(super) struct MeshNet {
    mesh: Mesh,
    /// Medium counters at the run's start.
    medium_start: MediumStats,
    /// Control-frame MAC counters at the run's start.
    control_start: MeshStats,
    /// Internal events scheduled before the run started.
    events_start: u64,
    /// With `[topology] server = "off-mesh"`: the wired link between the border router
    /// (the star's client side) and the server, the star's own link model.
    wired: Option<Star>,
}

/// The mesh, and with an off-mesh server the wired link beyond its border router: a topology
/// composed of two, the border router forwarding between them.
impl Topology for MeshNet {
    fn send(
        &mut self,
        now: Instant,
        src: SocketAddr,
        dst: SocketAddr,
        payload: &mut Vec<u8>,
        tag: u64,
    ) -> Result<PacketId, SendError> {
        match &mut self.wired {
            Some(wired) if src == wired.server() => wired.send(now, src, dst, payload, tag),
            _ => self.mesh.send(now, src, dst, payload, tag),
        }
    }

    /// A segment onto the mesh (no TCP run has an off-mesh server: `super::dispatch`).
    fn send_tcp(
        &mut self,
        now: Instant,
        src: SocketAddr,
        dst: SocketAddr,
        bytes: &[u8],
        tcp_bytes: u32,
        tag: u64,
    ) -> Result<PacketId, SendError> {
        self.mesh.send_tcp(now, src, dst, bytes, tcp_bytes, tag)
    }

    fn poll_at(&self) -> Option<Instant> {
        let wired = self.wired.as_ref().and_then(Star::poll_at);
        earliest(self.mesh.poll_at(), wired)
    }

    // Inlined into both its callers, the UDP loop and the TCP loop's `TcpNet`: with a second
    // caller LLVM stopped inlining it into the UDP loop (+2.8 % instructions on
    // `rathod-ch4-half-dumbbell`, callgrind).
    #[inline(always)]
    fn poll_delivery(&mut self, now: Instant, buf: &mut Vec<u8>) -> Option<Delivery> {
        let Some(wired) = &mut self.wired else {
            return self.mesh.poll_delivery(now, buf);
        };
        // Mesh and wired link in time order (the mesh first on ties); the border router
        // forwards between them at once (a processing delay of 0).
        loop {
            let mesh_at = self.mesh.poll_at().filter(|&t| t <= now);
            let wired_at = wired.poll_at().filter(|&t| t <= now);
            let d = match (mesh_at, wired_at) {
                (None, None) => return None,
                (Some(m), w) if w.map_or(true, |w| m <= w) => {
                    match self.mesh.poll_delivery(w.unwrap_or(now).min(now), buf) {
                        Some(d) if d.dst == wired.server() => {
                            // At the border router: onto the wired link to the server (a
                            // datagram over the wired MTU is dropped there, as a router would).
                            let _ = wired.send(d.at, d.src, d.dst, buf, d.tag);
                            continue;
                        }
                        d => d,
                    }
                }
                _ => match wired.poll_delivery(wired_at.unwrap_or(now), buf) {
                    Some(d) if d.src == wired.server() => {
                        // At the border router: down the mesh to the client (an answer
                        // over the mesh's 1280-byte datagram limit is dropped there).
                        let _ = self.mesh.send(d.at, d.src, d.dst, buf, d.tag);
                        continue;
                    }
                    d => d,
                },
            };
            if d.is_some() {
                return d;
            }
        }
    }

    fn servers(&self) -> &[SocketAddr] {
        self.mesh.servers()
    }

    /// The mesh's counters (the wired link's are not recorded).
    fn direction_stats(&self, direction: Direction) -> DirectionStats {
        self.mesh.direction_stats(direction)
    }
}

impl MeshNet {
    /// The instant the run loop handles next, given `local` (the earliest endpoint timer or
    /// flow start) and the run's `end`: what [`Topology::poll_at`] and `local` give, without
    /// waking the loop at every internal event of the mesh in between. The mesh runs its
    /// MAC, radio and RPL events up to `local` (or `end`) itself and stops at the first
    /// delivery ([`Mesh::advance`]); the loop would only have polled it at those instants.
    /// Out of events before `end`, the loop's clock must still stop where it would have: at
    /// the last internal event before `end`, so that instant is returned once. With an
    /// off-mesh server, the mesh and wired link are interleaved by [`Topology::poll_at`].
    fn next_at(&mut self, local: Option<Instant>, end: Instant) -> Option<Instant> {
        if self.wired.is_some() {
            return earliest(self.poll_at(), local);
        }
        let before = self.mesh.clock();
        let horizon = local.map_or(end, |l| l.min(end));
        if let Some(at) = self.mesh.advance(horizon) {
            return Some(at);
        }
        match local {
            Some(l) if l <= end => Some(l),
            _ if self.mesh.clock() > before => Some(self.mesh.clock()),
            _ => earliest(self.mesh.poll_at(), local),
        }
    }

    /// `mesh` from now on, with the wired link to an off-mesh server if any.
    fn new(mesh: Mesh, wired: Option<Star>) -> MeshNet {
        MeshNet {
            medium_start: mesh.medium_stats(),
            control_start: mesh.control_stats().mac,
            events_start: mesh.events_scheduled(),
            wired,
            mesh,
        }
    }

    /// What the channel carried since the run started.
    fn channel_record(&self) -> MeshChannelRecord {
        let (up, down) = (
            self.mesh.stats(Direction::Up),
            self.mesh.stats(Direction::Down),
        );
        let medium = self.mesh.medium_stats();
        let control = self.mesh.control_stats().mac;
        let data_frames = up.frames_sent + down.frames_sent;
        // Without ACK requests (`mac_ack_request = false`) a frame counts as "acked" when its
        // addressee decoded it: `frames_lost` counts the others (0 with ACKs).
        let not_acked = up.retries
            + up.no_ack_failures
            + up.frames_lost
            + down.retries
            + down.no_ack_failures
            + down.frames_lost;
        let control_frames = control.frames_sent - self.control_start.frames_sent;
        let frames_on_air = medium.transmissions - self.medium_start.transmissions;
        MeshChannelRecord {
            frames_on_air,
            data_frames,
            data_frames_acked: data_frames.saturating_sub(not_acked),
            ack_frames: frames_on_air.saturating_sub(data_frames + control_frames),
            control_frames,
            channel_access_failures: up.channel_access_failures + down.channel_access_failures,
            collisions: medium.collisions - self.medium_start.collisions,
        }
    }

    /// RPL's control traffic, with routes by RPL; `None` with static routes.
    fn rpl_record(&self) -> Option<RplRecord> {
        matches!(self.mesh.params().routing, Routing::Rpl { .. }).then(|| {
            let c = self.mesh.control_stats();
            RplRecord {
                formed_after_s: c.formed_after.map(|d| d.as_secs_f64()),
                warm_up_s: c.warm_up_time.as_secs_f64(),
                warm_up: control_record(c.warm_up),
                measured: control_record(c.measured()),
                parent_switches: c.parent_switches,
            }
        })
    }
}

fn control_record(c: ControlCounts) -> ControlRecord {
    ControlRecord {
        dio_frames: c.dio_frames,
        dio_bytes: c.dio_bytes,
        dis_frames: c.dis_frames,
        dis_bytes: c.dis_bytes,
        dao_frames: c.dao_frames,
        dao_bytes: c.dao_bytes,
    }
}

/// Simulates `spec` on the mesh `config`. The run's `events` count the loop's events and the
/// mesh's internal ones (MAC timers, radio starts and ends), the work a mesh run does.
pub(super) fn run(spec: &RunSpec, config: &MeshConfig) -> Result<RunResult, RunError> {
    Ok(run_with(spec, config, false)?.0)
}

/// [`run`], keeping the trace ([`super::run_traced`]): the clients' endpoint events with their
/// algorithm's snapshots, and every frame on air after the warm-up. The result is
/// [`run`]'s, byte for byte (recording draws nothing from the run's random streams).
pub(super) fn run_traced(
    spec: &RunSpec,
    config: &MeshConfig,
) -> Result<(RunResult, RunTrace), RunError> {
    let (result, trace) = run_with(spec, config, true)?;
    Ok((result, trace.unwrap_or_default()))
}

/// The mesh of `spec`, its nodes moving if it says so, with the wired link to an off-mesh
/// server if any; logging every frame on air when `frames`.
pub(super) fn network(
    spec: &RunSpec,
    config: &MeshConfig,
    frames: bool,
) -> Result<MeshNet, RunError> {
    let mut mesh = Mesh::new(config, spec.seed).map_err(|e| RunError::Setup(e.to_string()))?;
    if let Some(mobility) = &spec.config.mobility {
        // Trajectories over the whole run (its simulated-time cap), from the run's seed.
        mesh.set_mobility(mobility, spec.seed, spec.config.max_sim_time)
            .map_err(|e| RunError::Setup(e.to_string()))?;
    }
    mesh.record_frames(frames);
    let wired = config
        .params
        .off_mesh_server
        .then(|| Star::new(&spec.config.network, spec.seed))
        .transpose()
        .map_err(|e| RunError::Setup(e.to_string()))?;
    Ok(MeshNet::new(mesh, wired))
}

impl MeshNet {
    /// Adds what the mesh counted to the `result` of a run on it that another loop drove (the
    /// TCP loop, `super::tcp::run_on_mesh`): its channel and RPL records and, with
    /// `count_events`, its internal events.
    pub(super) fn add_records(&self, result: &mut RunResult, count_events: bool) {
        if let Some(network) = result.network.as_mut() {
            network.mesh = Some(self.channel_record());
            network.rpl = self.rpl_record();
        }
        if count_events {
            result.events += self.mesh.events_scheduled() - self.events_start;
        }
    }
}

fn run_with(
    spec: &RunSpec,
    config: &MeshConfig,
    traced: bool,
) -> Result<(RunResult, Option<RunTrace>), RunError> {
    // CoAP-over-UDP flows come here (`super::dispatch`), TCP ones to `super::tcp::run_on_mesh`.
    let net = network(spec, config, traced)?;
    let mut sim = Sim::assemble(spec, net, traced)?;
    if traced {
        sim.trace = Some(Box::default());
    }
    sim.run_with(|net, local, end| Ok(net.next_at(local, end)))?;
    let mut result = sim.finish();
    if let Some(network) = result.network.as_mut() {
        network.mesh = Some(sim.net.channel_record());
        network.rpl = sim.net.rpl_record();
    }
    result.events += sim.net.mesh.events_scheduled() - sim.net.events_start;
    for (record, client) in result.flows.iter_mut().zip(&sim.clients) {
        if let Some(m) = record.mesh.as_deref_mut() {
            // An off-mesh server is on no node.
            m.server_node = (sim.net.wired.is_none())
                .then(|| sim.net.mesh.node_of(client.info.server).map(u32::from))
                .flatten();
        }
    }
    let trace = sim.trace.take().map(|mut t| {
        t.frames = sim.net.mesh.take_frames();
        t.datagrams = sim.net.mesh.take_datagrams();
        *t
    });
    Ok((result, trace))
}

#[cfg(test)]
mod off_mesh_tests;
