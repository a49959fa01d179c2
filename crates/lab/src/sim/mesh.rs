//! The run loop on netsim's multi-hop 802.15.4 [`Mesh`] (`[topology] kind = "mesh"`): the
//! same endpoints and algorithms as on the star, another [`Network`].

use std::net::SocketAddr;

use coaplab_cc::time::Instant;
use coaplab_netsim::mesh::{ControlCounts, Mesh, MeshConfig, MeshStats, Routing};
use coaplab_netsim::{Delivery, Direction};

use super::{Network, Sim};
use crate::results::{ControlRecord, LinkRecord, NetworkRecord, RplRecord, RunError, RunResult};
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
            rpl: matches!(self.params().routing, Routing::Rpl { .. }).then(|| {
                let c = self.control_stats();
                RplRecord {
                    formed_after_s: c.formed_after.map(|d| d.as_secs_f64()),
                    warm_up_s: c.warm_up_time.as_secs_f64(),
                    warm_up: control_record(c.warm_up),
                    measured: control_record(c.measured()),
                    parent_switches: c.parent_switches,
                }
            }),
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
    let mesh = Mesh::new(config, spec.seed).map_err(|e| RunError::Setup(e.to_string()))?;
    let mut sim = Sim::with_network(spec, mesh)?;
    sim.run()?;
    sim.finish()
}
