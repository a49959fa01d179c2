#!/usr/bin/env python3
"""ns-3 oracle for coaplab's TCP model (issue 5): the same nbiot dumbbell in ns-3 and in netsim.

SLOW (a few minutes; the first run installs ns-3, ns-3 JIT-compiles the C++ below) and kept
OUT of the fast CI suite: run it by hand, or through `./scripts/test.sh --long`. It compares,
it does not assert; docs/tcp-validation.md records its table and explains every difference.

    python3 scripts/ns3-oracle/oracle.py                 # all cells, table on stdout
    python3 scripts/ns3-oracle/oracle.py --flows 1 --buffers 2500 --cc linuxreno
    python3 scripts/ns3-oracle/oracle.py --trace 2500     # ns-3 TcpLinuxReno time-sequence
    python3 scripts/ns3-oracle/oracle.py --markdown       # the table of docs/tcp-validation.md

It re-executes itself in `.peers/ns3-venv` (git-ignored), creating it with `pip install ns3`
(PyPI `ns3` 3.44.post0: ns-3.44 with cppyy bindings) when missing, and builds
`coaplab` (release, CARGO_TARGET_DIR or target/) for the netsim side.

The experiment (docs/experiments.md §2.1, §5.1, §5.3): per flow, the client connects,
writes its CSM (6 B) and a GET (5 B) as two segments; the server, on accept, writes its CSM
(2 B) and, once it has read the 11 request bytes, one 102,408-B response (401 segments at
MSS 256). FCT = from the GET write to the client's last byte. MSS 256 / MTU 296, no SACK, no
timestamps, IW 4, delayed ACK every 2nd segment or 200 ms, min RTO 200 ms, SYN RTO 2 s,
TCP_NODELAY, receive window never limiting. 1 or 4 flows, all starting at t = 0 (netsim:
start_jitter_s = 0).

The nbiot link in ns-3 (what makes it the same link as netsim's):
  * two nodes, one PointToPoint link; downlink device 30 kbit/s, uplink 60 kbit/s. The PPP
    header (2 B, which netsim does not charge: overhead_bytes = 0) is compensated by scaling
    both rates by 298/296, so a 296-B packet serializes in exactly 78.93 ms; 40-B ACKs and the
    48-B last segment are off by < 0.5 ms (the 2 B at the scaled rate).
  * one-way delay 315 ms both ways instead of 400 + 15 down / 200 + 15 up. With constant
    delays only the sum matters: moving delay from one direction to the other shifts the
    client's clock by a constant, and every client-side quantity (FCT from the GET write to
    the last byte, delayed-ACK timers) is unchanged.
  * the byte FIFO: ns-3's traffic-control qdisc (pfifo_fast, 1000 packets) is removed, and the
    device queue (DropTailQueue) is limited in bytes. ns-3's device queue does NOT hold the
    packet being serialized while netsim's backlog does (docs/experiments.md §1.1, count_in_service), so
    the ns-3 limit is (buffer - 296) x 298/296 bytes: for full-sized packets exactly the same
    accept/drop decision (e.g. 2,500 B: 6 packets waiting + 1 in service).

ns-3 variants (--cc): linuxreno = TcpLinuxReno + TcpPrrRecovery as shipped; linuxreno-rearm =
the same with Linux's retransmission-timer re-arm on every partial ACK (ns-3 re-arms only on
the first one, RFC 6582's "impatient" variant; see RearmSocket below); newreno = TcpNewReno +
TcpPrrRecovery; bbr = TcpBbr with pacing. netsim: tcp-newreno for the first three, tcp-bbr
for bbr ("not available" while coaplab refuses it).

Counted on the server socket: data segments sent, retransmitted (a data segment whose end
is not beyond the highest end sent), RTOs (the socket's RTO trace doubling = one expiry of
the retransmission timer, ns-3 `ReTxTimeout` backoff).
"""

import argparse
import csv
import os
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
VENV = os.path.join(ROOT, ".peers", "ns3-venv")
NS3_VERSION = "3.44.post0"
BUFFERS = [2500, 14100, 28200, 1410000]
OBJECT = 102_408
CCS = {
    # name: (ns-3 congestion-control TypeId, coaplab cc, Linux RTO re-arm on every partial ACK)
    "linuxreno": ("ns3::TcpLinuxReno", "tcp-newreno", False),
    "linuxreno-rearm": ("ns3::TcpLinuxReno", "tcp-newreno", True),
    "newreno": ("ns3::TcpNewReno", "tcp-newreno", False),
    "bbr": ("ns3::TcpBbr", "tcp-bbr", False),
}


def ensure_venv(script=None):
    """Re-executes `script` (default: this oracle) in the ns-3 venv, creating it when missing.
    scripts/ns3-mesh reuses it."""
    py = os.path.join(VENV, "bin", "python")
    if os.path.realpath(sys.prefix) == os.path.realpath(VENV):
        return
    have = os.path.exists(py) and subprocess.run(
        [py, "-m", "pip", "show", "-q", "ns3"], capture_output=True
    ).returncode == 0
    if not have:
        print(f"installing ns3=={NS3_VERSION} into {VENV} (a few minutes) ...", file=sys.stderr)
        try:
            if not os.path.exists(py):
                subprocess.check_call([sys.executable, "-m", "venv", VENV])
            subprocess.check_call([py, "-m", "pip", "install", "-q", f"ns3=={NS3_VERSION}"])
        except (subprocess.CalledProcessError, OSError) as e:
            sys.exit(f"ns3-oracle: cannot install ns3=={NS3_VERSION} from PyPI into {VENV}: {e}")
    os.execv(py, [py, script or os.path.abspath(__file__)] + sys.argv[1:])


CPP = r"""
#include <vector>
#include <string>
#include <sstream>
namespace coaplab_oracle {
using namespace ns3;

struct Flow {
    int id = 0;
    uint32_t object = 0;
    Ptr<Socket> cli, srv, listener;
    double get_at = -1, done_at = -1;
    uint64_t got = 0;
    uint32_t srv_rx = 0;
    bool responded = false;
    uint32_t data_sent = 0, retx = 0, rtos = 0;
    uint32_t highest = 0;
    std::ostringstream trace;
    bool tracing = false;
};

static std::vector<Flow*> g_flows;

// TcpSocketBase with Linux's RTO re-arm: ns-3 re-arms the retransmission timer only on the
// FIRST partial ACK of a recovery (RFC 6582 "impatient"), Linux on every ACK that advances
// snd_una (tcp_clean_rtx_queue -> tcp_rearm_rto). Forcing m_isFirstPartialAck before each
// ACK makes every partial ACK call NewAck(ack, resetRTO = true).
class RearmSocket : public TcpSocketBase {
  public:
    RearmSocket() = default;
    RearmSocket(const RearmSocket& o) : TcpSocketBase(o) {}
  protected:
    Ptr<TcpSocketBase> Fork() override { return CopyObject<RearmSocket>(this); }
    void ReceivedAck(Ptr<Packet> packet, const TcpHeader& h) override {
        m_isFirstPartialAck = true;
        TcpSocketBase::ReceivedAck(packet, h);
    }
};

static Ptr<Socket> MakeSocket(Ptr<Node> node, std::string cc, bool rearm) {
    if (!rearm) return Socket::CreateSocket(node, TcpSocketFactory::GetTypeId());
    // What TcpL4Protocol::CreateSocket does, with the subclass.
    Ptr<TcpL4Protocol> tcp = node->GetObject<TcpL4Protocol>();
    Ptr<RearmSocket> s = CreateObject<RearmSocket>();
    ObjectFactory rtt, algo, rec;
    rtt.SetTypeId("ns3::RttMeanDeviation");
    algo.SetTypeId(cc);
    rec.SetTypeId("ns3::TcpPrrRecovery");
    s->SetNode(node);
    s->SetTcp(tcp);
    s->SetRtt(rtt.Create<RttEstimator>());
    s->SetCongestionControlAlgorithm(algo.Create<TcpCongestionOps>());
    s->SetRecoveryAlgorithm(rec.Create<TcpRecoveryOps>());
    return s; // TcpSocketBase::SetupCallback adds it to TcpL4Protocol at Bind
}
static std::string g_cc;
static bool g_rearm = false;
static Ipv4Address g_server;

static void SrvTx(Flow* f, Ptr<const Packet> p, const TcpHeader& h, Ptr<const TcpSocketBase> s) {
    uint32_t n = p->GetSize();
    if (n == 0) return;
    f->data_sent++;
    uint32_t seq = h.GetSequenceNumber().GetValue();
    bool re = seq + n <= f->highest;
    if (re) f->retx++; else f->highest = seq + n;
    if (f->tracing)
        f->trace << (long long)Simulator::Now().GetMicroSeconds() << " S DATA " << seq << " " << n
                 << (re ? " RTX" : "") << "\n";
}
static void SrvRx(Flow* f, Ptr<const Packet> p, const TcpHeader& h, Ptr<const TcpSocketBase> s) {
    if (f->tracing && p->GetSize() == 0 && (h.GetFlags() & TcpHeader::ACK))
        f->trace << (long long)Simulator::Now().GetMicroSeconds() << " S GOT-ACK "
                 << h.GetAckNumber().GetValue() << "\n";
}
static void SrvRto(Flow* f, Time oldv, Time newv) {
    // ReTxTimeout doubles m_rto (capped at 60 s); an estimator update never doubles exactly.
    if (oldv.IsStrictlyPositive() && (newv == oldv * 2 || newv == Seconds(60)) && newv != oldv) {
        f->rtos++;
        if (f->tracing)
            f->trace << (long long)Simulator::Now().GetMicroSeconds() << " S RTO " << newv.GetMilliSeconds() << "ms\n";
    }
}
static void SrvCwnd(Flow* f, uint32_t o, uint32_t n) {
    if (f->tracing)
        f->trace << (long long)Simulator::Now().GetMicroSeconds() << " S CWND " << n / 256 << "\n";
}
static void SrvCong(Flow* f, TcpSocketState::TcpCongState_t o, TcpSocketState::TcpCongState_t n) {
    if (f->tracing)
        f->trace << (long long)Simulator::Now().GetMicroSeconds() << " S CA " << TcpSocketState::TcpCongStateName[n] << "\n";
}
static void Drop(Ptr<const Packet> p) {
    for (auto f : g_flows)
        if (f->tracing) {
            f->trace << (long long)Simulator::Now().GetMicroSeconds() << " DROP " << p->GetSize() << "B\n";
            break;
        }
}

static void DevTx(std::string who, Ptr<const Packet> p) {
    for (auto f : g_flows)
        if (f->tracing) {
            f->trace << (long long)Simulator::Now().GetMicroSeconds() << " " << who << " PHY-TX " << p->GetSize() << "B\n";
            break;
        }
}

static void SrvRecv(Flow* f, Ptr<Socket> s) {
    Ptr<Packet> p;
    while ((p = s->Recv())) f->srv_rx += p->GetSize();
    if (!f->responded && f->srv_rx >= 11) {
        f->responded = true;
        int sent = s->Send(Create<Packet>(f->object));
        NS_ABORT_MSG_IF(sent != (int)f->object, "send buffer too small");
    }
}
static bool SrvRequest(Flow* f, Ptr<Socket>, const Address&) { return true; }
static void SrvAccept(Flow* f, Ptr<Socket> s, const Address&) {
    f->srv = s;
    s->SetRecvCallback(MakeBoundCallback(&SrvRecv, f));
    s->TraceConnectWithoutContext("Tx", MakeBoundCallback(&SrvTx, f));
    s->TraceConnectWithoutContext("Rx", MakeBoundCallback(&SrvRx, f));
    s->TraceConnectWithoutContext("RTO", MakeBoundCallback(&SrvRto, f));
    s->TraceConnectWithoutContext("CongestionWindow", MakeBoundCallback(&SrvCwnd, f));
    s->TraceConnectWithoutContext("CongState", MakeBoundCallback(&SrvCong, f));
    s->Send(Create<Packet>(2)); // server CSM at accept
}
static void CliRecv(Flow* f, Ptr<Socket> s) {
    Ptr<Packet> p;
    while ((p = s->Recv())) f->got += p->GetSize();
    if (f->done_at < 0 && f->got >= 2 + (uint64_t)f->object) {
        f->done_at = Simulator::Now().GetSeconds();
        s->Close();
    }
}
static void CliGet(Flow* f, Ptr<Socket> s) {
    s->Send(Create<Packet>(5)); // GET
    f->get_at = Simulator::Now().GetSeconds();
}
static void CliConnected(Flow* f, Ptr<Socket> s) {
    // ns-3 defers SendPendingData by one time step, so two Send calls in the same instant
    // coalesce into one segment despite TcpNoDelay; the GET is written 2 ns later to keep
    // the two segments of docs/experiments.md §5.1.
    s->Send(Create<Packet>(6)); // client CSM
    Simulator::Schedule(NanoSeconds(2), &CliGet, f, s);
}
static void CliFailed(Flow* f, Ptr<Socket> s) {}
static void CliStart(Flow* f, Ptr<Node> node) {
    f->cli = MakeSocket(node, g_cc, g_rearm);
    f->cli->Bind();
    f->cli->SetConnectCallback(MakeBoundCallback(&CliConnected, f), MakeBoundCallback(&CliFailed, f));
    f->cli->SetRecvCallback(MakeBoundCallback(&CliRecv, f));
    f->cli->Connect(InetSocketAddress(g_server, 5000 + f->id));
}

// Returns one line per flow: "id get_at done_at data_sent retx rtos".
std::string RunCell(std::string cc, uint32_t buffer, int nflows, uint32_t object, bool trace,
                    double stop_s, bool rearm) {
    Config::Reset();
    g_flows.clear();
    g_cc = cc;
    g_rearm = rearm;
    bool bbr = cc == "ns3::TcpBbr";
    Config::SetDefault("ns3::TcpL4Protocol::SocketType", TypeIdValue(TypeId::LookupByName(cc)));
    Config::SetDefault("ns3::TcpL4Protocol::RecoveryType", TypeIdValue(TypeId::LookupByName("ns3::TcpPrrRecovery")));
    Config::SetDefault("ns3::TcpSocket::SegmentSize", UintegerValue(256));
    Config::SetDefault("ns3::TcpSocket::InitialCwnd", UintegerValue(4));
    Config::SetDefault("ns3::TcpSocket::DelAckCount", UintegerValue(2));
    Config::SetDefault("ns3::TcpSocket::DelAckTimeout", TimeValue(MilliSeconds(200)));
    Config::SetDefault("ns3::TcpSocket::TcpNoDelay", BooleanValue(true));
    Config::SetDefault("ns3::TcpSocket::SndBufSize", UintegerValue(1 << 22));
    Config::SetDefault("ns3::TcpSocket::RcvBufSize", UintegerValue(1 << 22));
    Config::SetDefault("ns3::TcpSocket::ConnTimeout", TimeValue(Seconds(2)));
    Config::SetDefault("ns3::TcpSocketBase::Sack", BooleanValue(false));
    Config::SetDefault("ns3::TcpSocketBase::Timestamp", BooleanValue(false));
    Config::SetDefault("ns3::TcpSocketBase::MinRto", TimeValue(MilliSeconds(200)));
    Config::SetDefault("ns3::TcpSocketState::EnablePacing", BooleanValue(bbr));

    NodeContainer nodes;
    nodes.Create(2); // 0 = server, 1 = client
    PointToPointHelper p2p;
    p2p.SetChannelAttribute("Delay", TimeValue(MilliSeconds(315)));
    p2p.SetDeviceAttribute("Mtu", UintegerValue(296));
    uint32_t limit = buffer >= 1000000 ? buffer : (uint32_t)((buffer - 296) * 298.0 / 296.0);
    std::ostringstream qs;
    qs << limit << "B";
    p2p.SetQueue("ns3::DropTailQueue<Packet>", "MaxSize", QueueSizeValue(QueueSize(qs.str())));
    NetDeviceContainer dev = p2p.Install(nodes);
    dev.Get(0)->SetAttribute("DataRate", DataRateValue(DataRate((uint64_t)(30000.0 * 298 / 296 + 0.5))));
    dev.Get(1)->SetAttribute("DataRate", DataRateValue(DataRate((uint64_t)(60000.0 * 298 / 296 + 0.5))));
    InternetStackHelper stack;
    stack.Install(nodes);
    Ipv4AddressHelper addr;
    addr.SetBase("10.0.0.0", "255.255.255.0");
    Ipv4InterfaceContainer ifs = addr.Assign(dev);
    TrafficControlHelper tch;
    tch.Uninstall(dev); // no pfifo_fast: the byte-limited device queue is the only buffer
    g_server = ifs.GetAddress(0);
    Ptr<PointToPointNetDevice> down = DynamicCast<PointToPointNetDevice>(dev.Get(0));
    down->TraceConnectWithoutContext("MacTxDrop", MakeCallback(&Drop));
    if (trace) {
        dev.Get(0)->TraceConnectWithoutContext("PhyTxBegin", MakeBoundCallback(&DevTx, std::string("S")));
        dev.Get(1)->TraceConnectWithoutContext("PhyTxBegin", MakeBoundCallback(&DevTx, std::string("C")));
    }

    for (int i = 0; i < nflows; i++) {
        Flow* f = new Flow();
        f->id = i;
        f->object = object;
        f->tracing = trace && i == nflows - 1; // the last flow (the only one with 1 flow)
        g_flows.push_back(f);
        f->listener = MakeSocket(nodes.Get(0), cc, rearm);
        f->listener->Bind(InetSocketAddress(Ipv4Address::GetAny(), 5000 + i));
        f->listener->Listen();
        f->listener->SetAcceptCallback(MakeBoundCallback(&SrvRequest, f), MakeBoundCallback(&SrvAccept, f));
        Simulator::Schedule(Seconds(0), &CliStart, f, nodes.Get(1));
    }
    Simulator::Stop(Seconds(stop_s));
    Simulator::Run();
    std::ostringstream out;
    for (auto f : g_flows) {
        out << f->id << " " << f->get_at << " " << f->done_at << " " << f->data_sent << " "
            << f->retx << " " << f->rtos << "\n";
    }
    if (trace && !g_flows.empty()) out << "TRACE\n" << g_flows.back()->trace.str();
    Simulator::Destroy();
    for (auto f : g_flows) delete f;
    g_flows.clear();
    return out.str();
}
}
"""

_NS = None


def ns3_module():
    global _NS
    if _NS is None:
        from ns import ns  # noqa: the pip package's cppyy bindings

        ns.cppyy.cppdef(CPP)
        _NS = ns
    return _NS


def run_ns3(cc, buffer, nflows, trace=False):
    ns = ns3_module()
    typeid, _, rearm = CCS[cc]
    text = str(ns.cppyy.gbl.coaplab_oracle.RunCell(typeid, buffer, nflows, OBJECT, trace, 3000.0, rearm))
    body, _, tr = text.partition("TRACE\n")
    flows = []
    for line in body.strip().splitlines():
        i, get_at, done_at, sent, retx, rtos = line.split()
        get_at, done_at = float(get_at), float(done_at)
        flows.append(
            {
                "fct": done_at - get_at if done_at >= 0 and get_at >= 0 else None,
                "sent": int(sent),
                "retx": int(retx),
                "rto": int(rtos),
            }
        )
    return flows, tr


def coaplab_binary():
    target = os.environ.get("CARGO_TARGET_DIR", os.path.join(ROOT, "target"))
    subprocess.check_call(
        ["cargo", "build", "--release", "-q", "-p", "coaplab"], cwd=ROOT, env=dict(os.environ, CARGO_TARGET_DIR=target)
    )
    return os.path.join(target, "release", "coaplab")


def run_netsim(binary, cc, nflows, buffers):
    """Runs `coaplab run` on a generated scenario; returns {buffer: [flow dicts]} or an error."""
    d = tempfile.mkdtemp(prefix="ns3-oracle-")
    try:
        scen = os.path.join(d, "oracle.toml")
        with open(scen, "w") as fh:
            fh.write(
                f'name = "ns3-oracle"\nseed = 1\nreplications = 1\n\n[network]\npreset = "nbiot"\n'
                f"buffer_bytes = [{', '.join(map(str, buffers))}]\nloss = \"none\"\n\n"
                f'[[flows]]\ncount = {nflows}\ncc = "{CCS[cc][1]}"\nworkload = "long-transfer"\n'
                f"object_bytes = 102400\nstart_jitter_s = 0\n"
            )
        out = os.path.join(d, "out")
        p = subprocess.run([binary, "run", scen, "--out", out], capture_output=True, text=True)
        if p.returncode != 0:
            msg = (p.stderr or p.stdout).strip().splitlines()
            print(f"coaplab run refused {CCS[cc][1]}: {msg[-1] if msg else p.returncode}", file=sys.stderr)
            return "not available"
        res = {}
        with open(os.path.join(out, "flows.csv")) as fh:
            for row in csv.DictReader(fh):
                b = int(row["buffer_bytes"])
                res.setdefault(b, []).append(
                    {
                        "fct": float(row["fct_s"]) if row["fct_s"] else None,
                        "sent": int(row["segments_sent"] or 0),
                        "retx": int(row["segments_retransmitted"] or 0),
                        "rto": int(row["rto_count"] or 0),
                    }
                )
        return res
    finally:
        shutil.rmtree(d, ignore_errors=True)


def agg(flows):
    fcts = [f["fct"] for f in flows if f["fct"] is not None]
    if len(fcts) < len(flows):
        return None
    return {
        "mean": sum(fcts) / len(fcts),
        "max": max(fcts),
        "retx": sum(f["retx"] for f in flows),
        "rto": sum(f["rto"] for f in flows),
    }


def fmt(a):
    if a is None:
        return "unfinished", "-", "-"
    return f"{a['mean']:.3f}" + (f" (max {a['max']:.3f})" if a["max"] != a["mean"] else ""), str(a["retx"]), str(a["rto"])


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--flows", type=int, nargs="*", default=[1, 4])
    ap.add_argument("--buffers", type=int, nargs="*", default=BUFFERS)
    ap.add_argument("--cc", nargs="*", default=["linuxreno", "linuxreno-rearm", "newreno", "bbr"], choices=list(CCS))
    ap.add_argument("--trace", type=int, metavar="BUFFER", help="print the 1-flow time-sequence of the first --cc")
    ap.add_argument("--markdown", action="store_true")
    ap.add_argument("--no-netsim", action="store_true")
    args = ap.parse_args()
    ensure_venv()
    if args.trace:
        flows, tr = run_ns3(args.cc[0], args.trace, 1, trace=True)
        print(f"# ns-3 {args.cc[0]} (PRR), 1 flow, {args.trace} B: {flows}")
        print(tr)
        return
    binary = None if args.no_netsim else coaplab_binary()
    netsim = {}
    rows = []
    for cc in args.cc:
        for n in args.flows:
            key = (CCS[cc][1], n)
            if binary and key not in netsim:
                netsim[key] = run_netsim(binary, cc, n, args.buffers)
            ours = netsim.get(key, "not run")
            for b in args.buffers:
                ns_flows, _ = run_ns3(cc, b, n)
                a = agg(ns_flows)
                o = agg(ours[b]) if isinstance(ours, dict) and b in ours else None
                o_text = fmt(o) if o else ((ours if isinstance(ours, str) else "missing"), "-", "-")
                gap = f"{(o['mean'] / a['mean'] - 1) * 100:+.1f} %" if o and a else "-"
                rows.append((cc, n, b) + fmt(a) + o_text + (gap,))
                print("\t".join(map(str, rows[-1])), flush=True)
    if args.markdown:
        print()
        print("| ns-3 cc | flows | buffer (B) | ns-3 FCT (s) | ns-3 rtx | ns-3 RTOs | netsim FCT (s) | netsim rtx | netsim RTOs | netsim vs ns-3 |")
        print("|---|---|---|---|---|---|---|---|---|---|")
        for r in rows:
            print("| " + " | ".join(map(str, r)) + " |")


if __name__ == "__main__":
    main()
