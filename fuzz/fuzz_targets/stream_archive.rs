//! The stream snapshot archive decoder (what `STREAM.RESTORE` reads from a client): over raw
//! bytes (mostly refused by the Snappy framing) and over the same bytes framed after the
//! archive's magic (reaching the record decoder): never a panic, and every archive it accepts
//! (messages and consumer records) encodes back to one that decodes the same.
#![no_main]

use std::io::Write;

use libfuzzer_sys::fuzz_target;
use natrium_store::archive::{decode_all, ArchiveLimits, ArchiveWriter, MAGIC};
use natrium_store::StoredMsg;

fuzz_target!(|data: &[u8]| {
    let limits = ArchiveLimits {
        subject_bytes_max: 1024,
        msg_bytes_max: 64 * 1024,
        consumer_bytes_max: 64 * 1024,
    };
    let _ = decode_all(data, limits);
    let mut framed = snap::write::FrameEncoder::new(Vec::new());
    let _ = framed.write_all(MAGIC);
    let _ = framed.write_all(data);
    let Ok(framed) = framed.into_inner() else {
        return;
    };
    let Ok(decoded) = decode_all(&framed, limits) else {
        return;
    };
    let Ok(mut writer) = ArchiveWriter::new(Vec::new(), &decoded.state) else {
        return;
    };
    for m in &decoded.msgs {
        let stored = StoredMsg {
            seq: m.seq,
            timestamp_ns: m.timestamp_ns,
            subject: m.subject.clone(),
            headers: m.headers.clone(),
            payload: m.payload.clone(),
        };
        assert!(writer.msg(&stored).is_ok());
    }
    for c in &decoded.consumers {
        assert!(writer.consumer(c).is_ok());
    }
    let again = writer.finish().unwrap_or_default();
    let again = decode_all(&again, limits).unwrap_or_default();
    assert_eq!(again, decoded);
});
