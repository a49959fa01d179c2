//! What removes an emulator session when its process is killed with SIGKILL (which runs no
//! destructor): a watchdog process per session, and [`tie_to_parent`] for the children a
//! program starts in the namespaces.
//!
//! The [`Watchdog`] is a small `sh` script started before the namespaces are created. Its
//! standard input is the read end of a pipe whose only write end the emulator holds
//! (close-on-exec, so no other child inherits it). The script blocks reading; the read returns
//! end-of-file as soon as the emulator process is gone, however it ended. It then SIGKILLs
//! every process left in the session's namespaces — any depth of descendants, also those that
//! left the process group or session, since `ip netns pids` finds processes by namespace —
//! repeating until none is left, and deletes the namespaces. After a normal teardown the
//! namespaces are already gone and it exits at once. It runs in a process group of its own and
//! ignores SIGINT, SIGTERM and SIGHUP, so Ctrl-C at a terminal or a hangup, which reach the
//! emulator's process group, do not end it first. Only a SIGKILL of the watchdog itself
//! defeats it; then the next session's [`reap`](super::reap) removes the leftovers.

#![allow(unsafe_code)] // `pre_exec` in `tie_to_parent`.

use std::io;
use std::os::unix::process::CommandExt;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use rustix::fd::OwnedFd;
use rustix::process::{getpid, getppid, set_parent_process_death_signal, Signal};

/// The watchdog's script: `$@` are the namespace names. Passes are bounded (50 × 20 ms) so
/// that a process forking without end cannot hold it forever.
const SCRIPT: &str = r#"trap '' INT TERM HUP QUIT
while read -r _; do :; done
for ns in "$@"; do
  [ -e "/run/netns/$ns" ] || continue
  n=0; pass=0
  while [ "$pass" -lt 50 ]; do
    pids=$(ip netns pids "$ns" 2>/dev/null)
    [ -n "$pids" ] || break
    [ "$pass" -gt 0 ] || n=$(echo $pids | wc -w)
    kill -9 $pids 2>/dev/null
    pass=$((pass + 1))
    sleep 0.02
  done
  ip netns del "$ns" 2>/dev/null &&
    echo "coaplab emulator: its process $COAPLAB_EMULATOR_PID ended without cleanup; removed namespace $ns ($n processes killed)" >&2
done
"#;

/// How long dropping a [`Watchdog`] waits for it to exit.
const EXIT_WAIT: Duration = Duration::from_secs(5);

/// A process that removes namespaces once this process is gone (see the module doc).
#[derive(Debug)]
pub struct Watchdog {
    /// The pipe's write end; closing it (drop, or this process's death) wakes the watchdog.
    wake: Option<OwnedFd>,
    child: Child,
}

impl Watchdog {
    /// Starts a watchdog for namespaces `names` (they need not exist yet).
    pub fn start(names: &[&str]) -> io::Result<Watchdog> {
        let (read, write) = rustix::pipe::pipe_with(rustix::pipe::PipeFlags::CLOEXEC)?;
        let child = Command::new("sh")
            .arg("-c")
            .arg(SCRIPT)
            .arg("coaplab-emulator-watchdog")
            .args(names)
            .env("COAPLAB_EMULATOR_PID", std::process::id().to_string())
            .stdin(Stdio::from(read))
            .stdout(Stdio::null())
            .process_group(0)
            .spawn()?;
        Ok(Watchdog {
            wake: Some(write),
            child,
        })
    }

    /// The watchdog's process id.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }
}

impl Drop for Watchdog {
    fn drop(&mut self) {
        drop(self.wake.take());
        let deadline = Instant::now() + EXIT_WAIT;
        while let Ok(None) = self.child.try_wait() {
            if Instant::now() >= deadline {
                eprintln!(
                    "coaplab emulator: the watchdog {} did not exit",
                    self.child.id()
                );
                return;
            }
            std::thread::sleep(Duration::from_millis(5));
        }
    }
}

/// Makes the child `cmd` will start receive SIGKILL when this process dies
/// (`PR_SET_PDEATHSIG`). The kernel sends it when the *thread* that spawned the child exits,
/// so spawn from a thread that lives as long as the process (the main thread). Only the direct
/// child gets it (`ip netns exec` execs its program, which keeps it); its descendants are the
/// [`Watchdog`]'s.
pub fn tie_to_parent(cmd: &mut Command) -> &mut Command {
    let parent = getpid();
    // SAFETY: the closure runs in the forked child before exec and makes only raw system
    // calls (prctl, getppid), which are async-signal-safe; it allocates nothing (the error
    // is a raw OS error).
    unsafe {
        cmd.pre_exec(move || {
            set_parent_process_death_signal(Some(Signal::KILL))?;
            // The parent may have died between fork and prctl: then nobody would signal.
            if getppid() != Some(parent) {
                return Err(io::Error::from_raw_os_error(libc::ESRCH));
            }
            Ok(())
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_watchdog_exits_when_its_pipe_closes_and_leaves_absent_namespaces_alone() {
        if crate::emulator::unavailable().is_some() {
            eprintln!("SKIPPED: needs root and iproute2");
            return;
        }
        let dog = Watchdog::start(&["cl-1-1-1-c-no-such-namespace"]).unwrap();
        let started = Instant::now();
        drop(dog);
        assert!(started.elapsed() < EXIT_WAIT);
    }

    #[test]
    fn a_tied_child_runs_normally() {
        let out = tie_to_parent(Command::new("sh").args(["-c", "echo ok"]))
            .output()
            .unwrap();
        assert_eq!(out.stdout, b"ok\n");
    }
}
