//! scenarios/kojo-http-vs-coap.toml (spec §8e) runs whole with one replication, and one
//! 100-B download of each protocol costs exactly the bytes, packets and time the byte-exact
//! message models and the link give (docs/http-vs-coap.md explains each number).

use std::path::PathBuf;

use coaplab_lab::scenario::{Scenario, Workload};

#[test]
fn every_protocol_and_size_runs_and_the_100_byte_downloads_are_exact() {
    let path =
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../scenarios/kojo-http-vs-coap.toml");
    let s = Scenario::load(&path).unwrap_or_else(|e| panic!("{e}"));
    let runs = s.expand(Some(1), None);
    assert_eq!(runs.len(), 5 * 11);
    let mut hundred = Vec::new();
    for spec in &runs {
        let result = coaplab_lab::sim::run_one(spec).unwrap_or_else(|e| panic!("{e}"));
        let [flow] = result.flows.as_slice() else {
            panic!("one flow per run");
        };
        assert!(flow.completed, "{} did not complete", flow.cc);
        let Workload::LongTransfer { object_bytes, .. } = spec.config.flows[0].workload else {
            panic!("long transfers only");
        };
        if object_bytes == 100 {
            let fct_us = (flow.fct_s.expect("completed") * 1e6).round() as u64;
            hundred.push((
                flow.cc.clone(),
                fct_us,
                flow.bytes_up,
                flow.bytes_down,
                flow.transmissions,
            ));
        }
    }
    let expected = [
        // CoAP: two 64-B blocks (transmissions: CON requests): requests of 38 B each (the
        // first asks for 64-B blocks: early_block2), Block2 responses of 176 B in all (100 B
        // of payload, 2 × 28 B of IP + UDP, 20 B of CoAP header, token and options).
        ("default", 203_200, 76, 176, 2),
        // HTTP/1.1 (transmissions: packets delivered): SYN, SYN-ACK, ACK (40 B each),
        // request 40 + 84, response 128 + 128 + 98 (234 B in segments of 88), 1 ACK: 8.
        ("http1", 358_400, 244, 394, 8),
        // h2c: + the server's SETTINGS + WINDOW_UPDATE at accept (40 + 46), the client's
        // second segment (40 + 26), both SETTINGS ACKs (2 × 49) and an ACK; HEADERS + DATA
        // 174 B.
        ("h2", 346_400, 363, 429, 11),
        // IoT-HTTP/1.1 with TFO: the request in the SYN (40 + 12 + 44 B), SYN-ACK, ACK,
        // response 128 + 92: one round trip plus serialisation.
        ("iot-http1", 204_800, 136, 260, 5),
        // IoT-h2c with TFO: only 48 B fit the SYN (preface and 24 B of SETTINGS), HEADERS
        // wait for the SYN-ACK.
        ("iot-h2", 280_000, 226, 326, 7),
    ];
    let expected: Vec<(String, u64, u64, u64, u64)> = expected
        .iter()
        .map(|(cc, t, u, d, n)| (cc.to_string(), *t, *u, *d, *n))
        .collect();
    assert_eq!(hundred, expected);
}
