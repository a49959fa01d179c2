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
