//! A client connection's publisher, made at its first publish and dropped again when the
//! connection has been quiet for a ping interval: a connection that only subscribes, or sits
//! idle, holds no match cache, frame templates or batch state (a few hundred bytes inline and
//! up to `CLIENT_MATCH_CACHE_ENTRIES` cached results on the heap).
//!
//! What CONNECT and the login set (echo, no_responders, the origin) is kept here and handed to
//! each publisher made, so a remade one routes exactly as the first did.

use std::sync::Arc;

use super::ClientHandle;
use crate::account::Account;
use crate::deliver::trace::MsgTracer;
use crate::deliver::{Message, Publisher};
use crate::stats::ServerStats;

pub(super) struct LazyPublisher {
    inner: Option<Box<Publisher>>,
    cid: u64,
    stats: Arc<ServerStats>,
    echo: bool,
    no_responders: bool,
    origin: Option<(Arc<Account>, Arc<ClientHandle>)>,
    server: Option<Arc<str>>,
}

impl LazyPublisher {
    pub(super) fn new(cid: u64, stats: Arc<ServerStats>) -> Self {
        Self {
            inner: None,
            cid,
            stats,
            // `Publisher::new`'s defaults, for a client that has not sent CONNECT.
            echo: true,
            no_responders: false,
            origin: None,
            server: None,
        }
    }

    /// See [`Publisher::set_server_name`].
    pub(super) fn with_server_name(mut self, name: Arc<str>) -> Self {
        if let Some(p) = &mut self.inner {
            p.set_server_name(Arc::clone(&name));
        }
        self.server = Some(name);
        self
    }

    /// See [`Publisher::set_origin`].
    pub(super) fn set_origin(&mut self, account: Arc<Account>, client: Arc<ClientHandle>) {
        if let Some(p) = &mut self.inner {
            p.set_origin(Arc::clone(&account), Arc::clone(&client));
        }
        self.origin = Some((account, client));
    }

    /// See [`Publisher::set_flags`].
    pub(super) fn set_flags(&mut self, echo: bool, no_responders: bool) {
        self.echo = echo;
        self.no_responders = no_responders;
        if let Some(p) = &mut self.inner {
            p.set_flags(echo, no_responders);
        }
    }

    /// Routes one traced message (see [`Publisher::publish_traced`]).
    pub(super) fn publish_traced(
        &mut self,
        account: &Arc<Account>,
        msg: &Message<'_>,
        tracer: Box<MsgTracer>,
    ) -> Option<Box<MsgTracer>> {
        self.publisher().publish_traced(account, msg, tracer).1
    }

    /// Routes one message (see [`Publisher::publish`]), making the publisher first if needed.
    pub(super) fn publish(&mut self, account: &Arc<Account>, msg: &Message<'_>) -> usize {
        self.publisher().publish(account, msg)
    }

    #[inline]
    fn publisher(&mut self) -> &mut Publisher {
        let Self {
            inner,
            cid,
            stats,
            echo,
            no_responders,
            origin,
            server,
        } = self;
        inner.get_or_insert_with(|| {
            let mut p = Publisher::new(*cid, Arc::clone(stats));
            p.set_flags(*echo, *no_responders);
            if let Some(name) = server {
                p.set_server_name(Arc::clone(name));
            }
            if let Some((account, client)) = origin {
                p.set_origin(Arc::clone(account), Arc::clone(client));
            }
            Box::new(p)
        })
    }

    /// See [`Publisher::flush`]; nothing to do before the first publish.
    pub(super) fn flush(&mut self) {
        if let Some(p) = &mut self.inner {
            p.flush();
        }
    }

    /// See [`Publisher::must_stall`].
    pub(super) fn must_stall(&self) -> bool {
        self.inner.as_ref().is_some_and(|p| p.must_stall())
    }

    /// See [`Publisher::stall_if_needed`].
    pub(super) async fn stall_if_needed(&mut self) {
        if let Some(p) = &mut self.inner {
            p.stall_if_needed().await;
        }
    }

    /// Drops the publisher (its cache and buffers) of a connection that has gone quiet. Only
    /// between read batches, after [`flush`](Self::flush): nothing is pending then.
    pub(super) fn release_idle(&mut self) {
        if self.inner.as_ref().is_some_and(|p| !p.must_stall()) {
            self.inner = None;
        }
    }

    /// Whether a publisher is currently held (for tests).
    #[cfg(test)]
    pub(super) fn is_held(&self) -> bool {
        self.inner.is_some()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn client_publisher_made_at_first_publish_and_dropped_when_idle() {
        let account = Arc::new(Account::new(crate::account::GLOBAL_ACCOUNT, true));
        let mut publisher = LazyPublisher::new(1, Arc::new(ServerStats::default()));
        publisher.set_flags(false, true);
        publisher.flush();
        assert!(!publisher.is_held() && !publisher.must_stall());
        let msg = Message {
            subject: b"a",
            reply: None,
            headers: None,
            payload: b"x",
        };
        assert_eq!(publisher.publish(&account, &msg), 0);
        assert!(publisher.is_held());
        publisher.flush();
        publisher.release_idle();
        assert!(!publisher.is_held());
        assert_eq!(publisher.publish(&account, &msg), 0);
        assert!(publisher.is_held());
    }
}
