//! The ground floor every other crate of coaplab stands on: what the sans-IO core takes as
//! inputs instead of reading the world.
//!
//! - [`time`]: [`Instant`] and [`Duration`], integer nanoseconds of virtual (or wall-clock)
//!   time; nothing in the core reads a clock.
//! - [`rng`]: the [`Random`] draws algorithms and models take, the seeded ChaCha8 stream
//!   ([`SeededRandom`]), and the one seed derivation of a run's named streams
//!   ([`rng::stream_seed`], FNV-1a + splitmix64), so every crate derives seeds alike.
//! - [`params`]: typed parameter tables ([`ParamSpec`], [`Params`], [`Settings`]) for the
//!   algorithms, the link, the mesh and BBR: one grammar for `--set key=value` everywhere.
//!
//! Layers above re-export these modules where their users have always found them
//! (`coaplab_cc::time`, `coaplab_cc::rng`, `coaplab_cc::params`, `coaplab_netsim::rng`).

pub mod params;
pub mod rng;
pub mod time;

pub use params::{ParamError, ParamSpec, Params, Settings};
pub use rng::{Random, ScriptedRandom, SeededRandom};
pub use time::{Duration, Instant};
