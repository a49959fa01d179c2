#!/usr/bin/env python3
"""Compare two results directories of the same scenario, cell by cell (old against new).

Both directories come from `coaplab run` of one scenario file (for example before and after a
change of defaults, or by two builds). Cells are paired by their combination index and checked
for the same sweep values. For each cell it reports whether every flow's row is the same in the
columns both files have, and otherwise the median FCT (an unfinished flow counts as larger than
every finished one, so a median may be unbounded), the median retransmissions and the unfinished
flows, old and new.

    python3 scripts/compare-results.py results/old results/new            # changed cells only
    python3 scripts/compare-results.py results/old results/new --all      # every cell
"""

from __future__ import annotations

import argparse
import csv
import math
import sys
from collections import defaultdict
from pathlib import Path

# Per-flow columns that are results, not the cell's identity.
SWEEP = ["cc", "workload", "clients", "buffer_bytes", "loss"]


def load(path: Path) -> tuple[list[str], dict[int, list[dict]]]:
    with open(path / "flows.csv", newline="") as f:
        reader = csv.DictReader(f)
        cells: dict[int, list[dict]] = defaultdict(list)
        for row in reader:
            cells[int(row["combination"])].append(row)
        return list(reader.fieldnames or []), cells


def finished(row: dict) -> bool:
    return row.get("completed") == "true" and row.get("fct_s", "") != ""


def median(values: list[float]) -> float:
    """Type-7 median; math.inf stands for an unfinished flow."""
    s = sorted(values)
    if not s:
        return math.nan
    h = (len(s) - 1) * 0.5
    lo, hi = math.floor(h), math.ceil(h)
    if math.isinf(s[hi]):
        return math.inf
    return s[lo] + (h - lo) * (s[hi] - s[lo])


def stats(rows: list[dict]) -> dict:
    fct = [float(r["fct_s"]) if finished(r) else math.inf for r in rows]
    rex = [float(r["retransmissions"] or 0) for r in rows]
    return dict(n=len(rows), fct=median(fct), rex=median(rex),
                unfinished=sum(not finished(r) for r in rows))


def show(x: float) -> str:
    if math.isinf(x):
        return "unbounded"
    if math.isnan(x):
        return "-"
    return f"{x:.3f}" if abs(x) < 100 else f"{x:.1f}"


def change(a: float, b: float) -> str:
    if math.isinf(a) or math.isinf(b) or a == 0 or math.isnan(a) or math.isnan(b):
        return "-"
    return f"{(b - a) / a:+.1%}"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("old", type=Path)
    ap.add_argument("new", type=Path)
    ap.add_argument("--all", action="store_true", help="list identical cells too")
    args = ap.parse_args()
    old_cols, old = load(args.old)
    new_cols, new = load(args.new)
    common = [c for c in old_cols if c in new_cols]
    same_cells = 0
    lines = ["| cell | flows | old median FCT (s) | new | change | old median rexmit | new | "
             "unfinished old | new |", "|---|---|---|---|---|---|---|---|---|"]
    for combo in sorted(set(old) | set(new)):
        a, b = old.get(combo, []), new.get(combo, [])
        label = "/".join(a[0][k] if a else b[0][k] for k in SWEEP if k in common) + f" (#{combo})"
        if a and b and [a[0][k] for k in SWEEP if k in common] != [b[0][k] for k in SWEEP if k in common]:
            print(f"compare-results: combination {combo} is a different cell in the two directories",
                  file=sys.stderr)
            return 2
        identical = len(a) == len(b) and all(
            all(x[c] == y[c] for c in common) for x, y in zip(a, b))
        same_cells += identical
        if identical and not args.all:
            continue
        sa, sb = stats(a), stats(b)
        mark = " (identical)" if identical else ""
        lines.append(f"| {label}{mark} | {sb['n']} | {show(sa['fct'])} | {show(sb['fct'])} | "
                     f"{change(sa['fct'], sb['fct'])} | {show(sa['rex'])} | {show(sb['rex'])} | "
                     f"{sa['unfinished']} | {sb['unfinished']} |")
    total = len(set(old) | set(new))
    print(f"{same_cells} of {total} cells identical in every flow ({len(common)} columns compared)")
    if len(lines) > 2:
        print()
        print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
