//! The discrete-event simulator's network: engine, link model, topologies (star and mesh).
//!
//! A tour, bottom up:
//!
//! * [`engine`]: the deterministic event queue (integer [`Instant`]s, ties in insertion order).
//! * [`rng`]: named ChaCha8 streams derived from `(run seed, stream name)`, one per purpose and
//!   direction, so adding a component never shifts another's draws.
//! * [`link`]: one direction of the bottleneck of docs/experiments.md §1 — byte-limited
//!   drop-tail FIFO → serializer → propagation delay → loss stage — plus the pure
//!   [`link::delay`] stage used for the rest-of-path, and [`link::trace`], a rate and delay that
//!   follow a schedule known in advance (Mahimahi-style link traces). Its interface takes packet lengths and
//!   instants only: the emulator (`coaplab-emu`) drives this same code with real packets and the
//!   wall clock. **The link model exists once, here.** Its keys, ranges, defaults and sources
//!   are [`config::params::LINK_PARAMS`], which the scenario reader and `coaplab models link` read.
//! * [`config`]: the `nbiot` and `zigbee` presets of docs/experiments.md §2 with every value
//!   overridable, and validation with typed errors.
//! * [`record`]: deliveries and the optional per-packet ground-truth log.
//! * [`addr`]: the address plan every topology shares (the server(s), the clients).
//! * [`topology`]: **the one topology interface**, the [`Topology`] trait that run loops drive
//!   (`send`, `poll_at`, `poll_delivery`, `servers`, the drop counters [`DirectionStats`] and
//!   the per-packet records), with one [`SendError`] for every topology.
//! * [`star`]: the [`Star`] — all clients share the uplink towards one server and the downlink
//!   back — carrying real CoAP bytes (sizes add IPv4 + UDP headers) and an opaque tag.
//! * [`mesh`]: the multi-hop 802.15.4 [`Mesh`](mesh::Mesh) (UDGM radio, CSMA/CA, 6LoWPAN,
//!   static routes or RPL), the second [`Topology`].
//! * [`tcp`]: the sans-IO TCP model (Linux reno semantics, PRR, delayed ACK, BBR v1) for CoAP
//!   over TCP: one [`tcp::Connection`] (one `impl`, in `tcp/connection/mod.rs`) whose
//!   components own their fields, each in its own file (`tcp::connection`'s recovery, rate and
//!   pacing state, timers by name); its own tour is at the top of `tcp/mod.rs`.
//!
//! The bytes it carries are its callers': the HTTP message models the TCP model carries for
//! docs/experiments.md §8e are beside the CoAP endpoint (`coaplab_endpoint::http`).
//!
//! Time is [`coaplab_base::time`] everywhere: integer nanoseconds.
//!
//! [`Instant`]: coaplab_base::time::Instant

pub mod addr;
pub mod config;
pub mod engine;
pub mod link;
pub mod mesh;
pub mod record;
pub mod rng;
pub mod star;
pub mod tcp;
pub mod topology;

pub use addr::{client_addr, server_addr, SERVER_ADDR};
pub use config::{ConfigError, NetworkConfig, Preset, PRESET_NAMES};
pub use engine::EventQueue;
pub use link::delay::{DelayConfig, JitterMode};
pub use link::loss::{
    CtmcParams, ErrorModel, FormError, GeParams, LossModel, NetemGeParams, NetemRandomParams,
    NetemStateParams, ProfileError, ProfileForm, DEFAULT_BURST_MEAN, DEFAULT_BURST_PACKETS,
    ERROR_MODEL_NAMES, PROFILE_NAMES,
};
pub use link::{Link, LinkConfig, LinkOutcome, LinkResult, LinkStats, LinkStreams};
pub use record::{Delivery, Direction, Fate, PacketId, PacketRecord};
pub use star::Star;
pub use topology::{DirectionStats, SendError, Topology};
