//! What a flow of the TCP run loop (`super::tcp`) runs on its connections: a [`FlowApp`].
//! The loop owns the transport — each flow's connections of netsim's TCP model, their
//! timers, the segments they send and take in — and calls the flow's application at four
//! points: when the flow's start comes ([`FlowApp::open`]), when its deadline came and its
//! connections' due timers fired ([`FlowApp::woken`]), when one of its connections took in a
//! segment ([`FlowApp::on_segment`]), and to move bytes between the connections and the
//! application ([`FlowApp::service`], between two sends of what the connections queued).
//!
//! Two siblings implement it: RFC 8323 sessions at both ends (`super::tcp_coap`), and an HTTP
//! download (`super::http`, DESIGN.md: HTTP is a sibling of the CoAP endpoint on the TCP
//! model). A run's flows all run one of them (an HTTP download is alone in its run), so the
//! loop is generic over it and has no branch on the kind of flow.

use coaplab_cc::time::Instant;
use coaplab_netsim::tcp::Connection;

use super::tcp_conns::Flow;
use crate::results::{FlowRecord, RunError};
use crate::scenario::{FlowConfig, RunSpec};

/// What the loop does for a flow after [`FlowApp::open`] or [`FlowApp::woken`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Wake {
    /// Nothing more.
    Idle,
    /// Sends what the connections queued.
    Send,
    /// Services the flow ([`FlowApp::service`]); `event`: counts as one of the run's events.
    Service { event: bool },
}

/// A segment one of a flow's connections took in.
#[derive(Debug, Clone, Copy)]
pub(super) struct Arrival {
    /// When it arrived.
    pub(super) at: Instant,
    /// Sent to the server.
    pub(super) up: bool,
    /// Its IP length.
    pub(super) ip_len: u32,
    /// Its connection is the flow's current one (its last).
    pub(super) current: bool,
    /// It only acknowledged (no payload, SYN or FIN) and found its connection established,
    /// which it still is: it changed nothing the application reads.
    pub(super) established_ack: bool,
}

/// What the loop does after a connection of the flow took in a segment.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum OnSegment {
    /// Services the flow now.
    Service,
    /// Sends what the connections queued; the application has nothing to do.
    Send,
    /// Nothing now (the application acts at a wake-up of its own, [`FlowApp::next_timer`]).
    Wait,
    /// The segment completed the flow: the run's last event (nothing after it is simulated).
    Complete,
}

/// What [`FlowApp::service`] leaves to do.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Serviced {
    /// Done: the loop sends what the connections queued.
    Done,
    /// A connection was opened: the loop sends its SYN, then services the flow again.
    Opened,
}

/// What the flows of a run share in [`FlowApp::service`].
pub(super) struct Shared {
    /// The servers' resources.
    pub(super) routes: Vec<(String, coaplab_endpoint::Resource)>,
    /// Client ports per host taken by the flows' first connections (`super::source_addr`).
    pub(super) port_stride: u32,
    /// Bytes read from a connection (reused).
    pub(super) buf: Vec<u8>,
}

/// The application of one flow of the TCP loop (see the [module documentation](self)).
pub(super) trait FlowApp: Sized {
    /// What it keeps per connection.
    type Conn;

    /// The application of flow `index` of group `fc` (whose resource is `path`) and the
    /// instant the flow starts.
    fn new(
        spec: &RunSpec,
        fc: &FlowConfig,
        index: u32,
        path: &str,
    ) -> Result<(Self, Instant), RunError>;

    /// Its state of the flow's next connection.
    fn new_conn(&mut self) -> Self::Conn;

    /// The server end of the flow's connection `k`, listening.
    fn listen(&self, flow: &Flow<Self::Conn>, k: u32) -> Result<Connection, String>;

    /// Its own next wake-up (none: it acts only when its connections do).
    fn next_timer(&self) -> Option<Instant> {
        None
    }

    /// The flow's start came at `now`: its first connection connects.
    fn open(
        &mut self,
        flow: &mut Flow<Self::Conn>,
        shared: &Shared,
        now: Instant,
    ) -> Result<Wake, RunError>;

    /// The flow's deadline came at `now` and its connections' due timers fired (`fired`: at
    /// least one).
    fn woken(&mut self, fired: bool) -> Wake;

    /// `conn` took in the segment `arrival`.
    fn on_segment(&mut self, arrival: Arrival, conn: &mut Connection) -> OnSegment;

    /// Moves bytes between the flow's connections and the application at `now`.
    fn service(
        &mut self,
        flow: &mut Flow<Self::Conn>,
        shared: &mut Shared,
        now: Instant,
    ) -> Result<Serviced, RunError>;

    /// The flow's record, for a run whose time cap is `run_end`.
    fn record(&self, flow: &Flow<Self::Conn>, run_end: Instant) -> FlowRecord;

    /// The run's events when the application counts them itself (an HTTP run's: its
    /// measured packets); `None`: the loop's deliveries and timer expiries.
    fn events(&self) -> Option<u64> {
        None
    }
}
