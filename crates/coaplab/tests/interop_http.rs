//! HTTP interop both ways: curl (`--http1.1`, `--http2-prior-knowledge`) against
//! `coaplab http-server` (exact bytes, headers included), and `coaplab http-get` against
//! Python's `http.server` (HTTP/1.1) and nghttp2's `nghttpd --no-tls` (h2c). Peers missing
//! outside CI skip with a printed reason; scripts/test.sh installs them.

mod support;

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use support::{assert_ok, coaplab, noise, pattern, peer, peer_with_dir, run_bounded, Guard};

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

/// `coaplab http-server --bind 127.0.0.1:0 EXTRA…` and the port it prints. Its stderr stays
/// open (a thread drains it) so that it can print its counters at exit.
fn our_server(extra: &[&str]) -> (Guard, u16) {
    let (g, port, rest) = our_server_stderr(extra);
    std::thread::spawn(move || {
        let _ = std::io::copy(&mut { rest }, &mut std::io::sink());
    });
    (g, port)
}

/// [`our_server`], with the rest of its stderr.
fn our_server_stderr(extra: &[&str]) -> (Guard, u16, BufReader<std::process::ChildStderr>) {
    let mut child = coaplab()
        .args(["http-server", "--bind", "127.0.0.1:0"])
        .args(extra)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn coaplab http-server");
    let mut line = String::new();
    let mut stderr = BufReader::new(child.stderr.take().unwrap());
    stderr.read_line(&mut line).unwrap();
    let port = line
        .trim()
        .rsplit(':')
        .next()
        .and_then(|p| p.parse().ok())
        .unwrap_or_else(|| panic!("no port in {line:?}"));
    (Guard(child), port, stderr)
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
    let (_iot, port) = our_server(&["--iot"]);
    let url = |p: &str| format!("http://127.0.0.1:{port}{p}");
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
    let (_full, port) = our_server(&[]);
    for flag in ["--http1.1", "--http2-prior-knowledge"] {
        let got = curl(&bin, flag, &format!("http://127.0.0.1:{port}/data/100"));
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
    let _server = Guard(
        Command::new(python)
            .args([
                "-m",
                "http.server",
                "--bind",
                "127.0.0.1",
                "--protocol",
                "HTTP/1.1",
            ])
            .arg("--directory")
            .arg(&dir)
            .arg(port.to_string())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("spawn python3 -m http.server"),
    );
    wait_listening(port);
    for iot in [false, true] {
        let mut cmd = coaplab();
        cmd.args(["http-get", "--http1.1", "-v"]);
        if iot {
            cmd.arg("--iot");
        }
        let o = run_bounded(
            cmd.arg(format!("http://127.0.0.1:{port}/f.bin")),
            None,
            LIMIT,
        );
        assert_ok(&o, "http-get from python");
        assert!(o.stdout == body, "iot={iot}: body differs");
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(err.contains("status=200 body_bytes=5000 "), "{err}");
    }
    // A 404 exits 1; -o writes the body to a file.
    let o = run_bounded(
        coaplab().args(["http-get", &format!("http://127.0.0.1:{port}/missing")]),
        None,
        LIMIT,
    );
    assert_eq!(o.status.code(), Some(1), "404 exit code");
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
    let _server = Guard(
        Command::new(nghttpd)
            .args(["--no-tls", "-a", "127.0.0.1", "-d"])
            .arg(&dir)
            .arg(port.to_string())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("spawn nghttpd"),
    );
    wait_listening(port);
    for iot in [false, true] {
        let mut cmd = coaplab();
        cmd.args(["http-get", "--http2-prior-knowledge", "-v"]);
        if iot {
            cmd.arg("--iot");
        }
        let o = run_bounded(
            cmd.arg(format!("http://127.0.0.1:{port}/f.bin")),
            None,
            LIMIT,
        );
        assert_ok(&o, "http-get from nghttpd");
        assert!(o.stdout == body, "iot={iot}: body differs");
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(err.contains("< Http2 200 OK"), "{err}");
    }
    let o = run_bounded(
        coaplab().args([
            "http-get",
            "--http2-prior-knowledge",
            &format!("http://127.0.0.1:{port}/missing"),
        ]),
        None,
        LIMIT,
    );
    assert_eq!(o.status.code(), Some(1), "404 exit code");
    let _ = std::fs::remove_dir_all(&dir);
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
    let (_s, port) = our_server(&[]);
    let o = run_bounded(
        coaplab().args([
            "http-get",
            "--max-body-bytes",
            "99",
            &format!("http://127.0.0.1:{port}/data/100"),
        ]),
        None,
        LIMIT,
    );
    assert_eq!(o.status.code(), Some(4), "too large");
}

#[test]
fn server_counts_and_exits_on_sigterm() {
    let (mut server, port, mut stderr) =
        our_server_stderr(&["--max-connections", "4", "--max-data-bytes", "10"]);
    // /data/11 is beyond --max-data-bytes: 400, counted too_large.
    for p in ["/data/5", "/nope", "/data/11"] {
        let _ = run_bounded(
            coaplab().args(["http-get", &format!("http://127.0.0.1:{port}{p}")]),
            None,
            LIMIT,
        );
    }
    let pid = server.0.id().to_string();
    Command::new("kill").args(["-TERM", &pid]).status().unwrap();
    let status = server.0.wait_bounded();
    let mut rest = String::new();
    std::io::Read::read_to_string(&mut stderr, &mut rest).unwrap();
    assert_eq!(status.code(), Some(0), "{rest}");
    assert!(
        rest.contains(
            "http connections=3 refused=0 served=1 not_found=1 not_allowed=0 errors=0 \
accept_errors=0 too_large=1"
        ),
        "{rest}"
    );
}

/// Waits (bounded) for a child.
trait WaitBounded {
    fn wait_bounded(&mut self) -> std::process::ExitStatus;
}

impl WaitBounded for std::process::Child {
    fn wait_bounded(&mut self) -> std::process::ExitStatus {
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            if let Some(s) = self.try_wait().unwrap() {
                return s;
            }
            assert!(Instant::now() < deadline, "server ignored SIGTERM");
            std::thread::sleep(Duration::from_millis(10));
        }
    }
}

#[test]
fn server_refuses_connections_past_the_limit() {
    let (mut server, port, mut stderr) = our_server_stderr(&["--max-connections", "1"]);
    // One connection that never sends a request holds the only slot.
    let idle = std::net::TcpStream::connect(("127.0.0.1", port)).unwrap();
    std::thread::sleep(Duration::from_millis(100));
    let o = run_bounded(
        coaplab().args(["http-get", &format!("http://127.0.0.1:{port}/data/5")]),
        None,
        LIMIT,
    );
    assert_eq!(o.status.code(), Some(4), "closed at once");
    // Once the slot is free again, requests are served.
    drop(idle);
    std::thread::sleep(Duration::from_millis(100));
    let o = run_bounded(
        coaplab().args(["http-get", &format!("http://127.0.0.1:{port}/data/5")]),
        None,
        LIMIT,
    );
    assert_ok(&o, "after the idle connection closed");
    let pid = server.0.id().to_string();
    Command::new("kill").args(["-INT", &pid]).status().unwrap();
    let status = server.0.wait_bounded();
    let mut rest = String::new();
    std::io::Read::read_to_string(&mut stderr, &mut rest).unwrap();
    assert_eq!(status.code(), Some(0), "{rest}");
    assert!(rest.contains(" refused=1 served=1 "), "{rest}");
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
