#!/usr/bin/env python3
"""Puts a coaplab mesh run next to a Cooja oracle run (issue 31): the same metrics as
run.py's summary, computed from a coaplab results directory (runs/NNNNNN.json, runs.csv,
exchanges.csv; the scenario needs `[output] exchanges = true` or `--set output.exchanges=true`).

    python3 scripts/cooja-oracle/compare.py --coaplab RESULTS_DIR [--run N] [--window S] \\
        [--cooja COOJA_RUN_DIR ...] [--json]

--window: count only exchanges that ended within S seconds of the first exchange's start
(default: the Cooja run's client time, duration − start_s, else the whole run), so that both
sides cover the same stretch of client activity. Client k of coaplab (flow k) is the k-th
node with role `client` in the layout, i.e. Cooja mote (its index + 1), as gen_csc.py maps
them. Prints one column per run, coaplab first.
"""

import argparse
import csv
import json
import os
import statistics
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import run as oracle  # noqa: E402


def jain(xs):
    xs = list(xs)
    if not xs or not any(xs):
        return None
    return sum(xs) ** 2 / (len(xs) * sum(x * x for x in xs))


def quantile(v, p):
    if not v:
        return None
    k = (len(v) - 1) * p
    lo = int(k)
    hi = min(lo + 1, len(v) - 1)
    return v[lo] + (v[hi] - v[lo]) * (k - lo)


def coaplab_summary(d, run, window):
    with open(os.path.join(d, "runs", f"{run:06d}.json")) as f:
        rj = json.load(f)
    with open(os.path.join(d, "manifest.json")) as f:
        man = json.load(f)
    row = next(r for r in csv.DictReader(open(os.path.join(d, "runs.csv"))) if int(r["run"]) == run)
    comb = int(row["combination"])
    topo = man["combinations"][comb]["config"]["topology"]
    clients = [i + 1 for i, x in enumerate(topo["nodes"]) if x["role"] == "client"]
    ex = [r for r in csv.DictReader(open(os.path.join(d, "exchanges.csv"))) if int(r["run"]) == run]
    t0 = min(float(r["start_s"]) for r in ex) if ex else 0.0
    if window:
        ex = [r for r in ex if float(r["end_s"]) <= t0 + window]
    ok = [r for r in ex if r["delay_s"] != ""]
    delays = sorted(float(r["delay_s"]) for r in ok)
    span = (max(float(r["end_s"]) for r in ex) - min(float(r["start_s"]) for r in ex)) if ex else 0
    flows = {int(r["flow"]) for r in csv.DictReader(open(os.path.join(d, "flows.csv"))) if int(r["run"]) == run}
    per = {clients[k]: {"ended": 0, "answered": 0} for k in sorted(flows)}
    dl = {}
    for r in ex:
        c = per[clients[int(r["flow"])]]
        c["ended"] += 1
        c["answered"] += r["delay_s"] != ""
        if r["delay_s"] != "":
            dl.setdefault(clients[int(r["flow"])], []).append(float(r["delay_s"]))
    for k, v in dl.items():
        per[k]["delay_p50_s"] = quantile(sorted(v), 0.5)
    net = rj["status"]["network"]
    rpl = net.get("rpl", {})
    wu, me = rpl.get("warm_up", {}), rpl.get("measured", {})
    fr = {k: wu.get(f"{k.lower()}_frames", 0) + me.get(f"{k.lower()}_frames", 0) for k in ("DIS", "DIO", "DAO")}
    mesh = net["mesh"]
    return {
        "rpl_formed_s": rpl.get("formed_after_s"),
        "rpl_frames": fr,
        # the warm-up's counts are up to formation only when the clients started at formation
        "rpl_frames_to_formation": {k: wu.get(f"{k.lower()}_frames", 0) for k in ("DIS", "DIO", "DAO")}
        if rpl.get("formed_after_s") is not None and rpl.get("warm_up_s") == rpl.get("formed_after_s") else {},
        "rpl_frames_to_start": {k: wu.get(f"{k.lower()}_frames", 0) for k in ("DIS", "DIO", "DAO")},
        "exchanges_ended": len(ex),
        "responses": len(ok),
        "coap_pdr": len(ok) / len(ex) if ex else None,
        "transactions_per_s": len(ok) / span if span > 0 else None,
        "delay_mean_s": statistics.mean(delays) if delays else None,
        "delay_p50_s": quantile(delays, 0.5),
        "delay_p95_s": quantile(delays, 0.95),
        "delay_max_s": delays[-1] if delays else None,
        "exchanges_with_rtx": sum(1 for r in ex if int(r["transmissions"]) > 1),
        "per_client": {str(k): v for k, v in per.items()},
        "jain_answered": jain(v["answered"] for v in per.values()),
        # runs.csv link_pdr: acknowledged / sent with ACK requests, decoded by the addressee / sent without
        "mac_link_pdr_acked": float(row["link_pdr"]) if row["link_pdr"] and topo["params"]["mac_ack_request"] else None,
        "mac_link_pdr": float(row["link_pdr"]) if row["link_pdr"] and not topo["params"]["mac_ack_request"] else None,
        "mac_collisions_whole_run": int(row["collisions"]),
        "sim_time_s": float(row["sim_time_s"]),
        # RPL frames per 100 s after the clients' start (the measured part of the run)
        "rpl_rate_after": {k: 100 * me.get(f"{k.lower()}_frames", 0) / float(row["sim_time_s"]) for k in ("DIS", "DIO", "DAO")},
    }


def fmt(v, f="{:.3f}"):
    return "-" if v is None else f.format(v)


ROWS = [
    ("RPL formed (s)", lambda s: fmt(s.get("rpl_formed_s"), "{:.2f}")),
    ("DIS/DIO/DAO to formation", lambda s: "/".join(str(s.get("rpl_frames_to_formation", {}).get(k, "-")) for k in ("DIS", "DIO", "DAO"))),
    ("DIS/DIO/DAO to the clients' start", lambda s: "/".join(str(s.get("rpl_frames_to_start", {}).get(k, "-")) for k in ("DIS", "DIO", "DAO"))),
    ("DIS/DIO/DAO whole run", lambda s: "/".join(str(s["rpl_frames"].get(k, "-")) for k in ("DIS", "DIO", "DAO"))),
    ("DIS/DIO/DAO per 100 s after the clients' start", lambda s: "/".join(fmt(s.get("rpl_rate_after", {}).get(k), "{:.0f}") for k in ("DIS", "DIO", "DAO"))),
    ("exchanges ended / answered", lambda s: f"{s['exchanges_ended']} / {s['responses']}"),
    ("CoAP PDR", lambda s: fmt(s["coap_pdr"])),
    ("transactions/s", lambda s: fmt(s["transactions_per_s"], "{:.2f}")),
    ("delay p50 / p95 / mean (ms)", lambda s: " / ".join(fmt(s[k] and s[k] * 1e3, "{:.0f}") for k in ("delay_p50_s", "delay_p95_s", "delay_mean_s"))),
    ("exchanges with CoAP rtx", lambda s: str(s["exchanges_with_rtx"])),
    ("link PDR (acknowledged / decoded)", lambda s: fmt(s.get("mac_link_pdr_acked")) + " / " + fmt(s.get("mac_link_pdr"))),
    ("Jain's index (answered)", lambda s: fmt(s["jain_answered"], "{:.2f}")),
    ("answered per client", lambda s: " ".join(f"{k}:{v['answered']}" for k, v in s["per_client"].items())),
    ("delay p50 per client (ms)", lambda s: " ".join(f"{k}:{fmt(v.get('delay_p50_s') and v['delay_p50_s'] * 1e3, '{:.0f}')}" for k, v in s["per_client"].items())),
]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--coaplab", required=True)
    ap.add_argument("--run", type=int, default=0)
    ap.add_argument("--window", type=float)
    ap.add_argument("--cooja", nargs="*", default=[])
    ap.add_argument("--json", action="store_true")
    a = ap.parse_args()
    cols = []
    window = a.window
    for c in a.cooja:
        with open(os.path.join(c, "meta.json")) as f:
            meta = json.load(f)
        if window is None:
            window = meta["duration_s"] - meta["start_s"]
        sm = oracle.parse(c)
        after = meta["duration_s"] - meta["start_s"]
        sm["rpl_rate_after"] = {k: 100 * (sm["rpl_frames"][k] - sm["rpl_frames_to_start"][k]) / after
                                for k in ("DIS", "DIO", "DAO")}
        dl = {}
        for r in csv.DictReader(open(os.path.join(c, "exchanges.csv"))):
            if r["answered"] == "1" and float(r["start_s"]) >= meta.get("measure_from_s", 0):
                dl.setdefault(r["mote"], []).append(float(r["delay_s"]))
        for k, v in dl.items():
            if k in sm["per_client"]:
                sm["per_client"][k]["delay_p50_s"] = quantile(sorted(v), 0.5)
        cols.append((os.path.basename(c.rstrip("/")), sm))
    cols.insert(0, (f"coaplab run {a.run}", coaplab_summary(a.coaplab, a.run, window)))
    if a.json:
        print(json.dumps(dict(cols), indent=1))
        return 0
    print("| | " + " | ".join(n for n, _ in cols) + " |")
    print("|---" * (len(cols) + 1) + "|")
    for name, f in ROWS:
        print(f"| {name} | " + " | ".join(f(s) for _, s in cols) + " |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
