//! The discrete-event simulator's network: engine, link model, star topology.
//!
//! A tour, bottom up:
//!
//! * [`engine`]: the deterministic event queue (integer [`Instant`]s, ties in insertion order).
//! * [`rng`]: named ChaCha8 streams derived from `(run seed, stream name)`, one per purpose and
//!   direction, so adding a component never shifts another's draws.
//! * [`link`]: one direction of the bottleneck of spec/experiments.md §1 — byte-limited
//!   drop-tail FIFO → serializer → propagation delay → loss stage — plus the pure
//!   [`link::delay`] stage used for the rest-of-path. Its interface takes packet lengths and
//!   instants only: the emulator (`coaplab-emu`) drives this same code with real packets and the
//!   wall clock. **The link model exists once, here.**
//! * [`config`]: the `nbiot` and `zigbee` presets of §2 with every value overridable, and
//!   validation with typed errors.
//! * [`topology`]: the star — all clients share the uplink towards one server and the downlink
//!   back — carrying real CoAP bytes (sizes add IPv4 + UDP headers) and an opaque tag.
//! * [`record`]: deliveries and the optional per-packet ground-truth log.
//! * [`mesh`]: the multi-hop 802.15.4 mesh (UDGM radio, CSMA/CA, 6LoWPAN, static routes),
//!   a second topology with the star's interface.
//! * [`tcp`]: the sans-IO TCP model (Linux reno semantics, PRR, delayed ACK) for CoAP over TCP.
//! * [`http`]: byte-exact HTTP/1.1 and HTTP/2 (h2c) message models for spec §8e, carried by
//!   the TCP model.
//!
//! Time is [`coaplab_cc::time`] everywhere: integer nanoseconds.
//!
//! [`Instant`]: coaplab_cc::time::Instant

pub mod config;
pub mod engine;
pub mod http;
pub mod link;
pub mod mesh;
pub mod record;
pub mod rng;
pub mod tcp;
pub mod topology;

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
pub use topology::{client_addr, server_addr, SendError, Star, SERVER_ADDR};
