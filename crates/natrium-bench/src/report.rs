//! Medians over rounds and the Markdown table.

use std::fmt::Write as _;
use std::time::Duration;

use crate::scenarios::{Kind, Outcome, Scenario};

#[derive(Debug, Default, Clone)]
pub struct Measurement {
    pub msgs_per_sec: f64,
    pub mb_per_sec: f64,
    pub p50: Option<Duration>,
    pub p99: Option<Duration>,
    pub peak_rss: u64,
    pub rss_after: u64,
    pub cpu_seconds: f64,
    /// CPU seconds the load generator used during the run.
    pub gen_cpu_seconds: f64,
    pub per_conn_bytes: Option<f64>,
    pub leak: Option<(u64, u64)>,
    /// Server CPU seconds per wall second while JetStream consumers sit idle.
    pub idle_cpu_per_sec: Option<f64>,
}

/// The load generator's median CPU seconds in the Go runs and in the Natrium runs.
fn gen_cpu(go: &[Measurement], ours: &[Measurement]) -> String {
    let secs = |ms: &[Measurement]| median_by(ms, |m| m.gen_cpu_seconds);
    match (secs(go), secs(ours)) {
        (Some(g), Some(o)) => format!("{g:.2} / {o:.2}"),
        (None, Some(o)) => format!("- / {o:.2}"),
        _ => "-".to_owned(),
    }
}

fn percentile(sorted: &[Duration], p: f64) -> Option<Duration> {
    if sorted.is_empty() {
        return None;
    }
    let idx = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted.get(idx).copied()
}

impl Measurement {
    pub fn set_outcome(&mut self, o: &Outcome) {
        let secs = o.elapsed.as_secs_f64().max(1e-9);
        self.msgs_per_sec = o.msgs as f64 / secs;
        self.mb_per_sec = o.payload_bytes as f64 / secs / 1e6;
        let mut lat = o.latencies.clone();
        lat.sort();
        self.p50 = percentile(&lat, 0.50);
        self.p99 = percentile(&lat, 0.99);
    }

    pub fn summary(&self) -> String {
        let mut s = format!(
            "{:.0} msg/s, {:.1} MB/s, peak RSS {:.1} MB, cpu {:.2}s, generator cpu {:.2}s",
            self.msgs_per_sec,
            self.mb_per_sec,
            self.peak_rss as f64 / 1e6,
            self.cpu_seconds,
            self.gen_cpu_seconds
        );
        if let (Some(p50), Some(p99)) = (self.p50, self.p99) {
            let _ = write!(s, ", p50 {p50:?}, p99 {p99:?}");
        }
        if let Some(b) = self.per_conn_bytes {
            let _ = write!(s, ", {b:.0} B/conn");
        }
        if let Some(c) = self.idle_cpu_per_sec {
            let _ = write!(s, ", idle CPU {:.2} ms/s", c * 1e3);
        }
        if let Some((first, last)) = self.leak {
            let _ = write!(s, ", RSS after cycle 1 {first} B, after last {last} B");
        }
        s
    }
}

pub struct Row {
    pub name: &'static str,
    pub payload: &'static str,
    pub kind: Kind,
    pub go: Vec<Measurement>,
    pub ours: Vec<Measurement>,
}

impl Row {
    pub fn new(s: &Scenario) -> Self {
        Self {
            name: s.name,
            payload: s.payload_label,
            kind: s.kind,
            go: Vec::new(),
            ours: Vec::new(),
        }
    }

    pub fn push(&mut self, target: &str, m: Measurement) {
        if target == "go" {
            self.go.push(m);
        } else {
            self.ours.push(m);
        }
    }
}

fn median_by(ms: &[Measurement], f: impl Fn(&Measurement) -> f64) -> Option<f64> {
    let mut v: Vec<f64> = ms.iter().map(f).collect();
    if v.is_empty() {
        return None;
    }
    v.sort_by(f64::total_cmp);
    v.get(v.len() / 2).copied()
}

fn fmt_opt(v: Option<f64>, f: impl Fn(f64) -> String) -> String {
    v.map_or_else(|| "-".to_owned(), f)
}

fn micros(v: f64) -> String {
    format!("{v:.0} µs")
}

pub fn markdown(rows: &[Row], with_go: bool) -> String {
    let mut out = String::new();
    out.push_str("| scenario | payload | Go msg/s | Go MB/s | Natrium msg/s | Natrium MB/s | ratio | Go p50/p99 | Natrium p50/p99 | Go peak RSS | Natrium peak RSS | Go CPU s | Natrium CPU s | generator CPU s (Go / Natrium run) |\n");
    out.push_str("|---|---|---:|---:|---:|---:|---:|---|---|---:|---:|---:|---:|---:|\n");
    for row in rows {
        if matches!(row.kind, Kind::Unsupported) {
            let _ = writeln!(
                out,
                "| {} | {} | | | not supported yet | | | | | | | | |",
                row.name, row.payload
            );
            continue;
        }
        let stat = |ms: &[Measurement], f: &dyn Fn(&Measurement) -> f64| median_by(ms, f);
        let mb = |v: f64| format!("{:.1} MB", v / 1e6);
        let (go_rate, our_rate, ratio_label) = match row.kind {
            Kind::IdleMemory { .. } => {
                let g = stat(&row.go, &|m| m.per_conn_bytes.unwrap_or(0.0));
                let o = stat(&row.ours, &|m| m.per_conn_bytes.unwrap_or(0.0));
                let ratio = g
                    .zip(o)
                    .map(|(g, o)| format!("{:.2} (Go/Natrium B/conn)", g / o.max(1.0)));
                (
                    fmt_opt(g, |v| format!("{v:.0} B/conn")),
                    fmt_opt(o, |v| format!("{v:.0} B/conn")),
                    ratio,
                )
            }
            Kind::JsIdleConsumers { .. } => {
                let cpu = |ms: &[Measurement]| stat(ms, &|m| m.idle_cpu_per_sec.unwrap_or(0.0));
                let (g, o) = (cpu(&row.go), cpu(&row.ours));
                // Lower is better: the ratio is Go's CPU over ours, as for idle memory.
                let ratio = g
                    .zip(o)
                    .map(|(g, o)| format!("{:.2} (Go/Natrium idle CPU)", g / o.max(1e-6)));
                let ms = |v: f64| format!("{:.2} ms CPU/s", v * 1e3);
                (fmt_opt(g, ms), fmt_opt(o, ms), ratio)
            }
            Kind::LeakCheck { .. } => {
                let growth = |ms: &[Measurement]| {
                    median_by(ms, |m| {
                        m.leak.map_or(0.0, |(a, b)| {
                            (b as f64 - a as f64) / a.max(1) as f64 * 100.0
                        })
                    })
                };
                let (g, o) = (growth(&row.go), growth(&row.ours));
                (
                    fmt_opt(g, |v| format!("{v:+.1}% RSS")),
                    fmt_opt(o, |v| format!("{v:+.1}% RSS")),
                    None,
                )
            }
            _ => {
                let g = stat(&row.go, &|m| m.msgs_per_sec);
                let o = stat(&row.ours, &|m| m.msgs_per_sec);
                let ratio = g.zip(o).map(|(g, o)| format!("{:.2}x", o / g.max(1e-9)));
                (
                    fmt_opt(g, |v| format!("{v:.0}")),
                    fmt_opt(o, |v| format!("{v:.0}")),
                    ratio,
                )
            }
        };
        let mbs = |ms: &[Measurement]| fmt_opt(stat(ms, &|m| m.mb_per_sec), |v| format!("{v:.1}"));
        let lat = |ms: &[Measurement]| {
            let p50 = stat(ms, &|m| m.p50.map_or(f64::NAN, |d| d.as_secs_f64() * 1e6));
            let p99 = stat(ms, &|m| m.p99.map_or(f64::NAN, |d| d.as_secs_f64() * 1e6));
            match (p50, p99) {
                (Some(a), Some(b)) if !a.is_nan() => format!("{} / {}", micros(a), micros(b)),
                _ => "-".to_owned(),
            }
        };
        let _ = writeln!(
            out,
            "| {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} |",
            row.name,
            row.payload,
            if with_go { go_rate } else { "-".into() },
            mbs(&row.go),
            our_rate,
            mbs(&row.ours),
            ratio_label.unwrap_or_else(|| "-".into()),
            lat(&row.go),
            lat(&row.ours),
            fmt_opt(stat(&row.go, &|m| m.peak_rss as f64), mb),
            fmt_opt(stat(&row.ours, &|m| m.peak_rss as f64), mb),
            fmt_opt(stat(&row.go, &|m| m.cpu_seconds), |v| format!("{v:.2}")),
            fmt_opt(stat(&row.ours, &|m| m.cpu_seconds), |v| format!("{v:.2}")),
            gen_cpu(&row.go, &row.ours),
        );
    }
    out
}
