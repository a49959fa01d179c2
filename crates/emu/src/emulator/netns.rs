//! Network namespaces and their configuration through iproute2 (`ip`): creation, moving a TUN
//! device in, addresses, MTU, routes, and the kernel TCP settings of docs/experiments.md §5.3.
//!
//! A [`Namespace`] removes itself on drop: it first ends every process still inside it
//! (`ip netns pids`, SIGTERM, then SIGKILL after a grace period), then runs `ip netns del`.

use std::io;
use std::net::Ipv4Addr;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use rustix::process::{kill_process, Pid, Signal};

/// How long processes in a namespace get between SIGTERM and SIGKILL at removal.
pub const TERM_GRACE: Duration = Duration::from_secs(2);

/// The kernel settings applied in both namespaces (docs/experiments.md §5.3), as `/proc/sys` keys
/// and values. `net.ipv4.tcp_congestion_control` is added by the caller. IPv6 is switched off so
/// that the TUN devices carry only the IPv4 traffic of the experiment.
pub const KERNEL_SETTINGS: &[(&str, &str)] = &[
    ("net.ipv4.tcp_sack", "0"),
    ("net.ipv4.tcp_dsack", "0"),
    ("net.ipv4.tcp_frto", "0"),
    ("net.ipv4.tcp_timestamps", "0"),
    ("net.ipv4.tcp_early_retrans", "0"),
    ("net.ipv4.tcp_recovery", "0"),
    ("net.ipv4.tcp_fastopen", "0"),
    ("net.ipv4.tcp_no_metrics_save", "1"),
    ("net.ipv4.tcp_syn_retries", "40"),
    ("net.ipv4.tcp_synack_retries", "41"),
    ("net.ipv4.tcp_syn_linear_timeouts", "0"),
    ("net.ipv4.tcp_rto_max_ms", "120000"),
    ("net.ipv4.tcp_rto_min_us", "200000"),
    ("net.ipv4.tcp_slow_start_after_idle", "1"),
    ("net.ipv4.tcp_ecn", "0"),
    ("net.ipv6.conf.all.disable_ipv6", "1"),
    ("net.ipv6.conf.default.disable_ipv6", "1"),
];

/// The result of writing one kernel setting in a namespace.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SettingOutcome {
    /// The dotted `/proc/sys` key, e.g. `net.ipv4.tcp_sack`.
    pub key: String,
    /// The value asked for.
    pub wanted: String,
    /// The value read back afterwards (`None`: the key does not exist in this kernel).
    pub actual: Option<String>,
}

impl SettingOutcome {
    /// Whether the kernel holds the wanted value.
    pub fn applied(&self) -> bool {
        self.actual.as_deref() == Some(self.wanted.as_str())
    }
}

/// Runs `cmd`, failing with its stderr when it exits non-zero.
pub(crate) fn run(cmd: &mut Command) -> io::Result<Output> {
    let out = cmd.stdin(Stdio::null()).output()?;
    if out.status.success() {
        return Ok(out);
    }
    Err(io::Error::other(format!(
        "{:?} failed ({}): {}",
        cmd,
        out.status,
        String::from_utf8_lossy(&out.stderr).trim()
    )))
}

/// `ip ARGS…`.
fn ip(args: &[&str]) -> io::Result<Output> {
    run(Command::new("ip").args(args))
}

/// A network namespace created by this process and removed on drop.
#[derive(Debug)]
pub struct Namespace {
    name: String,
}

impl Namespace {
    /// `ip netns add NAME`, then brings up its loopback. Fails if the name is taken.
    pub fn create(name: &str) -> io::Result<Namespace> {
        ip(&["netns", "add", name])?;
        let ns = Namespace {
            name: name.to_owned(),
        };
        ns.ip(&["link", "set", "lo", "up"])?;
        Ok(ns)
    }

    /// The namespace's name (as `ip netns` knows it).
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The path to open for `setns(2)`: `/run/netns/NAME`.
    pub fn path(&self) -> String {
        format!("/run/netns/{}", self.name)
    }

    /// `ip -n NAME ARGS…`.
    pub fn ip(&self, args: &[&str]) -> io::Result<Output> {
        run(Command::new("ip").args(["-n", &self.name]).args(args))
    }

    /// A command running `program` inside the namespace (`ip netns exec NAME program`).
    pub fn command(&self, program: &str) -> Command {
        let mut c = Command::new("ip");
        c.args(["netns", "exec", &self.name, program]);
        c
    }

    /// Moves interface `dev` from the caller's namespace into this one.
    pub fn adopt(&self, dev: &str) -> io::Result<()> {
        ip(&["link", "set", "dev", dev, "netns", &self.name]).map(drop)
    }

    /// Configures point-to-point interface `dev` (already inside): address `local` with
    /// `peer`, MTU, up, and the route to the peer with an initial congestion window of
    /// `initcwnd` segments (docs/experiments.md §5.3). No default route: nothing but the peer is
    /// reachable.
    pub fn configure_link(
        &self,
        dev: &str,
        local: Ipv4Addr,
        peer: Ipv4Addr,
        mtu: u32,
        initcwnd: u32,
    ) -> io::Result<()> {
        let (local, peer) = (local.to_string(), peer.to_string());
        self.ip(&["addr", "add", &local, "peer", &peer, "dev", dev])?;
        self.ip(&["link", "set", "dev", dev, "mtu", &mtu.to_string(), "up"])?;
        let iw = initcwnd.to_string();
        let route = ["route", "replace", &peer, "dev", dev, "src", &local];
        self.ip(&[&route[..], &["initcwnd", &iw]].concat())
            .map(drop)
    }

    /// Writes each `(key, value)` under `/proc/sys` inside the namespace and reads it back.
    /// A key the kernel lacks or refuses is reported, not an error.
    pub fn apply_settings(&self, settings: &[(&str, &str)]) -> io::Result<Vec<SettingOutcome>> {
        // One shell for all keys; keys and values are our constants (checked below).
        let safe = |s: &str| {
            s.bytes()
                .all(|c| c.is_ascii_alphanumeric() || b"._-".contains(&c))
        };
        let mut script = String::new();
        for (key, value) in settings {
            if !safe(key) || !safe(value) {
                return Err(io::Error::new(
                    io::ErrorKind::InvalidInput,
                    format!("bad kernel setting {key}={value}"),
                ));
            }
            let path = format!("/proc/sys/{}", key.replace('.', "/"));
            script.push_str(&format!(
                "printf %s {value} > {path} 2>/dev/null; \
                 if [ -r {path} ]; then echo \"= $(cat {path})\"; else echo '!'; fi\n"
            ));
        }
        let out = run(self.command("sh").args(["-c", &script]))?;
        let text = String::from_utf8_lossy(&out.stdout);
        let mut lines = text.lines();
        Ok(settings
            .iter()
            .map(|(key, value)| SettingOutcome {
                key: (*key).to_owned(),
                wanted: (*value).to_owned(),
                actual: lines
                    .next()
                    .and_then(|l| l.strip_prefix("= "))
                    .map(|v| v.split_whitespace().collect::<Vec<_>>().join(" ")),
            })
            .collect())
    }

    /// The processes inside the namespace.
    pub fn pids(&self) -> Vec<i32> {
        pids(&self.name)
    }

    /// Ends every process inside: SIGTERM, then SIGKILL for those left after `grace`.
    pub fn end_processes(&self, grace: Duration) {
        if signal_all(&self.name, Signal::TERM) == 0 {
            return;
        }
        let deadline = Instant::now() + grace;
        while Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(20));
            if self.pids().is_empty() {
                return;
            }
        }
        kill_all(&self.name);
    }
}

/// The processes inside namespace `name` (none if it does not exist).
fn pids(name: &str) -> Vec<i32> {
    ip(&["netns", "pids", name])
        .map(|o| {
            String::from_utf8_lossy(&o.stdout)
                .split_whitespace()
                .filter_map(|p| p.parse().ok())
                .collect()
        })
        .unwrap_or_default()
}

/// Sends `sig` to every process inside namespace `name`; how many there were.
fn signal_all(name: &str, sig: Signal) -> usize {
    let pids = pids(name);
    for pid in &pids {
        if let Some(pid) = Pid::from_raw(*pid) {
            let _ = kill_process(pid, sig);
        }
    }
    pids.len()
}

/// SIGKILLs every process inside namespace `name`, again for those forked meanwhile, until
/// none is left or 2 s pass; how many processes were found at first.
pub(crate) fn kill_all(name: &str) -> usize {
    let found = signal_all(name, Signal::KILL);
    let deadline = Instant::now() + Duration::from_secs(2);
    while found > 0 && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
        if signal_all(name, Signal::KILL) == 0 {
            break;
        }
    }
    found
}

/// `ip netns del NAME`.
pub(crate) fn delete(name: &str) -> io::Result<()> {
    ip(&["netns", "del", name]).map(drop)
}

impl Drop for Namespace {
    fn drop(&mut self) {
        self.end_processes(TERM_GRACE);
        if let Err(e) = delete(&self.name) {
            eprintln!(
                "coaplab emulator: cannot remove namespace {}: {e}",
                self.name
            );
        }
    }
}
