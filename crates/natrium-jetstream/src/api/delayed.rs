//! Refusals Go holds back for half a second (its `errRespDelay`), so that a client retrying
//! at once does not spin: those naming an offline stream or consumer. One task owns the queue
//! of held answers and sends each when it falls due; every answer waits the same time, so the
//! queue's order is the order they fall due.

use std::sync::Arc;
use std::time::Duration;

use natrium_core::account::Account;
use natrium_core::internal::InternalClient;
use tokio::sync::mpsc;
use tokio::time::Instant;

use crate::advisory::API_AUDIT_SUBJECT;
use crate::service::JetStream;

/// Go's `errRespDelay`.
pub const DELAY: Duration = Duration::from_millis(500);

/// Answers held at most. Overflow action: the next answer is sent at once, undelayed (Go's
/// queue has no bound; a burst this large is answered rather than dropped).
const HELD_MAX: usize = 4096;

/// One held answer, and its audit advisory (if someone listened).
struct Held {
    account: Arc<Account>,
    reply: String,
    body: Vec<u8>,
    audit: Option<Vec<u8>>,
    due: Instant,
}

/// The API thread's side of the queue.
pub struct Delayed(mpsc::Sender<Held>);

impl Delayed {
    /// Starts the task that sends the held answers; it ends with JetStream or the server.
    pub fn start(js: &Arc<JetStream>) -> Self {
        let (tx, mut rx) = mpsc::channel::<Held>(HELD_MAX);
        let (mut client, _inbox) = InternalClient::start(&js.server, js.server.system_account());
        let (stopped, server) = (js.stopped.clone(), js.server.clone());
        js.server.clone().spawn_service(async move {
            let run = async move {
                while let Some(held) = rx.recv().await {
                    tokio::time::sleep_until(held.due).await;
                    send(&mut client, &held);
                }
            };
            tokio::select! {
                () = run => {}
                () = stopped.cancelled() => {}
                () = server.shutting_down() => {}
            }
        });
        Self(tx)
    }

    /// Sends `body` to `reply` in `account`, then its `audit`, once [`DELAY`] has passed (at
    /// once when the queue is full or its task has ended).
    pub fn send(
        &self,
        client: &mut InternalClient,
        account: &Arc<Account>,
        (reply, body): (&str, Vec<u8>),
        audit: Option<Vec<u8>>,
    ) {
        let held = Held {
            account: Arc::clone(account),
            reply: reply.to_owned(),
            body,
            audit,
            due: Instant::now() + DELAY,
        };
        if let Err(
            mpsc::error::TrySendError::Full(held) | mpsc::error::TrySendError::Closed(held),
        ) = self.0.try_send(held)
        {
            send(client, &held);
        }
    }
}

fn send(client: &mut InternalClient, held: &Held) {
    client.publish_in(&held.account, &held.reply, None, &held.body);
    if let Some(audit) = &held.audit {
        client.publish_in(&held.account, API_AUDIT_SUBJECT, None, audit);
    }
}
