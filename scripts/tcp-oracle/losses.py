#!/usr/bin/env python3
"""Who lost what, packet by packet, in a CoAP-over-TCP run with many short exchanges
(docs/calibration.md, "The kernel as TCP oracle", item 3). Standard library plus tshark.

    losses.py kernel PREFIX     PREFIX-c.pcap / PREFIX-s.pcap from capture.sh (an emulated run)
    losses.py model TRACE_RUN   a simulated run's trace directory (coaplab run --trace-format csv:
                                link-up.pcap, link-down.pcap, queue.csv)

Prints, for the server (198.18.x.2, port 5683) and the clients: segments sent and lost on the link,
data retransmissions, what preceded each client (request) retransmission (the response lost, or still
on its way: a spurious timeout), whether each server retransmission replaced a lost original, and the
deciles of the time a retransmitted segment waited since its previous copy (the expired RTO, backoff
included); a kernel capture is read without its first 2 s and last 5 s (packets still on the link). In
the kernel capture a packet is lost when it was written by one end and never reached
the other TUN device (matched by ports and IP ID); the model's queue log says it directly.
"""

import collections
import csv
import statistics
import subprocess
import sys

FIELDS = [
    "frame.time_epoch",
    "ip.src",
    "ip.dst",
    "tcp.srcport",
    "tcp.dstport",
    "ip.id",
    "tcp.seq_raw",
    "tcp.ack_raw",
    "tcp.len",
    "tcp.flags.syn",
    "tcp.flags.fin",
]


def read_pcap(path):
    out = subprocess.run(
        ["tshark", "-r", path, "-T", "fields"] + [a for f in FIELDS for a in ("-e", f)],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    packets = []
    for line in out.splitlines():
        f = line.split("\t")
        if len(f) < len(FIELDS) or not f[3]:
            continue
        packets.append(
            dict(
                t=float(f[0]),
                src=f[1],
                dst=f[2],
                sport=int(f[3]),
                dport=int(f[4]),
                ipid=int(f[5], 0) if f[5] else 0,
                seq=int(f[6]),
                ack=int(f[7]),
                len=int(f[8]),
                pure=int(f[8]) == 0 and f[9] != "1" and f[10] != "1",
            )
        )
    return packets


def kernel(prefix):
    client_side = read_pcap(prefix + "-c.pcap")
    server_side = read_pcap(prefix + "-s.pcap")
    # Only while both captures ran, and not the last seconds (packets still on the link).
    start = max(client_side[0]["t"], server_side[0]["t"]) + 2
    end = min(client_side[-1]["t"], server_side[-1]["t"]) - 5
    key = lambda p: (p["sport"], p["dport"], p["ipid"])
    at_client = {key(p): p["t"] for p in client_side if p["sport"] == 5683}
    at_server = {key(p): p["t"] for p in server_side if p["dport"] == 5683}
    down = [p for p in server_side if p["sport"] == 5683 and start < p["t"] < end]
    up = [p for p in client_side if p["dport"] == 5683 and start < p["t"] < end]
    for p in down:
        p["lost"] = key(p) not in at_client
        p["arrived"] = at_client.get(key(p))
    for p in up:
        p["lost"] = key(p) not in at_server
    return down, up, lambda p: p["dport"], lambda p: p["sport"]


def model(run_dir):
    queue = list(csv.DictReader(open(f"{run_dir}/queue.csv")))
    links = {}
    for link in ("up", "down"):
        packets = read_pcap(f"{run_dir}/link-{link}.pcap")
        offered = [r for r in queue if r["link"] == link and r["event"] in ("enqueue", "drop")]
        if len(offered) != len(packets):
            sys.exit(f"{run_dir}: {link} pcap and queue log disagree ({len(packets)} / {len(offered)})")
        dequeued = {r["packet"]: float(r["time_s"]) for r in queue if r["link"] == link and r["event"] == "dequeue"}
        for p, r in zip(packets, offered):
            p["lost"] = r["event"] == "drop"
            p["dequeued"] = dequeued.get(r["packet"])
        links[link] = packets
    # The simulated star gives every client its own address and the same port.
    return links["down"], links["up"], lambda p: p["dst"], lambda p: p["src"]


def deciles(values):
    if len(values) < 2:
        return "–"
    return " / ".join(f"{x:.1f}" for x in statistics.quantiles(values, n=10))


def retransmissions(packets, flow_of):
    """Data segments whose (flow, seq) was sent before, with the wait since the previous copy."""
    last = {}
    out = []
    for p in packets:
        if p["len"] == 0:
            continue
        k = (flow_of(p), p["seq"])
        if k in last:
            out.append((p, p["t"] - last[k]["t"], last[k]))
        last[k] = p
    return out


def report(down, up, client_of_down, client_of_up, kernel_mode):
    data_down = [p for p in down if p["len"] > 0]
    pure_down = [p for p in down if p["pure"]]
    print(
        f"server: {len(down)} segments sent, {sum(p['lost'] for p in down)} lost; responses {len(data_down)}, "
        f"lost {sum(p['lost'] for p in data_down)} ({100 * sum(p['lost'] for p in data_down) / max(len(data_down), 1):.1f} %); "
        f"pure ACKs {len(pure_down)}, lost {sum(p['lost'] for p in pure_down)}"
    )
    print(f"clients: {len(up)} segments sent, {sum(p['lost'] for p in up)} lost; pure ACKs {sum(p['pure'] for p in up)}")
    srv = retransmissions(down, client_of_down)
    cli = retransmissions(up, client_of_up)
    print(f"server retransmissions {len(srv)}: original lost {sum(o['lost'] for _, _, o in srv)}")
    print(f"  wait since the previous copy, deciles (s): {deciles([w for _, w, _ in srv])}")
    responses = collections.defaultdict(list)
    for p in data_down:
        responses[client_of_down(p)].append(p)
    why = collections.Counter()
    for p, _, _ in cli:
        before = [r for r in responses[client_of_up(p)] if r["t"] < p["t"]]
        if not before:
            why["no response yet"] += 1
            continue
        r = before[-1]
        # kernel: when it reached the client's TUN; model: when it left the bottleneck queue
        passed = r.get("arrived") if kernel_mode else r.get("dequeued")
        if r["lost"]:
            why["response lost"] += 1
        elif passed is not None and passed > p["t"]:
            why["response still on its way"] += 1
        else:
            why["response delivered earlier"] += 1
    print(f"client retransmissions {len(cli)}: {dict(why)}")
    print(f"  wait since the previous copy, deciles (s): {deciles([w for _, w, _ in cli])}")


def main():
    if len(sys.argv) != 3 or sys.argv[1] not in ("kernel", "model"):
        print(__doc__)
        return 2
    if sys.argv[1] == "kernel":
        report(*kernel(sys.argv[2]), kernel_mode=True)
    else:
        report(*model(sys.argv[2]), kernel_mode=False)
    return 0


if __name__ == "__main__":
    sys.exit(main())
