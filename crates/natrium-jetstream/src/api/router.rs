//! `$JS.API.<verb>…` subjects to requests.

/// One API request, by subject.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Route<'a> {
    Info,
    StreamCreate(&'a str),
    StreamUpdate(&'a str),
    StreamInfo(&'a str),
    StreamDelete(&'a str),
    StreamPurge(&'a str),
    StreamNames,
    StreamList,
    MsgGet(&'a str),
    MsgDelete(&'a str),
    StreamSnapshot(&'a str),
    StreamRestore(&'a str),
    /// Verbs of a clustered server, answered as a single Go server does (10010).
    StreamLeaderStepdown,
    StreamPeerRemove,
    /// Answered in the system account only.
    AccountPurge(&'a str),
    /// The consumer verbs.
    Consumer(ConsumerRoute<'a>),
    /// A subject Go does not answer (on a single server: `META.LEADER.STEPDOWN`,
    /// `SERVER.REMOVE`, `ACCOUNT.STREAM.MOVE`, `ACCOUNT.STREAM.CANCEL_MOVE`).
    Unknown,
}

impl Route<'_> {
    /// The response's type name (`io.nats.jetstream.api.v1.<kind>`); `None` for a subject Go
    /// does not answer.
    pub fn kind(&self) -> Option<&'static str> {
        Some(match self {
            Route::Info => "account_info_response",
            Route::StreamCreate(_) => "stream_create_response",
            Route::StreamUpdate(_) => "stream_update_response",
            Route::StreamInfo(_) => "stream_info_response",
            Route::StreamDelete(_) => "stream_delete_response",
            Route::StreamPurge(_) => "stream_purge_response",
            Route::StreamNames => "stream_names_response",
            Route::StreamList => "stream_list_response",
            Route::MsgGet(_) => "stream_msg_get_response",
            Route::MsgDelete(_) => "stream_msg_delete_response",
            Route::StreamSnapshot(_) => "stream_snapshot_response",
            Route::StreamRestore(_) => "stream_restore_response",
            Route::StreamLeaderStepdown => "stream_leader_stepdown_response",
            Route::StreamPeerRemove => "stream_remove_peer_response",
            Route::AccountPurge(_) => "account_purge_response",
            Route::Consumer(c) => c.kind(),
            Route::Unknown => return None,
        })
    }

    /// Verbs of a clustered server: a single server refuses them (10010) even in an account
    /// without JetStream.
    pub fn cluster_only(&self) -> bool {
        matches!(
            self,
            Route::StreamLeaderStepdown
                | Route::StreamPeerRemove
                | Route::Consumer(ConsumerRoute::LeaderStepdown)
        )
    }
}

/// A consumer verb, by subject.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ConsumerRoute<'a> {
    /// `CONSUMER.CREATE.<stream>[.<name>[.<filter>]]`: what follows `CONSUMER.CREATE.`.
    Create(&'a str),
    /// `CONSUMER.DURABLE.CREATE.<stream>.<durable>`.
    DurableCreate(&'a str, &'a str),
    Info(&'a str, &'a str),
    Names(&'a str),
    List(&'a str),
    Delete(&'a str, &'a str),
    Pause(&'a str, &'a str),
    Unpin(&'a str, &'a str),
    /// Answered by the consumer itself (`super::consumer_reset`).
    Reset(&'a str, &'a str),
    LeaderStepdown,
}

impl ConsumerRoute<'_> {
    /// The response's type name.
    pub fn kind(&self) -> &'static str {
        match self {
            ConsumerRoute::Create(_) | ConsumerRoute::DurableCreate(..) => {
                "consumer_create_response"
            }
            ConsumerRoute::Info(..) => "consumer_info_response",
            ConsumerRoute::Names(_) => "consumer_names_response",
            ConsumerRoute::List(_) => "consumer_list_response",
            ConsumerRoute::Delete(..) => "consumer_delete_response",
            ConsumerRoute::Pause(..) => "consumer_pause_response",
            ConsumerRoute::Unpin(..) => "consumer_unpin_response",
            ConsumerRoute::Reset(..) => "consumer_reset_response",
            ConsumerRoute::LeaderStepdown => "consumer_leader_stepdown_response",
        }
    }
}

/// Routes `CONSUMER.…` (the tokens after `CONSUMER`).
fn consumer_route<'a>(verb: &'a str, tokens: &[&'a str]) -> Option<ConsumerRoute<'a>> {
    Some(match tokens {
        ["CREATE", _, ..] => ConsumerRoute::Create(verb.get("CONSUMER.CREATE.".len()..)?),
        ["DURABLE", "CREATE", stream, durable] => ConsumerRoute::DurableCreate(stream, durable),
        ["INFO", stream, name] => ConsumerRoute::Info(stream, name),
        ["NAMES", stream] => ConsumerRoute::Names(stream),
        ["LIST", stream] => ConsumerRoute::List(stream),
        ["DELETE", stream, name] => ConsumerRoute::Delete(stream, name),
        ["PAUSE", stream, name] => ConsumerRoute::Pause(stream, name),
        ["UNPIN", stream, name] => ConsumerRoute::Unpin(stream, name),
        ["RESET", stream, name] => ConsumerRoute::Reset(stream, name),
        ["LEADER", "STEPDOWN", _, _] => ConsumerRoute::LeaderStepdown,
        _ => return None,
    })
}

/// The API prefix every request subject starts with (without a domain).
pub const API_PREFIX: &str = "$JS.API.";

/// Routes the part of a request subject after [`API_PREFIX`].
pub fn route(verb: &str) -> Route<'_> {
    let tokens: Vec<&str> = verb.split('.').collect();
    match tokens.as_slice() {
        ["INFO"] => Route::Info,
        ["STREAM", "CREATE", name] => Route::StreamCreate(name),
        ["STREAM", "UPDATE", name] => Route::StreamUpdate(name),
        ["STREAM", "INFO", name] => Route::StreamInfo(name),
        ["STREAM", "DELETE", name] => Route::StreamDelete(name),
        ["STREAM", "PURGE", name] => Route::StreamPurge(name),
        ["STREAM", "NAMES"] => Route::StreamNames,
        ["STREAM", "LIST"] => Route::StreamList,
        ["STREAM", "MSG", "GET", name] => Route::MsgGet(name),
        ["STREAM", "MSG", "DELETE", name] => Route::MsgDelete(name),
        ["STREAM", "SNAPSHOT", name] => Route::StreamSnapshot(name),
        ["STREAM", "RESTORE", name] => Route::StreamRestore(name),
        ["STREAM", "LEADER", "STEPDOWN", _] => Route::StreamLeaderStepdown,
        ["STREAM", "PEER", "REMOVE", _] => Route::StreamPeerRemove,
        ["ACCOUNT", "PURGE", name] => Route::AccountPurge(name),
        ["CONSUMER", rest @ ..] => {
            consumer_route(verb, rest).map_or(Route::Unknown, Route::Consumer)
        }
        _ => Route::Unknown,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn api_routes_subjects() {
        assert_eq!(route("INFO"), Route::Info);
        assert_eq!(route("STREAM.CREATE.S1"), Route::StreamCreate("S1"));
        assert_eq!(route("STREAM.MSG.GET.S1"), Route::MsgGet("S1"));
        assert_eq!(route("STREAM.SNAPSHOT.S1"), Route::StreamSnapshot("S1"));
        assert_eq!(route("STREAM.RESTORE.S1"), Route::StreamRestore("S1"));
        assert_eq!(route("STREAM.CREATE"), Route::Unknown);
        assert_eq!(route("BOGUS"), Route::Unknown);
        assert_eq!(route("ACCOUNT.PURGE.A"), Route::AccountPurge("A"));
        assert_eq!(route("META.LEADER.STEPDOWN"), Route::Unknown);
        assert_eq!(
            route("CONSUMER.CREATE.S.C.a.b"),
            Route::Consumer(ConsumerRoute::Create("S.C.a.b"))
        );
        assert_eq!(
            route("CONSUMER.DURABLE.CREATE.S.D"),
            Route::Consumer(ConsumerRoute::DurableCreate("S", "D"))
        );
        assert_eq!(route("CONSUMER.CREATE"), Route::Unknown);
        assert_eq!(route("CONSUMER.MSG.NEXT.S.C"), Route::Unknown);
    }
}
