//! Where each source resumes after a restart: the stream is read backwards from its last
//! message for the `Nats-Stream-Source` headers, until every source's latest one is found
//! (Go's backward scan); a source with none starts from its configuration.

use std::collections::BTreeMap;

use natrium_store::{StoreError, StreamStore};

use super::header::{parse_source_value, stored_source};

/// Messages read between two looks at whether the stream is being stopped.
const SCAN_STEP: u64 = 4096;

/// The last origin sequence stored for each of `index_names`, with the origin's identity
/// then, found in `store`; missing ones have none.
pub fn last_source_seqs(
    store: &dyn StreamStore,
    index_names: &[String],
) -> BTreeMap<String, (u64, String)> {
    let mut found = BTreeMap::new();
    if index_names.is_empty() {
        return found;
    }
    let state = store.fast_state();
    let mut seq = state.last_seq;
    let mut steps = 0u64;
    while seq >= state.first_seq.max(1) && found.len() < index_names.len() {
        match store.load_msg(seq) {
            Ok(msg) => {
                let value = stored_source(&msg.headers);
                if let Some((iname, origin_seq, ident)) =
                    value.as_deref().and_then(parse_source_value)
                {
                    if index_names.contains(&iname) && !found.contains_key(&iname) {
                        found.insert(iname, (origin_seq, ident.to_owned()));
                    }
                }
            }
            Err(StoreError::NotFound) => {}
            Err(_) => break,
        }
        steps += 1;
        if steps.is_multiple_of(SCAN_STEP) {
            tracing::debug!("Scanning stream for its sources' positions: at sequence {seq}");
        }
        seq -= 1;
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;
    use bytes::Bytes;
    use natrium_store::{MemStore, NewMsg, StoreConfig};

    #[test]
    fn stream_sourcing_resume_finds_latest_per_source() {
        let mut store = MemStore::new(StoreConfig::default());
        let put = |store: &mut MemStore, hdr: &'static str| {
            let h = Bytes::from(format!("NATS/1.0\r\nNats-Stream-Source: {hdr}\r\n\r\n"));
            store
                .store_msg(NewMsg::new(b"s", h, Bytes::new(), 1))
                .unwrap();
        };
        put(&mut store, "A 1 > > a");
        put(&mut store, "B 7 > > b");
        put(&mut store, "A 2 > > a");
        store
            .store_msg(NewMsg::new(b"x", Bytes::new(), Bytes::new(), 1))
            .unwrap();
        let names = vec!["A > >".to_owned(), "B > >".to_owned(), "C > >".to_owned()];
        let found = last_source_seqs(&store, &names);
        assert_eq!(found.get("A > >").map(|f| f.0), Some(2));
        assert_eq!(found.get("B > >").map(|f| f.0), Some(7));
        assert_eq!(found.get("C > >"), None);
    }
}
