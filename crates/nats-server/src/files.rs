//! The PID file and the ports file (`<exe>_<pid>.ports` in `ports_file_dir`), which test
//! harnesses read to find a server started on a random port.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};

pub fn write_pid_file(path: &Path) -> std::io::Result<()> {
    std::fs::write(path, std::process::id().to_string())
}

/// URL host for a listen address: a wildcard listen is reported as loopback.
fn url_host(host: &str, addr: SocketAddr) -> String {
    let ip = match host {
        "" | "0.0.0.0" | "::" | "[::]" => "127.0.0.1".to_owned(),
        _ => addr.ip().to_string(),
    };
    if ip.contains(':') {
        format!("[{ip}]")
    } else {
        ip
    }
}

pub fn ports_file_path(dir: &Path) -> PathBuf {
    let exe = std::env::args()
        .next()
        .and_then(|a| {
            Path::new(&a)
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
        })
        .unwrap_or_else(|| "nats-server".to_owned());
    dir.join(format!("{exe}_{}.ports", std::process::id()))
}

pub fn write_ports_file(
    dir: &Path,
    client: (&str, SocketAddr),
    monitor: Option<(&str, SocketAddr)>,
) -> std::io::Result<PathBuf> {
    let mut doc = serde_json::Map::new();
    let nats = format!(
        "nats://{}:{}",
        url_host(client.0, client.1),
        client.1.port()
    );
    doc.insert("nats".to_owned(), serde_json::json!([nats]));
    if let Some((host, addr)) = monitor {
        let url = format!("http://{}:{}", url_host(host, addr), addr.port());
        doc.insert("monitoring".to_owned(), serde_json::json!([url]));
    }
    let path = ports_file_path(dir);
    std::fs::write(&path, serde_json::Value::Object(doc).to_string())?;
    Ok(path)
}
