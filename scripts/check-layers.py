#!/usr/bin/env python3
"""Fails when a crate depends on a crate of a higher layer (DESIGN.md: lower never imports higher)."""
import json
import subprocess
import sys

# Layer order of DESIGN.md, lowest first. cc does not need wire, so they share a rank.
RANK = {
    # The ground floor: time, rng, parameter tables (crates/base).
    "coaplab-base": -1,
    "coaplab-wire": 0,
    "coaplab-cc": 0,
    "coaplab-endpoint": 1,
    "coaplab-netsim": 2,
    "coaplab-emu": 3,
    "coaplab-lab": 4,
    "coaplab": 5,
    # Users' crates on top of everything (examples/): they may use any layer.
    "coaplab-custom-algorithm": 6,
}

meta = json.loads(subprocess.check_output(
    ["cargo", "metadata", "--format-version", "1", "--no-deps", "--locked"]))
bad = []
for pkg in meta["packages"]:
    name = pkg["name"]
    if name not in RANK:
        bad.append(f"{name}: crate not in the layer table of scripts/check-layers.py")
        continue
    for dep in pkg["dependencies"]:
        if dep["name"] in RANK and dep["kind"] in (None, "build"):
            if RANK[dep["name"]] >= RANK[name] and dep["name"] != name:
                bad.append(f"{name} (layer {RANK[name]}) depends on {dep['name']} (layer {RANK[dep['name']]})")
for line in bad:
    print("layer violation:", line, file=sys.stderr)
if bad:
    sys.exit(1)
print(f"layers ok: {len(meta['packages'])} crates")
