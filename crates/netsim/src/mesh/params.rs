//! Every constant of the mesh model as a documented parameter ([`MESH_PARAMS`]): name, range,
//! default and source, printed by `coaplab models mesh` and set from a scenario's
//! `[topology.params]`. [`MeshParams::default`] holds the same defaults.

use coaplab_base::params::{Kind, ParamError, ParamSpec, Params, Settings, Value};
use coaplab_base::time::Duration;

use super::contiki_csma::{ContikiParams, Discipline};
use super::phy;

/// Every mesh parameter. Defaults: the radio medium of docs/experiments.md §8f (Cooja UDGM,
/// 10 m / 20 m), IEEE 802.15.4-2006 `macPIB` defaults for CSMA/CA (Table 86), Contiki 3.0's
/// queue, framer and 6LoWPAN constants, and Contiki 3.0's RPL timers (`rpl_*`: Trickle's
/// `RPL_DIO_INTERVAL_MIN` 12, `RPL_DIO_INTERVAL_DOUBLINGS` 8, `RPL_DIO_REDUNDANCY` 10 from
/// `core/net/rpl/rpl-conf.h`; `RPL_DAO_LATENCY` 4 s from `rpl-private.h`). RPL's fixed
/// constants (MRHOF/OF0 thresholds, ETX filter, ranks) are [`super::rpl::RPL_CONSTANTS`].
pub const MESH_PARAMS: &[ParamSpec] = &[
    ParamSpec {
        key: "tx_range_m",
        kind: Kind::Float { min: 0.0, max: 1e6 },
        default: Value::Float(10.0),
        help: "UDGM transmission range: receivers at most this far can decode (metres)",
        source: "docs/experiments.md §8f (thesis Cooja setup); Cooja UDGM.java TRANSMITTING_RANGE default 50",
    },
    ParamSpec {
        key: "interference_range_m",
        kind: Kind::Float { min: 0.0, max: 1e6 },
        default: Value::Float(20.0),
        help: "UDGM interference range: radios at most this far are interfered (metres)",
        source: "docs/experiments.md §8f; Cooja UDGM.java INTERFERENCE_RANGE default 100",
    },
    ParamSpec {
        key: "success_ratio_tx",
        kind: Kind::Float { min: 0.0, max: 1.0 },
        default: Value::Float(1.0),
        help: "UDGM SUCCESS_RATIO_TX: probability a transmission reaches anyone at all",
        source: "Cooja UDGM.java default 1.0 (thesis Ch. 6: 0.5)",
    },
    ParamSpec {
        key: "success_ratio_rx",
        kind: Kind::Float { min: 0.0, max: 1.0 },
        default: Value::Float(1.0),
        help: "UDGM SUCCESS_RATIO_RX at the edge of the TX range; 1 - (d/R)^2 (1 - ratio) at distance d",
        source: "Cooja UDGM.java getRxSuccessProbability, default 1.0 (thesis Ch. 6: 0.5)",
    },
    ParamSpec {
        key: "cca_threshold_dbm",
        kind: Kind::Float { min: -200.0, max: 0.0 },
        default: Value::Float(-95.0),
        help: "CCA is busy above this UDGM signal strength (-10 - 85 d/R dBm within R, -95 beyond)",
        source: "Contiki platform/cooja/dev/cooja-radio.c CCA_SS_THRESHOLD -95 (Sky/Z1 under Contiki 3.0: about -90, CC2420_CONF_CCA_THRESH -45 + MSPSim RSSI_OFFSET -45)",
    },
    ParamSpec {
        key: "mac_min_be",
        kind: Kind::Int { min: 0, max: 8 },
        default: Value::Int(3),
        help: "macMinBE: initial CSMA/CA backoff exponent (at most mac_max_be)",
        source: "IEEE 802.15.4-2006 Table 86; Contiki-NG csma.h CSMA_MIN_BE 3",
    },
    ParamSpec {
        key: "mac_max_be",
        kind: Kind::Int { min: 3, max: 8 },
        default: Value::Int(5),
        help: "macMaxBE: largest CSMA/CA backoff exponent",
        source: "IEEE 802.15.4-2006 Table 86; Contiki-NG csma.h CSMA_MAX_BE 5",
    },
    ParamSpec {
        key: "mac_max_csma_backoffs",
        kind: Kind::Int { min: 0, max: 5 },
        default: Value::Int(4),
        help: "macMaxCSMABackoffs: busy CCAs tolerated before channel-access failure",
        source: "IEEE 802.15.4-2006 Table 86 (Contiki-NG CSMA_MAX_BACKOFF 5)",
    },
    ParamSpec {
        key: "mac_max_frame_retries",
        kind: Kind::Int { min: 0, max: 7 },
        default: Value::Int(3),
        help: "macMaxFrameRetries: retransmissions after a missing ACK before the frame is dropped",
        source: "IEEE 802.15.4-2006 Table 86 (Contiki-NG CSMA_MAX_FRAME_RETRIES 7; Contiki 3.0 csma.c counts transmissions instead, sicslowpan's limit: mac_max_transmissions)",
    },
    ParamSpec {
        key: "mac_ack_request",
        kind: Kind::Bool,
        default: Value::Bool(true),
        help: "unicast frames request an ACK and are retransmitted without one; false: sent once, no ACK on air (Contiki 3.0 NullRDC on Sky/Z1)",
        source: "IEEE 802.15.4-2006 §7.5.6.4; Contiki 3.0 core/net/mac/nullrdc.c NULLRDC_802154_AUTOACK(_HW) default 0 sets no PACKETBUF_ATTR_MAC_ACK, framer-802154.c ack_required",
    },
    ParamSpec {
        key: "mac",
        kind: Kind::Choice(Discipline::NAMES),
        default: Value::Choice("ieee802154"),
        help: "the MAC: ieee802154 (unslotted CSMA/CA, mac_* keys), contiki-csma (Contiki 3.0 csma.c: per-neighbour queues, no initial backoff, 1/8-s retry backoff, mac_max_transmissions) or contiki-nullmac (one CCA, sent once)",
        source: "IEEE 802.15.4-2006 §7.5.1.4; Contiki 3.0 core/net/mac/csma.c, nullmac.c, nullrdc.c (examples/er-rest-example/project-conf.h selects nullmac_driver)",
    },
    ParamSpec {
        key: "mac_max_transmissions",
        kind: Kind::Int { min: 1, max: 32 },
        default: Value::Int(4),
        help: "contiki-csma: transmissions of a packet without an ACK before it is dropped (Z1 4, Sky 5, Cooja motes 8)",
        source: "Contiki 3.0 core/net/ipv6/sicslowpan.c SICSLOWPAN_MAX_MAC_TRANSMISSIONS 4; platform/sky 5, platform/cooja 8 (contiki-conf.h)",
    },
    ParamSpec {
        key: "contiki_clock_hz",
        kind: Kind::Int { min: 1, max: 1_000_000 },
        default: Value::Int(128),
        help: "contiki-csma: CLOCK_SECOND, the tick of its backoffs (Sky/Z1 128, Cooja motes 1000)",
        source: "Contiki 3.0 platform/sky, platform/z1 CLOCK_CONF_SECOND 128; platform/cooja 1000",
    },
    ParamSpec {
        key: "contiki_channel_check_rate",
        kind: Kind::Int { min: 1, max: 1000 },
        default: Value::Int(8),
        help: "contiki-csma: NETSTACK_RDC_CHANNEL_CHECK_RATE; the retry timebase is CLOCK_SECOND / rate ticks (1/8 s)",
        source: "Contiki 3.0 csma.c default_timebase (NullRDC has no channel check interval); platform/sky, platform/cooja rate 8",
    },
    ParamSpec {
        key: "contiki_ack_wait_us",
        kind: Kind::Int { min: 1, max: 1_000_000 },
        default: Value::Int(397),
        help: "contiki MACs: NullRDC's ACK_WAIT_TIME after a unicast frame, in microseconds (Sky/Z1 397, Cooja motes 2000)",
        source: "Contiki 3.0 core/net/mac/nullrdc.c ACK_WAIT_TIME RTIMER_SECOND / 2500 (13 ticks of 1/32768 s on Sky/Z1); platform/cooja NULLRDC_CONF_ACK_WAIT_TIME RTIMER_SECOND / 500",
    },
    ParamSpec {
        key: "contiki_after_ack_wait_us",
        kind: Kind::Int { min: 0, max: 1_000_000 },
        default: Value::Int(641),
        help: "contiki MACs: NullRDC's AFTER_ACK_DETECTED_WAIT_TIME before it reads a detected ACK, in microseconds (Sky/Z1 641, Cooja motes 0)",
        source: "Contiki 3.0 core/net/mac/nullrdc.c AFTER_ACK_DETECTED_WAIT_TIME RTIMER_SECOND / 1500 (21 ticks on Sky/Z1); platform/cooja 0",
    },
    ParamSpec {
        key: "contiki_tx_delay_us",
        kind: Kind::Int { min: 320, max: 1_000_000 },
        default: Value::Int(320),
        help: "contiki MACs: from the radio's send to the frame on air, the CCA just before its last 192 us, in microseconds (Sky/Z1 CC2420 320, Cooja motes 2000)",
        source: "CC2420 STXONCCA: 8-symbol CCA + 12-symbol turnaround (IEEE 802.15.4-2006 aTurnaroundTime); Contiki 3.0 platform/cooja/dev/cooja-radio.c WITH_TURNAROUND: 'turnaround time of 2ms for packets'",
    },
    ParamSpec {
        key: "contiki_ack_delay_us",
        kind: Kind::Int { min: 0, max: 1_000_000 },
        default: Value::Int(192),
        help: "contiki MACs: from a frame's end to its ACK on air, in microseconds (Sky/Z1 CC2420 auto-ACK 192, Cooja motes 1000)",
        source: "CC2420 hardware auto-ACK after aTurnaroundTime (12 symbols); Contiki 3.0 cooja-radio.c WITH_TURNAROUND '1ms for acks' (NULLRDC_CONF_SEND_802154_ACK 1 on the cooja platform)",
    },
    ParamSpec {
        key: "contiki_neighbor_queues",
        kind: Kind::Int { min: 1, max: 64 },
        default: Value::Int(2),
        help: "contiki-csma: neighbours with queued packets at a time; a packet for another one is dropped",
        source: "Contiki 3.0 core/net/mac/csma.c CSMA_MAX_NEIGHBOR_QUEUES 2 (no platform overrides it)",
    },
    ParamSpec {
        key: "unit_backoff_symbols",
        kind: Kind::Int { min: 1, max: 1000 },
        default: Value::Int(20),
        help: "aUnitBackoffPeriod in symbols (16 us each)",
        source: "IEEE 802.15.4-2006 Table 85",
    },
    ParamSpec {
        key: "ack_wait_symbols",
        kind: Kind::Int { min: 1, max: 10000 },
        default: Value::Int(54),
        help: "macAckWaitDuration in symbols, counted from the end of the data frame",
        source: "IEEE 802.15.4-2006 Table 86: aUnitBackoffPeriod 20 + aTurnaroundTime 12 + phySHRDuration 10 + 6 x phySymbolsPerOctet 2 = 54",
    },
    ParamSpec {
        key: "queue_frames",
        kind: Kind::Int { min: 1, max: 1024 },
        default: Value::Int(8),
        help: "frames a node's MAC queue holds (a datagram is refused unless all its fragments fit)",
        source: "Contiki 3.0 QUEUEBUF_CONF_NUM 8 (platform/sky, platform/z1 contiki-conf.h, IPv6)",
    },
    ParamSpec {
        key: "reass_maxage_s",
        kind: Kind::Seconds { min: 0.001, max: 3600.0 },
        default: Value::Float(20.0),
        help: "6LoWPAN reassembly timeout: a partial datagram older than this is discarded",
        source: "Contiki 3.0 core/net/ip/uipopt.h SICSLOWPAN_REASS_MAXAGE 20",
    },
    ParamSpec {
        key: "short_addresses",
        kind: Kind::Bool,
        default: Value::Bool(false),
        help: "16-bit MAC addresses (MAC header 9 B) instead of 64-bit ones (21 B)",
        source: "Contiki 3.0 LINKADDR_CONF_SIZE 8 (platform/sky contiki-conf.h)",
    },
    ParamSpec {
        key: "rpl_hbh_option",
        kind: Kind::Bool,
        default: Value::Bool(true),
        help: "data packets carry RPL's 8-B hop-by-hop option (RFC 6553), so UDP is not NHC-compressed",
        source: "Contiki 3.0 core/net/rpl/rpl-conf.h RPL_INSERT_HBH_OPTION 1",
    },
    ParamSpec {
        key: "rpl_dio_interval_min",
        kind: Kind::Int { min: 1, max: 24 },
        default: Value::Int(12),
        help: "RPL: Trickle Imin of the DIO timer as a power of two of milliseconds (12: 4.096 s)",
        source: "Contiki 3.0 core/net/rpl/rpl-conf.h RPL_DIO_INTERVAL_MIN 12",
    },
    ParamSpec {
        key: "rpl_dio_interval_doublings",
        kind: Kind::Int { min: 0, max: 16 },
        default: Value::Int(8),
        help: "RPL: Trickle doublings of the DIO interval (Imax = Imin x 2^doublings; 8: 1048.576 s)",
        source: "Contiki 3.0 core/net/rpl/rpl-conf.h RPL_DIO_INTERVAL_DOUBLINGS 8",
    },
    ParamSpec {
        key: "rpl_dio_redundancy",
        kind: Kind::Int { min: 0, max: 255 },
        default: Value::Int(10),
        help: "RPL: Trickle redundancy k: a DIO is suppressed after k consistent ones in its interval (0: never)",
        source: "Contiki 3.0 core/net/rpl/rpl-conf.h RPL_DIO_REDUNDANCY 10",
    },
    ParamSpec {
        key: "rpl_dao_latency_s",
        kind: Kind::Seconds { min: 0.001, max: 3600.0 },
        default: Value::Float(4.0),
        help: "RPL: a scheduled DAO leaves latency/2 + uniform[0, latency) later",
        source: "Contiki 3.0 core/net/rpl/rpl-private.h RPL_DAO_LATENCY (CLOCK_SECOND * 4); rpl-timers.c schedule_dao",
    },
    ParamSpec {
        key: "rpl_default_lifetime",
        kind: Kind::Int { min: 1, max: 255 },
        default: Value::Int(255),
        help: "RPL: a DAO's route lifetime in units of rpl_lifetime_unit_s; with 255 or unit 65535 no periodic DAO refresh",
        source: "Contiki 3.0 core/net/rpl/rpl-conf.h RPL_DEFAULT_LIFETIME 0xff; rpl-icmp6.c dao_input, rpl.c rpl_purge_routes",
    },
    ParamSpec {
        key: "rpl_lifetime_unit_s",
        kind: Kind::Int { min: 1, max: 65535 },
        default: Value::Int(65535),
        help: "RPL: seconds per lifetime unit (routes last unit x lifetime s, refreshed by a DAO every half of that)",
        source: "Contiki 3.0 core/net/rpl/rpl-conf.h RPL_DEFAULT_LIFETIME_UNIT 0xffff; rpl-timers.c set_dao_lifetime_timer",
    },
];

/// How the mesh's routes form.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Routing {
    /// The converged minimum-hop DODAG, fixed for the run ([`super::routing::Routes::tree`]).
    Static,
    /// RPL storing mode ([`super::rpl`]) with its control traffic on the channel.
    Rpl {
        /// The objective function.
        objective: super::rpl::Objective,
        /// Traffic starts this long after the DODAG starts forming; `None`: once it has formed
        /// (every reachable node has a parent and the root a downward route to it), waiting
        /// at most [`RPL_FORMATION_LIMIT`].
        warmup: Option<Duration>,
    },
}

/// The longest wait for a DODAG to form before a run fails (Contiki's `Imax` is 1048.576 s).
pub const RPL_FORMATION_LIMIT: Duration = Duration::from_secs(3600);

/// The resolved mesh parameters.
#[derive(Debug, Clone, PartialEq)]
pub struct MeshParams {
    /// UDGM transmission range in metres.
    pub tx_range_m: f64,
    /// UDGM interference range in metres.
    pub interference_range_m: f64,
    /// UDGM `SUCCESS_RATIO_TX`.
    pub success_ratio_tx: f64,
    /// UDGM `SUCCESS_RATIO_RX`.
    pub success_ratio_rx: f64,
    /// CCA threshold in dBm on Cooja's signal-strength scale.
    pub cca_threshold_dbm: f64,
    /// CSMA/CA parameters.
    pub csma: CsmaParams,
    /// Unicast data frames request an ACK (and are retransmitted without one); `false`:
    /// each is sent once and no ACK goes on air, as Contiki 3.0's NullRDC does on Sky/Z1
    /// unless `NULLRDC_CONF_802154_AUTOACK` is set (docs/mesh-model.md, "ACKs in Cooja").
    pub mac_ack_request: bool,
    /// The MAC discipline (`mac`).
    pub mac: Discipline,
    /// Contiki's MAC constants (used by [`Discipline::ContikiCsma`]).
    pub contiki: ContikiParams,
    /// Frames one node's MAC queue holds.
    pub queue_frames: u32,
    /// 6LoWPAN reassembly timeout.
    pub reass_maxage: Duration,
    /// 16-bit instead of 64-bit MAC addresses.
    pub short_addresses: bool,
    /// RPL hop-by-hop option in data packets.
    pub rpl_hbh_option: bool,
    /// How routes form: the static tree, or RPL (set from `[topology] routing`, not a
    /// `[topology.params]` key).
    pub routing: Routing,
    /// RPL's timer parameters (used with [`Routing::Rpl`]).
    pub rpl: super::rpl::RplParams,
    /// The server is off the mesh, behind the border router (set from `[topology] server =
    /// "off-mesh"`, not a `[topology.params]` key): the layout has no server node and
    /// [`server_addr`](crate::addr::server_addr)`(0)` is routed to the border router,
    /// where the caller takes it onto the wired link (the lab's off-mesh run).
    pub off_mesh_server: bool,
}

/// The unslotted CSMA/CA and ACK parameters of one MAC.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CsmaParams {
    /// `macMinBE`.
    pub min_be: u32,
    /// `macMaxBE`.
    pub max_be: u32,
    /// `macMaxCSMABackoffs`.
    pub max_csma_backoffs: u32,
    /// `macMaxFrameRetries`.
    pub max_frame_retries: u32,
    /// `aUnitBackoffPeriod`.
    pub unit_backoff: Duration,
    /// `macAckWaitDuration`, from the end of the data frame.
    pub ack_wait: Duration,
}

impl Default for CsmaParams {
    fn default() -> Self {
        CsmaParams {
            min_be: 3,
            max_be: 5,
            max_csma_backoffs: 4,
            max_frame_retries: 3,
            unit_backoff: phy::symbols(20),
            ack_wait: phy::symbols(54),
        }
    }
}

impl Default for MeshParams {
    fn default() -> Self {
        MeshParams::from_params(
            &Params::resolve("mesh", &[MESH_PARAMS], &Settings::new()).expect("defaults are valid"),
        )
    }
}

impl MeshParams {
    /// Resolves `settings` (keys of [`MESH_PARAMS`]; any other key is an error) over the
    /// defaults, ranges checked and `mac_min_be ≤ mac_max_be`.
    pub fn resolve(settings: &Settings) -> Result<MeshParams, ParamError> {
        let p = Params::resolve("mesh", &[MESH_PARAMS], settings)?;
        if p.int("mac_min_be") > p.int("mac_max_be") {
            return Err(ParamError::BadValue {
                key: "mac_min_be".to_string(),
                value: p.int("mac_min_be").to_string(),
                expected: format!("at most mac_max_be ({})", p.int("mac_max_be")),
            });
        }
        Ok(MeshParams::from_params(&p))
    }

    fn from_params(p: &Params) -> MeshParams {
        let int = |k: &str| p.int(k) as u32;
        MeshParams {
            tx_range_m: p.float("tx_range_m"),
            interference_range_m: p.float("interference_range_m"),
            success_ratio_tx: p.float("success_ratio_tx"),
            success_ratio_rx: p.float("success_ratio_rx"),
            cca_threshold_dbm: p.float("cca_threshold_dbm"),
            csma: CsmaParams {
                min_be: int("mac_min_be"),
                max_be: int("mac_max_be"),
                max_csma_backoffs: int("mac_max_csma_backoffs"),
                max_frame_retries: int("mac_max_frame_retries"),
                unit_backoff: phy::symbols(p.int("unit_backoff_symbols")),
                ack_wait: phy::symbols(p.int("ack_wait_symbols")),
            },
            mac_ack_request: p.flag("mac_ack_request"),
            mac: Discipline::from_name(p.choice("mac")).expect("a name of Discipline::NAMES"),
            contiki: ContikiParams {
                clock_hz: int("contiki_clock_hz"),
                channel_check_rate: int("contiki_channel_check_rate"),
                neighbor_queues: int("contiki_neighbor_queues"),
                max_transmissions: int("mac_max_transmissions"),
                ack_wait: Duration::from_micros(p.int("contiki_ack_wait_us")),
                after_ack_wait: Duration::from_micros(p.int("contiki_after_ack_wait_us")),
                tx_delay: Duration::from_micros(p.int("contiki_tx_delay_us")),
                ack_delay: Duration::from_micros(p.int("contiki_ack_delay_us")),
            },
            queue_frames: int("queue_frames"),
            reass_maxage: p.secs("reass_maxage_s"),
            short_addresses: p.flag("short_addresses"),
            rpl_hbh_option: p.flag("rpl_hbh_option"),
            routing: Routing::Static,
            off_mesh_server: false,
            rpl: super::rpl::RplParams {
                trickle: super::rpl::TrickleParams {
                    interval_min_log2_ms: int("rpl_dio_interval_min"),
                    doublings: int("rpl_dio_interval_doublings"),
                    redundancy: int("rpl_dio_redundancy"),
                },
                dao_latency: p.secs("rpl_dao_latency_s"),
                default_lifetime: p.int("rpl_default_lifetime") as u8,
                lifetime_unit_s: p.int("rpl_lifetime_unit_s") as u16,
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_match_the_table_and_bad_settings_are_refused() {
        let d = MeshParams::default();
        assert_eq!(d.csma, CsmaParams::default());
        assert_eq!(d.csma.ack_wait, Duration::from_micros(864));
        assert_eq!(d.queue_frames, 8);
        assert!(d.mac_ack_request);
        assert_eq!(d.mac, Discipline::Ieee802154);
        assert_eq!(d.contiki.timebase(), Duration::from_millis(125));
        let mut s = Settings::new();
        s.set("mac", "contiki-csma");
        assert_eq!(
            MeshParams::resolve(&s).unwrap().mac,
            Discipline::ContikiCsma
        );
        let mut s = Settings::new();
        s.set("mac", "csma");
        assert!(MeshParams::resolve(&s).is_err());
        assert_eq!(d.reass_maxage, Duration::from_secs(20));
        assert_eq!(d.rpl, crate::mesh::rpl::RplParams::CONTIKI);
        let mut s = Settings::new();
        s.set("mac_min_be", "6");
        assert!(MeshParams::resolve(&s).is_err());
        let mut s = Settings::new();
        s.set("no_such", "1");
        assert!(matches!(
            MeshParams::resolve(&s),
            Err(ParamError::UnknownKey { .. })
        ));
        let mut s = Settings::new();
        s.set("success_ratio_rx", "0.5");
        assert_eq!(MeshParams::resolve(&s).unwrap().success_ratio_rx, 0.5);
    }
}
