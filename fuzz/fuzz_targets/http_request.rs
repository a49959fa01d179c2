//! Any bytes as an HTTP connection into `coaplab http-server`'s code (issue 32): hyper parses
//! them (HTTP/1.1 or, after the h2 preface, HTTP/2) and hands each request to our routing
//! and limits (`coaplab_emu::http::server::Server::serve_io`, over an in-memory pipe); the
//! first byte chooses instead to give the rest, split at a NUL, to our routing directly as a
//! method and a request target. Nothing may panic; a connection must end once its input has.
#![no_main]

use std::sync::Arc;
use std::time::Duration;

use coaplab_emu::http::server::{respond, Server, ServerConfig, ServerCounters};
use coaplab_emu::http::Uri;
use libfuzzer_sys::fuzz_target;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

thread_local! {
    static RT: tokio::runtime::Runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a runtime");
}

fn config() -> ServerConfig {
    ServerConfig {
        max_data_bytes: 1 << 16,
        header_timeout: Duration::from_millis(200),
        idle_timeout: Duration::from_millis(200),
        ..ServerConfig::default()
    }
}

fuzz_target!(|data: &[u8]| {
    let Some((&mode, rest)) = data.split_first() else {
        return;
    };
    if mode == b'R' {
        let (method, target) = match rest.iter().position(|b| *b == 0) {
            Some(i) => (&rest[..i], &rest[i + 1..]),
            None => (&b"GET"[..], rest),
        };
        let (Ok(method), Ok(uri)) = (hyper::Method::from_bytes(method), Uri::try_from(target)) else {
            return;
        };
        let counters = ServerCounters::default();
        let resp = respond(&method, &uri, &config(), &counters);
        assert!(resp.status().as_u16() >= 200);
        return;
    }
    RT.with(|rt| {
        rt.block_on(async {
            let server = Server::new(config(), Arc::new(ServerCounters::default()));
            let (mut client, io) = tokio::io::duplex(1 << 16);
            let conn = tokio::spawn(async move { server.serve_io(io).await });
            let _ = client.write_all(data).await;
            let _ = client.shutdown().await;
            // Read (and drop) the answers, so a large body cannot block the server.
            let mut sink = vec![0u8; 1 << 16];
            let drain = async {
                while let Ok(n) = client.read(&mut sink).await {
                    if n == 0 {
                        break;
                    }
                }
            };
            let _ = tokio::time::timeout(Duration::from_secs(2), drain).await;
            drop(client);
            let _ = tokio::time::timeout(Duration::from_secs(2), conn).await;
        });
    });
});
