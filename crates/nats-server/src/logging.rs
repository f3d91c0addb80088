//! Log output in the Go server's format, which operators' tooling parses:
//! `[pid] 2006/01/02 15:04:05.000000 [INF] message`, or without the time when `logtime` is off.
//! Fatal start-up errors are written with `[FTL]` by [`fatal`].
//!
//! Everything a configuration reload may change is swappable behind [`LogSink`]: the level
//! (a `tracing` reload layer, so disabled levels still cost nothing at their call sites), the
//! time stamps, and the target — standard error, a file ([`crate::logfile`]: reopen, rotation
//! by size) or syslog ([`crate::syslog`]). Go picks the target in this order: a log file, then
//! remote syslog, then local syslog, else standard error.
//!
//! Every line reaches its target in one `write` (one datagram for syslog), as does everything
//! else the binary prints to standard error ([`to_stderr`]): servers sharing a terminal, a
//! pipe or a log file then never interleave in the middle of a line.

use std::fmt;
use std::io::Write;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use parking_lot::Mutex;
use tracing::{Event, Level, Metadata, Subscriber};
use tracing_subscriber::filter::LevelFilter;
use tracing_subscriber::fmt::format::Writer;
use tracing_subscriber::fmt::{FmtContext, FormatEvent, FormatFields, MakeWriter};
use tracing_subscriber::layer::SubscriberExt as _;
use tracing_subscriber::registry::LookupSpan;
use tracing_subscriber::reload;

use crate::logfile::LogFile;
use crate::syslog::{Severity, Syslog};

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LogSettings {
    pub timestamps: bool,
    pub utc: bool,
    pub debug: bool,
    pub trace: bool,
    pub file: Option<PathBuf>,
    /// `logfile_size_limit`: rotate the file past this many bytes; 0 never.
    pub size_limit: u64,
    /// `logfile_max_num`: files to keep when rotating; 0 keeps all.
    pub max_files: u64,
    pub syslog: bool,
    pub remote_syslog: String,
}

impl LogSettings {
    fn level(&self) -> LevelFilter {
        if self.trace {
            LevelFilter::TRACE
        } else if self.debug {
            LevelFilter::DEBUG
        } else {
            LevelFilter::INFO
        }
    }
}

/// Why the log target could not be opened, with the text Go prints.
#[derive(Debug)]
pub enum LogOpenError {
    File(PathBuf, std::io::Error),
    Syslog(String),
}

impl LogOpenError {
    /// Go's standard `log` package reports it (the server's logger is not running yet):
    /// `2006/01/02 15:04:05 error opening file: open …: …`, local time.
    pub fn report(&self) {
        let stamp = chrono::Local::now().format("%Y/%m/%d %H:%M:%S");
        let text = match self {
            Self::File(path, err) => format!(
                "error opening file: {}",
                crate::files::path_error("open", path, err)
            ),
            Self::Syslog(text) if text.starts_with("error ") => text.clone(),
            Self::Syslog(text) => format!("error connecting to syslog: {text:?}"),
        };
        to_stderr(&format!("{stamp} {text}\n"));
    }
}

impl fmt::Display for LogOpenError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::File(path, err) => f.write_str(&crate::files::path_error("open", path, err)),
            Self::Syslog(text) => f.write_str(text),
        }
    }
}

enum Target {
    /// Standard error (a recording writer in tests).
    Stream(Box<dyn Write + Send>),
    File(LogFile),
    Syslog(Syslog),
}

impl Target {
    fn open(settings: &LogSettings) -> Result<Self, LogOpenError> {
        if let Some(path) = &settings.file {
            return LogFile::open(path, settings.size_limit, settings.max_files)
                .map(Target::File)
                .map_err(|e| LogOpenError::File(path.clone(), e));
        }
        if !settings.remote_syslog.is_empty() {
            return Syslog::remote(&settings.remote_syslog)
                .map(Target::Syslog)
                .map_err(LogOpenError::Syslog);
        }
        if settings.syslog {
            return Syslog::local()
                .map(Target::Syslog)
                .map_err(LogOpenError::Syslog);
        }
        Ok(Target::Stream(Box::new(std::io::stderr())))
    }
}

/// The format flags shared by the formatter and the sink.
struct Flags {
    timestamps: AtomicBool,
    utc: AtomicBool,
    /// Syslog stamps lines itself: messages go without prefix.
    bare: AtomicBool,
}

struct Inner {
    target: Mutex<Target>,
    flags: Flags,
    settings: Mutex<LogSettings>,
    set_level: Box<dyn Fn(LevelFilter) + Send + Sync>,
}

/// Where log lines go; cheap to clone. Reopened on SIGUSR1, reconfigured on reload.
#[derive(Clone)]
pub struct LogSink {
    inner: Arc<Inner>,
}

fn level_tag(level: Level) -> &'static str {
    match level {
        Level::ERROR => "[ERR]",
        Level::WARN => "[WRN]",
        Level::INFO => "[INF]",
        Level::DEBUG => "[DBG]",
        Level::TRACE => "[TRC]",
    }
}

fn severity(level: Level) -> Severity {
    match level {
        Level::ERROR => Severity::Err,
        Level::WARN => Severity::Warning,
        Level::DEBUG => Severity::Debug,
        Level::INFO | Level::TRACE => Severity::Notice,
    }
}

/// `[pid] 2006/01/02 15:04:05.000000 ` (the time only with `logtime`).
pub fn prefix(pid: u32, timestamps: bool, utc: bool) -> String {
    if !timestamps {
        return format!("[{pid}] ");
    }
    let stamp = if utc {
        chrono::Utc::now()
            .format("%Y/%m/%d %H:%M:%S%.6f")
            .to_string()
    } else {
        chrono::Local::now()
            .format("%Y/%m/%d %H:%M:%S%.6f")
            .to_string()
    };
    format!("[{pid}] {stamp} ")
}

struct GoFormat {
    sink: LogSink,
    pid: u32,
}

impl<S, N> FormatEvent<S, N> for GoFormat
where
    S: Subscriber + for<'a> LookupSpan<'a>,
    N: for<'a> FormatFields<'a> + 'static,
{
    fn format_event(
        &self,
        ctx: &FmtContext<'_, S, N>,
        mut writer: Writer<'_>,
        event: &Event<'_>,
    ) -> fmt::Result {
        let flags = &self.sink.inner.flags;
        if !flags.bare.load(Ordering::Relaxed) {
            let tag = level_tag(*event.metadata().level());
            let (stamps, utc) = (
                flags.timestamps.load(Ordering::Relaxed),
                flags.utc.load(Ordering::Relaxed),
            );
            write!(writer, "{}{tag} ", prefix(self.pid, stamps, utc))?;
        }
        ctx.field_format().format_fields(writer.by_ref(), event)?;
        writeln!(writer)
    }
}

impl LogSink {
    fn prefix(&self) -> String {
        let flags = &self.inner.flags;
        prefix(
            std::process::id(),
            flags.timestamps.load(Ordering::Relaxed),
            flags.utc.load(Ordering::Relaxed),
        )
    }

    /// Whether lines go to a file (so that SIGUSR1 can reopen it).
    pub fn is_file(&self) -> bool {
        matches!(*self.inner.target.lock(), Target::File(_))
    }

    /// Reopens the log file (after a rotation tool moved it away).
    pub fn reopen(&self) -> std::io::Result<()> {
        let mut target = self.inner.target.lock();
        if let Target::File(file) = &*target {
            let settings = self.inner.settings.lock().clone();
            let reopened = LogFile::open(file.path(), settings.size_limit, settings.max_files)?;
            *target = Target::File(reopened);
        }
        Ok(())
    }

    /// Applies new settings, as Go's `ConfigureLogger` on reload: level and time stamps at
    /// once, and a new target when any of its settings changed. If the new target cannot be
    /// opened the old one stays (Go exits instead).
    pub fn reconfigure(&self, settings: &LogSettings) -> Result<(), LogOpenError> {
        let mut current = self.inner.settings.lock();
        let retarget = current.file != settings.file
            || current.syslog != settings.syslog
            || current.remote_syslog != settings.remote_syslog;
        if retarget {
            let target = Target::open(settings)?;
            let bare = matches!(target, Target::Syslog(_));
            *self.inner.target.lock() = target;
            self.inner.flags.bare.store(bare, Ordering::Relaxed);
        }
        let flags = &self.inner.flags;
        flags
            .timestamps
            .store(settings.timestamps, Ordering::Relaxed);
        flags.utc.store(settings.utc, Ordering::Relaxed);
        (self.inner.set_level)(settings.level());
        *current = settings.clone();
        Ok(())
    }

    /// Writes one whole line (formatted, or bare for syslog) at `level`, in one `write`.
    fn write_line(&self, level: Option<Level>, line: &[u8]) -> std::io::Result<()> {
        let mut target = self.inner.target.lock();
        match &mut *target {
            Target::Stream(out) => out.write_all(line),
            Target::File(file) => {
                let prefix = self.prefix();
                file.write_line(line, &prefix)
            }
            Target::Syslog(log) => {
                let sev = level.map_or(Severity::Crit, severity);
                log.send(sev, &String::from_utf8_lossy(line));
                Ok(())
            }
        }
    }
}

/// One event's writer: collects the formatted line and hands it to the sink whole, so that a
/// line is never split between files at a rotation or between syslog messages.
pub struct SinkWriter {
    sink: LogSink,
    level: Option<Level>,
    buf: Vec<u8>,
}

impl Write for SinkWriter {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.buf.extend_from_slice(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        if self.buf.is_empty() {
            return Ok(());
        }
        let line = std::mem::take(&mut self.buf);
        self.sink.write_line(self.level, &line)
    }
}

impl Drop for SinkWriter {
    fn drop(&mut self) {
        let _ = self.flush();
    }
}

impl<'a> MakeWriter<'a> for LogSink {
    type Writer = SinkWriter;
    fn make_writer(&'a self) -> SinkWriter {
        SinkWriter {
            sink: self.clone(),
            level: None,
            buf: Vec::new(),
        }
    }

    fn make_writer_for(&'a self, meta: &Metadata<'_>) -> SinkWriter {
        SinkWriter {
            sink: self.clone(),
            level: Some(*meta.level()),
            buf: Vec::new(),
        }
    }
}

/// Installs the global logger. Returns the sink so that SIGUSR1 can reopen the file and a
/// reload can reconfigure it.
pub fn init(settings: &LogSettings) -> Result<LogSink, LogOpenError> {
    let (sink, subscriber) = build(settings, Target::open(settings)?);
    let _ = tracing::subscriber::set_global_default(subscriber);
    let over = matches!(&*sink.inner.target.lock(), Target::File(f) if f.over_limit());
    if over {
        // Go says so when the limit is set on a file already past it; this very line then
        // triggers the rotation.
        tracing::info!("Rotating logfile...");
    }
    Ok(sink)
}

/// The sink writing to `target` and the subscriber formatting into it.
fn build(settings: &LogSettings, target: Target) -> (LogSink, impl Subscriber + Send + Sync) {
    let bare = matches!(target, Target::Syslog(_));
    let (filter, handle) = reload::Layer::new(settings.level());
    let set_level = Box::new(move |level: LevelFilter| {
        let _ = handle.modify(|f| *f = level);
    });
    let sink = LogSink {
        inner: Arc::new(Inner {
            target: Mutex::new(target),
            flags: Flags {
                timestamps: AtomicBool::new(settings.timestamps),
                utc: AtomicBool::new(settings.utc),
                bare: AtomicBool::new(bare),
            },
            settings: Mutex::new(settings.clone()),
            set_level,
        }),
    };
    let format = GoFormat {
        sink: sink.clone(),
        pid: std::process::id(),
    };
    // The formatter lets everything through; the reload layer decides the level.
    let subscriber = tracing_subscriber::fmt()
        .with_max_level(LevelFilter::TRACE)
        .with_writer(sink.clone())
        .event_format(format)
        .finish()
        .with(filter);
    (sink, subscriber)
}

/// Writes `text` (whole lines) to standard error in one `write`. `eprintln!` writes each
/// piece of its format separately, which lets another process's line land in between.
pub fn to_stderr(text: &str) {
    let _ = write_whole(&mut std::io::stderr(), text);
}

fn write_whole(out: &mut impl Write, text: &str) -> std::io::Result<()> {
    debug_assert!(
        text.is_empty() || text.ends_with('\n'),
        "not whole lines: {text:?}"
    );
    out.write_all(text.as_bytes())
}

/// Writes a `[FTL]` line where the other log lines go: the log file when there is one (as Go
/// does, nothing then reaches standard error), else standard error.
pub fn fatal(message: &str, sink: Option<&LogSink>, timestamps: bool, utc: bool) {
    if let Some(sink) = sink {
        let bare = sink.inner.flags.bare.load(Ordering::Relaxed);
        let line = if bare {
            format!("{message}\n")
        } else {
            format!("{}[FTL] {message}\n", sink.prefix())
        };
        let _ = sink.write_line(None, line.as_bytes());
    } else {
        let line = format!(
            "{}[FTL] {message}\n",
            prefix(std::process::id(), timestamps, utc)
        );
        to_stderr(&line);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Records each `write` call it receives.
    #[derive(Clone, Default)]
    struct Recorder(Arc<Mutex<Vec<Vec<u8>>>>);

    impl Write for Recorder {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.0.lock().push(buf.to_vec());
            Ok(buf.len())
        }

        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    impl Recorder {
        /// The writes, each checked to be exactly one whole line.
        fn lines(&self) -> Vec<String> {
            let writes = self.0.lock().clone();
            for write in &writes {
                let first_newline = write.iter().position(|&b| b == b'\n');
                assert!(
                    first_newline.is_some() && first_newline == write.len().checked_sub(1),
                    "not one whole line: {:?}",
                    String::from_utf8_lossy(write)
                );
            }
            writes
                .iter()
                .map(|w| String::from_utf8_lossy(w).into_owned())
                .collect()
        }
    }

    fn settings() -> LogSettings {
        LogSettings {
            timestamps: true,
            utc: false,
            debug: true,
            trace: true,
            file: None,
            size_limit: 0,
            max_files: 0,
            syslog: false,
            remote_syslog: String::new(),
        }
    }

    #[test]
    fn logging_each_stderr_line_is_one_write() {
        let recorder = Recorder::default();
        let (sink, subscriber) = build(&settings(), Target::Stream(Box::new(recorder.clone())));
        tracing::subscriber::with_default(subscriber, || {
            tracing::info!("Starting nats-server");
            tracing::info!("  Version:  {}", "2.15.2");
            tracing::warn!(
                cid = 5,
                "{} - cid:{} - {}",
                "127.0.0.1:1234",
                5,
                "Slow Consumer"
            );
            tracing::debug!("Client connection created");
            tracing::trace!("<<- [PUB foo 2]");
            tracing::error!("Error listening on port: {}", "bind: address in use");
        });
        fatal("Can't start monitoring", Some(&sink), true, false);
        let lines = recorder.lines();
        assert_eq!(lines.len(), 7, "{lines:?}");
        let pid = format!("[{}] ", std::process::id());
        assert!(lines.iter().all(|l| l.starts_with(&pid)), "{lines:?}");
        assert!(
            lines[0].ends_with("[INF] Starting nats-server\n"),
            "{}",
            lines[0]
        );
        assert!(
            lines[6].ends_with("[FTL] Can't start monitoring\n"),
            "{}",
            lines[6]
        );
    }

    #[test]
    fn logging_stderr_text_is_one_write() {
        let mut recorder = Recorder::default();
        let report = "nats-server: conf:1:1: unknown field \"x\"\n";
        assert!(write_whole(&mut recorder, report).is_ok());
        assert!(write_whole(&mut recorder, "flag provided but not defined: -bogus\n").is_ok());
        assert_eq!(recorder.lines().len(), 2);
        // A report of several lines still goes out in one write.
        let mut recorder = Recorder::default();
        assert!(write_whole(&mut recorder, "one\n\n").is_ok());
        assert_eq!(recorder.0.lock().len(), 1);
    }

    #[test]
    fn logging_file_lines_are_whole() {
        let dir = std::env::temp_dir().join(format!("natrium-logging-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        assert!(std::fs::create_dir_all(&dir).is_ok());
        let path = dir.join("s.log");
        let settings = LogSettings {
            file: Some(path.clone()),
            ..settings()
        };
        let Ok(target) = Target::open(&settings) else {
            panic!("open log file");
        };
        let (_sink, subscriber) = build(&settings, target);
        tracing::subscriber::with_default(subscriber, || {
            for i in 0..100 {
                tracing::trace!("<<- [PUB foo.{i} 2]");
            }
        });
        let text = std::fs::read_to_string(&path).unwrap_or_default();
        let pid = format!("[{}] ", std::process::id());
        assert_eq!(text.lines().count(), 100);
        assert!(text.lines().enumerate().all(
            |(i, l)| l.starts_with(&pid) && l.ends_with(&format!("[TRC] <<- [PUB foo.{i} 2]"))
        ));
        let _ = std::fs::remove_dir_all(&dir);
    }
}
