//! Issue 16 items 2 and 3 on the command line: the bytes `coaplab fetch|patch|ipatch|get`
//! put on the wire with -t, -A, -O, -T, --if-match, --if-none-match, --etag and --size2
//! (read by a plain UDP socket standing in for a server), `-v`'s decoded response options,
//! and the exit codes of conditional requests and bad flags against our server.

use crate::support;

use std::net::UdpSocket;
use std::time::Duration;

use support::{coaplab, OurServer};

const LIMIT: Duration = Duration::from_secs(30);

#[test]
fn request_options_and_token_go_on_the_wire_and_v_prints_the_response() {
    let sock = UdpSocket::bind("127.0.0.1:0").unwrap();
    sock.set_read_timeout(Some(LIMIT)).unwrap();
    let port = sock.local_addr().unwrap().port();
    let child = coaplab()
        .args([
            "fetch",
            &format!("coap://127.0.0.1:{port}/echo?x=1"),
            "-v",
            "-T",
            "0xdeadbeef",
            "-t",
            "json",
            "-A",
            "50",
            "--if-match",
            "0x0102",
            "--if-none-match",
            "--etag",
            "0a",
            "--size2",
            "-O",
            "2048,0x0b0c",
            "--payload",
            "{}",
            "--timeout",
            "20s",
            "--block-size",
            "16",
        ])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut buf = [0u8; 1500];
    let (n, from) = sock.recv_from(&mut buf).unwrap();
    let req = &buf[..n];
    // CON FETCH, token de ad be ef; If-Match (1) 0102; ETag (4) 0a; If-None-Match (5);
    // Uri-Path (11) "echo"; Content-Format (12) 50; Uri-Query (15) "x=1"; Accept (17) 50;
    // Block2 (23) 0/0/16 as early negotiation (--block-size 16); Size2 (28) 0;
    // option 2048 0b0c; payload "{}".
    assert_eq!(req[..2], [0x44, 0x05]);
    assert_eq!(
        req[4..],
        [
            0xde, 0xad, 0xbe, 0xef, 0x12, 0x01, 0x02, 0x31, 0x0a, 0x10, 0x64, b'e', b'c', b'h',
            b'o', 0x11, 50, 0x33, b'x', b'=', b'1', 0x21, 50, 0x60, 0x50, 0xe2, 0x06, 0xd7, 0x0b,
            0x0c, 0xff, b'{', b'}'
        ]
    );
    // ACK 2.05 with the request's MID and token; ETag 0a0b; Content-Format 50; Max-Age 30;
    // Size2 2; option 2048 "v"; payload.
    let mut resp = vec![0x64, 0x45, req[2], req[3], 0xde, 0xad, 0xbe, 0xef];
    resp.extend_from_slice(&[0x42, 0x0a, 0x0b, 0x81, 50, 0x21, 30]);
    // Size2 (28): delta 14 = 13 + 1, one byte 2; 2048: delta 2020 = 269 + 0x06d7.
    resp.extend_from_slice(&[0xd1, 0x01, 0x02, 0xe1, 0x06, 0xd7, b'v', 0xff, b'{', b'}']);
    sock.send_to(&resp, from).unwrap();
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(out.stdout, b"{}");
    let log = String::from_utf8(out.stderr).unwrap();
    let shown: Vec<&str> = log.lines().filter(|l| !l.starts_with("t=")).collect();
    assert_eq!(
        shown,
        [
            "2.05 Content",
            "  ETag: 0x0a0b",
            "  Content-Format: 50 (application/json)",
            "  Max-Age: 30",
            "  Size2: 2",
            "  Option 2048: 0x76",
        ]
    );
}

/// `coaplab ARGS…` to completion: (exit code, stdout, stderr).
fn run(args: &[&str]) -> (Option<i32>, Vec<u8>, String) {
    let o = support::run_bounded(coaplab().args(args), None, LIMIT);
    (
        o.status.code(),
        o.stdout,
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

#[test]
fn methods_preconditions_and_exit_codes_against_our_server() {
    let server = OurServer::start(&[]);
    let echo = server.uri("echo");
    for method in ["fetch", "patch", "ipatch"] {
        let (code, out, err) = run(&[method, &echo, "-t", "cbor", "--payload", "p"]);
        assert_eq!((code, out), (Some(0), b"p".to_vec()), "{method}: {err}");
    }
    // Block1 up, then Block2 follow-ups that repeat the FETCH payload (RFC 8132 §2.3.2).
    let long = "abcdefghijklmnopqrstuvwxyz0123456789";
    let (code, out, err) = run(&["fetch", &echo, "--block-size", "16", "--payload", long]);
    assert_eq!((code, out), (Some(0), long.as_bytes().to_vec()), "{err}");
    // 4.15 and 4.06 are error responses: exit 1.
    let (code, _, err) = run(&["post", &echo, "-t", "40", "--payload", "p"]);
    assert_eq!(code, Some(1));
    assert!(err.contains("4.15"), "{err}");
    let (code, _, err) = run(&["post", &echo, "-t", "0", "-A", "json", "--payload", "p"]);
    assert_eq!(code, Some(1));
    assert!(err.contains("4.06"), "{err}");
    // If-None-Match creates once; the ETag answered makes If-Match succeed.
    let (code, _, err) = run(&["put", &echo, "--if-none-match", "-v", "--payload", "a"]);
    assert_eq!(code, Some(0), "{err}");
    let tag = err
        .lines()
        .find_map(|l| l.strip_prefix("  ETag: "))
        .expect("an ETag line")
        .to_owned();
    let (code, _, err) = run(&["put", &echo, "--if-none-match", "--payload", "b"]);
    assert_eq!(code, Some(1));
    assert!(err.contains("4.12"), "{err}");
    let (code, _, _) = run(&["put", &echo, "--if-match", &tag, "--payload", "b"]);
    assert_eq!(code, Some(0));
    let (code, _, _) = run(&["put", &echo, "--if-match", &tag, "--payload", "c"]);
    assert_eq!(code, Some(1));
    // data/N's ETag validates: 2.03 Valid, no body, exit 0.
    let (code, out, err) = run(&[
        "get",
        &server.uri("data/5"),
        "--etag",
        "0x0000000000000005",
        "-v",
    ]);
    assert_eq!((code, out), (Some(0), Vec::new()));
    assert!(
        err.contains("\n2.03 Valid\n  ETag: 0x0000000000000005\n"),
        "{err}"
    );
    // Bad flags exit 2.
    for bad in [
        &["get", &echo, "-O", "2048"][..],
        &["get", &echo, "-T", "0x123"],
        &["get", &echo, "-t", "nonsense"],
        &["get", &echo, "--etag", "0x001122334455667788"],
        &["fetch", &echo, "-O", "0,x"],
    ] {
        let (code, _, err) = run(bad);
        assert_eq!(code, Some(2), "{bad:?}: {err}");
    }
    let (status, _) = server.stop();
    assert!(status.success());
}

#[test]
fn options_go_over_tcp_and_v_prints_the_response() {
    let server = OurServer::start(&["--tcp"]);
    let echo = server.tcp_uri("echo");
    let (code, out, err) = run(&[
        "fetch",
        "-v",
        "-t",
        "json",
        "-A",
        "json",
        "--payload",
        "{}",
        &echo,
    ]);
    assert_eq!((code, out), (Some(0), b"{}".to_vec()), "{err}");
    assert!(
        err.ends_with("\n2.05 Content\n  Content-Format: 50 (application/json)\n"),
        "{err}"
    );
    let (code, _, err) = run(&["patch", "-t", "40", "--payload", "x", &echo]);
    assert_eq!(code, Some(1));
    assert!(err.contains("4.15"), "{err}");
    let (status, _) = server.stop();
    assert!(status.success());
}
