// Minimal reproducer for ns-3 lr-wpan: a PHY left in BUSY_RX without a current packet, and the
// next frame's StartRx dereferencing that null packet in LrWpanPhy::CheckInterference
// (docs/BENCHMARKS.md, "Issue 35, part 3": the crash that stopped 5 of 6 long Ch. 6 grid runs).
//
// Three PHYs on one SingleModelSpectrumChannel, no propagation loss (every PHY hears every
// other at the transmit power), no MAC: the PHY primitives are called at chosen instants.
//
//   t = 0        A and C: TX_ON (at once, from TRX_OFF); B: RX_ON (after aTurnaroundTime).
//   t = 1 ms     A sends a 100-octet PSDU: B goes BUSY_RX with it as current packet; the frame
//                ends at 1 ms + (6 + 100) x 32 us = 4.392 ms.
//   t = 4.3 ms   B is asked for TX_ON (as the MAC does to send an ACK or a frame): the reception
//                is marked cancelled (m_isRxCanceled) and the state switch is scheduled
//                aTurnaroundTime (192 us) later, at 4.492 ms; B stays BUSY_RX meanwhile.
//   t = 4.392 ms A's frame ends at B: EndRx clears the current packet (nullptr) and, the
//                reception being cancelled, leaves the state alone: BUSY_RX, no packet.
//   t = 4.42 ms  C sends a frame: StartRx at B finds BUSY_RX and calls CheckInterference, which
//                dereferences the null current packet.
//
// Expected: C's frame is dropped (or received after the switch); the run prints "done".
// Actual: ns-3.44 (PyPI wheel, asserts on): NS_ASSERT failed, cond="m_ptr" in Ptr::operator->
// from LrWpanPhy::CheckInterference; ns-3.37 (Debian libns3-dev, asserts compiled out): SIGSEGV.
//
//   g++ -O2 -std=c++17 scripts/ns3-mesh/lrwpan-busy-rx.cc -o /tmp/lrwpan-busy-rx -lns3-lr-wpan \
//     -lns3-spectrum -lns3-antenna -lns3-propagation -lns3-mobility -lns3-network -lns3-core
//   /tmp/lrwpan-busy-rx            # crashes; C's frame at 4420 us
//   /tmp/lrwpan-busy-rx 4500       # done: C's frame after the switch (4492 us)
//   /tmp/lrwpan-busy-rx 4380       # done: C's frame while A's is still being received
//
// With -DNS3_LRWPAN_NAMESPACE (ns-3.44 and later, where lr-wpan lives in ns3::lrwpan) it builds
// against the wheel's headers too.

#include <ns3/core-module.h>
#include <ns3/lr-wpan-module.h>
#include <ns3/mobility-module.h>
#include <ns3/network-module.h>
#include <ns3/spectrum-module.h>

#include <cstdlib>
#include <iostream>

using namespace ns3;
#ifdef NS3_LRWPAN_NAMESPACE
using namespace ns3::lrwpan;
using PhyState = PhyEnumeration;
#else
using PhyState = LrWpanPhyEnumeration;
#endif

static void
Log(const char* what)
{
    std::cout << Simulator::Now().GetMicroSeconds() << " us: " << what << std::endl;
}

static void
Send(Ptr<LrWpanPhy> phy, uint32_t psdu_bytes, const char* what)
{
    Log(what);
    // The PHY times the frame by the packet's size: a packet of the whole PSDU.
    phy->PdDataRequest(psdu_bytes, Create<Packet>(psdu_bytes));
}

static void
ForceTxOn(Ptr<LrWpanPhy> phy)
{
    Log("B: PlmeSetTRXStateRequest(TX_ON) while BUSY_RX");
    phy->PlmeSetTRXStateRequest(IEEE_802_15_4_PHY_TX_ON);
}

int
main(int argc, char** argv)
{
    // C's start in us (default 4420, inside the window); 4500, after B's switch to TX_ON, or
    // 4380, before A's frame ends, run to the end.
    int64_t c_us = argc > 1 ? std::atoll(argv[1]) : 4420;
    Ptr<SingleModelSpectrumChannel> channel = CreateObject<SingleModelSpectrumChannel>();
    Ptr<LrWpanPhy> a = CreateObject<LrWpanPhy>();
    Ptr<LrWpanPhy> b = CreateObject<LrWpanPhy>();
    Ptr<LrWpanPhy> c = CreateObject<LrWpanPhy>();
    double x = 0;
    for (Ptr<LrWpanPhy> phy : {a, b, c})
    {
        Ptr<ConstantPositionMobilityModel> m = CreateObject<ConstantPositionMobilityModel>();
        m->SetPosition(Vector(x, 0, 0));
        x += 5;
        phy->SetMobility(m);
        phy->SetChannel(channel);
        channel->AddRx(phy);
        // No MAC: the primitives' confirmations and indications go nowhere.
        phy->SetPdDataConfirmCallback(MakeNullCallback<void, PhyState>());
        phy->SetPlmeSetTRXStateConfirmCallback(MakeNullCallback<void, PhyState>());
    }
    b->SetPdDataIndicationCallback(MakeNullCallback<void, uint32_t, Ptr<Packet>, uint8_t>());
    a->PlmeSetTRXStateRequest(IEEE_802_15_4_PHY_TX_ON);
    c->PlmeSetTRXStateRequest(IEEE_802_15_4_PHY_TX_ON);
    b->PlmeSetTRXStateRequest(IEEE_802_15_4_PHY_RX_ON);
    Simulator::Schedule(MicroSeconds(1000), &Send, a, 100, "A: 100-octet frame, ends 4392 us");
    Simulator::Schedule(MicroSeconds(4300), &ForceTxOn, b);
    Simulator::Schedule(MicroSeconds(c_us), &Send, c, 20, "C: 20-octet frame");
    Simulator::Stop(MilliSeconds(10));
    Simulator::Run();
    Simulator::Destroy();
    std::cout << "done" << std::endl;
    return 0;
}
