//! One node's RPL state in storing mode, following Contiki 3.0 (`core/net/rpl/rpl-dag.c`,
//! `rpl-icmp6.c`, `rpl-timers.c`, `rpl.c`, tag 3.0) event for event, sans-IO: the caller hands
//! in received DIO/DIS/DAO messages and MAC outcomes, calls [`RplNode::on_timer`] at
//! [`RplNode::poll_at`], and carries out the returned [`Actions`].
//!
//! * **Join** (`rpl_join_instance`): the first DIO of finite rank makes its sender the
//!   preferred parent; the DIO timer starts at `Imin`; a DAO is scheduled.
//! * **Candidates** (`rpl_process_dio`): every DIO sender enters the parent table (in arrival
//!   order, Contiki's neighbour-table order) with its rank and DTSN; a DIO repeating the
//!   sender's rank is *consistent* and counts towards Trickle's redundancy; a DIO of infinite
//!   rank resets the DIO timer.
//! * **Parent events** (`rpl_process_parent_event`, `rpl_select_dag`): a candidate whose rank
//!   is not acceptable (`DAG_RANK(rank) > DAG_RANK(min_rank + MaxRankIncrease)`) is nullified;
//!   the objective's `best_parent` picks the preferred parent (with hysteresis); a new rank
//!   that is unacceptable detaches the node; a new parent sends a No-Path DAO to the old one,
//!   increments the DTSN, schedules a DAO and resets the DIO timer. No parent left: local
//!   repair (rank ∞, every parent nullified, DIO timer reset — the node then advertises
//!   infinite rank, poisoning its sub-DODAG).
//! * **Link feedback** (`rpl_link_neighbor_callback`): each unicast frame's MAC outcome to a
//!   neighbour in the parent table updates its ETX (MRHOF, [`super::etx`]) and flags it; the
//!   1-s periodic timer (`handle_periodic_timer` → `rpl_recalculate_ranks`) re-runs the parent
//!   event for flagged parents. A DIO also flags its sender. A neighbour that stopped
//!   answering thus loses its role as the ETX penalties raise the rank through it.
//! * **DAO** (`rpl_schedule_dao`, `handle_dao_timer`): `RPL_DAO_LATENCY` 4 s: the DAO for the
//!   node itself leaves `latency/2 + rand % latency` (2–6 s) after it is scheduled (not
//!   rescheduled while pending), unicast to the preferred parent. A DIO from the preferred
//!   parent with a newer DTSN (`should_send_dao`; every multicast DIO increments its sender's
//!   DTSN, `dio_output`) schedules one too, so routes are refreshed each time a parent
//!   advertises. `dao_input` installs "target via sender" and forwards the DAO to the
//!   preferred parent at once; a DAO from a parent of lower DAGRank, or from the preferred
//!   parent, is a loop: that parent's rank becomes ∞. A No-Path DAO for a route via its sender
//!   is forwarded likewise; the route stays usable for `DAO_EXPIRATION_TIMEOUT` (60) ticks of
//!   the periodic timer, then `rpl_purge_routes` removes it (one per tick) and sends a No-Path
//!   DAO for it to the preferred parent.
//! * **DIS** (`handle_periodic_timer`, `RPL_DIS_INTERVAL` 60 s, `RPL_DIS_START_DELAY` 5 s): a
//!   node without a DODAG multicasts a DIS when its seconds counter, started at
//!   `30 + 60·rand − 5`, reaches 60, then every 60 s; a DIS heard resets the DIO timer.
//!
//! * **Probing** (`RPL_WITH_PROBING` 1, `rpl-timers.c` `handle_probing_timer`,
//!   `get_probing_target`): every 60–180 s after the first join a unicast DIO to the preferred
//!   parent if its link had no MAC outcome for 10 min, else (1/2) the best such parent, else the
//!   least recently updated one; its MAC outcome is a link sample like any other.
//! * **Route lifetimes** (`dao_input`, `rpl_purge_routes`, `set_dao_lifetime_timer`): a DAO's
//!   route lives `RPL_DEFAULT_LIFETIME` × `RPL_DEFAULT_LIFETIME_UNIT` s (3.0: 193 days) counted in
//!   periodic ticks; a finite lifetime also makes the node re-send its DAO every half lifetime.
//!
//! Not modelled: DODAG versions and global repair (the root never increments its version),
//! several DODAGs or instances, IPv6 neighbour unreachability detection, DAO-ACKs (off in 3.0),
//! and joining through a DIO of infinite rank. The hop-by-hop option's loop checks on data
//! (`rpl-ext-header.c`) are the mesh's (`topology/control.rs`, `rpl_verify_header`,
//! `rpl_route`); a second rank error resets the dropping node's DIO timer
//! ([`RplNode::on_rank_error`]).

use coaplab_base::rng::Random;
use coaplab_base::time::{Duration, Instant};

use super::etx::{LinkMetric, TxStatus};
use super::of::{dag_rank, Objective, ParentView, INFINITE_RANK, MAX_RANK_INCREASE};
use super::trickle::Trickle;
use super::RplParams;

/// `RPL_DAO_LATENCY` (`rpl-private.h`, 4 s): the default of [`RplParams::dao_latency`].
pub const DAO_LATENCY: Duration = Duration::from_secs(4);
/// `RPL_DIS_INTERVAL` (`rpl-private.h`, 60 s).
pub const DIS_INTERVAL_S: i64 = 60;
/// `RPL_DIS_START_DELAY` (`rpl-private.h`, 5 s).
pub const DIS_START_DELAY_S: i64 = 5;
/// Period of `handle_periodic_timer` (`rpl-timers.c`, `CLOCK_SECOND`).
pub const PERIODIC_TIMER: Duration = Duration::from_secs(1);
/// `RPL_LOLLIPOP_INIT` (`rpl-private.h`: 255 − 16 + 1).
pub const LOLLIPOP_INIT: u8 = 240;
const LOLLIPOP_CIRCULAR_REGION: i32 = 127;
const LOLLIPOP_SEQUENCE_WINDOWS: i32 = 16;
const LOLLIPOP_MAX_VALUE: i32 = 255;

/// `RPL_LOLLIPOP_INCREMENT`.
pub fn lollipop_increment(c: u8) -> u8 {
    if i32::from(c) > LOLLIPOP_CIRCULAR_REGION {
        c.wrapping_add(1)
    } else {
        (c + 1) & LOLLIPOP_CIRCULAR_REGION as u8
    }
}

/// `lollipop_greater_than(a, b)` of `rpl-dag.c`.
pub fn lollipop_greater_than(a: u8, b: u8) -> bool {
    let (a, b) = (i32::from(a), i32::from(b));
    if a > LOLLIPOP_CIRCULAR_REGION && b <= LOLLIPOP_CIRCULAR_REGION {
        return (LOLLIPOP_MAX_VALUE + 1 + b - a) > LOLLIPOP_SEQUENCE_WINDOWS;
    }
    (a > b && (a - b) < LOLLIPOP_SEQUENCE_WINDOWS)
        || (a < b && (b - a) > (LOLLIPOP_CIRCULAR_REGION + 1 - LOLLIPOP_SEQUENCE_WINDOWS))
}

/// How long a route withdrawn by a No-Path DAO stays (`rpl-private.h`
/// `DAO_EXPIRATION_TIMEOUT` 60, in ticks of the periodic timer).
pub const NO_PATH_GRACE: Duration = Duration::from_secs(60);

/// `RPL_PROBING_INTERVAL` (`rpl-conf.h`, 120 s): a probe leaves `interval/2 + rand % interval`
/// after the previous one (`RPL_PROBING_DELAY_FUNC`).
pub const PROBING_INTERVAL: Duration = Duration::from_secs(120);
/// `RPL_PROBING_EXPIRATION_TIME` (`rpl-conf.h`, 10 min): a parent whose link was not updated
/// for this long needs probing.
pub const PROBING_EXPIRATION: Duration = Duration::from_secs(600);

/// The periodic timer's next tick after `now` (whole seconds of RPL time).
fn next_tick(now: Instant) -> Instant {
    let tick = PERIODIC_TIMER.as_nanos();
    Instant::from_nanos(((now - Instant::ZERO).as_nanos().div_euclid(tick) + 1) * tick)
}

/// A downward route (storing mode), `uip_ds6_route_t` with its RPL state.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Route {
    via: u16,
    /// The periodic tick at which `rpl_purge_routes` removes it: its lifetime counted down
    /// one per tick (`state.lifetime`).
    expires_at: Instant,
    /// `state.nopath_received`: a No-Path DAO set the lifetime to `DAO_EXPIRATION_TIMEOUT`.
    withdrawn: bool,
}

/// The tick at which a lifetime of `ticks` set at `now` has counted down to 0
/// (`rpl_purge_routes` decrements first, then removes a route below 1).
fn expiry(now: Instant, ticks: Duration) -> Instant {
    next_tick(now) + ticks - PERIODIC_TIMER
}

/// What the caller must do after an input or a timer.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Actions {
    /// Multicast a DIO with this (rank, DTSN).
    pub dio: Option<(u16, u8)>,
    /// Multicast a DIS.
    pub dis: bool,
    /// Send a DAO for this node to this parent.
    pub dao_to: Option<u16>,
    /// Send a No-Path DAO for this node to each of these former parents.
    pub no_path_to: Vec<u16>,
    /// Send a No-Path DAO for this target (a purged route) to this parent.
    pub purged: Option<(u16, u16)>,
    /// The preferred parent changed (joined, switched or lost).
    pub parent_changed: bool,
    /// Unicast a DIO with this (rank, DTSN) to this neighbour: a probe
    /// (`handle_probing_timer`, `RPL_PROBING_SEND_FUNC` = `dio_output(instance, addr)`).
    pub probe: Option<(u16, u16, u8)>,
}

/// One entry of the parent table (`rpl_parent_t` with its neighbour's link metric).
#[derive(Debug, Clone, Copy)]
struct Candidate {
    id: u16,
    rank: u16,
    dtsn: u8,
    metric: LinkMetric,
    /// `RPL_PARENT_FLAG_UPDATED`: re-run the parent event at the next periodic tick.
    updated: bool,
    /// `last_tx_time`: the last MAC outcome of a unicast frame to it that fed the objective's
    /// `neighbor_link_callback` (`None`: Contiki's 0; never for OF0, which has none).
    last_tx: Option<Instant>,
}

/// One node's RPL state.
#[derive(Debug, Clone)]
pub struct RplNode {
    id: u16,
    objective: Objective,
    is_root: bool,
    joined: bool,
    rank: u16,
    min_rank: u16,
    parent: Option<u16>,
    candidates: Vec<Candidate>,
    /// Downward routes (storing mode): target → next hop, ordered for determinism.
    down: std::collections::BTreeMap<u16, Route>,
    /// The next periodic tick that purges routes withdrawn by a No-Path DAO.
    purge_due: Option<Instant>,
    trickle: Option<Trickle>,
    params: RplParams,
    dtsn_out: u8,
    dao_due: Option<Instant>,
    recalc_due: Option<Instant>,
    dis_due: Option<Instant>,
    /// The probing timer (`instance->probing_timer`).
    probe_due: Option<Instant>,
    /// The DAO lifetime timer (`instance->dao_lifetime_timer`), running only with a finite
    /// route lifetime.
    dao_refresh_due: Option<Instant>,
    parent_switches: u64,
}

impl RplNode {
    /// A node that has not joined yet; its DIS schedule is drawn from `rng`.
    pub fn new(id: u16, objective: Objective, params: RplParams, rng: &mut impl Random) -> RplNode {
        // `rpl_reset_periodic_timer`: next_dis = 60/2 + 60·rand/RANDOM_RAND_MAX − 5, then +1 per
        // second; a DIS goes out at the first tick where it reaches 60.
        let next_dis =
            DIS_INTERVAL_S / 2 + rng.below(DIS_INTERVAL_S as u64 + 1) as i64 - DIS_START_DELAY_S;
        let first_s = (DIS_INTERVAL_S - next_dis).max(1);
        RplNode {
            id,
            objective,
            is_root: false,
            joined: false,
            rank: INFINITE_RANK,
            min_rank: INFINITE_RANK,
            parent: None,
            candidates: Vec::new(),
            down: std::collections::BTreeMap::new(),
            purge_due: None,
            trickle: None,
            params,
            dtsn_out: LOLLIPOP_INIT,
            dao_due: None,
            recalc_due: None,
            dis_due: Some(Instant::ZERO + Duration::from_secs(first_s)),
            probe_due: None,
            dao_refresh_due: None,
            parent_switches: 0,
        }
    }

    /// The DODAG root (`rpl_set_root`), whose DIO timer starts at `now` at `Imin`.
    pub fn root(
        id: u16,
        objective: Objective,
        params: RplParams,
        now: Instant,
        rng: &mut impl Random,
    ) -> RplNode {
        let mut n = RplNode::new(id, objective, params, rng);
        n.is_root = true;
        n.joined = true;
        n.dis_due = None;
        n.rank = objective.root_rank();
        n.min_rank = n.rank;
        n.trickle = Some(Trickle::start(params.trickle, now, rng));
        n
    }

    /// This node's id.
    pub fn id(&self) -> u16 {
        self.id
    }

    /// The node's rank ([`INFINITE_RANK`] while detached).
    pub fn rank(&self) -> u16 {
        self.rank
    }

    /// The preferred parent.
    pub fn parent(&self) -> Option<u16> {
        self.parent
    }

    /// Whether the node has joined the DODAG (it stays joined through a local repair).
    pub fn joined(&self) -> bool {
        self.joined
    }

    /// Preferred-parent changes after the first join.
    pub fn parent_switches(&self) -> u64 {
        self.parent_switches
    }

    /// The rank the preferred parent last advertised.
    pub fn parent_rank(&self) -> Option<u16> {
        let k = self.find(self.parent?)?;
        Some(self.candidates[k].rank)
    }

    /// The rank `neighbour` last advertised, if it is in the parent table (∞ once nullified).
    pub fn candidate_rank(&self, neighbour: u16) -> Option<u16> {
        self.find(neighbour).map(|i| self.candidates[i].rank)
    }

    /// The link metric (ETX × 256) to `neighbour` if it is in the parent table.
    pub fn link_metric(&self, neighbour: u16) -> Option<u16> {
        self.find(neighbour).map(|i| self.candidates[i].metric.etx)
    }

    /// The downward routes: (target, next hop).
    pub fn downward_routes(&self) -> impl Iterator<Item = (u16, u16)> + '_ {
        self.down.iter().map(|(&t, r)| (t, r.via))
    }

    /// The next hop towards `target` below this node, if a DAO installed one.
    pub fn downward(&self, target: u16) -> Option<u16> {
        self.down.get(&target).map(|r| r.via)
    }

    /// When the downward route to `target` expires (its lifetime's last periodic tick).
    pub fn route_expiry(&self, target: u16) -> Option<Instant> {
        self.down.get(&target).map(|r| r.expires_at)
    }

    /// The next probe's instant.
    pub fn probe_due(&self) -> Option<Instant> {
        self.probe_due
    }

    /// The DIO timer's (transmissions, suppressions).
    pub fn dio_counts(&self) -> (u64, u64) {
        self.trickle.as_ref().map_or((0, 0), Trickle::counts)
    }

    /// The next instant a timer needs [`RplNode::on_timer`].
    pub fn poll_at(&self) -> Option<Instant> {
        [
            self.trickle.as_ref().map(Trickle::poll_at),
            self.dao_due,
            self.recalc_due,
            self.purge_due,
            self.dis_due,
            self.probe_due,
            self.dao_refresh_due,
        ]
        .into_iter()
        // The least of those set (a fold: the mesh asks after every link sample).
        .fold(None, |least, t| match (least, t) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        })
    }

    /// Runs every timer due at `now`.
    pub fn on_timer(&mut self, now: Instant, rng: &mut impl Random) -> Actions {
        let mut a = Actions::default();
        if self.recalc_due.is_some_and(|t| t <= now) {
            self.recalc_due = None;
            // `rpl_recalculate_ranks`: each flagged parent, in table order.
            let mut k = 0;
            while k < self.candidates.len() {
                if self.candidates[k].updated {
                    self.candidates[k].updated = false;
                    self.parent_event(k, now, rng, &mut a);
                }
                k += 1;
            }
        }
        if self.purge_due.is_some_and(|t| t <= now) {
            // `rpl_purge_routes` (rpl.c): every route's lifetime counts down one per tick; the
            // root removes every expired route, another node one per tick, with a No-Path DAO
            // for it to its preferred parent.
            while let Some(target) = self
                .down
                .iter()
                .find(|(_, r)| r.expires_at <= now)
                .map(|(&t, _)| t)
            {
                self.down.remove(&target);
                if !self.is_root {
                    a.purged = self.parent.map(|p| (target, p));
                    break;
                }
            }
            self.purge_due = self
                .down
                .values()
                .map(|r| r.expires_at)
                .min()
                .map(|t| t.max(next_tick(now)));
        }
        if self.dao_due.is_some_and(|t| t <= now) {
            self.dao_due = None;
            a.dao_to = self.parent;
        }
        if self.dao_refresh_due.is_some_and(|t| t <= now) {
            // `handle_dao_timer` run by the DAO lifetime timer: a DAO to the preferred parent
            // (a pending one is cancelled, `ctimer_stop(&instance->dao_timer)`), and the
            // lifetime timer, now expired, re-armed (`set_dao_lifetime_timer`).
            self.dao_due = None;
            a.dao_to = self.parent;
            self.dao_refresh_due = self.params.dao_refresh_interval().map(|d| now + d);
        }
        if self.probe_due.is_some_and(|t| t <= now) {
            // `handle_probing_timer` (rpl-timers.c): a unicast DIO to the probing target, then
            // the next probe (`rpl_schedule_probing`).
            a.probe = self
                .probing_target(now, rng)
                .map(|id| (id, self.rank, self.dtsn_out));
            self.schedule_probe(now, rng);
        }
        if let Some(t) = self.trickle.as_mut() {
            if t.poll_at() <= now && t.on_timer(now, rng) {
                a.dio = Some((self.rank, self.dtsn_out));
                self.dtsn_out = lollipop_increment(self.dtsn_out);
            }
        }
        if let Some(t) = self.dis_due.filter(|&t| t <= now) {
            if self.joined {
                self.dis_due = None;
            } else {
                a.dis = true;
                self.dis_due = Some(t + Duration::from_secs(DIS_INTERVAL_S));
            }
        }
        a
    }

    /// A DIO from `from` advertising `rank` and `dtsn` (`rpl_process_dio`).
    pub fn on_dio(
        &mut self,
        now: Instant,
        from: u16,
        rank: u16,
        dtsn: u8,
        rng: &mut impl Random,
    ) -> Actions {
        let mut a = Actions::default();
        if rank < self.objective.root_rank() {
            return a;
        }
        if !self.joined {
            if rank != INFINITE_RANK {
                self.join(now, from, rank, dtsn, rng, &mut a);
            }
            return a;
        }
        if rank == INFINITE_RANK {
            self.reset_dio_timer(now, rng);
        }
        if self.is_root {
            if rank != INFINITE_RANK {
                self.hear_consistent();
            }
            return a;
        }
        let k = match self.find(from) {
            Some(k) => {
                if self.candidates[k].rank == rank {
                    self.hear_consistent();
                } else {
                    self.candidates[k].rank = rank;
                }
                k
            }
            None => self.add_candidate(from, rank, dtsn),
        };
        self.flag(k, now);
        if !self.parent_event(k, now, rng, &mut a) {
            return a;
        }
        if self.parent == Some(from) && lollipop_greater_than(dtsn, self.candidates[k].dtsn) {
            self.dtsn_out = lollipop_increment(self.dtsn_out);
            self.schedule_dao(now, rng);
        }
        self.candidates[k].dtsn = dtsn;
        a
    }

    /// A multicast DIS (`dis_input`): a joined node resets its DIO timer.
    pub fn on_dis(&mut self, now: Instant, rng: &mut impl Random) {
        if self.joined {
            self.reset_dio_timer(now, rng);
        }
    }

    /// A data datagram's second rank error dropped here (`rpl_verify_header`, RFC 6550
    /// §11.2.2.2): the node resets its DIO timer.
    pub fn on_rank_error(&mut self, now: Instant, rng: &mut impl Random) {
        self.reset_dio_timer(now, rng);
    }

    /// A (No-Path when `no_path`) DAO for `target` from `via` (`dao_input`, storing mode).
    /// Returns the parent to forward it to.
    pub fn on_dao(&mut self, now: Instant, target: u16, via: u16, no_path: bool) -> Option<u16> {
        if let Some(k) = self.find(via) {
            let sender_rank = self.candidates[k].rank;
            // A DAO from a node of lower DAGRank, or from the preferred parent: a loop.
            if dag_rank(sender_rank) < dag_rank(self.rank) || Some(via) == self.parent {
                self.candidates[k].rank = INFINITE_RANK;
                self.flag(k, now);
                return None;
            }
        }
        let at = if no_path {
            // Kept (and used) until DAO_EXPIRATION_TIMEOUT ticks have passed; forwarded once.
            match self.down.get_mut(&target) {
                Some(r) if r.via == via && !r.withdrawn => {
                    r.expires_at = expiry(now, NO_PATH_GRACE);
                    r.withdrawn = true;
                    r.expires_at
                }
                _ => return None,
            }
        } else {
            // `rep->state.lifetime = RPL_LIFETIME(instance, lifetime)`: the DAO carries
            // `default_lifetime` (`handle_dao_timer`), in units of `lifetime_unit` seconds.
            let expires_at = expiry(now, self.params.route_lifetime());
            self.down.insert(
                target,
                Route {
                    via,
                    expires_at,
                    withdrawn: false,
                },
            );
            expires_at
        };
        self.purge_due = Some(self.purge_due.map_or(at, |t| t.min(at)));
        self.parent
    }

    /// A unicast frame to `neighbour` ended with `status` at `now` (`rpl_link_neighbor_callback`).
    /// Returns whether [`RplNode::poll_at`] may have moved: only when this sample armed the
    /// next periodic tick's recalculation. The owner asks after every unicast frame, and most
    /// samples find the tick armed already (the Ch. 6 grid: about 150,000 samples a run).
    pub fn on_link(&mut self, now: Instant, neighbour: u16, status: TxStatus) -> bool {
        let Some(k) = self.find(neighbour) else {
            return false;
        };
        if self.objective.uses_link_metric() {
            self.candidates[k].metric.packet_sent(status);
            self.candidates[k].last_tx = Some(now);
        }
        let armed = self.recalc_due.is_some();
        self.flag(k, now);
        !armed
    }

    fn find(&self, id: u16) -> Option<usize> {
        self.candidates.iter().position(|c| c.id == id)
    }

    fn add_candidate(&mut self, id: u16, rank: u16, dtsn: u8) -> usize {
        self.candidates.push(Candidate {
            id,
            rank,
            dtsn,
            metric: LinkMetric::default(),
            updated: false,
            last_tx: None,
        });
        self.candidates.len() - 1
    }

    /// Flags candidate `k` for the next periodic tick.
    fn flag(&mut self, k: usize, now: Instant) {
        self.candidates[k].updated = true;
        if self.recalc_due.is_none() {
            self.recalc_due = Some(next_tick(now));
        }
    }

    fn hear_consistent(&mut self) {
        if let Some(t) = self.trickle.as_mut() {
            t.hear_consistent();
        }
    }

    fn reset_dio_timer(&mut self, now: Instant, rng: &mut impl Random) {
        if let Some(t) = self.trickle.as_mut() {
            t.reset(now, rng);
        }
    }

    /// `schedule_dao(instance, RPL_DAO_LATENCY)`: not moved while one is pending; a newly
    /// scheduled DAO also (re)starts the DAO lifetime timer (`set_dao_lifetime_timer`).
    fn schedule_dao(&mut self, now: Instant, rng: &mut impl Random) {
        if self.dao_due.is_none() {
            let latency_ms = (self.params.dao_latency.as_millis() as u64).max(1);
            let ms = latency_ms / 2 + rng.below(latency_ms);
            self.dao_due = Some(now + Duration::from_millis(ms as i64));
            if let Some(d) = self.params.dao_refresh_interval() {
                self.dao_refresh_due = Some(now + d);
            }
        }
    }

    /// `rpl_schedule_probing`: the next probe `RPL_PROBING_DELAY_FUNC` =
    /// `interval/2 + random_rand() % interval` from now (in milliseconds here, Contiki's clock
    /// ticks being finer or coarser per platform).
    fn schedule_probe(&mut self, now: Instant, rng: &mut impl Random) {
        let interval_ms = PROBING_INTERVAL.as_millis() as u64;
        let ms = interval_ms / 2 + rng.below(interval_ms);
        self.probe_due = Some(now + Duration::from_millis(ms as i64));
    }

    /// `get_probing_target` (rpl-timers.c): the preferred parent if its link was not updated
    /// for `RPL_PROBING_EXPIRATION_TIME`; else, with probability 1/2, the parent of lowest
    /// rank through it among those not updated for that long; else the least recently updated
    /// parent. Before twice the expiration time has passed Contiki's threshold is the clock's
    /// tick 1, so only never-updated parents count as stale then.
    fn probing_target(&self, now: Instant, rng: &mut impl Random) -> Option<u16> {
        let parent = self.parent?;
        let since_boot = now - Instant::ZERO;
        let min_last_tx = (since_boot > PROBING_EXPIRATION + PROBING_EXPIRATION)
            .then(|| now - PROBING_EXPIRATION);
        let stale = |c: &Candidate| match (c.last_tx, min_last_tx) {
            (None, _) => true,
            (Some(t), Some(min)) => t < min,
            (Some(_), None) => false,
        };
        let pk = self.find(parent)?;
        if stale(&self.candidates[pk]) {
            return Some(parent);
        }
        if rng.below(2) == 0 {
            let mut best: Option<(u16, u16)> = None;
            for c in self.candidates.iter().filter(|c| stale(c)) {
                let rank = self.objective.rank_via(self.view(c));
                if best.map_or(true, |(_, r)| rank < r) {
                    best = Some((c.id, rank));
                }
            }
            if let Some((id, _)) = best {
                return Some(id);
            }
        }
        let mut least: Option<&Candidate> = None;
        for c in &self.candidates {
            if least.map_or(true, |l| c.last_tx < l.last_tx) {
                least = Some(c);
            }
        }
        least.map(|c| c.id)
    }

    fn view(&self, c: &Candidate) -> ParentView {
        ParentView {
            id: c.id,
            rank: c.rank,
            link_metric: c.metric.etx,
        }
    }

    fn rank_through(&self, parent: u16) -> u16 {
        self.find(parent).map_or(INFINITE_RANK, |k| {
            self.objective.rank_via(self.view(&self.candidates[k]))
        })
    }

    fn acceptable_rank(&self, rank: u16) -> bool {
        rank != INFINITE_RANK
            && u32::from(rank) / u32::from(super::of::MIN_HOP_RANK_INCREASE)
                <= (u32::from(self.min_rank) + u32::from(MAX_RANK_INCREASE))
                    / u32::from(super::of::MIN_HOP_RANK_INCREASE)
    }

    fn join(
        &mut self,
        now: Instant,
        from: u16,
        rank: u16,
        dtsn: u8,
        rng: &mut impl Random,
        a: &mut Actions,
    ) {
        self.add_candidate(from, rank, dtsn);
        self.joined = true;
        self.dtsn_out = LOLLIPOP_INIT;
        self.parent = Some(from);
        self.rank = self.rank_through(from);
        self.min_rank = self.rank;
        self.trickle = Some(Trickle::start(self.params.trickle, now, rng));
        self.schedule_dao(now, rng);
        // `rpl_alloc_instance` starts the probing timer when the node first joins; it then
        // runs for good. (Contiki draws its delay before the DIO timer's; drawing it after
        // keeps every draw of DODAG formation as it was before probing was modelled.)
        self.schedule_probe(now, rng);
        a.parent_changed = true;
    }

    /// `rpl_nullify_parent`.
    fn nullify(&mut self, id: u16, a: &mut Actions) {
        if self.parent == Some(id) || self.parent.is_none() {
            self.rank = INFINITE_RANK;
            if self.parent == Some(id) {
                a.no_path_to.push(id);
                self.parent = None;
                a.parent_changed = true;
            }
        }
    }

    /// `rpl_process_parent_event` for candidate `k`; `false`: rejected or detached.
    fn parent_event(
        &mut self,
        k: usize,
        now: Instant,
        rng: &mut impl Random,
        a: &mut Actions,
    ) -> bool {
        if self.is_root {
            return true;
        }
        let mut ok = true;
        let id = self.candidates[k].id;
        if !self.acceptable_rank(self.candidates[k].rank) {
            self.nullify(id, a);
            if self.parent != Some(id) {
                // Contiki tests after nullifying, when the parent is already cleared.
                return false;
            }
            ok = false;
        }
        if !self.select_parent(now, rng, a) {
            // `rpl_local_repair`.
            self.rank = INFINITE_RANK;
            let ids: Vec<u16> = self.candidates.iter().map(|c| c.id).collect();
            for id in ids {
                self.nullify(id, a);
            }
            self.reset_dio_timer(now, rng);
            return false;
        }
        ok
    }

    /// `rpl_select_dag` with one DODAG; `false`: no usable parent.
    fn select_parent(&mut self, now: Instant, rng: &mut impl Random, a: &mut Actions) -> bool {
        let last = self.parent;
        // The candidates' views on the fly, not collected into a vector (an allocation per
        // recalculation).
        let views = self.candidates.iter().map(|c| self.view(c));
        match self.objective.best_parent(views, self.parent) {
            Some(best) => self.parent = Some(best),
            None => {
                self.rank = INFINITE_RANK;
                // Contiki keeps the DODAG while its preferred parent has a finite rank.
                let usable = self
                    .parent
                    .and_then(|p| self.find(p))
                    .is_some_and(|k| self.candidates[k].rank != INFINITE_RANK);
                if !usable {
                    return false;
                }
            }
        }
        let Some(parent) = self.parent else {
            return false;
        };
        self.rank = self.rank_through(parent);
        if last.is_none() || self.rank < self.min_rank {
            self.min_rank = self.rank;
        } else if !self.acceptable_rank(self.rank) {
            self.parent = None;
            a.parent_changed = true;
            a.no_path_to.extend(last);
            return false;
        }
        if self.parent != last {
            if let Some(l) = last {
                a.no_path_to.push(l);
                self.parent_switches += 1;
            }
            a.parent_changed = true;
            self.dtsn_out = lollipop_increment(self.dtsn_out);
            self.schedule_dao(now, rng);
            self.reset_dio_timer(now, rng);
        }
        true
    }
}

/// Test hooks: a transient state that the protocol reaches only by a race.
#[cfg(test)]
impl RplNode {
    /// Sets the preferred parent, leaving the rank as it is (a parent switch whose new rank
    /// is not computed yet).
    pub(crate) fn force_parent(&mut self, parent: u16) {
        self.parent = Some(parent);
    }

    /// Forgets the downward route to `target` (a route lost while the routes above still
    /// point here).
    pub(crate) fn forget_route(&mut self, target: u16) {
        self.down.remove(&target);
    }

    /// The DIO Trickle timer's current interval.
    pub(crate) fn dio_interval(&self) -> Option<Duration> {
        self.trickle.as_ref().map(Trickle::current_interval)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use coaplab_base::rng::ScriptedRandom;

    fn node(objective: Objective) -> (RplNode, impl Random) {
        let mut rng = ScriptedRandom::constant(0.0);
        (
            RplNode::new(5, objective, RplParams::CONTIKI, &mut rng),
            rng,
        )
    }

    #[test]
    fn lollipop_counters_follow_rfc_6550() {
        assert_eq!(lollipop_increment(255), 0);
        assert_eq!(lollipop_increment(127), 0);
        assert_eq!(lollipop_increment(240), 241);
        assert!(lollipop_greater_than(241, 240));
        assert!(lollipop_greater_than(0, 250));
        assert!(!lollipop_greater_than(240, 241));
        assert!(lollipop_greater_than(3, 120));
    }

    #[test]
    fn the_first_dio_joins_and_schedules_a_dao_two_to_six_seconds_later() {
        let (mut n, mut rng) = node(Objective::Mrhof);
        // DIS: next_dis = 30 + 0 − 5 = 25: the first DIS after 35 s.
        assert_eq!(n.poll_at(), Some(Instant::from_secs(35)));
        let a = n.on_dio(Instant::from_secs(3), 1, 256, 240, &mut rng);
        assert!(a.parent_changed && n.joined());
        assert_eq!(n.parent(), Some(1));
        // ETX 2 before any sample: 256 + 512.
        assert_eq!(n.rank(), 768);
        // DAO at 3 s + 2 s (rand 0); Trickle's t at 3 s + 2.048 s.
        assert_eq!(n.poll_at(), Some(Instant::from_secs(5)));
        let a = n.on_timer(Instant::from_secs(5), &mut rng);
        assert_eq!(a.dao_to, Some(1));
        assert_eq!(n.poll_at(), Some(Instant::from_millis(5048)));
        let a = n.on_timer(Instant::from_millis(5048), &mut rng);
        assert_eq!(a.dio, Some((768, LOLLIPOP_INIT)));
        // No DIS once joined.
        assert!(!n.on_timer(Instant::from_secs(35), &mut rng).dis);
    }

    #[test]
    fn mrhof_switches_when_the_parent_link_degrades_past_the_hysteresis() {
        let (mut n, mut rng) = node(Objective::Mrhof);
        n.on_dio(Instant::ZERO, 1, 512, 240, &mut rng);
        n.on_dio(Instant::ZERO, 2, 512, 240, &mut rng);
        n.on_link(Instant::ZERO, 1, TxStatus::Ok(1));
        n.on_link(Instant::ZERO, 2, TxStatus::Ok(1));
        n.on_timer(Instant::from_secs(1), &mut rng);
        assert_eq!((n.parent(), n.rank()), (Some(1), 768));
        // Two transmissions: ETX (256·90 + 512·10) / 100 = 281, rank 793 (parent metric 793 vs
        // 768: within 128, stay); four: 355, 867, still within.
        n.on_link(Instant::from_secs(1), 1, TxStatus::Ok(2));
        let a = n.on_timer(Instant::from_secs(2), &mut rng);
        assert_eq!(
            (n.parent(), n.rank(), a.parent_changed),
            (Some(1), 793, false)
        );
        n.on_link(Instant::from_secs(2), 1, TxStatus::Ok(4));
        n.on_timer(Instant::from_secs(3), &mut rng);
        assert_eq!((n.parent(), n.rank()), (Some(1), 867));
        // No ACK: (355·90 + 2560·10) / 100 = 575, metric 1087: switch to 2 (rank 768), with a
        // No-Path DAO to the old parent and a DAO scheduled for the new one.
        n.on_link(Instant::from_secs(3), 1, TxStatus::NoAck);
        let a = n.on_timer(Instant::from_secs(4), &mut rng);
        assert_eq!((n.parent(), n.rank()), (Some(2), 768));
        assert_eq!(a.no_path_to, vec![1]);
        assert!(a.parent_changed);
        assert_eq!(n.parent_switches(), 1);
    }

    #[test]
    fn a_lone_parent_that_stops_answering_detaches_the_node() {
        let (mut n, mut rng) = node(Objective::Mrhof);
        n.on_dio(Instant::ZERO, 1, 256, 240, &mut rng);
        n.on_link(Instant::ZERO, 1, TxStatus::Ok(1));
        n.on_timer(Instant::from_secs(1), &mut rng);
        assert_eq!(n.rank(), 512);
        // min_rank 512: acceptable up to DAGRank (512 + 1792) / 256 = 9, i.e. ETX < 9.
        let mut t = 1;
        let mut detached_at = None;
        while detached_at.is_none() && t < 100 {
            n.on_link(Instant::from_secs(t), 1, TxStatus::NoAck);
            t += 1;
            let a = n.on_timer(Instant::from_secs(t), &mut rng);
            if n.parent().is_none() {
                assert_eq!(a.no_path_to, vec![1]);
                detached_at = Some(t);
            }
        }
        assert_eq!(n.rank(), INFINITE_RANK);
        // 20 lost frames raise the ETX from 256 to 2276 (rank 2532, DAGRank 9: acceptable), the
        // 21st to 2304 (rank 2560, DAGRank 10): detached at the tick after it.
        assert_eq!(n.link_metric(1), Some(2304));
        assert_eq!(detached_at, Some(22));
        // Its next DIO advertises infinite rank (poisoning).
        let a = n.on_timer(n.poll_at().unwrap(), &mut rng);
        assert_eq!(a.dio.map(|d| d.0), Some(INFINITE_RANK));
    }

    #[test]
    fn a_node_whose_first_dao_is_lost_rejoins_at_the_next_dio() {
        // The cause of the earlier NotFormed: a lost DAO (hidden neighbours of the root
        // collide) made the link unusable for good. As in Contiki 3.0 the node detaches, but
        // the parent's next DIO takes it back, at a higher rank that successful frames lower.
        let (mut n, mut rng) = node(Objective::Mrhof);
        n.on_dio(Instant::ZERO, 1, 256, 240, &mut rng);
        assert_eq!(n.rank(), 768);
        // The first sample replaces ETX 2: 10 × 256. Rank 2816 is DAGRank 11 > (768 + 1792)
        // / 256 = 10: unacceptable, local repair.
        n.on_link(Instant::from_millis(2500), 1, TxStatus::NoAck);
        let a = n.on_timer(Instant::from_secs(3), &mut rng);
        assert_eq!((n.parent(), n.rank()), (None, INFINITE_RANK));
        assert_eq!(a.no_path_to, vec![1]);
        let a = n.on_dio(Instant::from_secs(5), 1, 256, 241, &mut rng);
        assert!(a.parent_changed);
        assert_eq!((n.parent(), n.rank()), (Some(1), 2816));
        n.on_link(Instant::from_secs(6), 1, TxStatus::Ok(1));
        n.on_timer(Instant::from_secs(7), &mut rng);
        // (2560·90 + 256·10) / 100 = 2329.
        assert_eq!((n.parent(), n.rank()), (Some(1), 256 + 2329));
    }

    #[test]
    fn probing_sends_unicast_dios_to_the_parents_contiki_picks() {
        // rpl-timers.c get_probing_target with random_rand() = 0 throughout.
        let (mut n, mut rng) = node(Objective::Mrhof);
        n.on_dio(Instant::ZERO, 1, 256, 240, &mut rng);
        n.on_dio(Instant::ZERO, 2, 512, 240, &mut rng);
        // RPL_PROBING_DELAY_FUNC: 120 s / 2 + 0 after joining.
        assert_eq!(n.probe_due(), Some(Instant::from_secs(60)));
        // The preferred parent's link was never updated: probe it, with the current rank and
        // DTSN, no DTSN increment (a unicast DIO).
        let a = n.on_timer(Instant::from_secs(60), &mut rng);
        assert_eq!(a.probe, Some((1, 768, LOLLIPOP_INIT)));
        assert_eq!(n.probe_due(), Some(Instant::from_secs(120)));
        // Its ACK updates it; now (rand % 2 == 0) the best parent never updated: 2.
        n.on_link(Instant::from_secs(60), 1, TxStatus::Ok(1));
        let a = n.on_timer(Instant::from_secs(120), &mut rng);
        assert_eq!(a.probe.map(|p| p.0), Some(2));
        // Once both were updated, the least recently updated one.
        n.on_link(Instant::from_secs(121), 2, TxStatus::Ok(1));
        let a = n.on_timer(Instant::from_secs(180), &mut rng);
        assert_eq!(a.probe.map(|p| p.0), Some(1));
        // OF0 has no neighbor_link_callback: last_tx_time is never set, the parent always
        // probed.
        let (mut o, mut rng) = node(Objective::Of0);
        o.on_dio(Instant::ZERO, 1, 256, 240, &mut rng);
        o.on_link(Instant::from_secs(1), 1, TxStatus::Ok(1));
        let a = o.on_timer(Instant::from_secs(60), &mut rng);
        assert_eq!(a.probe.map(|p| p.0), Some(1));
    }

    #[test]
    fn routes_expire_after_their_lifetime_and_the_dao_lifetime_timer_refreshes() {
        let params = RplParams {
            default_lifetime: 2,
            lifetime_unit_s: 30,
            ..RplParams::CONTIKI
        };
        let mut rng = ScriptedRandom::constant(0.0);
        let mut n = RplNode::new(5, Objective::Of0, params, &mut rng);
        n.on_dio(Instant::ZERO, 1, 256, 240, &mut rng);
        // DAO at 2 s (latency/2), the lifetime timer at 60 s / 2 = 30 s, then every 30 s.
        assert_eq!(n.on_timer(Instant::from_secs(2), &mut rng).dao_to, Some(1));
        assert_eq!(n.on_timer(Instant::from_secs(30), &mut rng).dao_to, Some(1));
        // A route installed at 0.5 s lasts 60 ticks: removed at the tick of 60 s, with a
        // No-Path DAO for it to the parent (one per tick).
        n.on_dao(Instant::from_millis(500), 9, 7, false);
        n.on_dao(Instant::from_millis(700), 8, 7, false);
        assert_eq!(n.route_expiry(9), Some(Instant::from_secs(60)));
        let a = n.on_timer(Instant::from_secs(60), &mut rng);
        assert_eq!((a.purged, a.dao_to), (Some((8, 1)), Some(1)));
        assert_eq!(n.downward(9), Some(7));
        assert_eq!(
            n.on_timer(Instant::from_secs(61), &mut rng).purged,
            Some((9, 1))
        );
        // The root removes every expired route in one tick.
        let mut root = RplNode::root(0, Objective::Of0, params, Instant::ZERO, &mut rng);
        root.on_dao(Instant::from_millis(500), 9, 7, false);
        root.on_dao(Instant::from_millis(700), 8, 7, false);
        while root.poll_at().unwrap() <= Instant::from_secs(60) {
            root.on_timer(root.poll_at().unwrap(), &mut rng);
        }
        assert_eq!(root.downward_routes().count(), 0);
        // Contiki 3.0's defaults: 0xff × 0xffff s, no refresh timer.
        assert_eq!(
            RplParams::CONTIKI.route_lifetime(),
            Duration::from_secs(16_711_425)
        );
        assert_eq!(RplParams::CONTIKI.dao_refresh_interval(), None);
    }

    #[test]
    fn daos_install_routes_and_loops_are_refused() {
        let (mut n, mut rng) = node(Objective::Of0);
        n.on_dio(Instant::ZERO, 1, 256, 240, &mut rng);
        assert_eq!(n.rank(), 512);
        // From a child: installed and forwarded to the parent.
        assert_eq!(n.on_dao(Instant::ZERO, 9, 7, false), Some(1));
        assert_eq!(n.downward(9), Some(7));
        // A No-Path via another node leaves it; via 7 withdraws it: forwarded once, the route
        // kept for 60 ticks (the 60th tick after 0.5 s is 60 s), then purged with a No-Path
        // of its own to the parent.
        assert_eq!(n.on_dao(Instant::ZERO, 9, 8, true), None);
        assert_eq!(n.on_dao(Instant::from_millis(500), 9, 7, true), Some(1));
        assert_eq!(n.on_dao(Instant::from_millis(600), 9, 7, true), None);
        assert_eq!(n.downward(9), Some(7));
        n.on_timer(Instant::from_secs(59), &mut rng);
        assert_eq!(n.downward(9), Some(7));
        let a = n.on_timer(Instant::from_secs(60), &mut rng);
        assert_eq!(n.downward(9), None);
        assert_eq!(a.purged, Some((9, 1)));
        // A fresh DAO re-installs a route.
        assert_eq!(n.on_dao(Instant::from_secs(61), 9, 7, false), Some(1));
        // From the preferred parent: a loop, the parent's rank becomes infinite.
        assert_eq!(n.on_dao(Instant::from_secs(61), 9, 1, false), None);
        let a = n.on_timer(Instant::from_secs(62), &mut rng);
        assert_eq!(n.parent(), None);
        assert_eq!(a.no_path_to, vec![1]);
    }
}
