//! The run loop on netsim's multi-hop 802.15.4 [`Mesh`] (`[topology] kind = "mesh"`): the
//! same endpoints and algorithms as on the star, another [`Network`].

use std::net::SocketAddr;

use coaplab_cc::time::Instant;
use coaplab_netsim::mesh::{Mesh, MeshConfig, MeshStats};
use coaplab_netsim::{Delivery, Direction};

use super::{Network, Sim};
use crate::results::{LinkRecord, NetworkRecord, RunError, RunResult};
use crate::scenario::RunSpec;

impl Network for Mesh {
    fn next_at(
        &mut self,
        local: Option<Instant>,
        _end: Instant,
    ) -> Result<Option<Instant>, RunError> {
        Ok([self.poll_at(), local].into_iter().flatten().min())
    }

    fn poll_delivery(&mut self, now: Instant, buf: &mut Vec<u8>) -> Option<Delivery> {
        Mesh::poll_delivery(self, now, buf)
    }

    fn send(
        &mut self,
        now: Instant,
        src: SocketAddr,
        dst: SocketAddr,
        bytes: &[u8],
        tag: u64,
    ) -> Result<(), String> {
        Mesh::send(self, now, src, dst, bytes, tag)
            .map(drop)
            .map_err(|e| e.to_string())
    }

    fn record(&mut self, now: Instant) -> Result<NetworkRecord, RunError> {
        Ok(NetworkRecord {
            down: link_record(self.stats(Direction::Down)),
            up: link_record(self.stats(Direction::Up)),
            sim_time_s: now.as_secs_f64(),
        })
    }
}

/// One direction of the mesh as the results' link columns: datagrams offered, refused by a full
/// MAC queue (`overflow_drops`), lost to the MAC or reassembly (`link_error_drops`) and
/// delivered (`sent_packets`); PSDU bytes and air time of every data frame sent (retries
/// included); the queue high water in frames × 127 B (the queue counts frames).
fn link_record(s: MeshStats) -> LinkRecord {
    LinkRecord {
        offered_packets: s.offered_packets,
        overflow_drops: s.queue_drops,
        link_error_drops: s.mac_drops + s.reassembly_drops,
        sent_packets: s.delivered_packets,
        sent_bytes: s.frame_bytes,
        busy_s: s.airtime.as_secs_f64(),
        queue_high_water_bytes: s.queue_high_water_frames
            * u64::from(coaplab_netsim::mesh::phy::MAX_PSDU_OCTETS),
    }
}

/// Simulates `spec` on the mesh `config`.
pub(super) fn run(spec: &RunSpec, config: &MeshConfig) -> Result<RunResult, RunError> {
    if spec.config.flows.iter().any(|f| f.is_tcp()) {
        return Err(RunError::NotAvailable(
            "CoAP over TCP on a mesh (issue 13)".to_string(),
        ));
    }
    let mut mesh = Mesh::new(config, spec.seed).map_err(|e| RunError::Setup(e.to_string()))?;
    if let Some(mobility) = &spec.config.mobility {
        // Trajectories over the whole run (its simulated-time cap), from the run's seed.
        mesh.set_mobility(mobility, spec.seed, spec.config.max_sim_time)
            .map_err(|e| RunError::Setup(e.to_string()))?;
    }
    let mut sim = Sim::with_network(spec, mesh)?;
    sim.run()?;
    sim.finish()
}
