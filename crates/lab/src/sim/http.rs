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

/// The run's one download: its protocol, object size and flow, or why the run has none.
pub(super) fn download_of(
    spec: &RunSpec,
) -> Result<(HttpProtocol, usize, &crate::scenario::FlowConfig), RunError> {
    let [fc] = spec.config.flows.as_slice() else {
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
    Ok((protocol, *object_bytes as usize, fc))
}

/// What one download measured, in either mode.
pub(super) struct Measured {
    /// From the client's connect to the object's last byte.
    pub download_time: coaplab_cc::time::Duration,
    /// IP bytes up and down of the packets counted.
    pub bytes_up: u64,
    pub bytes_down: u64,
    /// Packets counted.
    pub packets: u64,
}

/// The flow record of the download `m` (`completed`: the whole object arrived).
pub(super) fn record(cc: &str, m: &Measured, completed: bool) -> crate::results::FlowRecord {
    let mut metrics = FlowMetrics::default();
    metrics.first_sent = Some(coaplab_cc::time::Instant::ZERO);
    if completed {
        metrics.finished = Some(coaplab_cc::time::Instant::ZERO + m.download_time);
        metrics.exchanges = 1;
        metrics.rtts = vec![m.download_time];
    }
    metrics.transmissions = m.packets;
    metrics.bytes_up = m.bytes_up;
    metrics.bytes_down = m.bytes_down;
    metrics.record(0, cc, "long-transfer", completed)
}

/// Simulates the run's one HTTP download.
pub(super) fn run(spec: &RunSpec) -> Result<RunResult, RunError> {
    let config = &spec.config;
    let (protocol, object_bytes, fc) = download_of(spec)?;
    let tcp = TcpConfig {
        mtu_bytes: config.network.mtu_bytes,
        ..TcpConfig::default()
    }
    .with_settings(&fc.settings)
    .map_err(|e| RunError::Setup(format!("flow 0: {e}")))?;
    let mut star =
        Star::new(&config.network, spec.seed).map_err(|e| RunError::Setup(e.to_string()))?;
    let outcome = simulate_download_on(&mut star, protocol, object_bytes, tcp)
        .map_err(|e| RunError::Setup(e.to_string()))?;
    let end = coaplab_cc::time::Instant::ZERO + outcome.download_time;
    let measured = Measured {
        download_time: outcome.download_time,
        bytes_up: outcome.link_bytes_up,
        bytes_down: outcome.link_bytes - outcome.link_bytes_up,
        packets: outcome.packets,
    };
    Ok(RunResult {
        flows: vec![record(&fc.cc, &measured, true)],
        events: outcome.packets,
        sim_time_s: end.as_secs_f64(),
        network: Some(super::network_record(&star, end)),
    })
}
