//! Unslotted CSMA/CA with acknowledged retransmission, IEEE 802.15.4-2006 §7.5.1.4
//! (Figure 69) and §7.5.6.4, for one frame at a time.
//!
//! Sans-IO: the owner calls [`Csma::begin`] for a new frame and gets the instant the first
//! backoff ends (the CCA starts there and lasts [`phy::CCA`]); at the CCA's end it calls
//! [`Csma::cca_done`] with the channel's state; after an unacknowledged transmission,
//! [`Csma::no_ack`]. Each answer is a [`Next`]. Randomness is drawn only for backoffs: one
//! `below(2^BE)` draw per backoff.

use coaplab_base::rng::Random;
use coaplab_base::time::Instant;

use super::params::CsmaParams;
use super::phy;

/// What the MAC does next with the current frame.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Next {
    /// Back off; the CCA starts at this instant.
    Cca(Instant),
    /// The channel was idle: the frame goes on air at this instant (after `aTurnaroundTime`).
    Transmit(Instant),
    /// The frame is dropped.
    Fail(Failure),
}

/// Why a frame was dropped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Failure {
    /// More than `macMaxCSMABackoffs` busy CCAs in one attempt (`CHANNEL_ACCESS_FAILURE`).
    ChannelAccess,
    /// No ACK after `macMaxFrameRetries` retransmissions (`NO_ACK`).
    NoAck,
}

/// The CSMA/CA variables of one frame (§7.5.1.4: NB, BE; §7.5.6.4: retries).
#[derive(Debug, Clone)]
pub struct Csma {
    params: CsmaParams,
    /// NB: busy CCAs in this attempt.
    nb: u32,
    /// BE: the current backoff exponent.
    be: u32,
    /// Retransmissions of the current frame so far.
    retries: u32,
}

impl Csma {
    /// A MAC with `params`, idle.
    pub fn new(params: CsmaParams) -> Csma {
        Csma {
            params,
            nb: 0,
            be: params.min_be,
            retries: 0,
        }
    }

    /// The parameters.
    pub fn params(&self) -> &CsmaParams {
        &self.params
    }

    /// Retransmissions of the current frame so far.
    pub fn retries(&self) -> u32 {
        self.retries
    }

    /// A new frame at `now`: retries = 0, then a fresh attempt. Returns the CCA start.
    pub fn begin(&mut self, now: Instant, rng: &mut dyn Random) -> Instant {
        self.retries = 0;
        self.attempt(now, rng)
    }

    /// The CCA that started at `now - CCA` ended at `now`, finding the channel `busy` or not.
    pub fn cca_done(&mut self, now: Instant, busy: bool, rng: &mut dyn Random) -> Next {
        if !busy {
            return Next::Transmit(now + phy::TURNAROUND);
        }
        // §7.5.1.4 step (5): NB = NB + 1, BE = min(BE + 1, macMaxBE).
        self.nb += 1;
        self.be = (self.be + 1).min(self.params.max_be);
        if self.nb > self.params.max_csma_backoffs {
            Next::Fail(Failure::ChannelAccess)
        } else {
            Next::Cca(self.backoff(now, rng))
        }
    }

    /// The ACK wait after the transmission expired at `now` (§7.5.6.4.2): retransmit with a
    /// fresh CSMA/CA attempt, or give up after `macMaxFrameRetries`.
    pub fn no_ack(&mut self, now: Instant, rng: &mut dyn Random) -> Next {
        if self.retries >= self.params.max_frame_retries {
            return Next::Fail(Failure::NoAck);
        }
        self.retries += 1;
        Next::Cca(self.attempt(now, rng))
    }

    /// §7.5.1.4 step (1): NB = 0, BE = macMinBE, then a backoff.
    fn attempt(&mut self, now: Instant, rng: &mut dyn Random) -> Instant {
        self.nb = 0;
        self.be = self.params.min_be;
        self.backoff(now, rng)
    }

    /// §7.5.1.4 step (2): a random number of unit backoff periods in [0, 2^BE − 1].
    fn backoff(&self, now: Instant, rng: &mut dyn Random) -> Instant {
        let slots = rng.below(1u64 << self.be) as i64;
        now + coaplab_base::time::Duration::from_nanos(slots * self.params.unit_backoff.as_nanos())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use coaplab_base::rng::ScriptedRandom;

    fn us(t: i64) -> Instant {
        Instant::from_micros(t)
    }

    #[test]
    fn idle_channel_backoff_then_cca_then_turnaround() {
        // u = 0.5 with BE = 3: below(8) = 4 slots of 320 µs = 1,280 µs.
        let mut rng = ScriptedRandom::new(&[0.5]);
        let mut c = Csma::new(CsmaParams::default());
        assert_eq!(c.begin(us(1_000), &mut rng), us(2_280));
        // CCA 2,280..2,408 µs idle: on air 192 µs later.
        assert_eq!(
            c.cca_done(us(2_408), false, &mut rng),
            Next::Transmit(us(2_600))
        );
    }

    #[test]
    fn busy_ccas_grow_the_exponent_up_to_max_be_then_fail() {
        // Draws 0.999.. give the top slot: 7 (BE 3), 15 (BE 4), 31 (BE 5), 31 (BE 5 cap), 31.
        let mut rng = ScriptedRandom::new(&[0.0, 0.999, 0.999, 0.999, 0.999]);
        let mut c = Csma::new(CsmaParams::default());
        assert_eq!(c.begin(us(0), &mut rng), us(0));
        // busy #1 at 128: NB 1, BE 4 → 15 × 320 = 4,800.
        assert_eq!(c.cca_done(us(128), true, &mut rng), Next::Cca(us(4_928)));
        // busy #2 at 5,056: NB 2, BE 5 → 31 × 320 = 9,920.
        assert_eq!(c.cca_done(us(5_056), true, &mut rng), Next::Cca(us(14_976)));
        // busy #3 at 15,104: NB 3, BE 5 (macMaxBE).
        assert_eq!(
            c.cca_done(us(15_104), true, &mut rng),
            Next::Cca(us(25_024))
        );
        // busy #4 at 25,152: NB 4 = macMaxCSMABackoffs, still allowed.
        assert_eq!(
            c.cca_done(us(25_152), true, &mut rng),
            Next::Cca(us(35_072))
        );
        // busy #5: NB 5 > 4 → channel access failure, no draw.
        assert_eq!(
            c.cca_done(us(35_200), true, &mut rng),
            Next::Fail(Failure::ChannelAccess)
        );
        assert_eq!(rng.consumed(), 5);
    }

    #[test]
    fn missing_acks_restart_csma_until_max_frame_retries() {
        // Each attempt restarts at BE = macMinBE: u = 0.25 → below(8) = 2 slots = 640 µs.
        let mut rng = ScriptedRandom::new(&[0.25; 4]);
        let mut c = Csma::new(CsmaParams::default());
        let mut t = c.begin(us(0), &mut rng);
        assert_eq!(t, us(640));
        for retry in 1..=3 {
            // CCA idle, frame on air, ACK wait (864 µs from the frame's end) expires.
            let Next::Transmit(on_air) = c.cca_done(t + phy::CCA, false, &mut rng) else {
                panic!("idle CCA must transmit");
            };
            let expiry = on_air + phy::airtime(50) + CsmaParams::default().ack_wait;
            let Next::Cca(next) = c.no_ack(expiry, &mut rng) else {
                panic!("retry {retry} must back off");
            };
            assert_eq!(
                next,
                expiry + coaplab_base::time::Duration::from_micros(640)
            );
            assert_eq!(c.retries(), retry);
            t = next;
        }
        // First attempt: CCA 640..768, on air 960, 50-B frame 1,792 µs → 2,752, ACK wait → 3,616.
        let Next::Transmit(on_air) = c.cca_done(t + phy::CCA, false, &mut rng) else {
            panic!()
        };
        assert_eq!(
            c.no_ack(
                on_air + phy::airtime(50) + CsmaParams::default().ack_wait,
                &mut rng
            ),
            Next::Fail(Failure::NoAck)
        );
        assert_eq!(rng.consumed(), 4);
    }
}
