#!/usr/bin/env python3
"""Runs a coaplab mesh layout on Cooja (Contiki 3.0, native Cooja motes) and summarises the
logs (issue 31): RPL formation, RPL control frames, CoAP PDR, transactions per second,
per-request delay and retransmissions, link-layer delivery. See README.md beside this file.

    python3 scripts/cooja-oracle/run.py --setup SETUP.json                   # 3x3 grid, 60 s, 1 client
    python3 scripts/cooja-oracle/run.py --setup SETUP.json --clients 7 --duration 600
    python3 scripts/cooja-oracle/run.py --setup SETUP.json --scenario scenarios/rathod-ch5-grid.toml
    python3 scripts/cooja-oracle/run.py --parse DIR                           # summarise a finished run

--shape grid3 (default) is scenarios/rathod-ch3-grid.toml; --scenario takes any mesh
scenario, whose layout (run --run of its plan, default 0) comes from `cargo run --release -p
coaplab-lab --example mesh_layout` (or --layout FILE, that example's output saved). The
simulation file is written by gen_csc.py; Cooja runs headless in the output directory
(default results/cooja-oracle/<name>-<stamp>, git-ignored), which then holds sim.csc,
mote.log, radio.log, cooja.out, meta.json, summary.json and exchanges.csv (one row per
ended exchange: mote, seq, start_s, end_s, delay_s, transmissions, answered).

SETUP.json says where Cooja and the firmware are; this repository ships neither (README.md):

    {"cooja": ["/abs/cooja-launcher", "-nogui={csc}"],      # {csc}: the .csc, absolute path
     "firmware_dir": "/abs/firmware",                       # copied per configuration
     "firmware": {"root": {...}, "server": {...}, "client": {...}, "router": {...}},
     "defs": "-D...",                                       # always passed to the firmware
     "build_dir": "/abs/dir"}                               # optional: where the fw-<hash> copies go

The firmware entries are gen_csc.py's FIRMWARE.json entries, where {fwdir} stands for the
per-configuration copy of firmware_dir (its files symlinked into BUILD/fw-<hash>, BUILD =
"build_dir" or results/cooja-oracle, so that objects built with other -D settings are not
reused) and {defs} for "defs" plus what the options below select:
    -DORACLE_MAC_CSMA=0/1 (--mac), -DORACLE_ACK=0/1 (--ack), -DORACLE_INTERVAL_MS (--interval-ms),
    -DORACLE_START_S (--start-s), -DORACLE_REQ_BYTES / -DORACLE_RSP_BYTES (--req-bytes, --rsp-bytes).
"""

import argparse
import hashlib
import json
import os
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))
sys.path.insert(0, HERE)
import gen_csc  # noqa: E402

SHAPES = {"grid3": "scenarios/rathod-ch3-grid.toml"}


# --- layout -----------------------------------------------------------------------------

def layout_of(scenario, run, sets):
    cmd = ["cargo", "run", "-q", "--release", "-p", "coaplab-lab", "--example", "mesh_layout",
           "--", scenario, str(run)]
    for s in sets:
        cmd += ["--set", s]
    out = subprocess.run(cmd, cwd=ROOT, check=True, capture_output=True, text=True)
    return json.loads(out.stdout)


# --- 802.15.4 / 6LoWPAN decoding (enough for RPL control and data frames) ---------------

def _addr_len(mode):
    return {0: 0, 2: 2, 3: 8}.get(mode, 0)


def decode_frame(b):
    """(kind, dst_id or None for broadcast, what) of one PSDU without FCS.
    kind: 'ack', 'data', 'other'; what: 'DIS'/'DIO'/'DAO'/'DAO-ACK'/'ICMP'/'UDP'/'FRAGN'/'?'."""
    if len(b) < 3:
        return ("other", None, "?")
    fcf = b[0] | (b[1] << 8)
    ftype = fcf & 7
    if ftype == 2:
        return ("ack", None, "ack")
    if ftype != 1:
        return ("other", None, "?")
    panid_comp = (fcf >> 6) & 1
    dmode, smode = (fcf >> 10) & 3, (fcf >> 14) & 3
    i = 3
    dst = None
    if dmode:
        i += 2
        a = b[i:i + _addr_len(dmode)]
        i += _addr_len(dmode)
        if dmode == 2 and a == b"\xff\xff":
            dst = None
        elif dmode == 3:
            dst = a[0] | (a[1] << 8)  # little-endian: the last two address bytes, the mote id
        else:
            dst = a[0] | (a[1] << 8)
    if smode:
        if not panid_comp:
            i += 2
        i += _addr_len(smode)
    return ("data", dst, decode_6lowpan(b[i:]))


def decode_6lowpan(p):
    if not p:
        return "?"
    d = p[0]
    if d & 0xF8 == 0xC0:  # FRAG1
        p = p[4:]
    elif d & 0xF8 == 0xE0:  # FRAGN
        return "FRAGN"
    if not p or p[0] & 0xE0 != 0x60:
        return "?"
    b0, b1 = p[0], p[1]
    i = 2
    tf, nh, hlim = (b0 >> 3) & 3, (b0 >> 2) & 1, b0 & 3
    cid, sac, sam, m, dac, dam = (b1 >> 7) & 1, (b1 >> 6) & 1, (b1 >> 4) & 3, (b1 >> 3) & 1, (b1 >> 2) & 1, b1 & 3
    if cid:
        i += 1
    i += {0: 4, 1: 3, 2: 1, 3: 0}[tf]
    nxt = None
    if nh == 0:
        nxt = p[i]
        i += 1
    if hlim == 0:
        i += 1
    i += ({0: 0, 1: 8, 2: 2, 3: 0} if sac else {0: 16, 1: 8, 2: 2, 3: 0})[sam]
    if m:
        i += ({0: 6} if dac else {0: 16, 1: 6, 2: 4, 3: 1}).get(dam, 0)
    else:
        i += ({0: 0, 1: 8, 2: 2, 3: 0} if dac else {0: 16, 1: 8, 2: 2, 3: 0})[dam]
    if nh == 1:
        return "UDP" if i < len(p) and p[i] & 0xF8 == 0xF0 else "?"
    if nxt == 17:
        return "UDP"
    if nxt == 58 and i + 1 < len(p):
        t, c = p[i], p[i + 1]
        if t == 155:
            return {0: "DIS", 1: "DIO", 2: "DAO", 3: "DAO-ACK"}.get(c, "RPL?")
        return "ICMP"
    return "?"


# --- log parsing ------------------------------------------------------------------------

def parse(run_dir):
    with open(os.path.join(run_dir, "meta.json")) as f:
        meta = json.load(f)
    n = meta["nodes"]
    root_id = meta["root_id"]
    start_us = meta.get("measure_from_s", 0) * 1e6
    routes_full_us = None
    routes_max = routes_at_start = 0
    joined = {}
    parents = {}  # mote -> list of (t_us, parent id) from `ORACLE PARENT id` (firmware that logs it)
    reqs = {}  # (mote, seq) -> send time us
    ends = []  # (mote, seq, t_req_us, t_end_us, rtx, ok)
    with open(os.path.join(run_dir, "mote.log"), errors="replace") as f:
        for line in f:
            parts = line.split(" ", 2)
            if len(parts) < 3 or not parts[0].isdigit():
                continue
            t, mid, text = int(parts[0]), int(parts[1]), parts[2].strip()
            if not text.startswith("ORACLE "):
                continue
            w = text.split()
            if w[1] == "ROUTES" and mid == root_id:
                routes_now = int(w[2])
                routes_max = max(routes_max, routes_now)
                if t < meta.get("start_s", 0) * 1e6:
                    routes_at_start = routes_now
                if routes_full_us is None and routes_now >= n - 1:
                    routes_full_us = t
            elif w[1] == "JOIN":
                joined.setdefault(mid, t)
            elif w[1] == "PARENT" and len(w) > 2:
                # logged at every default-route add, which a DIO of the same parent refreshes
                pl = parents.setdefault(mid, [])
                if not pl or pl[-1][1] != int(w[2]):
                    pl.append((t, int(w[2])))
            elif w[1] == "REQ":
                reqs[(mid, int(w[2]))] = t
            elif w[1] in ("RSP", "TMO"):
                key = (mid, int(w[2]))
                if key in reqs:
                    ends.append((mid, key[1], reqs[key], t, int(w[3]), w[1] == "RSP"))
    frames = {"DIS": 0, "DIO": 0, "DAO": 0, "DAO-ACK": 0}
    frames_formed = dict(frames)  # up to RPL formation
    frames_start = dict(frames)  # up to the clients' earliest start (start_s)
    uni = uni_ok = uni_coll = bc = acks = data_frames = 0
    uni_acked = 0  # unicast data frames whose ACK (same sequence number, from the addressee) the sender decoded
    pending = {}  # sender -> (seq, addressee, end_us) of its last unicast data frame in the window
    radio = os.path.join(run_dir, "radio.log")
    if os.path.exists(radio):
        with open(radio) as f:
            for line in f:
                w = line.split()
                if len(w) < 6 or w[5] == "-":
                    continue
                dsts = set() if w[3] == "-" else {int(x) for x in w[3].split(",")}
                interf = set() if w[4] == "-" else {int(x) for x in w[4].split(",")}
                raw = bytes.fromhex(w[5])
                kind, dst, what = decode_frame(raw)
                if kind == "ack":
                    acks += 1
                    src = int(w[2])
                    for snd, (sq, to, end) in list(pending.items()):
                        if to == src and len(raw) >= 3 and raw[2] == sq and snd in dsts and snd not in interf \
                                and int(w[0]) - end <= 5000:
                            uni_acked += 1
                            del pending[snd]
                    continue
                if kind != "data":
                    continue
                t = int(w[0])
                if what in frames:
                    frames[what] += 1
                    if routes_full_us is not None and t <= routes_full_us:
                        frames_formed[what] += 1
                    if t < meta.get("start_s", 0) * 1e6:
                        frames_start[what] += 1
                if t < start_us:
                    continue
                data_frames += 1
                if dst is None:
                    bc += 1
                else:
                    uni += 1
                    pending[int(w[2])] = (raw[2], dst, int(w[1]))
                    if dst in dsts and dst not in interf:
                        uni_ok += 1
                    elif dst in interf:
                        uni_coll += 1
    measured = [e for e in ends if e[2] >= start_us]
    # parent switches: changes of a mote's preferred parent after its first one; those from
    # the clients' start on separately
    switches = sum(max(0, len(v) - 1) for v in parents.values())
    start_s_us = meta.get("start_s", 0) * 1e6
    switches_after = sum(1 for v in parents.values() for t, _ in v[1:] if t >= start_s_us)
    others = n - 1  # every mote but the root
    all_joined_us = max(joined.values()) if len(joined) >= others else None
    # coaplab's exchanges.csv columns where they exist (flow = the client's mote id here)
    with open(os.path.join(run_dir, "exchanges.csv"), "w") as f:
        f.write("mote,seq,start_s,end_s,delay_s,transmissions,answered\n")
        for m, sq, t0, t1, r, good in sorted(ends, key=lambda e: (e[2], e[0])):
            f.write(f"{m},{sq},{t0 / 1e6:.6f},{t1 / 1e6:.6f},{(t1 - t0) / 1e6:.6f},{r + 1},{int(good)}\n")
    ok = [e for e in measured if e[5]]
    delays = sorted((e[3] - e[2]) / 1e6 for e in ok)
    rtx = [e[4] for e in measured]
    span = 0.0
    if measured:
        span = (max(e[3] for e in measured) - min(e[2] for e in measured)) / 1e6
    per_client = {}
    for e in measured:
        c = per_client.setdefault(e[0], [0, 0])
        c[0] += 1
        c[1] += e[5]

    def q(p):
        if not delays:
            return None
        k = (len(delays) - 1) * p
        lo = int(k)
        hi = min(lo + 1, len(delays) - 1)
        return delays[lo] + (delays[hi] - delays[lo]) * (k - lo)

    answered = [v[1] for v in per_client.values()]
    jain = (sum(answered) ** 2 / (len(answered) * sum(x * x for x in answered))) \
        if answered and any(answered) else None
    return {
        "nodes": n,
        "rpl_formed_s": None if routes_full_us is None else routes_full_us / 1e6,
        "rpl_joined": len(joined),
        "rpl_joined_at_start": sum(1 for t in joined.values() if t < meta.get("start_s", 0) * 1e6 + 1e6),
        "rpl_all_joined_s": None if all_joined_us is None else all_joined_us / 1e6,
        "rpl_parent_switches": switches if parents else None,
        "rpl_parent_switches_after_start": switches_after if parents else None,
        "rpl_routes_max": routes_max,
        "rpl_routes_at_start": routes_at_start,
        "rpl_frames": frames,
        "rpl_frames_to_formation": frames_formed,
        "rpl_frames_to_start": frames_start,
        "jain_answered": jain,
        "exchanges_ended": len(measured),
        "requests_sent": sum(1 for k, t in reqs.items() if t >= start_us),
        "responses": len(ok),
        "coap_pdr": (len(ok) / len(measured)) if measured else None,
        "transactions_per_s": (len(ok) / span) if span > 0 else None,
        "delay_mean_s": statistics.mean(delays) if delays else None,
        "delay_p50_s": q(0.5),
        "delay_p95_s": q(0.95),
        "delay_max_s": delays[-1] if delays else None,
        "retransmissions": sum(rtx),
        "exchanges_with_rtx": sum(1 for r in rtx if r > 0),
        "per_client": {str(k): {"ended": v[0], "answered": v[1]} for k, v in sorted(per_client.items())},
        "mac_data_frames": data_frames,
        "mac_broadcast_frames": bc,
        "mac_unicast_frames": uni,
        "mac_unicast_received": uni_ok,
        "mac_unicast_collided": uni_coll,
        "mac_link_pdr": (uni_ok / uni) if uni else None,
        "mac_unicast_acked": uni_acked,
        "mac_link_pdr_acked": (uni_acked / uni) if uni and acks else None,
        "mac_ack_frames": acks,
    }


def table(s, meta):
    def f(v, fmt="{:.3f}"):
        return "-" if v is None else fmt.format(v)
    rows = [
        ("layout", f"{meta['name']} ({s['nodes']} nodes, {meta['clients']} sending clients)"),
        ("stack", meta["stack"]),
        ("simulated", f"{meta['duration_s']:.0f} s (clients start after {meta['start_s']} s and joining)"),
        ("wall", f"{meta.get('wall_s', 0):.1f} s (compile + simulate)"),
        ("RPL formed (root has routes to all)", f(s["rpl_formed_s"], "{:.3f} s")),
        ("RPL: all non-root motes joined by", f(s["rpl_all_joined_s"], "{:.1f} s") + f" ({s['rpl_joined']} of {s['nodes'] - 1} joined)"),
        ("RPL: root's downward routes, most", f"{s['rpl_routes_max']} of {s['nodes'] - 1}"),
        ("RPL parent switches (from the clients' start)", f"{s['rpl_parent_switches']} ({s['rpl_parent_switches_after_start']})"),
        ("RPL frames DIS/DIO/DAO/DAO-ACK", "/".join(str(s["rpl_frames"][k]) for k in ("DIS", "DIO", "DAO", "DAO-ACK"))),
        ("CoAP requests sent / ended / answered", f"{s['requests_sent']} / {s['exchanges_ended']} / {s['responses']}"),
        ("CoAP PDR (answered / ended)", f(s["coap_pdr"], "{:.4f}")),
        ("transactions/s (answered / active span)", f(s["transactions_per_s"], "{:.2f}")),
        ("delay mean / p50 / p95 / max", " / ".join(f(s[k], "{:.4f}") for k in ("delay_mean_s", "delay_p50_s", "delay_p95_s", "delay_max_s")) + " s"),
        ("CoAP retransmissions (exchanges with any)", f"{s['retransmissions']} ({s['exchanges_with_rtx']})"),
        ("MAC data frames (bcast / unicast)", f"{s['mac_data_frames']} ({s['mac_broadcast_frames']} / {s['mac_unicast_frames']})"),
        ("MAC unicast link PDR (collided)", f(s["mac_link_pdr"], "{:.4f}") + f" ({s['mac_unicast_collided']})"),
        ("MAC unicast acknowledged (share)", f"{s['mac_unicast_acked']} ({f(s['mac_link_pdr_acked'], '{:.4f}')})"),
        ("MAC ACK frames", str(s["mac_ack_frames"])),
        ("Jain's index, answered per client", f(s["jain_answered"], "{:.3f}")),
        ("answered per client (mote: n)", " ".join(f"{k}:{v['answered']}" for k, v in s["per_client"].items())),
    ]
    w = max(len(r[0]) for r in rows)
    return "\n".join(f"{a:<{w}}  {b}" for a, b in rows)


# --- running ----------------------------------------------------------------------------

def firmware_copy(setup, defs, cache):
    src = setup["firmware_dir"]
    h = hashlib.sha256((os.path.abspath(src) + "\0" + defs).encode()).hexdigest()[:12]
    d = os.path.join(cache, f"fw-{h}")
    os.makedirs(d, exist_ok=True)
    for name in os.listdir(src):
        p = os.path.join(src, name)
        if os.path.isfile(p) and not name.startswith("obj_") and not name.endswith((".co", ".cooja", ".a", ".o")):
            link = os.path.join(d, name)
            if not os.path.lexists(link):
                os.symlink(os.path.realpath(p), link)
    return d


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--setup", help="SETUP.json (where Cooja and the firmware are)")
    ap.add_argument("--parse", metavar="DIR", help="only summarise the finished run in DIR")
    ap.add_argument("--shape", default="grid3", choices=sorted(SHAPES))
    ap.add_argument("--scenario", help="a mesh scenario (instead of --shape)")
    ap.add_argument("--run", type=int, default=0, help="run id of the scenario's plan (its seed)")
    ap.add_argument("--set", action="append", default=[], help="scenario override KEY=VALUE")
    ap.add_argument("--layout", help="mesh_layout's JSON output (instead of running it)")
    ap.add_argument("--duration", type=float, default=60.0, help="simulated seconds")
    ap.add_argument("--clients", type=int, default=1, help="sending clients (default 1; 0 = all)")
    ap.add_argument("--seed", type=int, help="Cooja seed (default the scenario run's)")
    ap.add_argument("--mac", choices=["csma", "nullmac"], default="csma")
    ap.add_argument("--ack", type=int, choices=[0, 1], default=1, help="802.15.4 frame ACKs")
    ap.add_argument("--interval-ms", type=int, default=100, help="request period of a client")
    ap.add_argument("--start-s", type=int, default=30, help="earliest client start (s)")
    ap.add_argument("--req-bytes", type=int, default=51)
    ap.add_argument("--rsp-bytes", type=int, default=53)
    ap.add_argument("--no-snap", action="store_true", help="raw coordinates in the .csc (gen_csc.py SNAP)")
    ap.add_argument("--out", help="output directory")
    ap.add_argument("--json", action="store_true", help="print the summary as JSON")
    a = ap.parse_args(argv)

    if a.parse:
        with open(os.path.join(a.parse, "meta.json")) as f:
            meta = json.load(f)
        s = parse(a.parse)
        print(json.dumps(s, indent=1) if a.json else table(s, meta))
        return 0
    if not a.setup:
        ap.error("--setup SETUP.json is needed to run Cooja (or --parse DIR)")
    with open(a.setup) as f:
        setup = json.load(f)

    scenario = a.scenario or SHAPES[a.shape]
    name = os.path.splitext(os.path.basename(scenario))[0]
    if a.layout:
        with open(a.layout) as f:
            layout = json.load(f)
    else:
        layout = layout_of(scenario, a.run, a.set)
    nodes = layout["topology"]["nodes"]
    n_clients = sum(1 for x in nodes if x["role"] == "client")
    clients = n_clients if a.clients == 0 else a.clients
    defs = " ".join([
        setup.get("defs", ""),
        f"-DORACLE_MAC_CSMA={1 if a.mac == 'csma' else 0}",
        f"-DORACLE_ACK={a.ack}",
        f"-DORACLE_INTERVAL_MS={a.interval_ms}",
        f"-DORACLE_START_S={a.start_s}",
        f"-DORACLE_REQ_BYTES={a.req_bytes}",
        f"-DORACLE_RSP_BYTES={a.rsp_bytes}",
    ]).strip()
    results = os.path.join(ROOT, "results", "cooja-oracle")
    out = os.path.abspath(a.out or os.path.join(results, f"{name}-{time.strftime('%Y%m%d-%H%M%S')}"))
    os.makedirs(out, exist_ok=True)
    # where Cooja compiles the motes: SETUP.json's "build_dir" (keep builds of Contiki out of any
    # repository), else results/cooja-oracle (git-ignored)
    fwdir = firmware_copy(setup, defs, setup.get("build_dir") or results)
    firmware = {"defs": defs}
    for role, e in setup["firmware"].items():
        firmware[role] = {k: v.replace("{fwdir}", fwdir) for k, v in e.items()}
    csc = os.path.join(out, "sim.csc")
    # a layout with "mobility" (mesh_layout of a mobile scenario): the trajectories start at
    # the clients' start, as coaplab's movement starts after its warm-up
    moves = gen_csc.moves_of(layout, a.start_s, snap=not a.no_snap)
    moves_file = ""
    if moves:
        moves_file = "moves.txt"
        gen_csc.write_moves(moves, os.path.join(out, moves_file))
    with open(csc, "w") as f:
        f.write(gen_csc.generate(layout, firmware, a.duration, clients, a.seed, snap=not a.no_snap,
                                 moves_file=moves_file))
    root_id = 1 + next(i for i, x in enumerate(nodes) if x["role"] == "border-router")
    meta = {
        "name": name, "scenario": scenario, "run": a.run, "sets": a.set,
        "seed": a.seed if a.seed is not None else layout.get("seed"),
        "nodes": len(nodes), "root_id": root_id, "clients": clients,
        "duration_s": a.duration, "start_s": a.start_s, "interval_ms": a.interval_ms,
        "stack": f"RPL storing + 6LoWPAN, {a.mac.upper() if a.mac == 'csma' else 'nullmac'} + NullRDC, "
                 f"frame ACKs {'on' if a.ack else 'off'}; CON GET {a.req_bytes} B -> {a.rsp_bytes} B "
                 f"every {a.interval_ms} ms",
        "defs": defs, "layout": layout, "snap": not a.no_snap,
        "moves": len(moves) if moves else 0,
    }
    cmd = [c.replace("{csc}", csc) for c in setup["cooja"]]
    t0 = time.time()
    with open(os.path.join(out, "cooja.out"), "w") as log:
        rc = subprocess.run(cmd, cwd=out, stdout=log, stderr=subprocess.STDOUT).returncode
    meta["wall_s"] = time.time() - t0
    meta["cooja_exit"] = rc
    with open(os.path.join(out, "meta.json"), "w") as f:
        json.dump(meta, f, indent=1)
    if rc != 0:
        sys.exit(f"run.py: Cooja exited {rc}; see {out}/cooja.out")
    s = parse(out)
    with open(os.path.join(out, "summary.json"), "w") as f:
        json.dump(s, f, indent=1)
    print(f"# {out}")
    print(json.dumps(s, indent=1) if a.json else table(s, meta))
    return 0


if __name__ == "__main__":
    sys.exit(main())
