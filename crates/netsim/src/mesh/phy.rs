//! IEEE 802.15.4-2006 2.4 GHz O-QPSK PHY timing (§6.5): 250 kbit/s, 62.5 ksymbol/s, so one
//! symbol is 16 µs and one octet two symbols (32 µs).
//!
//! A PPDU is the synchronisation header (SHR: preamble 4 octets + SFD 1 octet, §6.3.1-2), the
//! PHY header (PHR: 1 octet frame length, §6.3.3) and the PSDU (the MAC frame, at most
//! `aMaxPHYPacketSize` = 127 octets, §6.4.1 Table 22). Everything here is integer nanoseconds.

use coaplab_base::time::Duration;

/// One O-QPSK symbol at 62.5 ksymbol/s (§6.5.1): 16 µs.
pub const SYMBOL: Duration = Duration::from_micros(16);
/// Symbols per octet (`phySymbolsPerOctet`, §6.4.2 Table 23: 2 for O-QPSK 2.4 GHz).
pub const SYMBOLS_PER_OCTET: i64 = 2;
/// Preamble octets (§6.3.1: four zero octets = 8 symbols).
pub const PREAMBLE_OCTETS: u32 = 4;
/// Start-of-frame delimiter octets (§6.3.2).
pub const SFD_OCTETS: u32 = 1;
/// PHY header octets (§6.3.3: 7-bit frame length + 1 reserved bit).
pub const PHR_OCTETS: u32 = 1;
/// SHR + PHR: octets sent before the PSDU (6).
pub const PHY_OVERHEAD_OCTETS: u32 = PREAMBLE_OCTETS + SFD_OCTETS + PHR_OCTETS;
/// `aMaxPHYPacketSize` (§6.4.1 Table 22): the longest PSDU, 127 octets.
pub const MAX_PSDU_OCTETS: u32 = 127;
/// `aTurnaroundTime` (§6.4.1 Table 22): 12 symbols = 192 µs, RX→TX or TX→RX.
pub const TURNAROUND_SYMBOLS: i64 = 12;
/// CCA detection time (§6.9.9: "8 symbol periods") = 128 µs.
pub const CCA_SYMBOLS: i64 = 8;
/// `phySHRDuration` in symbols (§6.4.2 Table 23: 10 for O-QPSK 2.4 GHz).
pub const SHR_SYMBOLS: i64 = 10;

/// `n` symbols as a duration.
pub const fn symbols(n: i64) -> Duration {
    Duration::from_nanos(n * SYMBOL.as_nanos())
}

/// `aTurnaroundTime`: 192 µs.
pub const TURNAROUND: Duration = symbols(TURNAROUND_SYMBOLS);
/// CCA duration: 128 µs.
pub const CCA: Duration = symbols(CCA_SYMBOLS);

/// On-air time of a PPDU carrying a `psdu_octets`-octet MAC frame: (6 + PSDU) octets × 2
/// symbols × 16 µs.
pub const fn airtime(psdu_octets: u32) -> Duration {
    symbols((PHY_OVERHEAD_OCTETS + psdu_octets) as i64 * SYMBOLS_PER_OCTET)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_full_frame_and_an_ack_take_their_standard_airtimes() {
        // By hand, IEEE 802.15.4-2006 §6.3 / §6.5.1: a 127-octet PSDU travels in a PPDU of
        // 4 (preamble) + 1 (SFD) + 1 (PHR) + 127 = 133 octets = 266 symbols (2 per octet);
        // at 16 µs per symbol that is 4,256 µs (= 133 × 8 bit / 250 kbit/s = 4.256 ms).
        assert_eq!(airtime(127), Duration::from_micros(4_256));
        // An immediate ACK (§7.2.2.3: FCF 2 + sequence 1 + FCS 2 = 5 octets): 11 octets =
        // 22 symbols = 352 µs.
        assert_eq!(airtime(5), Duration::from_micros(352));
        // SHR = 5 octets = 10 symbols = phySHRDuration (Table 23).
        assert_eq!(
            symbols(SHR_SYMBOLS),
            symbols(((PREAMBLE_OCTETS + SFD_OCTETS) as i64) * SYMBOLS_PER_OCTET)
        );
        assert_eq!(TURNAROUND, Duration::from_micros(192));
        assert_eq!(CCA, Duration::from_micros(128));
        // aUnitBackoffPeriod (Table 85) 20 symbols = 320 µs; macAckWaitDuration (Table 86)
        // aUnitBackoffPeriod + aTurnaroundTime + phySHRDuration + ⌈6 · phySymbolsPerOctet⌉ =
        // 20 + 12 + 10 + 12 = 54 symbols = 864 µs; both are the MAC's defaults
        // (docs/mesh-validation.md checks them against ns-3's lr-wpan).
        let csma = super::super::params::CsmaParams::default();
        assert_eq!(csma.unit_backoff, Duration::from_micros(320));
        assert_eq!(
            csma.ack_wait,
            symbols(20 + TURNAROUND_SYMBOLS + SHR_SYMBOLS + 6 * SYMBOLS_PER_OCTET)
        );
        assert_eq!(csma.ack_wait, Duration::from_micros(864));
        // An ACK ends aTurnaroundTime + its airtime = 544 µs after the data frame: inside the
        // wait, 320 µs (one unit backoff period) to spare.
        assert_eq!(
            csma.ack_wait - (TURNAROUND + airtime(5)),
            Duration::from_micros(320)
        );
    }
}
