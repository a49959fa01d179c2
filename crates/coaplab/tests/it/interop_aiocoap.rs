//! Interop with aiocoap 0.4.17 (installed by scripts/test.sh into `.peers/venv`): our client
//! against `aiocoap-fileserver --write`, and `aiocoap-client` against our server. Bytes are
//! compared exactly. Skipped with a printed reason when aiocoap is absent, unless CI is set.

use crate::support;

use std::process::Command;
use std::time::Duration;

use support::{
    aiocoap_fileserver, assert_ok, coaplab, first_answer, free_udp_port, noise, pattern, peer,
    peer_with_dir, run_bounded, OurServer,
};

const LIMIT: Duration = Duration::from_secs(60);
const ALGORITHMS: [&str; 3] = ["default", "cocoa", "fasor"];

#[test]
fn our_client_against_aiocoap_fileserver() {
    let Some((bin, dir)) = peer_with_dir("aiocoap-fileserver", "aiocoap") else {
        return;
    };
    let big = noise(102_400, 3);
    std::fs::write(dir.join("big.bin"), &big).unwrap();
    std::fs::write(dir.join("small.txt"), b"hello").unwrap();
    let port = free_udp_port();
    let _server = aiocoap_fileserver(&bin, &dir, port);
    let uri = |p: &str| format!("coap://127.0.0.1:{port}/{p}");
    let o = first_answer(
        &uri("small.txt"),
        &["--set", "ack_timeout_s=0.2"],
        "aiocoap-fileserver",
    );
    assert_eq!(o.stdout, b"hello");
    for (i, cc) in ALGORITHMS.into_iter().enumerate() {
        let o = run_bounded(
            coaplab().args(["get", &uri("big.bin"), "--cc", cc]),
            None,
            LIMIT,
        );
        assert_ok(&o, &format!("{cc} get big"));
        assert!(o.stdout == big, "{cc}: GET big.bin differs");
        let o = run_bounded(
            coaplab().args(["get", &uri("small.txt"), "--cc", cc]),
            None,
            LIMIT,
        );
        assert_eq!(o.stdout, b"hello");
        // PUT with Block1 writes the file; the fileserver allows no POST on files (4.05).
        let body = noise(102_400, 10 + i as u64);
        let name = format!("up-{cc}.bin");
        let o = run_bounded(
            coaplab().args(["put", &uri(&name), "--cc", cc, "--payload-file", "-"]),
            Some(&body),
            LIMIT,
        );
        assert_ok(&o, &format!("{cc} put"));
        assert!(
            std::fs::read(dir.join(&name)).unwrap() == body,
            "{cc}: file differs"
        );
        let o = run_bounded(
            coaplab().args(["post", &uri(&name), "--cc", cc, "--payload-file", "-"]),
            Some(&body),
            LIMIT,
        );
        assert_eq!(o.status.code(), Some(1), "{cc}: POST to a file");
        assert!(String::from_utf8_lossy(&o.stderr).contains("4.05"));
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn aiocoap_client_against_our_server() {
    let Some((client, dir)) = peer_with_dir("aiocoap-client", "aiocoap-c") else {
        return;
    };
    let body = noise(102_400, 21);
    let file = dir.join("in.bin");
    std::fs::write(&file, &body).unwrap();
    let at_file = format!("@{}", file.display());
    for cc in ALGORITHMS {
        let server = OurServer::start(&["--cc", cc]);
        let fetch = |args: &[&str]| {
            let o = run_bounded(Command::new(&client).args(args), None, LIMIT);
            assert_ok(&o, &format!("{cc} aiocoap-client {args:?}"));
            o.stdout
        };
        assert_eq!(fetch(&[&server.uri("data/10")]), pattern(10));
        assert!(fetch(&[&server.uri("data/102400")]) == pattern(102_400));
        for method in ["PUT", "POST"] {
            let got = fetch(&["-m", method, "--payload", &at_file, &server.uri("echo")]);
            assert!(got == body, "{cc} {method} echo differs");
        }
        server.stop_clean();
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn aiocoap_client_sends_accept() {
    let Some(client) = peer("aiocoap-client") else {
        return;
    };
    let server = OurServer::start(&[]);
    // Issue 11 #6: `--accept` got 4.02. text/plain is what /time is (exit 0, Unix seconds);
    // application/json it is not: 4.06 Not Acceptable.
    let o = run_bounded(
        Command::new(&client).args(["--accept", "0", &server.uri("time")]),
        None,
        LIMIT,
    );
    assert_ok(&o, "aiocoap-client --accept 0");
    let secs: u64 = String::from_utf8_lossy(&o.stdout).trim().parse().unwrap();
    assert!(secs > 1_700_000_000);
    let o = run_bounded(
        Command::new(&client).args(["--accept", "application/json", &server.uri("time")]),
        None,
        LIMIT,
    );
    let said =
        String::from_utf8_lossy(&o.stdout).into_owned() + &String::from_utf8_lossy(&o.stderr);
    assert!(said.contains("4.06 Not Acceptable"), "{said}");
    let (status, _) = server.stop();
    assert!(status.success());
}
