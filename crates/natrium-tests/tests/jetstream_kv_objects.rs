//! Key-Value and Object Store end to end through `async-nats`'s own APIs: buckets with
//! history and compression, puts, conditional creates and updates, deletes and purges, keys
//! and history listings, watchers (all, one key, with history, updates only), a mirrored
//! bucket; objects written in chunks and read back, listed, linked, watched, deleted, and
//! a sealed store refusing writes.

use std::path::Path;
use std::time::Duration;

use async_nats::jetstream::{self, kv, object_store, stream};
use bytes::Bytes;
use futures::{StreamExt, TryStreamExt};
use tokio::io::AsyncReadExt;

#[path = "support/jetstream.rs"]
mod support;
use support::{JsServer, WAIT};

fn config(store: &Path) -> String {
    format!("jetstream {{ store_dir: \"{}\" }}\n", store.display())
}

async fn context(server: &JsServer) -> jetstream::Context {
    let client = async_nats::connect(server.server.url()).await.unwrap();
    jetstream::new(client)
}

/// The next watch entry, within the usual wait.
async fn next_entry(watch: &mut kv::Watch) -> kv::Entry {
    tokio::time::timeout(WAIT, watch.next())
        .await
        .expect("watch entry in time")
        .expect("watch open")
        .expect("watch entry")
}

#[tokio::test]
async fn jetstream_kv_bucket_end_to_end_through_client() {
    for server in support::ours_then_go(config) {
        Box::pin(kv_end_to_end(&server)).await;
    }
}

async fn kv_end_to_end(server: &JsServer) {
    let js = context(server).await;
    let kv = js
        .create_key_value(kv::Config {
            bucket: "settings".into(),
            history: 5,
            compression: true,
            ..Default::default()
        })
        .await
        .unwrap();

    let first = kv.put("colour", Bytes::from("red")).await.unwrap();
    assert_eq!(first, 1);
    assert_eq!(
        kv.get("colour").await.unwrap().as_deref(),
        Some(&b"red"[..])
    );
    let updated = kv
        .update("colour", Bytes::from("green"), first)
        .await
        .unwrap();
    assert_eq!(updated, 2);
    assert!(
        kv.update("colour", Bytes::from("blue"), first)
            .await
            .is_err(),
        "an update from a stale revision is refused"
    );
    assert!(kv.create("colour", Bytes::from("x")).await.is_err());
    kv.create("size", Bytes::from("large")).await.unwrap();
    kv.put("shape", Bytes::from("round")).await.unwrap();

    let mut keys: Vec<String> = kv.keys().await.unwrap().try_collect().await.unwrap();
    keys.sort();
    assert_eq!(keys, ["colour", "shape", "size"]);
    let history: Vec<kv::Entry> = kv
        .history("colour")
        .await
        .unwrap()
        .try_collect()
        .await
        .unwrap();
    let values: Vec<&[u8]> = history.iter().map(|e| &e.value[..]).collect();
    assert_eq!(values, [&b"red"[..], b"green"]);

    Box::pin(kv_watchers_and_mirror(server, &js, &kv)).await;
}

/// Watchers of the bucket `kv_end_to_end` filled, then a mirror of it.
async fn kv_watchers_and_mirror(server: &JsServer, js: &jetstream::Context, kv: &kv::Store) {
    // Watchers: every key's last value (with history), one key's history, and updates only.
    let mut last_values = kv.watch_with_history(">").await.unwrap();
    let mut seen = Vec::new();
    for _ in 0..3 {
        let entry = next_entry(&mut last_values).await;
        seen.push((
            entry.key,
            String::from_utf8_lossy(&entry.value).into_owned(),
        ));
    }
    seen.sort();
    assert_eq!(
        seen,
        [
            ("colour".to_owned(), "green".to_owned()),
            ("shape".to_owned(), "round".to_owned()),
            ("size".to_owned(), "large".to_owned()),
        ]
    );
    let mut all = kv.watch_all().await.unwrap();
    kv.put("probe", Bytes::from("p")).await.unwrap();
    let probe = next_entry(&mut all).await;
    assert_eq!((probe.key.as_str(), probe.revision), ("probe", 5));
    let mut colour = kv.watch_with_history("colour").await.unwrap();
    assert_eq!(&next_entry(&mut colour).await.value[..], b"green");

    kv.delete("shape").await.unwrap();
    let deleted = next_entry(&mut all).await;
    assert_eq!(
        (deleted.key.as_str(), deleted.operation),
        ("shape", kv::Operation::Delete)
    );
    assert_eq!(kv.get("shape").await.unwrap(), None);
    kv.purge("colour").await.unwrap();
    let purged = next_entry(&mut colour).await;
    assert_eq!(purged.operation, kv::Operation::Purge);
    let history: Vec<kv::Entry> = kv
        .history("colour")
        .await
        .unwrap()
        .try_collect()
        .await
        .unwrap();
    assert_eq!(history.len(), 1, "a purge keeps only its marker");

    // An updates-only watcher sees only what comes after it.
    let mut updates = kv.watch("size").await.unwrap();
    kv.put("size", Bytes::from("small")).await.unwrap();
    let entry = next_entry(&mut updates).await;
    assert_eq!(&entry.value[..], b"small");

    // A mirror of the bucket follows it, revision for revision.
    js.create_key_value(kv::Config {
        bucket: "settings-copy".into(),
        mirror: Some(stream::Source {
            name: "KV_settings".into(),
            ..Default::default()
        }),
        ..Default::default()
    })
    .await
    .unwrap();
    let origin = js.get_stream("KV_settings").await.unwrap();
    let want = origin.cached_info().state.last_sequence;
    let deadline = tokio::time::Instant::now() + Duration::from_secs(30);
    loop {
        let mut copy = js.get_stream("KV_settings-copy").await.unwrap();
        let state = copy.info().await.unwrap().state.clone();
        if state.last_sequence == want {
            break;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "{}: mirror never caught up: {state:?}",
            server.name
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let status = kv.status().await.unwrap();
    assert_eq!(status.history(), 5);
}

#[tokio::test]
async fn jetstream_object_store_end_to_end_through_client() {
    for server in support::ours_then_go(config) {
        Box::pin(objects_end_to_end(&server)).await;
    }
}

async fn objects_end_to_end(server: &JsServer) {
    let js = context(server).await;
    let mut store = js
        .create_object_store(object_store::Config {
            bucket: "files".into(),
            ..Default::default()
        })
        .await
        .unwrap();

    // 1 MiB and a bit, in the default 128 KiB chunks.
    let big: Vec<u8> = (0..(1 << 20) + 777).map(|i| (i % 251) as u8).collect();
    let mut watch = store.watch().await.unwrap();
    let info = store.put("big.bin", &mut big.as_slice()).await.unwrap();
    assert_eq!(info.size, big.len());
    assert_eq!(info.chunks, 9);
    let seen = tokio::time::timeout(WAIT, watch.next())
        .await
        .expect("watch in time")
        .unwrap()
        .unwrap();
    assert_eq!(seen.name, "big.bin");

    let mut object = store.get("big.bin").await.unwrap();
    let mut read = Vec::new();
    object.read_to_end(&mut read).await.unwrap();
    assert_eq!(
        read, big,
        "the object reads back whole (digest checked by the client)"
    );

    store.put("small.txt", &mut &b"hello"[..]).await.unwrap();
    let replaced = store
        .put("small.txt", &mut &b"hello again"[..])
        .await
        .unwrap();
    assert_eq!(replaced.size, 11);
    let link = store.add_link("alias", &replaced).await.unwrap();
    assert!(link.options.and_then(|o| o.link).is_some());
    let mut via_link = Vec::new();
    store
        .get("alias")
        .await
        .unwrap()
        .read_to_end(&mut via_link)
        .await
        .unwrap();
    assert_eq!(via_link, b"hello again");

    let mut names: Vec<String> = store
        .list()
        .await
        .unwrap()
        .map_ok(|info| info.name)
        .try_collect()
        .await
        .unwrap();
    names.sort();
    assert_eq!(names, ["alias", "big.bin", "small.txt"]);

    store.delete("big.bin").await.unwrap();
    assert!(store.get("big.bin").await.is_err());
    let stream = js.get_stream("OBJ_files").await.unwrap();
    let mut stream = stream;
    let state = stream.info().await.unwrap().state.clone();
    assert!(
        state.messages <= 4,
        "the deleted object's chunks are purged: {state:?}"
    );

    store.seal().await.unwrap();
    assert!(
        store.put("late.txt", &mut &b"no"[..]).await.is_err(),
        "a sealed store takes no more objects"
    );
}
