//! A stream's `subject_transform`: a captured message whose subject matches the transform's
//! source is stored under the mapped subject, and everything after capture sees only that
//! subject (the interest check, `Nats-Expected-Last-Subject-Sequence`, the per-subject
//! limits, rollups, republish and consumers), as in Go, where `processJetStreamMsg` replaces
//! the subject first. A subject the source does not match is stored unchanged.

use std::borrow::Cow;

use bytes::Bytes;
use natrium_core::endpoint::Delivery;
use nats_subject::SubjectTransform;

use crate::config::StreamConfig;

/// The compiled `subject_transform` of a stream, with its reused output buffer.
#[derive(Debug, Default)]
pub struct InputTransform {
    transform: Option<SubjectTransform>,
    scratch: Vec<u8>,
}

impl InputTransform {
    /// The transform `config` asks for (none when it has none or it does not compile, which
    /// the configuration checks refuse before a stream runs).
    pub fn new(config: &StreamConfig) -> Self {
        let transform = config
            .subject_transform
            .as_ref()
            .and_then(|t| SubjectTransform::mapping(&t.src, &t.dest).ok().flatten());
        Self {
            transform,
            scratch: Vec::new(),
        }
    }

    /// `msg` as it is to be stored: a copy under the mapped subject when the transform
    /// applies, else `msg` itself.
    pub fn apply<'a>(&mut self, msg: &'a Delivery) -> Cow<'a, Delivery> {
        let Some(transform) = &self.transform else {
            return Cow::Borrowed(msg);
        };
        if !transform.apply(&msg.subject, &mut self.scratch) || self.scratch == msg.subject {
            return Cow::Borrowed(msg);
        }
        let mut mapped = msg.clone();
        mapped.subject = Bytes::copy_from_slice(&self.scratch);
        Cow::Owned(mapped)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::stream::SubjectTransform as TransformConfig;

    fn delivery(subject: &str) -> Delivery {
        Delivery {
            subject: Bytes::copy_from_slice(subject.as_bytes()),
            reply: Some(Bytes::from_static(b"r")),
            headers: None,
            payload: Bytes::from_static(b"x"),
            sid: 1,
            origin: None,
        }
    }

    #[test]
    fn stream_transform_maps_matching_subjects_only() {
        let config = StreamConfig {
            subject_transform: Some(TransformConfig {
                src: "in.*.*".to_owned(),
                dest: "out.{{wildcard(2)}}.{{partition(3,1)}}".to_owned(),
            }),
            ..StreamConfig::default()
        };
        let mut input = InputTransform::new(&config);
        let msg = delivery("in.a.b");
        let mapped = input.apply(&msg);
        // FNV-1a of `a` is 3826002220, which leaves 1 modulo 3.
        assert_eq!(&mapped.subject[..], b"out.b.1");
        assert_eq!(mapped.reply.as_deref(), Some(&b"r"[..]));
        assert!(matches!(
            input.apply(&delivery("other.a")),
            Cow::Borrowed(_)
        ));
        let mut none = InputTransform::new(&StreamConfig::default());
        assert!(matches!(none.apply(&delivery("in.a.b")), Cow::Borrowed(_)));
    }
}
