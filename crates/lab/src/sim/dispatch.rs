//! Which run loop a run takes, chosen in one place for simulated, traced and emulated runs:
//! from the run's topology and its flows' [`Transport`]s. Every combination that no loop runs
//! yet is refused here, with the message the user sees, so the three entry points
//! ([`super::run_one`], [`super::run_traced`], `emulated::run_one`) cannot drift apart.

use coaplab_netsim::mesh::MeshConfig;

use crate::results::RunError;
use crate::scenario::{RunConfig, Topology, Transport, Workload};

/// Whether the run is simulated (virtual time, traced or not) or emulated (real sockets
/// through the link emulator, wall-clock time): they have different run loops on offer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Mode {
    /// netsim's topologies in virtual time.
    Simulated,
    /// Real sockets behind the link emulator, on a star only.
    #[cfg_attr(not(feature = "emulated"), allow(dead_code))]
    Emulated,
}

/// The run loop a run takes.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum RunLoop<'a> {
    /// CoAP over UDP on the star: [`super::Sim`] on netsim's `Star` or the emulated network.
    UdpStar,
    /// CoAP over UDP on a multi-hop 802.15.4 mesh (simulated only).
    UdpMesh(&'a MeshConfig),
    /// CoAP over TCP on the star, every flow: the TCP model, or the kernel's TCP.
    TcpStar,
    /// The run's one HTTP download on the star (checked by `http::download_of`).
    HttpStar,
    /// CoAP over UDP flow groups, then CoAP-over-TCP groups of one connection each (a long
    /// download, or back-to-back exchanges) on the star, simulated only (`super::cross_tcp`).
    UdpTcpStar,
    /// CoAP over TCP, or the run's one HTTP download, on a multi-hop 802.15.4 mesh: the
    /// star's TCP loop over the mesh (simulated only).
    TcpMesh(&'a MeshConfig),
}

/// What an emulated run on a mesh is refused with.
pub(crate) fn emulated_mesh() -> RunError {
    RunError::NotAvailable(
        "an emulated mesh ([topology] kind = \"mesh\" runs simulated only)".to_string(),
    )
}

/// Whether the loop of UDP and TCP flows runs `config`'s flow groups: CoAP-over-UDP groups
/// first, then CoAP-over-TCP groups of one connection per flow (not `workload = "random"`,
/// whose short-lived clients each open a connection), simulated.
fn udp_then_tcp(config: &RunConfig, mode: Mode) -> Result<RunLoop<'_>, RunError> {
    if mode == Mode::Emulated {
        return Err(RunError::NotAvailable(
            "UDP and TCP flows in one emulated run (issue 36: simulated only)".to_string(),
        ));
    }
    let first_tcp = config
        .flows
        .iter()
        .position(|f| f.transport.is_coap_over_tcp())
        .unwrap_or(0);
    for (g, f) in config.flows.iter().enumerate() {
        if g > first_tcp && !f.transport.is_coap_over_tcp() {
            return Err(RunError::NotAvailable(format!(
                "UDP flows after TCP flows (flows.{g}: list the CoAP-over-UDP groups first, \
                 then the TCP ones)"
            )));
        }
        if f.transport.is_coap_over_tcp() && matches!(f.workload, Workload::Random { .. }) {
            return Err(RunError::NotAvailable(format!(
                "short-lived TCP clients beside UDP flows (flows.{g}: workload = \"random\")"
            )));
        }
    }
    Ok(RunLoop::UdpTcpStar)
}

/// The run loop of a run of `config` in `mode`, or why no loop runs it yet.
pub(crate) fn run_loop(config: &RunConfig, mode: Mode) -> Result<RunLoop<'_>, RunError> {
    let transports = || config.flows.iter().map(|f| &f.transport);
    match &config.topology {
        Topology::Mesh(mesh) => {
            if mode == Mode::Emulated {
                return Err(emulated_mesh());
            }
            let tcp = |t: &Transport| t.is_coap_over_tcp() || t.is_http();
            let tcp_flows = transports().filter(|t| tcp(t)).count();
            if tcp_flows == 0 {
                return Ok(RunLoop::UdpMesh(mesh));
            }
            if mesh.params.off_mesh_server {
                // The border router forwards what it reads as UDP datagrams (`sim::mesh`).
                return Err(RunError::NotAvailable(
                    "TCP or HTTP to an off-mesh server ([topology] server = \"off-mesh\")"
                        .to_string(),
                ));
            }
            if transports().any(Transport::is_http) {
                // One download per run, as on the star.
                super::http::download_of(config)?;
            } else if tcp_flows < config.flows.len() {
                return Err(RunError::NotAvailable(
                    "UDP and TCP flows in one run (issue 5)".to_string(),
                ));
            }
            Ok(RunLoop::TcpMesh(mesh))
        }
        Topology::Star => {
            if mode == Mode::Emulated && config.flows.iter().any(|f| f.mss_bytes.is_some()) {
                // The kernel's TCP takes its MSS from the emulated link's MTU.
                return Err(RunError::NotAvailable(
                    "[[flows]] mss_bytes in an emulated run (the kernel's MSS follows the \
                     link's MTU)"
                        .to_string(),
                ));
            }
            if transports().any(Transport::is_http) {
                // One download per run, on the CoAP-over-TCP loop (HTTP is a sibling session
                // kind): refused here when the run is anything else.
                super::http::download_of(config)?;
                return Ok(RunLoop::HttpStar);
            }
            let tcp_flows = transports().filter(|t| t.is_coap_over_tcp()).count();
            if tcp_flows == 0 {
                Ok(RunLoop::UdpStar)
            } else if tcp_flows == config.flows.len() {
                Ok(RunLoop::TcpStar)
            } else {
                udp_then_tcp(config, mode)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenario::Scenario;

    /// The run loop of the first run of `flows` (`[[flows]]` tables) on `topology`.
    fn run_loop_of(topology: &str, flows: &str, mode: Mode) -> Result<&'static str, String> {
        let text = format!("name = \"d\"\n{topology}\n{flows}");
        let config = Scenario::parse(&text, "d.toml").unwrap().config(0).unwrap();
        run_loop(&config, mode)
            .map(|l| match l {
                RunLoop::UdpStar => "udp-star",
                RunLoop::UdpMesh(_) => "udp-mesh",
                RunLoop::TcpStar => "tcp-star",
                RunLoop::HttpStar => "http-star",
                RunLoop::UdpTcpStar => "udp-tcp-star",
                RunLoop::TcpMesh(_) => "tcp-mesh",
            })
            .map_err(|e| e.to_string())
    }

    const MESH: &str = "[topology]\nkind = \"mesh\"";
    const UDP: &str = "[[flows]]\ncc = \"cocoa\"\n";
    const TCP: &str = "[[flows]]\ncc = \"tcp-bbr\"\n";
    const HTTP: &str =
        "[[flows]]\ncc = \"h2\"\nworkload = \"long-transfer\"\nobject_bytes = 1000\n";

    #[test]
    fn each_transport_takes_its_loop_in_every_mode() {
        for mode in [Mode::Simulated, Mode::Emulated] {
            assert_eq!(run_loop_of("", UDP, mode), Ok("udp-star"));
            assert_eq!(
                run_loop_of("", &format!("{TCP}{TCP}"), mode),
                Ok("tcp-star")
            );
            assert_eq!(run_loop_of("", HTTP, mode), Ok("http-star"));
        }
        assert_eq!(run_loop_of(MESH, UDP, Mode::Simulated), Ok("udp-mesh"));
        assert_eq!(
            run_loop_of("", &format!("{UDP}{UDP}{TCP}{TCP}"), Mode::Simulated),
            Ok("udp-tcp-star")
        );
        let download = format!("{TCP}workload = \"long-transfer\"\nobject_bytes = 1000\n");
        assert_eq!(
            run_loop_of("", &format!("{UDP}{download}"), Mode::Simulated),
            Ok("udp-tcp-star")
        );
        assert_eq!(run_loop_of(MESH, TCP, Mode::Simulated), Ok("tcp-mesh"));
        assert_eq!(run_loop_of(MESH, HTTP, Mode::Simulated), Ok("tcp-mesh"));
    }

    #[test]
    fn what_no_loop_runs_is_refused_with_one_message_in_every_mode() {
        assert_eq!(
            run_loop_of("", &format!("{UDP}{TCP}"), Mode::Emulated),
            Err(
                "not available yet: UDP and TCP flows in one emulated run (issue 36: simulated \
                 only)"
                    .to_string()
            )
        );
        assert_eq!(
            run_loop_of("", &format!("{TCP}{UDP}"), Mode::Simulated),
            Err(
                "not available yet: UDP flows after TCP flows (flows.1: list the CoAP-over-UDP \
                 groups first, then the TCP ones)"
                    .to_string()
            )
        );
        let random = format!("{TCP}workload = \"random\"\n");
        assert_eq!(
            run_loop_of("", &format!("{UDP}{random}"), Mode::Simulated),
            Err(
                "not available yet: short-lived TCP clients beside UDP flows (flows.1: workload \
                 = \"random\")"
                    .to_string()
            )
        );
        for mode in [Mode::Simulated, Mode::Emulated] {
            assert_eq!(
                run_loop_of("", &format!("{HTTP}{UDP}"), mode),
                Err(
                    "not available yet: an HTTP flow beside other flows (one download per run)"
                        .to_string()
                )
            );
            assert_eq!(
                run_loop_of(
                    "",
                    &HTTP.replace("[[flows]]\n", "[[flows]]\ncount = 2\n"),
                    mode
                ),
                Err(
                    "not available yet: an HTTP flow must be one long-transfer download \
                     (count = 1)"
                        .to_string()
                )
            );
        }
        assert_eq!(
            run_loop_of(MESH, &format!("{UDP}{TCP}"), Mode::Simulated),
            Err("not available yet: UDP and TCP flows in one run (issue 5)".to_string())
        );
        assert_eq!(
            run_loop_of(MESH, &format!("{HTTP}{TCP}"), Mode::Simulated),
            Err(
                "not available yet: an HTTP flow beside other flows (one download per run)"
                    .to_string()
            )
        );
        let off_mesh = format!("{MESH}\nserver = \"off-mesh\"");
        assert_eq!(
            run_loop_of(&off_mesh, TCP, Mode::Simulated),
            Err(
                "not available yet: TCP or HTTP to an off-mesh server ([topology] server = \
                 \"off-mesh\")"
                    .to_string()
            )
        );
    }

    #[test]
    fn an_mss_is_refused_where_the_kernel_chooses_it() {
        let mss = TCP.replace("[[flows]]\n", "[[flows]]\nmss_bytes = 200\n");
        assert_eq!(run_loop_of("", &mss, Mode::Simulated), Ok("tcp-star"));
        assert_eq!(
            run_loop_of("", &mss, Mode::Emulated),
            Err(
                "not available yet: [[flows]] mss_bytes in an emulated run (the kernel's MSS \
                 follows the link's MTU)"
                    .to_string()
            )
        );
    }

    #[test]
    fn a_traced_run_of_udp_and_tcp_flows_is_the_untraced_run() {
        // Before the one dispatcher, a traced run of UDP and TCP flows ran every flow over
        // TCP (New Reno), labelled with its UDP algorithm, where the untraced run refused; now
        // both carry both kinds, with one result.
        let text = format!("name = \"d\"\nmax_sim_time_s = 100\n{UDP}{TCP}");
        let runs = Scenario::parse(&text, "d.toml").unwrap().expand(None, None);
        let untraced = super::super::run_one(&runs[0]).unwrap();
        let ccs: Vec<&str> = untraced.flows.iter().map(|f| f.cc.as_str()).collect();
        assert_eq!(ccs, ["cocoa", "tcp-bbr"]);
        let (traced, _) = super::super::run_traced(&runs[0]).unwrap();
        assert_eq!(traced, untraced);
    }

    #[test]
    fn an_emulated_mesh_is_refused_before_what_its_flows_are() {
        for flows in [UDP, TCP, HTTP] {
            assert_eq!(
                run_loop_of(MESH, flows, Mode::Emulated),
                Err(
                    "not available yet: an emulated mesh ([topology] kind = \"mesh\" runs \
                     simulated only)"
                        .to_string()
                )
            );
        }
    }
}
