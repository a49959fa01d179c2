//! RTO / congestion-control algorithms for CoAP, as sans-IO state machines.
//!
//! Every algorithm of `spec/algorithms.md` lives in its own module and is driven by four events
//! (an exchange starts, its timer expires, it completes, it fails). Time and randomness are
//! arguments: nothing here reads a clock or a global random generator.

pub mod time;
