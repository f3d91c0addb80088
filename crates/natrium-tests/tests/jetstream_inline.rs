//! Publishes stored and direct gets answered on the requester's task: a file stream whose
//! acks do not wait for a sync (`sync_interval`) stores inline, and a KV get reading a cached
//! record is answered inline. What clients see must not change: acks in order, watchers
//! told, values read back, and everything there after a restart.

use std::path::Path;

use async_nats::jetstream::{self, kv};
use futures::StreamExt;

use support::{JsServer, WAIT};

#[path = "support/jetstream.rs"]
mod support;

fn interval_config(store: &Path) -> String {
    format!(
        "jetstream {{\n  store_dir: \"{}\"\n  sync_interval: \"2m\"\n}}\n",
        store.display()
    )
}

async fn bucket(js: &jetstream::Context) -> kv::Store {
    js.create_key_value(kv::Config {
        bucket: "INLINE".into(),
        history: 1,
        storage: jetstream::stream::StorageType::File,
        ..Default::default()
    })
    .await
    .expect("bucket")
}

#[tokio::test]
async fn jetstream_inline_file_kv_puts_and_gets_keep_order_and_survive_restart() {
    let js_server = JsServer::start("ours", false, interval_config).expect("starts");
    let client = async_nats::connect(js_server.server.url()).await.unwrap();
    let js = jetstream::new(client.clone());
    let kv = bucket(&js).await;
    let mut watch = kv.watch_all().await.expect("watch");
    // One at a time, then many in flight: revisions are the publish order.
    for i in 0..200u64 {
        let rev = kv.put(format!("k{}", i % 20), format!("v{i}").into()).await;
        assert_eq!(rev.expect("put"), i + 1);
    }
    let acks: Vec<_> = {
        let mut pending = Vec::new();
        for i in 200..400u64 {
            let subject = format!("$KV.INLINE.k{}", i % 20);
            pending.push(
                js.publish(subject, format!("v{i}").into())
                    .await
                    .expect("send"),
            );
        }
        let mut seqs = Vec::new();
        for ack in pending {
            seqs.push(ack.await.expect("ack").sequence);
        }
        seqs
    };
    assert_eq!(acks, (201..=400).collect::<Vec<u64>>());
    // The watcher is told in order; a revision replaced before it was read is skipped.
    let mut last = 0;
    while last < 400 {
        let entry = tokio::time::timeout(WAIT, watch.next())
            .await
            .expect("watcher told in time")
            .expect("entry")
            .expect("entry ok");
        assert!(entry.revision > last, "{} after {last}", entry.revision);
        last = entry.revision;
    }
    for k in 0..20u64 {
        let value = kv.get(format!("k{k}")).await.expect("get");
        assert_eq!(value.as_deref(), Some(format!("v{}", 380 + k).as_bytes()));
    }
    assert_eq!(kv.get("missing").await.expect("get"), None);
    drop((watch, kv, js, client));
    let JsServer { server, dir, name } = js_server;
    drop(server);
    let again = JsServer::start_in(dir, name, false, interval_config).expect("restarts");
    let client = async_nats::connect(again.server.url()).await.unwrap();
    let kv = jetstream::new(client)
        .get_key_value("INLINE")
        .await
        .expect("bucket");
    for k in 0..20u64 {
        let entry = kv
            .entry(format!("k{k}"))
            .await
            .expect("entry")
            .expect("kept");
        assert_eq!(entry.revision, 381 + k);
        assert_eq!(&entry.value[..], format!("v{}", 380 + k).as_bytes());
    }
}

#[tokio::test]
async fn jetstream_inline_direct_gets_on_a_durable_file_bucket() {
    let dir = tempfile::tempdir().unwrap();
    let server = support::start_js(dir.path());
    let client = async_nats::connect(server.url()).await.unwrap();
    let js = jetstream::new(client);
    let kv = bucket(&js).await;
    for round in 0..3u64 {
        for k in 0..50u64 {
            kv.put(format!("k{k}"), format!("{round}-{k}").into())
                .await
                .expect("put");
        }
        for k in 0..50u64 {
            let got = kv.get(format!("k{k}")).await.expect("get");
            assert_eq!(got.as_deref(), Some(format!("{round}-{k}").as_bytes()));
        }
    }
    kv.delete("k1").await.expect("delete");
    assert_eq!(kv.get("k1").await.expect("get"), None);
    assert_eq!(kv.get("nope").await.expect("get"), None);
}
