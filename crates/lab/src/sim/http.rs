//! HTTP download flows (spec §8e): `cc` = `http1`, `h2`, `iot-http1` or `iot-h2` with
//! `workload = "long-transfer"` downloads `object_bytes` once over netsim's byte-exact HTTP
//! models on the TCP model ([`coaplab_netsim::http::sim`]); the IoT variants with TCP Fast
//! Open, the cookie cached (the warm-up connection is not simulated).
//!
//! One flow per run (the comparison has one client). flows.csv: `fct_s` = download time from
//! the client's connect (the handshake counts, as `coaplab http-get`'s `download_ms`), not
//! from the first request as for CoAP flows; `bytes_up` / `bytes_down` = IP bytes (IPv4 +
//! TCP headers + options + payload) of the packets delivered up to and including the one
//! that completes the object — together the "total bytes on the link" of spec §8e;
//! `exchanges` 1; `transmissions` = packets counted. `start_jitter_s` does not apply (the
//! download starts at 0).

use coaplab_netsim::http::sim::simulate_download_on;
use coaplab_netsim::http::HttpProtocol;
use coaplab_netsim::tcp::TcpConfig;
use coaplab_netsim::Star;

use crate::metrics::FlowMetrics;
use crate::results::{RunError, RunResult};
use crate::scenario::{RunSpec, Workload};

/// Simulates the run's one HTTP download.
pub(super) fn run(spec: &RunSpec) -> Result<RunResult, RunError> {
    let config = &spec.config;
    let [fc] = config.flows.as_slice() else {
        return Err(RunError::NotAvailable(
            "an HTTP flow beside other flows (one download per run)".to_string(),
        ));
    };
    let (Some(protocol), Workload::LongTransfer { object_bytes, .. }, 1) =
        (HttpProtocol::from_name(&fc.cc), &fc.workload, fc.count)
    else {
        return Err(RunError::NotAvailable(
            "an HTTP flow must be one long-transfer download (count = 1)".to_string(),
        ));
    };
    let tcp = TcpConfig {
        mtu_bytes: config.network.mtu_bytes,
        ..TcpConfig::default()
    }
    .with_settings(&fc.settings)
    .map_err(|e| RunError::Setup(format!("flow 0: {e}")))?;
    let mut star =
        Star::new(&config.network, spec.seed).map_err(|e| RunError::Setup(e.to_string()))?;
    let outcome = simulate_download_on(&mut star, protocol, *object_bytes as usize, tcp)
        .map_err(|e| RunError::Setup(e.to_string()))?;
    let end = coaplab_cc::time::Instant::ZERO + outcome.download_time;
    let mut metrics = FlowMetrics::default();
    metrics.first_sent = Some(coaplab_cc::time::Instant::ZERO);
    metrics.finished = Some(end);
    metrics.exchanges = 1;
    metrics.transmissions = outcome.packets;
    metrics.bytes_up = outcome.link_bytes_up;
    metrics.bytes_down = outcome.link_bytes - outcome.link_bytes_up;
    metrics.rtts = vec![outcome.download_time];
    let workload = "long-transfer";
    Ok(RunResult {
        flows: vec![metrics.record(0, &fc.cc, workload, true)],
        events: outcome.packets,
        sim_time_s: end.as_secs_f64(),
        network: Some(super::network_record(&star, end)),
    })
}
