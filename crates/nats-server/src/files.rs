//! The PID file and the ports file (`<exe>_<pid>.ports` in `ports_file_dir`), which test
//! harnesses read to find a server started on a random port.
//!
//! The ports file is byte-compatible with Go's: `{"nats":[…],"monitoring":[…],"websocket":[…]}`
//! in that order (`ws://` or `wss://` URLs for the websocket listener), keys without listeners
//! left out, and for a wildcard listen one URL per address of every
//! network interface (in interface order, as Go's `net.Interfaces` lists them).

use std::fmt::Write as _;
use std::net::{IpAddr, SocketAddr};
use std::path::{Path, PathBuf};

use natrium_core::server::go_os_error;

/// Go's `*PathError` text: `open /x/y.pid: no such file or directory`.
pub fn path_error(op: &str, path: &Path, err: &std::io::Error) -> String {
    format!("{op} {}: {}", path.display(), go_os_error(err))
}

/// Writes the process id, without a newline, as Go does.
pub fn write_pid_file(path: &Path) -> Result<(), String> {
    std::fs::write(path, std::process::id().to_string()).map_err(|e| path_error("open", path, &e))
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

fn url(scheme: &str, ip: IpAddr, port: u16) -> String {
    format!("{scheme}://{}", SocketAddr::new(ip, port))
}

/// The URLs Go lists for a listener: the bound address, or every interface address when the
/// listener is on a wildcard address.
fn listener_urls(scheme: &str, bound: SocketAddr) -> Vec<String> {
    if bound.ip().is_unspecified() {
        let ips = interface_addresses();
        if !ips.is_empty() {
            return ips
                .into_iter()
                .map(|ip| url(scheme, ip, bound.port()))
                .collect();
        }
    }
    vec![url(scheme, bound.ip(), bound.port())]
}

fn push_list(doc: &mut String, key: &str, urls: &[String]) {
    if urls.is_empty() {
        return;
    }
    if doc.len() > 1 {
        doc.push(',');
    }
    let list = serde_json::to_string(urls).unwrap_or_else(|_| "[]".to_owned());
    let _ = write!(doc, "\"{key}\":{list}");
}

/// The bound monitoring listener.
#[derive(Debug, Clone, Copy)]
pub struct Monitor {
    pub addr: SocketAddr,
    /// HTTPS (`https_port`): listed with the `https` scheme.
    pub https: bool,
}

/// The listeners a ports file lists: the websocket one with its scheme (`ws` or `wss`).
#[derive(Debug, Clone, Copy)]
pub struct Listeners {
    pub client: SocketAddr,
    pub monitor: Option<Monitor>,
    pub websocket: Option<(&'static str, SocketAddr)>,
}

/// The ports file document.
pub fn ports_document(listeners: &Listeners) -> String {
    let mut doc = String::from("{");
    push_list(&mut doc, "nats", &listener_urls("nats", listeners.client));
    if let Some(monitor) = listeners.monitor {
        let scheme = if monitor.https { "https" } else { "http" };
        push_list(&mut doc, "monitoring", &listener_urls(scheme, monitor.addr));
    }
    if let Some((scheme, ws)) = listeners.websocket {
        push_list(&mut doc, "websocket", &listener_urls(scheme, ws));
    }
    doc.push('}');
    doc
}

/// Writes the ports file; the error is Go's wording, ready to log.
pub fn write_ports_file(path: &Path, listeners: &Listeners) -> Result<(), String> {
    std::fs::write(path, ports_document(listeners)).map_err(|e| path_error("open", path, &e))
}

/// Every IPv4 and IPv6 address of every interface, grouped by interface index like Go's
/// `net.Interfaces()` followed by `Addrs()`.
#[allow(unsafe_code)]
fn interface_addresses() -> Vec<IpAddr> {
    let mut list: *mut libc::ifaddrs = std::ptr::null_mut();
    // SAFETY: getifaddrs fills `list` with a linked list we only read, then free below.
    if unsafe { libc::getifaddrs(&raw mut list) } != 0 {
        return Vec::new();
    }
    let mut found: Vec<(u32, IpAddr)> = Vec::new();
    let mut cursor = list;
    while !cursor.is_null() {
        // SAFETY: `cursor` is a node of the list getifaddrs returned and has not been freed.
        let entry = unsafe { &*cursor };
        cursor = entry.ifa_next;
        if entry.ifa_addr.is_null() {
            continue;
        }
        // SAFETY: ifa_addr is non-null and points at a sockaddr whose family tells its type.
        let ip = unsafe {
            match i32::from((*entry.ifa_addr).sa_family) {
                libc::AF_INET => {
                    let sin = std::ptr::read_unaligned(entry.ifa_addr.cast::<libc::sockaddr_in>());
                    IpAddr::from(sin.sin_addr.s_addr.to_ne_bytes())
                }
                libc::AF_INET6 => {
                    let sin6 =
                        std::ptr::read_unaligned(entry.ifa_addr.cast::<libc::sockaddr_in6>());
                    IpAddr::from(sin6.sin6_addr.s6_addr)
                }
                _ => continue,
            }
        };
        // SAFETY: ifa_name is a NUL-terminated interface name owned by the list.
        let index = unsafe { libc::if_nametoindex(entry.ifa_name) };
        found.push((index, ip));
    }
    // SAFETY: `list` came from a successful getifaddrs and is freed once.
    unsafe { libc::freeifaddrs(list) };
    // The C library lists IPv4 addresses of all interfaces before IPv6 ones; Go groups them by
    // interface, keeping that order within one. A stable sort by index gives the same.
    found.sort_by_key(|&(index, _)| index);
    found.into_iter().map(|(_, ip)| ip).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn files_ports_document_key_order_like_go() {
        let client: SocketAddr = "127.0.0.1:4222".parse().unwrap_or(([0; 4], 0).into());
        let monitor: SocketAddr = "[::1]:8222".parse().unwrap_or(([0; 4], 0).into());
        let ws: SocketAddr = "127.0.0.1:8080".parse().unwrap_or(([0; 4], 0).into());
        let all = Listeners {
            client,
            monitor: Some(Monitor {
                addr: monitor,
                https: false,
            }),
            websocket: Some(("wss", ws)),
        };
        assert_eq!(
            ports_document(&all),
            r#"{"nats":["nats://127.0.0.1:4222"],"monitoring":["http://[::1]:8222"],"websocket":["wss://127.0.0.1:8080"]}"#
        );
        let alone = Listeners {
            client,
            monitor: None,
            websocket: None,
        };
        assert_eq!(
            ports_document(&alone),
            r#"{"nats":["nats://127.0.0.1:4222"]}"#
        );
    }

    #[test]
    fn files_wildcard_lists_interface_addresses() {
        let client: SocketAddr = "[::]:4222".parse().unwrap_or(([0; 4], 0).into());
        let urls = listener_urls("nats", client);
        assert!(!urls.is_empty());
        assert!(urls
            .iter()
            .all(|u| u.starts_with("nats://") && u.ends_with(":4222")));
        assert!(!urls
            .iter()
            .any(|u| u.contains("[::]") || u.contains("0.0.0.0")));
    }
}
