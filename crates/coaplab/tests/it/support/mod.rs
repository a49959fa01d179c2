//! Helpers for the real-socket tests: children killed on drop, bounded runs, free loopback
//! ports, our server, and finding the interop peers (skipped with a reason only when absent
//! and CI is not set).
#![allow(dead_code)]

use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStderr, Command, Output, Stdio};
use std::time::{Duration, Instant};

/// The built `coaplab` binary.
pub(crate) fn coaplab() -> Command {
    Command::new(env!("CARGO_BIN_EXE_coaplab"))
}

/// A child process killed (and reaped) on drop.
pub(crate) struct Guard(pub(crate) Child);

impl Drop for Guard {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Runs `cmd` to completion, killing it after `limit`; stdin is `input`.
pub(crate) fn run_bounded(cmd: &mut Command, input: Option<&[u8]>, limit: Duration) -> Output {
    cmd.stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = cmd.spawn().expect("spawn");
    let mut stdin = child.stdin.take().unwrap();
    let input = input.map(<[u8]>::to_vec);
    let writer = std::thread::spawn(move || {
        if let Some(b) = input {
            let _ = std::io::Write::write_all(&mut stdin, &b);
        }
    });
    let mut out = child.stdout.take().unwrap();
    let mut err = child.stderr.take().unwrap();
    let r_out = std::thread::spawn(move || {
        let mut v = Vec::new();
        let _ = out.read_to_end(&mut v);
        v
    });
    let r_err = std::thread::spawn(move || {
        let mut v = Vec::new();
        let _ = err.read_to_end(&mut v);
        v
    });
    let status = wait_exit(&mut child, limit).unwrap_or_else(|| {
        let _ = child.kill();
        let s = child.wait().expect("wait");
        eprintln!("killed after {limit:?}: {cmd:?}");
        s
    });
    let _ = writer.join();
    Output {
        status,
        stdout: r_out.join().unwrap(),
        stderr: r_err.join().unwrap(),
    }
}

/// A UDP port free on 127.0.0.1 at the time of the call.
pub(crate) fn free_udp_port() -> u16 {
    let s = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
    s.local_addr().unwrap().port()
}

/// A port free on 127.0.0.1 for both TCP and UDP at the time of the call, and never handed out
/// before by this process: the tests run several at a time, and a port released here is
/// bound by its peer only a moment later, so two tests starting peers at once could otherwise
/// be given the same port (libcoap binds with SO_REUSEADDR, so both would get it).
pub(crate) fn free_tcp_udp_port() -> u16 {
    free_tcp_udp_ports(1)
}

/// A port P such that P … P + `count` − 1 are all free on 127.0.0.1 for TCP and UDP at the time
/// of the call and none was handed out before by this process (as [`free_tcp_udp_port`]; e.g.
/// libcoap's server takes P for coap:// and P + 1 for coaps://).
pub(crate) fn free_tcp_udp_ports(count: u16) -> u16 {
    static GIVEN: std::sync::Mutex<Vec<u16>> = std::sync::Mutex::new(Vec::new());
    let free = |port: u16| {
        std::net::TcpListener::bind(("127.0.0.1", port)).is_ok()
            && std::net::UdpSocket::bind(("127.0.0.1", port)).is_ok()
    };
    let mut given = GIVEN.lock().unwrap_or_else(|e| e.into_inner());
    loop {
        let t = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let first = t.local_addr().unwrap().port();
        let Some(last) = first.checked_add(count.max(1) - 1) else {
            continue;
        };
        if (first..=last).all(|p| !given.contains(&p))
            && std::net::UdpSocket::bind(("127.0.0.1", first)).is_ok()
            && (first + 1..=last).all(free)
        {
            given.extend(first..=last);
            return first;
        }
    }
}

/// Waits at most `limit` for `child` to exit (polling every 10 ms): its status, or `None`
/// when it is still running then.
pub(crate) fn wait_exit(child: &mut Child, limit: Duration) -> Option<std::process::ExitStatus> {
    let deadline = Instant::now() + limit;
    loop {
        if let Some(s) = child.try_wait().expect("wait") {
            return Some(s);
        }
        if Instant::now() > deadline {
            return None;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// The port at the end of a server's `… listening on ADDR:PORT` line.
pub(crate) fn listening_port(line: &str) -> u16 {
    line.trim()
        .rsplit(':')
        .next()
        .and_then(|p| p.parse().ok())
        .unwrap_or_else(|| panic!("no port in {line:?}"))
}

/// Our `coaplab server` (or `coaplab http-server`) on a free loopback port.
pub(crate) struct OurServer {
    /// The child.
    pub(crate) child: Guard,
    /// Its port.
    pub(crate) port: u16,
    stderr: BufReader<ChildStderr>,
}

impl OurServer {
    /// Starts `coaplab server --bind 127.0.0.1:0 EXTRA…` and reads the port it prints.
    pub(crate) fn start(extra: &[&str]) -> OurServer {
        OurServer::start_subcommand("server", extra)
    }

    /// Starts `coaplab http-server --bind 127.0.0.1:0 EXTRA…` and reads the port it prints.
    /// Its stderr stays open (held here) so that it can print its counters at exit.
    pub(crate) fn start_http(extra: &[&str]) -> OurServer {
        OurServer::start_subcommand("http-server", extra)
    }

    /// Starts `coaplab SUBCOMMAND --bind 127.0.0.1:0 EXTRA…` and reads the port of the
    /// `listening on` line it prints first.
    fn start_subcommand(subcommand: &str, extra: &[&str]) -> OurServer {
        let mut child = coaplab()
            .args([subcommand, "--bind", "127.0.0.1:0"])
            .args(extra)
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap_or_else(|e| panic!("spawn coaplab {subcommand}: {e}"));
        let mut stderr = BufReader::new(child.stderr.take().unwrap());
        let mut line = String::new();
        stderr.read_line(&mut line).unwrap();
        let port = listening_port(&line);
        OurServer {
            child: Guard(child),
            port,
            stderr,
        }
    }

    /// The rest of its stderr, e.g. to read a second `listening on` line.
    pub(crate) fn stderr_mut(&mut self) -> &mut BufReader<ChildStderr> {
        &mut self.stderr
    }

    /// `coap://127.0.0.1:PORT/path`.
    pub(crate) fn uri(&self, path: &str) -> String {
        format!("coap://127.0.0.1:{}/{path}", self.port)
    }

    /// `coap+tcp://127.0.0.1:PORT/path` (a server started with `--tcp`).
    pub(crate) fn tcp_uri(&self, path: &str) -> String {
        format!("coap+tcp://127.0.0.1:{}/{path}", self.port)
    }

    /// `http://127.0.0.1:PORT/path` (a server started with [`OurServer::start_http`]).
    pub(crate) fn http_url(&self, path: &str) -> String {
        format!("http://127.0.0.1:{}/{path}", self.port)
    }

    /// Sends SIGTERM, waits (bounded) and returns the exit status and the rest of stderr.
    pub(crate) fn stop(self) -> (std::process::ExitStatus, String) {
        self.stop_with("-TERM")
    }

    /// [`OurServer::stop`], asserting a clean exit (status 0, ` malformed=0 ` in its counters);
    /// returns the rest of stderr.
    pub(crate) fn stop_clean(self) -> String {
        let (status, stderr) = self.stop();
        assert!(status.success(), "{stderr}");
        assert!(stderr.contains(" malformed=0 "), "{stderr}");
        stderr
    }

    /// Sends `signal` (`-TERM`, `-INT`), waits at most 10 s and returns the exit status and
    /// the rest of stderr.
    pub(crate) fn stop_with(mut self, signal: &str) -> (std::process::ExitStatus, String) {
        let pid = self.child.0.id().to_string();
        Command::new("kill")
            .args([signal, &pid])
            .status()
            .expect("kill");
        let status = wait_exit(&mut self.child.0, Duration::from_secs(10))
            .unwrap_or_else(|| panic!("server ignored kill {signal}"));
        let mut rest = String::new();
        self.stderr.read_to_string(&mut rest).unwrap();
        (status, rest)
    }
}

/// The path of peer program `name` (PATH, then the project's `.peers/venv/bin`), or `None`
/// after printing why the test is skipped. Under `CI` a missing peer fails the test.
pub(crate) fn peer(name: &str) -> Option<PathBuf> {
    let venv = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../.peers/venv/bin");
    let dirs = std::env::var_os("PATH").unwrap_or_default();
    let found = std::env::split_paths(&dirs)
        .chain(std::iter::once(venv))
        .map(|d| d.join(name))
        .find(|p| p.is_file());
    if found.is_none() {
        let ci = std::env::var("CI").is_ok_and(|v| !v.is_empty() && v != "false" && v != "0");
        assert!(
            !ci,
            "{name} is missing under CI: run ./scripts/test.sh to install it"
        );
        eprintln!("SKIPPED: {name} is not installed (./scripts/test.sh installs it)");
    }
    found
}

/// [`peer`] `name` and a scratch directory `coaplab-DIR-PID` in the temporary directory
/// (created), or `None` when the peer is absent (see [`peer`]).
pub(crate) fn peer_with_dir(name: &str, dir: &str) -> Option<(PathBuf, PathBuf)> {
    let found = peer(name)?;
    let dir = std::env::temp_dir().join(format!("coaplab-{dir}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    Some((found, dir))
}

/// The body of `data/N`: byte i is i mod 256.
pub(crate) fn pattern(n: usize) -> Vec<u8> {
    (0..n).map(|i| (i % 256) as u8).collect()
}

/// A deterministic pseudo-random payload of `n` bytes.
pub(crate) fn noise(n: usize, seed: u64) -> Vec<u8> {
    let mut x = seed | 1;
    (0..n)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            (x >> 24) as u8
        })
        .collect()
}

/// Fails the test with the child's stderr unless it exited 0.
pub(crate) fn assert_ok(o: &Output, what: &str) {
    assert_eq!(
        o.status.code(),
        Some(0),
        "{what}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
}

/// Client settings for exchanges through a lossy peer: short timers, many retries.
pub(crate) const FAST_RETRIES: [&str; 4] =
    ["--set", "ack_timeout_s=0.1", "--set", "max_retransmit=8"];

/// `coaplab put -v` of `body` (from stdin) to `uri` with [`FAST_RETRIES`], asserted to exit 0
/// (`what` names it on failure); returns the `-v` log.
pub(crate) fn verbose_put(uri: &str, body: &[u8], what: &str, limit: Duration) -> String {
    let o = run_bounded(
        coaplab()
            .args(["put", uri, "-v", "--payload-file", "-"])
            .args(FAST_RETRIES),
        Some(body),
        limit,
    );
    assert_ok(&o, what);
    String::from_utf8(o.stderr).unwrap()
}

/// `coaplab get -v` of `uri` with [`FAST_RETRIES`], asserted to exit 0 (`what` names it on
/// failure); returns the body and the `-v` log.
pub(crate) fn verbose_get(uri: &str, what: &str, limit: Duration) -> (Vec<u8>, String) {
    let o = run_bounded(
        coaplab().args(["get", uri, "-v"]).args(FAST_RETRIES),
        None,
        limit,
    );
    assert_ok(&o, what);
    (o.stdout, String::from_utf8(o.stderr).unwrap())
}

/// `coaplab get` of our server's `time` (seconds since 1970, after 2023) and
/// `.well-known/core` (starting with `</data/1024>;`) URIs, each bounded by `limit`.
pub(crate) fn assert_time_and_core(time: &str, core: &str, limit: Duration) {
    let o = run_bounded(coaplab().args(["get", time]), None, limit);
    assert_eq!(o.status.code(), Some(0));
    let secs: u64 = String::from_utf8(o.stdout).unwrap().parse().unwrap();
    assert!(secs > 1_700_000_000);
    let o = run_bounded(coaplab().args(["get", core]), None, limit);
    assert!(o.stdout.starts_with(b"</data/1024>;"), "{:?}", o.stdout);
}

/// Runs `coaplab bench URI --clients N --duration 500ms` (bounded by `limit`), checks that it
/// exited 0 and returns its stdout.
pub(crate) fn bench_500ms(uri: &str, clients: u32, limit: Duration) -> String {
    let clients = clients.to_string();
    let o = run_bounded(
        coaplab().args(["bench", uri, "--clients", &clients, "--duration", "500ms"]),
        None,
        limit,
    );
    assert_eq!(o.status.code(), Some(0));
    String::from_utf8(o.stdout).unwrap()
}

/// Runs libcoap's `client -B 20 -o OUT ARGS…` (bounded by `limit`), fails with `who ARGS`
/// unless it exited 0, and returns what it wrote to `out` (empty when nothing).
pub(crate) fn libcoap_fetch(
    client: &Path,
    out: &Path,
    args: &[&str],
    who: &str,
    limit: Duration,
) -> Vec<u8> {
    let _ = std::fs::remove_file(out);
    let o = run_bounded(
        Command::new(client)
            .args(["-B", "20", "-o"])
            .arg(out)
            .args(args),
        None,
        limit,
    );
    assert_ok(&o, &format!("{who} {args:?}"));
    std::fs::read(out).unwrap_or_default()
}

/// Starts `bin args` with its output discarded, killed when the guard drops.
pub(crate) fn spawn_quiet(bin: &Path, args: &[&str]) -> Guard {
    Guard(
        Command::new(bin)
            .args(args)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap_or_else(|e| panic!("spawn {}: {e}", bin.display())),
    )
}

/// Repeats `coaplab get URI extra...` until it succeeds (a peer is ready when it answers)
/// and returns that answer; fails after 20 s.
pub(crate) fn first_answer(uri: &str, extra: &[&str], who: &str) -> Output {
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let o = run_bounded(
            coaplab().arg("get").arg(uri).args(extra),
            None,
            Duration::from_secs(60),
        );
        if o.status.success() {
            return o;
        }
        assert!(Instant::now() < deadline, "{who} did not answer {uri}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// `coap-server-notls` with dynamic resources (`-d 50`) on a free loopback port (listening
/// on UDP and TCP), and `extra` flags; returned once it answers a GET of / over `scheme`.
pub(crate) fn libcoap_server(bin: &Path, scheme: &str, extra: &[&str]) -> (Guard, u16) {
    let port = free_tcp_udp_port();
    let port_arg = port.to_string();
    let mut args = vec!["-A", "127.0.0.1", "-p", &port_arg, "-d", "50"];
    args.extend_from_slice(extra);
    let guard = spawn_quiet(bin, &args);
    let retry: &[&str] = if scheme == "coap" {
        &["--set", "ack_timeout_s=0.2"]
    } else {
        &["--timeout", "2s"]
    };
    let o = first_answer(
        &format!("{scheme}://127.0.0.1:{port}/"),
        retry,
        "coap-server-notls",
    );
    assert!(o
        .stdout
        .starts_with(b"This is a test server made with libcoap"));
    (guard, port)
}

/// `aiocoap-fileserver --write` serving `dir` on 127.0.0.1:`port` (UDP, and TCP by its
/// default transports).
pub(crate) fn aiocoap_fileserver(bin: &Path, dir: &Path, port: u16) -> Guard {
    let bind = format!("127.0.0.1:{port}");
    spawn_quiet(bin, &["--write", "--bind", &bind, &dir.to_string_lossy()])
}

/// Whether `coaplab emulate` cannot run here (not root, no /dev/net/tun): then prints why the
/// test is skipped.
pub(crate) fn emulator_unavailable() -> bool {
    match coaplab_emu::emulator::unavailable() {
        Some(why) => {
            eprintln!("SKIPPED: {why}");
            true
        }
        None => false,
    }
}

/// Which output of a child a [`LineChild`] line came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Stream {
    /// Its stdout.
    Out,
    /// Its stderr.
    Err,
}

/// A long-running child (one that runs until interrupted, e.g. an observing client or a peer
/// server) whose stdout and stderr lines are read as they come; killed (and reaped) on drop,
/// so it dies even when the test fails.
pub(crate) struct LineChild {
    child: Guard,
    rx: std::sync::mpsc::Receiver<(Stream, String)>,
    /// Every line received so far, in arrival order (per stream).
    pub(crate) lines: Vec<(Stream, String)>,
}

impl LineChild {
    /// Spawns `cmd` with stdin closed and both outputs read line by line. (SIGINT must not
    /// be ignored by the test process for [`LineChild::interrupt`] to reach a Python child:
    /// `scripts/test.sh` sees to that.)
    pub(crate) fn spawn(cmd: &mut Command) -> LineChild {
        let mut child = cmd
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap_or_else(|e| panic!("spawn {cmd:?}: {e}"));
        let (tx, rx) = std::sync::mpsc::channel();
        let out = child.stdout.take().unwrap();
        let err = child.stderr.take().unwrap();
        for (stream, pipe) in [
            (Stream::Out, Box::new(out) as Box<dyn Read + Send>),
            (Stream::Err, Box::new(err)),
        ] {
            let tx = tx.clone();
            std::thread::spawn(move || {
                for line in BufReader::new(pipe).lines() {
                    let Ok(line) = line else { break };
                    if tx.send((stream, line)).is_err() {
                        break;
                    }
                }
            });
        }
        LineChild {
            child: Guard(child),
            rx,
            lines: Vec::new(),
        }
    }

    /// Reads lines until `done(lines so far)` holds (true) or `limit` passes, or both outputs
    /// close (false).
    pub(crate) fn wait_until(
        &mut self,
        limit: Duration,
        done: impl Fn(&[(Stream, String)]) -> bool,
    ) -> bool {
        let deadline = Instant::now() + limit;
        while !done(&self.lines) {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.rx.recv_timeout(left) {
                Ok(line) => self.lines.push(line),
                Err(_) => return false,
            }
        }
        true
    }

    /// Sends SIGINT (what Ctrl-C does), waits at most `limit` for the exit (SIGKILL after
    /// that), reads the rest of both outputs and returns the exit status.
    pub(crate) fn interrupt(&mut self, limit: Duration) -> std::process::ExitStatus {
        let pid = self.child.0.id().to_string();
        let _ = Command::new("kill").args(["-INT", &pid]).status();
        let status = wait_exit(&mut self.child.0, limit).unwrap_or_else(|| {
            eprintln!("SIGINT ignored for {limit:?}: killing {pid}");
            let _ = self.child.0.kill();
            self.child.0.wait().expect("wait")
        });
        // Both readers end at EOF once the child (and any grandchild holding the pipes) is gone.
        while let Ok(line) = self.rx.recv_timeout(Duration::from_secs(2)) {
            self.lines.push(line);
        }
        status
    }

    /// The lines of `stream` received so far.
    pub(crate) fn of(&self, stream: Stream) -> Vec<&str> {
        self.lines
            .iter()
            .filter(|(s, _)| *s == stream)
            .map(|(_, l)| l.as_str())
            .collect()
    }
}

/// Checks a finished `coaplab get --observe --count 4 -v` run: exit 0, four consecutive
/// integers on stdout (the registration's answer and three notifications) and `observe=0` to
/// `observe=3` on stderr; returns the integers.
pub(crate) fn assert_four_consecutive(o: &Output) -> Vec<u64> {
    assert_ok(o, "coaplab get --observe --count 4 -v");
    let out = String::from_utf8_lossy(&o.stdout);
    let values: Vec<u64> = out.lines().map(|l| l.trim().parse().unwrap()).collect();
    assert_eq!(values.len(), 4, "{out:?}");
    assert!(values.windows(2).all(|w| w[1] == w[0] + 1), "{values:?}");
    let err = String::from_utf8_lossy(&o.stderr);
    let seqs: Vec<&str> = err.lines().filter(|l| l.starts_with("observe=")).collect();
    assert_eq!(
        seqs,
        ["observe=0", "observe=1", "observe=2", "observe=3"],
        "{err}"
    );
    values
}

/// How many consecutive integers `s` is the concatenation of (k, k+1, …), or 0.
pub(crate) fn consecutive(s: &str) -> usize {
    for first_len in 1..=s.len().min(12) {
        let Ok(mut k) = s[..first_len].parse::<u64>() else {
            continue;
        };
        let (mut rest, mut n) = (s, 0);
        while let Some(r) = rest.strip_prefix(&k.to_string()) {
            rest = r;
            n += 1;
            k += 1;
        }
        if rest.is_empty() && n >= 2 {
            return n;
        }
    }
    0
}

/// libcoap's `client` (`coap-client-notls`) observes our server's `/counter` (a change every
/// 200 ms) over UDP or, with `tcp`, `coap+tcp`: `-s 2` observes for 2 s and deregisters, `-B 3`
/// gives up after 3 s. Asserts the printed payloads are at least five consecutive integers
/// (libcoap prints them back to back, "78910…", about ten in 2 s) and that the server exits
/// cleanly; returns the client's output and the server's stderr.
pub(crate) fn libcoap_client_observes_counter(client: &Path, tcp: bool) -> (Output, String) {
    let server = if tcp {
        OurServer::start(&["--tcp", "--observe-period", "200ms"])
    } else {
        OurServer::start(&["--observe-period", "200ms"])
    };
    let uri = if tcp {
        server.tcp_uri("counter")
    } else {
        server.uri("counter")
    };
    let o = run_bounded(
        Command::new(client).args(["-s", "2", "-B", "3", &uri]),
        None,
        Duration::from_secs(20),
    );
    let out = String::from_utf8_lossy(&o.stdout).trim().to_owned();
    assert!(consecutive(&out) >= 5, "{out:?}");
    let (status, stderr) = server.stop();
    assert!(status.success());
    (o, stderr)
}

/// `coaplab get --observe --count 3` of libcoap's `coap-server-notls` `/time` over `scheme`
/// (`coap` or `coap+tcp`; `-v` with `verbose`). Asserts success and three printed times (e.g.
/// "Nov 24 17:31:40", one line per notification); returns the output.
pub(crate) fn observe_libcoap_time(server: &Path, scheme: &str, verbose: bool) -> Output {
    let (_guard, port) = libcoap_server(server, scheme, &[]);
    let uri = format!("{scheme}://127.0.0.1:{port}/time");
    let mut args = vec!["get", "--observe", "--count", "3"];
    if verbose {
        args.push("-v");
    }
    args.push(&uri);
    let o = run_bounded(coaplab().args(&args), None, Duration::from_secs(20));
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let out = String::from_utf8_lossy(&o.stdout).into_owned();
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), 3, "{out:?}");
    assert!(
        lines.iter().all(|l| l.len() >= 8 && l.contains(':')),
        "{out:?}"
    );
    o
}

/// The Californium peer's launcher, `.peers/californium/cf` (scripts/californium/install.sh,
/// run by scripts/test.sh), or `None` after printing why the test is skipped; under `CI` a
/// missing peer fails the test (as [`peer`]).
pub(crate) fn californium() -> Option<PathBuf> {
    let cf = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../.peers/californium/cf");
    if cf.is_file() {
        return Some(cf);
    }
    let ci = std::env::var("CI").is_ok_and(|v| !v.is_empty() && v != "false" && v != "0");
    assert!(
        !ci,
        "the Californium peer is missing under CI: run ./scripts/test.sh (or \
         scripts/californium/install.sh) to build it"
    );
    eprintln!(
        "SKIPPED: the Californium peer is not built (scripts/californium/install.sh builds it)"
    );
    None
}

/// [`californium`] and a scratch directory `coaplab-DIR-PID` (created), or `None`.
pub(crate) fn californium_with_dir(dir: &str) -> Option<(PathBuf, PathBuf)> {
    let found = californium()?;
    let dir = std::env::temp_dir().join(format!("coaplab-{dir}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    Some((found, dir))
}

/// The Californium peer's server (`cf server --bind 127.0.0.1:0 EXTRA…`), its stderr read line
/// by line; killed on drop.
pub(crate) struct CfServer {
    /// The child and its output.
    pub(crate) child: LineChild,
    /// The UDP port.
    pub(crate) port: u16,
}

impl CfServer {
    /// Starts it and waits (at most 30 s: a JVM on a loaded machine) for its `listening on`
    /// line and, when `extra` asks for them, its `tcp listening on` and `dtls listening on`
    /// lines.
    pub(crate) fn start(cf: &Path, extra: &[&str]) -> CfServer {
        let mut child = LineChild::spawn(
            Command::new(cf)
                .args(["server", "--bind", "127.0.0.1:0"])
                .args(extra),
        );
        let want = 1
            + usize::from(extra.iter().any(|a| a.starts_with("--tcp")))
            + usize::from(extra.contains(&"--dtls-bind"));
        let ok = child.wait_until(Duration::from_secs(30), |lines| {
            lines
                .iter()
                .filter(|(_, l)| l.contains("listening on"))
                .count()
                >= want
        });
        assert!(
            ok,
            "the Californium server did not start: {:?}",
            child.lines
        );
        let port = child.listening("californium server: listening on");
        CfServer { child, port }
    }

    /// The port of its `WHAT listening on` line (`tcp`, `dtls`).
    pub(crate) fn port_of(&self, what: &str) -> u16 {
        self.child
            .listening(&format!("californium server: {what} listening on"))
    }

    /// `coap://127.0.0.1:PORT/path`.
    pub(crate) fn uri(&self, path: &str) -> String {
        format!("coap://127.0.0.1:{}/{path}", self.port)
    }
}

impl LineChild {
    /// The port of the first line starting with `prefix` (`… listening on ADDR:PORT`).
    pub(crate) fn listening(&self, prefix: &str) -> u16 {
        let line = self
            .lines
            .iter()
            .find(|(_, l)| l.starts_with(prefix))
            .unwrap_or_else(|| panic!("no {prefix:?} line in {:?}", self.lines));
        listening_port(&line.1)
    }
}

/// `coaplab get uri` with a PSK the server does not hold (`wrong-key`, `identity`): the
/// server drops our undecryptable Finished, and we fail on the handshake stall (1 s) with exit
/// 4 and a message naming the DTLS handshake.
pub(crate) fn assert_wrong_psk_fails(uri: &str, identity: &str, limit: Duration) {
    let o = run_bounded(
        coaplab().args(["get", uri, "--dtls-stall", "1s"]).args([
            "-k",
            "wrong-key",
            "-u",
            identity,
        ]),
        None,
        limit,
    );
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(4), "{err}");
    assert!(err.contains("DTLS handshake"), "{err}");
}
