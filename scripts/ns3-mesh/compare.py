#!/usr/bin/env python3
"""netsim's 802.15.4 mesh against ns-3's lr-wpan + sixlowpan (issue 13): runs every case on
both and prints one markdown table (the table of docs/mesh-validation.md). It compares, it
does not assert; docs/mesh-validation.md explains every difference.

    python3 scripts/ns3-mesh/compare.py               # 20 simulated seconds per case, seed 1
    python3 scripts/ns3-mesh/compare.py --seconds 5 --seed 2

SLOW-ish (about a minute: cppyy compiles the ns-3 side once, ~20 s; every ns-3 run < 1 s of
CPU) and kept out of the fast suite: `./scripts/test.sh --long` runs it. The first run
installs ns-3 into .peers/ns3-venv (scripts/ns3-oracle/oracle.py's installer). The coaplab
side is `cargo run --release -p coaplab-netsim --example mesh_probe -- CASE`.
"""

import argparse
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import ns3_side  # noqa: E402

CASES = [
    ("saturated", 1),
    ("saturated", 2),
    ("saturated", 4),
    ("saturated", 8),
    ("hidden", 2),
    ("chain", 1),
]


def probe_binary():
    target = os.environ.get("CARGO_TARGET_DIR", os.path.join(ns3_side.ROOT, "target"))
    subprocess.check_call(
        ["cargo", "build", "--release", "--locked", "-q", "-p", "coaplab-netsim",
         "--example", "mesh_probe"],
        cwd=ns3_side.ROOT,
    )
    return os.path.join(target, "release", "examples", "mesh_probe")


def run_coaplab(binary, case, n, seconds, seed):
    args = [binary, case] + ([str(n)] if case == "saturated" else []) + [str(seconds), str(seed)]
    out = subprocess.run(args, check=True, capture_output=True, text=True).stdout
    return dict(line.split("=", 1) for line in out.strip().splitlines())


def label(case, n):
    return {
        "saturated": f"saturated, N = {n}",
        "hidden": "hidden terminal (A, C -> B)",
        "chain": "3-hop chain, 300 B (fragmented)",
    }[case]


def row(case, n, side, r):
    delay = r["per_hop_ms"] if case == "chain" else r["service_ms"]
    frames = r.get("frames_per_datagram_hop", "1")
    return (
        f"| {label(case, n)} | {side} | {r['psdu_bytes_mean']} | {frames} | {r['delivery_ratio']} "
        f"| {r['tx_per_frame']} | {r['retries_per_frame']} | {r['channel_access_failures']} "
        f"| {r['no_ack_failures']} | {r['throughput_kbps']} | {delay} |"
    )


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seconds", type=int, default=20, help="simulated seconds per case")
    ap.add_argument("--seed", type=int, default=1, help="seed of both simulators (ns-3 run number)")
    args = ap.parse_args()
    ns3_side.ensure_venv()
    binary = probe_binary()
    print(
        "| case | simulator | PSDU B (mean) | frames/datagram/hop | delivery ratio | tx/frame "
        "| retries/frame | channel-access failures | no-ACK drops | throughput kbit/s "
        "| delay ms (saturated: MAC service time per frame; chain: per hop) |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for case, n in CASES:
        ours = run_coaplab(binary, case, n, args.seconds, args.seed)
        theirs = ns3_side.run(case, n, float(args.seconds), args.seed)
        print(row(case, n, "coaplab", ours))
        print(row(case, n, "ns-3.44", theirs))
        sys.stdout.flush()


if __name__ == "__main__":
    main()
