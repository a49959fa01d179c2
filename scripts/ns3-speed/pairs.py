#!/usr/bin/env python3
"""Interleaved pairs of two coaplab binaries on one scenario: which is faster per link packet.

    python3 scripts/ns3-speed/pairs.py BEFORE AFTER SCENARIO.toml [PAIRS]

Runs BEFORE and AFTER alternately (BEFORE first in even pairs, AFTER first in odd ones), PAIRS
times (default 11), each as `coaplab run SCENARIO --jobs 1` into a fresh directory, and reads
the run's simulating-thread CPU time (manifest.json's runs[0].cpu_s) and its link packets
(runs.csv's down_sent_packets + up_sent_packets). Prints each binary's median and least µs per
packet and the median and interquartile range of the per-pair ratio AFTER ÷ BEFORE: load on a
shared host hits both runs of a pair alike, so the ratio is steadier than either median.
"""
import csv
import json
import os
import statistics
import subprocess
import sys
import tempfile


def us_per_packet(binary, scenario):
    with tempfile.TemporaryDirectory() as d:
        out = os.path.join(d, "o")
        subprocess.run([binary, "run", scenario, "--out", out, "-q", "--jobs", "1"],
                       check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        with open(os.path.join(out, "runs.csv"), newline="") as fh:
            row = next(csv.DictReader(fh))
        packets = int(row["down_sent_packets"]) + int(row["up_sent_packets"])
        with open(os.path.join(out, "manifest.json")) as fh:
            cpu_s = json.load(fh)["runs"][0]["cpu_s"]
    return cpu_s / packets * 1e6


def main():
    if len(sys.argv) not in (4, 5):
        sys.exit(__doc__)
    before, after, scenario = sys.argv[1:4]
    pairs = int(sys.argv[4]) if len(sys.argv) == 5 else 11
    if pairs < 2:
        sys.exit("pairs.py: PAIRS must be at least 2")
    a, b, ratio = [], [], []
    for i in range(pairs):
        if i % 2 == 0:
            x = us_per_packet(before, scenario)
            y = us_per_packet(after, scenario)
        else:
            y = us_per_packet(after, scenario)
            x = us_per_packet(before, scenario)
        a.append(x)
        b.append(y)
        ratio.append(y / x)
    q = statistics.quantiles(ratio, n=4)
    print(f"{os.path.basename(scenario)}, {pairs} pairs: before median {statistics.median(a):.3f} "
          f"µs/packet (least {min(a):.3f}); after median {statistics.median(b):.3f} "
          f"(least {min(b):.3f}); after ÷ before median {statistics.median(ratio):.3f} "
          f"(IQR {q[0]:.3f}–{q[2]:.3f})")


if __name__ == "__main__":
    main()
