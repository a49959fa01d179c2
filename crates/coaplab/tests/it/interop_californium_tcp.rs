//! CoAP over TCP (RFC 8323) with Californium 3.14.0's `element-connector-tcp-netty` (issue 33):
//! it does not interoperate, and these tests pin why. Californium's TCP sends no CSM (7.01) at
//! the start of a connection (RFC 8323 §5.3: "One CSM MUST be sent by each endpoint at the
//! start of the Transport Connection"; CSM support was never merged upstream,
//! eclipse-californium/californium#2092), so our client aborts the session when Californium's
//! server answers with a response first, and our server aborts when Californium's client sends
//! its request first. Skipped with a printed reason when the peer is not built, unless CI is
//! set.

use crate::support;

use std::process::Command;
use std::time::Duration;

use support::{californium, coaplab, run_bounded, CfServer, OurServer};

const LIMIT: Duration = Duration::from_secs(60);

#[test]
fn our_tcp_client_aborts_californium_server_without_csm() {
    let Some(cf) = californium() else {
        return;
    };
    // Its own TCP port from the kernel: `--tcp` alone binds TCP on the UDP port, which a
    // concurrent test may already hold for TCP (a BindException seen in CI).
    let server = CfServer::start(&cf, &["--tcp-bind", "127.0.0.1:0"]);
    let uri = format!("coap+tcp://127.0.0.1:{}/data/10", server.port_of("tcp"));
    let o = run_bounded(coaplab().args(["get", &uri, "-v"]), None, LIMIT);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(4), "{err}");
    assert!(err.contains("the first message must be a CSM"), "{err}");
    // Our CSM went out first, then our request; what came back was not a CSM.
    assert!(err.contains("send signal=7.01 CSM"), "{err}");
    // Over UDP the same server answers.
    let o = run_bounded(coaplab().args(["get", &server.uri("data/10")]), None, LIMIT);
    assert_eq!(o.status.code(), Some(0));
}

#[test]
fn californium_tcp_client_is_aborted_by_our_server() {
    let Some(cf) = californium() else {
        return;
    };
    let server = OurServer::start(&["--tcp", "-v"]);
    let o = run_bounded(
        Command::new(&cf).args(["get", &server.tcp_uri("data/10"), "--timeout-ms", "3000"]),
        None,
        LIMIT,
    );
    // Californium ignores our Abort (7.05) and times out.
    assert_eq!(
        o.status.code(),
        Some(3),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(o.stdout.is_empty());
    let (status, stderr) = server.stop();
    assert!(status.success());
    assert!(
        stderr.contains("the first message must be a CSM")
            && stderr.contains("tcp sessions=0 served=0 aborted=1 "),
        "{stderr}"
    );
}
