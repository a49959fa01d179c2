//! What the UDP server's duplicate cache really allocates (issue 32 #2): under a flood of
//! CON GETs, each remembered with its 1-KiB answer, `--dedup-cache-bytes` bounds the bytes the
//! endpoint holds, as a counting allocator measures them. Before, the cap counted each
//! answer plus 256 B while the reply arena, the hash tables and the FIFO allocated up to
//! about four times that (a 32-MiB cache cost ~140 MB of RSS). Lives here because the
//! endpoint crate forbids the unsafe code a global allocator needs.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::net::SocketAddr;

use coaplab_base::time::{Duration, Instant};
use coaplab_base::Settings;
use coaplab_endpoint::{registry_factory, Config, Endpoint, Router};
use coaplab_wire::option::number;
use coaplab_wire::{Code, MessageType, MessageWriter, Token};

thread_local! {
    static NET: Cell<isize> = const { Cell::new(0) };
    static PEAK: Cell<isize> = const { Cell::new(0) };
}

/// Counts this thread's net bytes allocated and their peak, then asks the system allocator.
struct Counting;

fn add(delta: isize) {
    let _ = NET.try_with(|n| {
        n.set(n.get() + delta);
        let _ = PEAK.try_with(|p| p.set(p.get().max(n.get())));
    });
}

// SAFETY: every call goes to the system allocator unchanged; only counters are kept.
#[allow(unsafe_code)]
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: the caller's contract is the system allocator's.
        let p = unsafe { System.alloc(layout) };
        if !p.is_null() {
            add(layout.size() as isize);
        }
        p
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        // SAFETY: as above.
        let p = unsafe { System.alloc_zeroed(layout) };
        if !p.is_null() {
            add(layout.size() as isize);
        }
        p
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: as above.
        unsafe { System.dealloc(ptr, layout) };
        add(-(layout.size() as isize));
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: as above.
        let p = unsafe { System.realloc(ptr, layout, new_size) };
        if !p.is_null() {
            // A moving realloc holds both blocks for a moment.
            add(new_size as isize);
            add(-(layout.size() as isize));
        }
        p
    }
}

#[global_allocator]
static COUNTING: Counting = Counting;

fn net() -> isize {
    NET.try_with(Cell::get).unwrap_or(0)
}

fn peak() -> isize {
    PEAK.try_with(Cell::get).unwrap_or(0)
}

/// A CON GET of `data/N`, Message ID `mid`, 2-B token.
fn get(mid: u16, n: usize, out: &mut Vec<u8>) {
    out.clear();
    out.resize(64, 0);
    let mut w =
        MessageWriter::new(out, MessageType::Con, Code::GET, mid, Token::from_u64(7, 2)).unwrap();
    w.option(number::URI_PATH, b"data").unwrap();
    w.option(number::URI_PATH, n.to_string().as_bytes())
        .unwrap();
    let len = w.finish();
    out.truncate(len);
}

/// Besides the cache, what the server endpoint may hold while it is flooded: its spare
/// datagram buffers (64 of ~1 KiB), event and transmit queues, peers, tables.
const OTHER_BYTES: usize = 256 << 10;

#[test]
fn the_dedup_cap_bounds_what_the_server_really_allocates() {
    for cap in [1usize << 20, 4 << 20] {
        let factory = registry_factory("default", &Settings::new(), 1).unwrap();
        let config = Config {
            dedup_capacity_bytes: cap,
            dedup_purge_timer: true,
            keep_bodies: false,
            ..Config::default()
        };
        PEAK.with(|p| p.set(net()));
        let base = net();
        let mut s = Endpoint::new(config, factory, Router::new()).unwrap();
        let (mut req, mut buf) = (Vec::new(), Vec::new());
        let mut now = Instant::ZERO;
        let mut worst = 0usize;
        for i in 0..40_000u32 {
            now += Duration::from_micros(50);
            let from = SocketAddr::from(([198, 18, (i % 7) as u8, 1], 40_000 + (i % 300) as u16));
            // Mostly 1-KiB answers, some small ones.
            let n = if i % 5 == 0 {
                (i % 200) as usize
            } else {
                1_024
            };
            get(i as u16, n, &mut req);
            s.handle_datagram(now, from, &req);
            while s.poll_transmit_into(now, &mut buf).is_some() {}
            while s.poll_event().is_some() {}
            assert!(s.dedup_bytes() <= cap, "cap {cap}: {} B", s.dedup_bytes());
            let real = (net() - base) as usize;
            worst = worst.max(real);
            assert!(
                real <= cap + OTHER_BYTES,
                "cap {cap}, request {i}: the server holds {real} B ({} counted by the cache)",
                s.dedup_bytes()
            );
        }
        let peak = (peak() - base) as usize;
        eprintln!("cap {cap}: peak {peak} B, worst after a call {worst} B");
        assert!(peak <= 2 * cap + OTHER_BYTES, "cap {cap}: peak {peak} B");
        // It is a cache still: most of the cap is in use.
        assert!(worst >= cap / 2, "cap {cap}: at most {worst} B");
        drop(s);
    }
}
