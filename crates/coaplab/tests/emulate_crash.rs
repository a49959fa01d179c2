//! `coaplab emulate` killed with SIGKILL: its server and client process trees (grandchildren
//! that left the process group or session included) and its namespaces are removed by the
//! session's watchdog; with the watchdog killed too, `coaplab emulate --cleanup` removes them;
//! `--cleanup` removes only names of the emulator's form whose owner is dead.
//!
//! Needs root and /dev/net/tun (skipped with a printed reason otherwise). Every process a test
//! starts carries a marker argument unique to the test, and a drop guard kills what still
//! carries it and deletes what the test created, pass or fail. The tests run one at a time:
//! each one's `coaplab emulate` would otherwise remove another's deliberately dead leftovers.

// Its own test binary, not a module of `it`: it leaves namespaces of a killed session behind
// on purpose, which any emulation starting meanwhile in the same run would reap.
#[path = "it/support/mod.rs"]
mod support;

use std::process::{Child, Command, Stdio};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use coaplab_emu::emulator::reap::own_start_ticks;
use support::{assert_ok, coaplab, emulator_unavailable, run_bounded};

/// The bound on how long removal may take after the kill.
const REMOVAL_LIMIT: Duration = Duration::from_secs(5);

static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());

/// A `sleep` duration in seconds unique to test `n` of this process (far longer than a test),
/// used as the marker argument.
fn marker(n: u32) -> String {
    format!("9{n}{}", std::process::id())
}

/// The processes (not zombies) with an argument equal to `marker`.
fn marked(marker: &str) -> Vec<u32> {
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    dir.filter_map(|e| e.ok()?.file_name().to_str()?.parse::<u32>().ok())
        .filter(|pid| {
            std::fs::read(format!("/proc/{pid}/cmdline"))
                .is_ok_and(|c| c.split(|&b| b == 0).any(|arg| arg == marker.as_bytes()))
        })
        .collect()
}

fn text(cmd: &[&str]) -> String {
    let o = Command::new(cmd[0]).args(&cmd[1..]).output().unwrap();
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// The namespaces whose names start with `prefix`.
fn namespaces(prefix: &str) -> Vec<String> {
    text(&["ip", "netns", "list"])
        .lines()
        .filter_map(|l| l.split_whitespace().next())
        .filter(|n| n.starts_with(prefix))
        .map(str::to_owned)
        .collect()
}

fn kill9(pid: u32) {
    let _ = Command::new("kill").args(["-9", &pid.to_string()]).status();
}

/// Polls every 20 ms until `done`, failing with `what` after `limit`.
fn wait_until(limit: Duration, what: &str, mut done: impl FnMut() -> bool) {
    let deadline = Instant::now() + limit;
    while !done() {
        assert!(Instant::now() < deadline, "{what} (after {limit:?})");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Removes on drop, pass or fail: the `coaplab emulate` child, the other `children`, every
/// process carrying `marker`, the namespaces named with `prefixes` and the devices `devices`.
struct Cleanup {
    child: Option<Child>,
    children: Vec<Child>,
    marker: String,
    prefixes: Vec<String>,
    devices: Vec<String>,
}

impl Drop for Cleanup {
    fn drop(&mut self) {
        for c in self.child.iter_mut().chain(&mut self.children) {
            let _ = c.kill();
            let _ = c.wait();
        }
        for prefix in &self.prefixes {
            for ns in namespaces(prefix) {
                for pid in text(&["ip", "netns", "pids", &ns]).split_whitespace() {
                    let _ = Command::new("kill").args(["-9", pid]).status();
                }
                let _ = Command::new("ip").args(["netns", "del", &ns]).status();
            }
        }
        for pid in marked(&self.marker) {
            kill9(pid);
        }
        for dev in &self.devices {
            let _ = Command::new("ip")
                .args(["link", "del", "dev", dev])
                .stderr(Stdio::null())
                .status();
        }
    }
}

/// Processes a session started with [`crash_session`] runs with the marker: the server's
/// inner `sh` and its three sleeps, the client's `sh` and its two sleeps (each script ends in
/// `wait`, so no shell execs its last command in its own place).
const MARKED_PROCESSES: usize = 7;

/// Starts `coaplab emulate` with a server process tree (one grandchild in a session of its
/// own) and a client process tree, every process marked with `marker`, and waits until all
/// run. The guard owns the child.
fn crash_session(marker: &str) -> Cleanup {
    let server = format!(
        "sh -c 'sleep {marker} & setsid sleep {marker} & sleep {marker}; wait' {marker}; sleep {marker}"
    );
    let child = coaplab()
        .args(["emulate", "--preset", "zigbee", "--ready-timeout", "100ms"])
        .args(["--server", &server, "--", "sh", "-c"])
        .arg(format!("sleep {marker} & sleep {marker}; wait"))
        .arg(marker)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let pid = child.id();
    let guard = Cleanup {
        child: Some(child),
        children: Vec::new(),
        marker: marker.to_owned(),
        prefixes: vec![format!("cl-{pid}-")],
        devices: Vec::new(),
    };
    wait_until(Duration::from_secs(30), "the session never started", || {
        namespaces(&guard.prefixes[0]).len() == 2 && marked(marker).len() >= MARKED_PROCESSES
    });
    guard
}

/// Kills the session's `coaplab emulate` with SIGKILL and reaps it.
fn kill_session(guard: &mut Cleanup) -> u32 {
    let mut child = guard.child.take().unwrap();
    let pid = child.id();
    kill9(pid);
    child.wait().unwrap();
    pid
}

/// No namespace or TUN device of `coaplab` process `pid` exists.
fn assert_nothing_of(pid: u32) {
    assert_eq!(namespaces(&format!("cl-{pid}-")), Vec::<String>::new());
    let links = text(&["ip", "-o", "link"]);
    assert!(!links.contains(&format!("cl{pid}x")), "TUN left: {links}");
}

/// `coaplab emulate --cleanup`: its stdout (it must succeed).
fn cleanup() -> String {
    let o = run_bounded(
        coaplab().args(["emulate", "--cleanup"]),
        None,
        Duration::from_secs(30),
    );
    assert_ok(&o, "coaplab emulate --cleanup");
    String::from_utf8_lossy(&o.stdout).into_owned()
}

#[test]
fn kill_9_of_emulate_leaves_no_process_namespace_or_device() {
    if emulator_unavailable() {
        return;
    }
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let marker = marker(1);
    let mut guard = crash_session(&marker);
    let pid = kill_session(&mut guard);
    wait_until(REMOVAL_LIMIT, "processes of the session survive", || {
        marked(&marker).is_empty()
    });
    wait_until(REMOVAL_LIMIT, "namespaces of the session are left", || {
        namespaces(&format!("cl-{pid}-")).is_empty()
    });
    assert_nothing_of(pid);
    // The watchdog removed everything: nothing of this session for --cleanup.
    let removed = cleanup();
    assert!(!removed.contains(&format!("cl-{pid}-")), "{removed}");
}

/// The watchdog of the session (the child of `pid` running its script; any thread of `pid`
/// may have started it).
fn watchdog_of(pid: u32) -> u32 {
    let is_watchdog = |p: &u32| {
        std::fs::read(format!("/proc/{p}/cmdline")).is_ok_and(|c| {
            c.split(|&b| b == 0)
                .any(|a| a == b"coaplab-emulator-watchdog")
        })
    };
    let tasks = std::fs::read_dir(format!("/proc/{pid}/task")).unwrap();
    tasks
        .filter_map(|t| {
            let t = t.ok()?.file_name();
            std::fs::read_to_string(format!("/proc/{pid}/task/{}/children", t.to_str()?)).ok()
        })
        .flat_map(|c| {
            c.split_whitespace()
                .filter_map(|p| p.parse::<u32>().ok())
                .collect::<Vec<_>>()
        })
        .find(is_watchdog)
        .unwrap_or_else(|| panic!("no watchdog among the children of {pid}"))
}

#[test]
fn with_its_watchdog_killed_too_cleanup_removes_the_leftovers() {
    if emulator_unavailable() {
        return;
    }
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let marker = marker(2);
    let mut guard = crash_session(&marker);
    let pid = guard.child.as_ref().unwrap().id();
    kill9(watchdog_of(pid));
    kill_session(&mut guard);
    // Nothing removes the namespaces now; the direct children died of PR_SET_PDEATHSIG, the
    // grandchildren still run inside.
    std::thread::sleep(Duration::from_millis(300));
    let left = namespaces(&format!("cl-{pid}-"));
    assert_eq!(left.len(), 2, "{left:?}");
    let survivors = marked(&marker).len();
    assert!(
        (1..MARKED_PROCESSES).contains(&survivors),
        "{survivors} marked processes"
    );
    let removed = cleanup();
    for ns in &left {
        assert!(
            removed.contains(&format!("removed namespace {ns} (owner pid {pid} gone")),
            "{removed}"
        );
    }
    // --cleanup killed them before it exited.
    assert_eq!(marked(&marker), Vec::<u32>::new());
    assert_nothing_of(pid);
}

#[test]
fn cleanup_removes_only_names_of_dead_owners() {
    if emulator_unavailable() {
        return;
    }
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let marker = marker(3);
    // A process id that no longer runs, and this process with its start time.
    let mut gone = Command::new("true").spawn().unwrap();
    gone.wait().unwrap();
    let (dead, me) = (gone.id(), std::process::id());
    let start = own_start_ticks().expect("own start time");
    let reaped = [
        format!("cl-{dead}-{start}-0-c"),
        format!("cl-{dead}-1-s"),
        // The PID is alive but another process: the start time differs.
        format!("cl-{me}-{}-2-c", start + 1),
    ];
    let kept = [format!("cl-{me}-{start}-3-s"), format!("clx-{dead}-0-c")];
    let dead_device = format!("cl{dead}x0c");
    let live_device = format!("cl{me}x9s");
    let mut guard = Cleanup {
        child: None,
        children: Vec::new(),
        marker: marker.clone(),
        prefixes: reaped.iter().chain(&kept).cloned().collect(),
        devices: vec![dead_device.clone(), live_device.clone()],
    };
    for ns in reaped.iter().chain(&kept) {
        assert!(Command::new("ip")
            .args(["netns", "add", ns])
            .status()
            .unwrap()
            .success());
    }
    for dev in [&dead_device, &live_device] {
        let add = ["tuntap", "add", "dev", dev, "mode", "tun"];
        assert!(Command::new("ip").args(add).status().unwrap().success());
    }
    // A process left inside a dead owner's namespace, and one inside the live one's.
    for ns in [&reaped[0], &kept[0]] {
        let c = Command::new("ip")
            .args(["netns", "exec", ns, "sleep", &marker])
            .spawn()
            .unwrap();
        guard.children.push(c);
    }
    wait_until(Duration::from_secs(10), "the sleeps never started", || {
        marked(&marker).len() == 2
    });
    let removed = cleanup();
    for ns in &reaped {
        assert!(removed.contains(&format!("namespace {ns} ")), "{removed}");
    }
    assert!(
        removed.contains(&format!(
            "namespace {} (owner pid {dead} gone; 1 processes",
            reaped[0]
        )),
        "{removed}"
    );
    assert!(
        removed.contains(&format!("device {dead_device} ")),
        "{removed}"
    );
    let list = text(&["ip", "netns", "list"]);
    for ns in &kept {
        assert!(!removed.contains(ns.as_str()), "{removed}");
        assert!(list.contains(ns.as_str()), "{ns} removed: {list}");
    }
    for ns in &reaped {
        assert!(!list.contains(ns.as_str()), "{ns} left: {list}");
    }
    let links = text(&["ip", "-o", "link"]);
    assert!(!links.contains(&dead_device), "{links}");
    assert!(links.contains(&live_device), "{links}");
    // Only the sleep in the live owner's namespace is left.
    assert_eq!(marked(&marker).len(), 1);
}

/// Starts `coaplab run --mode emulated` on a scenario far longer than the test (zigbee, two
/// CoCoA clients of 10,000 exchanges), results in `dir/out`, and waits until its namespaces
/// exist.
fn emulated_run(dir: &std::path::Path, out: &str) -> Cleanup {
    let scenario = dir.join("long.toml");
    std::fs::write(
        &scenario,
        "name = \"long\"\nseed = 3\nreplications = 1\n[network]\npreset = \"zigbee\"\n\
         [[flows]]\ncount = 2\ncc = \"cocoa\"\nworkload = \"continuous\"\nexchanges = 10000\n",
    )
    .unwrap();
    let child = coaplab()
        .arg("run")
        .arg(&scenario)
        .args(["--mode", "emulated", "--out"])
        .arg(dir.join(out))
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let prefix = format!("cl-{}-", child.id());
    let guard = Cleanup {
        child: Some(child),
        children: Vec::new(),
        marker: "-".to_owned(), // nothing of the run carries a marker
        prefixes: vec![prefix.clone()],
        devices: Vec::new(),
    };
    wait_until(Duration::from_secs(30), "the run never started", || {
        namespaces(&prefix).len() == 2
    });
    guard
}

#[test]
fn an_emulated_run_killed_with_sigkill_is_removed_by_its_watchdog_or_the_next_session() {
    if emulator_unavailable() {
        return;
    }
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let dir = std::env::temp_dir().join(format!("coaplab-crash-run-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    // The watchdog removes the namespaces.
    let mut guard = emulated_run(&dir, "out-1");
    let pid = kill_session(&mut guard);
    wait_until(REMOVAL_LIMIT, "namespaces of the run are left", || {
        namespaces(&format!("cl-{pid}-")).is_empty()
    });
    assert_nothing_of(pid);
    // With the watchdog killed too, the next session removes them as it starts.
    let mut guard = emulated_run(&dir, "out-2");
    let pid = guard.child.as_ref().unwrap().id();
    kill9(watchdog_of(pid));
    kill_session(&mut guard);
    let left = namespaces(&format!("cl-{pid}-"));
    assert_eq!(left.len(), 2, "{left:?}");
    let o = run_bounded(
        coaplab().args(["emulate", "--preset", "zigbee", "--", "true"]),
        None,
        Duration::from_secs(30),
    );
    assert_ok(&o, "the next coaplab emulate");
    let stderr = String::from_utf8_lossy(&o.stderr);
    for ns in &left {
        assert!(
            stderr.contains(&format!("removed the leftover namespace {ns} ")),
            "{stderr}"
        );
    }
    assert_nothing_of(pid);
    drop(guard);
    let _ = std::fs::remove_dir_all(&dir);
}
