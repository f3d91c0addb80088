//! A connection's read buffer and its sizing policy.
//!
//! Reads ask for `target` bytes. The target starts at `READ_BUFFER_START_BYTES`, doubles while
//! reads fill the space offered (up to `READ_BUFFER_MAX_BYTES`) and halves after a few short
//! reads in a row, as Go's read loop does. The allocation follows the target: it grows beyond
//! it only for a single frame that needs more (bounded by max_control_line + max_payload, which
//! the parser checks before asking), and it is given back once the traffic no longer needs it,
//! so a burst or one large message does not pin memory on a connection that then goes quiet.
//! Where the transport can wait for input without a buffer (plain TCP), a connection whose
//! reads are small gives the allocation back after each batch, so an idle one holds none.
//!
//! Parsed ops borrow from [`ReadBuf::pending`]; [`ReadBuf::consume`] drops what was handled and
//! a partial op stays for the next read.

use super::io::Inbound;
use super::ClosedReason;
use crate::limits::{
    READ_BUFFER_MAX_BYTES, READ_BUFFER_SHRINK_AFTER_SHORT_READS, READ_BUFFER_START_BYTES,
};

pub struct ReadBuf {
    /// `data[start..]` is unparsed input.
    pub(crate) data: Vec<u8>,
    start: usize,
    target: usize,
    /// Total bytes the op at the front needs, when the parser said so; 0 otherwise.
    frame_needs: usize,
    short_reads: u32,
    /// Free space offered to the last read.
    offered: usize,
}

impl Default for ReadBuf {
    fn default() -> Self {
        Self::new()
    }
}

impl ReadBuf {
    /// An empty buffer; the first [`prepare`](Self::prepare) allocates it.
    pub fn new() -> Self {
        Self {
            data: Vec::new(),
            start: 0,
            target: READ_BUFFER_START_BYTES,
            frame_needs: 0,
            short_reads: 0,
            offered: 0,
        }
    }

    /// The bytes not handled yet.
    pub fn pending(&self) -> &[u8] {
        self.data.get(self.start..).unwrap_or_default()
    }

    /// Marks `n` more bytes as handled.
    pub fn consume(&mut self, n: usize) {
        if n > 0 {
            // A different op is at the front now.
            self.frame_needs = 0;
        }
        self.start = (self.start + n).min(self.data.len());
        if self.start == self.data.len() {
            self.data.clear();
            self.start = 0;
        }
    }

    /// The op at the front is incomplete and needs `total` bytes in all.
    pub fn need_frame(&mut self, total: usize) {
        self.frame_needs = total;
    }

    /// Makes room for the next read: at least `target` bytes, or what the partial frame at the
    /// front still needs. Moves a partial op to the front, and gives memory back when the
    /// allocation is far larger than the traffic needs.
    pub fn prepare(&mut self) {
        let pending = self.data.len() - self.start;
        let frame_rest = self.frame_needs.saturating_sub(pending);
        let want = self.target.max(frame_rest);
        if self.data.capacity() - self.data.len() < want && self.start > 0 {
            self.data.drain(..self.start);
            self.start = 0;
        }
        let roomy = self.target * 2;
        if self.data.capacity() > roomy && pending + want <= roomy {
            self.data.drain(..self.start);
            self.start = 0;
            self.data.shrink_to(self.target.max(pending + want));
        }
        if self.data.capacity() - self.data.len() < want {
            self.data.reserve_exact(want);
        }
        self.offered = self.data.capacity() - self.data.len();
    }

    /// Adjusts the target after a read of `n` bytes.
    pub fn note_read(&mut self, n: usize) {
        if n >= self.offered {
            self.short_reads = 0;
            self.target = (self.target * 2).min(READ_BUFFER_MAX_BYTES);
        } else if n < self.target / 2 {
            self.short_reads += 1;
            if self.short_reads > READ_BUFFER_SHRINK_AFTER_SHORT_READS {
                self.target = (self.target / 2).max(READ_BUFFER_START_BYTES);
                self.short_reads = 0;
            }
        }
    }

    /// Waits for input from `socket` and reads it in. A buffer given back while the connection
    /// was quiet is taken again only once the transport says there is something to read.
    /// Cancel-safe: what was read stays here, and the read loop owns this buffer.
    pub async fn fill<R: Inbound>(&mut self, socket: &mut R) -> Result<usize, ClosedReason> {
        if self.is_released() {
            socket.ready().await;
        }
        self.prepare();
        socket.read_into(&mut self.data).await
    }

    /// Whether the buffer holds no allocation (see [`release_if_quiet`](Self::release_if_quiet)).
    pub fn is_released(&self) -> bool {
        self.data.capacity() == 0
    }

    /// Frees the allocation when everything read has been handled and reads are small (the
    /// target is at its start size): a connection that sends a line now and then holds no
    /// buffer between reads. Only for transports that can wait for input without one; the
    /// next [`prepare`](Self::prepare) allocates again.
    pub fn release_if_quiet(&mut self) {
        if self.pending().is_empty() && self.target == READ_BUFFER_START_BYTES {
            self.data = Vec::new();
            self.start = 0;
        }
    }

    /// The connection has been quiet for a while: the next [`prepare`](Self::prepare) shrinks
    /// the buffer back to its starting size if nothing is pending.
    pub fn idle(&mut self) {
        if self.pending().is_empty() {
            self.target = READ_BUFFER_START_BYTES;
            self.short_reads = 0;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(rb: &mut ReadBuf, bytes: &[u8]) {
        rb.prepare();
        assert!(rb.data.capacity() - rb.data.len() >= bytes.len().min(rb.offered));
        let n = bytes.len().min(rb.offered);
        rb.data.extend_from_slice(&bytes[..n]);
        rb.note_read(n);
    }

    #[test]
    fn readbuf_grows_while_reads_fill_it() {
        let mut rb = ReadBuf::new();
        let big = vec![b'x'; 1 << 20];
        for _ in 0..10 {
            read(&mut rb, &big);
            let all = rb.pending().len();
            rb.consume(all);
        }
        assert_eq!(rb.target, READ_BUFFER_MAX_BYTES);
        assert!(rb.data.capacity() <= 2 * READ_BUFFER_MAX_BYTES);
    }

    #[test]
    fn readbuf_shrinks_after_short_reads_and_when_idle() {
        let mut rb = ReadBuf::new();
        let big = vec![b'x'; 1 << 20];
        for _ in 0..10 {
            read(&mut rb, &big);
            rb.consume(usize::MAX);
        }
        for _ in 0..40 {
            read(&mut rb, b"PING\r\n");
            rb.consume(usize::MAX);
        }
        rb.prepare();
        assert_eq!(rb.target, READ_BUFFER_START_BYTES);
        assert!(
            rb.data.capacity() <= 2 * READ_BUFFER_START_BYTES,
            "{}",
            rb.data.capacity()
        );
        for _ in 0..3 {
            read(&mut rb, &big);
            rb.consume(usize::MAX);
        }
        rb.idle();
        rb.prepare();
        assert!(
            rb.data.capacity() <= 2 * READ_BUFFER_START_BYTES,
            "{}",
            rb.data.capacity()
        );
    }

    #[test]
    fn readbuf_makes_room_for_a_large_frame_then_gives_it_back() {
        let mut rb = ReadBuf::new();
        read(&mut rb, b"PUB foo 1000000\r\n");
        rb.need_frame(1_000_019);
        let mut got = rb.pending().len();
        let payload = vec![b'x'; 1_000_002];
        while got < 1_000_019 {
            rb.prepare();
            assert!(rb.offered >= (1_000_019 - got).min(rb.target));
            let n = rb.offered.min(1_000_019 - got);
            rb.data.extend_from_slice(&payload[..n]);
            rb.note_read(n);
            got += n;
        }
        assert_eq!(rb.pending().len(), 1_000_019);
        rb.consume(1_000_019);
        read(&mut rb, b"PING\r\n");
        assert!(
            rb.data.capacity() <= 2 * READ_BUFFER_MAX_BYTES,
            "{}",
            rb.data.capacity()
        );
    }

    #[test]
    fn readbuf_released_only_when_quiet_and_empty() {
        let mut rb = ReadBuf::new();
        assert!(rb.is_released());
        read(&mut rb, b"PING\r\nPUB foo 5\r\nhe");
        rb.consume(6);
        rb.release_if_quiet();
        assert!(!rb.is_released(), "a partial op stays");
        read(&mut rb, b"llo\r\n");
        assert_eq!(rb.pending(), b"PUB foo 5\r\nhello\r\n");
        rb.consume(usize::MAX);
        rb.release_if_quiet();
        assert!(rb.is_released());
        let big = vec![b'x'; 1 << 20];
        read(&mut rb, &big);
        rb.consume(usize::MAX);
        rb.release_if_quiet();
        assert!(
            !rb.is_released(),
            "a connection whose reads fill the buffer keeps it"
        );
        rb.idle();
        rb.release_if_quiet();
        assert!(rb.is_released());
    }

    #[test]
    fn readbuf_keeps_a_partial_op_across_compaction() {
        let mut rb = ReadBuf::new();
        read(&mut rb, b"PING\r\nPUB foo 5\r\nhe");
        rb.consume(6);
        read(&mut rb, b"llo\r\n");
        assert_eq!(rb.pending(), b"PUB foo 5\r\nhello\r\n");
    }
}
