//! CoAP over TCP (RFC 8323) on loopback: `coaplab server --tcp` and `coaplab
//! get|put|post|delete|bench coap+tcp://…` against each other and against scripted raw peers:
//! exact bytes, exit codes, the `-v` trace.

use crate::support;

use std::io::{Read, Write};
use std::net::TcpListener;
use std::time::Duration;

use support::{assert_time_and_core, bench_500ms, coaplab, noise, pattern, run_bounded, OurServer};

const LIMIT: Duration = Duration::from_secs(30);

#[test]
fn get_put_post_delete_over_tcp_against_our_server() {
    let server = OurServer::start(&["--tcp"]);
    let o = run_bounded(
        coaplab().args(["get", &server.tcp_uri("data/102400"), "-v"]),
        None,
        LIMIT,
    );
    assert_eq!(o.status.code(), Some(0), "{:?}", o.stderr);
    assert!(o.stdout == pattern(102_400));
    // One request, one response: the 102,400 B come as one message (2-B token: 9-B header).
    let log = String::from_utf8(o.stderr).unwrap();
    assert_eq!(log.matches(" send request=").count(), 1, "{log}");
    assert!(log.contains(" send signal=7.01 CSM bytes=7"), "{log}");
    assert!(
        log.contains(" recv response=2.05 Content request=0 bytes=102409 payload=102400"),
        "{log}"
    );
    assert!(log.contains("no effect over TCP"), "{log}");

    // 200 kB up and back as one message each way (after the server's CSM: > 1,152 B).
    let body = noise(200_000, 3);
    for method in ["put", "post"] {
        let o = run_bounded(
            coaplab().args([method, &server.tcp_uri("echo"), "--payload-file", "-"]),
            Some(&body),
            LIMIT,
        );
        assert_eq!(o.status.code(), Some(0), "{method}: {:?}", o.stderr);
        assert!(o.stdout == body, "{method} echo differs");
    }
    assert_time_and_core(
        &server.tcp_uri("time"),
        &server.tcp_uri(".well-known/core"),
        LIMIT,
    );
    let code = |args: &[&str]| run_bounded(coaplab().args(args), None, LIMIT).status.code();
    assert_eq!(code(&["get", &server.tcp_uri("missing")]), Some(1));
    assert_eq!(code(&["delete", &server.tcp_uri("echo")]), Some(1));
    assert_eq!(code(&["get", "coaps+tcp://127.0.0.1/x"]), Some(2));
    // --cc is accepted (and checked) though it has no effect over TCP.
    assert_eq!(
        code(&["get", &server.tcp_uri("data/1"), "--cc", "cocoa"]),
        Some(0)
    );
    assert_eq!(
        code(&["get", &server.tcp_uri("data/1"), "--cc", "nope"]),
        Some(2)
    );
    // The URI's query reaches the server (data/N ignores it).
    assert_eq!(code(&["get", &server.tcp_uri("data/3?x=1")]), Some(0));
    let (status, stderr) = server.stop();
    assert!(status.success());
    assert!(stderr.contains("tcp sessions="), "{stderr}");
    assert!(stderr.contains(" aborted=0 malformed=0 "), "{stderr}");
}

#[test]
fn bench_over_tcp_counts_completed_requests() {
    let server = OurServer::start(&["--tcp"]);
    let out = bench_500ms(&server.tcp_uri("data/10"), 4, LIMIT);
    let n: u64 = out
        .split_whitespace()
        .find_map(|w| w.strip_prefix("requests="))
        .unwrap()
        .parse()
        .unwrap();
    assert!(n > 10, "{out}");
    assert!(out.contains(" failed=0 retransmissions=0 "), "{out}");
    let (status, _) = server.stop();
    assert!(status.success());
}

/// A raw TCP peer on a free loopback port that runs `script` on the first connection.
fn raw_peer(
    script: impl FnOnce(std::net::TcpStream) + Send + 'static,
) -> (u16, std::thread::JoinHandle<()>) {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = l.local_addr().unwrap().port();
    let h = std::thread::spawn(move || {
        let (s, _) = l.accept().unwrap();
        script(s);
    });
    (port, h)
}

#[test]
fn exit_codes_over_tcp_tell_timeout_abort_and_refusal_apart() {
    // A peer that accepts and never answers: timeout, exit 3.
    let (port, h) = raw_peer(|mut s| {
        let mut b = Vec::new();
        let _ = s.read_to_end(&mut b);
    });
    let uri = format!("coap+tcp://127.0.0.1:{port}/x");
    let o = run_bounded(
        coaplab().args(["get", &uri, "--timeout", "300ms"]),
        None,
        LIMIT,
    );
    assert_eq!(o.status.code(), Some(3), "{:?}", o.stderr);
    h.join().unwrap();

    // A peer whose first message is not a CSM: we abort (Abort sent), exit 4.
    let (port, h) = raw_peer(|mut s| {
        s.write_all(&[0x01, 0x45, 0x00]).unwrap();
        let mut b = Vec::new();
        let _ = s.read_to_end(&mut b);
        // Our CSM, our GET, then our Abort (7.05).
        assert!(b.windows(1).any(|w| w[0] == 0xe5), "{b:?}");
    });
    let uri = format!("coap+tcp://127.0.0.1:{port}/x");
    let o = run_bounded(coaplab().args(["get", &uri, "-v"]), None, LIMIT);
    assert_eq!(o.status.code(), Some(4));
    let err = String::from_utf8(o.stderr).unwrap();
    assert!(err.contains("we aborted the session"), "{err}");
    assert!(err.contains(" send signal=7.05 Abort"), "{err}");
    h.join().unwrap();

    // A peer that aborts with Bad-CSM-Option 2: exit 4, the option named.
    let (port, h) = raw_peer(|mut s| {
        // A CSM, then Abort with Bad-CSM-Option (option 2) = 2.
        s.write_all(&[0x00, 0xe1, 0x20, 0xe5, 0x21, 0x02]).unwrap();
        let mut b = Vec::new();
        let _ = s.read_to_end(&mut b);
    });
    let uri = format!("coap+tcp://127.0.0.1:{port}/x");
    let o = run_bounded(coaplab().args(["get", &uri]), None, LIMIT);
    assert_eq!(o.status.code(), Some(4));
    let err = String::from_utf8(o.stderr).unwrap();
    assert!(
        err.contains("the peer aborted the session (bad CSM option 2)"),
        "{err}"
    );
    h.join().unwrap();

    // Nobody listens: connection refused, exit 4.
    let port = {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().port()
    };
    let uri = format!("coap+tcp://127.0.0.1:{port}/x");
    let o = run_bounded(coaplab().args(["get", &uri]), None, LIMIT);
    assert_eq!(o.status.code(), Some(4));
}

#[test]
fn a_malformed_frame_aborts_only_its_own_connection() {
    let server = OurServer::start(&["--tcp"]);
    let addr = format!("127.0.0.1:{}", server.port);
    let mut good = std::net::TcpStream::connect(&addr).unwrap();
    let mut bad = std::net::TcpStream::connect(&addr).unwrap();
    // A CSM, then a frame with TKL 9 (RFC 8323 §3.2: 9-15 are reserved): malformed.
    bad.write_all(&[0x00, 0xe1, 0x09, 0x01]).unwrap();
    let mut got = Vec::new();
    bad.read_to_end(&mut got).unwrap();
    // The server's 7-B CSM, then its Abort (7.05), then FIN.
    assert_eq!(got[1], 0xe1, "{got:?}");
    assert!(got[7..].contains(&0xe5), "{got:?}");
    // The other connection still works: CSM, GET /data/3 (token 0x01), the answer.
    good.write_all(&[0x00, 0xe1]).unwrap();
    good.write_all(&[0x71, 0x01, 0x01, 0xb4, b'd', b'a', b't', b'a', 0x01, b'3'])
        .unwrap();
    let mut buf = [0u8; 64];
    let mut n = 0;
    while n < 7 + 7 {
        n += good.read(&mut buf[n..]).unwrap();
    }
    // 2.05, token 0x01, payload 00 01 02.
    assert_eq!(&buf[7..14], &[0x41, 0x45, 0x01, 0xff, 0, 1, 2]);
    drop(good);
    let (status, stderr) = server.stop();
    assert!(status.success());
    assert!(
        stderr.contains("tcp sessions=2 served=1 aborted=1 malformed=1 ignored=0 idle_closed=0"),
        "{stderr}"
    );
}

#[test]
fn an_idle_connection_is_released_and_closed_after_tcp_idle_timeout() {
    let help = run_bounded(coaplab().args(["server", "--help"]), None, LIMIT);
    let help = String::from_utf8(help.stdout).unwrap();
    assert!(help.contains("--tcp-idle-timeout <D>"), "{help}");
    assert!(help.contains("[default: 300s]"), "{help}");
    let server = OurServer::start(&["--tcp", "--tcp-idle-timeout", "200ms"]);
    let addr = format!("127.0.0.1:{}", server.port);
    let mut silent = std::net::TcpStream::connect(&addr).unwrap();
    silent.set_read_timeout(Some(LIMIT)).unwrap();
    silent.write_all(&[0x00, 0xe1]).unwrap();
    let t0 = std::time::Instant::now();
    let mut got = Vec::new();
    silent.read_to_end(&mut got).unwrap();
    assert!(
        t0.elapsed() >= Duration::from_millis(190),
        "{:?}",
        t0.elapsed()
    );
    // The server's 7-B CSM, then Release (7.04, no options), then FIN.
    assert_eq!(got.len(), 9, "{got:?}");
    assert_eq!(got[7..], [0x00, 0xe4]);
    let (status, stderr) = server.stop();
    assert!(status.success());
    assert!(
        stderr.contains("tcp sessions=1 served=0 aborted=0 malformed=0 ignored=0 idle_closed=1"),
        "{stderr}"
    );
    // 0 never times out; a bad duration is refused.
    let o = run_bounded(
        coaplab().args(["server", "--tcp", "--tcp-idle-timeout", "soon"]),
        None,
        LIMIT,
    );
    assert_eq!(o.status.code(), Some(2));
}
