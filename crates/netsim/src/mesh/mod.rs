//! The multi-hop IEEE 802.15.4 mesh: the second [`Topology`](crate::Topology) beside
//! [`crate::Star`], built from sans-IO parts, bottom up:
//!
//! * [`phy`]: 2.4 GHz O-QPSK timing (symbol, SHR/PHR, turnaround, CCA, airtime).
//! * [`medium`]: Cooja's UDGM with distance loss: ranges, TX/RX success ratios, collisions,
//!   half-duplex radios, CCA.
//! * [`csma`] and [`mac`]: unslotted CSMA/CA with ACKs and retries, NullRDC, bounded queues;
//!   [`contiki_csma`]: Contiki 3.0's own `csma.c` and `nullmac.c` as alternatives.
//! * [`sixlowpan`]: IPHC/NHC header sizes, FRAG1/FRAGN fragmentation, reassembly.
//! * [`routing`]: static minimum-hop routes towards the border router (where RPL plugs in).
//! * [`mobility`]: BonnMotion's Random Waypoint, Gauss-Markov, Manhattan Grid and Pursue, and
//!   position files; the medium and static routes follow the moving nodes.
//! * [`layout`]: grid, chain, flower, dumbbell, half-dumbbell and explicit placements.
//! * [`params`]: every constant as a documented parameter ([`MESH_PARAMS`]).
//! * [`agenda`]: the mesh's event queue, the engine's order as a radix heap.
//! * [`topology`]: [`Mesh`], which joins them. docs/mesh-model.md gives the sources.

pub mod agenda;
pub mod contiki_csma;
pub mod csma;
pub mod layout;
pub mod mac;
pub mod medium;
pub mod mobility;
pub mod params;
pub mod phy;
pub mod routing;
pub mod rpl;
pub mod sixlowpan;
pub mod topology;

pub use layout::{Layout, LayoutError, Node, Role};
pub use params::{CsmaParams, MeshParams, Routing, MESH_PARAMS};
pub use topology::{
    ControlCounts, ControlStats, DatagramRecord, FrameKind, FrameRecord, Mesh, MeshConfig,
    MeshError, MeshStats,
};
