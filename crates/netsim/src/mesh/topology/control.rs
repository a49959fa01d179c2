//! RPL on the mesh (`Routing::Rpl`): every node's [`RplNode`] driven by the mesh's own MAC.
//! DIOs go out as broadcast frames (no ACK, no retries) when a node's Trickle timer fires;
//! DAOs as acknowledged unicast frames to the preferred parent, forwarded hop by hop to the
//! root (storing mode), each hop installing the downward route. Link ETX comes from the
//! acknowledgements of every unicast frame (data and DAO) as Contiki's `link-stats.c` keeps
//! it. Control frames queue with data in the same bounded MAC queues.
//!
//! DAO refresh (Contiki 3.0 `RPL_DIO_REFRESH_DAO_ROUTES` 1): the root increments its DTSN in
//! every DIO; a node hearing a new DTSN from its parent increments its own and sends a DAO
//! for itself (Contiki delays it by up to `RPL_DAO_DELAY`; here it is queued at once).

use coaplab_cc::rng::SeededRandom;
use coaplab_cc::time::Instant;

use super::{Ev, Mesh, MeshStats};
use crate::mesh::layout::Role;
use crate::mesh::mac::{self, Control, Frame, BROADCAST, FCS_BYTES};
use crate::mesh::routing::{Routes, NO_NODE};
use crate::mesh::rpl::etx::LinkStats;
use crate::mesh::rpl::messages;
use crate::mesh::rpl::node::RplNode;
use crate::mesh::rpl::{Objective, TrickleParams};

/// Datagram ids of control frames carry this bit, so a dropped DAO never matches a datagram.
const CONTROL_ID: u64 = 1 << 63;

/// The mesh's RPL state.
#[derive(Debug)]
pub(super) struct RplState {
    pub(super) nodes: Vec<RplNode>,
    /// Generation of each node's pending Trickle event.
    gens: Vec<u32>,
    rngs: Vec<SeededRandom>,
    /// `links[from * n + to]`: `from`'s statistics of its link to `to`.
    links: Vec<LinkStats>,
    dtsn: Vec<u8>,
    parent_dtsn: Vec<u8>,
    root: u16,
    next_control: u64,
    /// Reachable nodes (those that must join for the DODAG to count as formed).
    reachable: Vec<bool>,
}

/// Counters of RPL's control traffic.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct ControlStats {
    /// DIO broadcasts sent.
    pub dio_frames: u64,
    /// DAO frames sent (each hop, retries included).
    pub dao_frames: u64,
    /// PSDU bytes of all control frames sent.
    pub frame_bytes: u64,
    /// Air time and MAC outcomes of control frames (the data counters' meanings).
    pub mac: MeshStats,
    /// Parent changes after joining, over all nodes.
    pub parent_switches: u64,
    /// When the DODAG had formed, on the mesh's internal clock (traffic starts at the run's
    /// instant 0 = this or the configured warm-up).
    pub formed_after: Option<coaplab_cc::time::Duration>,
}

impl Mesh {
    /// Starts RPL at internal instant 0: the root's Trickle timer runs.
    pub(super) fn rpl_start(&mut self, objective: Objective, run_seed: u64) {
        let n = self.macs.len();
        let root = self
            .layout
            .with_role(Role::BorderRouter)
            .next()
            .expect("validated: one border router");
        let mut rngs: Vec<SeededRandom> = (0..n)
            .map(|i| crate::rng::stream(run_seed, &format!("mesh/rpl/node{i}")))
            .collect();
        let params = TrickleParams::CONTIKI;
        let nodes = (0..n as u16)
            .map(|i| {
                if i == root {
                    RplNode::root(i, objective, params, Instant::ZERO, &mut rngs[i as usize])
                } else {
                    RplNode::new(i, objective, params)
                }
            })
            .collect();
        let reachable = (0..n as u16)
            .map(|i| self.routes.hops(i).is_some())
            .collect();
        self.rpl = Some(RplState {
            nodes,
            gens: vec![0; n],
            rngs,
            links: vec![LinkStats::default(); n * n],
            dtsn: vec![0; n],
            parent_dtsn: vec![0; n],
            root,
            next_control: 0,
            reachable,
        });
        self.rpl_schedule(root);
        self.rpl_refresh_routes();
    }

    /// Whether every reachable node has a parent and the root a downward route to it.
    pub(super) fn rpl_formed(&self) -> bool {
        let Some(r) = &self.rpl else { return true };
        let root = &r.nodes[r.root as usize];
        (0..r.nodes.len()).all(|i| {
            i == r.root as usize
                || !r.reachable[i]
                || (r.nodes[i].parent().is_some() && root.downward(i as u16).is_some())
        })
    }

    /// The next hop from `node` towards `dst`: storing mode (a DAO-installed route below, else
    /// up to the parent) under RPL, the static tree otherwise.
    pub(super) fn next_hop(&self, node: u16, dst: u16) -> Option<u16> {
        match &self.rpl {
            None => self.routes.next_hop(node, dst),
            Some(r) => {
                let me = &r.nodes[node as usize];
                me.downward(dst).or(me.parent())
            }
        }
    }

    /// (Re)schedules `node`'s Trickle event.
    fn rpl_schedule(&mut self, node: u16) {
        let Some(r) = self.rpl.as_mut() else { return };
        if let Some(at) = r.nodes[node as usize].poll_at() {
            r.gens[node as usize] = r.gens[node as usize].wrapping_add(1);
            let gen = r.gens[node as usize];
            self.events.schedule(at, Ev::Trickle { node, gen });
        }
    }

    /// `node`'s Trickle event at `at`.
    pub(super) fn rpl_timer(&mut self, node: u16, gen: u32, at: Instant) {
        let Some(r) = self.rpl.as_mut() else { return };
        if r.gens[node as usize] != gen {
            return;
        }
        let i = node as usize;
        let send = r.nodes[i].on_timer(at, &mut r.rngs[i]);
        if send {
            if node == r.root {
                r.dtsn[i] = r.dtsn[i].wrapping_add(1);
            }
            let dio = Control::Dio {
                rank: r.nodes[i].rank(),
                dtsn: r.dtsn[i],
            };
            self.control_stats.dio_frames += 1;
            self.send_control(node, BROADCAST, dio, at);
        }
        self.rpl_schedule(node);
    }

    /// Queues a control frame at `node`.
    fn send_control(&mut self, node: u16, to: u16, control: Control, at: Instant) {
        let short = self.params.short_addresses;
        let psdu = match control {
            Control::Dio { .. } => {
                messages::broadcast_psdu_bytes(messages::dio_payload_bytes(), short)
            }
            Control::Dao { .. } => {
                mac::header_bytes(short) + messages::dao_payload_bytes() + FCS_BYTES
            }
        };
        let Some(r) = self.rpl.as_mut() else { return };
        r.next_control += 1;
        let id = CONTROL_ID | r.next_control;
        let m = &mut self.macs[node as usize];
        if !m.has_room(1) {
            self.control_stats.mac.queue_drops += 1;
            return;
        }
        m.push(Frame {
            slot: 0,
            datagram: id,
            fragment: 0,
            fragments: 1,
            psdu_bytes: psdu as u16,
            to,
            seq: 0,
            control: Some(control),
        });
        self.kick(node, at);
    }

    /// `receiver` decoded the control frame `frame` from `sender` at `at`.
    pub(super) fn got_control(&mut self, receiver: u16, sender: u16, frame: Frame, at: Instant) {
        let Some(r) = self.rpl.as_mut() else { return };
        let n = r.nodes.len();
        let i = receiver as usize;
        match frame.control {
            Some(Control::Dio { rank, dtsn }) => {
                let etx = r.links[i * n + sender as usize].etx;
                let before = r.nodes[i].poll_at();
                let joined = r.nodes[i].parent().is_some();
                let o = r.nodes[i].on_dio(at, sender, rank, etx, &mut r.rngs[i]);
                if o.parent_changed && joined {
                    self.control_stats.parent_switches += 1;
                }
                let mut dao = o.parent_changed;
                if r.nodes[i].parent() == Some(sender) && r.parent_dtsn[i] != dtsn {
                    r.parent_dtsn[i] = dtsn;
                    r.dtsn[i] = r.dtsn[i].wrapping_add(1);
                    dao = true;
                }
                let parent = r.nodes[i].parent();
                let mut targets = Vec::new();
                if o.parent_changed {
                    targets.extend(r.nodes[i].downward_routes().map(|(t, _)| t));
                }
                let moved = r.nodes[i].poll_at() != before;
                if moved {
                    self.rpl_schedule(receiver);
                }
                if o.parent_changed {
                    self.rpl_refresh_routes();
                }
                if let (true, Some(p)) = (dao, parent) {
                    self.send_dao(receiver, p, receiver, at);
                    for t in targets {
                        self.send_dao(receiver, p, t, at);
                    }
                }
            }
            Some(Control::Dao { target }) => {
                if let Some(p) = r.nodes[i].on_dao(target, sender) {
                    self.send_dao(receiver, p, target, at);
                }
            }
            None => {}
        }
    }

    fn send_dao(&mut self, node: u16, parent: u16, target: u16, at: Instant) {
        self.control_stats.dao_frames += 1;
        self.send_control(node, parent, Control::Dao { target }, at);
    }

    /// A unicast frame from `from` to `to` ended: ACKed after `transmissions`, or dropped.
    pub(super) fn rpl_link_sample(&mut self, from: u16, to: u16, acked: bool, transmissions: u32) {
        if let Some(r) = self.rpl.as_mut() {
            let n = r.nodes.len();
            r.links[from as usize * n + to as usize].packet_sent(acked, transmissions);
        }
    }

    /// Rebuilds [`Mesh::routes`] (parents and hop counts) from the RPL nodes.
    fn rpl_refresh_routes(&mut self) {
        let Some(r) = &self.rpl else { return };
        let n = r.nodes.len();
        let parent: Vec<u16> = r
            .nodes
            .iter()
            .map(|x| x.parent().unwrap_or(NO_NODE))
            .collect();
        let mut hops = vec![u32::MAX; n];
        for (i, slot) in hops.iter_mut().enumerate() {
            let (mut at, mut h) = (i as u16, 0u32);
            while at != r.root && h <= n as u32 {
                match r.nodes[at as usize].parent() {
                    Some(p) => {
                        at = p;
                        h += 1;
                    }
                    None => break,
                }
            }
            if at == r.root {
                *slot = h;
            }
        }
        self.rpl_routes = Some(Routes::from_parents(parent, hops));
    }
}
