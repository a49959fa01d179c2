//! Contiki 3.0's own MACs over NullRDC, as the Rathod thesis's motes ran them: `csma_driver`
//! (`core/net/mac/csma.c`) and `nullmac_driver` (`core/net/mac/nullmac.c`), beside the
//! IEEE 802.15.4 unslotted CSMA/CA of [`super::csma`]. Selected by the mesh parameter `mac`
//! ([`Discipline`]).
//!
//! What Contiki 3.0's `csma.c` does, and this module reproduces (docs/mesh-model.md, "Contiki
//! 3.0's MACs"):
//! * **Per-neighbour queues**, at most `CSMA_MAX_NEIGHBOR_QUEUES` (2) at a time; a packet for
//!   another neighbour is dropped (`MAC_TX_ERR`, "could not allocate neighbor").
//! * **No initial backoff**: a packet that becomes the head of its neighbour's queue is sent at
//!   once (`ctimer_set(..., 0, transmit_packet_list, n)`); NullRDC then checks the channel
//!   once (CCA) and transmits.
//! * **A busy channel** (`MAC_TX_COLLISION`) is retried after `T + random % (2^e × T)` with
//!   `T = CLOCK_SECOND / NETSTACK_RDC_CHANNEL_CHECK_RATE` (1/8 s) and `e = min(transmissions,
//!   CSMA_MAX_BACKOFF_EXPONENT 3)`; collisions do not count towards the packet's limit.
//! * **A missing ACK** (`MAC_TX_NOACK`) counts one transmission and is retried after the same
//!   backoff until `PACKETBUF_ATTR_MAX_MAC_TRANSMISSIONS` (sicslowpan's
//!   `SICSLOWPAN_MAX_MAC_TRANSMISSIONS`: 4 on Z1, 5 on Sky, 8 on Cooja motes) is reached.
//! * **After a packet**: the neighbour's next packet follows at once when it was sent (NullRDC's
//!   `send_list` sends a neighbour's list back to back), `T` later when it was dropped
//!   (`free_packet`'s `ctimer_set(default_timebase())`).
//!
//! `nullmac.c` hands each packet to NullRDC once: one CCA, no retry of a busy channel and no
//! retransmission without an ACK.
//!
//! Sans-IO: the owner asks [`ContikiQueues::next_due`] which neighbour's queue is served next
//! and reports each outcome; randomness is drawn only for backoffs, one `below` per backoff.

use coaplab_base::rng::Random;
use coaplab_base::time::{Duration, Instant};

/// Which MAC a mesh node runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Discipline {
    /// IEEE 802.15.4-2006 unslotted CSMA/CA with `macMaxFrameRetries` ([`super::csma`]).
    Ieee802154,
    /// Contiki 3.0's `csma_driver` over `nullrdc_driver`.
    ContikiCsma,
    /// Contiki 3.0's `nullmac_driver` over `nullrdc_driver`.
    ContikiNullmac,
}

impl Discipline {
    /// The names of the mesh parameter `mac`, in [`Discipline`] order.
    pub const NAMES: &'static [&'static str] = &["ieee802154", "contiki-csma", "contiki-nullmac"];

    /// The discipline named `name` (one of [`Discipline::NAMES`]).
    pub fn from_name(name: &str) -> Option<Discipline> {
        match name {
            "ieee802154" => Some(Discipline::Ieee802154),
            "contiki-csma" => Some(Discipline::ContikiCsma),
            "contiki-nullmac" => Some(Discipline::ContikiNullmac),
            _ => None,
        }
    }
}

/// Contiki's MAC constants (resolved from the mesh parameters).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ContikiParams {
    /// `CLOCK_SECOND`: clock ticks per second (128 on Sky/Z1, 1000 on Cooja motes).
    pub clock_hz: u32,
    /// `NETSTACK_RDC_CHANNEL_CHECK_RATE` (8): `T` is `clock_hz / rate` ticks.
    pub channel_check_rate: u32,
    /// `CSMA_MAX_NEIGHBOR_QUEUES` (2).
    pub neighbor_queues: u32,
    /// `SICSLOWPAN_MAX_MAC_TRANSMISSIONS`: transmissions of one packet without an ACK.
    pub max_transmissions: u32,
    /// NullRDC's `ACK_WAIT_TIME` after a unicast frame (13 rtimer ticks of 1/32,768 s on
    /// Sky/Z1, 2 ms on Cooja motes).
    pub ack_wait: Duration,
    /// NullRDC's `AFTER_ACK_DETECTED_WAIT_TIME` (21 ticks on Sky/Z1, 0 on Cooja motes).
    pub after_ack_wait: Duration,
    /// From the radio driver's send to the frame on air (CC2420 `STXONCCA`: 8-symbol CCA and
    /// 12-symbol turnaround, 320 µs; Cooja motes' radio: two 1-ms yields).
    pub tx_delay: Duration,
    /// From a frame's end to its ACK on air (CC2420 hardware auto-ACK: 192 µs; Cooja motes:
    /// NullRDC's software ACK through the radio's send, one 1-ms yield).
    pub ack_delay: Duration,
}

/// `CSMA_MAX_BACKOFF_EXPONENT` of Contiki 3.0's `csma.c`.
pub const MAX_BACKOFF_EXPONENT: u32 = 3;

impl ContikiParams {
    /// `default_timebase()` in ticks: `CLOCK_SECOND / NETSTACK_RDC_CHANNEL_CHECK_RATE`
    /// (integer division as in C: 16 ticks of 1/128 s, 125 of 1 ms).
    pub fn timebase_ticks(&self) -> u64 {
        u64::from((self.clock_hz / self.channel_check_rate).max(1))
    }

    /// One clock tick.
    pub fn tick(&self) -> Duration {
        Duration::from_nanos(1_000_000_000 / i64::from(self.clock_hz.max(1)))
    }

    /// `default_timebase()` as a duration.
    pub fn timebase(&self) -> Duration {
        Duration::from_nanos(self.tick().as_nanos() * self.timebase_ticks() as i64)
    }
}

/// The queue state `csma.c` keeps per neighbour (`struct neighbor_queue`): its packets are the
/// owner's frames addressed to `to`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NeighbourQueue {
    /// The neighbour's MAC address (node id, or the broadcast address).
    pub to: u16,
    /// Transmissions of the head packet so far without an ACK (`n->transmissions`).
    pub transmissions: u32,
    /// When the neighbour's `transmit_timer` fires.
    pub due: Instant,
}

/// One node's neighbour queues.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ContikiQueues {
    params: ContikiParams,
    /// In allocation order (`list_add(neighbor_list, n)`).
    neighbours: Vec<NeighbourQueue>,
}

impl ContikiQueues {
    /// No neighbour queue yet.
    pub fn new(params: ContikiParams) -> ContikiQueues {
        ContikiQueues {
            params,
            neighbours: Vec::new(),
        }
    }

    /// The constants.
    pub fn params(&self) -> &ContikiParams {
        &self.params
    }

    /// A packet for `to` can be queued: `to` has a queue, or one more may be allocated
    /// (`nullmac` has none and admits everything).
    pub fn admits(&self, to: u16, discipline: Discipline) -> bool {
        discipline != Discipline::ContikiCsma
            || self.neighbours.iter().any(|n| n.to == to)
            || self.neighbours.len() < self.params.neighbor_queues as usize
    }

    /// A packet for `to` was queued at `now`: a new neighbour queue is due at once.
    pub fn queued(&mut self, to: u16, now: Instant) {
        if !self.neighbours.iter().any(|n| n.to == to) {
            self.neighbours.push(NeighbourQueue {
                to,
                transmissions: 0,
                due: now,
            });
        }
    }

    /// The neighbour queue served next: the earliest `due` (the first allocated on a tie).
    pub fn next_due(&self) -> Option<NeighbourQueue> {
        self.neighbours
            .iter()
            .copied()
            .reduce(|a, b| if b.due < a.due { b } else { a })
    }

    /// `to`'s queue, if any.
    pub fn get(&self, to: u16) -> Option<NeighbourQueue> {
        self.neighbours.iter().copied().find(|n| n.to == to)
    }

    fn entry(&mut self, to: u16) -> &mut NeighbourQueue {
        self.neighbours
            .iter_mut()
            .find(|n| n.to == to)
            .expect("a frame's neighbour has a queue")
    }

    /// `packet_sent`'s retransmission time after `transmissions` without an ACK: `T +
    /// random_rand() % (2^min(transmissions, 3) × T)` ticks.
    fn backoff(&self, transmissions: u32, rng: &mut dyn Random) -> Duration {
        let t = self.params.timebase_ticks();
        let e = transmissions.min(MAX_BACKOFF_EXPONENT);
        let ticks = t + rng.below((1u64 << e) * t);
        Duration::from_nanos(self.params.tick().as_nanos() * ticks as i64)
    }

    /// The head packet for `to` met a busy channel at `now` (`MAC_TX_COLLISION`): retried
    /// after a backoff; collisions are not counted.
    pub fn collision(&mut self, to: u16, now: Instant, rng: &mut dyn Random) {
        let tx = self.entry(to).transmissions;
        let wait = self.backoff(tx, rng);
        self.entry(to).due = now + wait;
    }

    /// The head packet for `to` was not acknowledged at `now` (`MAC_TX_NOACK`): `true` and a
    /// backoff when another transmission is allowed, `false` when the packet is to be dropped.
    pub fn no_ack(&mut self, to: u16, now: Instant, rng: &mut dyn Random) -> bool {
        let max = self.params.max_transmissions;
        let tx = {
            let e = self.entry(to);
            e.transmissions += 1;
            e.transmissions
        };
        if tx >= max {
            return false;
        }
        let wait = self.backoff(tx, rng);
        self.entry(to).due = now + wait;
        true
    }

    /// The head packet for `to` is done at `now`, sent or `dropped`; `more`: `to` has further
    /// packets queued. `free_packet`: the next one follows at once after a sent packet
    /// (`send_list`), `T` later after a dropped one; without more the queue is freed.
    pub fn done(&mut self, to: u16, now: Instant, more: bool, dropped: bool) {
        if !more {
            self.neighbours.retain(|n| n.to != to);
            return;
        }
        let timebase = self.params.timebase();
        let e = self.entry(to);
        e.transmissions = 0;
        e.due = if dropped { now + timebase } else { now };
    }

    /// Frees the queues of the neighbours `has_frames` says nothing is queued for (after the
    /// owner removed a dropped datagram's remaining fragments).
    pub fn free_empty(&mut self, has_frames: impl Fn(u16) -> bool) {
        self.neighbours.retain(|n| has_frames(n.to));
    }

    /// Transmissions of `to`'s head packet so far (0 without a queue).
    pub fn transmissions(&self, to: u16) -> u32 {
        self.get(to).map_or(0, |n| n.transmissions)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use coaplab_base::rng::ScriptedRandom;

    const SKY: ContikiParams = ContikiParams {
        clock_hz: 128,
        channel_check_rate: 8,
        neighbor_queues: 2,
        max_transmissions: 5,
        ack_wait: Duration::from_micros(397),
        after_ack_wait: Duration::from_micros(641),
        tx_delay: Duration::from_micros(320),
        ack_delay: Duration::from_micros(192),
    };
    const COOJA: ContikiParams = ContikiParams {
        clock_hz: 1000,
        channel_check_rate: 8,
        neighbor_queues: 2,
        max_transmissions: 8,
        ack_wait: Duration::from_micros(2000),
        after_ack_wait: Duration::ZERO,
        tx_delay: Duration::from_millis(2),
        ack_delay: Duration::from_millis(1),
    };

    fn ms(t: i64) -> Instant {
        Instant::from_micros(t * 1000)
    }

    #[test]
    fn timebase_is_an_eighth_of_a_second_in_whole_ticks() {
        assert_eq!(SKY.timebase_ticks(), 16);
        assert_eq!(SKY.timebase(), Duration::from_micros(125_000));
        assert_eq!(COOJA.timebase_ticks(), 125);
        assert_eq!(COOJA.timebase(), Duration::from_millis(125));
    }

    #[test]
    fn a_third_neighbour_is_refused_while_two_queues_exist() {
        let mut q = ContikiQueues::new(SKY);
        q.queued(1, ms(0));
        q.queued(2, ms(5));
        assert!(q.admits(1, Discipline::ContikiCsma));
        assert!(!q.admits(3, Discipline::ContikiCsma));
        assert!(q.admits(3, Discipline::ContikiNullmac));
        assert_eq!(q.next_due().map(|n| n.to), Some(1));
        q.done(1, ms(10), false, false);
        assert!(q.admits(3, Discipline::ContikiCsma));
    }

    #[test]
    fn collisions_back_off_from_the_timebase_without_counting() {
        // Cooja motes: T = 125 ticks of 1 ms; e = 0 → T + below(125): u = 0.5 → 62.
        let mut rng = ScriptedRandom::new(&[0.5, 0.5]);
        let mut q = ContikiQueues::new(COOJA);
        q.queued(7, ms(0));
        q.collision(7, ms(1), &mut rng);
        assert_eq!(q.get(7).unwrap().due, ms(1 + 125 + 62));
        assert_eq!(q.transmissions(7), 0);
        q.collision(7, ms(200), &mut rng);
        assert_eq!(q.get(7).unwrap().due, ms(200 + 187));
    }

    #[test]
    fn missing_acks_double_the_window_up_to_eight_timebases_then_drop() {
        // Sky: T = 16 ticks of 7.8125 ms; draws at the top of each window.
        let mut rng = ScriptedRandom::new(&[0.999; 4]);
        let mut q = ContikiQueues::new(SKY);
        q.queued(4, ms(0));
        let tick = SKY.tick();
        // transmission 1 unacknowledged: e = 1 → 16 + below(32) = 16 + 31 ticks.
        assert!(q.no_ack(4, ms(0), &mut rng));
        assert_eq!(q.get(4).unwrap().due, ms(0) + tick * 47);
        // 2: e = 2 → 16 + 63; 3: e = 3 → 16 + 127; 4: e = 3 (the cap) → 16 + 127.
        assert!(q.no_ack(4, ms(0), &mut rng));
        assert_eq!(q.get(4).unwrap().due, ms(0) + tick * 79);
        assert!(q.no_ack(4, ms(0), &mut rng));
        assert_eq!(q.get(4).unwrap().due, ms(0) + tick * 143);
        assert!(q.no_ack(4, ms(0), &mut rng));
        assert_eq!(q.get(4).unwrap().due, ms(0) + tick * 143);
        // The fifth transmission unacknowledged: the packet is dropped, no draw.
        assert!(!q.no_ack(4, ms(0), &mut rng));
        assert_eq!(rng.consumed(), 4);
    }

    #[test]
    fn the_next_packet_follows_at_once_after_a_sent_one_and_a_timebase_after_a_drop() {
        let mut q = ContikiQueues::new(COOJA);
        q.queued(2, ms(0));
        q.done(2, ms(3), true, false);
        assert_eq!(q.get(2).unwrap().due, ms(3));
        q.done(2, ms(9), true, true);
        assert_eq!(q.get(2).unwrap().due, ms(9 + 125));
        assert_eq!(q.transmissions(2), 0);
    }
}
