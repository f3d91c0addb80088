//! Log output in the Go server's format, which operators' tooling parses:
//! `[pid] 2006/01/02 15:04:05.000000 [INF] message`, or without the time when `logtime` is off.
//! Fatal start-up errors are written with `[FTL]` by [`fatal`].

use std::fmt;
use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::PathBuf;
use std::sync::Arc;

use parking_lot::Mutex;
use tracing::{Event, Level, Subscriber};
use tracing_subscriber::fmt::format::Writer;
use tracing_subscriber::fmt::{FmtContext, FormatEvent, FormatFields, MakeWriter};
use tracing_subscriber::registry::LookupSpan;

#[derive(Debug, Clone)]
pub struct LogSettings {
    pub timestamps: bool,
    pub utc: bool,
    pub debug: bool,
    pub trace: bool,
    pub file: Option<PathBuf>,
}

struct GoFormat {
    timestamps: bool,
    utc: bool,
    pid: u32,
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

fn prefix(pid: u32, timestamps: bool, utc: bool) -> String {
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
        let tag = level_tag(*event.metadata().level());
        write!(
            writer,
            "{}{tag} ",
            prefix(self.pid, self.timestamps, self.utc)
        )?;
        ctx.field_format().format_fields(writer.by_ref(), event)?;
        writeln!(writer)
    }
}

/// Where log lines go: standard error, or a file that can be reopened for rotation.
#[derive(Clone)]
pub struct LogSink {
    file: Option<Arc<Mutex<File>>>,
    path: Option<PathBuf>,
}

impl LogSink {
    fn open(path: Option<PathBuf>) -> std::io::Result<Self> {
        let file = match &path {
            Some(p) => Some(Arc::new(Mutex::new(open_append(p)?))),
            None => None,
        };
        Ok(Self { file, path })
    }

    /// Whether lines go to a file (so that SIGUSR1 can reopen it).
    pub fn is_file(&self) -> bool {
        self.file.is_some()
    }

    /// Reopens the log file (after a rotation tool moved it away).
    pub fn reopen(&self) -> std::io::Result<()> {
        if let (Some(file), Some(path)) = (&self.file, &self.path) {
            *file.lock() = open_append(path)?;
        }
        Ok(())
    }
}

fn open_append(path: &PathBuf) -> std::io::Result<File> {
    OpenOptions::new().create(true).append(true).open(path)
}

pub struct SinkWriter {
    sink: LogSink,
}

impl Write for SinkWriter {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        match &self.sink.file {
            Some(file) => file.lock().write(buf),
            None => std::io::stderr().write(buf),
        }
    }

    fn flush(&mut self) -> std::io::Result<()> {
        match &self.sink.file {
            Some(file) => file.lock().flush(),
            None => std::io::stderr().flush(),
        }
    }
}

impl<'a> MakeWriter<'a> for LogSink {
    type Writer = SinkWriter;
    fn make_writer(&'a self) -> SinkWriter {
        SinkWriter { sink: self.clone() }
    }
}

/// Installs the global logger. Returns the sink so that SIGUSR1 can reopen the file.
pub fn init(settings: &LogSettings) -> std::io::Result<LogSink> {
    let sink = LogSink::open(settings.file.clone())?;
    let max_level = if settings.trace {
        Level::TRACE
    } else if settings.debug {
        Level::DEBUG
    } else {
        Level::INFO
    };
    let format = GoFormat {
        timestamps: settings.timestamps,
        utc: settings.utc,
        pid: std::process::id(),
    };
    let subscriber = tracing_subscriber::fmt()
        .with_max_level(max_level)
        .with_writer(sink.clone())
        .event_format(format)
        .finish();
    let _ = tracing::subscriber::set_global_default(subscriber);
    Ok(sink)
}

/// Writes a `[FTL]` line where the other log lines go: the log file when there is one (as Go
/// does, nothing then reaches standard error), else standard error.
pub fn fatal(message: &str, sink: Option<&LogSink>, timestamps: bool, utc: bool) {
    let line = format!(
        "{}[FTL] {message}\n",
        prefix(std::process::id(), timestamps, utc)
    );
    match sink {
        Some(sink) => {
            let mut writer = sink.make_writer();
            let _ = writer.write_all(line.as_bytes());
            let _ = writer.flush();
        }
        None => {
            let _ = std::io::stderr().write_all(line.as_bytes());
        }
    }
}

/// The log file could not be opened: Go's logger has not started yet, so Go's standard `log`
/// package reports it (`2006/01/02 15:04:05 error opening file: open …: …`, local time).
pub fn log_file_error(path: &std::path::Path, err: &std::io::Error) {
    let stamp = chrono::Local::now().format("%Y/%m/%d %H:%M:%S");
    let _ = writeln!(
        std::io::stderr(),
        "{stamp} error opening file: {}",
        crate::files::path_error("open", path, err)
    );
}
