//! Leftovers of emulator sessions whose process died without cleaning up (`kill -9`, a crash,
//! the OOM killer) and whose [`watchdog`](super::watchdog) died too: finding them by name and
//! removing them.
//!
//! Every namespace the emulator creates is named [`NamespaceName`]
//! `cl-<pid>-<start>-<session>-<c|s>`, where `<start>` is the owner's start time
//! (`/proc/<pid>/stat` field 22, clock ticks since boot), and every TUN device [`DeviceName`]
//! `cl<pid>x<n><c|s>` (15 bytes at most: no room for the start time). A name's owner is dead
//! ([`owner_is_dead`]) when `/proc/<pid>` is missing, when the process is a zombie, or — the
//! PID reused by another program — when its start time differs from the one in the name. A
//! process whose state cannot be read counts as alive: a leftover is kept rather than a live
//! session broken. Names of the older form `cl-<pid>-<session>-<c|s>` (no start time) are
//! judged on the PID alone; if that PID was reused, the leftover stays until the reusing
//! process ends.
//!
//! [`reap`] removes what belongs to dead owners: it SIGKILLs every process still inside such a
//! namespace (`ip netns pids`), then runs `ip netns del`, and deletes such devices left in
//! this namespace (`ip link del`; a TUN device normally vanishes with its owner's file
//! descriptor). A name not of these forms is never touched. [`Emulator::start`] calls it
//! first, `coaplab emulate --cleanup` on demand.
//!
//! [`Emulator::start`]: super::Emulator::start

use std::fmt;
use std::io;
use std::process::Command;

use super::netns;

/// The first characters of every namespace and device name the emulator creates.
pub const NAME_PREFIX: &str = "cl";

/// Which end of the emulated link a namespace or device is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Side {
    /// The client namespace (`c`).
    Client,
    /// The server namespace (`s`).
    Server,
}

impl Side {
    /// The letter that ends names of this side.
    pub fn letter(self) -> char {
        match self {
            Side::Client => 'c',
            Side::Server => 's',
        }
    }

    fn from_letter(s: &str) -> Option<Side> {
        match s {
            "c" => Some(Side::Client),
            "s" => Some(Side::Server),
            _ => None,
        }
    }
}

/// A namespace name of the emulator's form, parsed (see the module doc).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NamespaceName {
    /// The owning process.
    pub pid: u32,
    /// The owner's start time in clock ticks since boot (`None`: a name of the older form).
    pub start_ticks: Option<u64>,
    /// The session number within the owner.
    pub session: u32,
    /// Which end.
    pub side: Side,
}

/// A decimal number without sign or leading `+`, as the names hold them.
fn number<T: std::str::FromStr>(s: &str) -> Option<T> {
    (!s.is_empty() && s.bytes().all(|c| c.is_ascii_digit()))
        .then(|| s.parse().ok())
        .flatten()
}

impl NamespaceName {
    /// Parses `cl-<pid>-<start>-<session>-<c|s>` or `cl-<pid>-<session>-<c|s>`; `None` for
    /// any other name (PID 0 included).
    pub fn parse(name: &str) -> Option<NamespaceName> {
        let fields: Vec<&str> = name.split('-').collect();
        let (pid, start, session, side) = match fields[..] {
            [NAME_PREFIX, pid, start, session, side] => (pid, Some(start), session, side),
            [NAME_PREFIX, pid, session, side] => (pid, None, session, side),
            _ => return None,
        };
        let start_ticks = match start {
            Some(s) => Some(number(s)?),
            None => None,
        };
        Some(NamespaceName {
            pid: number(pid).filter(|&p| p > 0)?,
            start_ticks,
            session: number(session)?,
            side: Side::from_letter(side)?,
        })
    }

    /// The TUN device of this namespace's end (`cl<pid>x<session % 100><c|s>`: interface
    /// names hold at most 15 bytes, "cl" + a PID of up to 7 digits + 2 + 1).
    pub fn device(&self) -> DeviceName {
        DeviceName {
            pid: self.pid,
            session: self.session % 100,
            side: self.side,
        }
    }
}

impl fmt::Display for NamespaceName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{NAME_PREFIX}-{}-", self.pid)?;
        if let Some(t) = self.start_ticks {
            write!(f, "{t}-")?;
        }
        write!(f, "{}-{}", self.session, self.side.letter())
    }
}

/// A TUN device name of the emulator's form `cl<pid>x<n><c|s>`, parsed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DeviceName {
    /// The owning process.
    pub pid: u32,
    /// The session number within the owner, modulo 100.
    pub session: u32,
    /// Which end.
    pub side: Side,
}

impl DeviceName {
    /// Parses `cl<pid>x<n><c|s>`; `None` for any other name (PID 0 included).
    pub fn parse(name: &str) -> Option<DeviceName> {
        let rest = name.strip_prefix(NAME_PREFIX)?;
        let (pid, rest) = rest.split_once('x')?;
        let (session, side) = rest.split_at_checked(rest.len().checked_sub(1)?)?;
        Some(DeviceName {
            pid: number(pid).filter(|&p| p > 0)?,
            session: number(session)?,
            side: Side::from_letter(side)?,
        })
    }
}

impl fmt::Display for DeviceName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (pid, n, side) = (self.pid, self.session, self.side.letter());
        write!(f, "{NAME_PREFIX}{pid}x{n}{side}")
    }
}

/// What `/proc/<pid>/stat` says of a process.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ProcessState {
    /// No such process.
    Absent,
    /// Exited, not yet reaped by its parent (state `Z` or `X`).
    Zombie,
    /// Running (or sleeping, stopped…); its start time if it could be read.
    Live {
        /// Clock ticks since boot (field 22).
        start_ticks: Option<u64>,
    },
}

/// Parses the text of `/proc/<pid>/stat`. The command name (field 2, in parentheses) may hold
/// spaces and parentheses, so the fields are counted from the last `)`.
pub fn parse_stat(stat: &str) -> ProcessState {
    let Some((_, after)) = stat.rsplit_once(')') else {
        return ProcessState::Live { start_ticks: None };
    };
    let fields: Vec<&str> = after.split_whitespace().collect();
    match fields.first() {
        Some(&"Z") | Some(&"X") => ProcessState::Zombie,
        // Field 3 (the state) is fields[0], so field 22 is fields[19].
        _ => ProcessState::Live {
            start_ticks: fields.get(19).and_then(|s| number(s)),
        },
    }
}

/// The state of process `pid` (from `/proc`; an unreadable entry counts as live).
pub fn process_state(pid: u32) -> ProcessState {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(stat) => parse_stat(&stat),
        Err(e) if e.kind() == io::ErrorKind::NotFound => ProcessState::Absent,
        Err(_) => ProcessState::Live { start_ticks: None },
    }
}

/// This process's start time in clock ticks since boot, for the names it gives.
pub fn own_start_ticks() -> Option<u64> {
    match process_state(std::process::id()) {
        ProcessState::Live { start_ticks } => start_ticks,
        _ => None,
    }
}

/// Whether the owner of a name with start time `start_in_name` (if the name holds one) is
/// dead, given its process's `state`: absent, a zombie, or another process (start times
/// differ). Unknown start times count as the owner.
pub fn owner_is_dead(state: ProcessState, start_in_name: Option<u64>) -> bool {
    match state {
        ProcessState::Absent | ProcessState::Zombie => true,
        ProcessState::Live { start_ticks } => match (start_ticks, start_in_name) {
            (Some(now), Some(named)) => now != named,
            _ => false,
        },
    }
}

/// What [`reap`] removed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Removed {
    /// A namespace, and how many processes inside it were killed first.
    Namespace {
        /// Its name.
        name: String,
        /// Its dead owner.
        pid: u32,
        /// Processes that were still inside and got SIGKILL.
        killed: usize,
    },
    /// A TUN device in the caller's namespace.
    Device {
        /// Its name.
        name: String,
        /// Its dead owner.
        pid: u32,
    },
}

impl fmt::Display for Removed {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Removed::Namespace { name, pid, killed } => write!(
                f,
                "namespace {name} (owner pid {pid} gone; {killed} processes inside killed)"
            ),
            Removed::Device { name, pid } => write!(f, "device {name} (owner pid {pid} gone)"),
        }
    }
}

/// The first word of each line of `text` (`ip netns list` and the like).
fn first_words(text: &str) -> impl Iterator<Item = &str> {
    text.lines().filter_map(|l| l.split_whitespace().next())
}

/// The interface names in `ip -o link` output (`N: NAME[@PEER]: <FLAGS> …`).
fn link_names(text: &str) -> impl Iterator<Item = &str> {
    text.lines().filter_map(|l| {
        let name = l.split(": ").nth(1)?;
        Some(name.split('@').next().unwrap_or(name))
    })
}

/// Removes every namespace and TUN device of the emulator's naming whose owner is dead (see
/// the module doc), killing the processes left inside first; the list of what it removed. A
/// leftover that another process removes at the same time is not listed.
pub fn reap() -> io::Result<Vec<Removed>> {
    let mut removed = Vec::new();
    let list = netns::run(Command::new("ip").args(["netns", "list"]))?;
    for name in first_words(&String::from_utf8_lossy(&list.stdout)) {
        let Some(parsed) = NamespaceName::parse(name) else {
            continue;
        };
        if !owner_is_dead(process_state(parsed.pid), parsed.start_ticks) {
            continue;
        }
        let killed = netns::kill_all(name);
        if netns::delete(name).is_ok() {
            removed.push(Removed::Namespace {
                name: name.to_owned(),
                pid: parsed.pid,
                killed,
            });
        }
    }
    let links = netns::run(Command::new("ip").args(["-o", "link"]))?;
    for name in link_names(&String::from_utf8_lossy(&links.stdout)) {
        let Some(parsed) = DeviceName::parse(name) else {
            continue;
        };
        if !owner_is_dead(process_state(parsed.pid), None) {
            continue;
        }
        if netns::run(Command::new("ip").args(["link", "del", "dev", name])).is_ok() {
            removed.push(Removed::Device {
                name: name.to_owned(),
                pid: parsed.pid,
            });
        }
    }
    Ok(removed)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn namespace_names_round_trip_and_others_are_refused() {
        let n = NamespaceName {
            pid: 4242,
            start_ticks: Some(987_654),
            session: 3,
            side: Side::Server,
        };
        assert_eq!(n.to_string(), "cl-4242-987654-3-s");
        assert_eq!(NamespaceName::parse("cl-4242-987654-3-s"), Some(n));
        // The older form, without the start time.
        assert_eq!(
            NamespaceName::parse("cl-17-0-c"),
            Some(NamespaceName {
                pid: 17,
                start_ticks: None,
                session: 0,
                side: Side::Client
            })
        );
        for other in [
            "",
            "cl",
            "cl-",
            "cl-17-0-x",
            "cl-17-0-cs",
            "cl-0-0-c",
            "cl-+17-0-c",
            "cl-17--0-c",
            "cl-17-1-2-3-c",
            "clx-17-0-c",
            "CL-17-0-c",
            "cl-17-0-c ",
            "netns-17-0-c",
            "cl-99999999999-0-c",
        ] {
            assert_eq!(NamespaceName::parse(other), None, "{other:?}");
        }
    }

    #[test]
    fn device_names_round_trip_and_others_are_refused() {
        let d = DeviceName {
            pid: 1234567,
            session: 42,
            side: Side::Client,
        };
        assert_eq!(d.to_string(), "cl1234567x42c");
        assert_eq!(DeviceName::parse("cl1234567x42c"), Some(d));
        for other in [
            "cl", "clx0c", "cl12x", "cl12xc", "cl12x0", "cl12x0q", "eth0", "cl0x1s",
        ] {
            assert_eq!(DeviceName::parse(other), None, "{other:?}");
        }
    }

    #[test]
    fn a_namespace_s_device_keeps_two_digits_of_the_session_within_15_bytes() {
        let n = NamespaceName::parse("cl-4194304-987654-123-s").unwrap();
        assert_eq!(n.device().to_string(), "cl4194304x23s");
        assert!(n.device().to_string().len() <= 15);
    }

    #[test]
    fn stat_is_read_past_a_command_name_with_spaces_and_parentheses() {
        // Field 22 (start time) is 5555; the command name is "a) b (c".
        let mut stat = String::from("77 (a) b (c) S 1");
        for field in 5..=21 {
            stat.push_str(&format!(" {field}"));
        }
        stat.push_str(" 5555 23 24\n");
        assert_eq!(
            parse_stat(&stat),
            ProcessState::Live {
                start_ticks: Some(5555)
            }
        );
        assert_eq!(parse_stat("77 (x) Z 1 2 3"), ProcessState::Zombie);
        assert_eq!(
            parse_stat("garbage"),
            ProcessState::Live { start_ticks: None }
        );
    }

    #[test]
    fn an_owner_is_dead_when_absent_a_zombie_or_another_process() {
        let live = |t| ProcessState::Live { start_ticks: t };
        assert!(owner_is_dead(ProcessState::Absent, Some(5)));
        assert!(owner_is_dead(ProcessState::Absent, None));
        assert!(owner_is_dead(ProcessState::Zombie, Some(5)));
        // The PID was reused: another start time.
        assert!(owner_is_dead(live(Some(6)), Some(5)));
        // The owner itself, or unknowable: kept.
        assert!(!owner_is_dead(live(Some(5)), Some(5)));
        assert!(!owner_is_dead(live(Some(6)), None));
        assert!(!owner_is_dead(live(None), Some(5)));
    }

    #[test]
    fn this_process_is_its_own_live_owner() {
        let me = process_state(std::process::id());
        let start = own_start_ticks();
        assert!(start.is_some(), "{me:?}");
        assert!(!owner_is_dead(me, start));
        assert!(owner_is_dead(me, start.map(|t| t + 1)));
    }

    #[test]
    fn names_are_read_from_ip_output() {
        let list = "cl-1-2-c (id: 4)\nfoo\n\ncl-9-8-7-s\n";
        assert_eq!(
            first_words(list).collect::<Vec<_>>(),
            ["cl-1-2-c", "foo", "cl-9-8-7-s"]
        );
        let links = "1: lo: <LOOPBACK,UP> mtu 65536\n7: veth0@if6: <BROADCAST> mtu 1500\n\
                     9: cl12x0c: <POINTOPOINT> mtu 1280\n";
        assert_eq!(
            link_names(links).collect::<Vec<_>>(),
            ["lo", "veth0", "cl12x0c"]
        );
    }
}
