//! The `jetstream` block in a reload, by Go's rules: JetStream may be turned on or off, the
//! server-wide `limits { … }` replaced, and `max_memory_store` / `max_file_store` raised (not
//! lowered, nor moved to or from the size read from the machine) while it runs; the store
//! directory stays. Every other key of the block is one Go cannot reload.
//!
//! A limit removed or a store directory dropped is allowed only when JetStream is being
//! turned off with it; Go decides that after its whole walk, so the refusal waits in
//! [`Walk::js_deferred`] until [`finish`].

use natrium_gofmt::go_duration;

use super::{Action, Walk};
use crate::options::SyncPolicy;
use crate::ServerOptions;

const STORE_DIR_CHANGED: &str = "config reload not supported for jetstream storage directory";
const STORE_DIR_DROPPED: &str = "config reload not supported for jetstream storage dir";
const DYNAMIC_TO_SET: &str =
    "config reload not supported for jetstream dynamic max memory and store";
const DECREASED: &str = "config reload not supported for decreasing jetstream max memory and store";
const UNSET: &str = "config reload not supported for jetstream max memory and max store";

/// Go's `JetStream` … `StreamMaxBufferedSize`, which follow `MaxPending` in its options.
pub(super) fn fields(w: &mut Walk<'_>) -> Result<(), String> {
    let (old, new) = (w.old, w.new);
    let running = old.jetstream.enabled;
    if old.jetstream.enabled != new.jetstream.enabled {
        w.push(
            "Reloaded: JetStream".to_owned(),
            Action::JetStream(new.jetstream.enabled),
        );
    }
    w.fixed(
        "NoJetStreamStrict",
        !old.jetstream.strict,
        !new.jetstream.strict,
    )?;
    let mut raised = (0, 0);
    if running {
        raised.0 = max_size(w, old.jetstream.max_memory, new.jetstream.max_memory)?;
        raised.1 = max_size(w, old.jetstream.max_store, new.jetstream.max_store)?;
    }
    if raised != (0, 0) {
        w.diff.changes.push(super::Change {
            line: None,
            action: Action::JetStreamMax {
                memory: raised.0,
                store: raised.1,
            },
        });
    }
    w.fixed(
        "JetStreamDomain",
        &old.jetstream_domain,
        &new.jetstream_domain,
    )?;
    w.fixed("JetStreamKey", &old.jetstream.key, &new.jetstream.key)?;
    w.fixed(
        "JetStreamOldKey",
        &old.jetstream.prev_key,
        &new.jetstream.prev_key,
    )?;
    w.fixed("JetStreamCipher", cipher(old), cipher(new))?;
    w.fixed(
        "JetStreamUniqueTag",
        &old.jetstream.unique_tag,
        &new.jetstream.unique_tag,
    )?;
    if old.jetstream.limits != new.jetstream.limits {
        w.push(
            "Reloaded: JetStream limits".to_owned(),
            Action::JetStreamLimits,
        );
    }
    w.fixed(
        "JetStreamRequestQueueLimit",
        old.jetstream.request_queue_limit,
        new.jetstream.request_queue_limit,
    )?;
    w.fixed(
        "StreamMaxBufferedMsgs",
        old.jetstream.max_buffered_msgs,
        new.jetstream.max_buffered_msgs,
    )?;
    w.fixed(
        "StreamMaxBufferedSize",
        old.jetstream.max_buffered_size,
        new.jetstream.max_buffered_size,
    )
}

/// Go's `StoreDir`, `SyncInterval`, `SyncAlways`, after the buffered sizes.
pub(super) fn store_and_sync(w: &mut Walk<'_>) -> Result<(), String> {
    let (old, new) = (w.old, w.new);
    if old.jetstream.enabled && old.store_dir != new.store_dir {
        if !new.store_dir.is_empty() {
            return Err(STORE_DIR_CHANGED.to_owned());
        }
        // Allowed only when JetStream goes off with it.
        w.js_deferred.get_or_insert(STORE_DIR_DROPPED.to_owned());
    }
    let (old_every, old_always) = sync(old);
    let (new_every, new_always) = sync(new);
    w.fixed(
        "SyncInterval",
        go_duration(old_every),
        go_duration(new_every),
    )?;
    w.fixed("SyncAlways", old_always, new_always)
}

/// Go's checks after its walk: a limit or the store directory dropped is a refusal unless
/// JetStream goes off.
pub(super) fn finish(w: &Walk<'_>) -> Result<(), String> {
    match &w.js_deferred {
        Some(err) if w.new.jetstream.enabled => Err(err.clone()),
        _ => Ok(()),
    }
}

/// One of `max_memory_store` / `max_file_store` while JetStream runs: the new limit when it
/// was raised (0 when unchanged). Negative is "sized from the machine".
fn max_size(w: &mut Walk<'_>, old: i64, new: i64) -> Result<i64, String> {
    let (from_set, to_set) = (old != -1, new != -1);
    match () {
        () if old == new => Ok(0),
        () if from_set && to_set && new > old => Ok(new),
        () if from_set && !to_set => {
            // Go's order: the memory limit's refusal is the one named (one text for both).
            w.js_deferred.get_or_insert(UNSET.to_owned());
            Ok(0)
        }
        () if !from_set && to_set => Err(DYNAMIC_TO_SET.to_owned()),
        () => Err(DECREASED.to_owned()),
    }
}

/// Go's `%v` of its cipher setting (ChaCha when none is named).
fn cipher(o: &ServerOptions) -> &'static str {
    if o.jetstream.cipher == "aes" {
        "AES-GCM"
    } else {
        "ChaCha20-Poly1305"
    }
}

/// Go's `SyncInterval` and `SyncAlways` (two minutes unless set; `always` keeps two minutes).
fn sync(o: &ServerOptions) -> (std::time::Duration, bool) {
    const DEFAULT: std::time::Duration = std::time::Duration::from_secs(120);
    match o.jetstream.sync {
        SyncPolicy::Durable => (DEFAULT, false),
        SyncPolicy::Always => (DEFAULT, true),
        SyncPolicy::Interval(every) => (every, false),
    }
}

#[cfg(test)]
mod tests {
    use crate::reload::{diff, Action, Diff};
    use crate::ServerOptions;

    const GB: i64 = 1 << 30;

    fn running() -> ServerOptions {
        let mut o = ServerOptions {
            port: -1,
            store_dir: "/data".into(),
            ..ServerOptions::default()
        };
        o.apply_baseline();
        o.jetstream.enabled = true;
        o.jetstream.max_memory = GB;
        o.jetstream.max_store = 10 * GB;
        o
    }

    fn reload(old: &ServerOptions, f: &dyn Fn(&mut ServerOptions)) -> Result<Diff, String> {
        let mut new = old.clone();
        f(&mut new);
        diff(old, &new, 4222, &|_| Vec::new())
    }

    fn refused(old: &ServerOptions, f: &dyn Fn(&mut ServerOptions)) -> String {
        reload(old, f).err().unwrap_or_default()
    }

    fn actions(d: &Result<Diff, String>) -> Vec<Action> {
        d.as_ref()
            .map(|d| {
                d.changes
                    .iter()
                    .map(|c| c.action.clone())
                    .collect::<Vec<_>>()
            })
            .unwrap_or_default()
            .into_iter()
            .filter(|a| *a != Action::None)
            .collect()
    }

    #[test]
    fn reload_jetstream_refusals_like_go() {
        let js = running();
        assert_eq!(
            refused(&js, &|o| o.store_dir = "/other".into()),
            "config reload not supported for jetstream storage directory"
        );
        assert_eq!(
            refused(&js, &|o| o.store_dir = String::new()),
            "config reload not supported for jetstream storage dir"
        );
        assert_eq!(
            refused(&js, &|o| o.jetstream.max_memory = GB / 2),
            "config reload not supported for decreasing jetstream max memory and store"
        );
        assert_eq!(
            refused(&js, &|o| o.jetstream.max_store = -1),
            "config reload not supported for jetstream max memory and max store"
        );
        let mut dynamic = running();
        dynamic.jetstream.max_memory = -1;
        assert_eq!(
            refused(&dynamic, &|o| o.jetstream.max_memory = GB),
            "config reload not supported for jetstream dynamic max memory and store"
        );
        assert_eq!(
            refused(&js, &|o| o.jetstream.sync =
                crate::options::SyncPolicy::Always),
            "config reload not supported for SyncAlways: old=false, new=true"
        );
        assert_eq!(
            refused(&js, &|o| o.jetstream.cipher = "aes".into()),
            "config reload not supported for JetStreamCipher: old=ChaCha20-Poly1305, new=AES-GCM"
        );
        assert_eq!(
            refused(&js, &|o| o.jetstream_domain = "hub".into()),
            "config reload not supported for JetStreamDomain: old=, new=hub"
        );
    }

    #[test]
    fn reload_jetstream_raised_limits_and_server_limits() {
        let js = running();
        let d = reload(&js, &|o| {
            o.jetstream.max_memory = 2 * GB;
            o.jetstream.max_store = 20 * GB;
            o.jetstream.limits.max_ack_pending = 100;
        });
        assert_eq!(
            actions(&d),
            [
                Action::JetStreamMax {
                    memory: 2 * GB,
                    store: 20 * GB
                },
                Action::JetStreamLimits
            ]
        );
        let lines: Vec<String> = d
            .unwrap_or_default()
            .changes
            .into_iter()
            .filter_map(|c| c.line)
            .collect();
        assert!(lines.contains(&"Reloaded: JetStream limits".to_owned()));
        // Only one of them raised.
        let d = reload(&js, &|o| o.jetstream.max_store = 20 * GB);
        assert_eq!(
            actions(&d),
            [Action::JetStreamMax {
                memory: 0,
                store: 20 * GB
            }]
        );
    }

    #[test]
    fn reload_jetstream_turned_off_or_on() {
        let js = running();
        // Off with its limits and directory gone: allowed.
        let d = reload(&js, &|o| {
            o.jetstream.enabled = false;
            o.jetstream.max_memory = -1;
            o.jetstream.max_store = -1;
            o.store_dir = String::new();
        });
        assert_eq!(actions(&d), [Action::JetStream(false)]);
        // Not running: its limits are not checked.
        let mut off = running();
        off.jetstream.enabled = false;
        let d = reload(&off, &|o| {
            o.jetstream.enabled = true;
            o.jetstream.max_memory = 1;
            o.store_dir = "/elsewhere".into();
        });
        assert_eq!(actions(&d), [Action::JetStream(true)]);
    }
}
