#!/usr/bin/env python3
"""Do retransmissions come in bursts, and on which clock? (docs/calibration.md, "The kernel as
TCP oracle", item 3: Linux's timer wheel.) Standard library plus tshark; reads the same inputs as
losses.py:

    bursts.py kernel PREFIX [FROM_S TO_S]     PREFIX-c.pcap / PREFIX-s.pcap from capture.sh
    bursts.py model TRACE_RUN [FROM_S TO_S]   a simulated run's trace directory (csv format)

Prints, per bottleneck direction and for the window [FROM_S, TO_S) (seconds from the first
captured packet; default: all): the packet mix per second (new data, retransmitted data, pure
ACKs, other = SYN / FIN) and the share of each lost on the link; the retransmissions that came in
bursts (five or more, each within 10 ms of the previous one) and how many of those were lost; and
the phase of every retransmission time against the lattices of a HZ-250 timer wheel (256 ms for
waits of 2.016-16.128 s, 2.048 s for 16.128-129 s) in 16 bins: one full bin means the timers
fired on that lattice, a flat histogram means exact timers. (In a kernel capture the SYN-ACKs all
carry IP ID 0, so their losses, under "other", are not told apart; data and ACKs are.)
"""

import collections
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import losses  # noqa: E402

BURST_GAP_S = 0.010
BURST_MIN = 5
LATTICES = ((2.016, 16.128, 0.256), (16.128, 129.024, 2.048))


def classify(packets, flow_of):
    """Tags each packet with its kind and, for data, the wait since its previous copy."""
    last = {}
    for p in packets:
        if p["len"] > 0:
            k = (flow_of(p), p["seq"])
            p["kind"] = "data rexmit" if k in last else "data new"
            p["wait"] = p["t"] - last[k] if k in last else None
            last[k] = p["t"]
        else:
            p["kind"] = "pure ACK" if p["pure"] else "other"


def mix(name, packets, lo, hi):
    span = hi - lo
    inside = [p for p in packets if lo <= p["t"] < hi]
    kinds = collections.Counter(p["kind"] for p in inside)
    lost = collections.Counter(p["kind"] for p in inside if p["lost"])
    print(f"{name} [{lo:.0f}, {hi:.0f}) s: {len(inside) / span:.2f} packets/s")
    for k in sorted(kinds):
        print(f"  {k:12s} {kinds[k] / span:6.2f}/s, lost {lost[k]} of {kinds[k]} ({100 * lost[k] / kinds[k]:.1f} %)")


def bursts(name, packets, lo, hi):
    rex = [p for p in packets if p["kind"] == "data rexmit" and lo <= p["t"] < hi]
    groups, cur = [], []
    for p in rex:
        if cur and p["t"] - cur[-1]["t"] > BURST_GAP_S:
            groups.append(cur)
            cur = []
        cur.append(p)
    if cur:
        groups.append(cur)
    big = [g for g in groups if len(g) >= BURST_MIN]
    n_big = sum(len(g) for g in big)
    lost_big = sum(p["lost"] for g in big for p in g)
    largest = max((len(g) for g in groups), default=0)
    print(
        f"{name} retransmissions {len(rex)}: {n_big} in bursts of >= {BURST_MIN} "
        f"(lost {lost_big}), largest burst {largest}; the others lost "
        f"{sum(p['lost'] for p in rex) - lost_big} of {len(rex) - n_big}"
    )
    for low, high, grain in LATTICES:
        phases = [p["t"] % grain / grain for p in rex if p["wait"] is not None and low <= p["wait"] < high]
        hist = collections.Counter(min(int(x * 16), 15) for x in phases)
        print(f"  waits {low}-{high} s, phase mod {grain} s (16 bins): {[hist[i] for i in range(16)]}")


def main():
    if len(sys.argv) not in (3, 5) or sys.argv[1] not in ("kernel", "model"):
        print(__doc__)
        return 2
    down, up, client_of_down, client_of_up = (losses.kernel if sys.argv[1] == "kernel" else losses.model)(sys.argv[2])
    t0 = min(down[0]["t"], up[0]["t"])
    for p in down + up:
        p["t"] -= t0
    lo, hi = (float(sys.argv[3]), float(sys.argv[4])) if len(sys.argv) == 5 else (0.0, max(down[-1]["t"], up[-1]["t"]) + 1e-9)
    classify(down, client_of_down)
    classify(up, client_of_up)
    for name, packets in (("server -> clients (downlink)", down), ("clients -> server (uplink)", up)):
        mix(name, packets, lo, hi)
        bursts(name, packets, lo, hi)
    return 0


if __name__ == "__main__":
    sys.exit(main())
