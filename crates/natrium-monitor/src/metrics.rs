//! `/metrics`: the server's counters in the Prometheus text exposition format (version
//! 0.0.4). Go's server has no such endpoint (its users run the separate exporter); the metric
//! names here are Natrium's own and are listed in `docs/monitoring.md`.

use std::fmt::Write as _;

use natrium_core::stats::ServerStats;
use natrium_core::Server;

use crate::process;

/// One metric: name, type, help, value.
struct Metric {
    name: &'static str,
    kind: &'static str,
    help: &'static str,
    value: f64,
}

#[allow(clippy::cast_precision_loss)]
fn count(v: u64) -> f64 {
    v as f64
}

/// Renders every metric with its `# HELP` and `# TYPE` lines.
pub fn metrics(server: &Server) -> String {
    let stats = server.stats();
    let load = ServerStats::load;
    let uptime = (chrono::Utc::now() - server.started())
        .num_milliseconds()
        .max(0);
    let list = [
        Metric {
            name: "natrium_in_msgs_total",
            kind: "counter",
            help: "Messages received from clients.",
            value: count(load(&stats.in_msgs)),
        },
        Metric {
            name: "natrium_out_msgs_total",
            kind: "counter",
            help: "Messages delivered to clients.",
            value: count(load(&stats.out_msgs)),
        },
        Metric {
            name: "natrium_in_bytes_total",
            kind: "counter",
            help: "Payload bytes received from clients.",
            value: count(load(&stats.in_bytes)),
        },
        Metric {
            name: "natrium_out_bytes_total",
            kind: "counter",
            help: "Payload bytes delivered to clients.",
            value: count(load(&stats.out_bytes)),
        },
        Metric {
            name: "natrium_slow_consumers_total",
            kind: "counter",
            help: "Connections closed or stalled as slow consumers.",
            value: count(load(&stats.slow_consumers)),
        },
        Metric {
            name: "natrium_connections",
            kind: "gauge",
            help: "Client connections currently open.",
            value: count(server.num_clients() as u64),
        },
        Metric {
            name: "natrium_connections_total",
            kind: "counter",
            help: "Client connections accepted since start.",
            value: count(load(&stats.total_connections)),
        },
        Metric {
            name: "natrium_subscriptions",
            kind: "gauge",
            help: "Subscriptions currently in the index.",
            value: count(server.num_subscriptions() as u64),
        },
        Metric {
            name: "natrium_memory_bytes",
            kind: "gauge",
            help: "Resident memory of the server process.",
            value: count(process::resident_bytes()),
        },
        Metric {
            name: "natrium_cpu_seconds_total",
            kind: "counter",
            help: "CPU time (user and system) used by the server process.",
            value: process::cpu_seconds(),
        },
        Metric {
            name: "natrium_uptime_seconds",
            kind: "gauge",
            help: "Seconds since the server started.",
            value: count(u64::try_from(uptime).unwrap_or(0)) / 1000.0,
        },
    ];
    let mut out = String::with_capacity(2048);
    for m in list {
        let _ = writeln!(out, "# HELP {} {}", m.name, m.help);
        let _ = writeln!(out, "# TYPE {} {}", m.name, m.kind);
        let _ = writeln!(out, "{} {}", m.name, m.value);
    }
    out
}
