//! `coaplab emulate`: real programs behind the emulated link. A server command runs in the
//! server namespace, the client command in the client namespace, and every packet between them
//! crosses netsim's link model in real time (`coaplab_emu::emulator`).

use std::path::PathBuf;
use std::process::{Child, Command, ExitCode, ExitStatus, Stdio};
use std::time::{Duration, Instant};

use coaplab_emu::emulator::watchdog::tie_to_parent;
use coaplab_emu::emulator::{self, reap, Emulator, EmulatorConfig, CLIENT_ADDR, SERVER_ADDR};
use tokio::signal::unix::{signal, Signal, SignalKind};

use super::link_opts::LinkOpts;
use super::net;

/// Exit code when the emulator itself cannot run or fails (not root, no TUN, a device error).
const EXIT_EMULATOR: u8 = 125;

/// Arguments of `coaplab emulate`.
#[derive(clap::Args, Debug)]
#[command(after_long_help = "\
The emulator creates two network namespaces, a client side (198.18.0.1) and a server side
(198.18.0.2), each with one TUN device whose MTU is the link MTU, and forwards every packet
between them through the simulator's link model (byte FIFO -> serializer -> propagation delay ->
loss, plus the rest-of-path delay) against the wall clock. Both namespaces get the kernel TCP
settings of docs/experiments.md §5.3 (SACK, timestamps, F-RTO, TLP, RACK, Fast Open off unless
--tcp-fastopen; initcwnd 4; SYN retries 40/41); any the kernel refuses is reported. Nothing outside the two namespaces is
reachable from them.

The server command runs first, via `sh -c`, inside the server namespace; the client command
starts once a socket listens there (ss -lnut) or --ready-timeout passes. The client gets
COAPLAB_SERVER_ADDR=198.18.0.2 (and COAPLAB_CLIENT_ADDR, COAPLAB_SERVER_NETNS,
COAPLAB_CLIENT_NETNS) in its environment; a literal $COAPLAB_SERVER_ADDR or
${COAPLAB_SERVER_ADDR} in its arguments is replaced too, so single-quoted URIs work. When the
client exits, every process left in either namespace gets SIGTERM (SIGKILL 2 s later), the
link statistics are printed, and the namespaces and devices are removed. The same happens on
SIGINT, SIGTERM, SIGHUP or an error. Without a client command an interactive shell ($SHELL or
/bin/sh) opens in the client namespace; leave it to end the session.

If coaplab itself is killed with SIGKILL (kill -9, the OOM killer), the server and client
commands get SIGKILL from the kernel (PR_SET_PDEATHSIG), and a watchdog process kills every
process left in the two namespaces (their children too) and deletes the namespaces. Should
the watchdog be killed as well, the next `coaplab emulate` or `coaplab run --mode emulated`
removes the namespaces (cl-<pid>-…) and devices (cl<pid>x…) of processes that no longer run,
and `coaplab emulate --cleanup` does so on demand.

Needs root (namespaces and TUN devices) and iproute2.

EXIT CODES:
  the client's exit code (128 + N when it died of signal N)
  125  the emulator could not start or failed (not root, no /dev/net/tun, a device error)
  129, 130, 143  interrupted by SIGHUP, SIGINT, SIGTERM
  2    bad arguments

EXAMPLES:
  coaplab emulate --server 'coaplab server' -- coaplab get 'coap://$COAPLAB_SERVER_ADDR/data/2048'
  coaplab emulate --preset nbiot --buffer-bytes 14100 --loss low --pcap link.pcap \\
      --server 'coap-server-notls -A 198.18.0.2' -- coap-client-notls 'coap://$COAPLAB_SERVER_ADDR/'
  coaplab emulate --preset zigbee          (an interactive shell behind a zigbee link)
  coaplab emulate --cleanup                (remove what crashed sessions left behind)")]
pub(crate) struct Args {
    #[command(flatten)]
    link: LinkOpts,
    /// Seed of the link's random streams (loss, jitter), as in the simulator.
    #[arg(long, value_name = "S", default_value_t = 1)]
    seed: u64,
    /// Write every packet the link delivers to FILE (pcap, raw IPv4, model delivery times).
    #[arg(long, value_name = "FILE")]
    pcap: Option<PathBuf>,
    /// Shell command to run (sh -c) in the server namespace before the client starts.
    #[arg(long, value_name = "CMD")]
    server: Option<String>,
    /// Longest wait for the server command to listen on a socket.
    #[arg(long, value_name = "DUR", default_value = "10s", value_parser = net::parse_duration)]
    ready_timeout: Duration,
    /// TCP congestion control in both namespaces (net.ipv4.tcp_congestion_control).
    #[arg(long = "tcp-cc", value_name = "NAME", default_value = "reno")]
    tcp_cc: String,
    /// Allow TCP Fast Open (net.ipv4.tcp_fastopen=3, client and server) in both namespaces
    /// instead of docs/experiments.md §5.3's 0; for `coaplab http-server --tfo` / `http-get --tfo`.
    #[arg(long = "tcp-fastopen")]
    tcp_fastopen: bool,
    /// Also list the kernel settings that were applied, not only the refused ones.
    #[arg(short, long)]
    verbose: bool,
    /// Remove what crashed sessions left behind (namespaces and devices named after a
    /// coaplab process that no longer runs, and the processes inside), list each on stdout,
    /// and exit.
    #[arg(long, conflicts_with_all = ["server", "pcap", "client"])]
    cleanup: bool,
    /// The client command and its arguments (after `--`); none: an interactive shell.
    #[arg(last = true, value_name = "CLIENT_CMD")]
    client: Vec<String>,
}

/// How the session ended.
enum End {
    /// The client exited.
    Client(ExitStatus),
    /// A signal to us.
    Signal(u8),
    /// The emulator or a child could not run.
    Failed(String),
}

pub(crate) fn run(args: Args) -> ExitCode {
    let network = match args.link.network() {
        Ok(n) => n,
        Err(e) => {
            eprintln!("coaplab emulate: {e}");
            return ExitCode::from(net::EXIT_BAD_ARGS);
        }
    };
    if let Some(why) = emulator::unavailable() {
        eprintln!("coaplab emulate: {why}");
        return ExitCode::from(EXIT_EMULATOR);
    }
    if args.cleanup {
        return cleanup();
    }
    let rt = match net::runtime(1) {
        Ok(rt) => rt,
        Err(code) => return code,
    };
    let mut config = EmulatorConfig::new(network);
    config.seed = args.seed;
    config.pcap = args.pcap.clone();
    config.tcp_congestion_control = args.tcp_cc.clone();
    config.tcp_fastopen = args.tcp_fastopen;
    ExitCode::from(rt.block_on(session(&args, config)))
}

/// `--cleanup`: removes the leftovers of dead sessions and lists them.
fn cleanup() -> ExitCode {
    match reap::reap() {
        Ok(removed) => {
            for r in &removed {
                println!("removed {r}");
            }
            eprintln!(
                "coaplab emulate: {} leftovers of dead sessions removed",
                removed.len()
            );
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("coaplab emulate: cannot look for leftovers: {e}");
            ExitCode::from(EXIT_EMULATOR)
        }
    }
}

/// The signals that end a session.
struct Signals {
    int: Signal,
    term: Signal,
    hup: Signal,
}

impl Signals {
    fn install() -> std::io::Result<Signals> {
        Ok(Signals {
            int: signal(SignalKind::interrupt())?,
            term: signal(SignalKind::terminate())?,
            hup: signal(SignalKind::hangup())?,
        })
    }

    /// Sleeps `d` unless a signal arrives first (SIGINT only counts when `int_ends`).
    async fn sleep(&mut self, d: Duration, int_ends: bool) -> Option<u8> {
        tokio::select! {
            _ = self.int.recv(), if int_ends => Some(2),
            _ = self.term.recv() => Some(15),
            _ = self.hup.recv() => Some(1),
            _ = tokio::time::sleep(d) => None,
        }
    }
}

async fn session(args: &Args, config: EmulatorConfig) -> u8 {
    // Handlers first: a signal during setup still leads to a clean teardown.
    let mut signals = match Signals::install() {
        Ok(s) => s,
        Err(e) => {
            eprintln!("coaplab emulate: cannot install signal handlers: {e}");
            return EXIT_EMULATOR;
        }
    };
    let emu = match Emulator::start(config.clone()) {
        Ok(e) => e,
        Err(e) => {
            eprintln!("coaplab emulate: cannot start the emulator: {e}");
            return EXIT_EMULATOR;
        }
    };
    describe(&emu, &config, args.verbose);
    let mut server = None;
    let mut client = None;
    let end = run_children(args, &emu, &mut signals, &mut server, &mut client).await;
    let stats = emu.finish();
    for child in [&mut server, &mut client].into_iter().flatten() {
        let _ = child.kill();
        let _ = child.wait();
    }
    match &stats {
        Ok(s) => eprintln!("coaplab emulate: {s}"),
        Err(e) => eprintln!("coaplab emulate: the link failed: {e}"),
    }
    match end {
        End::Client(status) if stats.is_ok() => exit_code(status),
        End::Client(_) => EXIT_EMULATOR,
        End::Signal(n) => {
            eprintln!("coaplab emulate: interrupted (signal {n}); everything removed");
            128 + n
        }
        End::Failed(why) => {
            eprintln!("coaplab emulate: {why}");
            EXIT_EMULATOR
        }
    }
}

fn describe(emu: &Emulator, config: &EmulatorConfig, verbose: bool) {
    for r in emu.reaped() {
        eprintln!("coaplab emulate: removed the leftover {r}");
    }
    let n = &config.network;
    for (side, link) in [("up", &n.up), ("down", &n.down)] {
        if let Some(trace) = &link.trace {
            eprintln!(
                "coaplab emulate: {side} follows a link trace of {} segments ({:?}) from the \
                 emulator's start: its rate and delay replace the {side} values below",
                trace.segments().len(),
                trace.end()
            );
        }
    }
    eprintln!(
        "coaplab emulate: client namespace {} ({CLIENT_ADDR}), server namespace {} \
         ({SERVER_ADDR}), MTU {} B; up {} bit/s {} ms, down {} bit/s {} ms, buffers {}/{} B, \
         rest-of-path {}/{} ms, seed {}",
        emu.client_netns().name(),
        emu.server_netns().name(),
        n.mtu_bytes,
        n.up.rate_bps,
        n.up.propagation.delay.as_secs_f64() * 1e3,
        n.down.rate_bps,
        n.down.propagation.delay.as_secs_f64() * 1e3,
        n.up.buffer_bytes,
        n.down.buffer_bytes,
        n.rest_up.delay.as_secs_f64() * 1e3,
        n.rest_down.delay.as_secs_f64() * 1e3,
        config.seed,
    );
    for s in emu.kernel_settings() {
        let actual = s
            .actual
            .as_deref()
            .unwrap_or("(no such key in this kernel)");
        if !s.applied() {
            eprintln!(
                "coaplab emulate: kernel setting refused: {} = {} (kernel has {actual})",
                s.key, s.wanted
            );
        } else if verbose {
            eprintln!("coaplab emulate: kernel setting {} = {actual}", s.key);
        }
    }
}

/// Replaces a literal `$COAPLAB_SERVER_ADDR` / `${COAPLAB_SERVER_ADDR}` in `arg`.
fn expand(arg: &str) -> String {
    let addr = SERVER_ADDR.to_string();
    arg.replace("${COAPLAB_SERVER_ADDR}", &addr)
        .replace("$COAPLAB_SERVER_ADDR", &addr)
}

/// Sets the session's environment on `cmd` and ties it to this process: it gets SIGKILL if
/// coaplab dies (the children are spawned from the main thread, on which the current-thread
/// runtime runs the session, so the tie lasts as long as the process).
fn with_env(cmd: &mut Command, emu: &Emulator) {
    tie_to_parent(cmd);
    cmd.env("COAPLAB_SERVER_ADDR", SERVER_ADDR.to_string())
        .env("COAPLAB_CLIENT_ADDR", CLIENT_ADDR.to_string())
        .env("COAPLAB_SERVER_NETNS", emu.server_netns().name())
        .env("COAPLAB_CLIENT_NETNS", emu.client_netns().name());
}

/// Whether a socket listens in the server namespace.
fn listening(emu: &Emulator) -> bool {
    emu.server_netns()
        .command("ss")
        .args(["-H", "-l", "-n", "-u", "-t"])
        .stdin(Stdio::null())
        .stderr(Stdio::null())
        .output()
        .is_ok_and(|o| o.status.success() && !o.stdout.trim_ascii().is_empty())
}

async fn run_children(
    args: &Args,
    emu: &Emulator,
    signals: &mut Signals,
    server: &mut Option<Child>,
    client: &mut Option<Child>,
) -> End {
    if let Some(cmd) = &args.server {
        let mut c = emu.server_netns().command("sh");
        c.args(["-c", cmd]).stdin(Stdio::null());
        with_env(&mut c, emu);
        let child = match c.spawn() {
            Ok(c) => server.insert(c),
            Err(e) => return End::Failed(format!("cannot run the server command: {e}")),
        };
        let deadline = Instant::now() + args.ready_timeout;
        loop {
            if let Ok(Some(status)) = child.try_wait() {
                return End::Failed(format!(
                    "the server command ended before listening ({status})"
                ));
            }
            if listening(emu) {
                break;
            }
            if Instant::now() >= deadline {
                eprintln!(
                    "coaplab emulate: nothing listens in the server namespace after {:?}; \
                     starting the client anyway",
                    args.ready_timeout
                );
                break;
            }
            if let Some(n) = signals.sleep(Duration::from_millis(25), true).await {
                return End::Signal(n);
            }
        }
    }
    let interactive = args.client.is_empty();
    let (program, rest) = match args.client.split_first() {
        Some((p, rest)) => (expand(p), rest.iter().map(|a| expand(a)).collect()),
        None => (
            std::env::var("SHELL")
                .ok()
                .filter(|s| !s.is_empty())
                .unwrap_or_else(|| "/bin/sh".into()),
            Vec::new(),
        ),
    };
    if interactive {
        eprintln!(
            "coaplab emulate: shell in the client namespace; the server is $COAPLAB_SERVER_ADDR \
             ({SERVER_ADDR}); exit the shell to end the session"
        );
    }
    let mut c = emu.client_netns().command(&program);
    c.args(&rest);
    with_env(&mut c, emu);
    let child = match c.spawn() {
        Ok(c) => client.insert(c),
        Err(e) => return End::Failed(format!("cannot run the client command: {e}")),
    };
    let mut server_gone = false;
    loop {
        match child.try_wait() {
            Ok(Some(status)) => return End::Client(status),
            Ok(None) => {}
            Err(e) => return End::Failed(format!("waiting for the client: {e}")),
        }
        if emu.has_failed() {
            return End::Failed("the emulator stopped forwarding".into());
        }
        if let (false, Some(s)) = (server_gone, server.as_mut()) {
            if let Ok(Some(status)) = s.try_wait() {
                eprintln!("coaplab emulate: the server command ended ({status})");
                server_gone = true;
            }
        }
        // In the interactive shell Ctrl-C belongs to the shell.
        if let Some(n) = signals.sleep(Duration::from_millis(10), !interactive).await {
            return End::Signal(n);
        }
    }
}

fn exit_code(status: ExitStatus) -> u8 {
    use std::os::unix::process::ExitStatusExt;
    match (status.code(), status.signal()) {
        (Some(c), _) => c.clamp(0, 255) as u8,
        (None, Some(sig)) => 128u8.saturating_add(sig.clamp(0, 127) as u8),
        _ => EXIT_EMULATOR,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn server_address_is_expanded_in_arguments() {
        assert_eq!(
            expand("coap://$COAPLAB_SERVER_ADDR/x?${COAPLAB_SERVER_ADDR}"),
            "coap://198.18.0.2/x?198.18.0.2"
        );
    }
}
