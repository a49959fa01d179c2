//! Named random streams: one seeded ChaCha8 stream per purpose and direction (the derivation
//! lives in the ground floor, [`coaplab_base::rng`], so every crate derives seeds alike; it is
//! re-exported here where the simulator's users have always found it).

pub use coaplab_base::rng::{
    fnv1a, fnv1a64, indexed_stream, indexed_stream_seed, splitmix64, stream, stream_seed,
    FNV_OFFSET,
};
