//! The origin's side of durable sourcing (ADR-58/60, API level 4): the consumer a mirror or
//! source asks for on an interest or work-queue stream is made a durable that acks through
//! flow control, so a message leaves the origin only once the copying stream answered that
//! it stored it, and the interest it holds survives the copying stream's absence. Asked for
//! again (after a restart, a gap or silence) it keeps its start and delivers again from just
//! above its ack floor; the copying stream skips what it already has.

use std::sync::Arc;

use crate::config::stream::Retention;
use crate::consumer::config::{AckPolicy, ConsumerConfig};
use crate::consumer::reset::reset;
use crate::consumer::Consumer;
use crate::stream::Stream;

/// Whether a create request is a mirror's or source's, naming its consumer stably.
pub fn is_sourcing_request(config: &ConsumerConfig) -> bool {
    config.direct && config.sourcing && !config.name.is_empty()
}

/// Go's upgrade of a sourcing consumer on a stream that is not limits-based: durable (named
/// as asked), `ack_policy: flow_control`, no ack wait, the default `max_deliver`, never
/// removed for inactivity. `false` on a limits stream (the caller names it afresh).
pub fn upgrade(config: &mut ConsumerConfig, retention: Retention) -> bool {
    if retention == Retention::Limits {
        return false;
    }
    config.direct = false;
    config.durable_name.clone_from(&config.name);
    config.ack_policy = AckPolicy::FlowControl;
    config.ack_wait = 0;
    config.max_deliver = 0;
    config.inactive_threshold = 0;
    true
}

/// A durable sourcing consumer asked for again keeps where it was configured to start: the
/// copying stream's request names where it would like to resume, the consumer's ack floor
/// says better.
pub fn keep_start(config: &mut ConsumerConfig, existing: &ConsumerConfig) {
    if config.sourcing && config.is_durable() {
        config.deliver_policy = existing.deliver_policy;
        config.opt_start_seq = existing.opt_start_seq;
        config.opt_start_time = existing.opt_start_time;
    }
}

/// After the update of an existing sourcing consumer: delivery starts again just above its
/// ack floor, from consumer sequence 1, as the copying stream expects of a new consumer.
pub fn restart(stream: &Stream, consumer: &Arc<Consumer>) {
    let mut core = consumer.core.lock();
    if !core.config.sourcing {
        return;
    }
    let result = {
        let stream_core = stream.core.lock();
        reset(&mut core, 0, stream_core.ingest.store.as_ref())
    };
    drop(core);
    if let Err(err) = result {
        tracing::warn!(
            "JetStream consumer '{} > {} > {}' could not restart its delivery: {err}",
            stream.account.name,
            stream.name,
            consumer.name
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn jetstream_sourcing_durable_upgrade() {
        let mut config = ConsumerConfig {
            name: "JS_SRC_abcd1234".to_owned(),
            direct: true,
            sourcing: true,
            ack_wait: 1,
            max_deliver: 1,
            inactive_threshold: 10,
            ..ConsumerConfig::default()
        };
        assert!(is_sourcing_request(&config));
        let mut limits = config.clone();
        assert!(!upgrade(&mut limits, Retention::Limits));
        assert_eq!(limits, config);
        assert!(upgrade(&mut config, Retention::WorkQueue));
        assert!(!config.direct && config.sourcing && config.is_durable());
        assert_eq!(config.durable_name, "JS_SRC_abcd1234");
        assert_eq!(config.ack_policy, AckPolicy::FlowControl);
        assert_eq!(
            (
                config.ack_wait,
                config.max_deliver,
                config.inactive_threshold
            ),
            (0, 0, 0)
        );
        let existing = ConsumerConfig {
            opt_start_seq: 3,
            ..config.clone()
        };
        config.opt_start_seq = 9;
        keep_start(&mut config, &existing);
        assert_eq!(config.opt_start_seq, 3);
    }
}
