//! Traces of chosen runs (`coaplab run --trace DIR`): per-flow event timelines, the
//! bottleneck queue over time, TCP state per ACK, and a pcap per link.
//!
//! A traced run is the same simulation as an untraced one — same seed, same results — with
//! sinks attached: the client endpoints emit their algorithm's [`Event::Snapshot`]s, the
//! star keeps its per-packet ground-truth log ([`coaplab_netsim::PacketRecord`]), and a
//! [`RunTrace`] keeps every endpoint event and every sent packet's bytes. Nothing of this
//! exists in an untraced run: the run loop only tests an `Option` that is `None`.
//!
//! Files per traced run, in `DIR/runNNNNNN/` (run id zero-padded to six digits):
//!
//! * `events.parquet` ([`events`]): transmissions, timer expiries with the armed value,
//!   CoAP RTT samples, failures, and the algorithm's RTO and state after every exchange
//!   (CoAP over UDP; a CoAP over TCP run's table has no rows).
//! * `queue.parquet` ([`queue`]): every change of each bottleneck FIFO (enqueue, dequeue,
//!   drop by cause) with the occupancy after it.
//! * `tcp.parquet` ([`tcp`], CoAP over TCP runs only): cwnd, ssthresh, RTO and SRTT of the
//!   receiving end after every segment carrying an ACK.
//! * `link-up.pcap`, `link-down.pcap` ([`pcap`]): every packet offered to that bottleneck
//!   direction as IPv4 (`LINKTYPE_RAW`), stamped with the instant it reached the FIFO.
//!
//! A mesh run (`[topology] kind = "mesh"`) has no bottleneck FIFO: it writes `events.parquet`
//! (the same CoAP-level rows), `frames.parquet` ([`frames`]: every 802.15.4 frame on air,
//! per hop) and `mesh.pcapng` ([`meshpcap`]: those frames as 802.15.4 frames carrying 6LoWPAN,
//! UDP and CoAP or RPL's ICMPv6), and no queue table or IP pcap.
//!
//! With `--trace-format csv` the tables are `.csv` files with the same columns.
//! docs/scenarios.md ("Traces") lists every column.
//!
//! [`Event::Snapshot`]: coaplab_endpoint::Event::Snapshot

pub mod events;
pub mod frames;
pub mod meshpcap;
pub mod pcap;
pub mod queue;
pub mod table;
pub mod tcp;

#[cfg(test)]
mod tests;

use std::path::{Path, PathBuf};

use coaplab_endpoint::Event;
use coaplab_netsim::PacketRecord;

use crate::results::RunError;
use crate::scenario::RunSpec;

pub use crate::scenario::{BadRunSelection, BadTraceFormat, RunSelection, TraceFormat};

/// What `coaplab run --trace` asked for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TraceOptions {
    /// The directory the run directories are written into.
    pub dir: PathBuf,
    /// The runs traced.
    pub runs: RunSelection,
    /// Parquet or CSV tables.
    pub format: TraceFormat,
}

impl TraceOptions {
    /// Runs `spec` with `run_fn`, or with `traced_fn` ([`crate::sim::run_traced`]) when the
    /// selection includes it. A traced run's result is the untraced one's, byte for byte.
    /// The traced function is an argument, not called from here, so that this module, which
    /// `sim` fills, does not also import `sim` (scripts/check-cycles.py).
    pub fn run(
        &self,
        spec: &RunSpec,
        run_fn: crate::exec::RunFn,
        traced_fn: TracedRunFn,
    ) -> Result<crate::results::RunResult, RunError> {
        if !self.runs.contains(spec.run, spec.replication) {
            return run_fn(spec);
        }
        let (result, trace) = traced_fn(spec)?;
        let dir = self.dir.join(format!("run{:06}", spec.run));
        trace
            .write(&dir, spec, self.format)
            .map_err(|e| RunError::Setup(format!("trace {}: {e}", dir.display())))?;
        Ok(result)
    }
}

/// A run that also keeps its trace ([`crate::sim::run_traced`]).
pub type TracedRunFn = fn(&RunSpec) -> Result<(crate::results::RunResult, RunTrace), RunError>;

/// What one traced run kept; written by [`RunTrace::write`].
#[derive(Debug, Default)]
pub struct RunTrace {
    /// Endpoint events of the clients.
    pub(crate) events: events::EventLog,
    /// Every sent packet's header fields and payload, by packet id.
    pub(crate) packets: pcap::PacketLog,
    /// TCP state after every ACK (CoAP over TCP runs).
    pub(crate) tcp: tcp::TcpLog,
    /// The star's per-packet records, every packet followed to its fate.
    pub(crate) records: Vec<PacketRecord>,
    /// A mesh run's frames on air (empty on the star).
    pub(crate) frames: Vec<coaplab_netsim::mesh::FrameRecord>,
    /// A mesh run's datagrams, what its data frames carry (empty on the star).
    pub(crate) datagrams: Vec<coaplab_netsim::mesh::DatagramRecord>,
}

impl RunTrace {
    /// Keeps client `flow`'s endpoint event.
    pub(crate) fn event(&mut self, flow: u32, event: &Event) {
        self.events.push(flow, event);
    }

    /// Writes the run's files into `dir` (created; files replaced).
    pub fn write(&self, dir: &Path, spec: &RunSpec, format: TraceFormat) -> std::io::Result<()> {
        std::fs::create_dir_all(dir)?;
        table::write(&dir.join("events"), &self.events.batch(), format)?;
        if spec.config.is_mesh() {
            table::write(&dir.join("frames"), &frames::batch(&self.frames), format)?;
            if let crate::scenario::Topology::Mesh(mesh) = &spec.config.topology {
                meshpcap::write(dir, &self.frames, &self.datagrams, &mesh.params)?;
            }
            return Ok(());
        }
        let network = &spec.config.network;
        let queue = queue::batch(&self.records, &self.packets, [&network.up, &network.down]);
        table::write(&dir.join("queue"), &queue, format)?;
        if !self.tcp.is_empty() {
            table::write(&dir.join("tcp"), &self.tcp.batch(), format)?;
        }
        pcap::write_links(dir, &self.records, &self.packets)
    }
}
