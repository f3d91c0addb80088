//! The read side of a client connection: reads into a buffer the connection owns, parses ops
//! with `nats-proto`, and dispatches them. Also runs the connection's timers (first CONNECT
//! deadline, PINGs for staleness) and, at the end, the cleanup of its subscriptions.

use std::net::SocketAddr;
use std::pin::pin;
use std::sync::atomic::Ordering;
use std::sync::Arc;

use bytes::{Buf, BytesMut};
use nats_proto::{parse_client_op, ClientOp, Parsed, ParserLimits, ProtoError, WireError};
use tokio::io::AsyncReadExt;
use tokio::net::tcp::OwnedReadHalf;
use tokio::net::TcpStream;
use tokio::time::{Instant, Interval};

use super::connect::ConnectOptions;
use super::writer::run_writer;
use super::{ClientHandle, ClientMeta, ClosedReason, Subscription};
use crate::account::{Account, SubRef};
use crate::deliver::{Message, Publisher};
use crate::limits::{
    FIRST_PING_INTERVAL, READ_BUFFER_MAX_BYTES, READ_BUFFER_SHRINK_AFTER_SHORT_READS,
    READ_BUFFER_START_BYTES,
};
use crate::server::Server;

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
    opts: ConnectOptions,
    connected: bool,
    publisher: Publisher,
    pings_out: u32,
    /// Whether anything arrived since the last PING tick (a busy client needs no PING).
    activity: bool,
    short_reads: u32,
    trace: bool,
}

/// Runs one client connection to completion.
pub async fn run_client(server: Server, stream: TcpStream, addr: SocketAddr, cid: u64) {
    let shared = Arc::clone(&server.shared);
    let config = &shared.config;
    let closing = shared.shutdown.child_token();
    let handle = Arc::new(ClientHandle::new(cid, addr, config.max_pending, closing));
    let (read_half, write_half) = stream.into_split();
    let info = server.client_info(cid, addr.ip().to_string()).to_frame();
    handle.out.enqueue_proto(&info);
    handle.out.flush();
    let writer = tokio::spawn(run_writer(
        Arc::clone(&handle),
        write_half,
        config.write_deadline,
    ));
    if !server.register(&handle) {
        tracing::error!("{} - Maximum connections exceeded", handle.log_prefix());
        send_err(&handle, &WireError::MaxConnectionsExceeded);
        handle.close(ClosedReason::MaxConnectionsExceeded);
        let _ = writer.await;
        return;
    }
    tracing::debug!("{} - Client connection created", handle.log_prefix());
    let mut conn = Conn {
        limits: ParserLimits {
            max_control_line: config.max_control_line,
            max_payload: config.max_payload,
        },
        account: Arc::clone(&shared.global),
        opts: ConnectOptions::default(),
        connected: false,
        publisher: Publisher::new(cid, Arc::clone(&shared.stats)),
        pings_out: 0,
        activity: false,
        short_reads: 0,
        trace: config.trace,
        handle: Arc::clone(&handle),
        server: server.clone(),
    };
    let reason = conn.read_loop(read_half).await;
    if let Some(reason) = reason {
        handle.close(reason);
    }
    if let Ok(Some(reason)) = writer.await {
        handle.close(reason);
        if reason == ClosedReason::SlowConsumerWriteDeadline {
            shared.stats.slow_consumers.fetch_add(1, Ordering::Relaxed);
            shared
                .stats
                .slow_consumers_clients
                .fetch_add(1, Ordering::Relaxed);
            tracing::info!(
                "{} - Slow Consumer Detected: WriteDeadline of {:?} exceeded",
                handle.log_prefix(),
                config.write_deadline
            );
        }
    }
    conn.remove_all_subscriptions();
    server.unregister(cid);
    let why = handle.closed_reason().unwrap_or(ClosedReason::ClientClosed);
    tracing::debug!(
        "{} - Client connection closed: {}",
        handle.log_prefix(),
        why.as_str()
    );
}

fn send_err(handle: &ClientHandle, err: &WireError) {
    let mut line = Vec::with_capacity(64);
    err.write_frame(&mut line);
    handle.out.enqueue_proto(&line);
    handle.out.flush();
}

impl Conn {
    async fn read_loop(&mut self, mut socket: OwnedReadHalf) -> Option<ClosedReason> {
        let config = &self.server.shared.config;
        let mut buf = BytesMut::with_capacity(READ_BUFFER_START_BYTES);
        let first_ping = FIRST_PING_INTERVAL.min(config.ping_interval);
        let mut pings: Interval =
            tokio::time::interval_at(Instant::now() + first_ping, config.ping_interval);
        pings.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        let mut connect_deadline = pin!(tokio::time::sleep(config.auth_timeout));
        let closing = self.handle.closing.clone();
        loop {
            if buf.len() == buf.capacity() {
                let grow = buf
                    .capacity()
                    .clamp(READ_BUFFER_START_BYTES, READ_BUFFER_MAX_BYTES);
                buf.reserve(grow);
            }
            let read = tokio::select! {
                biased;
                () = closing.cancelled() => return None,
                () = &mut connect_deadline, if !self.connected => {
                    tracing::error!("{} - Authentication Timeout", self.handle.log_prefix());
                    send_err(&self.handle, &WireError::AuthenticationTimeout);
                    return Some(ClosedReason::AuthenticationTimeout);
                }
                _ = pings.tick() => {
                    if let Next::Close(reason) = self.ping_tick() {
                        return Some(reason);
                    }
                    continue;
                }
                read = socket.read_buf(&mut buf) => read,
            };
            match read {
                Ok(0) => return Some(ClosedReason::ClientClosed),
                Ok(n) => self.note_read(n, &mut buf),
                Err(_) => return Some(ClosedReason::ReadError),
            }
            self.activity = true;
            let next = self.process(&mut buf);
            self.publisher.flush();
            self.handle.out.flush();
            if let Next::Close(reason) = next {
                return Some(reason);
            }
            self.publisher.stall_if_needed().await;
        }
    }

    /// Grows or shrinks the read buffer the way the traffic suggests.
    fn note_read(&mut self, n: usize, buf: &mut BytesMut) {
        if n < buf.capacity() / 2 {
            self.short_reads += 1;
        } else {
            self.short_reads = 0;
        }
        // Trade a big idle buffer for a small one once traffic has calmed down.
        if buf.capacity() > READ_BUFFER_START_BYTES
            && self.short_reads > READ_BUFFER_SHRINK_AFTER_SHORT_READS
            && buf.len() == n
            && n <= READ_BUFFER_START_BYTES
        {
            let mut smaller =
                BytesMut::with_capacity((buf.capacity() / 2).max(READ_BUFFER_START_BYTES));
            smaller.extend_from_slice(buf);
            *buf = smaller;
            self.short_reads = 0;
        }
    }

    /// Parses and handles every complete op in `buf`, leaving a partial one in place.
    fn process(&mut self, buf: &mut BytesMut) -> Next {
        let mut pos = 0;
        let mut next = Next::Continue;
        while pos < buf.len() {
            let Some(rest) = buf.get(pos..) else { break };
            match parse_client_op(rest, &self.limits) {
                Ok(Parsed::Op { op, consumed }) => {
                    pos += consumed;
                    if let Next::Close(reason) = self.handle_op(op) {
                        next = Next::Close(reason);
                        break;
                    }
                }
                Ok(Parsed::Incomplete { min_total }) => {
                    if min_total > rest.len() {
                        buf.reserve(min_total - rest.len() + pos);
                    }
                    break;
                }
                Err(err) => {
                    next = Next::Close(self.protocol_error(&err));
                    break;
                }
            }
        }
        buf.advance(pos);
        next
    }

    fn protocol_error(&self, err: &ProtoError) -> ClosedReason {
        tracing::error!("{} - Client parser ERROR: {err}", self.handle.log_prefix());
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
            send_err(&self.handle, &wire);
        }
        reason
    }

    fn ping_tick(&mut self) -> Next {
        if !self.connected {
            return Next::Continue;
        }
        if self.activity && self.pings_out == 0 {
            self.activity = false;
            return Next::Continue;
        }
        self.activity = false;
        if self.pings_out + 1 > self.server.shared.config.ping_max {
            self.server
                .shared
                .stats
                .stale_connections
                .fetch_add(1, Ordering::Relaxed);
            tracing::debug!(
                "{} - Stale Client Connection - Closing",
                self.handle.log_prefix()
            );
            send_err(&self.handle, &WireError::StaleConnection);
            return Next::Close(ClosedReason::StaleConnection);
        }
        self.pings_out += 1;
        self.handle.out.enqueue_proto(PING);
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
        match op {
            ClientOp::Connect(json) => return self.on_connect(json),
            ClientOp::Pub(publish) => {
                return self.on_pub(&Message {
                    subject: publish.subject,
                    reply: publish.reply,
                    headers: publish.headers,
                    payload: publish.payload,
                })
            }
            ClientOp::Sub {
                subject,
                queue,
                sid,
            } => self.on_sub(subject, queue, sid),
            ClientOp::Unsub { sid, max_msgs } => self.on_unsub(sid, max_msgs),
            ClientOp::Ping => {
                self.handle.out.enqueue_proto(PONG);
            }
            ClientOp::Pong => self.pings_out = 0,
            ClientOp::Info(_) | ClientOp::Ok => {}
            ClientOp::Err(text) => {
                tracing::error!(
                    "{} - Client error: {}",
                    self.handle.log_prefix(),
                    String::from_utf8_lossy(text)
                );
                return Next::Close(ClosedReason::ParseError);
            }
        }
        Next::Continue
    }

    fn ok(&self) {
        if self.opts.verbose {
            self.handle.out.enqueue_proto(OK);
        }
    }

    fn on_connect(&mut self, json: &[u8]) -> Next {
        let Some(mut opts) = ConnectOptions::parse(json) else {
            return Next::Close(ClosedReason::ProtocolViolation);
        };
        if !(0..=1).contains(&opts.protocol) {
            send_err(&self.handle, &WireError::InvalidClientProtocol);
            return Next::Close(ClosedReason::ProtocolViolation);
        }
        if self.server.shared.config.no_header_support {
            opts.headers = false;
        }
        if opts.no_responders && !opts.headers {
            send_err(&self.handle, &WireError::NoRespondersRequiresHeaders);
            return Next::Close(ClosedReason::ProtocolViolation);
        }
        *self.handle.meta.lock() = ClientMeta {
            protocol: opts.protocol,
            name: opts.name.clone(),
            lang: opts.lang.clone(),
            version: opts.version.clone(),
        };
        self.publisher.set_flags(opts.echo, opts.no_responders);
        self.opts = opts;
        self.connected = true;
        self.ok();
        Next::Continue
    }

    fn on_pub(&mut self, msg: &Message<'_>) -> Next {
        if msg.headers.is_some() && !self.opts.headers {
            // Go closes without an -ERR when a client that did not ask for headers sends HPUB.
            return Next::Close(ClosedReason::ProtocolViolation);
        }
        // An HPUB with an empty header block is delivered as a plain MSG, as Go does.
        let msg = &Message {
            headers: msg.headers.filter(|h| !h.is_empty()),
            ..*msg
        };
        if self.opts.pedantic && !nats_subject::is_valid_publish_subject(msg.subject) {
            send_err(&self.handle, &WireError::InvalidPublishSubject);
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

    fn on_sub(&mut self, subject: &[u8], queue: Option<&[u8]>, sid: &[u8]) {
        if !nats_subject::is_valid_subject(subject) {
            send_err(&self.handle, &WireError::InvalidSubject);
            return;
        }
        let max_subs = self.server.shared.config.max_subscriptions;
        let mut subs = self.handle.subs.lock();
        if subs.contains_key(sid) {
            drop(subs);
            self.ok();
            return;
        }
        if max_subs > 0 && subs.len() >= max_subs {
            drop(subs);
            tracing::error!(
                "{} - Maximum Subscriptions Exceeded",
                self.handle.log_prefix()
            );
            send_err(&self.handle, &WireError::MaxSubscriptionsExceeded);
            return;
        }
        let sub = Arc::new(Subscription {
            client: Arc::clone(&self.handle),
            subject: subject.into(),
            queue: queue.map(Into::into),
            sid: sid.into(),
            max_msgs: 0.into(),
            delivered: 0.into(),
        });
        if self
            .account
            .sublist
            .insert(subject, queue, SubRef(Arc::clone(&sub)))
            .is_err()
        {
            drop(subs);
            send_err(&self.handle, &WireError::InvalidSubject);
            return;
        }
        subs.insert(sid.into(), sub);
        drop(subs);
        self.ok();
    }

    fn on_unsub(&mut self, sid: &[u8], max_msgs: Option<u64>) {
        let mut subs = self.handle.subs.lock();
        if let Some(sub) = subs.get(sid) {
            let keep = match max_msgs {
                Some(max) if max > 0 && sub.delivered.load(Ordering::Relaxed) < max => {
                    sub.max_msgs.store(max, Ordering::Relaxed);
                    true
                }
                _ => false,
            };
            if !keep {
                if let Some(sub) = subs.remove(sid) {
                    let _ = self.account.sublist.remove(
                        &sub.subject,
                        sub.queue.as_deref(),
                        &SubRef(sub.clone()),
                    );
                }
            }
        }
        drop(subs);
        self.ok();
    }

    fn remove_all_subscriptions(&mut self) {
        let subs = std::mem::take(&mut *self.handle.subs.lock());
        for sub in subs.into_values() {
            let _ = self.account.sublist.remove(
                &sub.subject,
                sub.queue.as_deref(),
                &SubRef(sub.clone()),
            );
        }
    }
}

/// A short description of an op for trace logs, Go style (`PUB foo 5`).
fn op_summary(op: &ClientOp<'_>) -> String {
    let s = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
    match op {
        ClientOp::Connect(json) => format!("CONNECT {}", s(json)),
        ClientOp::Pub(p) => {
            let reply = p.reply.map(|r| format!(" {}", s(r))).unwrap_or_default();
            let verb = if p.headers.is_some() { "HPUB" } else { "PUB" };
            let hdr = p.headers.map_or(0, <[u8]>::len);
            format!("{verb} {}{reply} {}", s(p.subject), hdr + p.payload.len())
        }
        ClientOp::Sub {
            subject,
            queue,
            sid,
        } => {
            let queue = queue.map(|q| format!(" {}", s(q))).unwrap_or_default();
            format!("SUB {}{queue} {}", s(subject), s(sid))
        }
        ClientOp::Unsub { sid, max_msgs } => {
            let max = max_msgs.map(|m| format!(" {m}")).unwrap_or_default();
            format!("UNSUB {}{max}", s(sid))
        }
        ClientOp::Ping => "PING".to_owned(),
        ClientOp::Pong => "PONG".to_owned(),
        ClientOp::Info(_) => "INFO".to_owned(),
        ClientOp::Ok => "+OK".to_owned(),
        ClientOp::Err(e) => format!("-ERR {}", s(e)),
    }
}
