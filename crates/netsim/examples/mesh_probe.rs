//! The coaplab side of the ns-3 lr-wpan comparison (docs/mesh-validation.md, issue 13): runs one
//! validation case on netsim's mesh and prints its figures as `key=value` lines, the same keys
//! `scripts/ns3-mesh/ns3_side.py` prints for ns-3.
//!
//! ```text
//! cargo run --release -p coaplab-netsim --example mesh_probe -- saturated 4 [seconds] [seed]
//! cargo run --release -p coaplab-netsim --example mesh_probe -- hidden [seconds] [seed]
//! cargo run --release -p coaplab-netsim --example mesh_probe -- chain [seconds] [seed]
//! ```
//!
//! Every case uses the mesh's defaults except two settings that make the radio the one ns-3's
//! `RangePropagationLossModel` gives (every link inside the range perfect, nothing beyond it):
//! `interference_range_m` = `tx_range_m` = 10 m (ns-3 has one range), and `short_addresses`
//! (ns-3's `LrWpanNetDevice` sends 16-bit addresses); and no RPL hop-by-hop option
//! (`rpl_hbh_option` off: ns-3 has no RPL, so its UDP header is NHC-compressed too). Nodes are placed strictly inside or
//! beyond the range, never on it, so UDGM's CCA threshold (a neighbour at exactly the range
//! is not heard) plays no part. Static routes; the border router the mesh requires is placed
//! where it hears only the sink and never transmits (no RPL), so ns-3 does without it.
//!
//! * `saturated N`: N contenders 5 m from the sink (on an arc of ±60°, at most 8.7 m from each
//!   other: every pair hears the other), each offered one datagram per millisecond — more than
//!   the MAC serves, so its queue is never empty — for `seconds` (default 20).
//! * `hidden`: A (0 m) and C (16 m) saturate B (8 m); A and C do not hear each other.
//! * `chain`: a 3-hop chain, 8 m spacing, the client at the far end sends one 300-B CoAP
//!   payload (three frames per hop) at a time to the server, the next once the last arrived
//!   (or after 1 s).

use std::collections::HashMap;

use coaplab_base::time::{Duration, Instant};
use coaplab_netsim::mesh::{Layout, Mesh, MeshConfig, MeshParams, Node, Role};
use coaplab_netsim::{client_addr, Direction, Topology, SERVER_ADDR};

/// CoAP payload of the single-hop cases: 50 B, one 70-B frame (IPHC 2 + UDP NHC 7 + 50 = 59 B
/// of MAC payload + 9-B header + 2-B FCS).
const SINGLE_HOP_COAP_BYTES: usize = 50;
/// CoAP payload of the chain: fragmented into three frames on every hop.
const CHAIN_COAP_BYTES: usize = 300;
/// Offered interval per saturated sender: far below a frame's service time (≥ 3 ms).
const SATURATING_INTERVAL: Duration = Duration::from_millis(1);
/// Stop-and-wait: the next datagram goes this long after one that was not delivered.
const CHAIN_TIMEOUT: Duration = Duration::from_secs(1);

fn node(x_m: f64, y_m: f64, role: Role) -> Node {
    Node { x_m, y_m, role }
}

fn params() -> MeshParams {
    let mut p = MeshParams::default();
    p.interference_range_m = p.tx_range_m;
    p.short_addresses = true;
    p.rpl_hbh_option = false;
    p
}

/// How the clients offer traffic.
#[derive(Clone, Copy)]
enum Offer {
    /// One datagram per interval per client: the MAC queue never empties.
    Saturated,
    /// One datagram in flight: the next when it arrives (or after [`CHAIN_TIMEOUT`]).
    StopAndWait,
}

fn run(layout: Layout, offer: Offer, coap_bytes: usize, seconds: i64, seed: u64, hops: u32) {
    let clients = layout.with_role(Role::Client).count() as u32;
    let config = MeshConfig {
        layout,
        params: params(),
    };
    let mut mesh = Mesh::new(&config, seed).expect("probe layouts are valid");
    let end = Instant::from_secs(seconds);
    let payload = vec![0u8; coap_bytes];
    let mut sent_at: HashMap<u64, Instant> = HashMap::new();
    let mut next_tag = 0u64;
    let mut next_send = Some(Instant::ZERO);
    let (mut delivered, mut delay_sum) = (0u64, Duration::ZERO);
    let mut by_sender: HashMap<std::net::SocketAddr, u64> = HashMap::new();
    let mut buf = Vec::new();
    loop {
        let t = match (mesh.poll_at(), next_send) {
            (Some(a), Some(b)) => a.min(b),
            (a, b) => a.or(b).expect("something is always due"),
        };
        if t > end {
            break;
        }
        while let Some(d) = mesh.poll_delivery(t, &mut buf) {
            delivered += 1;
            *by_sender.entry(d.src).or_default() += 1;
            if let Some(at) = sent_at.remove(&d.tag) {
                delay_sum += d.at - at;
            }
            if let Offer::StopAndWait = offer {
                next_send = Some(d.at);
            }
        }
        if next_send == Some(t) {
            for k in 0..clients {
                let _ = mesh.send(
                    t,
                    client_addr(k),
                    SERVER_ADDR,
                    &mut payload.clone(),
                    next_tag,
                );
                sent_at.insert(next_tag, t);
                next_tag += 1;
            }
            next_send = Some(
                t + match offer {
                    Offer::Saturated => SATURATING_INTERVAL,
                    Offer::StopAndWait => CHAIN_TIMEOUT,
                },
            );
        }
    }
    let s = mesh.stats(Direction::Up);
    let secs = seconds as f64;
    // Frames the MAC finished (acknowledged or dropped): every datagram is one frame on the
    // single-hop cases; on the chain, the frames of the delivered datagrams on every hop.
    let finished = match offer {
        Offer::Saturated => delivered + s.mac_drops,
        Offer::StopAndWait => s.frames_sent - s.retries,
    }
    .max(1) as f64;
    println!("contenders={clients}");
    println!(
        "psdu_bytes_mean={:.1}",
        s.frame_bytes as f64 / s.frames_sent.max(1) as f64
    );
    println!("frames_sent={}", s.frames_sent);
    println!("frames_finished={finished}");
    println!("retries={}", s.retries);
    println!("tx_per_frame={:.3}", s.frames_sent as f64 / finished);
    println!("retries_per_frame={:.3}", s.retries as f64 / finished);
    println!("channel_access_failures={}", s.channel_access_failures);
    println!("no_ack_failures={}", s.no_ack_failures);
    println!("delivered={delivered}");
    println!("mac_drops={}", s.mac_drops);
    println!(
        "delivery_ratio={:.4}",
        delivered as f64 / (delivered + s.mac_drops).max(1) as f64
    );
    println!(
        "throughput_kbps={:.2}",
        delivered as f64 * coap_bytes as f64 * 8.0 / secs / 1e3
    );
    if let Offer::Saturated = offer {
        // Every MAC is busy all the time: a frame's service time is the time per frame
        // finished at one sender.
        println!(
            "service_ms={:.3}",
            secs * 1e3 * f64::from(clients) / finished
        );
        let split: Vec<String> = (0..clients)
            .map(|k| {
                by_sender
                    .get(&client_addr(k))
                    .copied()
                    .unwrap_or(0)
                    .to_string()
            })
            .collect();
        println!("delivered_by_sender={}/", split.join("/"));
    } else {
        println!(
            "frames_per_datagram_hop={:.2}",
            finished / (delivered.max(1) * u64::from(hops)) as f64
        );
        println!(
            "delay_ms={:.3}",
            delay_sum.as_secs_f64() * 1e3 / delivered.max(1) as f64
        );
        println!(
            "per_hop_ms={:.3}",
            delay_sum.as_secs_f64() * 1e3 / (delivered.max(1) * u64::from(hops)) as f64
        );
    }
    println!("queue_drops={}", s.queue_drops);
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let usage = "usage: mesh_probe saturated N [seconds] [seed] | hidden [seconds] [seed] | chain [seconds] [seed]";
    let arg = |i: usize, default: i64| -> i64 {
        args.get(i)
            .map(|a| {
                a.parse().unwrap_or_else(|_| {
                    eprintln!("mesh_probe: bad number {a:?}\n{usage}");
                    std::process::exit(2)
                })
            })
            .unwrap_or(default)
    };
    match args.first().map(String::as_str) {
        Some("saturated") => {
            let n = arg(1, 1).clamp(1, 64) as usize;
            let mut nodes = vec![
                node(0.0, 0.0, Role::Server),
                node(-8.0, 0.0, Role::BorderRouter),
            ];
            for k in 0..n {
                let deg = if n == 1 {
                    0.0
                } else {
                    -60.0 + 120.0 * k as f64 / (n - 1) as f64
                };
                let r = deg.to_radians();
                nodes.push(node(5.0 * r.cos(), 5.0 * r.sin(), Role::Client));
            }
            let layout = Layout::explicit(nodes).expect("valid");
            run(
                layout,
                Offer::Saturated,
                SINGLE_HOP_COAP_BYTES,
                arg(2, 20),
                arg(3, 1) as u64,
                1,
            );
        }
        Some("hidden") => {
            let layout = Layout::explicit(vec![
                node(0.0, 0.0, Role::Client),
                node(8.0, 0.0, Role::Server),
                node(16.0, 0.0, Role::Client),
                node(8.0, 8.0, Role::BorderRouter),
            ])
            .expect("valid");
            run(
                layout,
                Offer::Saturated,
                SINGLE_HOP_COAP_BYTES,
                arg(1, 20),
                arg(2, 1) as u64,
                1,
            );
        }
        Some("chain") => {
            let layout = Layout::explicit(vec![
                node(0.0, 0.0, Role::Server),
                node(8.0, 0.0, Role::Router),
                node(16.0, 0.0, Role::Router),
                node(24.0, 0.0, Role::Client),
                node(0.0, 8.0, Role::BorderRouter),
            ])
            .expect("valid");
            run(
                layout,
                Offer::StopAndWait,
                CHAIN_COAP_BYTES,
                arg(1, 20),
                arg(2, 1) as u64,
                3,
            );
        }
        _ => {
            eprintln!("{usage}");
            std::process::exit(2);
        }
    }
}
