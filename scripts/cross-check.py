#!/usr/bin/env python3
"""Compares two result directories of the same scenario (simulated vs emulated):
per (cc, workload) and metric, p10 / median / p90 over all flows of all replications
(Hyndman-Fan type 7, as summary.csv). Prints a Markdown table.

    scripts/cross-check.py SIM_DIR EMU_DIR [SIM_DIR EMU_DIR ...]
"""
import csv
import sys

METRICS = [
    ("fct_s", "FCT (s)"),
    ("coap_rtt_median_s", "CoAP RTT median (s)"),
    ("transmissions", "transmissions"),
    ("retransmissions", "retransmissions"),
    ("bytes_up", "IP bytes up"),
    ("bytes_down", "IP bytes down"),
    ("setup_s", "setup (s)"),
    ("segments_sent", "segments sent"),
    ("rto_count", "RTOs"),
    ("syn_retransmissions", "SYN rexmit"),
]


def pct(xs, p):
    xs = sorted(xs)
    if not xs:
        return None
    h = (len(xs) - 1) * p
    lo = int(h)
    hi = min(lo + 1, len(xs) - 1)
    return xs[lo] + (h - lo) * (xs[hi] - xs[lo])


def load(d):
    cells = {}
    with open(f"{d}/flows.csv") as f:
        for row in csv.DictReader(f):
            cells.setdefault((row["cc"], row["workload"]), []).append(row)
    return cells


def fmt(v, m):
    if v is None:
        return "—"
    if m.endswith("_s"):
        return f"{v:.3f}"
    return f"{v:.1f}".rstrip("0").rstrip(".")


def triple(rows, m):
    xs = [float(r[m]) for r in rows if r.get(m, "") != ""]
    if not xs:
        return None
    return [pct(xs, 0.1), pct(xs, 0.5), pct(xs, 0.9)]


def main(args):
    print("| cell | metric | simulated p10 / **p50** / p90 | emulated p10 / **p50** / p90 | Δ p50 |")
    print("|---|---|---|---|---|")
    for sim_dir, emu_dir in zip(args[::2], args[1::2]):
        sim, emu = load(sim_dir), load(emu_dir)
        for key in sim:
            for m, name in METRICS:
                if m == "coap_rtt_median_s" and key[1] == "long-transfer":
                    continue  # one exchange: equal to the FCT
                s, e = triple(sim[key], m), triple(emu.get(key, []), m)
                if s is None and e is None:
                    continue
                show = lambda t: "—" if t is None else " / ".join(
                    (f"**{fmt(v, m)}**" if i == 1 else fmt(v, m)) for i, v in enumerate(t))
                delta = "—" if s is None or e is None else fmt(e[1] - s[1], m)
                done = sum(r["completed"] == "true" for r in emu.get(key, []))
                label = f"{key[0]} {key[1]} ({len(sim[key])} / {done} flows)"
                print(f"| {label} | {name} | {show(s)} | {show(e)} | {delta} |")


if __name__ == "__main__":
    main(sys.argv[1:])
