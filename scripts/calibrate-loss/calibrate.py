#!/usr/bin/env python3
"""Calibrate the mean burst length of the `medium` and `high` loss profiles.

The procedure and its objective are written down in docs/calibration.md ("The loss process")
and were fixed before any candidate was run. In short:

* candidates: netem `loss gemodel` and netem `loss state` (per packet, bursts of L packets) and
  the time-based chain (bursts of B seconds), each keeping the profiles' state loss rates and
  averages; the burst length is the only free parameter;
* cells: scenarios/pesola-loss-calibration.toml (1 client, 2,500-B buffer, Default CoAP and
  CoCoA, medium and high), at least 200 replications, the same seeds for every candidate
  (the candidate is applied with scalar `--set` overrides, which keep every run's seed);
* objective: the sum over the four cells and the percentiles p10, p25, median, p75, p90 of
  (ln(ours / published))^2, percentiles of type 7 (numpy's default); a flow that gave up is a
  censored observation larger than every finished one, and a percentile that reaches a censored
  observation makes the objective infinite;
* requirement: no flow of the four cells gives up (the thesis reports every run complete);
* noise: the objective's standard error by bootstrap over each cell's flows; the winner is the
  eligible candidate with the lowest objective, except that a per-packet netem candidate within
  two standard errors of the difference from a time-based winner is preferred (the testbeds'
  tool).

It prints the whole grid and the winner, and writes grid.csv and calibration.md (the tables that
docs/calibration.md carries) into --out.

    python3 scripts/calibrate-loss/calibrate.py                 # the full grid, 200 replications
    python3 scripts/calibrate-loss/calibrate.py --reps 4 --grid smoke --out /tmp/cal   # a quick check
"""

from __future__ import annotations

import argparse
import csv
import math
import os
import random
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SCENARIO = ROOT / "scenarios" / "pesola-loss-calibration.toml"

# Pesola 2020, Tables 9 and 10, UDP rows: FCT (s) of 20 runs each; the only use of these figures
# in the project (docs/calibration.md). Keys: (profile, cc as the scenario names it).
PUBLISHED = {
    ("medium", "default"): dict(p10=544.257, p25=563.452, p50=601.462, p75=638.710, p90=724.475),
    ("medium", "cocoa"): dict(p10=420.589, p25=459.740, p50=492.896, p75=530.758, p90=565.270),
    ("high", "default"): dict(p10=1066.920, p25=1101.680, p50=1269.150, p75=1312.080, p90=1351.710),
    ("high", "cocoa"): dict(p10=886.229, p25=915.251, p50=1028.140, p75=1230.990, p90=1278.120),
}
# Every published percentile (min … max), for the report beside ours.
PUBLISHED_ALL = {
    ("medium", "default"): [538.018, 544.257, 563.452, 601.462, 638.710, 724.475, 734.746, 771.198],
    ("medium", "cocoa"): [403.535, 420.589, 459.740, 492.896, 530.758, 565.270, 583.772, 736.080],
    ("high", "default"): [1049.240, 1066.920, 1101.680, 1269.150, 1312.080, 1351.710, 1389.230, 1462.340],
    ("high", "cocoa"): [883.472, 886.229, 915.251, 1028.140, 1230.990, 1278.120, 1339.120, 1524.250],
}
CELLS = list(PUBLISHED)
OBJECTIVE_P = {"p10": 0.10, "p25": 0.25, "p50": 0.50, "p75": 0.75, "p90": 0.90}
REPORT_P = [0.0, 0.10, 0.25, 0.50, 0.75, 0.90, 0.95, 1.0]
REPORT_NAMES = ["min", "p10", "p25", "median", "p75", "p90", "p95", "max"]

# (family, the --set key of its burst, the burst values, unit). netem-state cannot express a
# mean burst under 1/0.5^2 = 4 packets for `medium` (its burst loss is 50 %), so its grid
# starts there.
GRIDS = {
    "full": [
        # 1.125 … 1.875: the refinement the flatness rule asked for after the first pass (the
        # objective went from 0.29 at 1.5 packets to 1.13 at 2; docs/calibration.md).
        ("netem-gemodel", "loss_burst_packets",
         [1, 1.125, 1.25, 1.375, 1.5, 1.625, 1.75, 1.875, 2, 2.5, 3, 4, 5, 6, 8, 10], "packets"),
        ("netem-state", "loss_burst_packets", [4, 5, 6, 8, 10, 12, 16], "packets"),
        ("ctmc", "burst_mean_s", [0.1, 0.15, 0.2, 0.25, 0.3, 0.4, 0.5, 0.6, 0.8, 1.0, 1.5, 2.0], "s"),
    ],
    "smoke": [
        ("netem-gemodel", "loss_burst_packets", [2, 10], "packets"),
        ("netem-state", "loss_burst_packets", [4], "packets"),
        ("ctmc", "burst_mean_s", [0.5], "s"),
    ],
}
PER_PACKET = ("netem-gemodel", "netem-state")
BOOTSTRAP = 200


def quantile(sorted_values: list[float], p: float) -> float:
    """Type-7 quantile of ascending values; math.inf stands for a censored observation."""
    n = len(sorted_values)
    h = (n - 1) * p
    lo = math.floor(h)
    hi = min(lo + 1, n - 1)
    a, b = sorted_values[lo], sorted_values[hi]
    if math.isinf(a) or (math.isinf(b) and h > lo):
        return math.inf
    return a + (h - lo) * (b - a)


def cell_objective(values: list[float], published: dict[str, float]) -> float:
    """Sum over the objective's percentiles of ln(ours/published)^2 (inf if censored)."""
    s = sorted(values)
    total = 0.0
    for name, p in OBJECTIVE_P.items():
        q = quantile(s, p)
        if math.isinf(q):
            return math.inf
        total += math.log(q / published[name]) ** 2
    return total


def run_candidate(binary: Path, family: str, key: str, burst: float, reps: int, out: Path) -> dict:
    """Run the calibration cells under one candidate; the FCTs per cell (inf = gave up)."""
    out.mkdir(parents=True, exist_ok=True)
    results = out / "results"
    cmd = [
        str(binary), "run", str(SCENARIO), "--out", str(results), "--reps", str(reps), "--quiet",
        "--set", f"network.error_model={family}", "--set", f"network.{key}={burst}",
    ]
    if (results / "manifest.json").exists():
        cmd.append("--resume")
    done = subprocess.run(cmd, capture_output=True, text=True)
    if done.returncode != 0:
        sys.stderr.write(done.stdout + done.stderr)
        raise SystemExit(f"calibrate: {' '.join(cmd)} exited {done.returncode}")
    cells: dict[tuple[str, str], list[float]] = {c: [] for c in CELLS}
    with open(results / "flows.csv", newline="") as f:
        for row in csv.DictReader(f):
            cell = (row["loss"], row["cc"])
            done = row["completed"] == "true" and row["fct_s"] != ""
            cells[cell].append(float(row["fct_s"]) if done else math.inf)
    return cells


def bootstrap_sd(cells: dict, rng: random.Random) -> float:
    """Standard deviation of the objective over resamples of each cell's flows."""
    totals = []
    for _ in range(BOOTSTRAP):
        t = 0.0
        for c in CELLS:
            v = cells[c]
            t += cell_objective([v[rng.randrange(len(v))] for _ in v], PUBLISHED[c])
        totals.append(t)
    finite = [t for t in totals if math.isfinite(t)]
    if len(finite) < len(totals):
        return math.inf
    mean = sum(finite) / len(finite)
    return math.sqrt(sum((t - mean) ** 2 for t in finite) / (len(finite) - 1))


def twenty_run_ranges(values: list[float], rng: random.Random) -> dict[str, tuple[float, float]]:
    """Each objective percentile's 5-95 % range over samples of 20 of `values`."""
    draws = {name: [] for name in OBJECTIVE_P}
    for _ in range(2000):
        s = sorted(rng.sample(values, min(20, len(values))))
        for name, p in OBJECTIVE_P.items():
            draws[name].append(quantile(s, p))
    out = {}
    for name, d in draws.items():
        d.sort()
        out[name] = (quantile(d, 0.05), quantile(d, 0.95))
    return out


def fmt(x: float, digits: int = 4) -> str:
    return "inf" if math.isinf(x) else f"{x:.{digits}f}"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--reps", type=int, default=200, help="replications per cell (the procedure needs >= 200)")
    ap.add_argument("--grid", choices=sorted(GRIDS), default="full", help="which grid of candidates")
    ap.add_argument("--out", type=Path, default=ROOT / "results" / "calibrate-loss",
                    help="where each candidate's results and the tables go (reruns resume)")
    ap.add_argument("--bin", type=Path, default=ROOT / "target" / "release" / "coaplab",
                    help="the coaplab binary (built with cargo build --release when missing)")
    args = ap.parse_args()
    if args.reps < 200 and args.grid == "full":
        print(f"calibrate: --reps {args.reps} is below the procedure's 200; "
              "use --grid smoke for a quick check", file=sys.stderr)
        return 2
    if not args.bin.exists():
        subprocess.run(["cargo", "build", "--release", "--locked", "-p", "coaplab"], cwd=ROOT, check=True)

    rng = random.Random(1)
    rows = []
    started = time.monotonic()
    candidates = [(f, k, b, u) for f, k, values, u in GRIDS[args.grid] for b in values]
    for i, (family, key, burst, unit) in enumerate(candidates, 1):
        name = f"{family}-{burst:g}{'p' if unit == 'packets' else 's'}"
        cells = run_candidate(args.bin, family, key, burst, args.reps, args.out / name)
        per_cell = {c: cell_objective(cells[c], PUBLISHED[c]) for c in CELLS}
        gave_up = {c: sum(math.isinf(v) for v in cells[c]) for c in CELLS}
        objective = sum(per_cell.values())
        row = dict(family=family, burst=burst, unit=unit, objective=objective,
                   sd=bootstrap_sd(cells, rng), gave_up=sum(gave_up.values()),
                   per_cell=per_cell, gave_up_cells=gave_up, cells=cells)
        rows.append(row)
        print(f"[{i}/{len(candidates)} {time.monotonic() - started:6.0f} s] {family:14} "
              f"{burst:>5g} {unit:7} objective {fmt(objective)} (sd {fmt(row['sd'])}) "
              f"gave up {row['gave_up']}", file=sys.stderr, flush=True)

    eligible = [r for r in rows if r["gave_up"] == 0 and math.isfinite(r["objective"])]
    winner = min(eligible, key=lambda r: r["objective"]) if eligible else None
    if winner is not None and winner["family"] not in PER_PACKET:
        packet = [r for r in eligible if r["family"] in PER_PACKET]
        if packet:
            best = min(packet, key=lambda r: r["objective"])
            if best["objective"] - winner["objective"] < 2 * math.hypot(best["sd"], winner["sd"]):
                winner = best

    args.out.mkdir(parents=True, exist_ok=True)
    with open(args.out / "grid.csv", "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["family", "burst", "unit", "objective", "objective_sd", "gave_up"]
                   + [f"objective_{p}_{c}" for p, c in CELLS] + [f"gave_up_{p}_{c}" for p, c in CELLS])
        for r in rows:
            w.writerow([r["family"], r["burst"], r["unit"], r["objective"], r["sd"], r["gave_up"]]
                       + [r["per_cell"][c] for c in CELLS] + [r["gave_up_cells"][c] for c in CELLS])

    lines = [f"Grid ({args.reps} replications per cell, {len(rows)} candidates; objective = "
             "sum of squared log ratios, lower is better; sd by bootstrap):", "",
             "| family | mean burst | objective | sd | medium/Default | medium/CoCoA | high/Default "
             "| high/CoCoA | flows that gave up |", "|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        mark = " **(winner)**" if r is winner else ""
        lines.append(f"| {r['family']} | {r['burst']:g} {r['unit']}{mark} | {fmt(r['objective'])} | "
                     f"{fmt(r['sd'])} | " + " | ".join(fmt(r["per_cell"][c]) for c in CELLS)
                     + f" | {r['gave_up']} |")
    lines.append("")
    if winner is None:
        lines.append("No candidate is eligible: every one has a flow that gave up.")
    else:
        lines += [f"Winner: {winner['family']}, mean burst {winner['burst']:g} {winner['unit']} "
                  f"(objective {fmt(winner['objective'])}, sd {fmt(winner['sd'])}).", "",
                  "The calibration rows, ours (winner) against published (FCT, s):", "",
                  "| profile | CC | | " + " | ".join(REPORT_NAMES) + " |",
                  "|---|---|---|" + "---|" * len(REPORT_NAMES)]
        for c in CELLS:
            s = sorted(winner["cells"][c])
            ours = [quantile(s, p) for p in REPORT_P]
            lines.append(f"| {c[0]} | {c[1]} | ours | " + " | ".join(fmt(x, 1) for x in ours) + " |")
            lines.append(f"| | | published | " + " | ".join(f"{x:.1f}" for x in PUBLISHED_ALL[c]) + " |")
        lines += ["", "Within the spread 20 runs allow: for each cell, 2,000 draws of 20 of our flows "
                  "(without replacement) give each percentile's 5-95 % range over 20-run samples; "
                  "a published percentile inside it is one our model produces by chance at least "
                  "one time in ten.", "",
                  "| profile | CC | " + " | ".join(OBJECTIVE_P) + " |", "|---|---|" + "---|" * len(OBJECTIVE_P)]
        inside = 0
        for c in CELLS:
            ranges = twenty_run_ranges(winner["cells"][c], rng)
            cols = []
            for name in OBJECTIVE_P:
                lo, hi = ranges[name]
                ok = lo <= PUBLISHED[c][name] <= hi
                inside += ok
                cols.append(f"{PUBLISHED[c][name]:.1f} in [{fmt(lo, 1)}, {fmt(hi, 1)}]"
                            + ("" if ok else " **outside**"))
            lines.append(f"| {c[0]} | {c[1]} | " + " | ".join(cols) + " |")
        lines += ["", f"{inside} of {len(CELLS) * len(OBJECTIVE_P)} published percentiles are inside "
                  "their 20-run range."]
    text = "\n".join(lines) + "\n"
    (args.out / "calibration.md").write_text(text)
    print(text)
    return 0 if winner is not None else 1


if __name__ == "__main__":
    sys.exit(main())
