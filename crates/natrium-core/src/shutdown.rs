//! Ordered shutdown, the same on SIGTERM, SIGINT, `--signal quit` and at the end of lame duck
//! mode (the binary calls [`Server::shutdown`] for each):
//!
//! 1. stop accepting connections;
//! 2. announce the shutdown, and wait (briefly) until every event listener has handled it, so
//!    that subscribers to `$SYS.SERVER.<id>.SHUTDOWN` get it before their connections close;
//! 3. close every connection, each flushing what it has queued, and wait for their tasks:
//!    after this no client publishes any more;
//! 4. drain: every service registered with [`Server::on_drain`] finishes its work (a store
//!    flushes and syncs what it acknowledged), all at once, within `SERVICE_DRAIN_DEADLINE`;
//! 5. stop the services ([`Server::shutting_down`] fires) and wait for their tasks.

pub(crate) mod drains;

use std::future::Future;

use drains::Drain;

use crate::client::ClosedReason;
use crate::limits::{CONNECTIONS_CLOSE_WAIT, SERVICE_DRAIN_DEADLINE};
use crate::Server;

impl Server {
    /// Registers what the service `name` does in shutdown's drain phase: after the last
    /// connection has closed, before the services stop. Runs once; registered after shutdown
    /// began, it never runs.
    pub fn on_drain<F, Fut>(&self, name: &'static str, drain: F)
    where
        F: FnOnce() -> Fut + Send + 'static,
        Fut: Future<Output = ()> + Send + 'static,
    {
        let drain: Drain = Box::new(move || Box::pin(drain()));
        self.shared.drains.add(name, drain);
    }

    /// Shuts the server down in the order of the module doc.
    pub async fn shutdown(&self) {
        let shared = &self.shared;
        shared.shutdown_begun.cancel();
        shared.stop_accepting.cancel();
        shared.events.announce_shutdown().await;
        for client in self.clients() {
            client.close(ClosedReason::ServerShutdown);
        }
        shared.connections.cancel();
        shared.conn_tracker.close();
        if tokio::time::timeout(CONNECTIONS_CLOSE_WAIT, shared.conn_tracker.wait())
            .await
            .is_err()
        {
            tracing::warn!("Shutdown: connections still closing after {CONNECTIONS_CLOSE_WAIT:?}");
        }
        self.drain_services().await;
        shared.shutdown.cancel();
        shared.tracker.close();
        shared.tracker.wait().await;
    }

    async fn drain_services(&self) {
        let drains = self.shared.drains.take();
        if drains.is_empty() {
            return;
        }
        let (names, runs): (Vec<_>, Vec<_>) = drains
            .into_iter()
            .map(|(name, drain)| (name, tokio::spawn(drain())))
            .unzip();
        // The drains run concurrently (spawned); this waits for each in turn.
        let all = async {
            for run in runs {
                let _ = run.await;
            }
        };
        if tokio::time::timeout(SERVICE_DRAIN_DEADLINE, all)
            .await
            .is_err()
        {
            tracing::warn!(
                "Shutdown: services still draining after {SERVICE_DRAIN_DEADLINE:?}: {}",
                names.join(", ")
            );
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use std::sync::Arc;

    use parking_lot::Mutex;

    use crate::{CoreConfig, Server};

    /// Drains run after the connections are gone and before services stop.
    #[tokio::test]
    async fn shutdown_drains_services_between_connections_and_stop() {
        let server = Server::new(CoreConfig {
            port: -1,
            host: "127.0.0.1".to_owned(),
            ..CoreConfig::default()
        })
        .unwrap();
        let addr = server.listen().await.unwrap();
        let _client = tokio::net::TcpStream::connect(addr).await.unwrap();
        let order = Arc::new(Mutex::new(Vec::<&str>::new()));
        {
            let (order, probe) = (Arc::clone(&order), server.clone());
            server.on_drain("store", move || async move {
                let clients = probe.clients().len();
                order.lock().push(if clients == 0 {
                    "drain, no clients"
                } else {
                    "drain, clients"
                });
            });
        }
        {
            let (order, probe) = (Arc::clone(&order), server.clone());
            server.spawn_service(async move {
                probe.shutting_down().await;
                order.lock().push("service stops");
            });
        }
        // Wait for the connection to be registered, then shut down.
        while server.clients().is_empty() {
            tokio::task::yield_now().await;
        }
        server.shutdown().await;
        assert_eq!(*order.lock(), ["drain, no clients", "service stops"]);
    }
}
