//! `coaplab server` and `coaplab get|put|post|delete|bench` against each other on loopback:
//! exact bytes, exit codes, and a malformed burst plus a valid flood.

use crate::support;

use std::time::Duration;

use support::{assert_time_and_core, bench_500ms, coaplab, noise, pattern, run_bounded, OurServer};

const LIMIT: Duration = Duration::from_secs(30);

#[test]
fn get_put_post_delete_against_our_server_with_each_algorithm() {
    let server = OurServer::start(&[]);
    for cc in ["default", "cocoa", "fasor"] {
        let o = run_bounded(
            coaplab().args(["get", &server.uri("data/102400"), "--cc", cc]),
            None,
            LIMIT,
        );
        assert_eq!(o.status.code(), Some(0), "{cc}: {:?}", o.stderr);
        assert_eq!(o.stdout, pattern(102_400), "{cc}");

        let body = noise(5000, 7);
        for method in ["put", "post"] {
            let o = run_bounded(
                coaplab().args([
                    method,
                    &server.uri("echo"),
                    "--cc",
                    cc,
                    "--payload-file",
                    "-",
                ]),
                Some(&body),
                LIMIT,
            );
            assert_eq!(o.status.code(), Some(0), "{cc} {method}: {:?}", o.stderr);
            assert_eq!(o.stdout, body, "{cc} {method}");
        }
    }
    assert_time_and_core(&server.uri("time"), &server.uri(".well-known/core"), LIMIT);
    let (status, _) = server.stop();
    assert!(status.success());
}

#[test]
fn exit_codes_tell_outcomes_apart() {
    let server = OurServer::start(&[]);
    let code = |args: &[&str]| run_bounded(coaplab().args(args), None, LIMIT).status.code();
    assert_eq!(code(&["get", &server.uri("data/5")]), Some(0));
    assert_eq!(code(&["get", &server.uri("missing")]), Some(1));
    assert_eq!(code(&["delete", &server.uri("echo")]), Some(1));
    assert_eq!(code(&["get", "http://127.0.0.1/x"]), Some(2));
    assert_eq!(
        code(&["get", "coap://127.0.0.1/x", "--cc", "nope"]),
        Some(2)
    );
    // A peer that never answers (a dead port would be refused at once, see cli_limits.rs):
    // MAX_RETRANSMIT = 1 with a 50-ms timer gives up fast.
    let silent = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
    let silent_uri = format!("coap://{}/x", silent.local_addr().unwrap());
    let o = run_bounded(
        coaplab().args([
            "get",
            &silent_uri,
            "-v",
            "--set",
            "max_retransmit=1",
            "--set",
            "ack_timeout_s=0.05",
            "--set",
            "ack_random_factor=1",
        ]),
        None,
        LIMIT,
    );
    assert_eq!(
        o.status.code(),
        Some(3),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    // Every line but the time stamp is exact: the timer doubles, then the exchange gives up.
    // 10 bytes: header 4, token 2, Uri-Path "x" 2, Block2 (szx 6, asked up front) 2.
    let err = String::from_utf8(o.stderr).unwrap();
    let lines: Vec<String> = err
        .lines()
        .map(|l| l.split_once(' ').map_or(l, |(_, rest)| rest))
        .map(|l| l.split(" to=").next().unwrap().to_owned())
        .collect();
    assert_eq!(
        lines,
        [
            "send exchange=0 copy=0 bytes=10",
            "timer exchange=0 copy=0 armed=0.050000s",
            "send exchange=0 copy=1 bytes=10",
            "timer exchange=0 copy=1 armed=0.100000s",
            "fail exchange=0 transmissions=2 reason=GiveUp",
            "rto 0.050000s",
            "timeout (GiveUp)",
        ]
    );
    server.stop();
}

#[test]
fn bench_reports_completed_requests_and_no_losses_on_loopback() {
    let server = OurServer::start(&[]);
    let out = bench_500ms(&server.uri("data/10"), 3, LIMIT);
    let first: Vec<&str> = out.lines().next().unwrap().split_whitespace().collect();
    assert!(
        first[0].starts_with("requests=") && first[0] != "requests=0",
        "{out}"
    );
    assert_eq!(first[1], "failed=0");
    assert!(out.lines().nth(1).unwrap().starts_with("latency_ms p50="));
    server.stop();
}

#[test]
fn malformed_burst_and_valid_flood_server_keeps_answering_and_counts() {
    let server = OurServer::start(&[]);
    let sock = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
    sock.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    let to = format!("127.0.0.1:{}", server.port);
    // One datagram per malformed class of the codec (crates/wire DecodeError, UDP classes).
    let bad: [(&[u8], &str); 10] = [
        (b"\x40", "truncated-header"),
        (b"\x80\x01\x00\x01", "unsupported-version"),
        (b"\x49\x01\x00\x01", "invalid-token-length"),
        (b"\x41\x01\x00\x01", "truncated-token"),
        (b"\x40\x01\x00\x01\xf0", "reserved-option-delta"),
        (b"\x40\x01\x00\x01\x0f", "reserved-option-length"),
        (b"\x40\x01\x00\x01\xd0", "truncated-option"),
        (b"\x40\x01\x00\x01\xe0\xff\xff", "option-number-overflow"),
        (b"\x40\x01\x00\x01\xff", "payload-marker-without-payload"),
        (b"\x40\x00\x00\x01\xff", "non-empty-empty-message"),
    ];
    // 50 rounds of the 10 malformed classes then 10 valid CON GETs of /data/4 (distinct
    // Message IDs), each answered before the next is sent, so the socket never overflows.
    let mut answered = 0;
    let mut buf = [0u8; 64];
    let rss_before = rss_kib(server.child.0.id());
    for round in 0..50u16 {
        for (b, _) in bad {
            sock.send_to(b, &to).unwrap();
        }
        for i in 0..10 {
            let [hi, lo] = (1000 + round * 10 + i).to_be_bytes();
            let req = [0x40, 0x01, hi, lo, 0xb4, b'd', b'a', b't', b'a', 0x01, b'4'];
            sock.send_to(&req, &to).unwrap();
            // Skip the RSTs of the malformed CONs; find our piggybacked 2.05.
            let got = loop {
                let n = sock.recv(&mut buf).unwrap();
                if buf[0] >> 4 != 0x7 {
                    break &buf[..n];
                }
            };
            // ETag (4, 8 B): the body's length (issue 16 #2).
            let etag = [0x48, 0, 0, 0, 0, 0, 0, 0, 4];
            assert_eq!(got[..4], [0x60, 0x45, hi, lo]);
            assert_eq!(got[4..13], etag);
            assert_eq!(got[13..], [0xff, 0, 1, 2, 3]);
            answered += 1;
        }
    }
    assert_eq!(answered, 500);
    let rss_after = rss_kib(server.child.0.id());
    assert!(
        rss_after < rss_before + 16 * 1024,
        "RSS grew from {rss_before} to {rss_after} KiB"
    );
    let (status, stderr) = server.stop();
    assert!(status.success());
    assert!(stderr.contains("served=500 "), "{stderr}");
    assert!(stderr.contains(" malformed=500 "), "{stderr}");
    for (_, label) in bad {
        assert!(
            stderr.contains(&format!("malformed {label}=50\n")),
            "{label}: {stderr}"
        );
    }
}

/// The resident set of process `pid` in KiB (Linux /proc).
fn rss_kib(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    let line = status.lines().find(|l| l.starts_with("VmRSS:")).unwrap();
    line.split_whitespace().nth(1).unwrap().parse().unwrap()
}

#[test]
fn non_requests_and_non_bench() {
    let server = OurServer::start(&[]);
    let o = run_bounded(
        coaplab().args(["get", "--non", &server.uri("data/3000")]),
        None,
        LIMIT,
    );
    assert_eq!(o.status.code(), Some(0));
    assert_eq!(o.stdout, pattern(3000));
    let o = run_bounded(
        coaplab().args(["post", "--non", "--payload", "hi", &server.uri("echo")]),
        None,
        LIMIT,
    );
    assert_eq!((o.status.code(), o.stdout), (Some(0), b"hi".to_vec()));
    let o = run_bounded(
        coaplab().args([
            "bench",
            &server.uri("echo"),
            "--non",
            "--payload-bytes",
            "100",
            "--clients",
            "2",
            "--duration",
            "300ms",
        ]),
        None,
        LIMIT,
    );
    let out = String::from_utf8(o.stdout).unwrap();
    assert!(out.contains(" failed=0 retransmissions=0 "), "{out}");
    let (status, stderr) = server.stop();
    assert!(status.success());
    assert!(stderr.contains(" malformed=0 "), "{stderr}");
}

#[test]
fn an_unverified_non_get_is_amplified_at_most_three_times() {
    // Issue 11 #4: the 14-B NON GET of data/1024 (no token) drew 1,029 B (73x).
    let server = OurServer::start(&[]);
    let sock = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
    sock.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    let to = format!("127.0.0.1:{}", server.port);
    let get = |mid: u8, echo: &[u8]| {
        let mut req = vec![0x50, 0x01, 0x00, mid, 0xb4];
        req.extend_from_slice(b"data");
        req.extend_from_slice(&[0x04]);
        req.extend_from_slice(b"1024");
        if !echo.is_empty() {
            // Echo (252): delta 252 - 11 = 241 = 13 + 228, length 12.
            req.extend_from_slice(&[0xd0 | echo.len() as u8, 228]);
            req.extend_from_slice(echo);
        }
        req
    };
    let mut buf = [0u8; 2048];
    let req = get(1, &[]);
    assert_eq!(req.len(), 14);
    sock.send_to(&req, &to).unwrap();
    let n = sock.recv(&mut buf).unwrap();
    assert!(n <= 3 * req.len(), "{n} B answer to {} B", req.len());
    // NON 4.01 with the Echo option as its only option: delta 13 + 239 = 252, 12 B.
    assert_eq!(buf[1], 0x81);
    assert_eq!(buf[4..6], [0xdc, 239]);
    let echo = buf[6..n].to_vec();
    assert_eq!(echo.len(), 12);
    // Repeating the value proves the address: the whole block.
    sock.send_to(&get(2, &echo), &to).unwrap();
    let n = sock.recv(&mut buf).unwrap();
    assert_eq!(buf[1], 0x45);
    // Header 4, ETag 9 (issue 16 #2), marker 1, 1,024 B (one block, no Block2).
    assert_eq!(n, 1_038);
    let (status, stderr) = server.stop();
    assert!(status.success());
    assert!(stderr.contains(" echo_challenges=1\n"), "{stderr}");
}

/// `--server-duplicates`: two copies of one CON GET (same Message ID, tokens 0xA1 then 0xA2,
/// as FASOR+token marks copies). `cache` replays the first reply, token 0xA1 included;
/// `reprocess` answers the second copy with its own token, as libcoap's server does.
#[test]
fn duplicate_con_is_replayed_or_reprocessed() {
    for (mode, second_token) in [("cache", 0xa1u8), ("reprocess", 0xa2)] {
        let server = OurServer::start(&["--server-duplicates", mode]);
        let sock = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
        sock.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
        let to = format!("127.0.0.1:{}", server.port);
        let mut buf = [0u8; 64];
        for token in [0xa1u8, 0xa2] {
            // CON GET /data/4, MID 0x0707, TKL 1.
            let req = [
                0x41, 0x01, 7, 7, token, 0xb4, b'd', b'a', b't', b'a', 0x01, b'4',
            ];
            sock.send_to(&req, &to).unwrap();
            let n = sock.recv(&mut buf).unwrap();
            let expected = if token == 0xa1 { 0xa1 } else { second_token };
            // ETag (option 4, 8 B: N = 4) since issue 16 #2, then the 4-B body.
            assert_eq!(
                &buf[..n],
                [0x61, 0x45, 7, 7, expected, 0x48, 0, 0, 0, 0, 0, 0, 0, 4, 0xff, 0, 1, 2, 3],
                "{mode}"
            );
        }
        let (status, stderr) = server.stop();
        assert!(status.success());
        let served = if mode == "cache" { 1 } else { 2 };
        assert!(
            stderr.contains(&format!("served={served} ")),
            "{mode}: {stderr}"
        );
        assert!(stderr.contains("duplicates=1"), "{mode}: {stderr}");
    }
}

/// Issue 32 #1: one CON GET of /data/1024 answered (within the unverified-CON allowance),
/// then resent 300 times with the same Message ID from an unverified address (as a spoofer
/// would, the victim's address being the source): each copy used to draw the cached 1,038-B
/// answer, 74x, without end. Now at most one reply per copy, the full answer only within
/// the 16-KiB replay budget, 4.01 + Echo (≤ 3x) after it; with `reprocess` alike.
#[test]
fn resending_one_answered_con_does_not_make_a_reflector() {
    for mode in ["cache", "reprocess"] {
        let server = OurServer::start(&["--server-duplicates", mode]);
        let sock = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
        sock.set_read_timeout(Some(Duration::from_millis(500)))
            .unwrap();
        let to = format!("127.0.0.1:{}", server.port);
        // CON GET /data/1024, MID 0x0909, no token: 14 B.
        let req = [
            0x40, 0x01, 9, 9, 0xb4, b'd', b'a', b't', b'a', 0x04, b'1', b'0', b'2', b'4',
        ];
        let mut buf = [0u8; 2048];
        sock.send_to(&req, &to).unwrap();
        let first = sock.recv(&mut buf).unwrap();
        assert_eq!(first, 1_038, "{mode}: answered in full once");
        let (mut replies, mut bytes) = (0usize, 0usize);
        for _ in 0..300 {
            sock.send_to(&req, &to).unwrap();
            let n = sock.recv(&mut buf).unwrap();
            replies += 1;
            bytes += n;
        }
        // No second reply to any copy.
        assert!(sock.recv(&mut buf).is_err(), "{mode}: a reply too many");
        assert_eq!(replies, 300);
        let budget = 16 * 1024 + 300 * 3 * req.len();
        assert!(
            bytes <= budget,
            "{mode}: {bytes} B reflected for {} B",
            300 * req.len()
        );
        let (status, stderr) = server.stop();
        assert!(status.success());
        assert!(stderr.contains("echo_challenges="), "{stderr}");
        assert!(!stderr.contains(" echo_challenges=0\n"), "{mode}: {stderr}");
    }
}

/// Issue 32 #7: a 100-MiB GET (102,400 blocks) byte for byte. Its Message IDs would wrap at
/// block 65,536, within EXCHANGE_LIFETIME of their first use; the client now waits for the
/// first group of IDs to be 247 s old, so this takes over four minutes: ignored by default
/// (`message_ids::a_transfer_past_65536_blocks_waits_for_message_ids_and_arrives_exact` in
/// the endpoint's tests runs the same wrap in simulated time).
#[test]
#[ignore = "over 247 s: waits EXCHANGE_LIFETIME for Message IDs"]
fn a_100_mib_get_over_udp_arrives_exact() {
    const LEN: usize = 100 << 20;
    let server = OurServer::start(&["--dedup-cache-bytes", "1073741824"]);
    let uri = server.uri(&format!("data/{LEN}"));
    let o = run_bounded(
        coaplab().args(["get", &uri, "--max-body-bytes", &LEN.to_string(), "-v"]),
        None,
        Duration::from_secs(900),
    );
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(
        o.status.success(),
        "{}",
        &stderr[stderr.len().saturating_sub(2000)..]
    );
    assert_eq!(o.stdout.len(), LEN);
    assert!(o.stdout == pattern(LEN), "byte for byte");
    assert!(stderr.contains("waiting for message IDs"));
    server.stop_clean();
}
