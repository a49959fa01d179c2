//! Issue 16 item 1, Observe (RFC 7641), against real peers over UDP on loopback: libcoap's
//! `coap-client-notls -s` and the aiocoap library observe our `/counter` (period 200 ms);
//! our `coaplab get --observe` observes libcoap's `/time` and our own `/counter`, and
//! deregisters at the end (the server counts it). Skipped with a printed reason when a peer
//! is absent, unless CI is set.
//!
//! aiocoap-client 0.4.17 registers and receives notifications but does not print them
//! (neither on a pipe nor on a terminal), so the aiocoap direction uses the aiocoap library
//! from the same venv.

use crate::support;

use std::process::Command;
use std::time::Duration;

use support::{
    assert_four_consecutive, coaplab, consecutive, libcoap_client_observes_counter,
    observe_libcoap_time, peer, run_bounded, OurServer,
};

const LIMIT: Duration = Duration::from_secs(20);

#[test]
fn consecutive_counts_runs() {
    assert_eq!(consecutive("6789101112"), 7);
    assert_eq!(consecutive("679"), 0);
}

#[test]
fn libcoap_client_observes_our_counter() {
    let Some(client) = peer("coap-client-notls") else {
        return;
    };
    let (_, stderr) = libcoap_client_observes_counter(&client, false);
    assert!(
        stderr.contains("coaplab server: observers added=1 "),
        "{stderr}"
    );
}

#[test]
fn aiocoap_observes_our_counter() {
    let Some(client) = peer("aiocoap-client") else {
        return;
    };
    let server = OurServer::start(&["--observe-period", "200ms"]);
    aiocoap_library_observes(&client.with_file_name("python"), &server.uri("counter"));
    let (status, _) = server.stop();
    assert!(status.success());
}

/// Over TCP the aiocoap library gets the values and Observe numbers in order too (which
/// aiocoap-client 0.4.17 does not print, see interop_observe_aiocoap.rs).
#[test]
fn aiocoap_observes_our_counter_over_tcp() {
    let Some(client) = peer("aiocoap-client") else {
        return;
    };
    let server = OurServer::start(&["--tcp", "--observe-period", "200ms"]);
    aiocoap_library_observes(&client.with_file_name("python"), &server.tcp_uri("counter"));
    let (status, stderr) = server.stop();
    assert!(status.success());
    // The script shuts its context down: Release and close end the observation.
    assert!(
        stderr.contains("coaplab server: tcp observers added=1 refused=0 deregistered=0 closed=1 "),
        "{stderr}"
    );
}

/// The aiocoap library (`python`, the venv's) observes `uri` for the answer and three
/// notifications: values and Observe numbers each one more than the last.
fn aiocoap_library_observes(python: &std::path::Path, uri: &str) {
    let script = r#"
import asyncio, aiocoap
async def main():
    ctx = await aiocoap.Context.create_client_context()
    req = aiocoap.Message(code=aiocoap.GET, uri='URI', observe=0)
    r = ctx.request(req)
    first = await r.response
    print(first.payload.decode(), first.opt.observe)
    n = 0
    async for resp in r.observation:
        print(resp.payload.decode(), resp.opt.observe)
        n += 1
        if n == 3:
            break
    await ctx.shutdown()
asyncio.run(main())
"#
    .replace("URI", uri);
    let o = run_bounded(Command::new(python).args(["-c", &script]), None, LIMIT);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let lines: Vec<(u64, u32)> = String::from_utf8_lossy(&o.stdout)
        .lines()
        .map(|l| {
            let (v, s) = l.split_once(' ').unwrap();
            (v.parse().unwrap(), s.parse().unwrap())
        })
        .collect();
    assert_eq!(lines.len(), 4, "{lines:?}");
    for w in lines.windows(2) {
        assert_eq!(w[1].0, w[0].0 + 1, "{lines:?}");
        assert_eq!(w[1].1, w[0].1 + 1, "{lines:?}");
    }
}

#[test]
fn coaplab_observes_libcoap_time() {
    let Some(bin) = peer("coap-server-notls") else {
        return;
    };
    observe_libcoap_time(&bin, "coap", false);
}

#[test]
fn coaplab_observes_our_counter_and_deregisters() {
    let server = OurServer::start(&["--observe-period", "100ms"]);
    let o = run_bounded(
        coaplab().args([
            "get",
            "--observe",
            "--count",
            "4",
            "-v",
            &server.uri("counter"),
        ]),
        None,
        LIMIT,
    );
    assert_four_consecutive(&o);
    // --duration ends it too.
    let o = run_bounded(
        coaplab().args([
            "get",
            "--observe",
            "--duration",
            "350ms",
            &server.uri("counter"),
        ]),
        None,
        LIMIT,
    );
    assert!(o.status.success());
    let n = String::from_utf8_lossy(&o.stdout).lines().count();
    assert!((3..=5).contains(&n), "{n}");
    let (status, stderr) = server.stop();
    assert!(status.success());
    // Both observations ended by a GET with Observe 1 (RFC 7641 §3.6).
    assert!(
        stderr.contains("coaplab server: observers added=2 ") && stderr.contains(" deregistered=2"),
        "{stderr}"
    );
}
