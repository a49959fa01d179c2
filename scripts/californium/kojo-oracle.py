#!/usr/bin/env python3
"""Californium as the oracle of the simulated Kojo study (issue 33; docs/cross-check.md).

One cell of kojo-zigbee-simple.toml (zigbee preset, 512-B buffer, error-free, N clients, 50
exchanges of 60-B CoAP messages, MAX_RETRANSMIT 20), or of kojo-zigbee-mixed.toml (`--workload
mixed`: the first ceil(N/2) flows continuous, the others random), run three ways, and compared
flow metric by flow metric (p10 / median / p90 over all flows of all replications, type 7):

  sim   `coaplab run` of the cell, simulated, with the Californium-compatible profiles
        (cocoa/cocoa-strong: profile = "cf-compat" with aging on; peakhopper: ph_int_delta;
        linux-rto, basic-rto and default as they are);
  ours  (with --ours) the same cell `coaplab run --mode emulated`: our clients and server
        behind the emulated link, to separate real-time effects from Californium's;
  cf    Californium 3.14.0: the peer's `cf server` in the server namespace and one `cf kojo`
        process running the N clients (one Californium endpoint each, so one congestion-
        control state each) in the client namespace of `coaplab emulate --preset zigbee`,
        one emulator session per replication. Real time: about a minute per replication of
        10 continuous clients.

Metrics per flow: FCT (first transmission of the first request to the response of the 50th),
transmissions, retransmissions, RTOmax (the largest timer that expired: for Californium the
longest gap between two transmissions of one request, or from the last one to the give-up),
CoAP RTT median; and the frequency of transmissions (share of the exchanges that needed 1, 2,
3, ... transmissions), pooled. A mixed cell is reported for all flows and for each half.

    scripts/californium/kojo-oracle.py --clients 10 --cc default --workload continuous \\
        --reps 1 --out /tmp/kojo-oracle [--ours | --ours-from EARLIER_OUT] [--coaplab BIN]

Needs root (the emulator) and the peer (scripts/californium/install.sh). Writes OUT/cell.toml,
OUT/sim/, OUT/ours/, OUT/cf/rep-K.csv (one row per exchange) and rep-K.log (the emulator's
link statistics), and prints the comparison as Markdown (also in OUT/report.md).
"""
import argparse
import csv
import os
import shlex
import shutil
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

# coaplab algorithm -> (Californium CongestionControlMode, [flows.params] for the simulated cell)
MODES = {
    "default": ("NULL", {}),
    "cocoa": ("COCOA", {"profile": '"cf-compat"', "aging": "true"}),
    "cocoa-strong": ("COCOA_STRONG", {"profile": '"cf-compat"', "aging": "true"}),
    "basic-rto": ("BASIC_RTO", {}),
    "linux-rto": ("LINUX_RTO", {}),
    "peakhopper": ("PEAKHOPPER_RTO", {"ph_int_delta": "true"}),
}


def cell_toml(a, params):
    groups = [(a.clients, a.workload)]
    if a.workload == "mixed":
        groups = [((a.clients + 1) // 2, "continuous"), (a.clients // 2, "random")]
    lines = [
        f'name = "kojo-oracle-{a.cc}-{a.workload}-{a.clients}"',
        f"seed = {a.seed}",
        f"replications = {a.reps}",
        "",
        "[network]",
        'preset = "zigbee"',
        'loss = "none"',
        "",
        "[protocol]",
        'cc_preset = "fasor18"',
        "max_retransmit = 20",
        "nstart = 1",
    ]
    for count, workload in groups:
        lines += [
            "",
            "[[flows]]",
            f"count = {count}",
            f'cc = "{a.cc}"',
            f'workload = "{workload}"',
            f"exchanges = {a.exchanges}",
        ]
        if params:
            lines += ["", "[flows.params]"] + [f"{k} = {v}" for k, v in params.items()]
    return "\n".join(lines) + "\n"


def pct(xs, p):
    xs = sorted(xs)
    if not xs:
        return None
    h = (len(xs) - 1) * p
    lo = int(h)
    hi = min(lo + 1, len(xs) - 1)
    return xs[lo] + (h - lo) * (xs[hi] - xs[lo])


def median(xs):
    return pct(xs, 0.5)


def coaplab_flows(d):
    """Per-flow metrics from a coaplab result directory (flows.csv)."""
    flows = []
    with open(os.path.join(d, "flows.csv")) as f:
        for r in csv.DictReader(f):
            counts = [int(x) for x in r["transmission_counts"].split()] if r["transmission_counts"] else []
            flows.append({
                "fct_s": float(r["fct_s"]) if r["completed"] == "true" else None,
                "transmissions": int(r["transmissions"]),
                "retransmissions": int(r["retransmissions"]),
                "rto_max_s": float(r["rto_max_s"]) if r["rto_max_s"] else None,
                "coap_rtt_median_s": float(r["coap_rtt_median_s"]) if r["coap_rtt_median_s"] else None,
                "failed": int(r["failed_exchanges"]),
                # transmission_counts: how many exchanges needed 1, 2, 3, ... transmissions
                "hist": counts,
                "workload": r["workload"],
            })
    return flows


def cf_flows(path, clients, workload):
    """Per-flow metrics from a `cf kojo` CSV (one row per exchange)."""
    by_flow = {}
    with open(path) as f:
        for r in csv.DictReader(f):
            by_flow.setdefault(int(r["flow"]), []).append(r)
    flows = []
    for fid in sorted(by_flow):
        rows = sorted(by_flow[fid], key=lambda r: int(r["exchange"]))
        tx = 0
        timers = []
        rtts = []
        hist = []
        failed = 0
        first = None
        last_answer = None
        for r in rows:
            sends = [float(x) for x in r["sends_s"].split(";") if x]
            tx += len(sends)
            if first is None and sends:
                first = sends[0]
            timers += [b - a for a, b in zip(sends, sends[1:])]
            ok = r["code"].startswith("2.") and r["response_s"]
            if ok:
                rtts.append(float(r["response_s"]) - sends[0])
                last_answer = float(r["response_s"])
                n = len(sends)
                while len(hist) < n:
                    hist.append(0)
                hist[n - 1] += 1
            else:
                failed += 1
                if sends:
                    timers.append(float(r["end_s"]) - sends[-1])
        flows.append({
            "fct_s": (last_answer - first) if (first is not None and last_answer is not None) else None,
            "transmissions": tx,
            "retransmissions": tx - len(rows),
            "rto_max_s": max(timers) if timers else None,
            "coap_rtt_median_s": median(rtts),
            "failed": failed,
            "hist": hist,
            "workload": workload if workload != "mixed"
            else ("continuous" if fid < (clients + 1) // 2 else "random"),
        })
    return flows


METRICS = [
    ("fct_s", "FCT (s)"),
    ("transmissions", "transmissions"),
    ("retransmissions", "retransmissions"),
    ("rto_max_s", "RTOmax (s), flows with an expiry"),
    ("coap_rtt_median_s", "CoAP RTT median (s)"),
]


def fmt(v, m):
    if v is None:
        return "—"
    if m.endswith("_s"):
        return f"{v:.3f}"
    return f"{v:.1f}".rstrip("0").rstrip(".")


def triple(flows, m):
    xs = [f[m] for f in flows if f[m] is not None]
    if not xs:
        return "—"
    t = [pct(xs, 0.1), pct(xs, 0.5), pct(xs, 0.9)]
    return " / ".join((f"**{fmt(v, m)}**" if i == 1 else fmt(v, m)) for i, v in enumerate(t))


def frequency(flows):
    """Share of the successful exchanges that needed 1, 2, 3, ... transmissions; failures."""
    hist = []
    failed = 0
    for f in flows:
        for i, n in enumerate(f["hist"]):
            while len(hist) <= i:
                hist.append(0)
            hist[i] += n
        failed += f["failed"]
    total = sum(hist) + failed
    if total == 0:
        return "—"
    parts = [f"{i + 1}: {100 * n / total:.1f} %" for i, n in enumerate(hist) if n]
    if failed:
        parts.append(f"failed: {100 * failed / total:.1f} %")
    return ", ".join(parts)


def report(a, columns):
    if a.workload != "mixed":
        return table(a, columns, "")
    out = table(a, columns, "all flows")
    for w in ("continuous", "random"):
        out += "\n" + table(a, [(n, [f for f in fl if f["workload"] == w]) for n, fl in columns],
                            f"the {w} half")
    return out


def table(a, columns, subset):
    out = []
    names = [n for n, _ in columns]
    out.append(f"Cell: zigbee, {a.clients} clients, {a.workload}, `{a.cc}` "
               f"(Californium {MODES[a.cc][0]}), {a.exchanges} exchanges, {a.reps} replication(s), "
               f"seed {a.seed}." + (f" Flows: {subset}." if subset else ""))
    out.append("")
    out.append("| metric | " + " | ".join(f"{n} p10 / **p50** / p90" for n in names) + " |")
    out.append("|---|" + "---|" * len(names))
    out.append("| flows (completed / all) | " + " | ".join(
        f"{sum(f['fct_s'] is not None for f in fl)} / {len(fl)}" for _, fl in columns) + " |")
    out.append("| flows with an expired timer | " + " | ".join(
        str(sum(f['rto_max_s'] is not None for f in fl)) for _, fl in columns) + " |")
    for m, label in METRICS:
        out.append(f"| {label} | " + " | ".join(triple(fl, m) for _, fl in columns) + " |")
    out.append("| frequency of transmissions | " + " | ".join(frequency(fl) for _, fl in columns) + " |")
    return "\n".join(out) + "\n"


def default_coaplab():
    found = shutil.which("coaplab")
    if found:
        return found
    for profile in ("release", "debug"):
        path = os.path.join(ROOT, "target", profile, "coaplab")
        if os.path.exists(path):
            return path
    return "coaplab"


def run(cmd, **kw):
    print("+ " + " ".join(shlex.quote(c) for c in cmd), file=sys.stderr, flush=True)
    return subprocess.run(cmd, check=True, **kw)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--clients", type=int, default=10)
    ap.add_argument("--cc", choices=sorted(MODES), default="default")
    ap.add_argument("--workload", choices=["continuous", "random", "mixed"], default="continuous")
    ap.add_argument("--exchanges", type=int, default=50)
    ap.add_argument("--reps", type=int, default=1)
    ap.add_argument("--seed", type=int, default=2016)
    ap.add_argument("--out", required=True)
    ap.add_argument("--coaplab", default=default_coaplab(),
                    help="the coaplab binary (default: on PATH, else target/release, else target/debug)")
    ap.add_argument("--cf", default=os.path.join(ROOT, ".peers", "californium", "cf"))
    ap.add_argument("--ours", action="store_true",
                    help="also run the cell emulated with coaplab's own clients and server")
    ap.add_argument("--ours-from", metavar="DIR",
                    help="take that column from DIR/ours of an earlier run of the same cell instead")
    a = ap.parse_args()
    mode, params = MODES[a.cc]
    os.makedirs(os.path.join(a.out, "cf"), exist_ok=True)
    toml = os.path.join(a.out, "cell.toml")
    with open(toml, "w") as f:
        f.write(cell_toml(a, params))

    columns = []
    sim = os.path.join(a.out, "sim")
    run([a.coaplab, "run", toml, "--out", sim, "-q"])
    columns.append(("simulated", coaplab_flows(sim)))
    if a.ours_from:
        columns.append(("coaplab emulated", coaplab_flows(os.path.join(a.ours_from, "ours"))))
    elif a.ours:
        ours = os.path.join(a.out, "ours")
        t0 = time.monotonic()
        run([a.coaplab, "run", toml, "--mode", "emulated", "--out", ours, "-q"])
        print(f"ours: {time.monotonic() - t0:.1f} s", file=sys.stderr)
        columns.append(("coaplab emulated", coaplab_flows(ours)))

    # IPv4 sockets only: the namespaces have IPv6 off.
    env = dict(os.environ, CF_JAVA_OPTS="-Djava.net.preferIPv4Stack=true")
    cf_all = []
    for rep in range(a.reps):
        csv_path = os.path.join(a.out, "cf", f"rep-{rep}.csv")
        log_path = os.path.join(a.out, "cf", f"rep-{rep}.log")
        server = f"{shlex.quote(a.cf)} server --bind 198.18.0.2:5683"
        client = [
            a.cf, "kojo", "coap://$COAPLAB_SERVER_ADDR:5683/k",
            "--clients", str(a.clients), "--exchanges", str(a.exchanges),
            "--workload", a.workload, "--cc", mode, "--seed", str(a.seed + rep),
            "--out", csv_path,
            "--cf", "COAP.MAX_RETRANSMIT=20", "--cf", "COAP.TOKEN_SIZE_LIMIT=2",
        ]
        t0 = time.monotonic()
        with open(log_path, "w") as log:
            run([a.coaplab, "emulate", "--preset", "zigbee", "--seed", str(a.seed + rep),
                 "--ready-timeout", "60s", "--server", server, "--", *client],
                env=env, stdout=log, stderr=subprocess.STDOUT)
        print(f"cf rep {rep}: {time.monotonic() - t0:.1f} s", file=sys.stderr)
        cf_all += cf_flows(csv_path, a.clients, a.workload)
    columns.append((f"Californium 3.14.0 emulated", cf_all))

    text = report(a, columns)
    with open(os.path.join(a.out, "report.md"), "w") as f:
        f.write(text)
    print(text)


if __name__ == "__main__":
    main()
