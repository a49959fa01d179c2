//! Interop with Eclipse Californium 3.14.0 over UDP (issue 33): our client against the
//! Californium peer's server (scripts/californium/CfLab.java, built by scripts/test.sh into
//! `.peers/californium`), and its client, in each of Californium's congestion-control modes,
//! against our server: 102,400-B block-wise GET and PUT both ways, bytes compared exactly, and
//! Observe both ways. Skipped with a printed reason when the peer is not built, unless CI is
//! set.

use crate::support;

use std::path::Path;
use std::process::Command;
use std::time::Duration;

use support::{
    assert_ok, californium, californium_with_dir, coaplab, noise, pattern, run_bounded, CfServer,
    OurServer,
};

/// A JVM starting on two shared cores takes seconds; each transfer well under one.
const LIMIT: Duration = Duration::from_secs(60);
const ALGORITHMS: [&str; 3] = ["default", "cocoa", "fasor"];
/// Californium's `CoapConfig.CongestionControlMode` values (NULL is plain RFC 7252).
const CF_MODES: [&str; 6] = [
    "NULL",
    "COCOA",
    "COCOA_STRONG",
    "BASIC_RTO",
    "LINUX_RTO",
    "PEAKHOPPER_RTO",
];

/// Runs `cf ARGS…` (bounded by [`LIMIT`]), asserts exit 0 and returns stdout and stderr.
fn cf_ok(cf: &Path, args: &[&str], input: Option<&[u8]>, what: &str) -> (Vec<u8>, String) {
    let o = run_bounded(Command::new(cf).args(args), input, LIMIT);
    assert_ok(&o, what);
    (o.stdout, String::from_utf8_lossy(&o.stderr).into_owned())
}

#[test]
fn our_client_against_californium_server() {
    let Some(cf) = californium() else {
        return;
    };
    let server = CfServer::start(&cf, &[]);
    for (i, cc) in ALGORITHMS.into_iter().enumerate() {
        // 100 Block2 blocks from Californium's /data/102400.
        let o = run_bounded(
            coaplab().args(["get", &server.uri("data/102400"), "--cc", cc]),
            None,
            LIMIT,
        );
        assert_ok(&o, &format!("{cc} get data/102400"));
        assert!(
            o.stdout == pattern(102_400),
            "{cc}: GET data/102400 differs"
        );
        // A 102,400-B Block1 upload kept by /store, read back with Block2; and echoed by
        // /echo (the answer to the last Block1 block is the first of 100 Block2 blocks).
        let body = noise(102_400, i as u64 + 1);
        let o = run_bounded(
            coaplab().args([
                "put",
                &server.uri("store"),
                "--cc",
                cc,
                "--payload-file",
                "-",
            ]),
            Some(&body),
            LIMIT,
        );
        assert_ok(&o, &format!("{cc} put store"));
        let o = run_bounded(
            coaplab().args(["get", &server.uri("store"), "--cc", cc]),
            None,
            LIMIT,
        );
        assert_ok(&o, &format!("{cc} get store"));
        assert!(o.stdout == body, "{cc}: /store differs after PUT");
        let o = run_bounded(
            coaplab().args([
                "post",
                &server.uri("echo"),
                "--cc",
                cc,
                "--payload-file",
                "-",
            ]),
            Some(&body),
            LIMIT,
        );
        assert_ok(&o, &format!("{cc} post echo"));
        assert!(o.stdout == body, "{cc}: /echo differs");
    }
    // Small resources: Unix seconds, and Californium's own /.well-known/core.
    let o = run_bounded(coaplab().args(["get", &server.uri("time")]), None, LIMIT);
    assert_ok(&o, "get time");
    let secs: u64 = String::from_utf8_lossy(&o.stdout).parse().unwrap();
    assert!(secs > 1_700_000_000);
    let o = run_bounded(
        coaplab().args(["get", &server.uri(".well-known/core")]),
        None,
        LIMIT,
    );
    assert_ok(&o, "get .well-known/core");
    let core = String::from_utf8_lossy(&o.stdout);
    assert!(
        core.contains("</counter>;obs") && core.contains("</echo>"),
        "{core}"
    );
    // 4.04 from Californium: exit 1.
    let o = run_bounded(coaplab().args(["get", &server.uri("nothing")]), None, LIMIT);
    assert_eq!(o.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&o.stderr).contains("4.04"));
}

/// The requests a `cf -v` run sent, retransmissions not counted (its `sends=N
/// retransmissions=M` summary: N − M).
fn first_sends(log: &str) -> u64 {
    let field = |name: &str| -> u64 {
        log.split_whitespace()
            .find_map(|w| w.strip_prefix(name))
            .and_then(|v| v.parse().ok())
            .unwrap_or_else(|| panic!("no {name} in {log}"))
    };
    field("sends=") - field("retransmissions=")
}

/// Californium's client in each congestion-control mode fetches `/data/102400` (100 Block2
/// blocks, one request each) from our server, after one small GET; bytes exact.
#[test]
fn californium_client_gets_from_our_server() {
    let Some(cf) = californium() else {
        return;
    };
    let server = OurServer::start(&[]);
    let (small, _) = cf_ok(
        &cf,
        &["get", &server.uri("data/10")],
        None,
        "cf get data/10",
    );
    assert_eq!(small, pattern(10));
    for mode in CF_MODES {
        let (got, log) = cf_ok(
            &cf,
            &["get", &server.uri("data/102400"), "--cc", mode, "-v"],
            None,
            &format!("cf {mode} get data/102400"),
        );
        assert!(got == pattern(102_400), "{mode}: GET data/102400 differs");
        assert!(log.contains(&format!(" mode={mode}")), "{mode}: {log}");
        assert_eq!(first_sends(&log), 100, "{mode}: {log}");
    }
    server.stop_clean();
}

/// Californium's client in each mode PUTs 102,400 B (100 Block1 blocks) to our `/echo`, which
/// answers the body back in 100 Block2 blocks; bytes exact.
#[test]
fn californium_client_puts_to_our_server() {
    let Some((cf, dir)) = californium_with_dir("cf-put") else {
        return;
    };
    let server = OurServer::start(&[]);
    for (i, mode) in CF_MODES.into_iter().enumerate() {
        let body = noise(102_400, 40 + i as u64);
        let file = dir.join(format!("in-{mode}.bin"));
        std::fs::write(&file, &body).unwrap();
        let method = if i % 2 == 0 { "put" } else { "post" };
        let (got, log) = cf_ok(
            &cf,
            &[
                method,
                &server.uri("echo"),
                "--cc",
                mode,
                "--payload-file",
                file.to_str().unwrap(),
                "-v",
            ],
            None,
            &format!("cf {mode} {method} echo"),
        );
        assert!(got == body, "{mode}: {method} /echo differs");
        // 100 Block1 blocks up, then the echo's 99 remaining Block2 blocks.
        assert_eq!(first_sends(&log), 199, "{mode}: {log}");
    }
    server.stop_clean();
    let _ = std::fs::remove_dir_all(&dir);
}

/// The values of an observation of a `/counter`: increasing, the three notifications
/// consecutive. The registration's answer may be followed by a gap, both ways, for
/// Californium's reasons:
///
/// - Californium 3.14's client drops a notification that it receives while the registration's
///   exchange is still being completed (its log: `UdpMatcher - ignoring response CON-2.05 …,
///   exchange not longer matching!`), without an ACK or an RST: it happens when the first
///   notification follows the piggybacked answer closely and the JVM reads both datagrams
///   before handling the first (under load). Our server then waits for the CON
///   notification's ACK (2–3 s) and sends the newest value instead (`replaced=`).
/// - Californium's server adds the observe relation after computing the registration's
///   answer, so a change in between is not notified to the new observer.
fn assert_notifications(values: &[u64]) {
    assert!(values.windows(2).all(|w| w[1] > w[0]), "{values:?}");
    assert!(
        values[1..].windows(2).all(|w| w[1] == w[0] + 1),
        "{values:?}"
    );
}

/// Californium's client observes our `/counter` (period 100 ms) for 4 answers (see
/// [`assert_notifications`]), then its deregistration (a GET with Observe 1) is counted by our
/// server.
#[test]
fn californium_client_observes_our_counter() {
    let Some(cf) = californium() else {
        return;
    };
    let server = OurServer::start(&["--observe-period", "100ms"]);
    let (out, log) = cf_ok(
        &cf,
        &["get", &server.uri("counter"), "--observe", "--count", "4"],
        None,
        "cf observe",
    );
    let values: Vec<u64> = String::from_utf8_lossy(&out)
        .lines()
        .map(|l| l.trim().parse().unwrap())
        .collect();
    assert_eq!(values.len(), 4, "{values:?} {log}");
    assert_notifications(&values);
    let (status, stderr) = server.stop();
    assert!(status.success());
    assert!(
        stderr.contains("observers added=1 ") && stderr.contains(" deregistered=1"),
        "{stderr}"
    );
}

/// Our client observes Californium's `/counter` (period 100 ms) for 4 answers (see
/// [`assert_notifications`]), increasing Observe numbers (Californium's sequence does not start at 0), and the
/// Californium server's observer count back at 0 after our deregistration.
#[test]
fn our_client_observes_californium_counter() {
    let Some(cf) = californium() else {
        return;
    };
    let mut server = CfServer::start(&cf, &["--observe-period-ms", "100"]);
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
    assert_ok(&o, "coaplab get --observe");
    let out = String::from_utf8_lossy(&o.stdout);
    let values: Vec<u64> = out.lines().map(|l| l.trim().parse().unwrap()).collect();
    assert_eq!(values.len(), 4, "{out:?}");
    assert_notifications(&values);
    let err = String::from_utf8_lossy(&o.stderr);
    let seqs: Vec<u32> = err
        .lines()
        .filter_map(|l| l.strip_prefix("observe="))
        .map(|n| n.trim().parse().unwrap())
        .collect();
    assert_eq!(seqs.len(), 4, "{err}");
    assert!(seqs.windows(2).all(|w| w[1] > w[0]), "{seqs:?}");
    let gone = server.child.wait_until(Duration::from_secs(10), |lines| {
        lines
            .iter()
            .any(|(_, l)| l == "californium server: observers=0")
    });
    assert!(gone, "{:?}", server.child.lines);
}
