//! What one run produces: a row per flow, or the reason it failed.

use std::fmt;

/// The metrics of one flow (docs/experiments.md §7).
#[derive(Debug, Clone, PartialEq)]
pub struct FlowRecord {
    /// Flow number within the run, from 0, in `[[flows]]` order.
    pub flow: u32,
    /// The algorithm's registry name.
    pub cc: String,
    /// The workload name (`continuous`, `random`, `long-transfer`).
    pub workload: String,
    /// Flow completion time: first request sent → first copy of the last answer; `None` when
    /// the flow did not finish before the run ended.
    pub fct_s: Option<f64>,
    /// Successful exchanges.
    pub exchanges: u32,
    /// Exchanges that gave up after MAX_RETRANSMIT retransmissions.
    pub failed_exchanges: u32,
    /// CON copies sent (originals + retransmissions).
    pub transmissions: u64,
    /// Retransmissions.
    pub retransmissions: u64,
    /// Retransmissions whose earlier copy reached the server and whose reply reached the
    /// client (ground truth, docs/experiments.md §7).
    pub unnecessary_retransmissions: u64,
    /// Retransmission-timer expiries.
    pub timeouts: u64,
    /// The largest armed value of an expired timer; `None` when no timer expired. TCP
    /// flows: the largest RTO of an expired retransmission timer of either end (handshake
    /// or data), before its backoff.
    pub rto_max_s: Option<f64>,
    /// Expired retransmission timers: UDP flows, every CoAP timer expiry (as `timeouts`);
    /// TCP flows, every RTO expiry of both ends (as `rto_count`).
    pub expired_rtos: u64,
    /// One entry per CoAP timer expiry, in order, when `[output] timers` asks for
    /// `timers.csv`; empty otherwise and for TCP flows.
    pub expiries: Vec<TimerExpiry>,
    /// Median CoAP RTT (original request → first answer) over the flow's exchanges.
    pub coap_rtt_median_s: Option<f64>,
    /// IP bytes the flow's client sent.
    pub bytes_up: u64,
    /// IP bytes the server sent to the flow's client.
    pub bytes_down: u64,
    /// Whether the flow met its quota of successful exchanges (or received the whole object).
    pub completed: bool,
    /// Why a flow that did not complete is unfinished; `None` for a completed flow. An
    /// unfinished flow is a censored observation: its FCT is at least `elapsed_s`.
    pub unfinished: Option<Unfinished>,
    /// First request sent → the flow's end: its last answer (then equal to `fct_s`), the
    /// instant it gave up, or the end of the run for a flow still running then; `None` when
    /// the flow never sent a request.
    pub elapsed_s: Option<f64>,
    /// Frequency of transmissions (docs/experiments.md §7): element k counts the successful
    /// exchanges that needed k + 1 transmissions (failures are `failed_exchanges`).
    pub transmission_counts: Vec<u32>,
    /// TCP flows only: the connection counters (docs/experiments.md §7); `None` for UDP flows.
    pub tcp: Option<TcpFlowRecord>,
    /// Observers (`workload = "observe"`) only: the notification counters.
    pub observe: Option<ObserveFlowRecord>,
    /// The multi-hop experiments' metrics (docs/experiments.md §8f), for runs that write them (mesh
    /// runs, `[output] intervals` or `exchanges`); `None` otherwise.
    pub mesh: Option<Box<MeshFlowRecord>>,
}

/// Why a flow is unfinished (flows.csv's `unfinished` column).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unfinished {
    /// The flow ended without completing: a long transfer whose request failed (an exchange
    /// exhausted MAX_RETRANSMIT, or TCP gave up), or a response that was not the whole answer.
    GaveUp,
    /// The flow was still running when the run ended (`max_sim_time_s`, or nothing was left
    /// to happen).
    TimeCap,
}

impl Unfinished {
    /// Both reasons, in column order.
    pub const ALL: [Unfinished; 2] = [Unfinished::GaveUp, Unfinished::TimeCap];

    /// The text of the `unfinished` column.
    pub fn label(self) -> &'static str {
        match self {
            Unfinished::GaveUp => "gave_up",
            Unfinished::TimeCap => "time_cap",
        }
    }

    /// The reason a `unfinished` cell names (`None` for an empty or unknown cell).
    pub fn parse(text: &str) -> Option<Self> {
        Unfinished::ALL.into_iter().find(|u| u.label() == text)
    }
}

/// What an observer adds to its record (issue 16; `crate::observe_metrics` says how each is
/// counted).
#[derive(Debug, Clone, PartialEq)]
pub struct ObserveFlowRecord {
    /// Notifications the server generated for the observer.
    pub sent: u64,
    /// Of those, received by the observer.
    pub received: u64,
    /// `sent − received`.
    pub lost: u64,
    /// Mean generation → reception delay of the received ones, seconds.
    pub delay_mean_s: Option<f64>,
    /// Its median.
    pub delay_p50_s: Option<f64>,
    /// Its 95th percentile.
    pub delay_p95_s: Option<f64>,
    /// Its maximum.
    pub delay_max_s: Option<f64>,
    /// Retransmissions of CON notifications to the observer.
    pub retransmissions: u64,
}

/// Width of one throughput interval of [`MeshFlowRecord::intervals`] (the thesis's per-client
/// throughput over 50-ms intervals).
pub const INTERVAL: coaplab_cc::time::Duration = coaplab_cc::time::Duration::from_millis(50);

/// The multi-hop experiments' metrics of one flow (docs/experiments.md §8f; definitions in
/// docs/scenarios.md, "Mesh metrics"). Rates are over the flow's active time, `active_s`.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct MeshFlowRecord {
    /// Exchanges started (original CON copies sent).
    pub requests: u64,
    /// CoAP-level packet delivery ratio: successful exchanges / exchanges started.
    pub coap_pdr: Option<f64>,
    /// First request sent → answer of the 50th successful exchange, seconds.
    pub fct50_s: Option<f64>,
    /// First request sent → end (answer or failure) of the flow's last ended exchange, seconds.
    pub active_s: Option<f64>,
    /// Successful exchanges per second.
    pub transactions_per_s: Option<f64>,
    /// CON copies sent per second (retransmissions included).
    pub sending_rate_pps: Option<f64>,
    /// IP bytes the client sent per second, in bit/s.
    pub sending_rate_bps: Option<f64>,
    /// Request payload of the successful exchanges per second, in bit/s.
    pub throughput_bps: Option<f64>,
    /// Mean CoAP delay (original sent → first answer) of the successful exchanges, seconds.
    pub delay_mean_s: Option<f64>,
    /// Median CoAP delay, seconds.
    pub delay_p50_s: Option<f64>,
    /// 90th percentile of the CoAP delay, seconds.
    pub delay_p90_s: Option<f64>,
    /// 99th percentile of the CoAP delay, seconds.
    pub delay_p99_s: Option<f64>,
    /// Largest CoAP delay, seconds.
    pub delay_max_s: Option<f64>,
    /// Mean of the algorithm's base RTO after each ended exchange, seconds.
    pub rto_base_mean_s: Option<f64>,
    /// Median base RTO, seconds.
    pub rto_base_p50_s: Option<f64>,
    /// 90th percentile of the base RTO, seconds.
    pub rto_base_p90_s: Option<f64>,
    /// Largest base RTO, seconds.
    pub rto_base_max_s: Option<f64>,
    /// The mesh node of the server the flow addressed (`None` off a mesh: the star's one
    /// server has no node).
    pub server_node: Option<u32>,
    /// `(interval, bytes)`: request payload bytes of the exchanges answered in each 50-ms
    /// interval since the run started, the empty intervals left out (`intervals.csv`).
    pub intervals: Vec<(u64, u64)>,
    /// One sample per ended exchange when `[output] exchanges` asks for `exchanges.csv`.
    pub samples: Vec<ExchangeSample>,
}

/// One ended exchange (a row of `exchanges.csv`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ExchangeSample {
    /// Its original copy was sent, seconds since the run started.
    pub start_s: f64,
    /// It was answered or failed, seconds since the run started.
    pub end_s: f64,
    /// CoAP delay (original sent → first answer), seconds; `None` when it failed.
    pub delay_s: Option<f64>,
    /// Copies sent.
    pub transmissions: u32,
    /// The algorithm's base RTO right after it ended, seconds.
    pub rto_base_s: Option<f64>,
}

/// One expired CoAP retransmission timer (a row of `timers.csv`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TimerExpiry {
    /// When it expired, seconds since the run started.
    pub at_s: f64,
    /// The armed value that expired (after dithering, backoff and caps), seconds.
    pub rto_s: f64,
    /// The copy it was timing (0 = the original).
    pub ordinal: u32,
}

/// What a CoAP-over-TCP flow adds to its record (docs/experiments.md §7, issue 5).
#[derive(Debug, Clone, PartialEq)]
pub struct TcpFlowRecord {
    /// Connection setup time: first SYN sent → SYN-ACK received, in seconds; `None` when the
    /// handshake did not complete. Not part of `fct_s`, which starts at the GET segment.
    pub setup_s: Option<f64>,
    /// Segments sent by both ends of the flow's connection (SYN, SYN-ACK, data, pure ACKs).
    pub segments_sent: u64,
    /// Data segments retransmitted by both ends (fast retransmits and after RTOs).
    pub segments_retransmitted: u64,
    /// Retransmission-timer expiries of both ends (handshake and data).
    pub rto_count: u64,
    /// SYN and SYN-ACK retransmissions of both ends (docs/experiments.md §7: apart from data).
    pub syn_retransmissions: u64,
}

/// A finished run.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct RunResult {
    /// One record per flow, in flow order.
    pub flows: Vec<FlowRecord>,
    /// Simulator events processed (for the events-per-second benchmark).
    pub events: u64,
    /// Virtual time at the end of the run, in seconds.
    pub sim_time_s: f64,
    /// Bottleneck counters, when the runner measures them.
    pub network: Option<super::NetworkRecord>,
}

/// Why a run produced no rows.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RunError {
    /// A capability the run needs is not built yet.
    NotAvailable(String),
    /// The run could not be set up from its configuration.
    Setup(String),
    /// The runner panicked (a bug); the message of the panic.
    Panicked(String),
}

impl fmt::Display for RunError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RunError::NotAvailable(what) => write!(f, "not available yet: {what}"),
            RunError::Setup(why) => write!(f, "cannot set up the run: {why}"),
            RunError::Panicked(msg) => write!(f, "the simulator panicked: {msg}"),
        }
    }
}

impl std::error::Error for RunError {}
