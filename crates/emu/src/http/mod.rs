//! HTTP/1.1 and HTTP/2 (h2c, prior knowledge) over the kernel's TCP with hyper, for the
//! CoAP-versus-HTTP object download comparison (docs/experiments.md §8e; SPDY is replaced by
//! its standard successor HTTP/2). The "IoT" variants send minimal headers and use TCP Fast
//! Open ([`tfo`]). Protocol logic is hyper's; this module only chooses headers and sockets.
//!
//! - [`server`]: `/data/N` over HTTP/1.1 and h2c on one listener.
//! - [`body`]: the `/data/N` body, the CoAP server's bytes, produced chunk by chunk.
//! - [`client`]: one timed GET on a fresh connection.
//! - [`across`]: both in process, across the link emulator's namespaces.

pub mod across;
pub mod body;
pub mod client;
pub mod server;
pub mod tfo;
/// The URI type the client takes (hyper's).
pub use hyper::Uri;
