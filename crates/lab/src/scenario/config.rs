//! The concrete configuration of one run: what a scenario says once every sweep axis has a
//! value. Plain data; the network part is netsim's [`NetworkConfig`] itself (the link model and
//! its presets exist once, in netsim), the rest the runner turns into endpoint objects.

use coaplab_cc::params::Settings;
use coaplab_cc::time::Duration;
use coaplab_endpoint::ServerDuplicates;
use coaplab_netsim::{NetworkConfig, Preset};

use super::Transport;

/// Everything one run needs besides its seed.
#[derive(Debug, Clone, PartialEq)]
pub struct RunConfig {
    /// The shared star network, in netsim's own terms: the preset's values with the
    /// scenario's overrides applied (the same loss model on both directions).
    pub network: NetworkConfig,
    /// The preset `network` started from (`nbiot`, `zigbee`), for results.
    pub preset: Preset,
    /// The label of the loss setting for results: the profile name (`none`, `medium`, ...)
    /// or the loss table as written on one line.
    pub loss_label: String,
    /// Protocol settings shared by every endpoint.
    pub protocol: ProtocolConfig,
    /// The flow groups, one per `[[flows]]` table, in file order.
    pub flows: Vec<FlowConfig>,
    /// `max_sim_time_s`: the simulated-time safety cap (docs/experiments.md §8: 6 h).
    pub max_sim_time: Duration,
    /// `[output] timers`: keep every expired CoAP retransmission timer for `timers.csv`.
    pub timers: bool,
    /// `[output] intervals` (default: on for a mesh): write `intervals.csv`, each flow's
    /// delivered payload per 50-ms interval.
    pub intervals: bool,
    /// `[output] exchanges` (default off): write `exchanges.csv`, one row per ended exchange.
    pub exchanges: bool,
    /// `[topology]`: the star (default; `network` describes it) or a mesh.
    pub topology: Topology,
    /// `[mobility]`: how mesh nodes move (`None`: they stay put).
    pub mobility: Option<coaplab_netsim::mesh::mobility::MobilityConfig>,
}

/// Which topology a run uses.
#[derive(Debug, Clone, PartialEq, Default)]
pub enum Topology {
    /// The star of docs/experiments.md §1.1 with the `[network]` bottleneck.
    #[default]
    Star,
    /// A multi-hop 802.15.4 mesh (`[topology] kind = "mesh"`).
    Mesh(Box<coaplab_netsim::mesh::MeshConfig>),
}

impl Topology {
    /// The largest TCP MSS of a run on this topology, whose star link has `network_mtu_bytes`:
    /// on the star the MTU − 40 (IPv4 20 + TCP 20, the TCP model's headers); on a mesh the
    /// largest segment one IPv6 datagram of 6LoWPAN's 1280 bytes carries (RFC 4944 §4): 1280
    /// − IPv6 40 − RPL's hop-by-hop option 8 when it is on − TCP 20.
    pub fn max_tcp_mss_bytes(&self, network_mtu_bytes: u32) -> u32 {
        use coaplab_netsim::mesh::sixlowpan;
        use coaplab_netsim::tcp::{HEADER_BYTES, TCP_HEADER_BYTES};
        match self {
            Topology::Star => network_mtu_bytes.saturating_sub(HEADER_BYTES),
            Topology::Mesh(mesh) => {
                let hbh = if mesh.params.rpl_hbh_option {
                    sixlowpan::RPL_HBH_BYTES
                } else {
                    0
                };
                sixlowpan::MAX_DATAGRAM_BYTES
                    - sixlowpan::IPV6_HEADER_BYTES
                    - hbh
                    - TCP_HEADER_BYTES
            }
        }
    }
}

impl RunConfig {
    /// Whether the run keeps the multi-hop experiments' metrics ([`crate::mesh_metrics`]):
    /// mesh runs, and any run that writes `intervals.csv` or `exchanges.csv`.
    pub fn mesh_metrics(&self) -> bool {
        self.is_mesh() || self.intervals || self.exchanges
    }

    /// Whether the run is on a mesh (`flows.csv` then has the mesh columns).
    pub fn is_mesh(&self) -> bool {
        matches!(self.topology, Topology::Mesh(_))
    }

    /// The total number of flows (clients) in the run.
    pub fn total_flows(&self) -> u32 {
        self.flows.iter().map(|f| f.count).sum()
    }

    /// Whether a flow group observes (`workload = "observe"`): `flows.csv` then has the
    /// notification columns.
    pub fn has_observe(&self) -> bool {
        self.flows
            .iter()
            .any(|f| matches!(f.workload, Workload::Observe { .. }))
    }
}

/// Protocol settings shared by all endpoints.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProtocolConfig {
    /// RFC 7252 MAX_RETRANSMIT, handed to every algorithm as `max_retransmit` after the
    /// preset (`None`: the preset's or the algorithm's default).
    pub max_retransmit: Option<u32>,
    /// RFC 7252 NSTART: exchanges in flight per destination.
    pub nstart: u32,
    /// An algorithm preset (`fasor18`, ...) applied to every flow before its own parameters.
    pub cc_preset: Option<String>,
    /// How the server answers a duplicate CON (`server_duplicates`): from its cache
    /// (RFC 7252 §4.5, the default) or processed anew (libcoap on the published testbeds).
    pub server_duplicates: ServerDuplicates,
}

/// What a flow's client does (docs/experiments.md §6.1).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Workload {
    /// `exchanges` request/response exchanges back to back.
    Continuous {
        /// Successful exchanges to complete.
        exchanges: u32,
    },
    /// Short-lived clients of U{batch_min..=batch_max} exchanges, each with fresh algorithm
    /// state, until `exchanges` succeeded.
    Random {
        /// Successful exchanges to complete.
        exchanges: u32,
        /// Smallest batch.
        batch_min: u32,
        /// Largest batch.
        batch_max: u32,
    },
    /// One block-wise GET of `object_bytes` in `block_bytes` blocks.
    LongTransfer {
        /// Object size.
        object_bytes: u64,
        /// Block size (16..=1024, a power of two).
        block_bytes: u32,
    },
    /// An observer (RFC 7641) of the server's one observable resource: it registers at its
    /// start, takes every notification for `duration`, then deregisters (Observe 1).
    Observe {
        /// How often the resource changes (a notification to every observer each time).
        period: Duration,
        /// How long the flow observes.
        duration: Duration,
        /// Every k-th notification to an observer is CON, the others NON (0: only the first,
        /// then one a day, RFC 7641 §4.5.1's minimum).
        con_every: u32,
    },
}

impl Workload {
    /// The name used in scenario files and results.
    pub fn name(&self) -> &'static str {
        match self {
            Workload::Continuous { .. } => "continuous",
            Workload::Random { .. } => "random",
            Workload::LongTransfer { .. } => "long-transfer",
            Workload::Observe { .. } => "observe",
        }
    }
}

/// Which source address a random flow's short-lived clients use (`random_source_port`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum SourcePort {
    /// One socket for the whole flow: between short-lived clients only the algorithm state
    /// is reset (docs/experiments.md §6.1 RESOLVED).
    #[default]
    Keep,
    /// Every short-lived client after the first is a fresh endpoint on a fresh source port of
    /// the flow's host, so the server sees a new peer; Message IDs and tokens continue from the
    /// previous client so replies cannot be confused. Replies that reach a former client's
    /// port are dropped (its socket is closed).
    New,
}

impl SourcePort {
    /// The names accepted in scenario files, in [`SourcePort`] order.
    pub const NAMES: [&'static str; 2] = ["keep", "new"];

    /// The name used in scenario files.
    pub fn name(&self) -> &'static str {
        match self {
            SourcePort::Keep => "keep",
            SourcePort::New => "new",
        }
    }
}

/// Token length of a CoAP-over-TCP long transfer's GET, bytes (docs/experiments.md §5.1: 1 B; short
/// exchanges use 2 B, §5.2).
pub const LONG_TRANSFER_TOKEN_BYTES: usize = 1;

/// One `[[flows]]` table: `count` identical flows.
#[derive(Debug, Clone, PartialEq)]
pub struct FlowConfig {
    /// Number of flows (one client each; random flows reuse their socket unless
    /// `random_source_port` is [`SourcePort::New`]).
    pub count: u32,
    /// What `cc` selected: CoAP over UDP with a registry algorithm, CoAP over TCP, or an
    /// HTTP download.
    pub transport: Transport,
    /// The algorithm settings: protocol preset and `max_retransmit` first, then
    /// `[flows.params]` (later settings win).
    pub settings: Settings,
    /// What the client does.
    pub workload: Workload,
    /// Request payload in bytes (51 gives the 60-B CoAP request of docs/experiments.md §4.2).
    pub request_payload_bytes: u32,
    /// Response payload in bytes (53 gives the 60-B piggybacked response of docs/experiments.md
    /// §4.2).
    pub response_payload_bytes: u32,
    /// Each client starts after U[0, start_jitter] (docs/experiments.md §6.3).
    pub start_jitter: Duration,
    /// Random workload: whether each short-lived client keeps the flow's socket (default) or
    /// gets a fresh source port.
    pub random_source_port: SourcePort,
    /// `interval_s` (continuous CoAP-over-UDP flows only): the k-th request starts at the
    /// flow's start + k · interval, whatever became of the earlier ones, instead of when the
    /// previous one ends; `None`: back to back.
    pub interval: Option<Duration>,
    /// `early_block2` (long-transfer only; TCP and HTTP flows, which have no blocks, ignore
    /// it): a CoAP-over-UDP flow's first GET already asks
    /// for `block_bytes` blocks with a Block2 option (early negotiation, RFC 7959 §2.4), as
    /// `coaplab get --block-size` does; `false` (docs/experiments.md §4.1, the default): the first
    /// GET carries no Block2 and the server's block size applies from its first response.
    pub early_block2: bool,
    /// `mss_bytes` (TCP and HTTP flows; CoAP-over-UDP flows of a `cc` sweep ignore it): the
    /// MSS both TCP ends cut segments to; `None` (the default): the largest the topology
    /// carries ([`Topology::max_tcp_mss_bytes`]).
    pub mss_bytes: Option<u32>,
}

impl FlowConfig {
    /// The `cc` as the scenario wrote it (and results write it): the algorithm, TCP or HTTP
    /// name of [`FlowConfig::transport`].
    pub fn cc(&self) -> &str {
        self.transport.cc()
    }
}
