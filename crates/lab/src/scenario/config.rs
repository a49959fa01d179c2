//! The concrete configuration of one run: what a scenario says once every sweep axis has a
//! value. Plain data; the runner turns it into netsim and endpoint objects.

use coaplab_cc::params::Settings;
use coaplab_cc::time::Duration;

/// Everything one run needs besides its seed.
#[derive(Debug, Clone, PartialEq)]
pub struct RunConfig {
    /// The shared star network.
    pub network: NetworkConfig,
    /// Protocol settings shared by every endpoint.
    pub protocol: ProtocolConfig,
    /// The flow groups, one per `[[flows]]` table, in file order.
    pub flows: Vec<FlowConfig>,
    /// `max_sim_time_s`: the simulated-time safety cap (spec §8: 6 h).
    pub max_sim_time: Duration,
}

impl RunConfig {
    /// The total number of flows (clients) in the run.
    pub fn total_flows(&self) -> u32 {
        self.flows.iter().map(|f| f.count).sum()
    }
}

/// Which way a packet travels over the bottleneck.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Direction {
    /// Server to clients.
    Down,
    /// Clients to server.
    Up,
}

/// How a jittered delay stage orders packets (spec §1.1).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum JitterMode {
    /// No jitter.
    None,
    /// Jitter, but each delivery no earlier than the previous one.
    Fifo,
    /// Jitter; each packet is released at its own time (netem).
    Reorder,
}

/// One direction of the bottleneck (spec §1.1).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LinkConfig {
    /// Serializer rate in bit/s.
    pub rate_bps: u64,
    /// Propagation delay.
    pub delay: Duration,
    /// Propagation jitter half-width (uniform on `[d - j, d + j)`).
    pub delay_jitter: Duration,
    /// How propagation jitter orders packets.
    pub delay_jitter_mode: JitterMode,
    /// Drop-tail queue capacity in charged bytes (packet in service included).
    pub buffer_bytes: u64,
    /// Rest-of-path delay on the server side of the bottleneck.
    pub rest_delay: Duration,
    /// Rest-of-path jitter half-width (uniform on `[d - j, d + j)`).
    pub rest_jitter: Duration,
    /// How rest-of-path jitter orders packets.
    pub rest_jitter_mode: JitterMode,
}

/// A link-error model (spec §3); one independent chain per direction.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum LossModel {
    /// Only congestion drops.
    None,
    /// Independent loss with probability `p` per packet.
    Bernoulli {
        /// Loss probability.
        p: f64,
    },
    /// Time-based two-state Markov chain with exponential sojourns, stationary start.
    Ctmc {
        /// Mean sojourn in the low-error state.
        good_mean: Duration,
        /// Mean sojourn in the error-burst state.
        burst_mean: Duration,
        /// Loss probability in the low-error state.
        loss_good: f64,
        /// Loss probability in the error-burst state.
        loss_burst: f64,
    },
    /// Packet-based Gilbert-Elliott with netem `gemodel` semantics, start GOOD.
    GilbertElliott {
        /// GOOD -> BAD transition probability per packet.
        p: f64,
        /// BAD -> GOOD transition probability per packet.
        r: f64,
        /// Loss probability in GOOD (netem `1-k`).
        loss_good: f64,
        /// Loss probability in BAD (netem `1-h`).
        loss_bad: f64,
    },
}

/// The star network: all clients share one uplink and one downlink to one server.
#[derive(Debug, Clone, PartialEq)]
pub struct NetworkConfig {
    /// The preset the values started from (`nbiot`, `zigbee`).
    pub preset: String,
    /// Server to clients.
    pub down: LinkConfig,
    /// Clients to server.
    pub up: LinkConfig,
    /// Link MTU in bytes (IP packet size limit).
    pub mtu_bytes: u32,
    /// Bytes charged per packet on top of the IP length.
    pub overhead_bytes: u32,
    /// The link-error model of both directions.
    pub loss: LossModel,
    /// The label of the loss setting for results (`none`, `medium`, `gilbert-elliott`, ...).
    pub loss_label: String,
}

impl NetworkConfig {
    /// The link of direction `dir`.
    pub fn link(&self, dir: Direction) -> &LinkConfig {
        match dir {
            Direction::Down => &self.down,
            Direction::Up => &self.up,
        }
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
}

/// What a flow's client does (spec §6.1).
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
}

impl Workload {
    /// The name used in scenario files and results.
    pub fn name(&self) -> &'static str {
        match self {
            Workload::Continuous { .. } => "continuous",
            Workload::Random { .. } => "random",
            Workload::LongTransfer { .. } => "long-transfer",
        }
    }
}

/// One `[[flows]]` table: `count` identical flows.
#[derive(Debug, Clone, PartialEq)]
pub struct FlowConfig {
    /// Number of flows (one client each; random flows reuse their socket).
    pub count: u32,
    /// The algorithm's registry name.
    pub cc: String,
    /// The algorithm settings: protocol preset and `max_retransmit` first, then
    /// `[flows.params]` (later settings win).
    pub settings: Settings,
    /// What the client does.
    pub workload: Workload,
    /// Request payload in bytes (51 gives the 60-B CoAP request of spec §4.2).
    pub request_payload_bytes: u32,
    /// Response payload in bytes (53 gives the 60-B piggybacked response of spec §4.2).
    pub response_payload_bytes: u32,
    /// Each client starts after U[0, start_jitter] (spec §6.3).
    pub start_jitter: Duration,
}
