//! The log file: appended to, reopened on SIGUSR1 (after an external tool renamed it), and
//! rotated by size when `logfile_size_limit` is set, as Go's file logger does:
//!
//! - once a write takes the file past the limit, the file is renamed to
//!   `<name>.YYYY.MM.DD.HH.MM.SS.nnnnnnnnn` (local time), a new one is opened, and its first
//!   line is `Rotated log, backup saved as "<backup>"`;
//! - with `logfile_max_num` N > 0, only the N - 1 newest backups are kept (`Purged log file
//!   "<backup>"` for each one removed).
//!
//! Go ends the lines it writes itself during a rotation with `\r\n`; ours end with `\n` like
//! every other line.

use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};

pub struct LogFile {
    file: File,
    path: PathBuf,
    /// Bytes in the current file.
    written: u64,
    /// Rotate past this size; 0 never.
    limit: u64,
    /// Backups to keep plus one; 0 keeps all.
    max_files: u64,
}

fn open_append(path: &Path) -> std::io::Result<File> {
    OpenOptions::new().create(true).append(true).open(path)
}

impl LogFile {
    pub fn open(path: &Path, limit: u64, max_files: u64) -> std::io::Result<Self> {
        let file = open_append(path)?;
        let written = file.metadata().map_or(0, |m| m.len());
        Ok(Self {
            file,
            path: path.to_owned(),
            written,
            limit,
            max_files,
        })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Whether the file is already past the limit (Go then logs `Rotating logfile...`, and
    /// the next line rotates it).
    pub fn over_limit(&self) -> bool {
        self.limit > 0 && self.written > self.limit
    }

    /// Writes one log line; `prefix` starts the notice lines a rotation writes.
    pub fn write_line(&mut self, line: &[u8], prefix: &str) -> std::io::Result<()> {
        self.file.write_all(line)?;
        self.written += line.len() as u64;
        if self.over_limit() {
            self.rotate(prefix);
        }
        Ok(())
    }

    fn rotate(&mut self, prefix: &str) {
        let now = chrono::Local::now();
        let backup = format!(
            "{}.{}",
            self.path.display(),
            now.format("%Y.%m.%d.%H.%M.%S.%f")
        );
        if std::fs::rename(&self.path, &backup).is_err() {
            // Nothing was moved: keep writing here and try again at twice the size.
            self.limit = self.limit.saturating_mul(2);
            return;
        }
        match open_append(&self.path) {
            Ok(file) => self.file = file,
            // The old handle still points at the backup: better there than nowhere.
            Err(_) => return,
        }
        self.written = 0;
        self.notice(prefix, &format!("Rotated log, backup saved as {backup:?}"));
        if self.max_files > 0 {
            self.purge(prefix);
        }
    }

    fn notice(&mut self, prefix: &str, message: &str) {
        let line = format!("{prefix}[INF] {message}\n");
        if self.file.write_all(line.as_bytes()).is_ok() {
            self.written += line.len() as u64;
        }
    }

    /// Removes the oldest backups beyond `max_files - 1`.
    fn purge(&mut self, prefix: &str) {
        let dir = self
            .path
            .parent()
            .filter(|d| !d.as_os_str().is_empty())
            .unwrap_or(Path::new("."))
            .to_owned();
        let base = self
            .path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let Ok(entries) = std::fs::read_dir(&dir) else {
            return;
        };
        let stem = format!("{base}.");
        let mut backups: Vec<String> = entries
            .filter_map(Result::ok)
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .filter(|name| name.strip_prefix(&stem).is_some_and(is_backup_stamp))
            .collect();
        // The stamp sorts by time, so the oldest come first.
        backups.sort();
        let keep = usize::try_from(self.max_files - 1).unwrap_or(usize::MAX);
        let excess = backups.len().saturating_sub(keep);
        for name in backups.into_iter().take(excess) {
            if std::fs::remove_file(dir.join(&name)).is_err() {
                return;
            }
            self.notice(prefix, &format!("Purged log file {name:?}"));
        }
    }
}

/// `YYYY.MM.DD.HH.MM.SS.nnnnnnnnn`.
fn is_backup_stamp(stamp: &str) -> bool {
    let parts: Vec<&str> = stamp.split('.').collect();
    let widths = [4, 2, 2, 2, 2, 2, 9];
    parts.len() == widths.len()
        && parts
            .iter()
            .zip(widths)
            .all(|(p, w)| p.len() == w && p.bytes().all(|b| b.is_ascii_digit()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn logfile_rotates_and_purges() {
        let dir = std::env::temp_dir().join(format!("natrium-logfile-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        assert!(std::fs::create_dir_all(&dir).is_ok());
        let path = dir.join("s.log");
        let Ok(mut log) = LogFile::open(&path, 100, 2) else {
            panic!("open");
        };
        for _ in 0..20 {
            assert!(log.write_line(&[b'x'; 40], "[1] ").is_ok());
            assert!(log.write_line(b"\n", "[1] ").is_ok());
        }
        let names: Vec<String> = std::fs::read_dir(&dir)
            .map(|d| {
                d.filter_map(Result::ok)
                    .map(|e| e.file_name().to_string_lossy().into_owned())
                    .collect()
            })
            .unwrap_or_default();
        // The live file plus max_files - 1 backups.
        assert_eq!(names.len(), 2, "{names:?}");
        let live = std::fs::read_to_string(&path).unwrap_or_default();
        assert!(
            live.starts_with("[1] [INF] Rotated log, backup saved as \""),
            "{live}"
        );
        assert!(is_backup_stamp("2026.01.02.03.04.05.123456789"));
        assert!(!is_backup_stamp("2026.01.02"));
        let _ = std::fs::remove_dir_all(&dir);
    }
}
