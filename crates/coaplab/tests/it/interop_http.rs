//! HTTP interop both ways: curl (`--http1.1`, `--http2-prior-knowledge`) against
//! `coaplab http-server` (exact bytes, headers included), and `coaplab http-get` against
//! Python's `http.server` (HTTP/1.1) and nghttp2's `nghttpd --no-tls` (h2c). Peers missing
//! outside CI skip with a printed reason; scripts/test.sh installs them.

use crate::support;

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use support::{
    assert_ok, coaplab, noise, pattern, peer, peer_with_dir, run_bounded, spawn_quiet, OurServer,
};

const LIMIT: Duration = Duration::from_secs(30);

/// A TCP port free on 127.0.0.1 at the time of the call.
fn free_tcp_port() -> u16 {
    let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    l.local_addr().unwrap().port()
}

/// Waits (bounded) until something accepts on 127.0.0.1:`port`.
fn wait_listening(port: u16) {
    let deadline = Instant::now() + Duration::from_secs(10);
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(Instant::now() < deadline, "nothing listens on port {port}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// `curl -s -i FLAG URL`: the status line, headers and body exactly as received.
fn curl(bin: &Path, flag: &str, url: &str) -> Vec<u8> {
    let o = run_bounded(Command::new(bin).args(["-s", "-i", flag, url]), None, LIMIT);
    assert_ok(&o, &format!("curl {flag} {url}"));
    o.stdout
}

fn with_body(head: &str, body: &[u8]) -> Vec<u8> {
    let mut v = head.as_bytes().to_vec();
    v.extend_from_slice(body);
    v
}

#[test]
fn curl_against_our_server() {
    let Some(bin) = peer("curl") else {
        return;
    };
    // --iot: exactly the status line and content-length, nothing else (no date).
    let iot = OurServer::start_http(&["--iot"]);
    let url = |p: &str| format!("http://127.0.0.1:{}{p}", iot.port);
    for n in [0, 10, 300, 1000] {
        assert_eq!(
            curl(&bin, "--http1.1", &url(&format!("/data/{n}"))),
            with_body(
                &format!("HTTP/1.1 200 OK\r\ncontent-length: {n}\r\n\r\n"),
                &pattern(n)
            ),
            "http1.1 /data/{n}"
        );
        // hyper sends an empty h2 body as END_STREAM on HEADERS, without content-length.
        let length = if n == 0 {
            String::new()
        } else {
            format!("content-length: {n}\r\n")
        };
        assert_eq!(
            curl(&bin, "--http2-prior-knowledge", &url(&format!("/data/{n}"))),
            with_body(&format!("HTTP/2 200 \r\n{length}\r\n"), &pattern(n)),
            "h2c /data/{n}"
        );
    }
    assert_eq!(
        curl(&bin, "--http1.1", &url("/nope")),
        b"HTTP/1.1 404 Not Found\r\ncontent-length: 0\r\n\r\n"
    );
    // Without --iot: content-type, server and date as well.
    let full = OurServer::start_http(&[]);
    for flag in ["--http1.1", "--http2-prior-knowledge"] {
        let got = curl(&bin, flag, &full.http_url("data/100"));
        let text = String::from_utf8_lossy(&got);
        for h in [
            "content-length: 100\r\n",
            "content-type: application/octet-stream\r\n",
            "server: coaplab\r\n",
            "date: ",
        ] {
            assert!(text.contains(h), "{flag}: no {h:?} in {text}");
        }
        assert!(got.ends_with(&pattern(100)), "{flag}: body differs");
    }
}

#[test]
fn our_client_against_python_http_server() {
    let Some((python, dir)) = peer_with_dir("python3", "http-python") else {
        return;
    };
    let body = noise(5000, 7);
    std::fs::write(dir.join("f.bin"), &body).unwrap();
    let port = free_tcp_port();
    let (dir_arg, port_arg) = (dir.to_string_lossy(), port.to_string());
    let _server = spawn_quiet(
        &python,
        &[
            "-m",
            "http.server",
            "--bind",
            "127.0.0.1",
            "--protocol",
            "HTTP/1.1",
            "--directory",
            &dir_arg,
            &port_arg,
        ],
    );
    wait_listening(port);
    get_f_bin_and_missing(port, "--http1.1", &body, "status=200 body_bytes=5000 ");
    // -o writes the body to a file.
    let out = dir.join("copy.bin");
    let o = run_bounded(
        coaplab()
            .args(["http-get", &format!("http://127.0.0.1:{port}/f.bin"), "-o"])
            .arg(&out),
        None,
        LIMIT,
    );
    assert_ok(&o, "http-get -o");
    assert!(o.stdout.is_empty());
    assert!(std::fs::read(&out).unwrap() == body);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn our_client_against_nghttpd() {
    let Some((nghttpd, dir)) = peer_with_dir("nghttpd", "http-nghttpd") else {
        return;
    };
    let body = noise(20_000, 9);
    std::fs::write(dir.join("f.bin"), &body).unwrap();
    let port = free_tcp_port();
    let (dir_arg, port_arg) = (dir.to_string_lossy(), port.to_string());
    let _server = spawn_quiet(
        &nghttpd,
        &["--no-tls", "-a", "127.0.0.1", "-d", &dir_arg, &port_arg],
    );
    wait_listening(port);
    get_f_bin_and_missing(port, "--http2-prior-knowledge", &body, "< Http2 200 OK");
    let _ = std::fs::remove_dir_all(&dir);
}

/// Against a peer file server on 127.0.0.1:`port`: `coaplab http-get FLAG -v` of `/f.bin`,
/// with and without `--iot`, exits 0 with `body` and `log_has` in its `-v` log; of `/missing`
/// exits 1 (the 404).
fn get_f_bin_and_missing(port: u16, flag: &str, body: &[u8], log_has: &str) {
    for iot in [false, true] {
        let mut cmd = coaplab();
        cmd.args(["http-get", flag, "-v"]);
        if iot {
            cmd.arg("--iot");
        }
        let o = run_bounded(
            cmd.arg(format!("http://127.0.0.1:{port}/f.bin")),
            None,
            LIMIT,
        );
        assert_ok(&o, &format!("http-get {flag} iot={iot}"));
        assert!(o.stdout == body, "{flag} iot={iot}: body differs");
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(err.contains(log_has), "{err}");
    }
    let o = run_bounded(
        coaplab().args([
            "http-get",
            flag,
            &format!("http://127.0.0.1:{port}/missing"),
        ]),
        None,
        LIMIT,
    );
    assert_eq!(o.status.code(), Some(1), "{flag}: 404 exit code");
}

#[test]
fn http_get_exit_codes() {
    let bad = run_bounded(
        coaplab().args(["http-get", "https://127.0.0.1/x"]),
        None,
        LIMIT,
    );
    assert_eq!(bad.status.code(), Some(2), "https:// is refused");
    let bad = run_bounded(coaplab().args(["http-get", "not a url"]), None, LIMIT);
    assert_eq!(bad.status.code(), Some(2));
    // Nothing listens: connection refused.
    let port = free_tcp_port();
    let o = run_bounded(
        coaplab().args(["http-get", &format!("http://127.0.0.1:{port}/data/1")]),
        None,
        LIMIT,
    );
    assert_eq!(o.status.code(), Some(4), "refused");
    // A listener that never answers: --timeout.
    let silent = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = silent.local_addr().unwrap().port();
    let o = run_bounded(
        coaplab().args([
            "http-get",
            "--timeout",
            "300ms",
            &format!("http://127.0.0.1:{port}/data/1"),
        ]),
        None,
        LIMIT,
    );
    assert_eq!(o.status.code(), Some(3), "timeout");
    // Body past --max-body-bytes.
    let server = OurServer::start_http(&[]);
    let o = run_bounded(
        coaplab().args([
            "http-get",
            "--max-body-bytes",
            "99",
            &server.http_url("data/100"),
        ]),
        None,
        LIMIT,
    );
    assert_eq!(o.status.code(), Some(4), "too large");
}

#[test]
fn server_counts_and_exits_on_sigterm() {
    let server = OurServer::start_http(&["--max-connections", "4", "--max-data-bytes", "10"]);
    // /data/11 is beyond --max-data-bytes: 400, counted too_large.
    for p in ["data/5", "nope", "data/11"] {
        let _ = run_bounded(
            coaplab().args(["http-get", &server.http_url(p)]),
            None,
            LIMIT,
        );
    }
    let (status, rest) = server.stop();
    assert_eq!(status.code(), Some(0), "{rest}");
    assert!(
        rest.contains(
            "http connections=3 refused=0 refused_source=0 header_timeouts=0 idle_closed=0 \
served=1 not_found=1 not_allowed=0 errors=0 accept_errors=0 too_large=1 "
        ),
        "{rest}"
    );
}

#[test]
fn server_refuses_connections_past_the_limit() {
    let server = OurServer::start_http(&["--max-connections", "1"]);
    // One connection that never sends a request holds the only slot.
    let idle = std::net::TcpStream::connect(("127.0.0.1", server.port)).unwrap();
    std::thread::sleep(Duration::from_millis(100));
    let o = run_bounded(
        coaplab().args(["http-get", &server.http_url("data/5")]),
        None,
        LIMIT,
    );
    assert_eq!(o.status.code(), Some(4), "closed at once");
    // Once the slot is free again, requests are served.
    drop(idle);
    std::thread::sleep(Duration::from_millis(100));
    let o = run_bounded(
        coaplab().args(["http-get", &server.http_url("data/5")]),
        None,
        LIMIT,
    );
    assert_ok(&o, "after the idle connection closed");
    let (status, rest) = server.stop_with("-INT");
    assert_eq!(status.code(), Some(0), "{rest}");
    assert!(rest.contains(" refused=1 refused_source=0 "), "{rest}");
    assert!(rest.contains(" served=1 "), "{rest}");
}

/// The request head `coaplab http-get ARGS` writes to a bare listener (which answers a fixed
/// 2-B response).
fn request_head(args: &[&str]) -> String {
    use std::io::{Read, Write};
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let server = std::thread::spawn(move || {
        let (mut s, _) = listener.accept().unwrap();
        s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
        let mut head = Vec::new();
        let mut byte = [0u8; 1];
        while !head.ends_with(b"\r\n\r\n") && s.read(&mut byte).unwrap() == 1 {
            head.push(byte[0]);
        }
        s.write_all(b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nhi")
            .unwrap();
        String::from_utf8(head).unwrap()
    });
    let o = run_bounded(
        coaplab()
            .arg("http-get")
            .args(args)
            .arg(format!("http://127.0.0.1:{port}/data/7")),
        None,
        LIMIT,
    );
    assert_ok(&o, "http-get to a bare listener");
    assert_eq!(o.stdout, b"hi");
    server.join().unwrap().replace(&format!(":{port}"), ":PORT")
}

#[test]
fn http_get_request_bytes() {
    assert_eq!(
        request_head(&["--iot"]),
        "GET /data/7 HTTP/1.1\r\nhost: 127.0.0.1:PORT\r\n\r\n"
    );
    assert_eq!(
        request_head(&["--http1.1"]),
        format!(
            "GET /data/7 HTTP/1.1\r\nhost: 127.0.0.1:PORT\r\nuser-agent: coaplab/{}\r\n\
accept: */*\r\n\r\n",
            env!("CARGO_PKG_VERSION")
        )
    );
}
