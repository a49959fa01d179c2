//! `coaplab emulate`: libcoap's client against our server and our client against libcoap's
//! server through the emulated nbiot link (bytes compared), and removal of every namespace,
//! device and process after a normal run, an error and SIGINT.
//!
//! Needs root and /dev/net/tun (skipped with a printed reason otherwise); the libcoap peers
//! are installed by scripts/test.sh.

use crate::support;

use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus, Output, Stdio};
use std::time::{Duration, Instant};

use support::{
    assert_ok as ok, coaplab, emulator_unavailable, noise, pattern, peer, run_bounded, wait_exit,
    Guard,
};

const LIMIT: Duration = Duration::from_secs(90);

fn bin() -> String {
    env!("CARGO_BIN_EXE_coaplab").to_owned()
}

/// A fresh scratch directory for one test.
fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("coaplab-emulate-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn emulate(args: &[&str]) -> Output {
    run_bounded(coaplab().arg("emulate").args(args), None, LIMIT)
}

/// The namespace names `coaplab emulate` announced on stderr.
fn namespaces(stderr: &str) -> Vec<String> {
    let mut names = Vec::new();
    for key in ["client namespace ", "server namespace "] {
        let at = stderr
            .find(key)
            .unwrap_or_else(|| panic!("no {key:?} in {stderr}"));
        let rest = &stderr[at + key.len()..];
        names.push(rest.split_whitespace().next().unwrap().to_owned());
    }
    names
}

fn text(cmd: &[&str]) -> String {
    let o = Command::new(cmd[0]).args(&cmd[1..]).output().unwrap();
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// No namespace, TUN device or process of this session is left.
fn assert_all_removed(stderr: &str, pid_files: &[&Path]) {
    let names = namespaces(stderr);
    let list = text(&["ip", "netns", "list"]);
    for n in &names {
        assert!(!list.contains(n.as_str()), "namespace {n} left: {list}");
    }
    // Devices are named cl<pid>x<session><c|s> after namespaces cl-<pid>-<session>-<c|s>.
    let pid = names[0].split('-').nth(1).unwrap();
    let links = text(&["ip", "-o", "link"]);
    assert!(!links.contains(&format!("cl{pid}x")), "TUN left: {links}");
    for f in pid_files {
        let pid = std::fs::read_to_string(f).unwrap_or_else(|_| panic!("{f:?} not written"));
        let proc = PathBuf::from(format!("/proc/{}", pid.trim()));
        assert!(!proc.exists(), "process {} still runs", pid.trim());
    }
}

/// No namespace or TUN device of the `coaplab` process `pid` is left.
fn assert_pid_removed(pid: &str) {
    assert!(
        !text(&["ip", "netns", "list"]).contains(&format!("cl-{pid}-")),
        "namespaces left"
    );
    assert!(!text(&["ip", "-o", "link"]).contains(&format!("cl{pid}x")));
}

/// Starts `cmd` with stdin and stdout discarded and stderr piped; killed on drop.
fn spawn_piped(cmd: &mut Command) -> Guard {
    Guard(
        cmd.stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap(),
    )
}

/// Polls every 20 ms until `ready`, failing with `what` after 30 s.
fn wait_until(what: &str, mut ready: impl FnMut() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(30);
    while !ready() {
        assert!(Instant::now() < deadline, "{what}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Sends SIGINT to process `pid`.
fn interrupt(pid: &str) {
    assert!(Command::new("kill")
        .args(["-INT", pid])
        .status()
        .unwrap()
        .success());
}

/// Waits (at most `limit`, else fails with `what`) for the child to end: its status and
/// its stderr.
fn wait_end(guard: &mut Guard, limit: Duration, what: &str) -> (ExitStatus, String) {
    let status = wait_exit(&mut guard.0, limit).unwrap_or_else(|| panic!("{what}"));
    let mut stderr = String::new();
    std::io::Read::read_to_string(&mut guard.0.stderr.take().unwrap(), &mut stderr).unwrap();
    (status, stderr)
}

/// For a test with peer program `name`: the peer and a fresh scratch directory `scratch_name`,
/// or `None` (the reason printed) when the emulator or the peer is unavailable.
fn with_peer(name: &str, scratch_name: &str) -> Option<(PathBuf, PathBuf)> {
    if emulator_unavailable() {
        return None;
    }
    let peer = peer(name)?;
    Some((peer, scratch(scratch_name)))
}

/// For a test: a fresh scratch directory `name`, or `None` (the reason printed) when the
/// emulator is unavailable.
fn setup(name: &str) -> Option<PathBuf> {
    if emulator_unavailable() {
        return None;
    }
    Some(scratch(name))
}

/// `coaplab emulate --preset nbiot --server SERVER -- CLIENT…`.
fn emulate_nbiot(server: &str, client: &[&str]) -> Output {
    let mut args = vec!["--preset", "nbiot", "--server", server, "--"];
    args.extend_from_slice(client);
    emulate(&args)
}

#[test]
fn libcoap_client_gets_from_our_server_over_nbiot() {
    let Some((client, dir)) = with_peer("coap-client-notls", "libcoap-client") else {
        return;
    };
    let out = dir.join("out.bin");
    let o = emulate_nbiot(
        &format!("{} server", bin()),
        &[
            client.to_str().unwrap(),
            "-B",
            "30",
            "-o",
            out.to_str().unwrap(),
            "coap://$COAPLAB_SERVER_ADDR/data/2048",
        ],
    );
    ok(&o, "coap-client-notls through nbiot");
    assert!(
        std::fs::read(&out).unwrap() == pattern(2048),
        "bytes differ"
    );
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(stderr.contains("link statistics"), "{stderr}");
    assert!(
        stderr.contains("served="),
        "server did not report: {stderr}"
    );
    assert_all_removed(&stderr, &[]);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn our_client_puts_and_gets_on_libcoap_server_over_nbiot() {
    let Some((server, dir)) = with_peer("coap-server-notls", "libcoap-server") else {
        return;
    };
    let (input, out) = (dir.join("in.bin"), dir.join("out.bin"));
    let body = noise(2048, 9);
    std::fs::write(&input, &body).unwrap();
    let uri = "coap://$COAPLAB_SERVER_ADDR/emulated";
    let script = format!(
        "{b} put \"{uri}\" --payload-file {i} >/dev/null && {b} get \"{uri}\" > {o}",
        b = bin(),
        i = input.display(),
        o = out.display(),
    );
    let o = emulate_nbiot(
        &format!("{} -A 198.18.0.2 -d 10", server.display()),
        &["sh", "-c", &script],
    );
    ok(&o, "coaplab put/get through nbiot");
    assert!(std::fs::read(&out).unwrap() == body, "bytes differ");
    assert_all_removed(&String::from_utf8_lossy(&o.stderr), &[]);
    let _ = std::fs::remove_dir_all(&dir);
}

/// The capture (`--pcap`, written with the `pcap-file` crate) is read by tshark: every packet
/// a CoAP message of the GET, none malformed.
#[test]
fn the_capture_decodes_in_tshark() {
    let Some(dir) = setup("pcap") else {
        return;
    };
    if Command::new("tshark").arg("--version").output().is_err() {
        assert!(std::env::var_os("CI").is_none(), "tshark is missing in CI");
        eprintln!("SKIPPED: tshark is not installed");
        return;
    }
    let pcap = dir.join("link.pcap");
    let get = format!(
        "{} get coap://$COAPLAB_SERVER_ADDR/data/2048 >/dev/null",
        bin()
    );
    let o = emulate(&[
        "--preset",
        "nbiot",
        "--pcap",
        pcap.to_str().unwrap(),
        "--server",
        &format!("{} server", bin()),
        "--",
        "sh",
        "-c",
        &get,
    ]);
    ok(&o, "coaplab get through nbiot with --pcap");
    let fields = |filter: &str| -> Vec<String> {
        let o = Command::new("tshark")
            .args(["-r", pcap.to_str().unwrap(), "-Y", filter, "-T", "fields"])
            .args(["-e", "frame.number"])
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        String::from_utf8_lossy(&o.stdout)
            .lines()
            .map(str::to_string)
            .collect()
    };
    assert_eq!(fields("_ws.malformed"), Vec::<String>::new());
    // 2048 B in 1024-B blocks: two GETs and two 2.05 answers; each answer is fragmented at
    // the 292-B MTU, its last fragment showing the reassembled message.
    assert_eq!(fields("coap").len(), 4);
    assert_eq!(fields("!coap && ip.flags.mf == 0"), Vec::<String>::new());
    let _ = std::fs::remove_dir_all(&dir);
}

/// `coaplab emulate` arguments over zigbee with our server and `sh -c CLIENT` as the client,
/// each first writing its pid to a file in `dir`: (server pid file, client pid file, the
/// arguments).
fn zigbee_with_pid_files(dir: &Path, client: &str) -> (PathBuf, PathBuf, Vec<String>) {
    let (spid, cpid) = (dir.join("server.pid"), dir.join("client.pid"));
    let args = vec![
        "--preset".to_owned(),
        "zigbee".to_owned(),
        "--server".to_owned(),
        format!("echo $$ > {}; exec {} server", spid.display(), bin()),
        "--".to_owned(),
        "sh".to_owned(),
        "-c".to_owned(),
        format!("echo $$ > {}; {client}", cpid.display()),
    ];
    (spid, cpid, args)
}

#[test]
fn everything_is_removed_after_a_normal_run_and_after_errors() {
    let Some(dir) = setup("cleanup") else {
        return;
    };
    let (spid, cpid, args) = zigbee_with_pid_files(&dir, "exit 7");
    // Normal run: the client's exit code is forwarded; the server is ended.
    let o = emulate(&args.iter().map(String::as_str).collect::<Vec<_>>());
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(7), "{stderr}");
    assert_all_removed(&stderr, &[&spid, &cpid]);
    // The server command fails before listening.
    let o = emulate(&["--server", "exit 3", "--", "true"]);
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(125), "{stderr}");
    assert!(stderr.contains("ended before listening"), "{stderr}");
    assert_all_removed(&stderr, &[]);
    // The client program does not exist (ip netns exec fails).
    let o = emulate(&["--", "/nonexistent/program"]);
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert_ne!(o.status.code(), Some(0), "{stderr}");
    assert_all_removed(&stderr, &[]);
    // Bad arguments never create anything.
    let o = emulate(&["--loss", "lots", "--", "true"]);
    assert_eq!(o.status.code(), Some(2));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn everything_is_removed_after_sigint() {
    let Some(dir) = setup("sigint") else {
        return;
    };
    let (spid, cpid, args) = zigbee_with_pid_files(&dir, "exec sleep 60");
    let mut guard = spawn_piped(coaplab().arg("emulate").args(&args));
    wait_until("the client never started", || {
        cpid.exists() && !std::fs::read_to_string(&cpid).unwrap().trim().is_empty()
    });
    interrupt(&guard.0.id().to_string());
    let (status, stderr) = wait_end(
        &mut guard,
        Duration::from_secs(30),
        "coaplab emulate ignored SIGINT",
    );
    assert_eq!(status.code(), Some(130), "{stderr}");
    assert!(stderr.contains("interrupted"), "{stderr}");
    assert_all_removed(&stderr, &[&spid, &cpid]);
    let _ = std::fs::remove_dir_all(&dir);
}

/// Writes `text` as `dir/file` and returns its path.
fn write_scenario(dir: &Path, file: &str, text: &str) -> PathBuf {
    let path = dir.join(file);
    std::fs::write(&path, text).unwrap();
    path
}

/// A scenario small enough to run in real time: `count` zigbee clients, `n` exchanges each.
fn tiny_scenario(dir: &Path, count: u32, n: u32) -> PathBuf {
    write_scenario(
        dir,
        "tiny.toml",
        &format!(
            "name = \"tiny\"\nseed = 3\nreplications = 1\n[network]\npreset = \"zigbee\"\n\
             [[flows]]\ncount = {count}\ncc = \"cocoa\"\nworkload = \"continuous\"\n\
             exchanges = {n}\n"
        ),
    )
}

/// A CoAP-over-TCP scenario over nbiot (`network` added to its `[network]` table): `count`
/// New Reno long transfers of `object_bytes`.
fn tcp_scenario(dir: &Path, network: &str, count: u32, object_bytes: u32) -> PathBuf {
    write_scenario(
        dir,
        "tcp.toml",
        &format!(
            "name = \"tcp\"\nseed = 5\nreplications = 1\n[network]\npreset = \"nbiot\"\n\
             {network}[[flows]]\ncount = {count}\ncc = \"tcp-newreno\"\n\
             workload = \"long-transfer\"\nobject_bytes = {object_bytes}\n"
        ),
    )
}

/// The fields `names` of every row of `flows.csv` in `dir`.
fn flows_columns(dir: &Path, names: &[&str]) -> Vec<Vec<String>> {
    let text = std::fs::read_to_string(dir.join("flows.csv")).unwrap();
    let mut lines = text.lines();
    let header: Vec<&str> = lines.next().unwrap().split(',').collect();
    let cols: Vec<usize> = names
        .iter()
        .map(|name| header.iter().position(|h| h == name).unwrap())
        .collect();
    lines
        .map(|l| {
            let f: Vec<&str> = l.split(',').collect();
            cols.iter().map(|&c| f[c].to_owned()).collect()
        })
        .collect()
}

/// `(fct_s, completed)` of every row of `flows.csv` in `dir`.
fn flows(dir: &Path) -> Vec<(f64, bool)> {
    flows_columns(dir, &["fct_s", "completed"])
        .into_iter()
        .map(|f| (f[0].parse().unwrap_or(f64::NAN), f[1] == "true"))
        .collect()
}

/// Runs `coaplab run SCENARIO ARGS… --out OUT` to completion and checks that it exited 0.
fn run_scenario(scenario: &Path, args: &[&str], out: &Path, what: &str) {
    let o = run_bounded(
        coaplab()
            .args(["run", scenario.to_str().unwrap()])
            .args(args)
            .arg("--out")
            .arg(out),
        None,
        LIMIT,
    );
    ok(&o, what);
}

/// Every result file is written in `out`.
fn assert_result_files(out: &Path) {
    for file in ["flows.csv", "summary.csv", "runs.csv", "manifest.json"] {
        assert!(out.join(file).is_file(), "{file} missing");
    }
}

/// Starts `coaplab run SCENARIO --mode emulated --out OUT`.
fn spawn_emulated_run(scenario: &Path, out: &Path) -> Guard {
    spawn_piped(
        coaplab()
            .args([
                "run",
                scenario.to_str().unwrap(),
                "--mode",
                "emulated",
                "--out",
            ])
            .arg(out),
    )
}

/// Starts an emulated run of `scenario`, waits until its namespaces exist and `settle`
/// more, sends SIGINT and checks that the run ends as interrupted with nothing left.
fn interrupt_emulated_run(scenario: &Path, out: &Path, settle: Duration) {
    let mut guard = spawn_emulated_run(scenario, out);
    let pid = guard.0.id().to_string();
    let prefix = format!("cl-{pid}-");
    wait_until("the emulated run never started", || {
        text(&["ip", "netns", "list"]).contains(&prefix)
    });
    std::thread::sleep(settle);
    interrupt(&pid);
    let (status, stderr) = wait_end(
        &mut guard,
        Duration::from_secs(30),
        "coaplab run ignored SIGINT",
    );
    assert!(!status.success(), "{stderr}");
    assert!(stderr.contains("interrupted"), "{stderr}");
    assert_pid_removed(&pid);
}

#[test]
fn run_mode_emulated_writes_the_same_result_files() {
    let Some(dir) = setup("run-mode") else {
        return;
    };
    let scenario = tiny_scenario(&dir, 2, 5);
    let (emu_out, sim_out) = (dir.join("emulated"), dir.join("simulated"));
    for (out, mode) in [(&emu_out, "emulated"), (&sim_out, "simulated")] {
        run_scenario(&scenario, &["--mode", mode], out, mode);
    }
    assert_result_files(&emu_out);
    let (emulated, simulated) = (flows(&emu_out), flows(&sim_out));
    assert_eq!(emulated.len(), 2);
    for ((e, e_done), (s, _)) in emulated.iter().zip(&simulated) {
        assert!(*e_done, "an emulated flow did not complete");
        // Real time adds the endpoints' and the kernel's latencies; a generous bound.
        assert!(
            (e - s).abs() < 0.1 + 0.2 * s,
            "emulated {e} s vs simulated {s} s"
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn run_mode_emulated_cleans_up_after_sigint() {
    let Some(dir) = setup("run-sigint") else {
        return;
    };
    let scenario = tiny_scenario(&dir, 2, 10_000); // far longer than the test waits
    interrupt_emulated_run(&scenario, &dir.join("out"), Duration::from_millis(500));
    let _ = std::fs::remove_dir_all(&dir);
}

/// `fct_s` of every row of `flows.csv` in `dir` for TCP flows, with `transmissions`.
fn tcp_flows(dir: &Path) -> Vec<(f64, u64, String)> {
    flows_columns(dir, &["fct_s", "transmissions", "setup_s"])
        .into_iter()
        .map(|f| {
            (
                f[0].parse().unwrap_or(f64::NAN),
                f[1].parse().unwrap(),
                f[2].clone(),
            )
        })
        .collect()
}

/// A CoAP-over-TCP long transfer (New Reno, 4,096 B over nbiot with a 14,100-B buffer, so no
/// loss: about 3 s of real time) in both modes. The emulated FCT may be shorter than the
/// simulated one: Linux starts in quick-ACK mode and ACKs every segment at once, where the
/// model delays the ACK of an odd segment by 200 ms (docs/cross-check.md) — at most one such
/// wait per round trip, and 16 segments from an initial window of 4 take at most 2 rounds
/// with a delayed ACK, so it may be up to 0.4 s shorter; it may be longer by the real-time
/// overhead (scheduling, the emulator's write lateness: well under 0.1 s). Observed: 2.404 s
/// emulated against 2.562 s simulated.
#[test]
fn run_mode_emulated_tcp_long_transfer_is_close_to_the_simulated_one() {
    if emulator_unavailable() {
        return;
    }
    if !coaplab_emu::emulator::tcp_sockets::congestion_available("reno") {
        eprintln!("SKIPPED: the kernel has no reno");
        return;
    }
    let dir = scratch("run-tcp");
    let scenario = tcp_scenario(&dir, "buffer_bytes = 14100\n", 1, 4096);
    let (emu_out, sim_out) = (dir.join("emulated"), dir.join("simulated"));
    let mut guard = spawn_emulated_run(&scenario, &emu_out);
    let pid = guard.0.id().to_string();
    let (status, stderr) = wait_end(&mut guard, LIMIT, "coaplab run did not finish");
    assert!(status.success(), "{stderr}");
    // Cleanup: no namespace or TUN device of that process is left.
    assert_pid_removed(&pid);
    run_scenario(&scenario, &[], &sim_out, "simulated");
    assert_result_files(&emu_out);
    let (e, s) = (tcp_flows(&emu_out), tcp_flows(&sim_out));
    assert_eq!((e.len(), s.len()), (1, 1));
    let ((ef, etx, esetup), (sf, stx, _)) = (&e[0], &s[0]);
    assert!(
        (-0.45..=0.15).contains(&(ef - sf)),
        "emulated {ef} s vs simulated {sf} s"
    );
    // No loss: the same data segments (2 CSMs, the GET, 16 + 1 segments of the response).
    assert_eq!(etx, stx);
    // Setup: one round trip (0.6 s + 30 ms rest-of-path + a SYN and a SYN-ACK serialized).
    let setup: f64 = esetup.parse().unwrap();
    assert!((0.6..0.75).contains(&setup), "setup_s {setup}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// SIGINT during an emulated CoAP-over-TCP run: the run ends through its teardown (sockets
/// closed, namespaces and TUN devices removed) and is recorded as interrupted.
#[test]
fn run_mode_emulated_tcp_cleans_up_after_sigint() {
    let Some(dir) = setup("run-tcp-sigint") else {
        return;
    };
    // Far longer than the test waits: 102,400 B each over nbiot (≈ 60 s for two).
    let scenario = tcp_scenario(&dir, "", 2, 102_400);
    // Past the handshakes (0.65 s after the start jitter of up to 1 s): data is flowing.
    interrupt_emulated_run(&scenario, &dir.join("out"), Duration::from_millis(2500));
    let _ = std::fs::remove_dir_all(&dir);
}
