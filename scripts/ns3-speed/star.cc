// The star workloads of scripts/ns3-speed/run.py in native ns-3 (issue 17): N flows between a
// client node and a server node over one point-to-point link set up as the nbiot preset
// (30 kbit/s down, 60 kbit/s up, byte FIFO of BUFFER bytes), as scripts/ns3-oracle/oracle.py
// sets it up. Compiled natively (run.py) against the headers and libraries of either anchor:
// the pip `ns3` wheel (3.44, ns-3's `default` profile) or Debian's libns3-dev (3.37, a release
// build without asserts); no Python or cppyy time is counted. One source for both versions:
// it uses only API that 3.37 and 3.44 share.
//
//   star tcp N OBJECT_BYTES BUFFER   # per flow: connect, CSM 6 B + GET 5 B; the server answers
//                                    # CSM 2 B + one OBJECT_BYTES+8 message (RFC 8323 framing);
//                                    # TcpLinuxReno + PRR with Linux's RTO re-arm (RearmSocket)
//   star udp N EXCHANGES BUFFER      # per flow: EXCHANGES closed-loop 60-B CoAP CON requests,
//                                    # each answered by a 60-B piggybacked response carrying the
//                                    # request's Message ID, which completes the exchange only if
//                                    # it is the current one; CoAP's retransmission (2 s x
//                                    # U[1, 1.5], doubling to 60 s, 20 retries)
//
// The simulation stops when the last flow completes, as coaplab's run does.
//
// Prints one line: "packets=P events=E cpu_s=C completed=K", P the packets the two devices
// transmitted (the link packets), C the CPU time (user + system, getrusage) of building,
// running and destroying the simulation (not the process start or library loading).
#include "ns3/applications-module.h"
#include "ns3/core-module.h"
#include "ns3/internet-module.h"
#include "ns3/network-module.h"
#include "ns3/point-to-point-module.h"
#include "ns3/traffic-control-module.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <sys/resource.h>
#include <vector>

using namespace ns3;

static uint64_t g_packets = 0;
static uint32_t g_completed = 0;
static uint32_t g_flows = 0;

/// One more flow completed; the run ends with the last, as coaplab's does (nothing after it
/// is simulated: no connection teardown, no late copies).
static void
FlowCompleted()
{
    if (++g_completed == g_flows)
    {
        Simulator::Stop();
    }
}

static void
PhyTx(Ptr<const Packet>)
{
    g_packets++;
}

static double
CpuSeconds()
{
    rusage u;
    getrusage(RUSAGE_SELF, &u);
    return u.ru_utime.tv_sec + u.ru_utime.tv_usec * 1e-6 + u.ru_stime.tv_sec +
           u.ru_stime.tv_usec * 1e-6;
}

// ---- TCP: the long transfer of docs/experiments.md §5.1 (the oracle's exchange) ----
struct TcpFlow
{
    uint32_t id = 0;
    uint32_t object = 0;
    Ptr<Socket> cli, listener;
    uint64_t got = 0;
    uint32_t srv_rx = 0;
    bool responded = false;
    bool done = false;
};

static Ipv4Address g_server;

static void
SrvRecv(TcpFlow* f, Ptr<Socket> s)
{
    Ptr<Packet> p;
    while ((p = s->Recv()))
        f->srv_rx += p->GetSize();
    if (!f->responded && f->srv_rx >= 11)
    {
        f->responded = true;
        s->Send(Create<Packet>(f->object));
    }
}

static bool
SrvRequest(TcpFlow*, Ptr<Socket>, const Address&)
{
    return true;
}

static void
SrvAccept(TcpFlow* f, Ptr<Socket> s, const Address&)
{
    s->SetRecvCallback(MakeBoundCallback(&SrvRecv, f));
    s->Send(Create<Packet>(2)); // server CSM
}

static void
CliRecv(TcpFlow* f, Ptr<Socket> s)
{
    Ptr<Packet> p;
    while ((p = s->Recv()))
        f->got += p->GetSize();
    if (!f->done && f->got >= 2 + (uint64_t)f->object)
    {
        f->done = true;
        FlowCompleted();
        s->Close();
    }
}

static void
CliGet(Ptr<Socket> s)
{
    s->Send(Create<Packet>(5));
}

static void
CliConnected(TcpFlow*, Ptr<Socket> s)
{
    s->Send(Create<Packet>(6)); // client CSM; the GET 2 ns later, its own segment
    Simulator::Schedule(NanoSeconds(2), &CliGet, s);
}

static void
CliFailed(TcpFlow*, Ptr<Socket>)
{
}

// TcpSocketBase with Linux's RTO re-arm on every ACK that advances snd_una (ns-3 re-arms only
// on the first partial ACK of a recovery, RFC 6582's "impatient" variant, and then times out
// where Linux and netsim do not: docs/tcp-validation.md, where this subclass, the same as
// scripts/ns3-oracle/oracle.py's `linuxreno-rearm`, brings ns-3 to netsim's retransmissions).
class RearmSocket : public TcpSocketBase
{
  public:
    RearmSocket() = default;

    RearmSocket(const RearmSocket& o)
        : TcpSocketBase(o)
    {
    }

  protected:
    Ptr<TcpSocketBase> Fork() override
    {
        return CopyObject<RearmSocket>(this);
    }

    void ReceivedAck(Ptr<Packet> packet, const TcpHeader& h) override
    {
        m_isFirstPartialAck = true;
        TcpSocketBase::ReceivedAck(packet, h);
    }
};

/// A TcpLinuxReno + PRR socket with the re-arm, built as TcpL4Protocol::CreateSocket does.
static Ptr<Socket>
TcpSocketOn(Ptr<Node> node)
{
    Ptr<RearmSocket> s = CreateObject<RearmSocket>();
    ObjectFactory rtt;
    ObjectFactory algo;
    ObjectFactory rec;
    rtt.SetTypeId("ns3::RttMeanDeviation");
    algo.SetTypeId("ns3::TcpLinuxReno");
    rec.SetTypeId("ns3::TcpPrrRecovery");
    s->SetNode(node);
    s->SetTcp(node->GetObject<TcpL4Protocol>());
    s->SetRtt(rtt.Create<RttEstimator>());
    s->SetCongestionControlAlgorithm(algo.Create<TcpCongestionOps>());
    s->SetRecoveryAlgorithm(rec.Create<TcpRecoveryOps>());
    return s; // TcpSocketBase::SetupCallback adds it to TcpL4Protocol at Bind
}

static void
CliStart(TcpFlow* f, Ptr<Node> node)
{
    f->cli = TcpSocketOn(node);
    f->cli->Bind();
    f->cli->SetConnectCallback(MakeBoundCallback(&CliConnected, f),
                               MakeBoundCallback(&CliFailed, f));
    f->cli->SetRecvCallback(MakeBoundCallback(&CliRecv, f));
    f->cli->Connect(InetSocketAddress(g_server, 5000 + f->id));
}

// ---- UDP: closed-loop CoAP CON exchanges (the continuous workload of docs/experiments.md §4 and §6.1) ----
struct UdpFlow
{
    uint32_t id = 0;
    uint32_t left = 0;
    uint32_t tries = 0;
    Time timeout;
    uint16_t mid = 0;
    Ptr<Socket> sock;
    EventId timer;
};

static const uint32_t COAP_BYTES = 60;
static Ptr<UniformRandomVariable> g_uniform;

static void UdpSend(UdpFlow* f);

/// A 60-B CoAP message: the 4-B header (version 1, `type`, no token, `code`, Message ID
/// `mid`) and zero bytes standing for options and payload.
static Ptr<Packet>
CoapMessage(uint8_t type, uint8_t code, uint16_t mid)
{
    uint8_t bytes[COAP_BYTES] = {};
    bytes[0] = 0x40 | (type << 4);
    bytes[1] = code;
    bytes[2] = mid >> 8;
    bytes[3] = mid & 0xff;
    return Create<Packet>(bytes, COAP_BYTES);
}

static uint16_t
MessageId(Ptr<Packet> p)
{
    uint8_t head[4] = {};
    p->CopyData(head, sizeof head);
    return (uint16_t)(head[2] << 8 | head[3]);
}

static void
UdpTimeout(UdpFlow* f)
{
    if (f->tries >= 20)
    {
        return; // gave up (the fasor18 preset's MAX_RETRANSMIT 20)
    }
    f->tries++;
    f->timeout = Min(f->timeout * 2, Seconds(60)); // the preset's 60-s cap
    f->sock->Send(CoapMessage(0, 0x01, f->mid)); // CON GET
    f->timer = Simulator::Schedule(f->timeout, &UdpTimeout, f);
}

static void
UdpSend(UdpFlow* f)
{
    f->mid++;
    f->tries = 0;
    f->timeout = Seconds(2.0 * g_uniform->GetValue(1.0, 1.5));
    f->sock->Send(CoapMessage(0, 0x01, f->mid));
    f->timer = Simulator::Schedule(f->timeout, &UdpTimeout, f);
}

static void
UdpClientRecv(UdpFlow* f, Ptr<Socket> s)
{
    Ptr<Packet> p;
    while ((p = s->Recv()))
    {
        // !IsExpired(): IsPending() in 3.44, IsRunning() in 3.37; the same test in both.
        if (f->timer.IsExpired() || MessageId(p) != f->mid)
        {
            continue; // an answer to an exchange already finished (a late copy's)
        }
        f->timer.Cancel();
        if (--f->left == 0)
        {
            FlowCompleted();
        }
        else
        {
            UdpSend(f);
        }
    }
}

static void
UdpServerRecv(Ptr<Socket> s)
{
    Ptr<Packet> p;
    Address from;
    while ((p = s->RecvFrom(from)))
    {
        // Every copy answered anew: an ACK with a 2.05 Content piggybacked.
        s->SendTo(CoapMessage(2, 0x45, MessageId(p)), 0, from);
    }
}

int
main(int argc, char** argv)
{
    if (argc != 5)
    {
        std::fprintf(stderr, "usage: star tcp|udp FLOWS OBJECT_BYTES|EXCHANGES BUFFER_BYTES\n");
        return 2;
    }
    std::string mode = argv[1];
    uint32_t n = std::atoi(argv[2]);
    uint32_t amount = std::atoi(argv[3]);
    uint32_t buffer = std::atoi(argv[4]);
    g_flows = n;
    double cpu0 = CpuSeconds();

    Config::SetDefault("ns3::TcpL4Protocol::SocketType", TypeIdValue(TcpLinuxReno::GetTypeId()));
    Config::SetDefault("ns3::TcpSocket::SegmentSize", UintegerValue(256));
    Config::SetDefault("ns3::TcpSocket::InitialCwnd", UintegerValue(4));
    Config::SetDefault("ns3::TcpSocket::DelAckCount", UintegerValue(2));
    Config::SetDefault("ns3::TcpSocket::TcpNoDelay", BooleanValue(true));
    // Room for the whole answer in the send buffer (one Send of a virtual, zero-filled packet).
    Config::SetDefault("ns3::TcpSocket::SndBufSize",
                       UintegerValue(std::max<uint32_t>(1 << 22, amount + 1024)));
    // netsim's TCP never gives up a connection; ns-3 would after 6 SYNs or 6 expiries.
    Config::SetDefault("ns3::TcpSocket::ConnCount", UintegerValue(1000));
    Config::SetDefault("ns3::TcpSocket::DataRetries", UintegerValue(1000));
    Config::SetDefault("ns3::TcpSocket::RcvBufSize", UintegerValue(1 << 22));
    Config::SetDefault("ns3::TcpSocketBase::Sack", BooleanValue(false));
    Config::SetDefault("ns3::TcpSocketBase::Timestamp", BooleanValue(false));
    Config::SetDefault("ns3::TcpSocketBase::MinRto", TimeValue(MilliSeconds(200)));
    RngSeedManager::SetSeed(1);
    g_uniform = CreateObject<UniformRandomVariable>();

    NodeContainer nodes;
    nodes.Create(2); // 0 = server, 1 = client
    PointToPointHelper p2p;
    p2p.SetChannelAttribute("Delay", TimeValue(MilliSeconds(315)));
    p2p.SetDeviceAttribute("Mtu", UintegerValue(296));
    // ns-3's device queue excludes the packet in service; netsim's backlog includes it.
    uint32_t limit = buffer >= 1000000 ? buffer : (uint32_t)((buffer - 296) * 298.0 / 296.0);
    p2p.SetQueue("ns3::DropTailQueue<Packet>",
                 "MaxSize",
                 QueueSizeValue(QueueSize(std::to_string(limit) + "B")));
    NetDeviceContainer dev = p2p.Install(nodes);
    dev.Get(0)->SetAttribute("DataRate", DataRateValue(DataRate((uint64_t)(30000.0 * 298 / 296))));
    dev.Get(1)->SetAttribute("DataRate", DataRateValue(DataRate((uint64_t)(60000.0 * 298 / 296))));
    for (uint32_t d = 0; d < 2; d++)
    {
        dev.Get(d)->TraceConnectWithoutContext("PhyTxEnd", MakeCallback(&PhyTx));
    }
    InternetStackHelper stack;
    stack.Install(nodes);
    Ipv4AddressHelper addr;
    addr.SetBase("10.0.0.0", "255.255.255.0");
    Ipv4InterfaceContainer ifs = addr.Assign(dev);
    TrafficControlHelper tch;
    tch.Uninstall(dev);
    g_server = ifs.GetAddress(0);

    std::vector<TcpFlow> tcp(mode == "tcp" ? n : 0);
    std::vector<UdpFlow> udp(mode == "udp" ? n : 0);
    Ptr<Socket> server;
    if (mode == "tcp")
    {
        for (uint32_t i = 0; i < n; i++)
        {
            TcpFlow* f = &tcp[i];
            f->id = i;
            f->object = amount + 8; // RFC 8323 frame: 4-B extended length, code, 1-B token...
            f->listener = TcpSocketOn(nodes.Get(0));
            f->listener->Bind(InetSocketAddress(Ipv4Address::GetAny(), 5000 + i));
            f->listener->Listen();
            f->listener->SetAcceptCallback(MakeBoundCallback(&SrvRequest, f),
                                           MakeBoundCallback(&SrvAccept, f));
            Simulator::Schedule(Seconds(0), &CliStart, f, nodes.Get(1));
        }
    }
    else
    {
        server = Socket::CreateSocket(nodes.Get(0), UdpSocketFactory::GetTypeId());
        server->Bind(InetSocketAddress(Ipv4Address::GetAny(), 5683));
        server->SetRecvCallback(MakeCallback(&UdpServerRecv));
        for (uint32_t i = 0; i < n; i++)
        {
            UdpFlow* f = &udp[i];
            f->id = i;
            f->left = amount;
            f->sock = Socket::CreateSocket(nodes.Get(1), UdpSocketFactory::GetTypeId());
            f->sock->Bind();
            f->sock->Connect(InetSocketAddress(g_server, 5683));
            f->sock->SetRecvCallback(MakeBoundCallback(&UdpClientRecv, f));
            Simulator::Schedule(Seconds(0), &UdpSend, f);
        }
    }
    Simulator::Stop(Seconds(1e6));
    Simulator::Run();
    uint64_t events = Simulator::GetEventCount();
    Simulator::Destroy();
    double cpu = CpuSeconds() - cpu0;
    std::printf("packets=%llu events=%llu cpu_s=%.6f completed=%u\n",
                (unsigned long long)g_packets,
                (unsigned long long)events,
                cpu,
                g_completed);
    return 0;
}
