//! Opening a stream from `index.dat` (`docs/store-format.md` §6): the index is read and
//! decoded, each block it lists is checked against its file (header, key record, length,
//! the 4 bytes before the covered end), the state is loaded in bulk, and the recovery scan
//! runs on top of it over the bytes after each covered end and over newer blocks. Any
//! failure is `None`: the caller runs the full scan, and nothing is lost or removed.

use std::collections::{BTreeMap, BTreeSet};

use super::format::{self, BlockEntry, DecodedIndex};
use super::state::{INDEX_FILE, INDEX_FILE_ID};
use crate::error::StoreError;
use crate::filestore::at_rest;
use crate::filestore::block::{self, Block, HEADER_BYTES};
use crate::filestore::block_key::open_block_key;
use crate::filestore::envelope::{self, Kind};
use crate::filestore::record::RECORD_BYTES_MIN;
use crate::filestore::recover::{scan_block, Replay};
use crate::filestore::reopen::{empty_state, full_scan, replay_from, BlockScan, Recovered};
use crate::filestore::store::{RecoveryProgress, RecoveryReport};
use crate::io::{read_exact_at, OpenMode};
use crate::seal::FrameIndex;
use crate::stream::StreamStore;

/// What an open from the index yields.
pub struct Loaded {
    pub recovered: Recovered,
    /// The blocks and lengths the index on disk describes: the bytes taken on trust.
    pub covered: Vec<(u32, u64)>,
    /// The index's size.
    pub size: u64,
    /// Opened with `prev_key`, or written plain before keys were configured: to be written
    /// again.
    pub rewrite: bool,
}

/// Recovers from `index.dat` and the bytes after it, or `None` (the full scan's turn).
pub fn load(scan: &BlockScan<'_>, progress: &mut dyn FnMut(RecoveryProgress)) -> Option<Loaded> {
    let file = envelope::read_state_file(scan.io, scan.dir, INDEX_FILE, Kind::Index).ok()??;
    let size = file.body.len() as u64;
    let (plain, rewrite) = at_rest::open_file(
        scan.at_rest,
        INDEX_FILE_ID,
        Kind::Index,
        file.flags,
        file.body,
    )
    .ok()?;
    let body = format::decode(&plain)?;
    let (recovered, covered) = load_body(scan, body, progress).ok()??;
    Some(Loaded {
        recovered,
        covered,
        size,
        rewrite,
    })
}

/// Where each listed block stands against the directory.
struct Layout {
    /// Listed and present, ascending.
    present: Vec<BlockEntry>,
    /// Listed but gone (removed as dead since): all older than every present one.
    missing: BTreeSet<u32>,
    /// Present but not listed (created since): all newer than every listed one.
    newer: Vec<u32>,
}

fn layout(scan: &BlockScan<'_>, blocks: Vec<BlockEntry>) -> Option<Layout> {
    let listed: BTreeSet<u32> = blocks.iter().map(|b| b.index).collect();
    let (present, gone): (Vec<BlockEntry>, Vec<BlockEntry>) = blocks
        .into_iter()
        .partition(|b| scan.all.contains(&b.index));
    let missing: BTreeSet<u32> = gone.iter().map(|b| b.index).collect();
    let oldest_present = present.first().map_or(u32::MAX, |b| b.index);
    let newest_listed = listed.last().copied().unwrap_or(0);
    let newer: Vec<u32> = scan
        .all
        .iter()
        .copied()
        .filter(|i| !listed.contains(i))
        .collect();
    let holds = missing.last().is_none_or(|m| *m < oldest_present)
        && newer.first().is_none_or(|n| *n > newest_listed);
    holds.then_some(Layout {
        present,
        missing,
        newer,
    })
}

/// A recovered state and the blocks and lengths the index describes.
type FromIndex = (Recovered, Vec<(u32, u64)>);

/// The open itself; `Ok(None)` when the index does not hold together with the blocks.
fn load_body(
    scan: &BlockScan<'_>,
    body: DecodedIndex<'_>,
    progress: &mut dyn FnMut(RecoveryProgress),
) -> Result<Option<FromIndex>, StoreError> {
    let DecodedIndex {
        last,
        bounds,
        subjects,
        blocks,
        mut msgs,
        tombstones,
    } = body;
    let Some(layout) = layout(scan, blocks) else {
        return Ok(None);
    };
    if layout.present.is_empty() {
        // Every block it lists was removed as dead since: it holds nothing the blocks left
        // need, and they are all scanned.
        return Ok(Some((full_scan(scan, progress)?, Vec::new())));
    }
    let mut opened = Vec::with_capacity(layout.present.len());
    for entry in &layout.present {
        match check_block(scan, entry)? {
            Some(checked) => opened.push(checked),
            None => return Ok(None),
        }
    }
    let mut inner = empty_state();
    let missing = &layout.missing;
    // Messages of blocks removed since were removed by records after the index; a scan
    // starting at the oldest block left never meets them.
    let mut left_out = false;
    let kept = msgs.by_ref().filter(|m| {
        let gone = !missing.is_empty() && missing.contains(&m.body.block);
        left_out |= gone;
        !gone
    });
    if !inner.restore_bulk(subjects, kept, bounds) || msgs.failed {
        return Ok(None);
    }
    if left_out {
        inner.restart_first();
    }
    let Some((record_bytes, tombstones)) = bookkeeping(&layout, tombstones) else {
        return Ok(None);
    };
    let mut replay = replay_from(&mut inner, last, record_bytes, tombstones);
    let mut blocks = BTreeMap::new();
    let mut report = RecoveryReport::default();
    let total = scan.all.len() as u64;
    for checked in opened {
        let block = scan_suffix(scan, checked, &mut replay, &mut report)?;
        blocks.insert(block.index, block);
        progress(RecoveryProgress {
            blocks_done: blocks.len() as u64,
            blocks_total: total,
            msgs: replay.inner.fast_state().msgs,
        });
    }
    let previous = blocks.keys().next_back().copied();
    scan.scan(
        &layout.newer,
        &mut replay,
        (&mut blocks, &mut report),
        previous,
        progress,
    )?;
    let scanned = replay.finish();
    let basis = layout
        .present
        .iter()
        .map(|b| (b.index, b.covered))
        .collect();
    let recovered = Recovered {
        inner,
        blocks,
        report,
        scanned,
    };
    Ok(Some((recovered, basis)))
}

/// Each present block's record bytes, and the tombstones still tracked: those whose record's
/// block is gone delete nothing any more (dead bytes of their own block, as a scan finds
/// them). `None` if a tombstone names a block the index does not list.
#[allow(clippy::type_complexity)] // The two maps `replay_from` takes.
fn bookkeeping(
    layout: &Layout,
    tombstones: Vec<(u64, (u32, u32))>,
) -> Option<(BTreeMap<u32, u64>, BTreeMap<u64, (u32, u32)>)> {
    let mut record_bytes: BTreeMap<u32, u64> = layout
        .present
        .iter()
        .map(|b| (b.index, b.record_bytes))
        .collect();
    let mut kept = BTreeMap::new();
    for (seq, (tomb, record)) in tombstones {
        let listed = |i: u32| record_bytes.contains_key(&i) || layout.missing.contains(&i);
        if !listed(tomb) || !listed(record) {
            return None;
        }
        if !layout.missing.contains(&record) {
            kept.insert(seq, (tomb, record));
        } else if let Some(bytes) = record_bytes.get_mut(&tomb) {
            *bytes += RECORD_BYTES_MIN as u64;
        }
    }
    Some((record_bytes, kept))
}

/// A listed block whose file matched the index.
struct Checked {
    block: Block,
    /// The file's length (at least the covered length).
    size: u64,
}

/// Opens block `entry.index` and checks it against the index: header CRC, key record,
/// length, end check, and for a sealed block its frames. `Ok(None)` on any mismatch.
fn check_block(scan: &BlockScan<'_>, entry: &BlockEntry) -> Result<Option<Checked>, StoreError> {
    let path = scan.dir.join(block::file_name(entry.index));
    let file = scan
        .io
        .open(&path, OpenMode::ReadWrite)
        .map_err(|e| StoreError::io("open block", e))?;
    let size = file.size().map_err(|e| StoreError::io("block size", e))?;
    let head_len = usize::try_from(entry.data_start).unwrap_or(usize::MAX);
    if size < entry.covered || entry.covered < HEADER_BYTES.max(4) || head_len > 4096 {
        return Ok(None);
    }
    let mut header = vec![0u8; head_len];
    read_exact_at(&*file, &mut header, 0).map_err(|e| StoreError::io("read block", e))?;
    let mut end = [0u8; 4];
    read_exact_at(&*file, &mut end, entry.covered - 4)
        .map_err(|e| StoreError::io("read block", e))?;
    let hdr = header.get(..HEADER_BYTES as usize).unwrap_or_default();
    let crc = hdr.get(28..32).and_then(|b| b.try_into().ok());
    let sealed = block::header_is_sealed(hdr);
    if block::header_first_seq(hdr).is_none()
        || crc.map(u32::from_le_bytes) != Some(entry.header_crc)
        || u32::from_le_bytes(end) != entry.end_check
        || (sealed && size != entry.covered)
        || (!sealed && (!entry.frames.is_empty() || entry.plain_len != entry.covered))
    {
        return Ok(None);
    }
    let key = open_block_key(scan.at_rest, entry.index, &header)?;
    if key.damaged || key.data_start != entry.data_start {
        return Ok(None);
    }
    let frames = if sealed {
        let mut index = FrameIndex::default();
        if !entry.frames.iter().all(|f| index.push(*f)) {
            return Ok(None);
        }
        Some(index)
    } else {
        None
    };
    let block = Block {
        index: entry.index,
        path,
        file,
        len: entry.covered,
        live: 0,
        live_bytes: 0,
        dead_bytes: 0,
        keep_as_is: false,
        frames,
        plain_len: entry.plain_len,
        data_start: entry.data_start,
        key: key.key,
        created_here: false,
        rewrap: key.prev,
    };
    Ok(Some(Checked { block, size }))
}

/// Scans what was appended to a listed block after its covered end, as the full scan
/// would (a torn tail of the stream's tail block is cut back).
fn scan_suffix(
    scan: &BlockScan<'_>,
    checked: Checked,
    replay: &mut Replay<'_>,
    report: &mut RecoveryReport,
) -> Result<Block, StoreError> {
    let Checked { mut block, size } = checked;
    let covered = block.len;
    if size == covered {
        return Ok(block);
    }
    let mut buf = vec![0u8; usize::try_from(size - covered).unwrap_or(0)];
    read_exact_at(&*block.file, &mut buf, covered).map_err(|e| StoreError::io("read block", e))?;
    let before = replay.lost.len();
    let layout = (block.data_start, block.key.as_ref());
    let end = scan_block(&buf, covered, block.index, layout, replay);
    let mut len = size;
    if scan.all.last() == Some(&block.index) && end.torn {
        // Only the tail block can be torn by a crash: cut back to its last whole record.
        block
            .file
            .set_len(end.good_end)
            .and_then(|()| block.file.sync_data())
            .map_err(|e| StoreError::io("cut torn tail", e))?;
        len = end.good_end;
    }
    block.len = len;
    block.plain_len = len;
    block.keep_as_is = end.damaged;
    let found = replay.lost.get(before..).unwrap_or_default();
    report.note(block.index, found, end.damaged);
    Ok(block)
}
