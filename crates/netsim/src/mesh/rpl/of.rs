//! Objective functions: how a node ranks itself through a candidate parent and which candidate
//! it prefers.
//!
//! * OF0 (RFC 6552): `rank = parent rank + rank_increase`, `rank_increase = (Rf · Sp + Sr) ·
//!   MinHopRankIncrease` with `Rf = 1`, `Sr = 0` and the step of rank `Sp` from the link ETX as
//!   Contiki does (`core/net/rpl/rpl-of0.c`: `Sp = 3 · ETX − 2`, so 1 on a perfect link). It
//!   prefers the lower rank, and keeps the current parent unless the other is better by at
//!   least `MinHopRankIncrease / 2` (Contiki's `PARENT_SWITCH_THRESHOLD_DIV` 2).
//! * MRHOF with ETX (RFC 6719, Contiki 3.0's default objective function, `rpl-mrhof.c`, no
//!   metric container: the rank *is* the path ETX × 128): `rank = parent rank + link ETX`;
//!   links worse than `MAX_LINK_METRIC` (ETX 4) and paths above `MAX_PATH_COST` are refused;
//!   switching needs an improvement of `PARENT_SWITCH_THRESHOLD` (ETX 1.5) — RFC 6719 §5's
//!   values.
//!
//! Ranks are `u16` with [`INFINITE_RANK`] = 0xFFFF (RFC 6550 §17); the root's rank is
//! `MinHopRankIncrease` (`ROOT_RANK`).

use super::etx::ETX_DIVISOR;

/// RFC 6550 §17: infinite rank.
pub const INFINITE_RANK: u16 = 0xFFFF;
/// `MinHopRankIncrease` (RFC 6550 §17 default 256, Contiki `RPL_MIN_HOPRANKINC`).
pub const MIN_HOP_RANK_INCREASE: u16 = 256;
/// MRHOF: largest acceptable link metric (ETX 4 × 128).
pub const MAX_LINK_METRIC: u32 = 512;
/// MRHOF: largest acceptable path cost (ETX 256 × 128).
pub const MAX_PATH_COST: u32 = 32768;
/// MRHOF: switching hysteresis (ETX 1.5 × 128).
pub const PARENT_SWITCH_THRESHOLD: u32 = 192;

/// Which objective function a DODAG uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Objective {
    /// OF0, RFC 6552.
    Of0,
    /// MRHOF over ETX, RFC 6719.
    Mrhof,
}

impl Objective {
    /// The root's rank.
    pub const fn root_rank(self) -> u16 {
        MIN_HOP_RANK_INCREASE
    }

    /// This node's rank through a parent advertising `parent_rank` over a link of `link_etx`
    /// (× [`ETX_DIVISOR`]); [`INFINITE_RANK`] when the parent is unusable.
    pub fn rank_via(self, parent_rank: u16, link_etx: u32) -> u16 {
        if parent_rank == INFINITE_RANK {
            return INFINITE_RANK;
        }
        let increase = match self {
            Objective::Of0 => {
                // Sp = 3·ETX − 2 in whole transmissions (Contiki rounds ETX down), at least 1.
                let etx = (link_etx / ETX_DIVISOR).max(1);
                (3 * etx - 2) * u32::from(MIN_HOP_RANK_INCREASE)
            }
            Objective::Mrhof => {
                if link_etx > MAX_LINK_METRIC {
                    return INFINITE_RANK;
                }
                link_etx
            }
        };
        let rank = u32::from(parent_rank) + increase;
        if self == Objective::Mrhof && rank > MAX_PATH_COST {
            return INFINITE_RANK;
        }
        rank.min(u32::from(INFINITE_RANK)) as u16
    }

    /// Whether a candidate giving `candidate_rank` should replace the current parent giving
    /// `current_rank` (hysteresis; a parent giving [`INFINITE_RANK`] is always replaced).
    pub fn should_switch(self, current_rank: u16, candidate_rank: u16) -> bool {
        if candidate_rank == INFINITE_RANK {
            return false;
        }
        if current_rank == INFINITE_RANK {
            return true;
        }
        let threshold = match self {
            Objective::Of0 => u32::from(MIN_HOP_RANK_INCREASE) / 2,
            Objective::Mrhof => PARENT_SWITCH_THRESHOLD,
        };
        u32::from(candidate_rank) + threshold <= u32::from(current_rank)
    }

    /// The DAGRank (RFC 6550 §3.5.1): `floor(rank / MinHopRankIncrease)`.
    pub const fn dag_rank(rank: u16) -> u16 {
        rank / MIN_HOP_RANK_INCREASE
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn of0_adds_one_min_hop_rank_increase_per_perfect_hop() {
        let r1 = Objective::Of0.rank_via(256, 128);
        assert_eq!(r1, 512);
        assert_eq!(Objective::Of0.rank_via(r1, 128), 768);
        // ETX 2: Sp = 4.
        assert_eq!(Objective::Of0.rank_via(256, 256), 256 + 4 * 256);
        assert_eq!(Objective::dag_rank(768), 3);
    }

    #[test]
    fn mrhof_adds_the_link_etx_and_refuses_bad_links() {
        assert_eq!(Objective::Mrhof.rank_via(256, 128), 384);
        assert_eq!(Objective::Mrhof.rank_via(256, 512), 768);
        assert_eq!(Objective::Mrhof.rank_via(256, 513), INFINITE_RANK);
        assert_eq!(Objective::Mrhof.rank_via(32700, 128), INFINITE_RANK);
    }

    #[test]
    fn switching_needs_the_hysteresis_margin() {
        // MRHOF: 1.5 ETX better.
        assert!(!Objective::Mrhof.should_switch(600, 409));
        assert!(Objective::Mrhof.should_switch(600, 408));
        // OF0: half a MinHopRankIncrease.
        assert!(!Objective::Of0.should_switch(768, 641));
        assert!(Objective::Of0.should_switch(768, 640));
        assert!(Objective::Of0.should_switch(INFINITE_RANK, 60000));
        assert!(!Objective::Of0.should_switch(768, INFINITE_RANK));
    }
}
