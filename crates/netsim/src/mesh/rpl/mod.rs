//! RPL (RFC 6550) in storing mode, sans-IO, one concern per file:
//!
//! * [`trickle`]: the Trickle timer (RFC 6206) pacing DIOs, Contiki 3.0's parameters.
//! * [`etx`]: per-neighbour ETX from MAC ACK statistics (Contiki 3.0 `link-stats.c`).
//! * [`of`]: objective functions OF0 (RFC 6552) and MRHOF/ETX (RFC 6719), with hysteresis.
//! * [`messages`]: DIO and DAO sizes on the wire after 6LoWPAN compression.
//! * [`node`]: one node's DODAG state — candidate parents, preferred parent, rank, DIO timer,
//!   DAO-installed downward routes.
//! * [`ideal`]: a driver that runs every node's state machine over loss-free, collision-free
//!   links, used to check convergence against the static tree (`super::routing`).
//!
//! Not yet joined to [`super::Mesh`]'s MAC (see docs/mesh-model.md, "RPL").

pub mod etx;
pub mod ideal;
pub mod messages;
pub mod node;
pub mod of;
pub mod trickle;

pub use of::Objective;
pub use trickle::{Trickle, TrickleParams};
