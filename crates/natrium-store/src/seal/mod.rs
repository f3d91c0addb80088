//! Compression and encryption at rest (`docs/store-format.md` §11): pure codecs the file
//! store calls, with no I/O of their own. `cipher` holds the two AEADs behind [`DataKey`];
//! `keys` the server keys, the per-file key-encryption keys (HKDF-SHA256) and the key
//! record that wraps a file's data key; `frames` the body of a sealed block (LZ4 and/or
//! AEAD frames of whole records, decoded frame by frame so damage stays contained, with a
//! plain-offset index); `record_body` the per-record encryption of the tail block; `body`
//! the encrypted state file body.

mod body;
mod cipher;
mod frames;
mod keys;
mod record_body;

pub use body::{
    open_body, open_state_body, seal_body, seal_state_body, BODY_SEAL_OVERHEAD_BYTES,
    STATE_SEAL_OVERHEAD_BYTES,
};
pub use cipher::{fill_random, Cipher, DataKey, KEY_BYTES, NONCE_BYTES, TAG_BYTES};
pub use frames::{
    decode_frame, decode_frames, encode_records, Damage, DamageReason, DecodedFrames, FrameCodec,
    FrameEntry, FrameHeader, FrameIndex, FrameWriter, SealedBody, Segment, ALG_AEAD, ALG_LZ4,
    FRAME_CRC_BYTES, FRAME_HEADER_BYTES, FRAME_PLAIN_BYTES_TARGET, FRAME_RAW_BYTES_MAX,
    FRAME_STORED_BYTES_MAX,
};
pub use keys::{
    parse_key_record, KeyContext, KeyRecord, KeySource, ServerKeys, Unwrapped, KEY_ID_CURRENT,
    KEY_ID_PREV, KEY_RECORD_BYTES, KEY_RECORD_MAGIC,
};
pub use record_body::{
    open_record_body, open_record_body_in_place, record_nonce, seal_record_body,
    seal_record_body_into, RECORD_SEAL_OVERHEAD_BYTES,
};

#[cfg(test)]
mod tests;
