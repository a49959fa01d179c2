//! The long-lived flow of docs/experiments.md §5.1 over the nbiot downlink with an infinite buffer:
//! 401 segments of the 102,408-B response after both CSMs and the GET.

use crate::tcp_util::{nbiot, transfer, Pair};
use coaplab_base::time::Instant;
use coaplab_netsim::tcp::TcpConfig;

#[test]
fn nbiot_infinite_buffer_transfer_timeline() {
    let (up, down) = nbiot();
    // The idealised TCP (exact timers, no quick-ACK, bare SYNs): this timeline decomposes the
    // gap to docs/experiments.md §9.2's ideal figure; the defaults' FCT is
    // `nbiot_buffer_sweep_against_table_6`.
    let mut p = Pair::new(TcpConfig::idealised(), up, down);
    let (get_at, done_at) = transfer(&mut p, 102_408);
    // Slow start from IW 4 with an ACK every second segment: each ACK adds 2 to cwnd.
    assert_eq!(
        p.log[..17],
        [
            "0 C SYN 0 - 0",
            "220333 S SYNACK 0 1 0",
            "646000 C ACK 1 1 0",
            "646000 C DATA 1 1 6",
            "646000 C DATA 7 1 5",
            "866333 S DATA 1 1 2",
            "878466 S DATA 3 12 256",
            "878466 S DATA 259 12 256",
            "878466 S DATA 515 12 256",
            "1372400 C ACK 12 259 0",
            "1530266 C ACK 12 771 0",
            "1592733 S DATA 771 12 256",
            "1592733 S DATA 1027 12 256",
            "1592733 S DATA 1283 12 256",
            "1592733 S DATA 1539 12 256",
            "1750600 S DATA 1795 12 256",
            "1750600 S DATA 2051 12 256",
        ]
    );
    // The last segment (8 B) alone is ACKed by the delayed-ACK rule's "more than one MSS"
    // (256 + 8 > 256) at its arrival.
    assert_eq!(
        p.log.last().map(String::as_str),
        Some("33518800 C ACK 12 102411 0")
    );
    assert_eq!(get_at, Instant::from_nanos(646_000_001));
    assert_eq!(done_at, Instant::from_nanos(33_518_800_004));
    // FCT 32.8728 s: the ideal 32.19 s of docs/experiments.md §9.2 plus
    //   +  17.466 ms: the GET waits behind the handshake ACK and the CSM on the uplink;
    //   +  30.000 ms: rest-of-path, 15 ms each way;
    //   + 639.86 ms: downlink idle during slow start (IW 4, one ACK per two segments).
    // The published median is 32.867 s (5.8 ms less).
    assert_eq!(
        done_at - get_at,
        coaplab_base::time::Duration::from_nanos(32_872_800_003)
    );
    let s = p.server.stats();
    assert_eq!(
        (s.data_segments_sent, s.segments_retransmitted, s.rto_count),
        (402, 0, 0)
    );
}

/// The transfer of docs/experiments.md §5.1 through netsim's own nbiot link (byte FIFO counting the
/// packet in service, 15 ms rest-of-path) at the four buffers of [P] Table 6 — nothing tuned — with
/// the defaults (the stock kernel's quick-ACK 16, HZ-250 timer wheel, 48-B SYNs) and with the
/// idealised TCP the defaults were before docs/experiments.md §5.3's 2026-12-07 revision. Published
/// New Reno medians: 36.213, 58.235, 95.138, 32.867 s (docs/calibration.md).
#[test]
fn nbiot_buffer_sweep_against_table_6() {
    let sweep = |cfg: TcpConfig| {
        let mut got = Vec::new();
        for buffer in [2_500u64, 14_100, 28_200, 1_410_000] {
            let mut net = coaplab_netsim::NetworkConfig::preset(coaplab_netsim::Preset::Nbiot);
            net.set_buffer_bytes(buffer);
            let rest = coaplab_base::time::Duration::from_millis(15);
            let up = crate::tcp_util::Path::link(&net.up, rest);
            let down = crate::tcp_util::Path::link(&net.down, rest);
            let mut p = Pair::new(cfg.clone(), up, down);
            let (get_at, done_at) = transfer(&mut p, 102_408);
            let s = p.server.stats();
            got.push((
                buffer,
                (done_at - get_at).as_micros(),
                s.segments_retransmitted,
                s.fast_recoveries,
                s.rto_count,
            ));
        }
        got
    };
    // The defaults give exactly the quick-ACK-16 column of `tcp_quickack`: no retransmission
    // timer fires in these runs, no delayed-ACK timer fires either (checked: every client ACK
    // leaves at a data arrival — the quick-ACK budget, then every second segment, and the last
    // 8-B segment is more than one MSS unacknowledged), and
    // the 48-B SYNs lengthen only the handshake, before the GET that starts the FCT.
    assert_eq!(
        sweep(TcpConfig::default()),
        [
            (2_500, 35_064_933, 16, 3, 0),
            (14_100, 57_498_533, 55, 1, 0),
            (28_200, 94_976_666, 99, 1, 0),
            (1_410_000, 32_714_000, 0, 0, 0),
        ]
    );
    assert_eq!(
        sweep(TcpConfig::idealised()),
        [
            (2_500, 34_825_200, 12, 3, 0),
            (14_100, 57_657_333, 55, 1, 0),
            (28_200, 95_135_466, 99, 1, 0),
            (1_410_000, 32_872_800, 0, 0, 0),
        ]
    );
}
