//! Per-neighbour ETX as Contiki 3.0's MRHOF keeps it (`core/net/rpl/rpl-mrhof.c`,
//! `neighbor_link_callback`, tag 3.0): each unicast frame to a neighbour in the parent table
//! yields a sample — its number of transmissions (retries + 1), or `MAX_LINK_METRIC` (10) when
//! the MAC gave up without an ACK (`MAC_TX_NOACK`). The first sample replaces the initial
//! value (`RPL_PARENT_FLAG_LINK_METRIC_VALID`); later ones enter an EWMA keeping 90 % of the
//! old value (`ETX_ALPHA` 90 of `ETX_SCALE` 100). Channel-access failures (`MAC_TX_COLLISION`)
//! leave it alone. Fixed point: ETX × [`ETX_DIVISOR`] (`RPL_DAG_MC_ETX_DIVISOR` 256 in 3.0's
//! `rpl-private.h`; RFC 6551 and later Contiki use 128).

/// ETX fixed-point divisor (Contiki 3.0 `rpl-private.h` `RPL_DAG_MC_ETX_DIVISOR` 256).
pub const ETX_DIVISOR: u32 = 256;
/// Link metric of a new parent before any sample: `RPL_INIT_LINK_METRIC` 2 (`rpl-conf.h`) ×
/// [`ETX_DIVISOR`], set in `rpl_add_parent` (`rpl-dag.c`).
pub const ETX_INIT: u16 = 2 * ETX_DIVISOR as u16;
/// Transmissions charged to a frame never acknowledged (`rpl-mrhof.c` `MAX_LINK_METRIC` 10).
pub const ETX_NOACK_PENALTY: u32 = 10;
/// EWMA scale (`ETX_SCALE` 100).
pub const ETX_SCALE: u32 = 100;
/// Weight of the old value (`ETX_ALPHA` 90).
pub const ETX_ALPHA: u32 = 90;

/// How a unicast frame to a neighbour ended at the MAC.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TxStatus {
    /// Acknowledged after this many transmissions (`MAC_TX_OK`, `numtx`).
    Ok(u32),
    /// Every retransmission went unacknowledged (`MAC_TX_NOACK`).
    NoAck,
}

/// One neighbour's link metric (ETX × [`ETX_DIVISOR`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LinkMetric {
    /// The metric.
    pub etx: u16,
    /// Whether a sample has replaced [`ETX_INIT`].
    valid: bool,
}

impl Default for LinkMetric {
    fn default() -> LinkMetric {
        LinkMetric {
            etx: ETX_INIT,
            valid: false,
        }
    }
}

impl LinkMetric {
    /// One frame's outcome.
    pub fn packet_sent(&mut self, status: TxStatus) {
        let sample = match status {
            TxStatus::Ok(numtx) => numtx.max(1) * ETX_DIVISOR,
            TxStatus::NoAck => ETX_NOACK_PENALTY * ETX_DIVISOR,
        };
        let new = if self.valid {
            (u32::from(self.etx) * ETX_ALPHA + sample * (ETX_SCALE - ETX_ALPHA)) / ETX_SCALE
        } else {
            self.valid = true;
            sample
        };
        // Contiki stores it in a uint16_t.
        self.etx = new.min(u32::from(u16::MAX)) as u16;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_first_sample_replaces_then_ninety_percent_is_kept() {
        let mut m = LinkMetric::default();
        assert_eq!(m.etx, 512);
        m.packet_sent(TxStatus::Ok(1));
        assert_eq!(m.etx, 256);
        // (256·90 + 2·256·10) / 100 = 281.
        m.packet_sent(TxStatus::Ok(2));
        assert_eq!(m.etx, 281);
        // No ACK: a sample of 10·256: (281·90 + 2560·10) / 100 = 508.
        m.packet_sent(TxStatus::NoAck);
        assert_eq!(m.etx, 508);
    }

    #[test]
    fn a_lost_neighbour_climbs_towards_ten() {
        let mut m = LinkMetric::default();
        m.packet_sent(TxStatus::Ok(1));
        let mut seen = Vec::new();
        for _ in 0..4 {
            m.packet_sent(TxStatus::NoAck);
            seen.push(m.etx);
        }
        assert_eq!(seen, vec![486, 693, 879, 1047]);
    }
}
