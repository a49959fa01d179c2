//! RPL (RFC 6550) in storing mode, sans-IO, one concern per file:
//!
//! * [`trickle`]: the Trickle timer (RFC 6206) pacing DIOs, Contiki 3.0's parameters.
//! * [`etx`]: per-neighbour ETX from MAC outcomes (Contiki 3.0 `rpl-mrhof.c`).
//! * [`of`]: objective functions OF0 (RFC 6552) and MRHOF/ETX (RFC 6719), with hysteresis,
//!   as Contiki 3.0 implements them.
//! * [`messages`]: DIO, DIS and DAO sizes on the wire after 6LoWPAN compression.
//! * [`node`]: one node's DODAG state — parent table, preferred parent, rank, DIO/DAO/DIS
//!   timers, DAO-installed downward routes.
//!
//! [`super::Mesh`] (`topology/control.rs`) carries the messages over its own MAC and channel
//! (docs/mesh-model.md, "RPL").

pub mod etx;
pub mod messages;
pub mod node;
pub mod of;
pub mod trickle;

pub use of::Objective;
pub use trickle::{Trickle, TrickleParams};

use coaplab_base::time::Duration;

/// RPL's tunable timer parameters (`[topology.params]` keys `rpl_*`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RplParams {
    /// The DIO Trickle timer.
    pub trickle: TrickleParams,
    /// `RPL_DAO_LATENCY`: a DAO leaves `latency/2 + rand % latency` after it is scheduled.
    pub dao_latency: Duration,
    /// `RPL_DEFAULT_LIFETIME`: a DAO's route lifetime in units of `lifetime_unit_s` (1–255;
    /// 0 would be a No-Path DAO).
    pub default_lifetime: u8,
    /// `RPL_DEFAULT_LIFETIME_UNIT`, seconds.
    pub lifetime_unit_s: u16,
}

impl RplParams {
    /// Contiki 3.0's defaults (`rpl-conf.h`, `rpl-private.h`).
    pub const CONTIKI: RplParams = RplParams {
        trickle: TrickleParams::CONTIKI,
        dao_latency: node::DAO_LATENCY,
        default_lifetime: 0xff,
        lifetime_unit_s: 0xffff,
    };

    /// A downward route's lifetime: `RPL_LIFETIME(instance, default_lifetime)` =
    /// `lifetime_unit × default_lifetime` seconds (`rpl-private.h`). Contiki 3.0's defaults
    /// give 16,711,425 s (193 days): nothing expires within a run.
    pub fn route_lifetime(&self) -> Duration {
        Duration::from_secs(i64::from(self.lifetime_unit_s) * i64::from(self.default_lifetime))
    }

    /// The DAO lifetime timer's period, half the route lifetime (`set_dao_lifetime_timer`,
    /// `rpl-timers.c`); `None` when Contiki treats the lifetime as infinite (unit 0xffff or
    /// lifetime 0xff): no periodic DAO refresh.
    pub fn dao_refresh_interval(&self) -> Option<Duration> {
        (self.lifetime_unit_s != 0xffff && self.default_lifetime != 0xff)
            .then(|| Duration::from_nanos(self.route_lifetime().as_nanos() / 2))
    }
}

/// RPL's fixed constants as (name, value, source), for `coaplab models mesh` and
/// docs/mesh-model.md.
pub const RPL_CONSTANTS: &[(&str, &str, &str)] = &[
    (
        "MinHopRankIncrease",
        "256",
        "Contiki 3.0 core/net/rpl/rpl-private.h RPL_MIN_HOPRANKINC",
    ),
    (
        "MaxRankIncrease",
        "1792",
        "rpl-private.h RPL_MAX_RANKINC (7 x RPL_MIN_HOPRANKINC); rpl-dag.c acceptable_rank",
    ),
    ("ETX divisor", "256", "rpl-private.h RPL_DAG_MC_ETX_DIVISOR"),
    (
        "initial link ETX",
        "2",
        "rpl-conf.h RPL_INIT_LINK_METRIC; rpl-dag.c rpl_add_parent",
    ),
    (
        "ETX EWMA",
        "new = (old x 90 + sample x 10) / 100, first sample replaces",
        "rpl-mrhof.c ETX_ALPHA 90, ETX_SCALE 100, neighbor_link_callback",
    ),
    (
        "no-ACK ETX sample",
        "10",
        "rpl-mrhof.c MAX_LINK_METRIC (used as the MAC_TX_NOACK penalty)",
    ),
    (
        "MRHOF switch threshold",
        "ETX 0.5 (128)",
        "rpl-mrhof.c PARENT_SWITCH_THRESHOLD_DIV 2: RPL_DAG_MC_ETX_DIVISOR / 2",
    ),
    (
        "OF0 switch threshold",
        "384",
        "rpl-of0.c MIN_DIFFERENCE (RPL_MIN_HOPRANKINC x 1.5)",
    ),
    (
        "DIS interval",
        "60 s, first after 1-36 s",
        "rpl-private.h RPL_DIS_INTERVAL 60, RPL_DIS_START_DELAY 5; rpl-timers.c",
    ),
    (
        "parent recalculation",
        "every 1 s",
        "rpl-timers.c handle_periodic_timer -> rpl_recalculate_ranks",
    ),
    (
        "DTSN",
        "lollipop from 240, +1 per multicast DIO",
        "rpl-private.h RPL_LOLLIPOP_INIT; rpl-icmp6.c dio_output",
    ),
    (
        "probing",
        "unicast DIO every 60-180 s to the preferred parent if its link was not updated for 10 min, else (1/2) the best such parent, else the least recently updated one",
        "rpl-conf.h RPL_WITH_PROBING 1, RPL_PROBING_INTERVAL 120 s, RPL_PROBING_EXPIRATION_TIME 10 min; rpl-timers.c get_probing_target, handle_probing_timer",
    ),
];
