//! `quickack_segments` (docs/experiments.md §10 #15) on the §5.1 transfer over the nbiot link at
//! the four buffers of [P] Table 6: the sensitivity of the New Reno cells to Linux's quick-ACK
//! phase.
//!
//! On [`TcpConfig::idealised`] with `quickack_segments` set: the sensitivity to quick-ACK alone,
//! on exact timers and bare SYNs (docs/calibration.md, the idealised column); the defaults
//! (quick-ACK 16 with the timer wheel and SYN options) are `tcp_bulk`'s.

use crate::tcp_util::{transfer, Pair, Path};
use coaplab_base::time::Duration;
use coaplab_netsim::tcp::TcpConfig;

fn run(buffer: u64, quickack: u32) -> (i64, u64, u64, u64, Pair) {
    let mut net = coaplab_netsim::NetworkConfig::preset(coaplab_netsim::Preset::Nbiot);
    net.set_buffer_bytes(buffer);
    let rest = Duration::from_millis(15);
    let cfg = TcpConfig {
        quickack_segments: quickack,
        ..TcpConfig::idealised()
    };
    let mut p = Pair::new(cfg, Path::link(&net.up, rest), Path::link(&net.down, rest));
    let (get_at, done_at) = transfer(&mut p, 102_408);
    let s = p.server.stats();
    let r = (
        (done_at - get_at).as_micros(),
        s.segments_retransmitted,
        s.fast_recoveries,
        s.rto_count,
    );
    (r.0, r.1, r.2, r.3, p)
}

/// With a budget of 4 each end ACKs its first four data segments at once: the server its
/// peer's CSM and GET (two pure ACKs ahead of the response), the client the server's CSM and
/// the first three segments of the response; then every second segment again.
#[test]
fn quickack_acks_the_first_segments_one_by_one() {
    let (.., p) = run(1_410_000, 4);
    assert_eq!(
        p.log[5..17],
        [
            "866333 S DATA 1 1 2",
            "872466 S ACK 3 7 0",
            "878466 S ACK 3 12 0",
            "878466 S DATA 3 12 256",
            "878466 S DATA 259 12 256",
            "878466 S DATA 515 12 256",
            "1292533 C ACK 12 3 0",
            "1392800 C ACK 12 259 0",
            "1471733 C ACK 12 515 0",
            "1512866 S DATA 771 12 256",
            "1512866 S DATA 1027 12 256",
            "1550666 C ACK 12 771 0",
        ]
    );
    // The budget is spent: the next ACK covers two segments.
    let next_client_ack = p.log[17..]
        .iter()
        .find(|l| l.contains(" C ACK "))
        .expect("an ACK");
    assert!(
        next_client_ack.ends_with("ACK 12 1283 0"),
        "{next_client_ack}"
    );
}

#[test]
fn quickack_sensitivity_table_6() {
    let mut got = Vec::new();
    for buffer in [2_500u64, 14_100, 28_200, 1_410_000] {
        for q in [0u32, 2, 8, 16] {
            let (fct, rtx, fr, rto, _) = run(buffer, q);
            println!("buffer {buffer} quickack {q}: fct {fct} us, rtx {rtx}, fast recoveries {fr}, rto {rto}");
            got.push((buffer, q, fct, rtx, fr, rto));
        }
    }
    // (buffer, quickack_segments, FCT µs, retransmitted, fast recoveries, RTOs). Published
    // New Reno medians: 36.213, 58.235, 95.138, 32.867 s.
    assert_eq!(
        got,
        [
            (2_500, 0, 34_825_200, 12, 3, 0),
            (2_500, 2, 34_745_333, 12, 3, 0),
            (2_500, 8, 35_064_933, 16, 3, 0),
            (2_500, 16, 35_064_933, 16, 3, 0),
            (14_100, 0, 57_657_333, 55, 1, 0),
            (14_100, 2, 57_577_466, 55, 1, 0),
            (14_100, 8, 57_498_533, 55, 1, 0),
            (14_100, 16, 57_498_533, 55, 1, 0),
            (28_200, 0, 95_135_466, 99, 1, 0),
            (28_200, 2, 95_055_600, 99, 1, 0),
            (28_200, 8, 94_976_666, 99, 1, 0),
            (28_200, 16, 94_976_666, 99, 1, 0),
            (1_410_000, 0, 32_872_800, 0, 0, 0),
            (1_410_000, 2, 32_792_933, 0, 0, 0),
            (1_410_000, 8, 32_714_000, 0, 0, 0),
            (1_410_000, 16, 32_714_000, 0, 0, 0),
        ]
    );
}

/// Prints the server's time-sequence of one cell (`QA_TRACE=buffer,quickack`), for
/// docs/tcp-validation.md.
#[test]
fn print_trace() {
    let Ok(spec) = std::env::var("QA_TRACE") else {
        return;
    };
    let mut it = spec
        .split(',')
        .map(|v| v.trim().parse::<u64>().expect("number"));
    let (buffer, q) = (it.next().expect("buffer"), it.next().unwrap_or(0) as u32);
    let (.., p) = run(buffer, q);
    for l in &p.log {
        println!("LOG {l}");
    }
    for l in &p.server_trace {
        println!("CC {l}");
    }
}
