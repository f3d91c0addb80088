//! The benchmark scenarios. Each drives one server with the lean client in `wire` and returns
//! what it measured. Throughput counts what subscribers received (deliveries), except on
//! pub-only rows, which count what the server accepted (a PING after the last PUB is answered
//! only once all of them were processed).

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Barrier};
use std::time::{Duration, Instant};

use anyhow::{Context, Result};

pub use crate::outcome::{Budget, Outcome};
use crate::wire::{pub_batch, Conn, Endpoint};

/// Frames per write on the publishing side unless `--frames-per-write` says otherwise: large
/// writes, as a batching client does.
pub const FRAMES_PER_WRITE_DEFAULT: usize = 512;

/// KV operations in flight at most on the KV put and get rows: one, as the clients' `put` and
/// `get` await each answer (a window of 32 puts was tried: a durable file stream then does
/// ~24k msg/s against Go's ~150k, still sync-bound, so it said no more than the one-at-a-time
/// row).
const KV_WINDOW: u64 = 1;

#[derive(Debug, Clone, Copy)]
pub enum Kind {
    PubOnly {
        payload: usize,
    },
    PubSub {
        publishers: usize,
        subscribers: usize,
        payload: usize,
    },
    ReqReply {
        clients: usize,
        services: usize,
        payload: usize,
    },
    Churn {
        workers: usize,
    },
    IdleMemory {
        connections: usize,
    },
    LeakCheck {
        cycles: usize,
        connections: usize,
    },
    /// The inner scenario against servers requiring TLS (same certificate for both).
    Tls(TlsKind),
    /// The inner scenario with every connection over WebSocket (`ws://`, plain frames).
    Ws(TlsKind),
    /// Pub/sub 1:1 across accounts: the publisher in account A (the server's
    /// `no_auth_user`), the subscriber logged into B, which imports A's stream.
    Import {
        payload: usize,
    },
    /// JetStream: publishes acknowledged one at a time.
    JsSyncPublish {
        storage: crate::jetstream::Storage,
        payload: usize,
    },
    /// JetStream: publishes with a window of acks outstanding; `sync_interval`, when set, is
    /// given to both servers (`always`, or a duration).
    JsAsyncPublish {
        storage: crate::jetstream::Storage,
        payload: usize,
        sync_interval: Option<&'static str>,
    },
    /// JetStream: durable pull consumers sitting idle; the server's CPU per idle second.
    JsIdleConsumers {
        consumers: usize,
    },
    /// JetStream: a last-value-per-subject watcher started over `keys` keys with history.
    JsKvWatch {
        keys: usize,
    },
    /// JetStream: an ordered consumer reads a filled stream.
    JsOrderedConsume {
        payload: usize,
    },
    /// JetStream: a durable pull consumer fetches and acknowledges a filled stream.
    JsDurableFetch {
        payload: usize,
    },
    /// JetStream: KV puts cycling over `keys` keys, `window` puts awaiting their ack at most;
    /// `sync_interval` as on the async publish rows.
    JsKvPut {
        keys: usize,
        payload: usize,
        window: u64,
        sync_interval: Option<&'static str>,
    },
    /// JetStream: KV gets (direct get of the last value) cycling over `keys` filled keys,
    /// `window` gets unanswered at most.
    JsKvGet {
        keys: usize,
        payload: usize,
        window: u64,
    },
    /// JetStream: a mirror created over a filled origin, timed until it holds everything.
    JsMirrorCatchUp {
        payload: usize,
    },
    Unsupported,
}

/// The scenarios that also run over TLS or WebSocket.
#[derive(Debug, Clone, Copy)]
pub enum TlsKind {
    PubOnly { payload: usize },
    PubSub { payload: usize },
}

impl TlsKind {
    /// The same scenario in plain text.
    pub fn plain(self) -> Kind {
        match self {
            TlsKind::PubOnly { payload } => Kind::PubOnly { payload },
            TlsKind::PubSub { payload } => Kind::PubSub {
                publishers: 1,
                subscribers: 1,
                payload,
            },
        }
    }
}

#[derive(Debug, Clone)]
pub struct Scenario {
    pub name: &'static str,
    pub payload_label: &'static str,
    pub kind: Kind,
}

// A flat table, one entry per row of the report.
#[allow(clippy::too_many_lines)]
pub fn all() -> Vec<Scenario> {
    use Kind::{
        Churn, IdleMemory, Import, JsAsyncPublish, JsDurableFetch, JsIdleConsumers, JsKvGet,
        JsKvPut, JsKvWatch, JsMirrorCatchUp, JsOrderedConsume, JsSyncPublish, LeakCheck, PubOnly,
        PubSub, ReqReply, Tls, Unsupported, Ws,
    };
    let s = |name, payload_label, kind| Scenario {
        name,
        payload_label,
        kind,
    };
    vec![
        s("pub-only", "16 B", PubOnly { payload: 16 }),
        s("pub-only", "128 B", PubOnly { payload: 128 }),
        s(
            "pub/sub 1:1",
            "16 B",
            PubSub {
                publishers: 1,
                subscribers: 1,
                payload: 16,
            },
        ),
        s(
            "pub/sub 1:1",
            "16 KB",
            PubSub {
                publishers: 1,
                subscribers: 1,
                payload: 16 * 1024,
            },
        ),
        s(
            "fan-out 1:4",
            "128 B",
            PubSub {
                publishers: 1,
                subscribers: 4,
                payload: 128,
            },
        ),
        s(
            "multi 4P x 4S",
            "128 B",
            PubSub {
                publishers: 4,
                subscribers: 4,
                payload: 128,
            },
        ),
        s(
            "req/reply 1 client, 1 service",
            "128 B",
            ReqReply {
                clients: 1,
                services: 1,
                payload: 128,
            },
        ),
        s(
            "req/reply 10 clients, 2 queue services",
            "16 B",
            ReqReply {
                clients: 10,
                services: 2,
                payload: 16,
            },
        ),
        s(
            "connection churn (100 workers)",
            "-",
            Churn { workers: 100 },
        ),
        s(
            "idle connections",
            "1,000",
            IdleMemory { connections: 1000 },
        ),
        s(
            "idle connections",
            "10,000",
            IdleMemory {
                connections: 10_000,
            },
        ),
        s(
            "leak check (20 churn cycles)",
            "-",
            LeakCheck {
                cycles: 20,
                connections: 500,
            },
        ),
        s(
            "JetStream sync publish (memory)",
            "16 B",
            JsSyncPublish {
                storage: crate::jetstream::Storage::Memory,
                payload: 16,
            },
        ),
        s(
            "JetStream async batch publish (file)",
            "128 B",
            JsAsyncPublish {
                storage: crate::jetstream::Storage::File,
                payload: 128,
                sync_interval: None,
            },
        ),
        s(
            "JetStream async batch publish (file, sync always)",
            "128 B",
            JsAsyncPublish {
                storage: crate::jetstream::Storage::File,
                payload: 128,
                sync_interval: Some("always"),
            },
        ),
        s(
            "JetStream async batch publish (file, sync_interval 2m)",
            "128 B",
            JsAsyncPublish {
                storage: crate::jetstream::Storage::File,
                payload: 128,
                sync_interval: Some("2m"),
            },
        ),
        s(
            "JetStream ordered consumer (file)",
            "128 B",
            JsOrderedConsume { payload: 128 },
        ),
        s(
            "JetStream durable pull fetch (file, explicit ack)",
            "128 B",
            JsDurableFetch { payload: 128 },
        ),
        s(
            "JetStream 10,000 idle durable consumers",
            "-",
            JsIdleConsumers { consumers: 10_000 },
        ),
        s(
            "JetStream KV watch start over 100k keys (5 revisions each)",
            "2 B",
            JsKvWatch { keys: 100_000 },
        ),
        s(
            "JetStream KV put (file, 1,000 keys)",
            "128 B",
            JsKvPut {
                keys: 1000,
                payload: 128,
                window: KV_WINDOW,
                sync_interval: None,
            },
        ),
        s(
            "JetStream KV put (file, 1,000 keys, both sync always)",
            "128 B",
            JsKvPut {
                keys: 1000,
                payload: 128,
                window: KV_WINDOW,
                sync_interval: Some("always"),
            },
        ),
        s(
            "JetStream KV put (file, 1,000 keys, both sync_interval 2m)",
            "128 B",
            JsKvPut {
                keys: 1000,
                payload: 128,
                window: KV_WINDOW,
                sync_interval: Some("2m"),
            },
        ),
        s(
            "JetStream KV get (file, 1,000 keys)",
            "128 B",
            JsKvGet {
                keys: 1000,
                payload: 128,
                window: KV_WINDOW,
            },
        ),
        s(
            "JetStream mirror catch-up (file, 1 M messages)",
            "128 B",
            JsMirrorCatchUp { payload: 128 },
        ),
        s("MQTT QoS 0 pub/sub", "128 B", Unsupported),
        s("NATS to MQTT", "128 B", Unsupported),
        s(
            "TLS pub/sub 1:1",
            "128 B",
            Tls(TlsKind::PubSub { payload: 128 }),
        ),
        s(
            "TLS pub-only",
            "128 B",
            Tls(TlsKind::PubOnly { payload: 128 }),
        ),
        s(
            "WebSocket pub/sub 1:1",
            "128 B",
            Ws(TlsKind::PubSub { payload: 128 }),
        ),
        s(
            "WebSocket pub-only",
            "128 B",
            Ws(TlsKind::PubOnly { payload: 128 }),
        ),
        s(
            "stream import 1:1 (across accounts)",
            "128 B",
            Import { payload: 128 },
        ),
    ]
}

fn publish(
    ep: &Endpoint,
    subject: &str,
    payload: usize,
    count: u64,
    per_write: usize,
) -> Result<()> {
    let mut conn = Conn::open(ep)?;
    let per_write = per_write.max(1);
    let batch = pub_batch(subject, payload, per_write);
    let mut left = count;
    while left > 0 {
        let n = left.min(per_write as u64) as usize;
        let frame_len = batch.len() / per_write;
        conn.send(&batch[..n * frame_len])?;
        left -= n as u64;
    }
    conn.send(b"PING\r\n")?;
    conn.expect_pong()
}

pub fn run(kind: Kind, ep: &Endpoint, budget: Budget) -> Result<Outcome> {
    match kind {
        Kind::PubOnly { payload } => {
            let start = Instant::now();
            publish(
                ep,
                "bench.pub",
                payload,
                budget.messages,
                budget.frames_per_write,
            )?;
            Ok(Outcome {
                msgs: budget.messages,
                payload_bytes: budget.messages * payload as u64,
                elapsed: start.elapsed(),
                ..Outcome::default()
            })
        }
        Kind::PubSub {
            publishers,
            subscribers,
            payload,
        } => pub_sub(ep, ep, publishers, subscribers, payload, budget),
        Kind::Import { payload } => {
            let importer = Endpoint {
                user: Some(IMPORTER_USER),
                ..ep.clone()
            };
            pub_sub(ep, &importer, 1, 1, payload, budget)
        }
        Kind::ReqReply {
            clients,
            services,
            payload,
        } => req_reply(ep, clients, services, payload, budget.duration),
        Kind::Churn { workers } => churn(ep, workers, budget.duration),
        Kind::Tls(inner) | Kind::Ws(inner) => run(inner.plain(), ep, budget),
        Kind::JsSyncPublish { storage, payload } => {
            crate::jetstream::sync_publish(ep, storage, payload, budget.duration)
        }
        Kind::JsAsyncPublish {
            storage, payload, ..
        } => crate::jetstream::async_publish(ep, storage, payload, budget.messages),
        Kind::JsOrderedConsume { payload } => {
            crate::js_fetch::ordered_consume(ep, payload, budget.messages)
        }
        Kind::JsDurableFetch { payload } => {
            crate::js_fetch::durable_fetch(ep, payload, budget.messages)
        }
        Kind::JsKvPut {
            keys,
            payload,
            window,
            ..
        } => crate::js_kv::put(ep, keys, payload, window, budget.duration),
        Kind::JsKvGet {
            keys,
            payload,
            window,
        } => crate::js_kv::get(ep, keys, payload, window, budget.duration),
        Kind::JsMirrorCatchUp { payload } => {
            crate::js_mirror::catch_up(ep, payload, budget.messages)
        }
        Kind::JsKvWatch { keys } => {
            crate::js_consume::kv_watch_start(ep, crate::js_consume::watch_key_count(budget, keys))
        }
        Kind::IdleMemory { .. }
        | Kind::LeakCheck { .. }
        | Kind::JsIdleConsumers { .. }
        | Kind::Unsupported => Ok(Outcome::default()),
    }
}

/// The importing account's user in the `Import` scenario's configuration.
pub const IMPORTER_USER: &str = "b";

/// Publishers on `pub_ep`, subscribers on `sub_ep`.
fn pub_sub(
    pub_ep: &Endpoint,
    sub_ep: &Endpoint,
    pubs: usize,
    subs: usize,
    payload: usize,
    budget: Budget,
) -> Result<Outcome> {
    let (per_pub, per_write) = (budget.messages, budget.frames_per_write);
    let expected = per_pub * pubs as u64;
    let ready = Arc::new(Barrier::new(subs + 1));
    let mut sub_threads = Vec::new();
    for _ in 0..subs {
        let mut conn = Conn::open(sub_ep)?;
        conn.send(b"SUB bench.ps 1\r\nPING\r\n")?;
        conn.expect_pong()?;
        let ready = Arc::clone(&ready);
        sub_threads.push(std::thread::spawn(move || -> Result<(u64, Instant)> {
            ready.wait();
            let got = conn.count_msgs(expected)?;
            Ok((got, Instant::now()))
        }));
    }
    ready.wait();
    let start = Instant::now();
    let pub_threads: Vec<_> = (0..pubs)
        .map(|_| {
            let ep = pub_ep.clone();
            std::thread::spawn(move || publish(&ep, "bench.ps", payload, per_pub, per_write))
        })
        .collect();
    for t in pub_threads {
        t.join()
            .map_err(|_| anyhow::anyhow!("publisher panicked"))??;
    }
    let mut received = 0;
    let mut last = start;
    for t in sub_threads {
        let (got, at) = t
            .join()
            .map_err(|_| anyhow::anyhow!("subscriber panicked"))??;
        received += got;
        last = last.max(at);
    }
    Ok(Outcome {
        msgs: received,
        payload_bytes: received * payload as u64,
        elapsed: last - start,
        ..Outcome::default()
    })
}

fn service(ep: &Endpoint, queue: bool, payload: usize, stop: &AtomicBool) -> Result<()> {
    let mut conn = Conn::open(ep)?;
    let sub: &[u8] = if queue {
        b"SUB bench.svc q 1\r\nPING\r\n"
    } else {
        b"SUB bench.svc 1\r\nPING\r\n"
    };
    conn.send(sub)?;
    conn.expect_pong()?;
    conn.set_timeout(Some(Duration::from_millis(200)))?;
    let body = vec![b'r'; payload];
    let mut out = Vec::with_capacity(payload + 128);
    while !stop.load(Ordering::Relaxed) {
        let Ok(Some(reply)) = conn.next_msg_reply() else {
            continue;
        };
        out.clear();
        out.extend_from_slice(b"PUB ");
        out.extend_from_slice(&reply);
        out.extend_from_slice(format!(" {payload}\r\n").as_bytes());
        out.extend_from_slice(&body);
        out.extend_from_slice(b"\r\n");
        conn.send(&out)?;
    }
    Ok(())
}

fn req_reply(
    ep: &Endpoint,
    clients: usize,
    services: usize,
    payload: usize,
    dur: Duration,
) -> Result<Outcome> {
    let stop = Arc::new(AtomicBool::new(false));
    let svc: Vec<_> = (0..services)
        .map(|_| {
            let (ep, stop) = (ep.clone(), Arc::clone(&stop));
            std::thread::spawn(move || service(&ep, services > 1, payload, &stop))
        })
        .collect();
    // A request that finds the services proves they are subscribed.
    let mut probe = Conn::open(ep)?;
    probe.send(b"SUB _INBOX.probe 1\r\nPUB bench.svc _INBOX.probe 0\r\n\r\n")?;
    probe.count_msgs(1)?;
    let start = Instant::now();
    let workers: Vec<_> = (0..clients)
        .map(|i| {
            let ep = ep.clone();
            std::thread::spawn(move || -> Result<Vec<Duration>> {
                let mut conn = Conn::open(&ep)?;
                let inbox = format!("_INBOX.bench.{i}");
                conn.send(format!("SUB {inbox} 1\r\nPING\r\n").as_bytes())?;
                conn.expect_pong()?;
                let mut request = format!("PUB bench.svc {inbox} {payload}\r\n").into_bytes();
                request.extend(std::iter::repeat_n(b'q', payload));
                request.extend_from_slice(b"\r\n");
                let mut lat = Vec::new();
                let begin = Instant::now();
                while begin.elapsed() < dur {
                    let t0 = Instant::now();
                    conn.send(&request)?;
                    conn.count_msgs(1)?;
                    lat.push(t0.elapsed());
                }
                Ok(lat)
            })
        })
        .collect();
    let mut latencies = Vec::new();
    for w in workers {
        latencies.extend(w.join().map_err(|_| anyhow::anyhow!("client panicked"))??);
    }
    let elapsed = start.elapsed();
    stop.store(true, Ordering::Relaxed);
    for s in svc {
        let _ = s.join();
    }
    Ok(Outcome {
        msgs: latencies.len() as u64,
        payload_bytes: latencies.len() as u64 * payload as u64,
        elapsed,
        latencies,
    })
}

/// One churn cycle: connect, CONNECT, one request to the service, close.
fn churn_once(ep: &Endpoint, worker: usize) -> Result<()> {
    let mut conn = Conn::open(ep)?;
    let inbox = format!("_INBOX.churn.{worker}");
    conn.send(format!("SUB {inbox} 1\r\nPUB bench.svc {inbox} 0\r\n\r\n").as_bytes())?;
    conn.count_msgs(1)?;
    Ok(())
}

fn churn(ep: &Endpoint, workers: usize, dur: Duration) -> Result<Outcome> {
    let stop = Arc::new(AtomicBool::new(false));
    let svc = {
        let (ep, stop) = (ep.clone(), Arc::clone(&stop));
        std::thread::spawn(move || service(&ep, true, 0, &stop))
    };
    churn_once(ep, usize::MAX)?;
    let start = Instant::now();
    let threads: Vec<_> = (0..workers)
        .map(|worker| {
            let ep = ep.clone();
            std::thread::spawn(move || -> Result<Vec<Duration>> {
                let mut lat = Vec::new();
                while start.elapsed() < dur {
                    let t0 = Instant::now();
                    churn_once(&ep, worker)?;
                    lat.push(t0.elapsed());
                }
                Ok(lat)
            })
        })
        .collect();
    let mut latencies = Vec::new();
    for t in threads {
        latencies.extend(t.join().map_err(|_| anyhow::anyhow!("worker panicked"))??);
    }
    let elapsed = start.elapsed();
    stop.store(true, Ordering::Relaxed);
    let _ = svc.join();
    Ok(Outcome {
        msgs: latencies.len() as u64,
        elapsed,
        latencies,
        ..Outcome::default()
    })
}

/// Opens `n` client connections (CONNECT + PING each) and keeps them open.
/// Churns `n` connections through a full cycle each (connect, CONNECT, PING, close).
pub fn churn_cycle(ep: &Endpoint, n: usize) -> Result<()> {
    for _ in 0..n {
        drop(Conn::open(ep)?);
    }
    Ok(())
}

pub fn open_idle(ep: &Endpoint, n: usize) -> Result<Vec<crate::wire::Stream>> {
    let mut out = Vec::with_capacity(n);
    for _ in 0..n {
        let conn = Conn::open(ep).context("idle connection")?;
        out.push(conn.stream);
    }
    Ok(out)
}
