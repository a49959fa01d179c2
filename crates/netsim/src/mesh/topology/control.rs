//! RPL on the mesh (`Routing::Rpl`): every node's [`RplNode`] driven by the mesh's own MAC and
//! channel. DIOs and DISs go out as broadcast frames (no ACK, no retries), DAOs as acknowledged
//! unicast frames to the preferred parent, forwarded hop by hop to the root (storing mode),
//! each hop installing the downward route. Every unicast frame's MAC outcome (ACK after `n`
//! transmissions, or none) feeds the sender's link metric to that neighbour. Control frames
//! queue with data in the same bounded MAC queues and contend for the same channel.

use coaplab_base::rng::SeededRandom;
use coaplab_base::time::{Duration, Instant};

use super::{Ev, Mesh, MeshStats};
use crate::mesh::layout::Role;
use crate::mesh::mac::{self, Control, Frame, BROADCAST, FCS_BYTES};
use crate::mesh::routing::{Routes, NO_NODE};
use crate::mesh::rpl::etx::TxStatus;
use crate::mesh::rpl::messages;
use crate::mesh::rpl::node::{Actions, RplNode};
use crate::mesh::rpl::Objective;

/// Datagram ids of control frames carry this bit, so a dropped DAO never matches a datagram.
const CONTROL_ID: u64 = 1 << 63;

/// RPL's hop-by-hop option in a data datagram (RFC 6553; Contiki 3.0 `rpl-ext-header.c`).
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct RplOption {
    /// 'O': the datagram travels down a DAO route.
    pub(super) down: bool,
    /// 'R': a rank error was seen once.
    pub(super) rank_error: bool,
    /// The rank of the node that sent it on its last hop.
    pub(super) sender_rank: u16,
}

/// The mesh's RPL state.
#[derive(Debug)]
pub(super) struct RplState {
    pub(super) nodes: Vec<RplNode>,
    /// Generation and instant of each node's pending RPL event.
    gens: Vec<u32>,
    scheduled: Vec<Option<Instant>>,
    rngs: Vec<SeededRandom>,
    pub(super) root: u16,
    next_control: u64,
    /// Reachable nodes (those that must join for the DODAG to count as formed).
    reachable: Vec<bool>,
}

/// RPL control frames on the channel (every transmission, DAO retransmissions included), and
/// their PSDU bytes.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct ControlCounts {
    /// DIO transmissions.
    pub dio_frames: u64,
    /// PSDU bytes of the DIOs.
    pub dio_bytes: u64,
    /// DIS transmissions.
    pub dis_frames: u64,
    /// PSDU bytes of the DISs.
    pub dis_bytes: u64,
    /// DAO transmissions (No-Path DAOs included, every hop and retry).
    pub dao_frames: u64,
    /// PSDU bytes of the DAOs.
    pub dao_bytes: u64,
}

impl ControlCounts {
    fn count(&mut self, control: Control, psdu_bytes: u64) {
        let (frames, bytes) = match control {
            Control::Dio { .. } => (&mut self.dio_frames, &mut self.dio_bytes),
            Control::Dis => (&mut self.dis_frames, &mut self.dis_bytes),
            Control::Dao { .. } => (&mut self.dao_frames, &mut self.dao_bytes),
        };
        *frames += 1;
        *bytes += psdu_bytes;
    }

    /// All control frames.
    pub fn frames(&self) -> u64 {
        self.dio_frames + self.dis_frames + self.dao_frames
    }

    /// Their PSDU bytes.
    pub fn bytes(&self) -> u64 {
        self.dio_bytes + self.dis_bytes + self.dao_bytes
    }

    /// `self − earlier`, field by field.
    pub fn since(&self, earlier: &ControlCounts) -> ControlCounts {
        ControlCounts {
            dio_frames: self.dio_frames - earlier.dio_frames,
            dio_bytes: self.dio_bytes - earlier.dio_bytes,
            dis_frames: self.dis_frames - earlier.dis_frames,
            dis_bytes: self.dis_bytes - earlier.dis_bytes,
            dao_frames: self.dao_frames - earlier.dao_frames,
            dao_bytes: self.dao_bytes - earlier.dao_bytes,
        }
    }
}

/// Counters of RPL's control traffic.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct ControlStats {
    /// On the channel since RPL started, warm-up included.
    pub total: ControlCounts,
    /// On the channel during the warm-up (before the run's instant 0).
    pub warm_up: ControlCounts,
    /// MAC outcomes of control frames (the data counters' meanings).
    pub mac: MeshStats,
    /// Preferred-parent changes after joining, over all nodes.
    pub parent_switches: u64,
    /// When the DODAG had formed, on the mesh's internal clock (`None`: not during the
    /// warm-up).
    pub formed_after: Option<Duration>,
    /// The warm-up: the run's instant 0 on the mesh's internal clock.
    pub warm_up_time: Duration,
}

impl ControlStats {
    /// On the channel during the run (after the warm-up).
    pub fn measured(&self) -> ControlCounts {
        self.total.since(&self.warm_up)
    }
}

impl Mesh {
    /// Starts RPL at internal instant 0: the root's DIO timer runs, the others wait for DIOs.
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
        let params = self.params.rpl;
        let nodes = (0..n as u16)
            .map(|i| {
                let rng = &mut rngs[i as usize];
                if i == root {
                    RplNode::root(i, objective, params, Instant::ZERO, rng)
                } else {
                    RplNode::new(i, objective, params, rng)
                }
            })
            .collect();
        let reachable = (0..n as u16)
            .map(|i| self.routes.hops(i).is_some())
            .collect();
        self.rpl = Some(RplState {
            nodes,
            gens: vec![0; n],
            scheduled: vec![None; n],
            rngs,
            root,
            next_control: 0,
            reachable,
        });
        for i in 0..n as u16 {
            self.rpl_schedule(i);
        }
        self.rpl_refresh_routes();
    }

    /// Whether the DODAG has formed: every reachable node's parents lead it to the root, and the
    /// root's downward routes lead to it (each within `n` hops, so no loop counts).
    pub(super) fn rpl_formed(&self) -> bool {
        let Some(r) = &self.rpl else { return true };
        let n = r.nodes.len();
        let leads = |from: u16, to: u16, step: &dyn Fn(u16) -> Option<u16>| {
            let (mut at, mut hops) = (from, 0);
            while at != to && hops < n {
                match step(at) {
                    Some(next) => at = next,
                    None => return false,
                }
                hops += 1;
            }
            at == to
        };
        (0..n as u16).all(|i| {
            i == r.root
                || !r.reachable[i as usize]
                || (leads(i, r.root, &|at| r.nodes[at as usize].parent())
                    && leads(r.root, i, &|at| r.nodes[at as usize].downward(i)))
        })
    }

    /// The next hop from `node` towards `dst`: storing mode (a DAO-installed route below, else
    /// up to the preferred parent) under RPL, the static tree otherwise.
    pub(super) fn next_hop(&self, node: u16, dst: u16) -> Option<u16> {
        match &self.rpl {
            None => self.routes.next_hop(node, dst),
            Some(r) => {
                let me = &r.nodes[node as usize];
                me.downward(dst).or(me.parent())
            }
        }
    }

    /// The next hop of the datagram in `slot` from `node`, writing RPL's hop-by-hop option as
    /// Contiki 3.0 does (`rpl-ext-header.c`; `rpl_hbh_option` on, RPL routing):
    ///
    /// * at the datagram's source (`rpl_update_header_final`): the sender rank is the node's
    ///   rank, and the 'O' (down) flag is set unless the next hop is the preferred parent;
    /// * at a forwarder (`rpl_update_header_empty`): a datagram that arrived going down at a
    ///   node without a downward route to its destination is a forwarding error: it is dropped
    ///   (`None`) and a No-Path DAO for the destination goes to the neighbour it came from when
    ///   that one is in the node's parent table (`dao_output_target`). Otherwise the sender
    ///   rank becomes the node's rank and the 'O' flag says whether a downward route was found.
    ///
    /// Without the option, or with static routes, this is [`Mesh::next_hop`].
    pub(super) fn rpl_route(&mut self, slot: u32, node: u16, at: Instant) -> Option<u16> {
        let d = &self.slots[slot as usize];
        let (dst, src, prev) = (d.dst_node, d.src_node, d.prev_hop);
        let Some(r) = self.rpl.as_ref().filter(|_| self.params.rpl_hbh_option) else {
            return self.next_hop(node, dst);
        };
        let me = &r.nodes[node as usize];
        let (route, parent, rank) = (me.downward(dst), me.parent(), me.rank());
        let opt = &mut self.slots[slot as usize].rpl_opt;
        let next = if node == src {
            let next = route.or(parent);
            opt.down = next != parent;
            next
        } else {
            if opt.down && route.is_none() {
                if me.candidate_rank(prev).is_some() {
                    let dao = Control::Dao {
                        target: dst,
                        no_path: true,
                    };
                    self.send_control(node, prev, dao, at);
                }
                let up = self.slots[slot as usize].up;
                self.dir(up).loop_drops += 1;
                return None;
            }
            opt.down = route.is_some();
            route.or(parent)
        };
        self.slots[slot as usize].rpl_opt.sender_rank = rank;
        next
    }

    /// `rpl_verify_header` (Contiki 3.0 `rpl-ext-header.c`), run by every node that receives a
    /// datagram carrying RPL's hop-by-hop option, its destination included: a datagram going
    /// down from a sender whose rank is not lower than the node's, or going up from one whose
    /// rank is lower, reveals a loop (RFC 6550 §11.2.2.2). The first time the 'R' flag is set
    /// and the datagram goes on; the second time it is dropped (`false`) and the node resets its
    /// DIO Trickle timer.
    pub(super) fn rpl_verify_header(&mut self, slot: u32, node: u16, at: Instant) -> bool {
        let Some(r) = self.rpl.as_mut().filter(|_| self.params.rpl_hbh_option) else {
            return true;
        };
        let i = node as usize;
        let opt = &mut self.slots[slot as usize].rpl_opt;
        let sender_closer = opt.sender_rank < r.nodes[i].rank();
        if opt.down == sender_closer {
            return true;
        }
        if !opt.rank_error {
            opt.rank_error = true;
            return true;
        }
        r.nodes[i].on_rank_error(at, &mut r.rngs[i]);
        self.rpl_schedule(node);
        false
    }

    /// (Re)schedules `node`'s RPL event at its [`RplNode::poll_at`] if that moved.
    fn rpl_schedule(&mut self, node: u16) {
        let Some(r) = self.rpl.as_mut() else { return };
        let i = node as usize;
        let at = r.nodes[i].poll_at();
        if at == r.scheduled[i] {
            return;
        }
        r.scheduled[i] = at;
        r.gens[i] = r.gens[i].wrapping_add(1);
        if let Some(at) = at {
            let gen = r.gens[i];
            self.events.schedule(at, Ev::Rpl { node, gen });
        }
    }

    /// `node`'s RPL timers at `at`.
    pub(super) fn rpl_timer(&mut self, node: u16, gen: u32, at: Instant) {
        let Some(r) = self.rpl.as_mut() else { return };
        let i = node as usize;
        if r.gens[i] != gen {
            return;
        }
        r.scheduled[i] = None;
        let actions = r.nodes[i].on_timer(at, &mut r.rngs[i]);
        self.rpl_apply(node, actions, at);
    }

    /// Carries out what `node`'s RPL asked for, then reschedules its timers.
    fn rpl_apply(&mut self, node: u16, a: Actions, at: Instant) {
        if let Some((rank, dtsn)) = a.dio {
            self.send_control(node, BROADCAST, Control::Dio { rank, dtsn }, at);
        }
        if a.dis {
            self.send_control(node, BROADCAST, Control::Dis, at);
        }
        if let Some((to, rank, dtsn)) = a.probe {
            // A unicast DIO: acknowledged and retried, so its MAC outcome feeds the link metric.
            self.send_control(node, to, Control::Dio { rank, dtsn }, at);
        }
        for old in a.no_path_to {
            let dao = Control::Dao {
                target: node,
                no_path: true,
            };
            self.send_control(node, old, dao, at);
        }
        if let Some((target, p)) = a.purged {
            let dao = Control::Dao {
                target,
                no_path: true,
            };
            self.send_control(node, p, dao, at);
        }
        if let Some(p) = a.dao_to {
            let dao = Control::Dao {
                target: node,
                no_path: false,
            };
            self.send_control(node, p, dao, at);
        }
        if a.parent_changed {
            self.rpl_refresh_routes();
        }
        self.rpl_schedule(node);
    }

    /// Queues a control frame at `node`.
    fn send_control(&mut self, node: u16, to: u16, control: Control, at: Instant) {
        let short = self.params.short_addresses;
        let payload = match control {
            Control::Dio { .. } => messages::dio_payload_bytes(),
            Control::Dis => messages::dis_payload_bytes(),
            Control::Dao { .. } => messages::dao_payload_bytes(),
        };
        let psdu = if to == BROADCAST {
            mac::broadcast_psdu_bytes(payload, short)
        } else {
            mac::header_bytes(short) + payload + FCS_BYTES
        };
        let Some(r) = self.rpl.as_mut() else { return };
        r.next_control += 1;
        let id = CONTROL_ID | r.next_control;
        let m = &mut self.macs[node as usize];
        if !m.has_room(1, to) {
            self.control_stats.mac.queue_drops += 1;
            return;
        }
        m.push(
            Frame {
                slot: 0,
                datagram: id,
                fragment: 0,
                fragments: 1,
                psdu_bytes: psdu as u16,
                to,
                seq: 0,
                control: Some(control),
            },
            at,
        );
        self.kick(node, at);
    }

    /// A control frame of `psdu_bytes` goes on air.
    pub(super) fn count_control(&mut self, control: Control, psdu_bytes: u16) {
        self.control_stats
            .total
            .count(control, u64::from(psdu_bytes));
    }

    /// `receiver` decoded the control frame `frame` from `sender` at `at`.
    pub(super) fn got_control(&mut self, receiver: u16, sender: u16, frame: Frame, at: Instant) {
        let Some(r) = self.rpl.as_mut() else { return };
        let i = receiver as usize;
        match frame.control {
            Some(Control::Dio { rank, dtsn }) => {
                let a = r.nodes[i].on_dio(at, sender, rank, dtsn, &mut r.rngs[i]);
                self.rpl_apply(receiver, a, at);
            }
            Some(Control::Dis) => {
                r.nodes[i].on_dis(at, &mut r.rngs[i]);
                self.rpl_schedule(receiver);
            }
            Some(Control::Dao { target, no_path }) => {
                let forward = r.nodes[i].on_dao(at, target, sender, no_path);
                if let Some(p) = forward {
                    self.send_control(receiver, p, Control::Dao { target, no_path }, at);
                }
                self.rpl_schedule(receiver);
            }
            None => {}
        }
    }

    /// A unicast frame from `from` to `to` ended at `at`: acknowledged after `transmissions`,
    /// or dropped without an ACK.
    pub(super) fn rpl_link_sample(
        &mut self,
        from: u16,
        to: u16,
        acked: bool,
        transmissions: u32,
        at: Instant,
    ) {
        let Some(r) = self.rpl.as_mut() else { return };
        let status = if acked {
            TxStatus::Ok(transmissions)
        } else {
            TxStatus::NoAck
        };
        if r.nodes[from as usize].on_link(at, to, status) {
            self.rpl_schedule(from);
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
