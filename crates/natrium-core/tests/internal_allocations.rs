//! Allocations per message delivered to an in-process subscriber (an internal client), counted
//! with a counting global allocator around a batch of publishes and their receipt. This is a
//! measurement printed for the record (`--nocapture`), with a loose bound as a regression
//! guard: timing-free, so it is stable on any machine.

// A counting allocator is the one place a test needs `unsafe`: it forwards to `System`.
#![allow(unsafe_code)]

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use natrium_core::client::ClientHandle;
use natrium_core::deliver::{Message, Publisher};
use natrium_core::internal::InternalClient;
use natrium_core::stats::ServerStats;
use natrium_core::{CoreConfig, Server};

struct Counting;

static ALLOCATIONS: AtomicU64 = AtomicU64::new(0);

// SAFETY: forwards to the system allocator unchanged; only counts calls.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        // SAFETY: same contract as the caller's.
        unsafe { System.alloc(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: same contract as the caller's.
        unsafe { System.dealloc(ptr, layout) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

const MESSAGES: u64 = 200;

/// Publishes `MESSAGES` requests to an internal client's subscription and returns the
/// allocations per delivered message; `from_client` makes the publisher a client's, whose
/// identity the delivery carries.
async fn allocations_per_message(from_client: bool) -> f64 {
    let server = Server::new(CoreConfig::default()).expect("server");
    let account = server.account("$G").expect("global account");
    let (mut client, mut inbox) = InternalClient::start(&server, Arc::clone(&account));
    assert!(client.subscribe("svc.req"));
    let mut publisher = Publisher::new(999_999, Arc::new(ServerStats::default()));
    if from_client {
        let addr = std::net::SocketAddr::from(([127, 0, 0, 1], 4222));
        let closing = tokio_util::sync::CancellationToken::new();
        let handle = Arc::new(ClientHandle::new(999_999, addr, 1 << 20, closing));
        publisher.set_origin(Arc::clone(&account), handle);
    }
    let payload = [b'x'; 64];
    let msg = Message {
        subject: b"svc.req",
        reply: Some(b"_INBOX.reply"),
        headers: None,
        payload: &payload,
    };
    // Warm up: match caches, buffers.
    publisher.publish(&account, &msg);
    publisher.flush();
    let _ = inbox.recv().await;
    let before = ALLOCATIONS.load(Ordering::Relaxed);
    for _ in 0..MESSAGES {
        publisher.publish(&account, &msg);
        publisher.flush();
        let got = inbox.recv().await.expect("delivered");
        assert_eq!(&got.payload[..], &payload[..]);
    }
    let per_message = (ALLOCATIONS.load(Ordering::Relaxed) - before) as f64 / MESSAGES as f64;
    drop(client);
    per_message
}

#[tokio::test]
async fn internal_client_allocations_per_delivered_message() {
    let server_own = allocations_per_message(false).await;
    let from_client = allocations_per_message(true).await;
    println!(
        "internal client: {server_own:.1} allocations per delivered message \
         ({from_client:.1} with the publisher's identity)"
    );
}
