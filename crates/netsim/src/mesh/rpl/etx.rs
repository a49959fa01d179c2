//! Per-neighbour ETX from MAC acknowledgement statistics, as Contiki 3.0 keeps it
//! (`core/net/link-stats.c`, `link_stats_packet_sent`): an EWMA over unicast transmissions,
//! each counting its number of transmissions (retries + 1), or `ETX_NOACK_PENALTY` when no ACK
//! ever came. Fixed point: ETX × [`ETX_DIVISOR`] (RFC 6551's 128).

/// ETX fixed-point divisor (RFC 6551 §4.3.2, Contiki `LINK_STATS_ETX_DIVISOR`).
pub const ETX_DIVISOR: u32 = 128;
/// ETX of a neighbour before any transmission (`ETX_INIT` 2).
pub const ETX_INIT: u32 = 2 * ETX_DIVISOR;
/// Transmissions charged to an unacknowledged frame (`ETX_NOACK_PENALTY` 10).
pub const ETX_NOACK_PENALTY: u32 = 10;
/// EWMA scale and weights (`EWMA_SCALE` 100, `EWMA_ALPHA` 15, `EWMA_BOOTSTRAP_ALPHA` 30).
pub const EWMA_SCALE: u32 = 100;
/// Weight of a new sample once the statistics are fresh.
pub const EWMA_ALPHA: u32 = 15;
/// Weight of a new sample while they are not yet fresh.
pub const EWMA_BOOTSTRAP_ALPHA: u32 = 30;
/// Transmissions after which statistics count as fresh (`FRESHNESS_TARGET` 4; Contiki also
/// halves the freshness counter every 20 min, which this model omits: runs are shorter).
pub const FRESHNESS_TARGET: u32 = 4;

/// One neighbour's link statistics.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LinkStats {
    /// ETX × [`ETX_DIVISOR`].
    pub etx: u32,
    /// Transmissions counted (saturating at [`FRESHNESS_TARGET`]).
    freshness: u32,
}

impl Default for LinkStats {
    fn default() -> LinkStats {
        LinkStats {
            etx: ETX_INIT,
            freshness: 0,
        }
    }
}

impl LinkStats {
    /// A unicast frame to this neighbour finished: ACKed after `transmissions` attempts, or
    /// (`acked == false`) dropped after them.
    pub fn packet_sent(&mut self, acked: bool, transmissions: u32) {
        let sample = if acked {
            transmissions.max(1)
        } else {
            ETX_NOACK_PENALTY
        } * ETX_DIVISOR;
        let alpha = if self.freshness >= FRESHNESS_TARGET {
            EWMA_ALPHA
        } else {
            EWMA_BOOTSTRAP_ALPHA
        };
        self.etx = (self.etx * (EWMA_SCALE - alpha) + sample * alpha) / EWMA_SCALE;
        self.freshness = (self.freshness + 1).min(FRESHNESS_TARGET);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn perfect_links_converge_from_two_towards_one() {
        let mut s = LinkStats::default();
        assert_eq!(s.etx, 256);
        // Bootstrap alpha 30 %: 256·0.7 + 128·0.3 = 217 (integer division), then 188, 170, 157.
        let mut seen = Vec::new();
        for _ in 0..5 {
            s.packet_sent(true, 1);
            seen.push(s.etx);
        }
        // The fifth sample uses alpha 15 %: (157·85 + 128·15) / 100 = 152.
        assert_eq!(seen, vec![217, 190, 171, 158, 153]);
    }

    #[test]
    fn a_lost_frame_costs_ten_transmissions() {
        let mut s = LinkStats::default();
        s.packet_sent(false, 4);
        assert_eq!(s.etx, (256 * 70 + 1280 * 30) / 100);
    }
}
