//! Prints the simulated spec §8e sweep (HTTP variants × object size over zigbee) as CSV:
//! `protocol,object_bytes,buffer_bytes,download_ms,link_bytes,packets,drops`.
//! `cargo run -p coaplab-netsim --example http_download_sweep`

use coaplab_netsim::http::sim::simulate_download;
use coaplab_netsim::http::HttpProtocol;
use coaplab_netsim::tcp::TcpConfig;
use coaplab_netsim::{NetworkConfig, Preset};

fn main() {
    println!("protocol,object_bytes,buffer_bytes,download_ms,link_bytes,packets,drops");
    for buffer_bytes in [512, 2048] {
        for p in HttpProtocol::ALL {
            for n in std::iter::once(10).chain((1..=10).map(|k| k * 100)) {
                let mut network = NetworkConfig::preset(Preset::Zigbee);
                network.up.buffer_bytes = buffer_bytes;
                network.down.buffer_bytes = buffer_bytes;
                match simulate_download(p, n, &network, TcpConfig::default(), 1) {
                    Ok(o) => println!(
                        "{},{n},{buffer_bytes},{:.1},{},{},{}",
                        p.name(),
                        o.download_time.as_nanos() as f64 / 1e6,
                        o.link_bytes,
                        o.packets,
                        o.drops
                    ),
                    Err(e) => println!("{},{n},{buffer_bytes},error: {e}", p.name()),
                }
            }
        }
    }
}
