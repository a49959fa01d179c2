//! Interop over TCP (RFC 8323, `coap+tcp://`) with aiocoap 0.4.17 (`.peers/venv`, installed
//! by scripts/test.sh): our client against `aiocoap-fileserver --write` (whose default server
//! transports include `tcpserver` on the same port), and `aiocoap-client` against `coaplab
//! server --tcp`. Bytes are compared exactly. Skipped with a printed reason when aiocoap is
//! absent, unless CI is set.

use crate::support;

use std::process::Command;
use std::time::Duration;

use support::{
    aiocoap_fileserver, assert_ok, coaplab, first_answer, free_tcp_udp_port, noise, pattern,
    peer_with_dir, run_bounded, OurServer,
};

const LIMIT: Duration = Duration::from_secs(60);

#[test]
fn our_tcp_client_against_aiocoap_fileserver() {
    let Some((bin, dir)) = peer_with_dir("aiocoap-fileserver", "aiocoap-tcp") else {
        return;
    };
    let big = noise(102_400, 30);
    std::fs::write(dir.join("big.bin"), &big).unwrap();
    std::fs::write(dir.join("small.txt"), b"hello").unwrap();
    let port = free_tcp_udp_port();
    let _server = aiocoap_fileserver(&bin, &dir, port);
    let uri = |p: &str| format!("coap+tcp://127.0.0.1:{port}/{p}");
    let o = first_answer(
        &uri("small.txt"),
        &["--timeout", "2s"],
        "aiocoap-fileserver",
    );
    assert_eq!(o.stdout, b"hello");
    // aiocoap's fileserver serves a file in 1,024-B Block2 blocks whatever the transport and
    // the CSMs (both advertise BERT): our client follows them, 100 requests on one connection.
    let o = run_bounded(coaplab().args(["get", &uri("big.bin"), "-v"]), None, LIMIT);
    assert_ok(&o, "get big");
    assert!(o.stdout == big, "GET big.bin differs");
    let log = String::from_utf8(o.stderr).unwrap();
    assert!(
        log.contains("CSM max_message_size=1048576 block_wise_transfer=true"),
        "{log}"
    );
    assert_eq!(log.matches(" send request=0 ").count(), 100, "{log}");
    assert!(log.contains(" payload=102400 "), "{log}");
    // PUT 102,400 B in one message writes the file; the fileserver allows no POST on files.
    let body = noise(102_400, 31);
    let o = run_bounded(
        coaplab().args(["put", &uri("up.bin"), "-v", "--payload-file", "-"]),
        Some(&body),
        LIMIT,
    );
    assert_ok(&o, "put");
    let log = String::from_utf8(o.stderr).unwrap();
    assert_eq!(log.matches(" send request=").count(), 1, "{log}");
    assert!(
        std::fs::read(dir.join("up.bin")).unwrap() == body,
        "file differs"
    );
    let o = run_bounded(coaplab().args(["get", &uri("up.bin")]), None, LIMIT);
    assert!(o.stdout == body, "GET up.bin differs");
    let o = run_bounded(
        coaplab().args(["post", &uri("up.bin"), "--payload-file", "-"]),
        Some(&body),
        LIMIT,
    );
    assert_eq!(o.status.code(), Some(1), "POST to a file");
    assert!(String::from_utf8_lossy(&o.stderr).contains("4.05"));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn aiocoap_tcp_client_against_our_server() {
    let Some((client, dir)) = peer_with_dir("aiocoap-client", "aiocoap-tcp-c") else {
        return;
    };
    let body = noise(102_400, 32);
    let file = dir.join("in.bin");
    std::fs::write(&file, &body).unwrap();
    let at_file = format!("@{}", file.display());
    let server = OurServer::start(&["--tcp"]);
    let fetch = |args: &[&str]| {
        let o = run_bounded(Command::new(&client).args(args), None, LIMIT);
        assert_ok(&o, &format!("aiocoap-client {args:?}"));
        o.stdout
    };
    assert_eq!(fetch(&[&server.tcp_uri("data/10")]), pattern(10));
    assert!(fetch(&[&server.tcp_uri("data/102400")]) == pattern(102_400));
    // aiocoap-client starts a BERT Block1 upload before our CSM arrives (1,024 B + Size1),
    // then sends the whole body as one message: both reach /echo, which answers the whole.
    for method in ["PUT", "POST"] {
        let got = fetch(&["-m", method, "--payload", &at_file, &server.tcp_uri("echo")]);
        assert!(got == body, "{method} echo differs");
    }
    let (status, stderr) = server.stop();
    assert!(status.success());
    assert!(stderr.contains(" aborted=0 malformed=0 "), "{stderr}");
    let _ = std::fs::remove_dir_all(&dir);
}
