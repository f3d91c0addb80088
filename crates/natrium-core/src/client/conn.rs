//! The read side of a client connection: reads into a buffer the connection owns, parses ops
//! with `nats-proto`, and dispatches them. Also runs the connection's timers (first CONNECT
//! deadline, PINGs for staleness) and, at the end, the cleanup of its subscriptions.

use std::pin::pin;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Duration;

use natrium_auth::AuthConfig;
use natrium_gofmt::{go_duration, go_quote_bytes as go_quote};
use nats_proto::{parse_client_op, ClientOp, Parsed, ParserLimits, ProtoError, WireError};
use tokio::task::JoinHandle;
use tokio::time::Instant;

use super::authn::{auth_scope, authenticate, log_refusal, Admitted, AuthScope};
use super::connect::ConnectFlags;
use super::io::Inbound;
use super::lazy_pub::LazyPublisher;
use super::lifecycle::finish;
use super::perms::ConnPerms;
use super::protolog::{log_protocol_error, op_summary};
use super::readbuf::ReadBuf;
use super::stored_auth::StoredAuth;
use super::writer::WriterFailure;
use super::{ClientHandle, ClientMeta, ClosedReason};
use crate::account::Account;
use crate::config::CoreConfig;
use crate::deliver::Message;
use crate::limits::{FIRST_PING_INTERVAL, RTT_MEASUREMENT_INTERVAL};
use crate::server::Server;
use crate::ws::WsSession;
use nats_proto::ConnectOptions;

#[path = "deadline.rs"]
mod deadline;
#[path = "login.rs"]
mod login;
#[path = "logtag.rs"]
mod logtag;
#[path = "mapped_pub.rs"]
mod mapped_pub;
#[path = "subs.rs"]
mod subs;
#[path = "trace_pub.rs"]
mod trace_pub;

const PING: &[u8] = b"PING\r\n";
const PONG: &[u8] = b"PONG\r\n";
const OK: &[u8] = b"+OK\r\n";

/// What handling one op asks the read loop to do next.
enum Next {
    Continue,
    Close(ClosedReason),
}

struct Conn {
    server: Server,
    handle: Arc<ClientHandle>,
    account: Arc<Account>,
    limits: ParserLimits,
    /// The settings this connection runs with, refreshed when a reload bumps the epoch.
    config: Arc<CoreConfig>,
    config_epoch: u64,
    /// What CONNECT said that the read loop consults (Go's defaults before CONNECT).
    opts: ConnectFlags,
    connected: bool,
    /// Whether the authentication timeout runs until CONNECT: only when authentication is
    /// required, as Go arms it.
    auth_timer: bool,
    /// The nonce this client's INFO carried for nkey users to sign; empty when none was sent.
    nonce: String,
    /// The user's permissions (free when unrestricted).
    perms: ConnPerms,
    /// Made at the first PUB, dropped again when the connection goes quiet.
    publisher: LazyPublisher,
    ping: PingState,
    /// Set by the ops that count as client activity for the PING timer (PUB, SUB, UNSUB,
    /// PING), as in Go; folded into `ping.last_in` once per read batch.
    active: bool,
    /// Set by messages and subscription changes: monitoring's `last_activity`, once per batch.
    touched: bool,
    /// Set by CONNECT: the PING timer restarts with the short first interval.
    restart_pings: bool,
    trace: bool,
    /// `ping_interval`, or the websocket block's own.
    ping_interval: Duration,
    /// Set for a connection that arrived through the websocket listener.
    ws: Option<Box<WsSession>>,
    /// Most subscriptions (`None`: unlimited): the server's, or the account's or user's when
    /// lower. Zero is a real limit, as in Go.
    max_subs: Option<usize>,
    /// The user JWT's payload and subscription limits (-1: none), kept for [`Conn::apply_limits`].
    user_limits: (i64, i64),
    /// Whether the first PING after CONNECT has been answered (see
    /// `send_pong_with_connect_info`).
    pong_sent: bool,
    /// When the user's JWT expires: the connection is then closed, as Go closes it.
    auth_expires: Option<Instant>,
    /// When a client admitted at its subscription limit (zero) is closed; see
    /// `subs_at_limit_on_login`.
    close_at_sub_limit: Option<Instant>,
    /// Reused for the subject a mapping rewrites a publish to.
    mapped_subject: Vec<u8>,
}

/// The PING timer's view of the connection. Semantics are Go's: the timer runs at
/// `ping_interval` from accept; CONNECT restarts it at `min(ping_interval, 2 s)` plus up to a
/// fifth of that at random. A tick sends a PING unless the client sent PUB/SUB/UNSUB/PING
/// within the last `ping_interval` and the round trip was measured less than an hour ago (so
/// the first tick after CONNECT always sends one). A PING that would be the `ping_max + 1`th
/// unanswered closes the connection as stale; only a PONG resets the count.
#[derive(Default)]
struct PingState {
    out: u32,
    /// When the last PING went out.
    rtt_start: Option<Instant>,
    /// Whether a round trip has been estimated (at CONNECT) or measured (at PONG).
    rtt_known: bool,
    /// The last read batch with client activity.
    last_in: Option<Instant>,
}

/// Runs a registered connection whose writer is started: the read loop until the connection
/// ends, then the writer's last word and the cleanup.
pub(crate) async fn serve<R: Inbound>(
    server: Server,
    handle: Arc<ClientHandle>,
    nonce: String,
    read_half: R,
    writer: JoinHandle<Option<WriterFailure>>,
    ws: Option<Box<WsSession>>,
) {
    let shared = Arc::clone(&server.shared);
    let config_epoch = server.config_epoch();
    let config = server.config();
    let ping_interval = ws
        .as_ref()
        .and_then(|w| w.config.ping_interval)
        .unwrap_or(config.ping_interval);
    let mut conn = Conn {
        limits: ParserLimits {
            max_control_line: config.max_control_line,
            max_payload: config.max_payload,
        },
        config: Arc::clone(&config),
        config_epoch,
        account: Arc::clone(&shared.global),
        opts: ConnectFlags::default(),
        nonce,
        perms: ConnPerms::default(),
        connected: false,
        auth_timer: false,
        publisher: LazyPublisher::new(handle.cid, Arc::clone(&shared.stats))
            .with_server_name(Arc::clone(&shared.server_name)),
        ping: PingState::default(),
        active: false,
        touched: false,
        restart_pings: false,
        trace: config.trace,
        ping_interval,
        ws,
        max_subs: (config.max_subscriptions > 0).then_some(config.max_subscriptions),
        user_limits: (-1, -1),
        pong_sent: false,
        auth_expires: None,
        close_at_sub_limit: None,
        mapped_subject: Vec::new(),
        handle: Arc::clone(&handle),
        server: server.clone(),
    };
    let reason = conn.read_loop(read_half).await;
    if let Some(reason) = reason {
        handle.close(reason);
    }
    match writer.await {
        Ok(Some(WriterFailure::WriteDeadline { attempted })) => {
            // Counted even when the connection was already closing as a slow consumer for
            // MaxPending and this was its last write, as Go counts it.
            handle.close(ClosedReason::SlowConsumerWriteDeadline);
            shared.stats.slow_consumers.fetch_add(1, Ordering::Relaxed);
            shared
                .stats
                .slow_consumers_clients
                .fetch_add(1, Ordering::Relaxed);
            // Go names the buffers it tried to write; ours is always one contiguous buffer.
            tracing::info!(
                "{} - Slow Consumer Detected: WriteDeadline of {} exceeded with 1 chunks of \
                 {attempted} total bytes.",
                handle.log_prefix(),
                go_duration(config.write_deadline)
            );
        }
        Ok(Some(WriterFailure::WriteError)) => {
            handle.close(ClosedReason::WriteError);
        }
        Ok(None) | Err(_) => {}
    }
    if handle.closed_reason() == Some(ClosedReason::SlowConsumerPendingBytes) {
        count_slow_consumer(&shared.stats, handle.account().as_deref());
    }
    server.record_closed(&handle);
    conn.remove_all_subscriptions();
    if let Some(account) = handle.account() {
        account.remove_client();
    }
    finish(&server, &handle);
}

/// Adds a client cut at `max_pending` to the server's and its account's counters.
fn count_slow_consumer(stats: &crate::stats::ServerStats, account: Option<&Account>) {
    stats.slow_consumers.fetch_add(1, Ordering::Relaxed);
    stats.slow_consumers_clients.fetch_add(1, Ordering::Relaxed);
    if let Some(account) = account {
        account.stats.slow_consumers.fetch_add(1, Ordering::Relaxed);
    }
}

impl Conn {
    async fn read_loop<R: Inbound>(&mut self, mut socket: R) -> Option<ClosedReason> {
        let auth_timeout = self
            .ws
            .as_ref()
            .and_then(|w| w.config.auth_timeout)
            .unwrap_or(self.config.auth_timeout);
        self.auth_timer = self.auth().required();
        let mut rb = ReadBuf::new();
        let mut ping_timer = pin!(tokio::time::sleep(self.ping_interval));
        // One timer for every deadline that closes the connection (each timer is memory every
        // idle connection holds): before CONNECT the authentication timeout; after it the
        // earlier of the user's JWT expiry and the close of a client admitted at its
        // subscription limit, when either applies.
        let mut deadline = pin!(tokio::time::sleep(auth_timeout));
        let closing = self.handle.closing.clone();
        // Whether anything was read since the last PING tick; a quiet connection gives its
        // read buffer back.
        let mut read_since_tick = false;
        loop {
            let read = tokio::select! {
                biased;
                () = closing.cancelled() => return None,
                () = &mut deadline, if self.deadline_armed() => {
                    return Some(self.deadline_passed(deadline.deadline()));
                }
                () = &mut ping_timer => {
                    self.refresh_config();
                    let now = Instant::now();
                    // A reloaded ping_interval applies from the next tick, as in Go.
                    ping_timer.as_mut().reset(now + self.ping_interval);
                    if !std::mem::take(&mut read_since_tick) {
                        rb.idle();
                        self.publisher.release_idle();
                        if R::WAITS_WITHOUT_BUFFER {
                            rb.release_if_quiet();
                        }
                    }
                    if let Next::Close(reason) = self.ping_tick(now) {
                        return Some(reason);
                    }
                    continue;
                }
                read = rb.fill(&mut socket) => read,
            };
            match read {
                Ok(n) => rb.note_read(n),
                Err(reason) => return Some(reason),
            }
            read_since_tick = true;
            self.refresh_config();
            let next = self.process(&mut rb);
            if R::WAITS_WITHOUT_BUFFER {
                rb.release_if_quiet();
            }
            if std::mem::take(&mut self.active) {
                self.ping.last_in = Some(Instant::now());
            }
            if std::mem::take(&mut self.touched) {
                self.handle.activity.touch();
            }
            if let Some(at) = self.after_connect_deadline().filter(|_| self.restart_pings) {
                deadline.as_mut().reset(at);
            }
            if std::mem::take(&mut self.restart_pings) {
                ping_timer
                    .as_mut()
                    .reset(Instant::now() + first_ping_delay(self.ping_interval));
            }
            self.publisher.flush();
            self.handle.out.flush();
            if let Next::Close(reason) = next {
                return Some(reason);
            }
            if self.publisher.must_stall() {
                // Boxed: the wait (a timer and a wake-up registration) would otherwise add its
                // size to every connection's task, for a state a busy publisher rarely enters.
                Box::pin(self.publisher.stall_if_needed()).await;
            }
        }
    }

    /// Parses and handles every complete op in the buffer, leaving a partial one in place.
    fn process(&mut self, rb: &mut ReadBuf) -> Next {
        let pending = rb.pending();
        let mut pos = 0;
        let mut next = Next::Continue;
        let mut frame_needs = 0;
        while let Some(rest) = pending.get(pos..).filter(|r| !r.is_empty()) {
            match parse_client_op(rest, &self.limits) {
                Ok(Parsed::Op { op, consumed }) => {
                    pos += consumed;
                    if let Next::Close(reason) = self.handle_op(op) {
                        next = Next::Close(reason);
                        break;
                    }
                }
                Ok(Parsed::Incomplete { min_total }) => {
                    frame_needs = min_total;
                    break;
                }
                Err(err) => {
                    next = Next::Close(self.protocol_error(&err, rest));
                    break;
                }
            }
        }
        rb.consume(pos);
        rb.need_frame(frame_needs);
        next
    }

    fn protocol_error(&mut self, err: &ProtoError, rest: &[u8]) -> ClosedReason {
        if matches!(err, ProtoError::PayloadTooLarge { .. }) {
            self.trace_refused_payload(rest);
        }
        log_protocol_error(&self.handle.log_prefix(), err, rest);
        let (wire, reason) = match err {
            ProtoError::PayloadTooLarge { .. } => (
                Some(WireError::MaxPayloadViolation),
                ClosedReason::MaxPayloadExceeded,
            ),
            ProtoError::ControlLineTooLong => (
                Some(WireError::MaxControlLineExceeded),
                ClosedReason::MaxControlLineExceeded,
            ),
            other => (other.wire_error(), ClosedReason::ProtocolViolation),
        };
        if let Some(wire) = wire {
            self.handle.send_err(&wire);
        }
        if self.ws.is_some() {
            // Go's websocket read path logs the limit error its parser returned once more.
            let limit = match err {
                ProtoError::PayloadTooLarge { .. } => Some("maximum payload exceeded"),
                ProtoError::ControlLineTooLong => Some("maximum control line exceeded"),
                _ => None,
            };
            if let Some(text) = limit {
                tracing::error!("{} - read error: {text}", self.handle.log_prefix());
            }
        }
        reason
    }

    /// Takes up what a reload changed: the settings (limits, trace, PING timing) when the
    /// server's epoch moved, the permissions when the reload replaced them. One relaxed load
    /// each per read batch; nothing per message.
    fn refresh_config(&mut self) {
        let epoch = self.server.config_epoch();
        if epoch != self.config_epoch {
            self.config_epoch = epoch;
            self.config = self.server.config();
            self.limits.max_control_line = self.config.max_control_line;
            self.apply_limits();
            self.trace = self.config.trace;
            self.ping_interval = self
                .ws
                .as_ref()
                .and_then(|w| w.config.ping_interval)
                .unwrap_or(self.config.ping_interval);
        }
        self.refresh_permissions();
    }

    fn refresh_permissions(&mut self) {
        // A plain load first: the common case writes nothing to the shared cache line.
        let changed = &self.handle.perms_changed;
        if changed.load(Ordering::Acquire) && changed.swap(false, Ordering::AcqRel) {
            let perms = self
                .handle
                .auth
                .lock()
                .as_ref()
                .and_then(|a| a.perms.clone());
            self.perms.install(perms, &self.handle);
        }
    }

    fn ping_tick(&mut self, now: Instant) -> Next {
        let config = Arc::clone(&self.config);
        let ping_interval = self.ping_interval;
        tracing::debug!("{} - Client Ping Timer", self.handle.log_prefix());
        let need_rtt = !self.ping.rtt_known
            || self
                .ping
                .rtt_start
                .is_none_or(|sent| now.duration_since(sent) > RTT_MEASUREMENT_INTERVAL);
        if let Some(last) = self.ping.last_in.filter(|_| !need_rtt) {
            let quiet = now.duration_since(last);
            if quiet < ping_interval {
                tracing::debug!(
                    "{} - Delaying PING due to remote client data or ping {} ago",
                    self.handle.log_prefix(),
                    go_duration(round_to_second(quiet))
                );
                return Next::Continue;
            }
        }
        if self.ping.out + 1 > config.ping_max {
            self.server
                .shared
                .stats
                .stale_connections
                .fetch_add(1, Ordering::Relaxed);
            tracing::debug!(
                "{} - Stale Client Connection - Closing",
                self.handle.log_prefix()
            );
            self.handle.send_err(&WireError::StaleConnection);
            return Next::Close(ClosedReason::StaleConnection);
        }
        self.ping.out += 1;
        self.ping.rtt_start = Some(now);
        self.handle.send_proto(PING);
        self.handle.out.flush();
        Next::Continue
    }

    fn trace_op(&self, op: &ClientOp<'_>) {
        if self.trace {
            tracing::trace!("{} - <<- [{}]", self.handle.log_prefix(), op_summary(op));
        }
    }

    fn handle_op(&mut self, op: ClientOp<'_>) -> Next {
        self.trace_op(&op);
        if !self.connected && !matches!(op, ClientOp::Connect(_)) && self.auth().required() {
            // Go treats any op before CONNECT as a failed authentication when auth is on.
            return self.auth_violation(None);
        }
        match op {
            ClientOp::Connect(json) => {
                // Go's first round-trip estimate: accept to CONNECT.
                let since = chrono::Utc::now() - self.handle.started;
                self.handle
                    .activity
                    .set_rtt(since.to_std().unwrap_or_default());
                self.handle.activity.touch();
                return self.on_connect(json);
            }
            ClientOp::Pub(publish) => {
                self.touched = true;
                return self.on_pub(&Message {
                    subject: publish.subject,
                    reply: publish.reply,
                    headers: publish.headers,
                    payload: publish.payload,
                });
            }
            ClientOp::Sub {
                subject,
                queue,
                sid,
            } => {
                self.active = true;
                self.touched = true;
                self.on_sub(subject, queue, sid);
            }
            ClientOp::Unsub { sid, max_msgs } => {
                self.active = true;
                self.touched = true;
                self.on_unsub(sid, max_msgs);
            }
            ClientOp::Ping => {
                self.active = true;
                if self.connected && !std::mem::replace(&mut self.pong_sent, true) {
                    self.send_pong_with_connect_info();
                } else {
                    self.handle.send_proto(PONG);
                }
            }
            ClientOp::Pong => {
                if let Some(start) = self.ping.rtt_start {
                    self.handle.activity.set_rtt(start.elapsed());
                }
                self.ping.out = 0;
                self.ping.rtt_known = true;
            }
            ClientOp::Info(_) | ClientOp::Ok => {}
            ClientOp::Err(text) => {
                tracing::error!(
                    "{} - Client Error {}",
                    self.handle.log_prefix(),
                    String::from_utf8_lossy(text)
                );
                return Next::Close(ClosedReason::ParseError);
            }
        }
        Next::Continue
    }

    /// The authentication this connection is checked against (see `authn::auth_scope`).
    fn auth_scope(&self) -> AuthScope<'_> {
        auth_scope(&self.config, self.ws.is_some())
    }

    fn auth(&self) -> &AuthConfig {
        self.auth_scope().auth
    }

    fn ok(&self) {
        if self.opts.verbose {
            self.handle.send_proto(OK);
        }
    }

    /// The options a repeated CONNECT is decoded over: those of the last one, as stored.
    fn connect_in_force(&self) -> ConnectOptions {
        let mut opts = self
            .handle
            .auth
            .lock()
            .as_ref()
            .map(|stored| stored.opts.clone())
            .unwrap_or_default();
        let meta = self.handle.meta.lock();
        opts.name.clone_from(&meta.name);
        opts.lang.clone_from(&meta.lang);
        opts.version.clone_from(&meta.version);
        opts
    }

    fn on_connect(&mut self, json: &[u8]) -> Next {
        let base = if self.connected {
            self.connect_in_force()
        } else {
            ConnectOptions::default()
        };
        let mut opts = match base.merge(json) {
            Ok(opts) => opts,
            Err(err) => {
                // Go logs its JSON decoder's message; serde's wording differs.
                tracing::error!("{} - {err}", self.handle.log_prefix());
                return Next::Close(ClosedReason::ProtocolViolation);
            }
        };
        if let Some(ws) = &self.ws {
            ws.fill_credentials(&mut opts);
        }
        if self.connected {
            // Go drops every subscription on a repeated CONNECT (same user or not): nothing
            // subscribed under one login carries over into the next.
            self.remove_all_subscriptions();
        }
        if !(0..=1).contains(&opts.protocol) {
            self.handle.send_err(&WireError::InvalidClientProtocol);
            return Next::Close(ClosedReason::ProtocolViolation);
        }
        if self.config.no_header_support {
            opts.headers = false;
        }
        if opts.no_responders && !opts.headers {
            self.handle
                .send_err(&WireError::NoRespondersRequiresHeaders);
            return Next::Close(ClosedReason::ProtocolViolation);
        }
        let description = logtag::description(&opts);
        // The client's description goes to `ClientMeta` only: the stored authentication
        // needs the credentials, not a second copy of these.
        let name = std::mem::take(&mut opts.name);
        let lang = std::mem::take(&mut opts.lang);
        let version = std::mem::take(&mut opts.version);
        let meta = |auth_user| ClientMeta {
            protocol: opts.protocol,
            name: name.clone(),
            lang: lang.clone(),
            version: version.clone(),
            auth_user,
        };
        // Checked against the settings in force now; a reload that lands meanwhile could
        // miss this client (not stored yet), so check again until the settings held still.
        loop {
            let epoch = self.server.config_epoch();
            self.refresh_config();
            match authenticate(self.auth_scope(), &self.handle, &opts, &self.nonce) {
                Ok(Admitted {
                    perms,
                    auth_user,
                    account,
                    jwt,
                }) => {
                    let first = !self.connected;
                    let jwt_user = jwt.is_some();
                    let tag_user = first.then(|| auth_user.clone());
                    *self.handle.meta.lock() = meta(auth_user);
                    let stored =
                        StoredAuth::admitted(&opts, &self.nonce, self.auth(), perms.clone());
                    *self.handle.auth.lock() = Some(stored);
                    self.handle.perms_changed.store(false, Ordering::Release);
                    // Idempotent: a repeated pass keeps the account already joined.
                    if let Next::Close(reason) = self.log_into(account.as_deref()) {
                        return Next::Close(reason);
                    }
                    if let Some(grant) = jwt {
                        self.apply_jwt(grant);
                    }
                    if let Some(user) = tag_user {
                        let account = self.account.log_label();
                        let tag = logtag::log_tag(&description, &opts, &user, jwt_user, &account);
                        self.handle.set_log_tag(tag);
                    }
                    self.perms.install(perms, &self.handle);
                }
                Err(refused) => {
                    *self.handle.meta.lock() = meta(refused.auth_user);
                    return self.auth_violation(refused.who.as_deref());
                }
            }
            if self.server.config_epoch() == epoch {
                break;
            }
        }
        self.publisher.set_flags(opts.echo, opts.no_responders);
        self.handle.set_accepts_headers(opts.headers);
        self.opts = ConnectFlags::of(&opts);
        if !self.connected {
            self.server.client_connected(&self.handle);
        }
        if !self.connected && self.subs_at_limit_on_login() {
            // After this batch's replies (PONG) have gone out: the error, then the close.
            self.close_at_sub_limit = Some(Instant::now());
        }
        self.connected = true;
        // CONNECT gives a first estimate of the round trip and restarts the PING timer.
        self.ping.rtt_known = true;
        self.restart_pings = true;
        self.ok();
        Next::Continue
    }

    fn auth_violation(&self, who: Option<&str>) -> Next {
        log_refusal(&self.handle, who);
        self.handle.send_err(&WireError::AuthorizationViolation);
        Next::Close(ClosedReason::AuthenticationViolation)
    }

    fn on_pub(&mut self, msg: &Message<'_>) -> Next {
        self.active = true;
        if msg.headers.is_some() && !self.opts.headers {
            // Go closes without an -ERR when a client that did not ask for headers sends HPUB.
            tracing::error!(
                "{} - message headers not supported",
                self.handle.log_prefix()
            );
            return Next::Close(ClosedReason::ProtocolViolation);
        }
        // An HPUB with an empty header block is delivered as a plain MSG, as Go does.
        let msg = &Message {
            headers: msg.headers.filter(|h| !h.is_empty()),
            ..*msg
        };
        if self.opts.pedantic && !nats_subject::is_valid_publish_subject(msg.subject) {
            // Go's pedantic check only warns: the message still goes through the permission
            // check, the `+OK` and delivery (a wildcard subject reaches wildcard subscribers).
            // Kept for drop-in behaviour; see docs/client-protocol.md.
            self.handle.send_err(&WireError::InvalidPublishSubject);
        }
        if self.account.has_mappings() {
            return self.on_mapped_pub(msg);
        }
        self.route_pub(msg, None)
    }

    /// A publish after its subject mapping (`mapped_from`: the subject as published, when a
    /// mapping changed it): trace, permission, delivery.
    fn route_pub(&mut self, msg: &Message<'_>, mapped_from: Option<&[u8]>) -> Next {
        if let Some(h) = msg.headers {
            if crate::deliver::trace::may_trace(h, self.account.traces_parent()) {
                return self.on_traced_pub(msg, mapped_from);
            }
        }
        if !self.perms.can_publish(msg.subject, &self.handle) {
            self.publish_violation(msg.subject);
            return Next::Continue;
        }
        // Go acknowledges a verbose publish before delivering it.
        self.ok();
        self.publisher.publish(&self.account, msg);
        self.handle.add_in(
            1,
            (msg.headers.map_or(0, <[u8]>::len) + msg.payload.len()) as u64,
        );
        Next::Continue
    }

    fn publish_violation(&self, subject: &[u8]) {
        tracing::error!(
            "{} - Publish Violation - Subject {}",
            self.handle.log_prefix(),
            go_quote(subject)
        );
        self.handle
            .send_err(&WireError::PublishViolation { subject });
    }
}

/// When the PING timer fires first after CONNECT: `min(ping_interval, 2 s)` plus a random delay
/// of up to a fifth of that, so that clients connecting together do not get PINGs together.
fn first_ping_delay(ping_interval: Duration) -> Duration {
    let base = ping_interval.min(FIRST_PING_INTERVAL);
    let fifth = u64::try_from((base / 5).as_nanos()).unwrap_or(u64::MAX);
    base + Duration::from_nanos(if fifth > 0 { fastrand::u64(..fifth) } else { 0 })
}

/// Rounds to the nearest second, halves away from zero (Go's `Duration.Round(time.Second)`).
fn round_to_second(d: Duration) -> Duration {
    Duration::from_secs(d.as_secs() + u64::from(d.subsec_nanos() >= 500_000_000))
}

#[cfg(test)]
mod tests {
    /// See `client_per_connection_structs_stay_small`: the read task's state is part of every
    /// connection's task.
    #[test]
    fn client_conn_state_stays_small() {
        assert!(std::mem::size_of::<super::Conn>() <= 384);
    }
}
