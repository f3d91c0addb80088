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
            Route::Unknown => return None,
        })
    }
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
    }
}
