#!/usr/bin/env python3
"""The kernel's side of an emulated CoAP-over-TCP run, from tracepoints (docs/calibration.md).

run.sh can record the tracepoints tcp:tcp_cong_state_set, tcp:tcp_retransmit_skb and
tcp:tcp_probe of every socket on port 5683 (TRACE=1; a tracefs instance, filtered by port)
while emulated runs go on. This script reads that text trace (trace_pipe format) and prints,
per connection of the server (the data sender of a long transfer), when it entered each
congestion state (0 Open, 1 Disorder, 2 CWR, 3 Recovery, 4 Loss = a retransmission timeout),
how many segments it retransmitted in each state, and for each entry into Loss the time since
the later of the last ACK that advanced snd_una and the previous Loss entry: the RTO that
expired (the kernel re-arms the timer at both). Standard library only.

    ktrace.py TRACE [--side server|client|both] [--states] [--min-events N]
"""

import argparse
import collections
import re

LINE = re.compile(r"^\s*(\S.*?)-(\d+)\s+\[\d+\]\s+\S+\s+([\d.]+): (\w+): (.*)$")
KV = re.compile(r"(\w+)=(\S+)")
STATE = {0: "Open", 1: "Disorder", 2: "CWR", 3: "Recovery", 4: "Loss"}


def conn_key(ev, kv):
    """(local port, remote port) of the socket the event belongs to."""
    if ev == "tcp_probe":
        # tcp_probe runs on the receiving socket: src is the local end.
        return int(kv["src"].rsplit(":", 1)[1]), int(kv["dest"].rsplit(":", 1)[1])
    return int(kv["sport"]), int(kv["dport"])


def parse(path):
    conns = collections.defaultdict(list)
    with open(path, errors="replace") as f:
        for line in f:
            m = LINE.match(line)
            if not m:
                continue
            t = float(m.group(3))
            ev = m.group(4)
            kv = dict(KV.findall(m.group(5)))
            conns[conn_key(ev, kv)].append((t, ev, kv))
    return conns


def summarize(key, events, show_states):
    # After the run the namespaces are gone and the closed sockets retransmit their FIN into
    # the void until they give up: stop at the last segment the socket received.
    last_rx = max((i for i, e in enumerate(events) if e[1] == "tcp_probe"), default=len(events) - 1)
    events = events[: last_rx + 1]
    t0 = events[0][0]
    state = 0
    per_state_rexmit = collections.Counter()
    entries = []  # (t, state)
    rtos = []  # (t, expired RTO estimate)
    last_advance = t0
    last_loss = None
    snd_una = None
    max_cwnd = 0
    for t, ev, kv in events:
        if ev == "tcp_probe":
            una = int(kv["snd_una"], 16)
            if snd_una is not None and una != snd_una:
                last_advance = t
            snd_una = una
            max_cwnd = max(max_cwnd, int(kv["snd_cwnd"]))
        elif ev == "tcp_cong_state_set":
            new = int(kv["cong_state"])
            if new == 4:
                since = max(last_advance, last_loss) if last_loss is not None else last_advance
                rtos.append((t - t0, t - since))
                last_loss = t
            elif new == 0:
                last_loss = None
            state = new
            entries.append((t - t0, new))
        elif ev == "tcp_retransmit_skb":
            per_state_rexmit[STATE.get(state, state)] += 1
    span = events[-1][0] - t0
    print(
        f"port {key[0]}->{key[1]}: {span:.1f} s traced, {len(rtos)} RTOs (Loss entries), "
        f"{sum(per_state_rexmit.values())} retransmissions "
        f"({', '.join(f'{k} {v}' for k, v in sorted(per_state_rexmit.items()))}), "
        f"recoveries {sum(1 for _, s in entries if s == 3)}, max cwnd {max_cwnd}"
    )
    if rtos:
        print(
            "  RTO at t (s) / expired value (s): "
            + ", ".join(f"{t:.2f}/{v:.2f}" for t, v in rtos)
        )
    if show_states:
        print("  states: " + " ".join(f"{t:.2f}:{STATE.get(s, s)}" for t, s in entries))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("trace")
    ap.add_argument("--side", default="server", choices=["server", "client", "both"])
    ap.add_argument("--states", action="store_true", help="list every state change")
    ap.add_argument(
        "--min-events", type=int, default=0, help="skip sockets with fewer trace events (short-lived ones)"
    )
    a = ap.parse_args()
    conns = parse(a.trace)
    for key in sorted(conns, key=lambda k: conns[k][0][0]):
        server = key[0] == 5683
        if len(conns[key]) < a.min_events:
            continue
        if a.side == "both" or (a.side == "server") == server:
            summarize(key, conns[key], a.states)


if __name__ == "__main__":
    main()
