//! `$JS.API.ACCOUNT.PURGE.<account>`: the system account removes every stream of an account
//! and its directory, as a single Go server does. Other accounts are not answered.

use std::sync::Arc;

use natrium_core::internal::InternalClient;
use serde::Serialize;

use crate::advisory::{self, StreamAction};
use crate::errors::{table, ApiError};
use crate::service::JetStream;

#[derive(Serialize)]
struct Initiated {
    initiated: bool,
}

/// Purges account `name`; the response body on success. The account keeps JetStream enabled
/// (a stream created afterwards starts a new directory).
pub fn purge(js: &JetStream, client: &mut InternalClient, name: &str) -> Result<Vec<u8>, ApiError> {
    if name.contains(['/', '\\']) {
        return Err(table::STREAM_GENERAL_ERROR_F
            .with(&[("err", &"account name can not contain path separators")]));
    }
    let account = js.server.account(name);
    let jsa = js.account(name);
    let streams = jsa.as_ref().map(|jsa| jsa.streams()).unwrap_or_default();
    tracing::info!(
        "Purge request for account {name} (streams: {}, hasAccount: {})",
        streams.len(),
        account.is_some()
    );
    if let Some(jsa) = &jsa {
        for stream in &streams {
            let stream_name = stream.name.as_str();
            match jsa.delete_stream(js, stream_name) {
                Ok(()) => {}
                // Deleted meanwhile by its own account's request: nothing left to do.
                Err(err) if err.err_code == table::STREAM_NOT_FOUND.err_code => continue,
                Err(err) => return Err(table::STREAM_DELETE.with(&[("err", &err.description)])),
            }
            let domain = js.settings.domain.as_str();
            advisory::stream_action(
                client,
                &jsa.account,
                stream_name,
                StreamAction::Delete,
                domain,
            );
        }
    }
    let dir = js.settings.store_dir.join(name);
    if let Err(err) = std::fs::remove_dir_all(&dir) {
        if err.kind() != std::io::ErrorKind::NotFound {
            return Err(table::STREAM_GENERAL_ERROR_F.with(&[("err", &err)]));
        }
    }
    js.release_heap();
    Ok(crate::api::responses::encode(
        "account_purge_response",
        None,
        Initiated { initiated: true },
    ))
}

/// Whether `account` is the server's system account.
pub fn is_system(js: &JetStream, account: &Arc<natrium_core::account::Account>) -> bool {
    Arc::ptr_eq(account, &js.server.system_account())
}
