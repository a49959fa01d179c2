//! Runs every node's [`RplNode`] over ideal links — each DIO reaches every neighbour at the
//! instant it is sent, each DAO reaches the parent, nothing is lost or collides — until the
//! DODAG has formed: every reachable node has a parent and the root a downward route to each.
//! It checks the state machines (convergence, hop counts, control-message counts) apart from
//! the MAC; the mesh's channel model is not involved.

use coaplab_cc::rng::Random;
use coaplab_cc::time::{Duration, Instant};

use super::etx::ETX_DIVISOR;
use super::messages;
use super::node::RplNode;
use super::of::Objective;
use super::trickle::TrickleParams;
use crate::mesh::routing::{Routes, NO_NODE};

/// The result of [`converge`].
#[derive(Debug, Clone)]
pub struct Convergence {
    /// When the DODAG had formed (`None`: not within the limit).
    pub formed_at: Option<Instant>,
    /// DIO broadcasts sent.
    pub dio_frames: u64,
    /// DAO transmissions (one per hop).
    pub dao_frames: u64,
    /// MAC payload bytes of all of them.
    pub control_bytes: u64,
    /// The storing-mode routes over the parents chosen.
    pub routes: Routes,
    /// The nodes.
    pub nodes: Vec<RplNode>,
}

/// Runs RPL on `n` nodes rooted at `root` over `links(node)` (symmetric, every link of ETX 1)
/// until the DODAG forms or `limit` passes.
pub fn converge<I: Iterator<Item = u16>>(
    n: usize,
    root: u16,
    links: impl Fn(u16) -> I,
    objective: Objective,
    params: TrickleParams,
    limit: Duration,
    rng: &mut impl Random,
) -> Convergence {
    let start = Instant::ZERO;
    let mut nodes: Vec<RplNode> = (0..n as u16)
        .map(|i| {
            if i == root {
                RplNode::root(i, objective, params, start, rng)
            } else {
                RplNode::new(i, objective, params)
            }
        })
        .collect();
    let reachable = Routes::tree(n, root, &links);
    let mut out = Convergence {
        formed_at: None,
        dio_frames: 0,
        dao_frames: 0,
        control_bytes: 0,
        routes: reachable.clone(),
        nodes: Vec::new(),
    };
    loop {
        let next = (0..n)
            .filter_map(|i| nodes[i].poll_at().map(|t| (t, i)))
            .min();
        let Some((now, u)) = next else { break };
        if now > start + limit {
            break;
        }
        if !nodes[u].on_timer(now, rng) {
            continue;
        }
        out.dio_frames += 1;
        out.control_bytes += u64::from(messages::dio_payload_bytes());
        let rank = nodes[u].rank();
        for v in links(u as u16) {
            let o = nodes[v as usize].on_dio(now, u as u16, rank, ETX_DIVISOR, rng);
            if o.parent_changed {
                // DAO for v itself and for every target below it, each forwarded to the root.
                let mut targets = vec![v];
                targets.extend(nodes[v as usize].downward_routes().map(|(t, _)| t));
                for t in targets {
                    let mut at = v;
                    let mut hops = 0;
                    // The DAO climbs parent by parent, each hop installing "t via the sender"
                    // (bounded by n: ranks are monotonic).
                    while let Some(p) = nodes[at as usize].parent() {
                        if hops > n {
                            break;
                        }
                        hops += 1;
                        out.dao_frames += 1;
                        out.control_bytes += u64::from(messages::dao_payload_bytes());
                        let via = at;
                        nodes[p as usize].on_dao(t, via);
                        at = p;
                    }
                }
            }
        }
        let formed = (0..n as u16).all(|i| {
            i == root
                || reachable.hops(i).is_none()
                || (nodes[i as usize].parent().is_some()
                    && nodes[root as usize].downward_routes().any(|(t, _)| t == i))
        });
        if formed {
            out.formed_at = Some(now);
            break;
        }
    }
    let parent: Vec<u16> = nodes
        .iter()
        .map(|x| x.parent().unwrap_or(NO_NODE))
        .collect();
    let mut hops = vec![u32::MAX; n];
    for (i, slot) in hops.iter_mut().enumerate() {
        let (mut at, mut h) = (i as u16, 0u32);
        while at != root && h <= n as u32 {
            match nodes[at as usize].parent() {
                Some(p) => {
                    at = p;
                    h += 1;
                }
                None => break,
            }
        }
        if at == root {
            *slot = h;
        }
    }
    out.routes = Routes::from_parents(parent, hops);
    out.nodes = nodes;
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mesh::layout::{Layout, Role};
    use crate::mesh::medium::Udgm;
    use coaplab_cc::rng::SeededRandom;

    fn check(l: &Layout, objective: Objective) -> Convergence {
        let m = Udgm::new(&l.positions(), 10.0, 20.0, 1.0, 1.0, -95.0);
        let root = l.with_role(Role::BorderRouter).next().unwrap();
        let links = |u: u16| m.links(u).collect::<Vec<_>>().into_iter();
        let tree = Routes::tree(l.nodes.len(), root, links);
        let mut rng = SeededRandom::new(7);
        let c = converge(
            l.nodes.len(),
            root,
            links,
            objective,
            TrickleParams::CONTIKI,
            Duration::from_secs(600),
            &mut rng,
        );
        assert!(c.formed_at.is_some(), "{l:?} did not converge");
        for i in 0..l.nodes.len() as u16 {
            assert_eq!(c.routes.hops(i), tree.hops(i), "node {i} of {l:?}");
            assert!(c.nodes[i as usize].parent().is_some() || i == root);
        }
        c
    }

    #[test]
    fn rpl_converges_to_the_static_hop_counts_on_every_generator() {
        for objective in [Objective::Of0, Objective::Mrhof] {
            for l in [
                Layout::grid(3, 3, 10.0).unwrap(),
                Layout::grid(6, 6, 10.0).unwrap(),
                Layout::chain(20, 10.0).unwrap(),
                Layout::flower(5, 7, 10.0).unwrap(),
                Layout::dumbbell(10.0).unwrap(),
                Layout::half_dumbbell(10.0).unwrap(),
            ] {
                check(&l, objective);
            }
        }
    }

    #[test]
    fn the_chain_forms_hop_by_hop_with_one_dio_per_node_per_interval() {
        let c = check(&Layout::chain(20, 10.0).unwrap(), Objective::Mrhof);
        // Each node joins on its parent's first DIO (t in [2048, 4096) ms after joining), so
        // the 19 hops take between 19·2.048 and 19·4.096 s.
        let at = c.formed_at.unwrap();
        assert!(at >= Instant::from_millis(19 * 2048), "{at:?}");
        assert!(at < Instant::from_millis(19 * 4096), "{at:?}");
        // Node i's DAO climbs i hops: 1 + 2 + … + 19 DAO frames on a chain without switches.
        assert_eq!(c.dao_frames, (1..20).sum::<u64>());
        assert_eq!(c.nodes.iter().map(RplNode::parent_switches).sum::<u64>(), 0);
    }
}
