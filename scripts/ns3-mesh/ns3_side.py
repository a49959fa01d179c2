#!/usr/bin/env python3
"""The ns-3 side of the mesh validation (issue 13, docs/mesh-validation.md): the same
cases as netsim's `mesh_probe` example, built on ns-3's lr-wpan (IEEE 802.15.4) and
sixlowpan models, printing the same `key=value` figures.

    python3 scripts/ns3-mesh/ns3_side.py saturated 4 [seconds] [seed]
    python3 scripts/ns3-mesh/ns3_side.py hidden [seconds] [seed]
    python3 scripts/ns3-mesh/ns3_side.py chain [seconds] [seed]
    python3 scripts/ns3-mesh/ns3_side.py grid [seconds] [seed]    # the timing case, 1080 s
    python3 scripts/ns3-mesh/ns3_side.py grid-segments [total_s] [segment_s]   # 1080 s in 60-s runs
    python3 scripts/ns3-mesh/ns3_side.py --ns3-build DIR grid|grid-segments ...  # natively, your build

It re-executes itself in `.peers/ns3-venv` (installed by scripts/ns3-oracle/oracle.py's
`ensure_venv`: PyPI `ns3` 3.44.post0 = ns-3.44 with cppyy bindings). The experiment is C++
compiled at run time by cppyy (the wheel ships ns-3's headers and libraries): ns-3's MAC
reports through C++ callbacks and trace sources, which are simplest to attach in C++.

The channel (what makes it netsim's radio): one SingleModelSpectrumChannel with
RangePropagationLossModel (MaxRange 10 m: a receiver within 10 m gets the transmit power,
0 dBm, anyone farther -1000 dBm) and ConstantSpeedPropagationDelayModel (27 ns over 8 m;
netsim has none). With 0 dBm against the -106.58 dBm sensitivity, the lr-wpan error model
decodes every frame that overlaps nothing, and loses both when two overlap at a receiver
(SINR about 0 dB); CCA (mode 1, energy above sensitivity + 10 dB, or the PHY busy
receiving) hears exactly the nodes within 10 m. Positions are those of mesh_probe (the
border router netsim needs is left out: it never transmits there).

  * saturated N / hidden: frames go straight to the MAC (McpsDataRequest, 16-bit
    addresses, PAN ID compression, ACK requested), MSDU 59 B = PSDU 70 B, the size
    netsim's 50-B CoAP payload makes; each sender has a frame queued at all times (a new
    one whenever the MAC confirms one).
  * chain: the full stack, IPv6 + sixlowpan + UDP, static host routes 3 -> 2 -> 1 -> 0,
    neighbour caches filled by hand (no NS/NA), DAD and ICMPv6 redirects off, every
    interface forwarding (so no router solicitations); one 300-B UDP payload at a time,
    the next when it arrives (or after 1 s).
  * grid (timing only, docs/BENCHMARKS.md "Mesh"): the Ch. 6 6x6 grid over the full stack,
    static shortest-path host routes on every node, 33 clients each sending 25 B every 0.4 s
    to one of two servers, every request answered with 4 B; prints the time of
    Simulator::Run alone (wall and CPU), not Python's import or cppyy's compile.

--ns3-build DIR runs the grid cases natively instead: the same C++ (below), with a main() that
holds the grid's positions, routes and clients, compiled by g++ -O3 -march=native -DNDEBUG
against an ns-3 3.44 build of yours (DIR: the output directory of its build, holding
include/ns3 and lib/; docs/BENCHMARKS.md uses one built with `--build-profile=optimized`:
no asserts, no logging) into target/ns3-mesh/grid-native. grid-segments then runs one process
per segment; a segment that crashes (lr-wpan, docs/BENCHMARKS.md) is replaced by the next seed.
"""

import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))

CPP = r"""
#include <chrono>
#include <cstdint>
#include <ctime>
#include <map>
#include <sstream>
#include <string>
#include <vector>
namespace coaplab_mesh {
using namespace ns3;
using namespace ns3::lrwpan;

const double kRangeM = 10.0;
const uint16_t kPanId = 0x1234;

// One run's state. Allocated per run (cling does not run this module's static constructors
// reliably, so no global has one).
struct State {
    uint64_t dataTx = 0, retries = 0, psduBytes = 0, broadcast = 0;
    uint64_t ok = 0, caf = 0, noAck = 0, lostDrops = 0;
    uint64_t delivered = 0, duplicates = 0;
    double delaySum = 0;
    std::map<uint32_t, int> lastTxSeq;   // sender node -> DSN of its last data frame
    std::map<uint32_t, bool> onAir;      // sender node -> its current frame went on air
    std::map<uint16_t, int> lastRxSeq;   // at the sink: sender short address -> DSN
    std::map<uint16_t, uint64_t> bySender;  // at the sink: sender short address -> frames
    std::vector<Ptr<LrWpanNetDevice>> devs;
    uint32_t msdu = 0;
    Mac16Address sink;
    // Kept alive for the run: ~LrWpanHelper disposes the channel.
    LrWpanHelper* helper = nullptr;
    // The chain's stop-and-wait source.
    Ptr<Socket> tx;
    Inet6SocketAddress dst = Inet6SocketAddress(Ipv6Address::GetAny(), 5683);
    uint32_t payload = 0;
    double sentAt = 0;
    EventId timeout;
    uint64_t sent = 0;
    std::map<int, uint64_t> ipDrops;   // Ipv6L3Protocol::DropReason -> count
    std::map<uint32_t, std::vector<uint32_t>> firstPsdus;  // node -> PSDU sizes of its first frames
};
static State* s_ = nullptr;
#define g (*s_)

static void OnMacTx(uint32_t node, Ptr<const Packet> p) {
    LrWpanMacHeader h;
    p->PeekHeader(h);
    if (!h.IsData()) return;                              // ACKs
    if (h.GetDstAddrMode() == LrWpanMacHeader::SHORTADDR && h.GetShortDstAddr().IsBroadcast()) {
        g.broadcast++;
        return;
    }
    g.dataTx++;
    g.psduBytes += p->GetSize();
    if (g.firstPsdus[node].size() < 4) g.firstPsdus[node].push_back(p->GetSize());
    auto it = g.lastTxSeq.find(node);
    if (it != g.lastTxSeq.end() && it->second == h.GetSeqNum()) g.retries++;
    g.lastTxSeq[node] = h.GetSeqNum();
    g.onAir[node] = true;
}

static void SendFrame(uint32_t node) {
    McpsDataRequestParams params;
    params.m_srcAddrMode = SHORT_ADDR;
    params.m_dstAddrMode = SHORT_ADDR;
    params.m_dstPanId = kPanId;
    params.m_dstAddr = g.sink;
    params.m_msduHandle = 0;
    params.m_txOptions = TX_OPTION_ACK;
    g.devs[node]->GetMac()->McpsDataRequest(params, Create<Packet>(g.msdu));
}

static void OnConfirm(uint32_t node, McpsDataConfirmParams c) {
    uint16_t me = 0;
    uint8_t buf[2];
    g.devs[node]->GetMac()->GetShortAddress().CopyTo(buf);
    me = (buf[0] << 8) | buf[1];
    if (c.m_status == MacStatus::SUCCESS) g.ok++;
    else {
        if (c.m_status == MacStatus::CHANNEL_ACCESS_FAILURE) g.caf++;
        else if (c.m_status == MacStatus::NO_ACK) g.noAck++;
        // Lost unless it went on air and the sink decoded it (its ACKs were lost): the sink's
        // last DSN from me is this frame's.
        auto it = g.lastRxSeq.find(me);
        if (!g.onAir[node] || it == g.lastRxSeq.end() || it->second != g.lastTxSeq[node])
            g.lostDrops++;
    }
    g.onAir[node] = false;
    Simulator::ScheduleNow(&SendFrame, node);   // saturated: always one more
}

static void OnSinkRx(McpsDataIndicationParams p, Ptr<Packet>) {
    uint8_t buf[2];
    p.m_srcAddr.CopyTo(buf);
    uint16_t src = (buf[0] << 8) | buf[1];
    auto it = g.lastRxSeq.find(src);
    if (it != g.lastRxSeq.end() && it->second == p.m_dsn) { g.duplicates++; return; }
    g.lastRxSeq[src] = p.m_dsn;
    g.delivered++;
    g.bySender[src]++;
}

static NetDeviceContainer Radios(NodeContainer& nodes, const std::vector<Vector>& pos) {
    MobilityHelper mob;
    Ptr<ListPositionAllocator> alloc = CreateObject<ListPositionAllocator>();
    for (auto& v : pos) alloc->Add(v);
    mob.SetPositionAllocator(alloc);
    mob.SetMobilityModel("ns3::ConstantPositionMobilityModel");
    mob.Install(nodes);
    g.helper = new LrWpanHelper();
    LrWpanHelper& lr = *g.helper;
    lr.SetPropagationDelayModel("ns3::ConstantSpeedPropagationDelayModel");
    lr.AddPropagationLossModel("ns3::RangePropagationLossModel", "MaxRange", DoubleValue(kRangeM));
    NetDeviceContainer devs = lr.Install(nodes);
    lr.CreateAssociatedPan(devs, kPanId);   // short addresses 00:01, 00:02, ... in node order
    // Fixed stream numbers: a case's draws do not depend on what ran before in this process.
    lr.AssignStreams(devs, 0);
    g.devs.clear();
    for (uint32_t i = 0; i < devs.GetN(); i++) {
        Ptr<LrWpanNetDevice> d = DynamicCast<LrWpanNetDevice>(devs.Get(i));
        g.devs.push_back(d);
        d->GetMac()->TraceConnectWithoutContext("MacTx", MakeBoundCallback(&OnMacTx, i));
    }
    return devs;
}

static void Reset(uint32_t seed) {
    s_ = new State();
    RngSeedManager::SetSeed(1);
    RngSeedManager::SetRun(seed);
}

static void Finish() {
    g.tx = nullptr;
    g.devs.clear();
    Simulator::Destroy();
    delete g.helper;
    delete s_;
    s_ = nullptr;
}

static std::string Figures(uint32_t contenders, double seconds, uint32_t appBytes, uint32_t hops,
                           bool saturated) {
    std::ostringstream o;
    o.setf(std::ios::fixed);
    uint64_t finishedFrames = saturated ? g.ok + g.caf + g.noAck : g.dataTx - g.retries;
    double finished = finishedFrames ? (double)finishedFrames : 1.0;
    uint64_t delivered = g.delivered;
    o.precision(1);
    o << "contenders=" << contenders << "\n";
    o << "psdu_bytes_mean=" << (g.dataTx ? (double)g.psduBytes / g.dataTx : 0.0) << "\n";
    o << "frames_sent=" << g.dataTx << "\n";
    o << "frames_finished=" << finishedFrames << "\n";
    o << "retries=" << g.retries << "\n";
    o.precision(3);
    o << "tx_per_frame=" << g.dataTx / finished << "\n";
    o << "retries_per_frame=" << g.retries / finished << "\n";
    o << "channel_access_failures=" << g.caf << "\n";
    o << "no_ack_failures=" << g.noAck << "\n";
    o << "delivered=" << delivered << "\n";
    o << "mac_drops=" << g.lostDrops << "\n";
    o.precision(4);
    o << "delivery_ratio="
      << (delivered + g.lostDrops ? (double)delivered / (delivered + g.lostDrops) : 0.0) << "\n";
    o.precision(2);
    o << "throughput_kbps=" << delivered * appBytes * 8.0 / seconds / 1e3 << "\n";
    o.precision(3);
    if (saturated) {
        o << "service_ms=" << seconds * 1e3 * contenders / (double)(g.ok + g.caf + g.noAck) << "\n";
    } else {
        o.precision(2);
        o << "frames_per_datagram_hop=" << finished / (double)(std::max<uint64_t>(delivered, 1) * hops) << "\n";
        o.precision(3);
        o << "delay_ms=" << g.delaySum * 1e3 / std::max<uint64_t>(delivered, 1) << "\n";
        o << "per_hop_ms=" << g.delaySum * 1e3 / (std::max<uint64_t>(delivered, 1) * hops) << "\n";
    }
    if (saturated) {
        o << "delivered_by_sender=";
        for (auto& kv : g.bySender) o << kv.second << "/";
        o << "\n";
    }
    o << "duplicates=" << g.duplicates << "\n";
    o << "broadcast_frames=" << g.broadcast << "\n";
    return o.str();
}

// positions[0] is the sink; the others saturate it with `msdu`-byte MSDUs for `seconds`.
// Throughput counts `appBytes` per frame (netsim's CoAP payload in that frame).
std::string RunSingleHop(std::vector<double> xs, std::vector<double> ys, uint32_t msdu,
                         uint32_t appBytes, double seconds, uint32_t seed) {
    Reset(seed);
    g.msdu = msdu;
    NodeContainer nodes;
    nodes.Create(xs.size());
    std::vector<Vector> pos;
    for (size_t i = 0; i < xs.size(); i++) pos.push_back(Vector(xs[i], ys[i], 0));
    Radios(nodes, pos);
    g.sink = g.devs[0]->GetMac()->GetShortAddress();
    g.devs[0]->GetMac()->SetMcpsDataIndicationCallback(MakeCallback(&OnSinkRx));
    for (uint32_t i = 1; i < g.devs.size(); i++) {
        g.devs[i]->GetMac()->SetMcpsDataConfirmCallback(MakeBoundCallback(&OnConfirm, i));
        // Two frames: one in service, one waiting, refilled on every confirm.
        Simulator::Schedule(Seconds(0), &SendFrame, i);
        Simulator::Schedule(Seconds(0), &SendFrame, i);
    }
    Simulator::Stop(Seconds(seconds));
    Simulator::Run();
    std::string out = Figures(xs.size() - 1, seconds, appBytes, 1, true);
    Finish();
    return out;
}

// ---- the 3-hop chain over IPv6 / 6LoWPAN / UDP ----

static void SendDatagram() {
    g.sentAt = Simulator::Now().GetSeconds();
    g.sent++;
    g.tx->SendTo(Create<Packet>(g.payload), 0, g.dst);
    g.timeout = Simulator::Schedule(Seconds(1), &SendDatagram);
}

static void OnIpDrop(const Ipv6Header&, Ptr<const Packet>, Ipv6L3Protocol::DropReason r,
                     Ptr<Ipv6>, uint32_t) {
    g.ipDrops[(int)r]++;
}

static void OnServerRx(Ptr<Socket> s) {
    Address from;
    while (Ptr<Packet> p = s->RecvFrom(from)) {
        g.delivered++;
        g.delaySum += Simulator::Now().GetSeconds() - g.sentAt;
        g.timeout.Cancel();
        Simulator::ScheduleNow(&SendDatagram);
    }
}

// IPv6 over sixlowpan on `lrDevs` of `nodes`: addresses fd00::/64 (not 2001:db8::/32: ns-3
// refuses to forward the documentation prefix, RFC 3849), every interface forwarding (so no
// router solicitations), neighbour caches filled by hand (NeighborCacheHelper looks for IPv6 on
// the lr-wpan devices). `sixDevs` receives the sixlowpan devices.
static Ipv6InterfaceContainer SixLowPanStack(NodeContainer& nodes, NetDeviceContainer& lrDevs,
                                             NetDeviceContainer& sixDevs) {
    uint32_t n = nodes.GetN();
    InternetStackHelper ip;
    ip.SetIpv4StackInstall(false);
    ip.Install(nodes);
    Config::ConnectWithoutContext("/NodeList/*/$ns3::Ipv6L3Protocol/Drop", MakeCallback(&OnIpDrop));
    SixLowPanHelper six;
    sixDevs = six.Install(lrDevs);
    six.AddContext(sixDevs, 0, Ipv6Prefix("fd00::", 64), Seconds(3600));
    six.AssignStreams(sixDevs, 1000);
    Ipv6AddressHelper addrs;
    addrs.SetBase(Ipv6Address("fd00::"), Ipv6Prefix(64));
    Ipv6InterfaceContainer ifs = addrs.Assign(sixDevs);
    for (uint32_t i = 0; i < n; i++) {
        ifs.SetForwarding(i, true);
        nodes.Get(i)->GetObject<Ipv6L3Protocol>()->SetAttribute("IpForward", BooleanValue(true));
    }
    for (uint32_t i = 0; i < n; i++) {
        Ptr<Ipv6Interface> iface = nodes.Get(i)->GetObject<Ipv6L3Protocol>()->GetInterface(1);
        for (uint32_t j = 0; j < n; j++) {
            if (i == j) continue;
            Ptr<Ipv6Interface> other = nodes.Get(j)->GetObject<Ipv6L3Protocol>()->GetInterface(1);
            for (uint32_t a = 0; a < other->GetNAddresses(); a++) {
                NdiscCache::Entry* e = iface->GetNdiscCache()->Add(other->GetAddress(a).GetAddress());
                e->SetMacAddress(sixDevs.Get(j)->GetAddress());
                e->MarkPermanent();
            }
        }
    }
    return ifs;
}

std::string RunChain(uint32_t payload, double seconds, uint32_t seed, double spacing) {
    Reset(seed);
    Config::SetDefault("ns3::Icmpv6L4Protocol::DAD", BooleanValue(false));
    Config::SetDefault("ns3::Ipv6L3Protocol::SendIcmpv6Redirect", BooleanValue(false));
    NodeContainer nodes;
    nodes.Create(4);
    std::vector<Vector> pos;
    for (int i = 0; i < 4; i++) pos.push_back(Vector(i * spacing, 0, 0));
    NetDeviceContainer lrDevs = Radios(nodes, pos);
    NetDeviceContainer sixDevs;
    Ipv6InterfaceContainer ifs = SixLowPanStack(nodes, lrDevs, sixDevs);
    // Host routes: 3 -> 2 -> 1 -> 0 (more specific than the on-link /64).
    Ipv6StaticRoutingHelper rh;
    Ipv6Address server = ifs.GetAddress(0, 1);
    for (uint32_t i = 2; i < 4; i++) {
        rh.GetStaticRouting(nodes.Get(i)->GetObject<Ipv6>())
            ->AddHostRouteTo(server, ifs.GetAddress(i - 1, 1), 1);
    }
    TypeId udp = TypeId::LookupByName("ns3::UdpSocketFactory");
    Ptr<Socket> rx = Socket::CreateSocket(nodes.Get(0), udp);
    rx->Bind(Inet6SocketAddress(Ipv6Address::GetAny(), 5683));
    rx->SetRecvCallback(MakeCallback(&OnServerRx));
    g.tx = Socket::CreateSocket(nodes.Get(3), udp);
    g.tx->Bind6();
    g.dst = Inet6SocketAddress(server, 5683);
    g.payload = payload;
    Simulator::Schedule(Seconds(0), &SendDatagram);
    Simulator::Stop(Seconds(seconds));
    Simulator::Run();
    g.timeout.Cancel();
    std::string out = Figures(1, seconds, payload, 3, false);
    std::ostringstream o;
    o << out << "sent=" << g.sent << "\n";
    o << "first_psdus=";
    for (auto& kv : g.firstPsdus) {
        o << "node" << kv.first << ":";
        for (auto b : kv.second) o << b << "/";
        o << ",";
    }
    o << "\n";
    o << "ip_drops=";
    for (auto& kv : g.ipDrops) o << "reason" << kv.first << ":" << kv.second << ",";
    o << "\n";
    Finish();
    return o.str();
}

// ---- the timing case: a Ch. 6-like grid over IPv6 / 6LoWPAN / UDP ----

struct GridApp {
    std::vector<Ptr<Socket>> clients;            // by client index
    std::vector<Inet6SocketAddress> serverOf;    // by client index
    uint32_t payload = 0, reply = 0;
    double interval = 0;
    uint64_t sent = 0, served = 0, answered = 0;
};
static GridApp* a_ = nullptr;

static void GridSend(uint32_t k) {
    a_->sent++;
    a_->clients[k]->SendTo(Create<Packet>(a_->payload), 0, a_->serverOf[k]);
    Simulator::Schedule(Seconds(a_->interval), &GridSend, k);
}

static void GridServerRx(Ptr<Socket> s) {
    Address from;
    while (Ptr<Packet> p = s->RecvFrom(from)) {
        a_->served++;
        s->SendTo(Create<Packet>(a_->reply), 0, from);
    }
}

static void GridClientRx(Ptr<Socket> s) {
    Address from;
    while (Ptr<Packet> p = s->RecvFrom(from)) a_->answered++;
}

// `next[i * n + d]`: node i's next hop towards node d (d itself when a neighbour). Clients
// send `payload` bytes of UDP every `interval` s from a start in [0, 1) s to their server
// (`serverOfClient`), which answers each with `reply` bytes. Only Simulator::Run is timed:
// wall (steady clock) and CPU (std::clock, this process; the run is single-threaded).
std::string RunGrid(std::vector<double> xs, std::vector<double> ys, std::vector<int> next,
                    std::vector<uint32_t> clientNodes, std::vector<uint32_t> serverOfClient,
                    std::vector<uint32_t> serverNodes, uint32_t payload, uint32_t reply,
                    double interval, double seconds, uint32_t seed) {
    Reset(seed);
    a_ = new GridApp();
    a_->payload = payload;
    a_->reply = reply;
    a_->interval = interval;
    Config::SetDefault("ns3::Icmpv6L4Protocol::DAD", BooleanValue(false));
    Config::SetDefault("ns3::Ipv6L3Protocol::SendIcmpv6Redirect", BooleanValue(false));
    uint32_t n = xs.size();
    NodeContainer nodes;
    nodes.Create(n);
    std::vector<Vector> pos;
    for (uint32_t i = 0; i < n; i++) pos.push_back(Vector(xs[i], ys[i], 0));
    NetDeviceContainer lrDevs = Radios(nodes, pos);
    NetDeviceContainer sixDevs;
    Ipv6InterfaceContainer ifs = SixLowPanStack(nodes, lrDevs, sixDevs);
    Ipv6StaticRoutingHelper rh;
    for (uint32_t i = 0; i < n; i++) {
        Ptr<Ipv6StaticRouting> r = rh.GetStaticRouting(nodes.Get(i)->GetObject<Ipv6>());
        for (uint32_t d = 0; d < n; d++) {
            int h = next[i * n + d];
            if (d == i || h < 0 || (uint32_t)h == d) continue;
            r->AddHostRouteTo(ifs.GetAddress(d, 1), ifs.GetAddress(h, 1), 1);
        }
    }
    TypeId udp = TypeId::LookupByName("ns3::UdpSocketFactory");
    std::vector<Ptr<Socket>> servers;
    for (uint32_t s : serverNodes) {
        Ptr<Socket> rx = Socket::CreateSocket(nodes.Get(s), udp);
        rx->Bind(Inet6SocketAddress(Ipv6Address::GetAny(), 5683));
        rx->SetRecvCallback(MakeCallback(&GridServerRx));
        servers.push_back(rx);
    }
    Ptr<UniformRandomVariable> start = CreateObject<UniformRandomVariable>();
    start->SetStream(5000);
    for (uint32_t k = 0; k < clientNodes.size(); k++) {
        Ptr<Socket> c = Socket::CreateSocket(nodes.Get(clientNodes[k]), udp);
        c->Bind6();
        c->SetRecvCallback(MakeCallback(&GridClientRx));
        a_->clients.push_back(c);
        a_->serverOf.push_back(Inet6SocketAddress(ifs.GetAddress(serverOfClient[k], 1), 5683));
        Simulator::Schedule(Seconds(start->GetValue(0, 1)), &GridSend, k);
    }
    Simulator::Stop(Seconds(seconds));
    auto wall0 = std::chrono::steady_clock::now();
    std::clock_t cpu0 = std::clock();
    Simulator::Run();
    double cpu = double(std::clock() - cpu0) / CLOCKS_PER_SEC;
    double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall0).count();
    std::ostringstream o;
    o.setf(std::ios::fixed);
    o.precision(3);
    o << "run_wall_s=" << wall << "\n";
    o << "run_cpu_s=" << cpu << "\n";
    o << "events=" << Simulator::GetEventCount() << "\n";
    o << "requests_sent=" << a_->sent << "\n";
    o << "requests_served=" << a_->served << "\n";
    o << "replies_received=" << a_->answered << "\n";
    o << "data_frames=" << g.dataTx << "\n";
    o << "mac_retries=" << g.retries << "\n";
    a_->clients.clear();
    servers.clear();
    delete a_;
    a_ = nullptr;
    Finish();
    return o.str();
}
#undef g
}
"""

_NS = None


def ns3_module():
    """ns-3's cppyy namespace with the experiment compiled in."""
    global _NS
    if _NS is None:
        from ns import ns  # noqa: the pip package's cppyy bindings

        ns.cppyy.cppdef(CPP)
        _NS = ns
    return _NS


#: MSDU of the single-hop cases: netsim's 50-B CoAP payload after IPHC (2 B) and UDP NHC (7 B).
SINGLE_HOP_MSDU = 59
#: The CoAP bytes in it, which the throughput counts (as netsim's does).
SINGLE_HOP_COAP = 50
#: UDP payload of the chain (netsim: 300 B of CoAP).
CHAIN_PAYLOAD = 300


def positions(case, n=1):
    """Node positions (metres), sink first, as in netsim's mesh_probe."""
    import math

    if case == "saturated":
        pts = [(0.0, 0.0)]
        for k in range(n):
            deg = 0.0 if n == 1 else -60.0 + 120.0 * k / (n - 1)
            pts.append((5.0 * math.cos(math.radians(deg)), 5.0 * math.sin(math.radians(deg))))
        return pts
    if case == "hidden":
        return [(8.0, 0.0), (0.0, 0.0), (16.0, 0.0)]
    raise ValueError(case)


def run(case, n=1, seconds=20.0, seed=1):
    """Runs one case; returns its figures as a dict of strings."""
    ns = ns3_module()
    m = ns.cppyy.gbl.coaplab_mesh
    if case == "chain":
        text = str(m.RunChain(CHAIN_PAYLOAD, float(seconds), int(seed), 8.0))
    else:
        pts = positions(case, n)
        xs = ns.cppyy.gbl.std.vector["double"]([p[0] for p in pts])
        ys = ns.cppyy.gbl.std.vector["double"]([p[1] for p in pts])
        text = str(m.RunSingleHop(xs, ys, SINGLE_HOP_MSDU, SINGLE_HOP_COAP, float(seconds), int(seed)))
    return dict(line.split("=", 1) for line in text.strip().splitlines())


#: The timing case (docs/BENCHMARKS.md "Mesh"): the Ch. 6 6x6 grid, 10-m spacing, border
#: router at node 21, servers at nodes 5 (top-right) and 30 (bottom-left), 33 clients sending
#: 25 B of UDP every 0.4 s, client k to server k mod 2 (coaplab's round-robin rule), each
#: request answered with 4 B (a CoAP 2.04 ACK's size).
GRID_ROWS, GRID_COLS, GRID_SPACING_M = 6, 6, 10.0
GRID_BORDER_ROUTER, GRID_SERVERS = 21, (5, 30)


def grid_next_hops(rows, cols):
    """Shortest-path next hops over the grid's 4-neighbour links (the 10-m UDGM links at
    10-m spacing): next[i * n + d], -1 on the diagonal; ties go to the lowest node id."""
    from collections import deque

    n = rows * cols

    def neighbours(u):
        r, c = divmod(u, cols)
        out = []
        for dr, dc in ((-1, 0), (0, -1), (0, 1), (1, 0)):
            if 0 <= r + dr < rows and 0 <= c + dc < cols:
                out.append((r + dr) * cols + c + dc)
        return sorted(out)

    nxt = [-1] * (n * n)
    for d in range(n):
        # BFS from d: dist to d; i's next hop is its lowest-id neighbour one step closer.
        dist = [-1] * n
        dist[d] = 0
        q = deque([d])
        while q:
            u = q.popleft()
            for v in neighbours(u):
                if dist[v] < 0:
                    dist[v] = dist[u] + 1
                    q.append(v)
        for i in range(n):
            if i != d:
                nxt[i * n + d] = min(v for v in neighbours(i) if dist[v] == dist[i] - 1)
    return nxt


def run_grid(seconds=1080.0, seed=1, payload=25, reply=4, interval=0.4):
    """The timing case; returns its figures (run_wall_s, run_cpu_s: Simulator::Run only)."""
    ns = ns3_module()
    m = ns.cppyy.gbl.coaplab_mesh
    std = ns.cppyy.gbl.std
    rows, cols, s = GRID_ROWS, GRID_COLS, GRID_SPACING_M
    n = rows * cols
    xs = std.vector["double"]([float((i % cols) * s) for i in range(n)])
    ys = std.vector["double"]([float((i // cols) * s) for i in range(n)])
    clients = [i for i in range(n) if i != GRID_BORDER_ROUTER and i not in GRID_SERVERS]
    server_of = [GRID_SERVERS[k % len(GRID_SERVERS)] for k in range(len(clients))]
    text = str(
        m.RunGrid(
            xs, ys, std.vector["int"](grid_next_hops(rows, cols)),
            std.vector["unsigned int"](clients), std.vector["unsigned int"](server_of),
            std.vector["unsigned int"](list(GRID_SERVERS)), payload, reply, float(interval),
            float(seconds), int(seed),
        )
    )
    return dict(line.split("=", 1) for line in text.strip().splitlines())


def run_segments(run, total_s=1080.0, segment_s=60.0, first_seed=1, max_tries=100):
    """The timing case as consecutive `segment_s` runs (seeds first_seed, first_seed + 1, ...)
    until `total_s` simulated seconds ran. `run(seconds, seed)` gives a segment's figures, or
    None when it crashed: ns-3.44's lr-wpan aborts some runs of this load (an NS_ASSERT in
    LrWpanPhy::CheckInterference, a segmentation fault without asserts: BUSY_RX without a
    current packet); a crashed segment is counted and replaced by the next seed. Returns
    (segments' figures, crashed seeds)."""
    done, aborted, seed = [], [], first_seed
    while sum(float(d["seconds"]) for d in done) < total_s - 1e-9 and seed < first_seed + max_tries:
        seconds = min(segment_s, total_s - sum(float(d["seconds"]) for d in done))
        figures = run(seconds, seed)
        if figures is None:
            aborted.append(seed)
        else:
            figures["seconds"] = str(seconds)
            figures["seed"] = str(seed)
            done.append(figures)
        seed += 1
    return done, aborted


def run_grid_forked(seconds, seed):
    """One segment through the wheel's cppyy, in a forked child of this process (cppyy
    compiles once; a crash ends only the child); its figures, or None when it crashed."""
    import json

    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(r)
        try:
            os.write(w, json.dumps(run_grid(seconds, seed)).encode())
        finally:
            os._exit(0)
    os.close(w)
    chunks = []
    while True:
        b = os.read(r, 65536)
        if not b:
            break
        chunks.append(b)
    os.close(r)
    _, status = os.waitpid(pid, 0)
    text = b"".join(chunks).decode()
    return json.loads(text) if status == 0 and text else None


#: ns-3 module headers the experiment uses (cppyy's `ns` loads them all; natively they are named).
NATIVE_HEADERS = ["core", "network", "internet", "mobility", "propagation", "spectrum", "lr-wpan", "sixlowpan"]


def grid_inputs():
    """The timing case's inputs: positions, next hops, clients, their servers, the servers."""
    rows, cols, s = GRID_ROWS, GRID_COLS, GRID_SPACING_M
    n = rows * cols
    xs = [float((i % cols) * s) for i in range(n)]
    ys = [float((i // cols) * s) for i in range(n)]
    clients = [i for i in range(n) if i != GRID_BORDER_ROUTER and i not in GRID_SERVERS]
    server_of = [GRID_SERVERS[k % len(GRID_SERVERS)] for k in range(len(clients))]
    return xs, ys, grid_next_hops(rows, cols), clients, server_of, list(GRID_SERVERS)


def native_grid(build, payload=25, reply=4, interval=0.4):
    """target/ns3-mesh/grid-native: the experiment's C++ with a main() running the timing case
    (argv: seconds seed), compiled against the ns-3 build in `build`; rebuilt when this script
    is newer."""
    import glob
    import subprocess

    inc, lib = os.path.join(build, "include"), os.path.join(build, "lib")
    if not os.path.exists(os.path.join(inc, "ns3", "lr-wpan-module.h")):
        sys.exit(f"ns3_side.py: --ns3-build {build}: no include/ns3/lr-wpan-module.h (give the output "
                 "directory of an ns-3 3.44 build with the lr-wpan and sixlowpan modules)")
    libs = sorted(glob.glob(os.path.join(lib, "libns3*.so")))
    if not libs:
        sys.exit(f"ns3_side.py: --ns3-build {build}: no libns3*.so in lib/")
    target = os.environ.get("CARGO_TARGET_DIR", os.path.join(ROOT, "target"))
    out_dir = os.path.join(target, "ns3-mesh")
    os.makedirs(out_dir, exist_ok=True)
    src, exe = os.path.join(out_dir, "grid-native.cc"), os.path.join(out_dir, "grid-native")
    if os.path.exists(exe) and os.path.getmtime(exe) >= os.path.getmtime(os.path.abspath(__file__)):
        return exe
    xs, ys, nxt, clients, server_of, servers = grid_inputs()

    def vec(t, v):
        return f"std::vector<{t}>{{{', '.join(map(str, v))}}}"

    main = f"""
#include <cstdlib>
#include <iostream>
int main(int argc, char** argv) {{
    if (argc != 3) {{ std::cerr << "usage: grid-native SECONDS SEED\\n"; return 2; }}
    std::cout << coaplab_mesh::RunGrid({vec("double", xs)}, {vec("double", ys)}, {vec("int", nxt)},
        {vec("uint32_t", clients)}, {vec("uint32_t", server_of)}, {vec("uint32_t", servers)},
        {payload}, {reply}, {interval!r}, std::atof(argv[1]), (uint32_t)std::atoi(argv[2]));
    return 0;
}}
"""
    with open(src, "w") as f:
        f.write("".join(f'#include "ns3/{h}-module.h"\n' for h in NATIVE_HEADERS) + CPP + main)
    cmd = ["g++", "-O3", "-march=native", "-DNDEBUG", "-std=c++20", "-I", inc, src, "-o", exe,
           "-L", lib, f"-Wl,-rpath,{lib}"] + [f"-l{os.path.basename(p)[3:-3]}" for p in libs]
    print("compiling " + " ".join(cmd[:9]) + " ...", file=sys.stderr)
    subprocess.check_call(cmd)
    return exe


def run_grid_native(exe, seconds, seed):
    """One native run of the timing case; its figures, or None when the process crashed."""
    import subprocess

    out = subprocess.run([exe, str(seconds), str(seed)], capture_output=True, text=True)
    if out.returncode != 0:
        return None
    return dict(line.split("=", 1) for line in out.stdout.strip().splitlines())


def ensure_venv():
    """Re-executes this script in .peers/ns3-venv (the TCP oracle's installer)."""
    import importlib.util

    spec = importlib.util.spec_from_file_location(
        "ns3_oracle", os.path.join(ROOT, "scripts", "ns3-oracle", "oracle.py")
    )
    oracle = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(oracle)
    oracle.ensure_venv(script=os.path.abspath(sys.argv[0]))


def main():
    usage = (
        "usage: ns3_side.py saturated N [seconds] [seed] | hidden|chain [seconds] [seed]"
        " | grid [seconds] [seed] | grid-segments [total_s] [segment_s]"
        " | --ns3-build DIR grid|grid-segments ..."
    )
    args = sys.argv[1:]
    build = None
    if args[:1] == ["--ns3-build"]:
        if len(args) < 2:
            sys.exit(usage)
        build, args = os.path.abspath(args[1]), args[2:]
    if not args or args[0] not in ("saturated", "hidden", "chain", "grid", "grid-segments"):
        sys.exit(usage)
    if build is not None:
        native_main(build, args)
        return
    ensure_venv()
    case, rest = args[0], args[1:]
    if case == "grid":
        seconds = float(rest[0]) if rest else 1080.0
        seed = int(rest[1]) if len(rest) > 1 else 1
        for k, v in run_grid(seconds, seed).items():
            print(f"{k}={v}")
        return
    if case == "grid-segments":
        total = float(rest[0]) if rest else 1080.0
        segment = float(rest[1]) if len(rest) > 1 else 60.0
        ns3_module()
        done, aborted = run_segments(run_grid_forked, total, segment)
        print_segments(done, aborted)
        return
    n = 1
    if case == "saturated":
        if not rest:
            sys.exit(usage)
        n, rest = int(rest[0]), rest[1:]
    seconds = float(rest[0]) if rest else 20.0
    seed = int(rest[1]) if len(rest) > 1 else 1
    for k, v in run(case, n, seconds, seed).items():
        print(f"{k}={v}")


GRID_KEYS = ["seconds", "run_cpu_s", "run_wall_s", "events", "requests_sent",
             "requests_served", "replies_received", "data_frames", "mac_retries"]


def print_segments(done, aborted):
    for d in done:
        print(" ".join(f"{k}={v}" for k, v in d.items()))
    for k in GRID_KEYS:
        print(f"total_{k}={sum(float(d[k]) for d in done):.3f}")
    print(f"aborted_seeds={','.join(map(str, aborted))}")


def native_main(build, args):
    """The grid cases against a native ns-3 build (--ns3-build)."""
    case, rest = args[0], args[1:]
    if case not in ("grid", "grid-segments"):
        sys.exit("ns3_side.py: --ns3-build runs the grid cases only (the others need the wheel's cppyy)")
    exe = native_grid(build)
    if case == "grid":
        seconds = float(rest[0]) if rest else 1080.0
        seed = int(rest[1]) if len(rest) > 1 else 1
        figures = run_grid_native(exe, seconds, seed)
        if figures is None:
            sys.exit(f"ns3_side.py: the run crashed (seed {seed}; see docs/BENCHMARKS.md on lr-wpan)")
        for k, v in figures.items():
            print(f"{k}={v}")
        return
    total = float(rest[0]) if rest else 1080.0
    segment = float(rest[1]) if len(rest) > 1 else 60.0
    done, aborted = run_segments(lambda seconds, seed: run_grid_native(exe, seconds, seed), total, segment)
    print_segments(done, aborted)


if __name__ == "__main__":
    main()
