//! Issue 16 item 1, Observe over TCP (RFC 7641 with RFC 8323 §7), against libcoap on loopback:
//! `coap-client-notls -s` observes our `/counter` over `coap+tcp://`, and our `coaplab get
//! --observe` observes libcoap's `/time` and our own `/counter` over `coap+tcp://`, and
//! deregisters with Observe 1 at the end (the server counts it); an observation ends with
//! its connection (exit 4). Skipped with a printed reason when libcoap is absent, unless CI
//! is set.

use crate::support;

use std::time::Duration;

use support::{
    assert_four_consecutive, coaplab, libcoap_client_observes_counter, observe_libcoap_time, peer,
    run_bounded, OurServer,
};

const LIMIT: Duration = Duration::from_secs(20);

/// The numbers on `out`'s lines.
fn numbers(out: &[u8]) -> Vec<u64> {
    String::from_utf8_lossy(out)
        .lines()
        .map(|l| l.trim().parse().unwrap())
        .collect()
}

#[test]
fn libcoap_client_observes_our_counter_over_tcp() {
    let Some(client) = peer("coap-client-notls") else {
        return;
    };
    let (o, stderr) = libcoap_client_observes_counter(&client, true);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    // libcoap deregisters with a GET carrying Observe 1 too.
    assert!(
        stderr.contains("coaplab server: tcp observers added=1 refused=0 deregistered=1 closed=0"),
        "{stderr}"
    );
}

#[test]
fn coaplab_observes_libcoap_time_over_tcp() {
    let Some(bin) = peer("coap-server-notls") else {
        return;
    };
    let o = observe_libcoap_time(&bin, "coap+tcp", true);
    // libcoap counts Observe up over TCP too; two of the three came as notifications.
    let err = String::from_utf8_lossy(&o.stderr).into_owned();
    assert_eq!(
        err.matches(" recv notification=2.05 Content ").count(),
        2,
        "{err}"
    );
}

#[test]
fn coaplab_observes_our_counter_over_tcp_and_deregisters() {
    let server = OurServer::start(&["--tcp", "--observe-period", "100ms"]);
    let o = run_bounded(
        coaplab().args([
            "get",
            "--observe",
            "--count",
            "4",
            "-v",
            &server.tcp_uri("counter"),
        ]),
        None,
        LIMIT,
    );
    assert_four_consecutive(&o);
    let (status, stderr) = server.stop();
    assert!(status.success());
    assert!(
        stderr.contains("coaplab server: tcp observers added=1 refused=0 deregistered=1 closed=0 "),
        "{stderr}"
    );
}

#[test]
fn an_observation_over_tcp_ends_with_its_connection() {
    let server = OurServer::start(&["--tcp", "--observe-period", "100ms"]);
    let uri = server.tcp_uri("counter");
    let client = std::thread::spawn(move || {
        run_bounded(
            coaplab().args(["get", "--observe", "--duration", "10s", &uri]),
            None,
            LIMIT,
        )
    });
    std::thread::sleep(Duration::from_millis(500));
    let (status, _) = server.stop();
    assert!(status.success());
    let o = client.join().unwrap();
    assert_eq!(o.status.code(), Some(4), "{o:?}");
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("the observation is over"),
        "{o:?}"
    );
    assert!(numbers(&o.stdout).len() >= 2, "{o:?}");
}
