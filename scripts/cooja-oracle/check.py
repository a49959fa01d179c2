#!/usr/bin/env python3
"""The Cooja oracle as a check of the mesh model (issue 31): run by `./scripts/test.sh --long`
when COOJA_SETUP names the SETUP.json of a Cooja of Contiki 3.0 on this machine (README.md in
this folder: the repository holds no Cooja, no Contiki and no recipe that builds them).

Two cases of docs/mesh-validation.md, the same layout and seed on both sides: the 3×3 grid of
scenarios/rathod-ch3-grid.toml, Default CoAP, 7 clients, 600 s of clients, Cooja's coordinates
as coaplab's (`--no-snap`: the published 3×3 runs, §G).

  no-acks   run 0, no 802.15.4 ACKs: Contiki's csma.c in Cooja, coaplab's default IEEE MAC
            (docs/mesh-validation.md, the first tables). Holds when transactions/s agree within
            35 % (the spread between seeds of either simulator) and link PDR (decoded) within
            0.01, and RPL formed on both sides.
  acks      run 0, ACKs, Contiki's csma.c on both sides (coaplab `mac = "contiki-csma"` with the
            cooja platform's constants and its radio's 2-ms / 1-ms turnarounds, §K). Holds when
            link PDR (acknowledged) agrees within 0.06 and Jain's index within 0.1, and
            transactions/s within 50 % (coaplab carries 25-45 % less here: §K's open gap).

    COOJA_SETUP=/path/SETUP.json scripts/cooja-oracle/check.py [--coaplab BIN] [--out DIR]

Exit status 0 when every case holds, 1 otherwise (the tables say which figure); 2 on a usage
error. Real time: about as long as Cooja takes for 2 × 630 simulated seconds.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
SCENARIO = os.path.join(ROOT, "scenarios", "rathod-ch3-grid.toml")
PLAN = ["flows.0.cc=default", "replications=5", "output.exchanges=true"]
COOJA_MOTES = ["topology.params.mac=contiki-csma", "topology.params.mac_max_transmissions=8",
               "topology.params.contiki_clock_hz=1000", "topology.params.contiki_ack_wait_us=2000",
               "topology.params.contiki_after_ack_wait_us=0", "topology.params.contiki_tx_delay_us=2000",
               "topology.params.contiki_ack_delay_us=1000"]
CASES = [
    # name, run, ACKs, coaplab's extra settings, transactions/s tolerance (relative)
    ("no-acks", 0, 0, ["topology.params.mac_ack_request=false"], 0.35),
    ("acks", 0, 1, COOJA_MOTES, 0.50),
]


def sh(cmd, **kw):
    print("+ " + " ".join(cmd), flush=True)
    return subprocess.run(cmd, check=True, **kw)


def markdown(columns):
    """compare.py's table of the summaries it printed as JSON (one column each)."""
    import compare  # this folder's; it puts the folder on sys.path for run.py
    names, sums = list(columns), list(columns.values())
    lines = ["| | " + " | ".join(names) + " |", "|---" * (len(names) + 1) + "|"]
    lines += [f"| {row} | " + " | ".join(f(s) for s in sums) + " |" for row, f in compare.ROWS]
    return "\n".join(lines)


def sets(settings):
    return [a for s in settings for a in ("--set", s)]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--coaplab", default=os.path.join(ROOT, "target", "release", "coaplab"))
    ap.add_argument("--out", help="keep the runs here (default: a temporary directory)")
    a = ap.parse_args()
    setup = os.environ.get("COOJA_SETUP")
    if not setup or not os.path.isfile(setup):
        print("check.py: COOJA_SETUP must name the SETUP.json of a Cooja of Contiki 3.0 "
              "(scripts/cooja-oracle/README.md)", file=sys.stderr)
        return 2
    out = a.out or tempfile.mkdtemp(prefix="cooja-check.")
    failed = []
    for name, run, ack, extra, tolerance in CASES:
        res = os.path.join(out, f"{name}-coaplab")
        cooja = os.path.join(out, f"{name}-cooja")
        sh([a.coaplab, "run", SCENARIO, *sets(PLAN + extra), "-q", "--jobs", "2", "--out", res],
           stdout=subprocess.DEVNULL)
        sh([sys.executable, os.path.join(HERE, "run.py"), "--setup", setup, "--scenario", SCENARIO,
            "--run", str(run), *sets(PLAN), "--clients", "7", "--duration", "630",
            "--req-bytes", "36", "--rsp-bytes", "51", "--ack", str(ack), "--no-snap", "--out", cooja],
           stdout=subprocess.DEVNULL)
        both = json.loads(subprocess.run(
            [sys.executable, os.path.join(HERE, "compare.py"), "--coaplab", res, "--run", str(run),
             "--window", "600", "--cooja", cooja, "--json"],
            check=True, capture_output=True, text=True).stdout)
        ours, theirs = both[f"coaplab run {run}"], both[os.path.basename(cooja)]
        print(f"\n{name} (run {run}, ACKs {'on' if ack else 'off'}):\n{markdown(both)}")
        problems = []
        tx_ours, tx_cooja = ours["transactions_per_s"], theirs["transactions_per_s"]
        if not tx_ours or not tx_cooja or abs(tx_ours / tx_cooja - 1) > tolerance:
            problems.append(f"transactions/s {tx_ours} against Cooja's {tx_cooja} "
                            f"(tolerance {tolerance:.0%})")
        if ours.get("rpl_formed_s") is None or theirs.get("rpl_formed_s") is None:
            problems.append("RPL did not form on both sides")
        if ack == 0:
            pdr_ours, pdr_cooja = ours.get("mac_link_pdr"), theirs.get("mac_link_pdr")
            if pdr_ours is None or pdr_cooja is None or abs(pdr_ours - pdr_cooja) > 0.01:
                problems.append(f"link PDR decoded {pdr_ours} against Cooja's {pdr_cooja}")
        else:
            pdr_ours, pdr_cooja = ours.get("mac_link_pdr_acked"), theirs.get("mac_link_pdr_acked")
            if pdr_ours is None or pdr_cooja is None or abs(pdr_ours - pdr_cooja) > 0.06:
                problems.append(f"link PDR acknowledged {pdr_ours} against Cooja's {pdr_cooja}")
            j_ours, j_cooja = ours.get("jain_answered"), theirs.get("jain_answered")
            if j_ours is None or j_cooja is None or abs(j_ours - j_cooja) > 0.1:
                problems.append(f"Jain's index {j_ours} against Cooja's {j_cooja}")
        for p in problems:
            print(f"check.py: {name}: {p}", file=sys.stderr)
        failed += [name] if problems else []
    print(f"check.py: {len(CASES) - len(failed)} of {len(CASES)} cases hold; runs in {out}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
