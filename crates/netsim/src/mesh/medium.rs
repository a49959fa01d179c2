//! The radio medium: Cooja's Unit Disk Graph Medium with distance loss (`UDGM`, "Distance
//! Loss"), read against contiki-os/contiki tag 3.0,
//! `tools/cooja/java/org/contikios/cooja/radiomediums/UDGM.java` (`U:line`) and
//! `AbstractRadioMedium.java` (`A:line`); docs/mesh-model.md has the full comparison.
//!
//! * A transmission fails for everyone with probability `1 − SUCCESS_RATIO_TX`
//!   (U:170 `createConnections`: one draw when the ratio is below 1); a failed one reaches
//!   nobody: no reception, no interference, no signal strength for anyone's CCA.
//! * A radio within the transmission range `R` (U:221, `distance <= R`) that is idle — not
//!   transmitting, not receiving, not interfered — starts receiving with probability
//!   `1 − (d² / R²) · (1 − SUCCESS_RATIO_RX)` (U:265–279 `getRxSuccessProbability`: exactly
//!   `SUCCESS_RATIO_RX` at `d = R`); otherwise, or when busy, it is interfered and its ongoing
//!   reception is lost (U:224–243; no draw for a busy radio, U:232–233).
//! * A radio beyond `R` but within the interference range (U:249, `distance <= I`) is
//!   interfered, whether or not it is receiving. Only radios closer than `max(R, I)` are
//!   considered at all (U:111 `analyzeEdges`, `distance <`).
//! * A radio that starts transmitting while receiving loses the reception
//!   (A:254–267 `TRANSMISSION_STARTED`): radios are half-duplex.
//! * An ACK is a transmission like any other (MSPSim's CC2420 sends its auto-ACK through the
//!   same RF path), so both ratios apply to it: see `Mesh`'s `schedule_ack`.
//! * CCA: Cooja's `UDGM.updateSignalStrengths` (U:281–348) gives a radio within `R` the signal
//!   strength `SS_STRONG + (d/R)(SS_WEAK − SS_STRONG)` = `−10 − 85 d/R` dBm and an interfered
//!   radio beyond `R` `SS_WEAK` = −95 dBm; Contiki's Cooja radio (`platform/cooja/dev/
//!   cooja-radio.c`, `CCA_SS_THRESHOLD −95`) calls the channel busy above the threshold (a
//!   parameter, default −95 dBm; Sky/Z1's emulated CC2420 under Contiki 3.0: about −90), so by
//!   default a CCA is busy exactly when a transmitter closer than `R` is on air — a neighbour
//!   at exactly `R` is heard by neither. The CCA here is busy if such a signal was on air at
//!   any moment of the 8-symbol window, or the radio itself transmits.
//!
//! Distances are compared with a relative tolerance of 1e-9, so generated layouts whose
//! neighbours sit at exactly the range in real numbers (a flower's petals) link as intended
//! despite floating-point rounding.
//!
//! One difference, on purpose: Cooja clears a radio's "interfered" flag at the end of the first
//! of the overlapping transmissions, so a third transmission starting while a second is still on
//! air can be received; here a radio receives only if it hears nothing else for the frame's
//! whole duration (a collision lasts as long as any overlapping signal).

use coaplab_base::rng::Random;
use coaplab_base::time::Instant;

/// Marks "no reception in progress".
const NONE: u16 = u16::MAX;

/// Cooja's `getRxSuccessProbability` at full output power: `1 − (d²/R²)(1 − ratio_rx)`, 0 beyond
/// `R` (and when `R` is 0).
pub fn rx_success_probability(distance_m: f64, tx_range_m: f64, success_ratio_rx: f64) -> f64 {
    if tx_range_m == 0.0 {
        return 0.0;
    }
    let ratio = (distance_m * distance_m) / (tx_range_m * tx_range_m);
    if ratio > 1.0 {
        0.0
    } else {
        1.0 - ratio * (1.0 - success_ratio_rx)
    }
}

/// Cooja's signal strength (dBm) at distance `d` from a sender with range `R`
/// (`UDGM.updateSignalStrengths`): `−10 − 85 d/R` within `R`, −95 beyond.
pub fn signal_strength_dbm(distance_m: f64, tx_range_m: f64) -> f64 {
    if tx_range_m > 0.0 && distance_m <= tx_range_m {
        -10.0 + (distance_m / tx_range_m) * (-95.0 + 10.0)
    } else {
        -95.0
    }
}

/// Relative tolerance of range comparisons.
const RANGE_TOLERANCE: f64 = 1e-9;

/// One directed edge of the medium graph: a radio that hears a sender.
#[derive(Debug, Clone, Copy)]
struct Edge {
    to: u16,
    /// Within the TX range: may decode.
    in_tx_range: bool,
    /// What a signal on this edge adds to the receiver's [`Radio::load`]: one signal, and one
    /// CCA-busy signal when closer than the TX range ([`CCA_SIGNAL`]).
    load: u32,
    /// Reception probability when idle.
    rx_probability: f64,
}

/// One signal on air at a radio, in [`Radio::load`].
const SIGNAL: u32 = 1;
/// One signal that makes the radio's CCA busy, in [`Radio::load`] (also counted as a
/// [`SIGNAL`]).
const CCA_SIGNAL: u32 = 1 << 16;
/// The radio itself transmits, in [`Radio::load`].
const TRANSMITTING: u32 = 1 << 31;
/// The CCA-busy signals and the radio's own transmission, in [`Radio::load`].
const CCA_BUSY: u32 = TRANSMITTING | (0x7fff * CCA_SIGNAL);

/// One radio's state.
#[derive(Debug, Clone, Copy)]
struct Radio {
    /// What is on air at the radio, in one word: signals (decodable or not) in the low 16
    /// bits, those that make its CCA busy in the next 15, and [`TRANSMITTING`]. One word,
    /// so that a listener's idle test is one compare and a transmission's start and end
    /// update its counts with one add or subtract, without a branch on the CCA flag (the
    /// listener loops of [`Udgm::start_tx`] and [`Udgm::end_tx`] run about six times per
    /// frame on the Ch. 6 grid: with the callback of `end_tx`, 4.7 M of 190 M instructions
    /// in the frames' start and end; docs/mesh-model.md, "Simulation cost"). A mesh has at most
    /// [`super::layout::MAX_NODES`] radios, so neither count reaches 32,768.
    load: u32,
    /// The current transmission failed the TX draw: nobody hears it.
    tx_failed: bool,
    /// Whether the reception from `rx_from` is still intact (never with `rx_from` [`NONE`]).
    rx_ok: bool,
    /// The sender being received, or [`NONE`].
    rx_from: u16,
    /// When the last CCA-busy signal ended.
    cca_last_end: Instant,
}

/// Counters of the medium.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct MediumStats {
    /// Transmissions started (data and ACK).
    pub transmissions: u64,
    /// Transmissions lost for everyone (`SUCCESS_RATIO_TX`).
    pub tx_failures: u64,
    /// Receptions that never started because the RX draw failed.
    pub rx_failures: u64,
    /// Receptions lost to an overlapping signal or to the receiver transmitting.
    pub collisions: u64,
}

/// The radio parameters that decide an edge.
#[derive(Debug, Clone, Copy)]
struct Ranges {
    tx_range_m: f64,
    interference_range_m: f64,
    success_ratio_rx: f64,
    cca_threshold_dbm: f64,
}

impl Ranges {
    /// The edge from a sender at `s` to a radio `to` at `r`, if `to` hears it at all.
    fn edge(&self, s: (f64, f64), r: (f64, f64), to: u16) -> Option<Edge> {
        let (tx, itf) = (self.tx_range_m, self.interference_range_m);
        let d = ((s.0 - r.0) * (s.0 - r.0) + (s.1 - r.1) * (s.1 - r.1)).sqrt();
        // Snap a distance within the tolerance of a range onto it.
        let d = [tx, itf]
            .into_iter()
            .find(|&range| (d - range).abs() <= range * RANGE_TOLERANCE)
            .unwrap_or(d);
        let in_tx_range = d <= tx;
        if d >= tx.max(itf) || (!in_tx_range && d > itf) {
            return None;
        }
        let cca = signal_strength_dbm(d, tx) > self.cca_threshold_dbm;
        Some(Edge {
            to,
            in_tx_range,
            load: if cca { SIGNAL | CCA_SIGNAL } else { SIGNAL },
            rx_probability: rx_success_probability(d, tx, self.success_ratio_rx),
        })
    }
}

/// The UDGM medium over node positions: fixed, or moved per transmission ([`Udgm::relink`]).
#[derive(Debug, Clone)]
pub struct Udgm {
    /// `out[n]`: node `n`'s listeners, as of its last transmission's start.
    out: Vec<Vec<Edge>>,
    ranges: Ranges,
    success_ratio_tx: f64,
    /// A reception draws: some probability in range is below 1 (`SUCCESS_RATIO_RX` below 1, or
    /// a zero range, where [`rx_success_probability`] is 0), or the TX draws share the stream
    /// (`SUCCESS_RATIO_TX` below 1: skipping the RX draws would shift every later TX draw and
    /// change results). See [`Udgm::start_tx`].
    rx_draws: bool,
    radios: Vec<Radio>,
    stats: MediumStats,
}

impl Udgm {
    /// The medium between radios at `positions` (metres).
    pub fn new(
        positions: &[(f64, f64)],
        tx_range_m: f64,
        interference_range_m: f64,
        success_ratio_tx: f64,
        success_ratio_rx: f64,
        cca_threshold_dbm: f64,
    ) -> Udgm {
        let idle = Radio {
            load: 0,
            tx_failed: false,
            rx_ok: false,
            rx_from: NONE,
            cca_last_end: Instant::from_nanos(i64::MIN),
        };
        let mut m = Udgm {
            out: vec![Vec::new(); positions.len()],
            ranges: Ranges {
                tx_range_m,
                interference_range_m,
                success_ratio_rx,
                cca_threshold_dbm,
            },
            success_ratio_tx,
            rx_draws: !(success_ratio_rx >= 1.0 && success_ratio_tx >= 1.0 && tx_range_m > 0.0),
            radios: vec![idle; positions.len()],
            stats: MediumStats::default(),
        };
        for s in 0..positions.len() {
            m.relink(s as u16, positions);
        }
        m
    }

    /// Recomputes `node`'s listeners from `positions` (where every radio is now): a moving
    /// mesh calls it just before `node` starts transmitting, so the whole frame is judged by
    /// the distances at its start. Not while `node` transmits (its end must undo the same
    /// edges its start used).
    pub fn relink(&mut self, node: u16, positions: &[(f64, f64)]) {
        debug_assert!(!self.is_transmitting(node));
        let s = positions[node as usize];
        let mut edges = std::mem::take(&mut self.out[node as usize]);
        edges.clear();
        edges.extend(
            positions
                .iter()
                .enumerate()
                .filter(|&(r, _)| r != node as usize)
                .filter_map(|(r, &p)| self.ranges.edge(s, p, r as u16)),
        );
        self.out[node as usize] = edges;
    }

    /// Whether radios at `a` and `b` are linked for routing: within the TX range with a
    /// non-zero reception probability (UDGM links are symmetric).
    pub fn linked(&self, a: (f64, f64), b: (f64, f64)) -> bool {
        self.ranges
            .edge(a, b, 0)
            .is_some_and(|e| e.in_tx_range && e.rx_probability > 0.0)
    }

    /// Counters so far.
    pub fn stats(&self) -> MediumStats {
        self.stats
    }

    /// Radios within the TX range of `node` with a non-zero reception probability (the
    /// links routing may use).
    pub fn links(&self, node: u16) -> impl Iterator<Item = u16> + '_ {
        self.out[node as usize]
            .iter()
            .filter(|e| e.in_tx_range && e.rx_probability > 0.0)
            .map(|e| e.to)
    }

    /// Whether `node` is transmitting.
    pub fn is_transmitting(&self, node: u16) -> bool {
        self.radios[node as usize].load & TRANSMITTING != 0
    }

    /// Whether `node`'s CCA over `[cca_start, now]` finds the channel busy.
    pub fn cca_busy(&self, node: u16, cca_start: Instant) -> bool {
        let r = &self.radios[node as usize];
        r.load & CCA_BUSY != 0 || r.cca_last_end > cca_start
    }

    /// `node` is receiving a frame it can decode so far (Cooja's `ContikiRadio` between
    /// `signalReceptionStart` and the end or an interference: the radio driver's
    /// `receiving_packet()`).
    pub fn is_receiving(&self, node: u16) -> bool {
        self.radios[node as usize].rx_ok
    }

    /// `sender` starts transmitting (it must not be transmitting already).
    pub fn start_tx(&mut self, sender: u16, rng: &mut dyn Random) {
        self.stats.transmissions += 1;
        let s = &mut self.radios[sender as usize];
        if s.rx_ok {
            s.rx_ok = false;
            self.stats.collisions += 1;
        }
        s.load |= TRANSMITTING;
        s.tx_failed = false;
        if self.success_ratio_tx < 1.0 && rng.uniform01() > self.success_ratio_tx {
            s.tx_failed = true;
            self.stats.tx_failures += 1;
            return;
        }
        let radios = &mut self.radios;
        for e in &self.out[sender as usize] {
            let r = &mut radios[e.to as usize];
            // Idle: not transmitting, no signal on air.
            if r.load == 0 && e.in_tx_range {
                // Idle radio in range: UDGM's RX draw. With both success ratios 1 every
                // probability in range is exactly 1, which no draw in [0, 1) exceeds, and
                // nothing else draws from the medium's stream: the draws would decide
                // nothing, so none is made, as for the TX draw at ratio 1.
                if self.rx_draws && rng.uniform01() > e.rx_probability {
                    self.stats.rx_failures += 1;
                } else {
                    r.rx_from = sender;
                    r.rx_ok = true;
                }
            } else if r.rx_ok {
                r.rx_ok = false;
                self.stats.collisions += 1;
            }
            r.load += e.load;
        }
    }

    /// `sender`'s transmission ends at `now`; `decoded` is called with each radio that decoded
    /// it, in listener order. A callback rather than a list: a unicast frame only asks whether
    /// its addressee is among them (docs/mesh-model.md, "Simulation cost").
    #[inline(always)]
    pub fn end_tx(&mut self, sender: u16, now: Instant, mut decoded: impl FnMut(u16)) {
        let s = &mut self.radios[sender as usize];
        s.load &= !TRANSMITTING;
        if s.tx_failed {
            s.tx_failed = false;
            return;
        }
        let radios = &mut self.radios;
        for e in &self.out[sender as usize] {
            let r = &mut radios[e.to as usize];
            r.load -= e.load;
            if e.load & CCA_SIGNAL != 0 {
                r.cca_last_end = now;
            }
            if r.rx_from == sender {
                if r.rx_ok {
                    decoded(e.to);
                }
                r.rx_from = NONE;
                r.rx_ok = false;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use coaplab_base::rng::ScriptedRandom;

    fn t(us: i64) -> Instant {
        Instant::from_micros(us)
    }

    /// The radios that decoded `sender`'s transmission ending at `now`, in listener order.
    fn ended(m: &mut Udgm, sender: u16, now: Instant) -> Vec<u16> {
        let mut decoded = Vec::new();
        m.end_tx(sender, now, |r| decoded.push(r));
        decoded
    }

    #[test]
    fn rx_probability_scales_with_the_square_of_distance_as_in_cooja() {
        // UDGM.java: 1 - (d^2 / R^2) * (1 - SUCCESS_RATIO_RX).
        assert_eq!(rx_success_probability(0.0, 10.0, 0.5), 1.0);
        assert_eq!(rx_success_probability(5.0, 10.0, 0.5), 0.875);
        assert_eq!(rx_success_probability(10.0, 10.0, 0.5), 0.5);
        assert_eq!(rx_success_probability(10.01, 10.0, 0.5), 0.0);
        assert_eq!(rx_success_probability(3.0, 0.0, 1.0), 0.0);
    }

    #[test]
    fn overlapping_transmissions_collide_at_a_common_receiver() {
        // 0 — 1 — 2 on a line, 10 m apart: 0 and 2 both reach 1; 0 and 2 are 20 m apart, not
        // closer than max(R, I) = 20 m, so they do not hear each other at all.
        let mut m = Udgm::new(
            &[(0.0, 0.0), (10.0, 0.0), (20.0, 0.0)],
            10.0,
            20.0,
            1.0,
            1.0,
            -95.0,
        );
        let mut rng = ScriptedRandom::new(&[0.0; 8]);
        // 0 and 2 are hidden terminals: 2's CCA does not see 0. Nor does 1's, at exactly R
        // (−95 dBm is not above the −95 dBm threshold), as in Cooja.
        m.start_tx(0, &mut rng);
        assert!(!m.cca_busy(2, t(0)));
        assert!(!m.cca_busy(1, t(0)));
        let mut closer = Udgm::new(&[(0.0, 0.0), (9.0, 0.0)], 10.0, 20.0, 1.0, 1.0, -95.0);
        closer.start_tx(0, &mut rng);
        assert!(closer.cca_busy(1, t(0)));
        // signal −10 − 85 × 0.9 = −86.5 dBm: a −77 dBm threshold (CC2420 default) misses it.
        assert_eq!(signal_strength_dbm(9.0, 10.0), -86.5);
        let mut cc2420 = Udgm::new(&[(0.0, 0.0), (9.0, 0.0)], 10.0, 20.0, 1.0, 1.0, -77.0);
        cc2420.start_tx(0, &mut rng);
        assert!(!cc2420.cca_busy(1, t(0)));
        m.start_tx(2, &mut rng);
        assert_eq!(ended(&mut m, 0, t(1_000)), &[] as &[u16]);
        assert_eq!(ended(&mut m, 2, t(1_100)), &[] as &[u16]);
        assert_eq!(m.stats().collisions, 1);
        // Alone, 0 reaches 1 only.
        m.start_tx(0, &mut rng);
        assert_eq!(ended(&mut m, 0, t(2_000)), &[1]);
        // The CCA window remembers a signal that ended inside it.
        let _ = ended(&mut closer, 0, t(2_000));
        assert!(closer.cca_busy(1, t(1_999)));
        assert!(!closer.cca_busy(1, t(2_000)));
    }

    #[test]
    fn interference_range_corrupts_without_decoding_and_tx_failure_is_silent() {
        // 1 is 15 m from 0: interfered by 0, decodes 2 (5 m away) unless 0 overlaps.
        let pos = [(0.0, 0.0), (15.0, 0.0), (20.0, 0.0)];
        let mut m = Udgm::new(&pos, 10.0, 20.0, 1.0, 1.0, -95.0);
        let mut rng = ScriptedRandom::new(&[0.0; 8]);
        m.start_tx(2, &mut rng);
        m.start_tx(0, &mut rng);
        assert!(m.cca_busy(1, t(0)));
        assert_eq!(ended(&mut m, 2, t(500)), &[] as &[u16]);
        assert_eq!(ended(&mut m, 0, t(600)), &[] as &[u16]);
        // SUCCESS_RATIO_TX 0.5: a draw above 0.5 silences the whole transmission.
        let mut m = Udgm::new(&pos, 10.0, 20.0, 0.5, 1.0, -95.0);
        let mut rng = ScriptedRandom::new(&[0.7, 0.3, 0.0]);
        m.start_tx(2, &mut rng);
        assert!(!m.cca_busy(1, t(0)));
        assert_eq!(ended(&mut m, 2, t(500)), &[] as &[u16]);
        m.start_tx(2, &mut rng);
        assert_eq!(ended(&mut m, 2, t(1_000)), &[1]);
        assert_eq!(m.stats().tx_failures, 1);
    }

    #[test]
    fn a_failed_transmission_does_not_disturb_a_reception_in_progress() {
        // UDGM.java:170-172 returns the empty connection before any receiver is visited: 1,
        // receiving 0, is not interfered by 2's failed transmission, though 2 is 10 m away.
        let pos = [(0.0, 0.0), (10.0, 0.0), (20.0, 0.0)];
        let mut m = Udgm::new(&pos, 10.0, 20.0, 0.5, 0.5, -95.0);
        // 0: TX draw 0.4 ≤ 0.5 passes, RX draw at d = R 0.5 ≤ 0.5 passes (exactly the edge
        // ratio); 2: TX draw 0.6 > 0.5 fails, no RX draw.
        let mut rng = ScriptedRandom::new(&[0.4, 0.5, 0.6]);
        m.start_tx(0, &mut rng);
        m.start_tx(2, &mut rng);
        assert_eq!(rng.consumed(), 3);
        assert_eq!(ended(&mut m, 2, t(300)), &[] as &[u16]);
        assert_eq!(ended(&mut m, 0, t(500)), &[1]);
        assert_eq!((m.stats().tx_failures, m.stats().collisions), (1, 0));
        // A draw just above the edge ratio fails the reception.
        let mut rng = ScriptedRandom::new(&[0.4, 0.500_001]);
        m.start_tx(0, &mut rng);
        assert_eq!(ended(&mut m, 0, t(1_000)), &[] as &[u16]);
        assert_eq!(m.stats().rx_failures, 1);
    }

    #[test]
    fn a_receiver_that_starts_transmitting_loses_its_reception() {
        let mut m = Udgm::new(&[(0.0, 0.0), (10.0, 0.0)], 10.0, 20.0, 1.0, 1.0, -95.0);
        let mut rng = ScriptedRandom::new(&[0.0; 4]);
        m.start_tx(0, &mut rng);
        m.start_tx(1, &mut rng);
        assert_eq!(ended(&mut m, 0, t(500)), &[] as &[u16]);
        assert_eq!(ended(&mut m, 1, t(600)), &[] as &[u16]);
    }
}
