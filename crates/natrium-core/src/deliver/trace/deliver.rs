//! The publish path while a message is traced: each delivery decision becomes an egress entry
//! (with Go's reason when the message is not delivered), trace-only messages stop just before
//! their frame would be queued, and account crossings add `se`/`si` entries.
//!
//! Crossing into another account is traced only where that account allowed it (`allow_trace`
//! on a stream import, or on a service export); elsewhere the message goes on untraced, or,
//! when traced only, stops at the boundary, as Go does.

use std::sync::Arc;
use std::time::Instant;

use natrium_auth::account::ResponseType;
use nats_subject::{subject_is_subset, SubjectTransform};

use super::event::{now_ts, ServiceImport, StreamExport, TraceStep};
use super::header::{with_field, TRACE_DEST, TRACE_DEST_DISABLED};
use super::{ExportCrossing, MsgTracer, AUTO_SUB_EXCEEDED, CLIENT_CLOSED, NO_ECHO, SUB_DENY};
use crate::account::links::StreamForward;
use crate::account::responses::Pending;
use crate::account::{Account, SubRef};
use crate::deliver::{Message, Publisher};
use crate::endpoint::DeliveryQuota;
use crate::endpoint::Endpoint;

/// How a request crossing a service import is traced (see [`Publisher::trace_service_import`]).
pub(in crate::deliver) enum ImportTrace {
    /// Not traced, or traced on into the exporter.
    Go,
    /// Trace-only and the exporter does not allow tracing: the request stops here.
    Stop,
    /// Delivered untraced; the tracer is held aside until the crossing is done.
    Paused(Box<MsgTracer>),
    /// Traced on; the exporter saw this reply subject as the trace destination.
    Traced(Box<[u8]>),
}

impl Publisher {
    /// Routes `msg` as [`Publisher::publish`] does, recording what happens in `tracer`.
    pub fn publish_traced(
        &mut self,
        account: &Arc<Account>,
        msg: &Message<'_>,
        tracer: Box<MsgTracer>,
    ) -> (usize, Option<Box<MsgTracer>>) {
        self.trace = Some(tracer);
        let delivered = self.publish(account, msg);
        (delivered, self.trace.take())
    }

    /// [`Publisher::deliver`] for a traced message.
    #[cold]
    #[inline(never)]
    pub(in crate::deliver) fn deliver_traced(
        &mut self,
        sub: &SubRef,
        msg: &Message<'_>,
        payload_len: usize,
    ) -> bool {
        let Some(mut tracer) = self.trace.take() else {
            return self.deliver_plain(sub, msg, payload_len);
        };
        let delivered = self.deliver_recorded(&mut tracer, sub, msg, payload_len);
        self.trace = Some(tracer);
        delivered
    }

    fn deliver_recorded(
        &mut self,
        t: &mut MsgTracer,
        sub: &SubRef,
        msg: &Message<'_>,
        payload_len: usize,
    ) -> bool {
        let mut subject = String::from_utf8_lossy(&sub.subject).into_owned();
        if let Some(export) = &t.export {
            let allow = export.allow;
            let entry = StreamExport {
                ts: now_ts(),
                acc: export.importer.clone(),
                to: String::from_utf8_lossy(msg.subject).into_owned(),
            };
            subject = export.shadow_subject(&sub.subject);
            t.event.events.push(TraceStep::StreamExport(entry));
            if !allow {
                // Go counts a skipped trace-only delivery as made (no 503 for it).
                return t.only || self.deliver_plain(sub, msg, payload_len);
            }
        }
        let target = match &sub.endpoint {
            Endpoint::Client(client) => client,
            // In-process subscribers (the server's own services): no egress entry, as for Go's
            // internal callbacks, which take trace-only messages too. Elsewhere than in the
            // system account Go reaches them through service imports that do not allow
            // tracing: trace-only stops there.
            Endpoint::Sink(..) => {
                return (!t.only || t.system) && self.deliver_plain(sub, msg, payload_len);
            }
        };
        let queue = sub.queue.as_deref();
        if !self.echo && target.cid == self.cid {
            t.egress(target, subject, queue, NO_ECHO);
            return false;
        }
        if let Some(filter) = &sub.deny_filter {
            if filter.delivery_denied(msg.subject, queue) {
                t.egress(target, subject, queue, SUB_DENY);
                return false;
            }
        }
        if t.only {
            t.egress(target, subject, queue, "");
            return true;
        }
        match sub.take_delivery() {
            DeliveryQuota::Deliver => {}
            DeliveryQuota::DeliverLast => self.finished_subs.push(sub.clone()),
            DeliveryQuota::Exhausted => {
                t.egress(target, subject, queue, AUTO_SUB_EXCEEDED);
                return false;
            }
        }
        if target.closing.is_cancelled() {
            t.egress(target, subject, queue, CLIENT_CLOSED);
            return false;
        }
        // As in Go, recorded before the frame is queued: a subscriber cut as a slow consumer
        // by this very frame still shows as an egress without error.
        t.egress(target, subject, queue, "");
        self.enqueue(sub, msg, payload_len)
    }

    /// Notes that the deliveries that follow go through `forward` into `importer`.
    #[inline]
    pub(in crate::deliver) fn trace_enter_export(
        &mut self,
        forward: &StreamForward<Account>,
        importer: &Account,
    ) {
        if let Some(t) = &mut self.trace {
            t.export = Some(ExportCrossing {
                importer: importer.name.clone(),
                allow: forward.allow_trace,
                from: forward.from.clone(),
                local: forward.local.clone(),
            });
        }
    }

    #[inline]
    pub(in crate::deliver) fn trace_leave_export(&mut self) {
        if let Some(t) = &mut self.trace {
            t.export = None;
        }
    }

    /// Records a request (or, with `allow` false, a response) crossing from `from` into
    /// `into`'s subject `to`, and says how to go on; `headers` is the block the crossing
    /// delivers, rewritten here when the trace destination changes for the other side.
    pub(in crate::deliver) fn trace_service_import(
        &mut self,
        into: &Arc<Account>,
        from_account: &Arc<Account>,
        msg: &Message<'_>,
        to: &[u8],
        allow: bool,
        headers: &mut Option<Vec<u8>>,
    ) -> ImportTrace {
        let Some(t) = &mut self.trace else {
            return ImportTrace::Go;
        };
        t.event.events.push(TraceStep::ServiceImport(ServiceImport {
            ts: now_ts(),
            acc: into.name.clone(),
            from: String::from_utf8_lossy(msg.subject).into_owned(),
            to: String::from_utf8_lossy(to).into_owned(),
        }));
        let block = headers.as_deref().or(msg.headers);
        if !allow {
            if t.only {
                return ImportTrace::Stop;
            }
            *headers = Some(with_field(block, TRACE_DEST, TRACE_DEST_DISABLED));
            return self
                .trace
                .take()
                .map_or(ImportTrace::Go, ImportTrace::Paused);
        }
        // Go hands the exporter a reply subject of its own that leads back to the trace
        // destination, for servers further on to send their events to.
        let reply = into.responses.register(Pending {
            requester: Arc::downgrade(from_account),
            reply: t.dest.as_bytes().into(),
            kind: ResponseType::Singleton,
            threshold: natrium_auth::account::RESPONSE_THRESHOLD_DEFAULT,
            last: Instant::now(),
        });
        *headers = Some(with_field(block, TRACE_DEST, &reply));
        ImportTrace::Traced(reply)
    }

    /// Undoes what [`Publisher::trace_service_import`] set up, once the crossing is done.
    pub(in crate::deliver) fn trace_import_done(&mut self, into: &Account, state: ImportTrace) {
        match state {
            ImportTrace::Paused(t) => self.trace = Some(t),
            // No other server took the message: the destination's reply subject is not needed.
            ImportTrace::Traced(reply) => into.responses.cancel(&reply),
            ImportTrace::Go | ImportTrace::Stop => {}
        }
    }

    /// Whether the message is traced only (no delivery).
    pub(in crate::deliver) fn trace_only(&self) -> bool {
        self.trace.as_ref().is_some_and(|t| t.only)
    }
}

impl ExportCrossing {
    /// The importer's subscription on `subject`, named as Go names its shadow subscription in
    /// the exporting account: the export's subject, unless the subscription is narrower than
    /// the import, then its subject mapped back.
    fn shadow_subject(&self, subject: &[u8]) -> String {
        let narrower = *subject != *self.local && subject_is_subset(subject, &self.local);
        let named: &[u8] = if narrower {
            let mut out = Vec::new();
            match SubjectTransform::new(&self.local, &self.from) {
                Ok(back) if back.apply(subject, &mut out) => {
                    return String::from_utf8_lossy(&out).into_owned()
                }
                _ => subject,
            }
        } else {
            &self.from
        };
        String::from_utf8_lossy(named).into_owned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn crossing(from: &str, local: &str) -> ExportCrossing {
        ExportCrossing {
            importer: "B".into(),
            allow: true,
            from: from.as_bytes().into(),
            local: local.as_bytes().into(),
        }
    }

    /// Go names an importer's subscription by its shadow in the exporter (observed on
    /// v2.15.2: `imp.tick.1` as `tick.1`, `imp.>` and `mapped.*` as the export's subject).
    #[test]
    fn msg_trace_stream_import_subscription_named_in_exporter_terms() {
        let prefix = crossing("tick.>", "imp.tick.>");
        assert_eq!(prefix.shadow_subject(b"imp.tick.1"), "tick.1");
        assert_eq!(prefix.shadow_subject(b"imp.tick.*"), "tick.*");
        assert_eq!(prefix.shadow_subject(b"imp.>"), "tick.>");
        assert_eq!(prefix.shadow_subject(b"imp.tick.>"), "tick.>");
        let mapped = crossing("to.*", "mapped.*");
        assert_eq!(mapped.shadow_subject(b"mapped.*"), "to.*");
        assert_eq!(mapped.shadow_subject(b"mapped.x"), "to.x");
        let literal = crossing("a.b", "a.b");
        assert_eq!(literal.shadow_subject(b"a.b"), "a.b");
        assert_eq!(literal.shadow_subject(b"a.*"), "a.b");
    }
}
