//! Static routes: the converged DODAG a storing-mode RPL instance with OF0 would settle on over
//! perfect links — every node's parent is its neighbour (within the UDGM transmission range)
//! with the fewest hops to the border router, ties broken by the lower node id — and the
//! storing-mode forwarding over that tree: up towards the root until a node has the
//! destination in its sub-DODAG, then down (RFC 6550 §9, storing mode, no source routing).
//!
//! RPL itself (DIO/DAO with Trickle, MRHOF/ETX, parent switching, control traffic) replaces
//! [`Routes::tree`] later: the topology asks only [`Routes::next_hop`].

use std::collections::VecDeque;

/// "No node".
pub const NO_NODE: u16 = u16::MAX;

/// The routing table of every node.
#[derive(Debug, Clone)]
pub struct Routes {
    n: usize,
    /// Parent of each node (`NO_NODE` for the root and unreachable nodes).
    parent: Vec<u16>,
    /// Hops to the root (`u32::MAX` when unreachable).
    hops: Vec<u32>,
    /// `next[s * n + d]`: the next hop from `s` towards `d`.
    next: Vec<u16>,
}

impl Routes {
    /// The minimum-hop tree rooted at `root` over `links(node)` (the nodes `node` reaches).
    pub fn tree<I: Iterator<Item = u16>>(n: usize, root: u16, links: impl Fn(u16) -> I) -> Routes {
        let mut hops = vec![u32::MAX; n];
        let mut parent = vec![NO_NODE; n];
        hops[root as usize] = 0;
        let mut queue = VecDeque::from([root]);
        while let Some(u) = queue.pop_front() {
            for v in links(u) {
                if hops[v as usize] == u32::MAX {
                    hops[v as usize] = hops[u as usize] + 1;
                    queue.push_back(v);
                }
            }
        }
        // Parent: the lowest-id neighbour one hop closer (links are symmetric under UDGM).
        for v in 0..n as u16 {
            if v == root || hops[v as usize] == u32::MAX {
                continue;
            }
            parent[v as usize] = links(v)
                .filter(|&u| {
                    hops[u as usize] != u32::MAX && hops[u as usize] + 1 == hops[v as usize]
                })
                .min()
                .unwrap_or(NO_NODE);
        }
        Routes::from_parents(parent, hops)
    }

    /// Storing-mode routes over a DODAG given by each node's `parent` (`NO_NODE` for the root
    /// and detached nodes) and hops to the root (`u32::MAX` when detached): what RPL's DAOs
    /// install ([`super::rpl`]).
    pub fn from_parents(parent: Vec<u16>, hops: Vec<u32>) -> Routes {
        let n = parent.len();
        let mut next = vec![NO_NODE; n * n];
        for d in 0..n {
            if hops[d] == u32::MAX {
                continue;
            }
            // Walk d's ancestors: each ancestor a reaches d through the child on that chain.
            let mut child = d as u16;
            let mut a = parent[d];
            // Bounded by n: a parent cycle (never formed by rank-monotonic RPL) cannot hang.
            let mut steps = 0;
            while a != NO_NODE && steps < n {
                steps += 1;
                next[a as usize * n + d] = child;
                child = a;
                a = parent[a as usize];
            }
        }
        for s in 0..n {
            if hops[s] == u32::MAX {
                continue;
            }
            for d in 0..n {
                if d != s && hops[d] != u32::MAX && next[s * n + d] == NO_NODE {
                    // Not in s's sub-DODAG: up.
                    next[s * n + d] = parent[s];
                }
            }
        }
        Routes {
            n,
            parent,
            hops,
            next,
        }
    }

    /// The parent of `node` (`None` for the root and unreachable nodes).
    pub fn parent(&self, node: u16) -> Option<u16> {
        Some(self.parent[node as usize]).filter(|&p| p != NO_NODE)
    }

    /// Hops from `node` to the root (`None` when unreachable).
    pub fn hops(&self, node: u16) -> Option<u32> {
        Some(self.hops[node as usize]).filter(|&h| h != u32::MAX)
    }

    /// The next hop from `from` towards `to` (`None`: no route).
    pub fn next_hop(&self, from: u16, to: u16) -> Option<u16> {
        Some(self.next[from as usize * self.n + to as usize]).filter(|&h| h != NO_NODE)
    }

    /// Hops along the route from `from` to `to`.
    pub fn path_len(&self, from: u16, to: u16) -> Option<u32> {
        let mut at = from;
        let mut len = 0;
        while at != to {
            at = self.next_hop(at, to)?;
            len += 1;
        }
        Some(len)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mesh::layout::Layout;
    use crate::mesh::medium::Udgm;

    fn routes(l: &Layout) -> Routes {
        let m = Udgm::new(&l.positions(), 10.0, 20.0, 1.0, 1.0, -95.0);
        let root = l
            .with_role(crate::mesh::layout::Role::BorderRouter)
            .next()
            .unwrap();
        Routes::tree(l.nodes.len(), root, |n| {
            m.links(n).collect::<Vec<_>>().into_iter()
        })
    }

    #[test]
    fn the_three_by_three_grid_forms_a_cross_around_the_centre() {
        // 0 1 2        parents: 1→4, 3→4, 5→4, 7→4; corners pick the lower-id neighbour:
        // 3 4 5        0→1, 2→1, 6→3, 8→5.
        // 6 7 8
        let r = routes(&Layout::grid(3, 3, 10.0).unwrap());
        let parents: Vec<Option<u16>> = (0..9).map(|n| r.parent(n)).collect();
        assert_eq!(
            parents,
            vec![
                Some(1),
                Some(4),
                Some(1),
                Some(4),
                None,
                Some(4),
                Some(3),
                Some(4),
                Some(5)
            ]
        );
        // Client 8 → server 2: up 8→5→4, then down 4→1→2 (4 hops); 0 → 2 meets at 1.
        assert_eq!(r.path_len(8, 2), Some(4));
        assert_eq!(r.next_hop(4, 2), Some(1));
        assert_eq!(r.path_len(0, 2), Some(2));
        assert_eq!(r.path_len(2, 8), Some(4));
    }

    #[test]
    fn every_generator_is_connected() {
        for l in [
            Layout::chain(20, 10.0).unwrap(),
            Layout::flower(5, 7, 10.0).unwrap(),
            Layout::dumbbell(10.0).unwrap(),
            Layout::half_dumbbell(10.0).unwrap(),
            Layout::grid(6, 6, 10.0).unwrap(),
        ] {
            let r = routes(&l);
            for n in 0..l.nodes.len() as u16 {
                assert!(r.hops(n).is_some(), "node {n} of {l:?}");
            }
        }
        let r = routes(&Layout::chain(20, 10.0).unwrap());
        assert_eq!(r.path_len(19, 1), Some(18));
    }
}
