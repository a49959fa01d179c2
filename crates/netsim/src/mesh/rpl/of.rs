//! Objective functions as Contiki 3.0 implements them (tag 3.0, no metric container:
//! `RPL_DAG_MC` = `RPL_DAG_MC_NONE` in `core/net/rpl/rpl-conf.h`):
//!
//! * MRHOF (`core/net/rpl/rpl-mrhof.c`, Contiki's default `RPL_OF`): a parent's path metric is
//!   its advertised rank plus the link metric (ETX × 256, [`super::etx`]); the rank through it
//!   is the same sum (`calculate_rank`). `best_parent` keeps the preferred parent while the
//!   other's metric differs by less than `RPL_DAG_MC_ETX_DIVISOR / PARENT_SWITCH_THRESHOLD_DIV`
//!   = 128 (ETX 0.5); otherwise the lower metric wins, a tie going to the second.
//! * OF0 (`core/net/rpl/rpl-of0.c`): rank = parent rank + `MinHopRankIncrease`; parents are
//!   compared by `DAG_RANK(rank) · 256 + link metric` with the preferred one kept within
//!   `MIN_DIFFERENCE` = 1.5 · `MinHopRankIncrease` (384). OF0 registers no link callback, so
//!   its link metric stays at `RPL_INIT_LINK_METRIC` · 256.
//!
//! Contiki 3.0 compares parents pairwise in neighbour-table order; a comparison within the
//! hysteresis returns the *preferred* parent even when it is neither of the two (see
//! [`Objective::best_parent`]).
//!
//! Not Contiki 3.0: RFC 6719's `MAX_LINK_METRIC` / `MAX_PATH_COST` rejection (3.0 defines them
//! but uses them only as the no-ACK penalty and the missing-parent metric); a parent is dropped
//! through `acceptable_rank` instead ([`super::node`]).

/// RFC 6550 §17: infinite rank.
pub const INFINITE_RANK: u16 = 0xFFFF;
/// `MinHopRankIncrease` (Contiki 3.0 `rpl-private.h` `RPL_MIN_HOPRANKINC` 256).
pub const MIN_HOP_RANK_INCREASE: u16 = 256;
/// `MaxRankIncrease` the root advertises (`RPL_MAX_RANKINC` = 7 · `RPL_MIN_HOPRANKINC`).
pub const MAX_RANK_INCREASE: u16 = 7 * MIN_HOP_RANK_INCREASE;
/// MRHOF hysteresis: `RPL_DAG_MC_ETX_DIVISOR` 256 / `PARENT_SWITCH_THRESHOLD_DIV` 2.
pub const MRHOF_SWITCH_THRESHOLD: u16 = 256 / 2;
/// OF0 hysteresis: `MIN_DIFFERENCE` = `RPL_MIN_HOPRANKINC` + `RPL_MIN_HOPRANKINC` / 2.
pub const OF0_MIN_DIFFERENCE: u16 = MIN_HOP_RANK_INCREASE + MIN_HOP_RANK_INCREASE / 2;

/// Which objective function a DODAG uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Objective {
    /// OF0, RFC 6552 (`rpl-of0.c`).
    Of0,
    /// MRHOF over ETX, RFC 6719 (`rpl-mrhof.c`).
    Mrhof,
}

/// A candidate parent as the objective function sees it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ParentView {
    /// Its node id.
    pub id: u16,
    /// The rank it advertised.
    pub rank: u16,
    /// The link metric to it (ETX × 256).
    pub link_metric: u16,
}

impl Objective {
    /// The root's rank (`ROOT_RANK` = `MinHopRankIncrease`).
    pub const fn root_rank(self) -> u16 {
        MIN_HOP_RANK_INCREASE
    }

    /// Whether the objective updates link metrics from MAC outcomes (OF0 registers no
    /// `neighbor_link_callback`).
    pub const fn uses_link_metric(self) -> bool {
        matches!(self, Objective::Mrhof)
    }

    /// `calculate_rank(p, 0)`: this node's rank through `p` ([`INFINITE_RANK`] on overflow).
    pub fn rank_via(self, p: ParentView) -> u16 {
        if p.rank == INFINITE_RANK {
            return INFINITE_RANK;
        }
        let increase = match self {
            Objective::Of0 => MIN_HOP_RANK_INCREASE,
            Objective::Mrhof => p.link_metric,
        };
        p.rank.checked_add(increase).unwrap_or(INFINITE_RANK)
    }

    /// The value `best_parent` compares, with the hysteresis around it.
    fn metric(self, p: ParentView) -> (i32, i32) {
        match self {
            // `calculate_path_metric`: rank + link metric in a uint16_t.
            Objective::Mrhof => (
                i32::from(p.rank.wrapping_add(p.link_metric)),
                i32::from(MRHOF_SWITCH_THRESHOLD),
            ),
            Objective::Of0 => (
                i32::from(dag_rank(p.rank).wrapping_mul(MIN_HOP_RANK_INCREASE))
                    + i32::from(p.link_metric),
                i32::from(OF0_MIN_DIFFERENCE),
            ),
        }
    }

    /// `of->best_parent(p1, p2)`: within the hysteresis the preferred parent (whichever node
    /// it is, `None` while there is none), else the lower metric, a tie to `p2`.
    pub fn best_of_two(
        self,
        p1: ParentView,
        p2: ParentView,
        preferred: Option<u16>,
    ) -> Option<u16> {
        let (m1, diff) = self.metric(p1);
        let (m2, _) = self.metric(p2);
        let keep = match self {
            // MRHOF applies the hysteresis only when one of the two is the preferred parent.
            Objective::Mrhof => preferred == Some(p1.id) || preferred == Some(p2.id),
            Objective::Of0 => true,
        };
        if keep && m1 < m2 + diff && m1 > m2 - diff {
            return preferred;
        }
        Some(if m1 < m2 { p1.id } else { p2.id })
    }

    /// `best_parent(dag)` of `rpl-dag.c`: the pairwise reduction over `candidates` (in
    /// neighbour-table order, those of [`INFINITE_RANK`] skipped); a step that returns no
    /// parent restarts from the next candidate, as Contiki's loop does with `best == NULL`.
    pub fn best_parent(
        self,
        candidates: impl Iterator<Item = ParentView> + Clone,
        preferred: Option<u16>,
    ) -> Option<u16> {
        let view = |id: u16| candidates.clone().find(|c| c.id == id);
        let mut best: Option<ParentView> = None;
        for p in candidates.clone().filter(|c| c.rank != INFINITE_RANK) {
            best = match best {
                None => Some(p),
                Some(b) => self.best_of_two(b, p, preferred).and_then(view),
            };
        }
        best.map(|b| b.id)
    }
}

/// The DAGRank (RFC 6550 §3.5.1, `DAG_RANK`): `floor(rank / MinHopRankIncrease)`.
pub const fn dag_rank(rank: u16) -> u16 {
    rank / MIN_HOP_RANK_INCREASE
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(id: u16, rank: u16, link_metric: u16) -> ParentView {
        ParentView {
            id,
            rank,
            link_metric,
        }
    }

    #[test]
    fn ranks_add_the_link_metric_or_one_min_hop_rank_increase() {
        assert_eq!(Objective::Mrhof.rank_via(p(0, 256, 256)), 512);
        assert_eq!(Objective::Mrhof.rank_via(p(0, 256, 512)), 768);
        assert_eq!(Objective::Mrhof.rank_via(p(0, 65000, 1000)), INFINITE_RANK);
        assert_eq!(Objective::Of0.rank_via(p(0, 256, 2560)), 512);
        assert_eq!(
            Objective::Of0.rank_via(p(0, INFINITE_RANK, 512)),
            INFINITE_RANK
        );
        assert_eq!(dag_rank(768), 3);
    }

    #[test]
    fn mrhof_keeps_the_preferred_parent_within_half_an_etx() {
        // Metrics 768 (preferred) and 641: within 128, keep 1.
        let a = p(1, 512, 256);
        let b = p(2, 385, 256);
        assert_eq!(Objective::Mrhof.best_of_two(a, b, Some(1)), Some(1));
        // 640 is 128 better: switch.
        let b = p(2, 384, 256);
        assert_eq!(Objective::Mrhof.best_of_two(a, b, Some(1)), Some(2));
        // Neither preferred: the lower metric; a tie goes to the second.
        assert_eq!(
            Objective::Mrhof.best_of_two(a, p(2, 512, 256), None),
            Some(2)
        );
    }

    #[test]
    fn of0_returns_the_preferred_parent_within_its_margin_even_when_absent() {
        let a = p(1, 512, 512);
        let b = p(2, 768, 512);
        // DAG ranks 2 and 3: 1024 vs 1280, within 384.
        assert_eq!(Objective::Of0.best_of_two(a, b, Some(7)), Some(7));
        assert_eq!(Objective::Of0.best_of_two(a, b, None), None);
        let c = p(3, 1024, 512);
        assert_eq!(Objective::Of0.best_of_two(a, c, None), Some(1));
        // The reduction restarts after a `None`: [a, b] → None, then c alone.
        let all = [a, b, c];
        assert_eq!(
            Objective::Of0.best_parent(all.iter().copied(), None),
            Some(3)
        );
    }
}
