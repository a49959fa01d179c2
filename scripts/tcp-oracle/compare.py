#!/usr/bin/env python3
"""Tables of the kernel-as-oracle study (scripts/tcp-oracle/run.sh; docs/calibration.md).

For each cell directory OUT/CELL with sim/ and emu/ result directories (coaplab run, simulated
and --mode emulated) prints, per (cc, workload), the flows' completion times and TCP counters
side by side, the link's drops per run, and the emulator's write lateness and load average of
every emulated run (from OUT/CELL/emu.log). Standard library only.

    compare.py OUT [CELL...]
"""

import csv
import re
import statistics
import sys
from pathlib import Path

# A run is suspect when its p99 write lateness exceeds this share of the downlink
# serialization time of one full segment (296 B at 30 kbit/s = 78.9 ms).
LATE_SHARE = 0.10
FULL_SEGMENT_DOWN_MS = 296 * 8 / 30.0

LATE_RE = re.compile(
    r"emulated run (\d+): write lateness p50/p99/max ms down (\S+)/(\S+)/(\S+) up "
    r"(\S+)/(\S+)/(\S+); load average (\S+)"
)


def quantile(values, q):
    """Type-7 quantile (summary.csv's), None when empty."""
    v = sorted(values)
    if not v:
        return None
    h = (len(v) - 1) * q
    lo = int(h)
    hi = min(lo + 1, len(v) - 1)
    return v[lo] + (h - lo) * (v[hi] - v[lo])


def num(s):
    try:
        return float(s)
    except (TypeError, ValueError):
        return None


def rows(path):
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def flow_rows(result_dir, header_from):
    """flows.csv of a results directory, or, while its sweep still runs, the rows of the runs
    finished so far (runs/NNNNNN.csv, written without a header)."""
    if (result_dir / "flows.csv").exists():
        return rows(result_dir / "flows.csv")
    with open(header_from, newline="") as f:
        header = next(csv.reader(f))
    out = []
    for part in sorted((result_dir / "runs").glob("*.csv")):
        with open(part, newline="") as f:
            out += [dict(zip(header, r)) for r in csv.reader(f) if r]
    return out


def fmt(x, digits=3):
    if x is None:
        return "–"
    if abs(x - round(x)) < 1e-9 and abs(x) >= 1:
        return str(int(round(x)))
    return f"{x:.{digits}f}"


def triple(values, digits=3):
    """p10 / **p50** / p90 of the non-empty values."""
    v = [x for x in values if x is not None]
    if not v:
        return "–"
    return " / ".join(
        [fmt(quantile(v, 0.1), digits), f"**{fmt(quantile(v, 0.5), digits)}**", fmt(quantile(v, 0.9), digits)]
    )


COLUMNS = [
    ("FCT (s)", "fct_s", 3),
    ("retransmissions", "retransmissions", 1),
    ("unnecessary retransmissions (simulated only)", "unnecessary_retransmissions", 1),
    ("RTO expiries (`expired_rtos`)", "expired_rtos", 1),
    ("largest RTO (`rto_max_s`)", "rto_max_s", 2),
    ("segments retransmitted", "segments_retransmitted", 1),
    ("SYN/SYN-ACK rexmit", "syn_retransmissions", 1),
    ("setup (s)", "setup_s", 3),
    ("segments sent", "segments_sent", 1),
]


def flow_table(cell, sim, emu):
    print(f"\n### {cell}: flows (p10 / **p50** / p90; flows completed / flows)\n")
    print("| cc, workload | metric | simulated | emulated (kernel) |")
    print("|---|---|---|---|")
    keys = sorted({(r["cc"], r["workload"], r["clients"], r["buffer_bytes"], r["loss"]) for r in sim + emu})
    for key in keys:
        s = [r for r in sim if (r["cc"], r["workload"], r["clients"], r["buffer_bytes"], r["loss"]) == key]
        e = [r for r in emu if (r["cc"], r["workload"], r["clients"], r["buffer_bytes"], r["loss"]) == key]
        label = f"{key[0]} {key[1]}, {key[2]} clients, {key[3]} B, {key[4]}"
        done = lambda rs: f"{sum(r['completed'] == 'true' for r in rs)} / {len(rs)}"
        print(f"| {label} | flows completed | {done(s)} | {done(e)} |")
        for name, col, digits in COLUMNS:
            sv = [num(r.get(col)) for r in s if r["completed"] == "true" or col != "fct_s"]
            ev = [num(r.get(col)) for r in e if r["completed"] == "true" or col != "fct_s"]
            print(f"| {label} | {name} | {triple(sv, digits)} | {triple(ev, digits)} |")
        # totals: how many of the flows' RTOs there are per flow on average
        for name, col in (("RTO expiries, mean per flow", "expired_rtos"),):
            sm = statistics.mean([num(r[col]) or 0 for r in s]) if s else None
            em = statistics.mean([num(r[col]) or 0 for r in e]) if e else None
            print(f"| {label} | {name} | {fmt(sm, 2)} | {fmt(em, 2)} |")


def run_table(cell, sim_runs, emu_runs):
    print(f"\n### {cell}: link per run (median over runs)\n")
    print("| metric | simulated | emulated |")
    print("|---|---|---|")
    for col in (
        "down_overflow_drops",
        "down_link_error_drops",
        "up_overflow_drops",
        "up_link_error_drops",
        "down_sent_packets",
        "up_sent_packets",
        "sim_time_s",
    ):
        sv = [num(r[col]) for r in sim_runs if r["status"] == "ok"]
        ev = [num(r[col]) for r in emu_runs if r["status"] == "ok"]
        med = lambda v: fmt(statistics.median(v), 1) if v else "–"
        print(f"| {col} | {med(sv)} | {med(ev)} |")
    failed = [r for r in emu_runs if r["status"] != "ok"]
    if failed:
        print(f"\nemulated runs not ok: {[(r['run'], r['status'], r['error']) for r in failed]}")


def lateness_table(cell, log):
    if not log.exists():
        return set()
    text = log.read_text()
    print(f"\n### {cell}: emulator write lateness per run (ms) and load average\n")
    print("| run | down p50 / p99 / max | up p50 / p99 / max | load average | verdict |")
    print("|---|---|---|---|---|")
    bad = set()
    for m in LATE_RE.finditer(text):
        run = m.group(1)
        down = [num(x) for x in m.group(2, 3, 4)]
        up = [num(x) for x in m.group(5, 6, 7)]
        p99 = max(x for x in (down[1], up[1]) if x is not None) if (down[1] or up[1]) else 0.0
        ok = p99 <= LATE_SHARE * FULL_SEGMENT_DOWN_MS
        if not ok:
            bad.add(run)
        print(
            f"| {run} | {' / '.join(fmt(x) for x in down)} | {' / '.join(fmt(x) for x in up)} "
            f"| {m.group(8)} | {'ok' if ok else 'DISCARD (p99 > 10 % of a segment time)'} |"
        )
    for line in text.splitlines():
        if line.startswith("load average"):
            print(f"\n{line}")
    return bad


def main():
    if len(sys.argv) < 2:
        print(__doc__)
        return 2
    out = Path(sys.argv[1])
    cells = sys.argv[2:] or sorted(p.name for p in out.iterdir() if (p / "sim").is_dir())
    for cell in cells:
        d = out / cell
        if not (d / "sim" / "flows.csv").exists():
            continue
        print(f"\n## {cell}")
        if (d / "command.txt").exists():
            print(f"\n`{(d / 'command.txt').read_text().strip()}`")
        bad = lateness_table(cell, d / "emu.log")
        sim = rows(d / "sim" / "flows.csv")
        emu = flow_rows(d / "emu", d / "sim" / "flows.csv") if (d / "emu").exists() else []
        if bad:
            print(f"\n(emulated runs {sorted(bad)} discarded for lateness)")
            emu = [r for r in emu if r["run"] not in bad]
        # the emulated cell may be a prefix of the simulated replications: compare like with like
        emu_runs = {r["run"] for r in emu}
        flow_table(cell, sim, emu)
        sim_runs = rows(d / "sim" / "runs.csv")
        emu_runs_rows = rows(d / "emu" / "runs.csv") if (d / "emu" / "runs.csv").exists() else []
        emu_runs_rows = [r for r in emu_runs_rows if r["run"] in emu_runs or r["status"] != "ok"]
        run_table(cell, sim_runs, emu_runs_rows)
    return 0


if __name__ == "__main__":
    sys.exit(main())
