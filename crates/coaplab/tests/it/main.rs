//! The `coaplab` crate's integration tests, one module per area, in one test binary: one link
//! instead of 28, and the tests that wait on real time (interop, emulation) share the test
//! threads with the rest instead of idling one thread at the end of each small binary.
//! `cargo test -p coaplab --test it interop_libcoap::` runs one module.

mod run_support;
mod support;

mod cli_dtls_limits;
mod cli_files;
mod cli_limits;
mod cli_mesh_metrics;
mod cli_models;
mod cli_observe_con;
mod cli_observe_run;
mod cli_options;
mod cli_report;
mod cli_run;
mod cli_run_trace;
mod cli_shard;
mod cli_suite;
mod cli_tcp;
mod cli_tcp_limits;
mod cli_tcp_sizes;
mod cli_trace;
mod cli_udp;
mod emulate;
mod emulate_http;
mod interop_aiocoap;
mod interop_aiocoap_tcp;
mod interop_californium;
mod interop_californium_dtls;
mod interop_californium_tcp;
mod interop_formats;
mod interop_http;
mod interop_libcoap;
mod interop_libcoap_dtls;
mod interop_libcoap_tcp;
mod interop_observe;
mod interop_observe_aiocoap;
mod interop_observe_tcp;
mod link_params_doc;
mod parameters_doc;
