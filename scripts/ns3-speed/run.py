#!/usr/bin/env python3
"""Simulator speed against native ns-3 per link packet (issue 17), on the star workloads.

    python3 scripts/ns3-speed/run.py                        # N = 1 10 100 400, TCP and UDP, both anchors
    python3 scripts/ns3-speed/run.py --anchor debian --reps 5 # only Debian's 3.37 (no asserts)
    python3 scripts/ns3-speed/run.py --flows 400 --reps 3 --workloads tcp
    python3 scripts/ns3-speed/run.py --coaplab /tmp/before/coaplab --coaplab target/release/coaplab
    python3 scripts/ns3-speed/run.py --workloads udp --reps 15 --statistic min --instructions
    python3 scripts/ns3-speed/run.py --anchor optimized --ns3-optimized ~/ns-3.44/build --reps 5
    python3 scripts/ns3-speed/run.py --workloads udp --flows 100 400 --anchor wheel --cache-sim

The same workload in both tools, N flows over the nbiot star (30 kbit/s down, 60 kbit/s up,
one byte FIFO of --buffer bytes per direction, 28,200 B by default):
  * tcp: per flow one long transfer (docs/experiments.md §5.1): connect, CSM + GET, one
    102,408-B answer; coaplab `tcp-newreno`, ns-3 TcpLinuxReno + PRR (MSS 256, no SACK, no
    timestamps, IW 4, delayed ACK every 2nd segment) with Linux's RTO re-arm on every partial
    ACK, as scripts/ns3-oracle/oracle.py's `linuxreno-rearm`.
  * udp: per flow 50 closed-loop 60-B CoAP CON exchanges (`continuous`, the fasor18 preset's
    Default CoAP: 2 s x U[1, 1.5], doubling to 60 s, 20 retries); in ns-3 a small application
    doing the same over UDP sockets (scripts/ns3-speed/star.cc): its messages carry the Message
    ID, and an exchange completes only on its own answer.
Both tools stop when the last flow completes.
The per-packet figure is CPU time (user + system) per packet transmitted on the bottleneck
link, both directions (coaplab: runs.csv's down_sent_packets + up_sent_packets; ns-3: the two
devices' PhyTxEnd). Two CPU times are given for each tool, over the same work in both:
  * simulation: from building the topology and endpoints to the results in memory, measured
    inside the process. ns-3: getrusage around topology construction ... Simulator::Destroy
    (star.cc); coaplab: the simulating thread's CPU time around its run function, from
    scenario-run setup to the RunResult (manifest.json, runs[0].cpu_s; binaries before that
    field print "n/a"). Neither counts process start-up, library loading or result files.
  * process: the whole process from wait4 (start-up, dynamic loading, for coaplab also the
    results directory and its fsyncs), which is what a user waits for; at small N it is
    mostly fixed start-up cost.
The two tools' TCP models are not the same code, so they send different numbers of packets
under loss; the per-packet cost is what is compared. Runs are interleaved (coaplab, ns-3,
coaplab, ...), so load on the machine hits both alike; measure on an idle machine for the
record. Each figure is the median over --reps of that figure (--statistic min: the least, the
run least disturbed by the rest of a shared machine; load only ever adds CPU time, and a run of
coaplab lasts 1/20 of ns-3's, so a slow phase of the host hits single coaplab runs whole;
--statistic median min: both tables, from the same runs).
--instructions adds a table that no load changes: instructions per link packet executed in each
tool's event loop, counted by valgrind's callgrind (ns-3's Simulator::Run against coaplab's
loop). Time per packet is instructions over the rate the CPU retires them, and the two tools
retire them at different rates (ns-3's code chases more pointers), so the two tables differ.
--cache-sim adds the other half of that rate, also independent of load, for hosts without
hardware counters (a VM): each tool's data-cache misses per link packet in the same loops,
simulated by callgrind with a 32-KiB 8-way L1D and, as its last level, an L2 of --l2-bytes
(default 1 MiB, 16-way: one core's L2 on AMD Zen 4). A miss of that L2 goes to L3 or memory,
tens of nanoseconds each; coaplab's UDP cells past about 100 flows pay mostly these.

Four ns-3 builds serve as anchors (--anchor wheel|debian|optimized|release|both|all, default
both = wheel and Debian's; with several, every repetition runs coaplab, then each anchor's star
in this order, and each table names its anchor):
  * wheel: the pip wheel `ns3` 3.44.post0 in .peers/ns3-venv (created as ns3-oracle does when
    missing). It ships ns-3's headers and shared libraries (include/ns3, lib64/libns3.44-*.so),
    and star.cc is compiled natively with g++ -O2 -std=c++20 against them. Its libraries are
    ns-3's `default` build profile: NS_ASSERT and NS_LOG compiled in.
  * debian: Debian's libns3-dev (bookworm: 3.37-2; `apt-get install -y libns3-dev`, which this
    script runs as root when /usr/include/ns3 is missing). Its libraries are a CMake `Release`
    build (ns3Targets-release.cmake) with asserts compiled out (no "assert failed. cond=" in
    them) but logging compiled in (NS_LOG messages, __FUNCTION__ prefixes and
    LogComponent::GetLevelLabel calls are in them): NS_LOG_* cost one enabled-check each, no
    output. star.cc is compiled with g++ -O3 -DNDEBUG -std=c++17 (3.37's headers do not parse
    as C++20 with GCC 12), without NS3_ASSERT_ENABLE / NS3_LOG_ENABLE, so its own inlined ns-3
    code has neither. It is the nearest to an `optimized` ns-3 that a registry ships; it is also
    a different ns-3 version (3.37), whose TCP sends other packet counts under loss, so compare
    per link packet.
  * optimized: ns-3.44 built from its source by you with `--build-profile=optimized`, the
    build a researcher choosing between the two tools would make: asserts and logging compiled
    out, -O3 -march=native (`--ns3-optimized DIR`, the build's output directory with include/
    and lib/; only the modules in NS3_LIBS are needed). star.cc is compiled with the same
    flags. This is the fair anchor (issue 35) and the one README and docs/BENCHMARKS.md quote.
  * release: the same source with `--build-profile=release` (-O3, no -march=native;
    `--ns3-release DIR`). valgrind decodes no AVX-512 instruction, so on a CPU that has them
    the optimized build cannot be counted under --instructions; the release build can.
The project commits no ns-3 source, no ns-3 binary and no recipe that builds one: the two
source builds are made by hand by whoever measures, following ns-3's own manual.
The summary at the end gives, per cell, each tool's median sim CPU per link packet with the
least and most of the --reps runs, and each anchor's ratio to each coaplab binary.
"""

import argparse
import csv
import json
import os
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))
VENV = os.path.join(ROOT, ".peers", "ns3-venv")
NS3_VERSION = "3.44.post0"
NS3_LIBS = ["core", "network", "internet", "point-to-point", "applications", "traffic-control"]
DEBIAN_HEADER = "/usr/include/ns3/core-module.h"
ANCHOR_NAMES = {
    "wheel": "ns-3.44 pip wheel (`default` profile: NS_ASSERT and NS_LOG compiled in; star.cc g++ -O2)",
    "debian": "ns-3.{v} Debian libns3-dev (Release build: no asserts, NS_LOG compiled in; star.cc g++ -O3 -DNDEBUG)",
    "optimized": "ns-3.{v} built from source with `--build-profile=optimized` (no asserts, no logging, "
                 "-O3 -march=native; star.cc g++ -O3 -march=native -DNDEBUG) at {d}",
    "release": "ns-3.{v} built from source with `--build-profile=release` (no asserts, no logging, -O3; "
               "star.cc g++ -O3 -DNDEBUG) at {d}",
}


def ns3_prefix():
    """The wheel's ns3/ directory (include/, lib64/), installing the wheel when missing."""
    py = os.path.join(VENV, "bin", "python")
    find = [py, "-c", "import ns3; print(list(ns3.__path__)[0])"]
    have = os.path.exists(py) and subprocess.run(find, capture_output=True).returncode == 0
    if not have:
        print(f"installing ns3=={NS3_VERSION} into {VENV} (a few minutes) ...", file=sys.stderr)
        if not os.path.exists(py):
            subprocess.check_call([sys.executable, "-m", "venv", VENV])
        subprocess.check_call([py, "-m", "pip", "install", "-q", f"ns3=={NS3_VERSION}"])
    out = subprocess.run(
        [py, "-c", "import ns3; print(list(ns3.__path__)[0])"], capture_output=True, text=True, check=True
    )
    prefix = out.stdout.strip()
    if not os.path.exists(os.path.join(prefix, "include", "ns3", "core-module.h")):
        sys.exit(f"ns3-speed: the ns3 wheel at {prefix} has no include/ns3/core-module.h to compile against")
    return prefix


def compiled(name, target, flags):
    """target/ns3-speed/NAME compiled from star.cc with `flags` (again only when the source is newer)."""
    out_dir = os.path.join(target, "ns3-speed")
    os.makedirs(out_dir, exist_ok=True)
    exe = os.path.join(out_dir, name)
    src = os.path.join(HERE, "star.cc")
    if os.path.exists(exe) and os.path.getmtime(exe) >= os.path.getmtime(src):
        return exe
    cmd = ["g++", *flags[0], src, "-o", exe, *flags[1]]
    print("compiling " + " ".join(cmd), file=sys.stderr)
    subprocess.check_call(cmd)
    return exe


def build_star(prefix, target):
    """star.cc compiled against the wheel."""
    lib = os.path.join(prefix, "lib64")
    return compiled("star", target, (["-O2", "-std=c++20", "-I", os.path.join(prefix, "include")],
                                     ["-L", lib, f"-Wl,-rpath,{lib}"] + [f"-lns3.44-{m}" for m in NS3_LIBS]))


def debian_version():
    """The installed libns3-dev's upstream version ("3.37"), or None."""
    out = subprocess.run(["dpkg-query", "-W", "-f=${Version}", "libns3-dev"], capture_output=True, text=True)
    if out.returncode != 0 or not out.stdout.strip() or not os.path.exists(DEBIAN_HEADER):
        return None
    return out.stdout.strip().split("-")[0].split("+")[0]


def debian_ns3():
    """Debian's ns-3 (libns3-dev), installed with apt-get when missing; returns its version."""
    version = debian_version() if shutil.which("dpkg-query") else None
    if version is None:
        if os.geteuid() != 0 or shutil.which("apt-get") is None:
            sys.exit("ns3-speed: the debian anchor needs Debian's libns3-dev: apt-get install -y libns3-dev "
                     "(or --anchor wheel)")
        print("installing libns3-dev with apt-get ...", file=sys.stderr)
        env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
        subprocess.check_call(["apt-get", "update", "-q"], env=env)
        subprocess.check_call(["apt-get", "install", "-y", "-q", "libns3-dev"], env=env)
        version = debian_version()
        if version is None:
            sys.exit("ns3-speed: libns3-dev installed, but /usr/include/ns3/core-module.h is missing")
    return version


def build_star_debian(target):
    """star.cc compiled against Debian's ns-3, optimized. Neither NS3_ASSERT_ENABLE nor
    NS3_LOG_ENABLE is defined, so star.cc's inlined ns-3 code has no asserts and no logging
    (NS3_BUILD_PROFILE_* only switch the NS_BUILD_* macros, which star.cc does not use)."""
    return compiled("star-debian", target, (["-O3", "-DNDEBUG", "-std=c++17"], [f"-lns3-{m}" for m in NS3_LIBS]))


def optimized_ns3(build, profile="optimized"):
    """The ns-3 version and library names of an optimized or release build's output directory
    (the `--out` of ns-3's configure, or its default build/): include/ns3/ and
    lib/libns3.VER-MODULE*.so."""
    if build is None:
        sys.exit(f"ns3-speed: the {profile} anchor needs --ns3-{profile} DIR, the output directory of an "
                 f"ns-3 3.44 build configured with `./ns3 configure --build-profile={profile}` (see "
                 "docs/BENCHMARKS.md, 'Issue 35, part 4')")
    header = os.path.join(build, "include", "ns3", "core-module.h")
    lib = os.path.join(build, "lib")
    if not os.path.exists(header) or not os.path.isdir(lib):
        sys.exit(f"ns3-speed: --ns3-optimized {build}: no include/ns3/core-module.h and lib/ there "
                 "(give the directory ns-3's build wrote, which holds both)")
    names = {}
    for f in sorted(os.listdir(lib)):
        for m in NS3_LIBS:
            # libns3.44-core-optimized.so (the profile's suffix) or libns3.44-core.so
            for suffix in ("-optimized.so", "-release.so", ".so"):
                if f.startswith("libns3.") and f.endswith(f"-{m}{suffix}"):
                    names.setdefault(m, f[3:-3])
    missing = [m for m in NS3_LIBS if m not in names]
    if missing:
        sys.exit(f"ns3-speed: --ns3-optimized {build}: lib/ lacks the modules {', '.join(missing)} "
                 f"(configure ns-3 with --enable-modules including {';'.join(NS3_LIBS)})")
    config = os.path.join(build, "include", "ns3", "core-config.h")
    flags = open(config).read() if os.path.exists(config) else ""
    if "#define NS3_ASSERT_ENABLE" in flags or "#define NS3_LOG_ENABLE" in flags:
        sys.exit(f"ns3-speed: --ns3-optimized {build} has asserts or logging enabled (core-config.h): "
                 "that is not the optimized profile")
    version = names["core"].split("-", 1)[0][len("ns3."):]
    return version, lib, [f"-l{names[m]}" for m in NS3_LIBS]


def build_star_optimized(build, target, profile="optimized"):
    """star.cc compiled against an optimized (or release) ns-3 build with the flags that profile
    uses for ns-3 itself (-O3, and -march=native for `optimized`), so the inlined ns-3 code is
    optimized alike. valgrind cannot count a -march=native build on a CPU with AVX-512 (it
    decodes no EVEX instruction): the release profile is the one --instructions can count."""
    _, lib, libs = optimized_ns3(build, profile)
    native = ["-march=native"] if profile == "optimized" else []
    return compiled(f"star-{profile}", target,
                    (["-O3", *native, "-DNDEBUG", "-std=c++20", "-I", os.path.join(build, "include")],
                     ["-L", lib, f"-Wl,-rpath,{lib}"] + libs))


def anchors(which, target, optimized_build=None, release_build=None):
    """[(key, name, star executable)] of the anchors `which` (a list) selects, in a fixed order."""
    which = set(which)
    if "both" in which:
        which |= {"wheel", "debian"}
    if "all" in which:
        which |= {"wheel", "debian", "optimized", "release"}
    out = []
    if "wheel" in which:
        out.append(("wheel", ANCHOR_NAMES["wheel"], build_star(ns3_prefix(), target)))
    if "debian" in which:
        version = debian_ns3()
        out.append(("debian", ANCHOR_NAMES["debian"].format(v=version.split(".", 1)[-1]), build_star_debian(target)))
    for profile, build in (("optimized", optimized_build), ("release", release_build)):
        if profile in which:
            version, _, _ = optimized_ns3(build, profile)
            name = ANCHOR_NAMES[profile].format(v=version.split(".", 1)[-1], d=build)
            out.append((profile, name, build_star_optimized(build, target, profile)))
    return out


def coaplab_binary(target):
    subprocess.check_call(["cargo", "build", "--release", "-q", "--locked", "-p", "coaplab"], cwd=ROOT,
                          env=dict(os.environ, CARGO_TARGET_DIR=target))
    return os.path.join(target, "release", "coaplab")


def measured(cmd):
    """Runs cmd; returns (stdout, user + system CPU seconds, peak RSS in KiB) of that child."""
    with tempfile.TemporaryFile("w+") as out, tempfile.TemporaryFile("w+") as err:
        p = subprocess.Popen(cmd, stdout=out, stderr=err, text=True)
        _, status, ru = os.wait4(p.pid, 0)
        p.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        if p.returncode != 0:
            sys.exit(f"{cmd[0]} failed ({p.returncode}): {err.read().strip()[-400:]}")
        return out.read(), ru.ru_utime + ru.ru_stime, ru.ru_maxrss


def scenario(workload, n, buffer, object_bytes=102400):
    flows = (
        f'cc = "tcp-newreno"\nworkload = "long-transfer"\nobject_bytes = {object_bytes}\nstart_jitter_s = 0\n'
        if workload == "tcp"
        else 'cc = "default"\nworkload = "continuous"\nexchanges = 50\n'
    )
    return (
        f'name = "ns3-speed-{workload}-{n}"\nseed = 1\nreplications = 1\nmax_sim_time_s = 1000000\n\n'
        f'[network]\npreset = "nbiot"\nbuffer_bytes = {buffer}\nloss = "none"\n\n'
        f'[protocol]\ncc_preset = "fasor18"\nnstart = 1\n\n[[flows]]\ncount = {n}\n{flows}'
    )


def run_coaplab(binary, workload, n, buffer, tmp, object_bytes=102400, prefix=()):
    """(link packets, simulation CPU s or None, process CPU s, peak RSS KiB, flows completed)
    of one coaplab run (`prefix`: a command that runs it, e.g. callgrind's)."""
    scen = os.path.join(tmp, f"{workload}-{n}.toml")
    with open(scen, "w") as fh:
        fh.write(scenario(workload, n, buffer, object_bytes))
    out = os.path.join(tmp, "out")
    shutil.rmtree(out, ignore_errors=True)
    _, cpu, rss = measured([*prefix, binary, "run", scen, "--out", out, "-q", "--jobs", "1"])
    with open(os.path.join(out, "runs.csv")) as fh:
        head, row = fh.read().strip().splitlines()[:2]
    rec = dict(zip(head.split(","), row.split(",")))
    packets = int(rec["down_sent_packets"]) + int(rec["up_sent_packets"])
    with open(os.path.join(out, "manifest.json")) as fh:
        sim_cpu = json.load(fh)["runs"][0].get("cpu_s")
    with open(os.path.join(out, "flows.csv")) as fh:
        rows = list(csv.DictReader(fh))
    completed = sum(1 for r in rows if r.get("fct_s"))
    return packets, sim_cpu, cpu, rss, completed


def run_ns3(star, workload, n, buffer, amount=None, prefix=()):
    """(link packets, simulation CPU s, process CPU s, peak RSS KiB, flows completed)
    (`prefix`: a command that runs it, e.g. callgrind's)."""
    if amount is None:
        amount = 102400 if workload == "tcp" else 50
    out, cpu, rss = measured([*prefix, star, workload, str(n), str(amount), str(buffer)])
    rec = dict(kv.split("=") for kv in out.split())
    if int(rec["completed"]) != n:
        print(f"warning: ns-3 {workload} N={n}: {rec['completed']} of {n} flows completed", file=sys.stderr)
    return int(rec["packets"]), float(rec["cpu_s"]), cpu, rss, int(rec["completed"])


def median(values):
    """The median of `values` (the upper one of an even count)."""
    return sorted(values)[len(values) // 2]


def kept(pick):
    """What --statistic keeps of a tool's --reps figures: `pick` of them, or None when a binary
    did not report the figure (before manifest.json had cpu_s)."""
    return lambda values: None if any(v is None for v in values) else pick(values)


# Event loops whose instructions --instructions counts (callgrind --toggle-collect): ns-3's
# Simulator::Run; coaplab's CoAP loop, and for TCP the function that builds and runs the TCP
# model (`simulate_on`: its loop is inlined into it; building is under 3 % of it at 100 flows).
# Older binaries ran it in `simulate_traced`, and some of them call `simulate_on` from there:
# toggling on both names would turn collection off inside, so only the current name is listed
# (an older binary's TCP cells then print n/a).
LOOPS = {
    "ns-3": ["ns3::Simulator::Run()"],
    "udp": ["coaplab_lab::sim::Sim<*>::run"],
    "tcp": ["coaplab_lab::sim::tcp::simulate_on"],
}


def callgrind(loops, out, l2_bytes=None):
    """The command prefix that counts the instructions executed inside `loops` into `out` (and,
    with `l2_bytes`, simulates a 32-KiB 8-way L1D and an `l2_bytes` 16-way last level). A
    coaplab built before c88a4e0 read the vDSO itself and crashes under valgrind."""
    caches = [] if l2_bytes is None else [
        "--cache-sim=yes", "--I1=32768,8,64", "--D1=32768,8,64", f"--LL={l2_bytes},16,64"]
    return ["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}", *caches,
            *(f"--toggle-collect={f}" for f in loops)]


def counted_events(out):
    """Callgrind's totals in `out` (removed) by event name (Ir, and with the cache simulation
    D1mr, D1mw, DLmr, DLmw), None when nothing was counted: a build whose loop function was
    inlined away or renamed."""
    names, totals = [], []
    with open(out) as fh:
        for line in fh:
            if line.startswith("events:"):
                names = line.split()[1:]
            elif line.startswith("totals:"):
                totals = [int(v) for v in line.split()[1:]]
    os.remove(out)
    events = dict(zip(names, totals))
    return events if events.get("Ir") else None


def counted(out):
    """The instructions callgrind counted into `out` (removed), None when none were."""
    events = counted_events(out)
    return None if events is None else events["Ir"]


def instruction_table(binaries, labels, stars, workloads, flows, buffer, tmp):
    """Instructions per link packet in the event loops, once per cell (deterministic: no
    repetitions needed, and load on the machine does not change it); one column per anchor."""
    print()
    print("| workload | N | " + " | ".join(f"ns-3 {k} instructions/packet" for k, _, _ in stars) + " | "
          + " | ".join(f"{l} instructions/packet | " + " | ".join(f"{k} ÷ {l}" for k, _, _ in stars)
                       for l in labels) + " |")
    print("|---|---" + "|---" * len(stars) + ("|---" * (1 + len(stars))) * len(binaries) + "|")
    out = os.path.join(tmp, "callgrind.out")
    for workload in workloads:
        for n in flows:
            theirs = []
            for key, _, star in stars:
                if key == "optimized":
                    # -march=native on an AVX-512 CPU: valgrind decodes no EVEX instruction
                    # and stops the run (SIGILL); the release anchor is the countable one.
                    theirs.append(None)
                    continue
                np_ = run_ns3(star, workload, n, buffer, prefix=callgrind(LOOPS["ns-3"], out))[0]
                count = counted(out)
                if count is None:
                    sys.exit(f"ns3-speed: ns-3 ({key}) counted no instructions under callgrind")
                theirs.append(count / np_)
            line = f"| {workload} | {n} " + "".join("| n/a " if t is None else f"| {t:,.0f} " for t in theirs)
            for b in binaries:
                op = run_coaplab(b, workload, n, buffer, tmp, prefix=callgrind(LOOPS[workload], out))[0]
                ours = counted(out)
                if ours is None:
                    line += "| n/a " + "| n/a " * len(stars)
                else:
                    line += f"| {ours / op:,.0f} " + "".join(
                        "| n/a " if t is None else f"| {t / (ours / op):.1f}x " for t in theirs)
            print(line + "|", flush=True)


def cache_table(binaries, labels, stars, workloads, flows, buffer, l2_bytes, tmp):
    """Simulated data-cache misses per link packet in the event loops (reads and writes), once
    per cell: deterministic like the instruction table. ns-3's optimized anchor cannot run
    under valgrind (see instruction_table); the others can."""
    print()
    print(f"simulated data-cache misses per link packet (L1D 32 KiB 8-way; L2 {l2_bytes:,} B 16-way, "
          "the last level simulated):")
    cols = [f"ns-3 {k}" for k, _, _ in stars] + labels
    print("| workload | N | " + " | ".join(f"{c} L1D misses | {c} L2 misses" for c in cols) + " |")
    print("|---|---" + "|---|---" * len(cols) + "|")
    out = os.path.join(tmp, "callgrind.out")

    def misses(events, packets):
        if events is None:
            return "| n/a | n/a "
        l1 = (events["D1mr"] + events["D1mw"]) / packets
        l2 = (events["DLmr"] + events["DLmw"]) / packets
        return f"| {l1:.1f} | {l2:.2f} "

    for workload in workloads:
        for n in flows:
            line = f"| {workload} | {n} "
            for key, _, star in stars:
                if key == "optimized":
                    line += "| n/a | n/a "
                    continue
                packets = run_ns3(star, workload, n, buffer, prefix=callgrind(LOOPS["ns-3"], out, l2_bytes))[0]
                line += misses(counted_events(out), packets)
            for b in binaries:
                packets = run_coaplab(b, workload, n, buffer, tmp,
                                      prefix=callgrind(LOOPS[workload], out, l2_bytes))[0]
                line += misses(counted_events(out), packets)
            print(line + "|", flush=True)


def per_packet_us(cpu_s, packets):
    return None if cpu_s is None else cpu_s / packets * 1e6


def fmt(value, spec):
    return "n/a" if value is None else format(value, spec)


def ratio(theirs_us, ours_us):
    return "n/a" if ours_us is None else f"{theirs_us / ours_us:.1f}x"


def memory_table(binaries, labels, stars, buffer, tmp):
    """Peak RSS of the TCP long transfer (issue 17 item 2): 400 x 102,400 B and 10 x 10 MB,
    with the bytes held per object byte above a 1-flow, 1-KB run of the same binary."""
    print()
    print("| TCP long transfer | tool | peak RSS MiB | 1 flow x 1 KB MiB | bytes per object byte above that |")
    print("|---|---|---|---|---|")
    for n, obj in [(400, 102400), (10, 10_000_000)]:
        rows = [(f"ns-3 ({key})", run_ns3(star, "tcp", n, buffer, obj)[3], run_ns3(star, "tcp", 1, buffer, 1024)[3])
                for key, _, star in stars]
        for label, b in zip(labels, binaries):
            rows.append((label, run_coaplab(b, "tcp", n, buffer, tmp, obj)[3],
                         run_coaplab(b, "tcp", 1, buffer, tmp, 1024)[3]))
        for tool, rss, base in rows:
            per = (rss - base) * 1024 / (n * obj)
            print(f"| {n} x {obj:,} B | {tool} | {rss / 1024:.1f} | {base / 1024:.1f} | {per:.2f} |", flush=True)


def table_row(workload, n, theirs, ours, keep):
    """One cell's row: ns-3's runs `theirs` against each binary's `ours`, each reduced by `keep`."""
    np_ = theirs[0][0]
    n_sim = keep([r[1] for r in theirs])
    n_sim_us = per_packet_us(n_sim, np_)
    n_proc_us = per_packet_us(keep([r[2] for r in theirs]), np_)
    line = f"| {workload} | {n} | {np_} | {n_sim:.3f} | {n_sim_us:.2f} | {n_proc_us:.2f} "
    for runs in ours:
        op = runs[0][0]
        o_sim_us = per_packet_us(keep([r[1] for r in runs]), op)
        o_proc_us = per_packet_us(keep([r[2] for r in runs]), op)
        line += (f"| {op} | {fmt(o_sim_us, '.2f')} | {ratio(n_sim_us, o_sim_us)} "
                 f"| {o_proc_us:.2f} | {ratio(n_proc_us, o_proc_us)} ")
    return line + "|"


def spread(runs, packets):
    """Median (least–most) sim CPU µs per link packet of `runs`, or n/a."""
    sims = [r[1] for r in runs]
    if any(v is None for v in sims):
        return None, "n/a"
    us = [v / packets * 1e6 for v in sims]
    return median(us), f"{median(us):.2f} ({min(us):.2f}–{max(us):.2f})"


def summary_header(keys, labels):
    cols = "".join(f"| {k} packets | {k} sim µs/packet " for k in keys)
    for l in labels:
        cols += f"| {l} packets | {l} sim µs/packet " + "".join(f"| {k} ÷ {l} " for k in keys)
    return (f"| workload | N {cols}|\n|---|---" + "|---|---" * len(keys)
            + ("|---|---" + "|---" * len(keys)) * len(labels) + "|")


def summary_row(workload, n, theirs, ours):
    """Per anchor and binary the median sim CPU per link packet (least–most), and the ratios of
    the medians."""
    line = f"| {workload} | {n} "
    medians = []
    for runs in theirs:
        m, text = spread(runs, runs[0][0])
        medians.append(m)
        line += f"| {runs[0][0]} | {text} "
    for runs in ours:
        m, text = spread(runs, runs[0][0])
        line += f"| {runs[0][0]} | {text} " + "".join(f"| {ratio(t, m)} " for t in medians)
    return line + "|"


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--flows", type=int, nargs="*", default=[1, 10, 100, 400])
    ap.add_argument("--workloads", nargs="*", default=["tcp", "udp"], choices=["tcp", "udp"])
    ap.add_argument("--buffer", type=int, default=28200, help="bytes per direction (default 28,200)")
    ap.add_argument("--reps", type=int, default=1, help="interleaved repetitions per cell (see --statistic)")
    ap.add_argument("--statistic", choices=["median", "min"], nargs="+", default=["median"],
                    help="what is kept of each tool's --reps CPU times (default median; min: the least, "
                         "each tool's least disturbed run on a shared machine, where load only adds time); "
                         "both (`--statistic median min`): a table for each, from the same runs")
    ap.add_argument("--instructions", action="store_true",
                    help="also instructions per link packet in each tool's event loop, counted under "
                         "valgrind's callgrind (needs valgrind; one run per cell, independent of load)")
    ap.add_argument("--cache-sim", action="store_true",
                    help="also simulated data-cache misses per link packet in each tool's event loop "
                         "(callgrind's cache simulation: L1D 32 KiB, L2 --l2-bytes; needs valgrind; one "
                         "run per cell, independent of load)")
    ap.add_argument("--l2-bytes", type=int, default=1 << 20,
                    help="the simulated last-level cache of --cache-sim (default 1,048,576: one core's "
                         "L2 on AMD Zen 4; lscpu's L2 divided by its instances)")
    ap.add_argument("--memory", action="store_true",
                    help="also the TCP peak-RSS table (400 x 102,400 B and 10 x 10 MB; ns-3's takes minutes)")
    ap.add_argument("--coaplab", action="append",
                    help="coaplab binary (repeat to compare builds; default: build target/release)")
    ap.add_argument("--anchor", nargs="+", choices=["wheel", "debian", "optimized", "release", "both", "all"],
                    default=["both"],
                    help="which ns-3 builds to compare against, interleaved in each repetition: the pip "
                         "wheel 3.44 (`default` profile), Debian's libns3-dev (3.37 on bookworm, a release "
                         "build; installed with apt-get when missing), an ns-3 3.44 you built with the "
                         "`optimized` profile (--ns3-optimized) or the `release` profile (--ns3-release: "
                         "the same without -march=native, which valgrind can count); `both` = wheel debian "
                         "(default), `all` = all four")
    ap.add_argument("--ns3-optimized", metavar="DIR",
                    help="output directory of your ns-3 3.44 build with `--build-profile=optimized` "
                         "(holds include/ns3 and lib/); needed by --anchor optimized/all")
    ap.add_argument("--ns3-release", metavar="DIR",
                    help="likewise for a build with `--build-profile=release`; needed by --anchor release/all")
    args = ap.parse_args()
    target = os.environ.get("CARGO_TARGET_DIR", os.path.join(ROOT, "target"))
    stars = anchors(args.anchor, target, args.ns3_optimized, args.ns3_release)
    binaries = args.coaplab or [coaplab_binary(target)]
    statistics = list(dict.fromkeys(args.statistic))
    for flag, wanted in (("--instructions", args.instructions), ("--cache-sim", args.cache_sim)):
        if wanted and shutil.which("valgrind") is None:
            sys.exit(f"ns3-speed: {flag} needs valgrind (apt-get install valgrind)")
    if args.l2_bytes <= 0 or args.l2_bytes & (args.l2_bytes - 1):
        sys.exit(f"ns3-speed: --l2-bytes must be a power of two, not {args.l2_bytes}")
    tmp = tempfile.mkdtemp(prefix="ns3-speed-")
    try:
        labels = [f"coaplab[{i}]" if len(binaries) > 1 else "coaplab" for i in range(len(binaries))]
        for key, name, star in stars:
            print(f"anchor {key}: {name} ({star})")
        for label, b in zip(labels, binaries):
            print(f"{label}: {b}")
        print()
        # Per tool: packets, then per packet the simulation CPU and the whole process's CPU;
        # the ratios are ns-3's figure over coaplab's of the same definition.
        cols = "".join(f"| {l} packets | {l} sim µs/packet | ns-3 ÷ {l} (sim) | {l} process µs/packet "
                       f"| ns-3 ÷ {l} (process) " for l in labels)
        header = ("| workload | N | ns-3 packets | ns-3 sim CPU s | ns-3 sim µs/packet | ns-3 process µs/packet "
                  + cols + "|\n|---|---|---|---|---|---" + "|---|---|---|---|---" * len(binaries) + "|")
        # One table per anchor and statistic, all from the same runs; with one of each its rows
        # are printed as each cell is done, otherwise each table is printed whole at the end.
        streaming = len(statistics) == 1 and len(stars) == 1
        tables = {(k, s): [] for k, _, _ in stars for s in statistics}
        summary = []
        if streaming:
            print(f"ns-3 = {stars[0][0]}; {statistics[0]} of {args.reps} runs per tool and cell:\n{header}", flush=True)
        for workload in args.workloads:
            for n in args.flows:
                ours = [[] for _ in binaries]
                theirs = [[] for _ in stars]
                for rep in range(args.reps):
                    for i, b in enumerate(binaries):
                        ours[i].append(run_coaplab(b, workload, n, args.buffer, tmp))
                    for j, (_, _, star) in enumerate(stars):
                        theirs[j].append(run_ns3(star, workload, n, args.buffer))
                for j, (key, _, _) in enumerate(stars):
                    for statistic in statistics:
                        line = table_row(workload, n, theirs[j], ours, kept(median if statistic == "median" else min))
                        tables[(key, statistic)].append(line)
                        if streaming:
                            print(line, flush=True)
                summary.append(summary_row(workload, n, theirs, ours))
                if not streaming:
                    print(f"ns3-speed: {workload} N={n} done", file=sys.stderr, flush=True)
        if not streaming:
            for key, _, _ in stars:
                for statistic in statistics:
                    what = "median" if statistic == "median" else "least"
                    print(f"\nns-3 = {key}; {what} of {args.reps} runs per tool and cell:\n{header}")
                    print("\n".join(tables[(key, statistic)]), flush=True)
        print(f"\nsim CPU per link packet, median (least–most) of {args.reps} runs; ratios of the medians:")
        print(summary_header([k for k, _, _ in stars], labels))
        print("\n".join(summary), flush=True)
        if args.memory:
            memory_table(binaries, labels, stars, args.buffer, tmp)
        if args.instructions:
            instruction_table(binaries, labels, stars, args.workloads, args.flows, args.buffer, tmp)
        if args.cache_sim:
            cache_table(binaries, labels, stars, args.workloads, args.flows, args.buffer, args.l2_bytes, tmp)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
