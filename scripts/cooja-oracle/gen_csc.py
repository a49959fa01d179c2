#!/usr/bin/env python3
"""Writes a Cooja simulation file (.csc, Cooja of Contiki 3.0) from a coaplab mesh layout
(issue 31): the same node positions, UDGM ranges and success ratios, and seed as a coaplab
mesh scenario, for running the scenario's mesh on Cooja as an independent oracle.

    python3 scripts/cooja-oracle/gen_csc.py LAYOUT.json FIRMWARE.json OUT.csc \\
        [--duration S] [--clients N] [--seed N] [--radio-log FILE] [--log FILE]

LAYOUT.json: what `cargo run --release -p coaplab-lab --example mesh_layout -- SCENARIO`
prints (or a coaplab results directory's manifest.json: its first combination's topology is
taken). Node i of the layout becomes Cooja mote i+1 at (x_m, y_m); UDGM gets
transmitting_range = tx_range_m, interference_range = interference_range_m,
success_ratio_tx/rx = success_ratio_tx/rx; the simulation's randomseed is the run's seed
(Cooja's UDGM draws its success ratios from it; the CSMA backoffs of native Cooja motes
draw from Contiki's random_rand(), seeded per mote from the mote id by Cooja).

FIRMWARE.json says which Contiki program each role runs (Cooja compiles it when it loads
the simulation; this script builds nothing):

    {"root":   {"source": "/abs/oracle-root.c",   "commands": "..."},
     "server": {"source": "/abs/server.c",        "commands": "..."},
     "client": {"source": "/abs/oracle-client.c", "commands": "... {server_id} {defs}"},
     "router": {"source": "...", "commands": "..."},
     "defs":   "-DORACLE_MAC_CSMA=1 ..."}

In the commands, {server_id} is replaced by the Cooja mote id of the client's server (flow
k of the layout addresses server k mod S, as coaplab does), {defs} by "defs" plus the
options below. Roles: border-router -> root, server -> server, the first N client nodes
(--clients, default all) -> client, the remaining clients and routers -> router.

The ScriptRunner script (JavaScript, run when Cooja runs the simulation headless)
ends the simulation after --duration simulated seconds with exit status 0 and writes
  * every mote's log line as `<time_us> <mote id> <text>` to --log (default mote.log), and
  * every finished radio transmission as `<start_us> <end_us> <src> <dsts> <interfered>
    <hex bytes>` to --radio-log (default radio.log) from the radio medium's observer
    (Cooja 3.0 has no headless radio logger; ids comma-separated, `-` for none),
both relative to Cooja's working directory (run.py runs it in the run's directory).
"""

import argparse
import json
import os
import sys
from xml.sax.saxutils import escape

CONTIKI_INTERFACES = [
    "org.contikios.cooja.interfaces.Position",
    "org.contikios.cooja.interfaces.Battery",
    "org.contikios.cooja.contikimote.interfaces.ContikiVib",
    "org.contikios.cooja.contikimote.interfaces.ContikiMoteID",
    "org.contikios.cooja.contikimote.interfaces.ContikiRS232",
    "org.contikios.cooja.contikimote.interfaces.ContikiBeeper",
    "org.contikios.cooja.interfaces.RimeAddress",
    "org.contikios.cooja.contikimote.interfaces.ContikiIPAddress",
    "org.contikios.cooja.contikimote.interfaces.ContikiRadio",
    "org.contikios.cooja.contikimote.interfaces.ContikiButton",
    "org.contikios.cooja.contikimote.interfaces.ContikiPIR",
    "org.contikios.cooja.contikimote.interfaces.ContikiClock",
    "org.contikios.cooja.contikimote.interfaces.ContikiLED",
    "org.contikios.cooja.contikimote.interfaces.ContikiCFS",
    "org.contikios.cooja.interfaces.Mote2MoteRelations",
    "org.contikios.cooja.interfaces.MoteAttributes",
]

# The script: Cooja 3.0's ScriptRunner wraps it (ScriptParser): `msg`, `id`, `time` (us)
# and `mote` are set before each step; YIELD() waits for the next mote output or generated
# message. TIMEOUT(ms, action) is the safety net only (it marks the test failed).
SCRIPT = r"""TIMEOUT(%(timeout_ms)d, oracle_close());
END_US = %(end_us)d;
W = new java.io.BufferedWriter(new java.io.FileWriter("%(log)s"));
R = new java.io.BufferedWriter(new java.io.FileWriter("%(radio_log)s"));
closed = false;
/* global (no var): the TIMEOUT action runs outside the script's function */
oracle_close = function() { if (!closed) { closed = true; W.close(); R.close(); } };
function ids(radios) {
  if (radios == null || radios.length == 0) { return "-"; }
  var s = [];
  for (var i = 0; i < radios.length; i++) { s.push(radios[i].getMote().getID()); }
  return s.join(",");
}
var medium = sim.getRadioMedium();
var last = null;
medium.addRadioMediumObserver(new java.util.Observer(function(o, arg) {
  var c = medium.getLastConnection();
  if (c == null || c === last || closed) { return; }
  last = c;
  var p = c.getSource().getLastPacketTransmitted();
  var hex = "-";
  if (p != null) {
    var d = p.getPacketData();
    var h = [];
    for (var i = 0; i < d.length; i++) { h.push(("0" + (d[i] & 0xff).toString(16)).slice(-2)); }
    hex = h.join("");
  }
  R.write(c.getStartTime() + " " + sim.getSimulationTime() + " " + c.getSource().getMote().getID() +
          " " + ids(c.getDestinations()) + " " + ids(c.getInterfered()) + " " + hex + "\n");
}));
/* Mobility (MOVES_FILE not empty): lines `<time_us> <mote id> <x> <y>`, sorted by time; at
   each listed instant the mote is put there (Cooja's UDGM takes the positions at each
   transmission's start). One generated message per distinct instant, each arming the next. */
var MOVES_FILE = "%(moves_file)s";
var moves = [];
if (MOVES_FILE != "") {
  var rd = new java.io.BufferedReader(new java.io.FileReader(MOVES_FILE));
  var ln;
  while ((ln = rd.readLine()) != null) {
    var f = String(ln).split(" ");
    if (f.length == 4) { moves.push([parseInt(f[0]), parseInt(f[1]), parseFloat(f[2]), parseFloat(f[3])]); }
  }
  rd.close();
}
var mi = 0;
var moved = 0;
function arm_move() {
  if (mi < moves.length) { GENERATE_MSG(Math.max(0, Math.round((moves[mi][0] - time) / 1000)), "ORACLE-MOVE"); }
}
var armed = false;
while (true) {
  /* GENERATE_MSG takes a delay in ms; it needs a first mote message (its `mote`). */
  if (!armed) { armed = true; GENERATE_MSG(Math.ceil((END_US - time) / 1000), "ORACLE-END"); arm_move(); }
  if (time >= END_US) { break; }
  if (msg == "ORACLE-MOVE") {
    while (mi < moves.length && moves[mi][0] <= time + 500) {
      sim.getMoteWithID(moves[mi][1]).getInterfaces().getPosition().setCoordinates(moves[mi][2], moves[mi][3], 0);
      mi++;
      moved++;
    }
    arm_move();
    YIELD();
    continue;
  }
  W.write(time + " " + id + " " + msg + "\n");
  YIELD();
}
if (MOVES_FILE != "") { log.log("oracle: " + moved + " of " + moves.length + " position changes applied\n"); }
oracle_close();
log.log("oracle: simulation ended at " + time + " us\n");
log.testOK();
"""


def load_layout(path):
    with open(path) as f:
        doc = json.load(f)
    if "combinations" in doc:  # a manifest.json
        combo = doc["combinations"][0]
        cfg = combo.get("config", combo)
        seed = None
        runs = doc.get("runs") or []
        if runs and isinstance(runs[0], dict):
            seed = runs[0].get("seed")
        return {"topology": cfg["topology"], "seed": seed, "scenario": doc.get("scenario")}
    return doc


def assign(nodes, clients):
    """Role of each node for Cooja: root/server/client/router; the client's server id."""
    servers = [i for i, n in enumerate(nodes) if n["role"] == "server"]
    roots = [i for i, n in enumerate(nodes) if n["role"] == "border-router"]
    if len(roots) != 1:
        sys.exit("gen_csc: the layout needs exactly one border router")
    if not servers:
        sys.exit("gen_csc: the layout has no server node (an off-mesh server is not supported)")
    client_nodes = [i for i, n in enumerate(nodes) if n["role"] == "client"]
    if clients is None:
        clients = len(client_nodes)
    if clients > len(client_nodes):
        sys.exit(f"gen_csc: {clients} clients asked, the layout has {len(client_nodes)}")
    out = []
    for i, n in enumerate(nodes):
        role = n["role"]
        if role == "border-router":
            out.append(("root", None))
        elif role == "server":
            out.append(("server", None))
        elif role == "client" and client_nodes.index(i) < clients:
            k = client_nodes.index(i)
            out.append(("client", servers[k % len(servers)] + 1))
        else:
            out.append(("router", None))
    return out


def motetype(ident, desc, source, commands):
    lines = [
        "    <motetype>",
        "      org.contikios.cooja.contikimote.ContikiMoteType",
        f"      <identifier>{ident}</identifier>",
        f"      <description>{escape(desc)}</description>",
        f"      <source>{escape(source)}</source>",
        f"      <commands>{escape(commands)}</commands>",
    ]
    lines += [f"      <moteinterface>{i}</moteinterface>" for i in CONTIKI_INTERFACES]
    lines += ["      <symbols>false</symbols>", "    </motetype>"]
    return "\n".join(lines)


def mote(mid, x, y, ident):
    return f"""    <mote>
      <interface_config>
        org.contikios.cooja.interfaces.Position
        <x>{x!r}</x>
        <y>{y!r}</y>
        <z>0.0</z>
      </interface_config>
      <interface_config>
        org.contikios.cooja.contikimote.interfaces.ContikiMoteID
        <id>{mid}</id>
      </interface_config>
      <interface_config>
        org.contikios.cooja.contikimote.interfaces.ContikiRadio
        <bitrate>250.0</bitrate>
      </interface_config>
      <motetype_identifier>{ident}</motetype_identifier>
    </mote>"""


# coaplab counts a distance within a relative 1e-9 of a range as on it (docs/mesh-model.md,
# "Radio medium"); Cooja's UDGM compares the raw doubles, so a flower petal placed with cos/sin
# (10.000000000000002 m) would lose its links. Shrinking every coordinate by this factor puts
# those distances back inside the range and moves no genuine distance across it.
SNAP = 1 - 1e-10


def moves_of(layout, offset_s, snap=True):
    """Position changes for Cooja from mesh_layout's "mobility" object (None without it):
    sorted (time_us, mote id, x, y), time = offset_s (the start of movement in Cooja's clock,
    i.e. the clients' start after the warm-up) + the trajectory's t_s; the same coordinate
    snap as the motes' places. Each mote's first entry at t = 0 is its layout place."""
    mob = layout.get("mobility")
    if not mob:
        return None
    k = SNAP if snap else 1.0
    out = []
    for nd in mob["nodes"]:
        for t, x, y in nd["positions"]:
            out.append((int(round((offset_s + t) * 1e6)), nd["node"] + 1, x * k, y * k))
    out.sort()
    return out


def write_moves(moves, path):
    with open(path, "w") as f:
        for t, m, x, y in moves:
            f.write(f"{t} {m} {x!r} {y!r}\n")


def generate(layout, firmware, duration_s, clients=None, seed=None, log="mote.log",
             radio_log="radio.log", title=None, snap=True, moves_file=""):
    topo = layout["topology"]
    if topo.get("kind") != "mesh":
        sys.exit("gen_csc: not a mesh layout")
    nodes = topo["nodes"]
    p = topo["params"]
    if seed is None:
        seed = layout.get("seed") or 1
    seed = int(seed) % (2**63)
    roles = assign(nodes, clients)
    defs = firmware.get("defs", "")
    types = {}  # (role, server id) -> identifier
    blocks = []
    for role, sid in roles:
        key = (role, sid)
        if key in types:
            continue
        fw = firmware.get(role)
        if fw is None:
            sys.exit(f"gen_csc: FIRMWARE.json has no {role!r} entry")
        ident = f"mtype_{role}" + (f"_{sid}" if sid else "")
        types[key] = ident
        cmds = fw["commands"].format(server_id=sid or 0, defs=defs)
        desc = f"coaplab oracle {role}" + (f" (server mote {sid})" if sid else "")
        blocks.append(motetype(ident, desc, fw["source"], cmds))
    k = SNAP if snap else 1.0
    motes = [
        mote(i + 1, float(n["x_m"]) * k, float(n["y_m"]) * k, types[roles[i]])
        for i, n in enumerate(nodes)
    ]
    end_us = int(round(duration_s * 1e6))
    script = SCRIPT % {
        "timeout_ms": int(duration_s * 1000) + 60_000,
        "end_us": end_us,
        "log": log,
        "radio_log": radio_log,
        "moves_file": moves_file,
    }
    title = title or f"coaplab {layout.get('scenario', 'mesh')} on Cooja"
    return f"""<?xml version="1.0" encoding="UTF-8"?>
<!-- written by scripts/cooja-oracle/gen_csc.py from a coaplab mesh layout -->
<simconf>
  <simulation>
    <title>{escape(title)}</title>
    <randomseed>{seed}</randomseed>
    <motedelay_us>1000000</motedelay_us>
    <radiomedium>
      org.contikios.cooja.radiomediums.UDGM
      <transmitting_range>{float(p["tx_range_m"])!r}</transmitting_range>
      <interference_range>{float(p["interference_range_m"])!r}</interference_range>
      <success_ratio_tx>{float(p["success_ratio_tx"])!r}</success_ratio_tx>
      <success_ratio_rx>{float(p["success_ratio_rx"])!r}</success_ratio_rx>
    </radiomedium>
    <events>
      <logoutput>40000</logoutput>
    </events>
{chr(10).join(blocks)}
{chr(10).join(motes)}
  </simulation>
  <plugin>
    org.contikios.cooja.plugins.ScriptRunner
    <plugin_config>
      <script>{escape(script)}</script>
      <active>true</active>
    </plugin_config>
    <width>600</width>
    <z>0</z>
    <height>700</height>
    <location_x>0</location_x>
    <location_y>0</location_y>
  </plugin>
</simconf>
"""


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("layout")
    ap.add_argument("firmware")
    ap.add_argument("out")
    ap.add_argument("--duration", type=float, default=60.0, help="simulated seconds")
    ap.add_argument("--clients", type=int, help="client nodes that send (default all)")
    ap.add_argument("--seed", type=int, help="Cooja's random seed (default the run's)")
    ap.add_argument("--log", default="mote.log")
    ap.add_argument("--radio-log", default="radio.log")
    ap.add_argument("--no-snap", action="store_true",
                    help="write the raw coordinates (Cooja then drops links a rounding error puts beyond the range)")
    ap.add_argument("--move-from", type=float, default=120.0,
                    help="Cooja instant (s) at which the layout's mobility trajectories start (its t = 0)")
    a = ap.parse_args(argv)
    layout = load_layout(a.layout)
    with open(a.firmware) as f:
        firmware = json.load(f)
    moves = moves_of(layout, a.move_from, snap=not a.no_snap)
    moves_file = ""
    if moves:
        moves_file = os.path.splitext(os.path.basename(a.out))[0] + ".moves"
        write_moves(moves, os.path.join(os.path.dirname(os.path.abspath(a.out)), moves_file))
    text = generate(layout, firmware, a.duration, a.clients, a.seed, a.log, a.radio_log,
                    snap=not a.no_snap, moves_file=moves_file)
    with open(a.out, "w") as f:
        f.write(text)


if __name__ == "__main__":
    main()
