//! CoAP over TCP on loopback: a GET of an object above the simulator's old 131,064-B limit
//! (issue 11 item 12) returns exactly the object. The CLI's client advertises Max-Message-Size
//! 8 MiB, so the real-socket path never shared the simulator's bug; this keeps it that way.

use crate::support;

use std::time::Duration;

use support::{coaplab, pattern, run_bounded, OurServer};

const LIMIT: Duration = Duration::from_secs(30);

#[test]
fn objects_above_131_064_bytes_arrive_whole_over_tcp() {
    let server = OurServer::start(&["--tcp"]);
    for n in [131_064, 131_065, 200_000] {
        let o = run_bounded(
            coaplab().args(["get", &server.tcp_uri(&format!("data/{n}"))]),
            None,
            LIMIT,
        );
        assert_eq!(o.status.code(), Some(0), "{n} B: {:?}", o.stderr);
        assert_eq!(o.stdout.len(), n);
        assert!(o.stdout == pattern(n), "{n} B: the body differs");
    }
    let (status, _) = server.stop();
    assert!(status.success());
}
