//! `CONSUMER.RESET` as Go applies it: a consumer starts again from a stream sequence (or
//! just above its ack floor), forgetting what it had pending. Go's checks: a consumer that
//! delivers by start sequence or start time can not go below its start; deliver policies
//! other than those and `all` only reset to the ack floor.

use super::config::DeliverPolicy;
use super::running::ConsumerCore;
use super::state::DeliveryState;
use natrium_store::StreamStore;

/// Resets the consumer to `seq` (0: one above its ack floor) and returns the sequence it
/// starts from. The waiting requests stay.
///
/// # Errors
/// The text after `invalid reset: ` (Go's `below start seq`, `below start time`,
/// `not allowed`) or a store failure's description.
pub fn reset(core: &mut ConsumerCore, seq: u64, store: &dyn StreamStore) -> Result<u64, String> {
    let seq = if seq == 0 {
        core.delivery.ack_floor.stream.saturating_add(1)
    } else {
        check(core, seq, store)?;
        seq
    }
    .max(1);
    let mut fresh = DeliveryState::starting(seq);
    let old = &mut core.delivery;
    std::mem::swap(&mut fresh.waiting, &mut old.waiting);
    std::mem::swap(&mut fresh.push, &mut old.push);
    std::mem::swap(&mut fresh.pin, &mut old.pin);
    fresh.armed = old.armed;
    fresh.wait_due = old.wait_due;
    core.delivery = fresh;
    core.next_seq = seq;
    if let Some(st) = core.store.as_mut() {
        // On disk before the answer says so.
        st.reset(seq - 1)
            .and_then(|()| st.sync())
            .map_err(|e| e.to_string())?;
    }
    Ok(seq)
}

fn check(core: &ConsumerCore, seq: u64, store: &dyn StreamStore) -> Result<(), String> {
    let config = &core.config;
    match config.deliver_policy {
        DeliverPolicy::ByStartSequence if seq < config.opt_start_seq => {
            Err("below start seq".to_owned())
        }
        DeliverPolicy::All | DeliverPolicy::ByStartSequence => Ok(()),
        DeliverPolicy::ByStartTime => {
            let start = config
                .opt_start_time
                .map_or(0, |t| store.seq_from_time(t.unix_nanos()));
            if seq < start {
                Err("below start time".to_owned())
            } else {
                Ok(())
            }
        }
        _ => Err("not allowed".to_owned()),
    }
}
