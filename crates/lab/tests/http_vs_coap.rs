//! scenarios/kojo-http-vs-coap.toml (spec §8e) runs whole with one replication, and one
//! 100-B download of each protocol costs exactly the bytes and time the byte-exact message
//! models and the link give (docs/http-vs-coap.md explains each number).

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
            hundred.push((flow.cc.clone(), fct_us, flow.bytes_up, flow.bytes_down));
        }
    }
    let expected = [
        // CoAP: two 64-B blocks: requests of 36 and 38 B, Block2 responses of 176 B in all
        // (100 B of payload, 2 × 28 B of IP + UDP, 20 B of CoAP header, token and options).
        ("default", 202_400, 74, 176),
        // HTTP/1.1: 3-way handshake, 84-B request, 234-B response in 88-B segments, 1 ACK.
        ("http1", 358_400, 244, 394),
        // h2c: + preface, SETTINGS both ways, SETTINGS ACKs, WINDOW_UPDATEs, frame headers.
        ("h2", 346_400, 363, 429),
        // IoT-HTTP/1.1 with TFO: the request in the SYN (40 + 12 + 44 B), one round trip.
        ("iot-http1", 204_800, 136, 260),
        // IoT-h2c with TFO: only 48 B fit the SYN, HEADERS wait for the SYN-ACK.
        ("iot-h2", 280_000, 226, 326),
    ];
    let expected: Vec<(String, u64, u64, u64)> = expected
        .iter()
        .map(|(cc, t, u, d)| (cc.to_string(), *t, *u, *d))
        .collect();
    assert_eq!(hundred, expected);
}
