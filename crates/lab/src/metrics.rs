//! Turns endpoint events and packet deliveries into per-flow records (docs/experiments.md §7).
//!
//! Endpoint events give transmissions, timer expiries, CoAP RTTs and outcomes; the packet
//! tags the simulator attaches give ground truth for unnecessary retransmissions: a copy
//! i ≥ 1 is unnecessary iff the server's reply to some earlier copy j < i reached the client
//! (which implies copy j reached the server) before the run ended.

use coaplab_cc::time::{Duration, Instant};
use coaplab_endpoint::Event;

use crate::mesh_metrics::{MeshFlowMetrics, Totals};
use crate::results::{FlowRecord, TimerExpiry, Unfinished};

/// IPv4 + UDP header bytes added to every CoAP message.
pub const IP_UDP_HEADER_BYTES: u64 = 28;

/// Ground truth about one exchange of a flow.
#[derive(Debug, Clone, Copy, Default)]
struct ExchangeTruth {
    /// Copies sent.
    copies: u32,
    /// The smallest copy ordinal whose reply reached the client.
    first_answered: Option<u32>,
}

/// Everything measured about one flow.
///
/// The fields in declaration order (`repr(C)`), grouped by when they are written: per copy
/// sent, per endpoint event, per completed exchange, at the end. A simulated run keeps one per
/// flow inside its client's state, whose distinct cache lines touched per event are the cost of
/// a run with many flows (issue 35); the compiler's order spread these over four lines.
#[derive(Debug, Clone, Default)]
#[repr(C)]
pub struct FlowMetrics {
    /// Copies sent.
    pub transmissions: u64,
    /// Copies after the original.
    pub retransmissions: u64,
    /// IP bytes the client sent.
    pub bytes_up: u64,
    /// Added to the current endpoint's exchange ids: a fresh short-lived client's endpoint
    /// numbers its exchanges from 0 again ([`FlowMetrics::start_new_client`]).
    exchange_base: u64,
    /// The newest sent exchange's truth (flow exchange id, truth), written to `truth` when a
    /// copy of another exchange is sent: its copies and most replies concern it, and this
    /// struct is fetched for every event anyway, whereas its element of `truth` was one more
    /// cache miss per copy and per reply (issue 17).
    newest: Option<(u64, ExchangeTruth)>,
    /// When the flow sent its first request.
    pub first_sent: Option<Instant>,
    /// The multi-hop experiments' metrics ([`crate::mesh_metrics`]), when the run writes them.
    pub mesh: Option<Box<MeshFlowMetrics>>,
    /// Timer expiries.
    pub timeouts: u64,
    /// Largest expired armed timer.
    pub rto_max: Option<Duration>,
    /// Every timer expiry, when `timers.csv` is asked for (`[output] timers`); `None`
    /// otherwise, so the hot path keeps nothing it does not write.
    pub expiries: Option<Vec<TimerExpiry>>,
    /// Successful requests.
    pub exchanges: u32,
    /// Failed requests.
    pub failed_exchanges: u32,
    /// CoAP RTT of every completed exchange.
    pub rtts: Vec<Duration>,
    /// Successful exchanges by transmissions needed (index = transmissions − 1).
    pub transmission_counts: Vec<u32>,
    /// Per exchange; the newest's element is empty (counts nothing) while it is in `newest`.
    truth: Vec<ExchangeTruth>,
    /// When the flow met its quota (its last answer arrived).
    pub finished: Option<Instant>,
    /// When the flow ended without completing (its long transfer failed, an answer was not
    /// whole): the record's `unfinished = gave_up`.
    pub gave_up_at: Option<Instant>,
    /// IP bytes the server sent to this client.
    pub bytes_down: u64,
}

impl FlowMetrics {
    /// Empty metrics that keep every timer expiry when `keep_expiries` (`[output] timers`).
    pub fn with_expiries(keep_expiries: bool) -> Self {
        FlowMetrics {
            expiries: keep_expiries.then(Vec::new),
            ..FlowMetrics::default()
        }
    }

    /// These metrics with room for `exchanges` exchanges' RTTs and truth: grown from empty, a
    /// flow's vectors were reallocated and copied six times each over a 50-exchange run, one
    /// in three of the simulated run's reallocations (issue 35).
    pub fn with_room_for(mut self, exchanges: usize) -> Self {
        self.rtts.reserve_exact(exchanges);
        self.truth.reserve_exact(exchanges);
        self
    }

    /// These metrics with the multi-hop experiments' metrics `mesh` kept too (`None`: not).
    pub fn with_mesh(mut self, mesh: Option<MeshFlowMetrics>) -> Self {
        self.mesh = mesh.map(Box::new);
        self
    }

    /// Accounts a client endpoint event. Always inline into the loops that read events (the
    /// simulator's `drain_client`): one call per event (~1 per link packet) cost ~20 of its
    /// ~47 instructions (issue 35).
    #[inline(always)]
    pub fn on_event(&mut self, event: &Event) {
        if let Some(mesh) = &mut self.mesh {
            let local = match *event {
                Event::Sent { exchange, .. }
                | Event::ExchangeCompleted { exchange, .. }
                | Event::ExchangeFailed { exchange, .. } => exchange.0,
                _ => 0,
            };
            mesh.on_event(event, self.exchange_base + local);
        }
        match *event {
            Event::Sent {
                exchange,
                ordinal,
                at,
                ..
            } => self.on_sent(exchange.0, ordinal, at),
            Event::TimerExpired {
                armed, ordinal, at, ..
            } => {
                self.timeouts += 1;
                self.rto_max = Some(self.rto_max.map_or(armed, |m| m.max(armed)));
                if let Some(e) = &mut self.expiries {
                    e.push(TimerExpiry {
                        at_s: at.as_secs_f64(),
                        rto_s: armed.as_secs_f64(),
                        ordinal,
                    });
                }
            }
            Event::ExchangeCompleted {
                rtt, transmissions, ..
            } => {
                self.rtts.push(rtt);
                let k = transmissions.max(1) as usize - 1;
                if self.transmission_counts.len() <= k {
                    self.transmission_counts.resize(k + 1, 0);
                }
                self.transmission_counts[k] += 1;
            }
            _ => {}
        }
    }

    /// Copy `ordinal` of exchange `local` (of the current endpoint) was sent at `at`: what
    /// [`Event::Sent`] says, for a driver that reads it from the datagram's
    /// `TransmitMeta::Exchange` instead (`Config::emit_sent_events` off).
    #[inline]
    pub fn on_sent(&mut self, local: u64, ordinal: u32, at: Instant) {
        self.first_sent.get_or_insert(at);
        self.transmissions += 1;
        if ordinal > 0 {
            self.retransmissions += 1;
        }
        let t = self.newest_mut(self.exchange_base + local);
        t.copies = t.copies.max(ordinal + 1);
    }

    /// The flow's exchange id for exchange `local` of its current endpoint (the id packet tags
    /// and [`FlowMetrics::on_reply_delivered`] use).
    pub fn exchange_id(&self, local: u64) -> u64 {
        self.exchange_base + local
    }

    /// The flow continues on a fresh endpoint whose exchange ids start from 0 again: map them
    /// after every id seen so far.
    pub fn start_new_client(&mut self) {
        let newest_end = self.newest.map_or(0, |(e, _)| e + 1);
        self.exchange_base = (self.truth.len() as u64).max(newest_end);
    }

    /// A reply from the server to copy `ordinal` of `exchange` (a flow exchange id, see
    /// [`FlowMetrics::exchange_id`]) reached the client. Inline when the reply is to the
    /// newest exchange (nearly all are), an older one's out of line: the growth of `truth`
    /// inlined here made every call save and restore six registers (issue 35: ~10
    /// instructions per reply).
    #[inline]
    pub fn on_reply_delivered(&mut self, exchange: u64, ordinal: u32) {
        let t = if self.newest.is_some_and(|(e, _)| e == exchange) {
            &mut self.newest.as_mut().expect("checked").1
        } else {
            self.written_mut(exchange)
        };
        t.first_answered = Some(t.first_answered.map_or(ordinal, |o| o.min(ordinal)));
    }

    /// `exchange`'s truth, made the newest (the one before it written back to `truth`).
    /// Inline when it is the newest already (a retransmission), the change of newest out of
    /// line: called for every copy sent (~0.65 per link packet), where the call cost ~20 of
    /// its instructions (issue 35).
    #[inline]
    fn newest_mut(&mut self, exchange: u64) -> &mut ExchangeTruth {
        if !self.newest.is_some_and(|(e, _)| e == exchange) {
            self.make_newest(exchange);
        }
        &mut self.newest.as_mut().expect("set above").1
    }

    /// Makes `exchange` the newest, writing the newest before it back to `truth`.
    #[inline(never)]
    fn make_newest(&mut self, exchange: u64) {
        if let Some((e, t)) = self.newest {
            if e as usize == self.truth.len() {
                // The usual case, exchanges in order: one push, not a resize that writes an
                // empty element and then overwrites it (issue 35).
                self.truth.push(t);
            } else {
                *self.written_mut(e) = t;
            }
        }
        // Taken out, so that `truth` never holds a stale copy of the newest.
        let t = self
            .truth
            .get_mut(exchange as usize)
            .map(std::mem::take)
            .unwrap_or_default();
        self.newest = Some((exchange, t));
    }

    /// `exchange`'s element of `truth` (grown to hold it). Inline, the growth out of line:
    /// about half the replies are to an older exchange (the replies to retransmissions
    /// answered from the server's cache after the exchange completed), each a call here.
    #[inline]
    fn written_mut(&mut self, exchange: u64) -> &mut ExchangeTruth {
        let i = exchange as usize;
        if i >= self.truth.len() {
            self.grow_truth(i + 1);
        }
        &mut self.truth[i]
    }

    /// `truth` grown to `len` elements.
    #[cold]
    #[inline(never)]
    fn grow_truth(&mut self, len: usize) {
        self.truth.resize(len, ExchangeTruth::default());
    }

    /// Retransmissions sent after a copy whose reply reached the client.
    pub fn unnecessary_retransmissions(&self) -> u64 {
        self.truth
            .iter()
            .chain(self.newest.as_ref().map(|(_, t)| t))
            .filter_map(|t| {
                t.first_answered
                    .map(|j| u64::from(t.copies.saturating_sub(j + 1)))
            })
            .sum()
    }

    /// The record of flow `flow`; `completed` says whether it met its quota, `run_end` is
    /// when the run ended (the end of a flow still running then).
    pub fn record(
        &self,
        flow: u32,
        cc: &str,
        workload: &str,
        completed: bool,
        run_end: Instant,
    ) -> FlowRecord {
        let (unfinished, end) = match (completed, self.finished, self.gave_up_at) {
            (true, Some(at), _) => (None, at),
            (_, _, Some(at)) => (Some(Unfinished::GaveUp), at),
            _ => (Some(Unfinished::TimeCap), run_end),
        };
        let elapsed = self.first_sent.map(|a| (end.max(a) - a).as_secs_f64());
        let fct = elapsed.filter(|_| unfinished.is_none());
        let mut rtts: Vec<f64> = self.rtts.iter().map(|d| d.as_secs_f64()).collect();
        FlowRecord {
            flow,
            cc: cc.to_string(),
            workload: workload.to_string(),
            fct_s: fct,
            exchanges: self.exchanges,
            failed_exchanges: self.failed_exchanges,
            transmissions: self.transmissions,
            retransmissions: self.retransmissions,
            unnecessary_retransmissions: self.unnecessary_retransmissions(),
            timeouts: self.timeouts,
            expired_rtos: self.timeouts,
            expiries: self.expiries.clone().unwrap_or_default(),
            rto_max_s: self.rto_max.map(|d| d.as_secs_f64()),
            coap_rtt_median_s: crate::stats::median(&mut rtts),
            bytes_up: self.bytes_up,
            bytes_down: self.bytes_down,
            completed: unfinished.is_none(),
            unfinished,
            elapsed_s: elapsed,
            transmission_counts: self.transmission_counts.clone(),
            tcp: None,
            observe: None,
            mesh: self.mesh.as_ref().map(|m| {
                let totals = Totals {
                    transmissions: self.transmissions,
                    retransmissions: self.retransmissions,
                    exchanges: self.exchanges,
                    bytes_up: self.bytes_up,
                };
                Box::new(m.record(&totals, self.first_sent, &self.rtts))
            }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use coaplab_endpoint::ExchangeId;

    fn sent(exchange: u64, ordinal: u32, at_ms: i64) -> Event {
        Event::Sent {
            exchange: ExchangeId(exchange),
            request: None,
            destination: "198.18.1.1:5683".parse().unwrap(),
            ordinal,
            bytes: 11,
            at: Instant::from_millis(at_ms),
        }
    }

    #[test]
    fn unnecessary_retransmissions_follow_the_first_answered_copy() {
        let mut m = FlowMetrics::default();
        // Exchange 0: 3 copies, the reply to copy 0 arrived (late): copies 1 and 2 unnecessary.
        for (o, t) in [(0, 0), (1, 2000), (2, 6000)] {
            m.on_event(&sent(0, o, t));
        }
        m.on_reply_delivered(0, 2);
        m.on_reply_delivered(0, 0);
        // Exchange 1: copy 0 lost, reply to copy 1 arrived: copy 2 was unnecessary too.
        for (o, t) in [(0, 7000), (1, 9000), (2, 13000)] {
            m.on_event(&sent(1, o, t));
        }
        m.on_reply_delivered(1, 1);
        // Exchange 2: copy 0 lost, copy 1 answered: nothing unnecessary.
        for (o, t) in [(0, 14000), (1, 16000)] {
            m.on_event(&sent(2, o, t));
        }
        m.on_reply_delivered(2, 1);
        assert_eq!(m.transmissions, 8);
        assert_eq!(m.retransmissions, 5);
        assert_eq!(m.unnecessary_retransmissions(), 3);
        assert_eq!(m.first_sent, Some(Instant::ZERO));
    }

    /// The newest exchange's truth kept apart: exchanges in flight together (copies and
    /// replies interleaved, late replies to older exchanges, a short-lived client's
    /// successor) count as a plain per-exchange table counts them.
    #[test]
    fn interleaved_exchanges_count_as_one_table_does() {
        let mut next = 0x9e37_79b9_7f4a_7c15u64;
        let mut rand = move |n: u64| {
            next ^= next << 13;
            next ^= next >> 7;
            next ^= next << 17;
            next % n
        };
        for _ in 0..200 {
            let mut m = FlowMetrics::default();
            // Reference: per flow exchange id, (copies, first answered ordinal).
            let mut table: Vec<(u32, Option<u32>)> = Vec::new();
            let mut base = 0;
            for step in 0..60 {
                match rand(10) {
                    // A new client: ids go on after every id seen.
                    0 => {
                        m.start_new_client();
                        base = table.len() as u64;
                        assert_eq!(m.exchange_id(0), base);
                    }
                    // A copy of one of the last three local exchanges.
                    1..=6 => {
                        let local = (table.len() as u64 - base + rand(3)).saturating_sub(2);
                        let id = (base + local) as usize;
                        if id >= table.len() {
                            table.resize(id + 1, (0, None));
                        }
                        let ordinal = table[id].0;
                        table[id].0 += 1;
                        m.on_event(&sent(local, ordinal, step));
                    }
                    // A reply to any copy of any exchange sent so far.
                    _ if !table.is_empty() => {
                        let id = rand(table.len() as u64) as usize;
                        let ordinal = rand(u64::from(table[id].0.max(1))) as u32;
                        let t = &mut table[id].1;
                        *t = Some(t.map_or(ordinal, |o| o.min(ordinal)));
                        m.on_reply_delivered(id as u64, ordinal);
                    }
                    _ => {}
                }
            }
            let unnecessary: u64 = table
                .iter()
                .filter_map(|&(copies, first)| {
                    first.map(|j| u64::from(copies.saturating_sub(j + 1)))
                })
                .sum();
            assert_eq!(m.unnecessary_retransmissions(), unnecessary);
        }
    }
}
