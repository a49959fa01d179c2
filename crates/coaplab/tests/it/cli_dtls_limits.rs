//! `coaplab server --dtls` and `coaplab get coaps://` in normal use (coaplab issue 32, item 2):
//! the client sends close_notify when it is done, so sequential runs, more of them than
//! `--dtls-max-sessions`, all succeed and each frees its slot at once.

use crate::support;

use std::io::BufRead;
use std::time::Duration;

use support::{coaplab, listening_port, run_bounded, OurServer};

const LIMIT: Duration = Duration::from_secs(30);

#[test]
fn sequential_coaps_gets_beyond_max_sessions_all_succeed() {
    let mut server = OurServer::start(&["--dtls", "-k", "secret", "--dtls-max-sessions", "2"]);
    let mut line = String::new();
    while !line.contains("dtls listening on") {
        line.clear();
        server.stderr_mut().read_line(&mut line).unwrap();
    }
    let port = listening_port(&line);
    let uri = format!("coaps://127.0.0.1:{port}/data/10");
    for run in 0..5 {
        let o = run_bounded(
            coaplab().args(["get", &uri, "-k", "secret", "--timeout", "20s"]),
            None,
            LIMIT,
        );
        assert_eq!(
            o.status.code(),
            Some(0),
            "run {run}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        assert_eq!(o.stdout, support::pattern(10));
    }
    let stderr = server.stop_clean();
    let dtls = stderr
        .lines()
        .find(|l| l.contains("dtls handshakes="))
        .unwrap_or_else(|| panic!("{stderr}"));
    assert!(dtls.contains("dtls handshakes=5 "), "{dtls}");
    // Each run's close_notify freed its slot: no eviction was needed.
    assert!(dtls.contains(" peer_closed=5 "), "{dtls}");
    assert!(dtls.contains(" sessions_evicted=0 "), "{dtls}");
    assert!(dtls.contains(" hello_verifies=5 "), "{dtls}");
}
