//! scenarios/kojo-http-vs-coap.toml (docs/experiments.md §8e) runs whole with one replication, and one
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
        // The TCP variants run the TCP model's defaults (the testbed kernel's: 8 B of MSS and
        // window-scale options on SYN and SYN-ACK, each 3.2 ms at 20 kbit/s, both on the
        // critical path: + 6.4 ms; quick-ACK with Linux's pingpong mode). Quick-ACK ACKs each
        // data segment at once (40 B; a data segment queued behind such an ACK waits its
        // 21.6 ms of serialisation, 40 + 14 B) until the end replies within `ato` of the data
        // it received, which makes it interactive (pingpong): later data is ACKed by the
        // reply. The idealised TCP's values (bare SYNs, no quick-ACK) are in brackets.
        // HTTP/1.1 (transmissions: packets delivered): SYN, SYN-ACK (48 B each), ACK, request
        // 40 + 84, the server's quick ACK (the request is the first data it receives), response
        // 128 + 128 + 98 (234 B in segments of 88), the client's 2 quick ACKs: 10. The response
        // waits behind the ACK of the request: + 6.4 + 21.6 ms. [358.4 ms, 244 B, 394 B, 8]
        ("http1", 386_400, 292, 442, 10),
        // h2c: + the server's SETTINGS + WINDOW_UPDATE at accept (40 + 46), the client's
        // second segment (40 + 26), both SETTINGS ACKs (2 × 49), HEADERS + DATA 174 B, and one
        // quick ACK each way. The server quick-ACKs the client's first segment, then its
        // SETTINGS ACK (a reply within `ato`) makes it interactive, so the client's HEADERS get
        // no quick ACK; the SETTINGS ACK, behind that quick ACK, is still being sent (14.8 ms)
        // when the HEADERS arrive: + 6.4 + 14.8 ms. [346.4 ms, 363 B, 429 B, 11]
        ("h2", 367_600, 411, 477, 13),
        // IoT-HTTP/1.1 with TFO: the request in the SYN (40 + 8 + 12 + 44 B), SYN-ACK, ACK,
        // response 128 + 92, the client's quick ACK after the first response segment: one
        // round trip plus serialisation, + 6.4 ms. [204.8 ms, 136 B, 260 B, 5]
        ("iot-http1", 211_200, 184, 268, 6),
        // IoT-h2c with TFO: only 48 B fit the SYN (preface and 24 B of SETTINGS), HEADERS
        // wait for the SYN-ACK. The server's SETTINGS, sent within `ato` of the SYN's data,
        // make it interactive before the HEADERS arrive, so the response goes out at once:
        // + 6.4 ms; the client's one quick ACK (+ 40 B up). [280.0 ms, 226 B, 326 B, 7]
        ("iot-h2", 286_400, 274, 334, 8),
    ];
    let expected: Vec<(String, u64, u64, u64, u64)> = expected
        .iter()
        .map(|(cc, t, u, d, n)| (cc.to_string(), *t, *u, *d, *n))
        .collect();
    assert_eq!(hundred, expected);
}
