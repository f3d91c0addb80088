//! Opening TCP listeners the way Go's `net.Listen("tcp", …)` does, for every listener the
//! server has (client, monitoring, websocket, and those still to come: cluster, leafnode,
//! gateway, MQTT), so that each refuses a bad port and words its errors alike.
//!
//! A configured port is checked first: -1 is Go's "any free port" (as is 0 where a listener
//! treats 0 as "pick one"), every other value outside 0..=65535 fails with Go's `listen tcp:
//! address 70000: invalid port` before the host is even resolved; left unchecked, a port such
//! as 70000 would silently wrap or fall back to a random port nobody can find.
//!
//! A wildcard host (`0.0.0.0`, `::`, empty) binds one dual-stack IPv6 socket (IPv4 clients
//! arrive as IPv4-mapped addresses, which the accept loop turns back into IPv4), falling back
//! to IPv4 when the machine has no IPv6; a host name is resolved, preferring IPv4; errors read
//! like Go's (`listen tcp 127.0.0.1:4222: bind: address already in use`) because operators'
//! tooling greps for them.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};

use tokio::net::{TcpListener, TcpSocket};

/// Go's `RANDOM_PORT`: a configured port of -1 asks for any free port.
pub const RANDOM_PORT: i64 = -1;

/// The port to bind for a configured `port`: -1 (and 0) mean any free port; any other value
/// outside the 16-bit range is refused with Go's `net.Listen` error. Every listener goes
/// through this check (via [`bind_tcp`]), so a new listener cannot forget it.
pub fn listen_port(port: i64) -> Result<u16, ListenError> {
    if port == RANDOM_PORT {
        return Ok(0);
    }
    u16::try_from(port)
        .map_err(|_| ListenError(format!("listen tcp: address {port}: invalid port")))
}

/// Why a listener could not be opened, worded as Go's `net.Listen` error.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct ListenError(pub String);

/// Pending connections the kernel may queue per listener. Go asks for `somaxconn`, which is
/// 4096 on current Linux kernels.
const LISTEN_BACKLOG: u32 = 4096;

/// An OS error as Go prints it: the C library's text with a lower-case first letter and no
/// `(os error N)` suffix (`address already in use`, `no such file or directory`).
pub fn go_os_error(err: &std::io::Error) -> String {
    let text = err.to_string();
    let text = match text.rfind(" (os error ") {
        Some(at) if err.raw_os_error().is_some() => text[..at].to_owned(),
        _ => text,
    };
    let mut chars = text.chars();
    match chars.next() {
        Some(first) => first.to_lowercase().chain(chars).collect(),
        None => text,
    }
}

/// Where a listen host points.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum ListenTarget {
    /// `0.0.0.0`, `::` or empty: every interface, IPv4 and IPv6.
    Any,
    Ip(IpAddr),
}

async fn resolve_listen_host(host: &str) -> Result<ListenTarget, ListenError> {
    let bare = host.trim_start_matches('[').trim_end_matches(']');
    if bare.is_empty() {
        return Ok(ListenTarget::Any);
    }
    if bare == "localhost" {
        return Ok(ListenTarget::Ip(Ipv4Addr::LOCALHOST.into()));
    }
    if let Ok(ip) = bare.parse::<IpAddr>() {
        return Ok(if ip.is_unspecified() {
            ListenTarget::Any
        } else {
            ListenTarget::Ip(ip)
        });
    }
    let no_such_host = || ListenError(format!("listen tcp: lookup {bare}: no such host"));
    let addrs: Vec<SocketAddr> = tokio::net::lookup_host((bare, 0))
        .await
        .map_err(|_| no_such_host())?
        .collect();
    // Go prefers an IPv4 address when a name has both.
    let ip = addrs
        .iter()
        .find(|a| a.is_ipv4())
        .or_else(|| addrs.first())
        .map(SocketAddr::ip)
        .ok_or_else(no_such_host)?;
    Ok(ListenTarget::Ip(ip))
}

fn bind_socket(addr: SocketAddr) -> Result<TcpListener, (&'static str, std::io::Error)> {
    let socket = if addr.is_ipv4() {
        TcpSocket::new_v4()
    } else {
        TcpSocket::new_v6()
    }
    .map_err(|e| ("socket", e))?;
    // Go sets SO_REUSEADDR on listeners so that a restart can bind over TIME_WAIT connections.
    socket.set_reuseaddr(true).map_err(|e| ("setsockopt", e))?;
    socket.bind(addr).map_err(|e| ("bind", e))?;
    socket.listen(LISTEN_BACKLOG).map_err(|e| ("listen", e))
}

/// Whether an IPv6 wildcard bind failed only because the machine has no IPv6.
fn no_ipv6(err: &std::io::Error) -> bool {
    matches!(
        err.raw_os_error(),
        Some(libc_errno::EAFNOSUPPORT | libc_errno::EADDRNOTAVAIL | libc_errno::EPROTONOSUPPORT)
    )
}

/// The few errno values [`no_ipv6`] needs (Linux numbering; the crate does not link libc).
mod libc_errno {
    pub const EPROTONOSUPPORT: i32 = 93;
    pub const EAFNOSUPPORT: i32 = 97;
    pub const EADDRNOTAVAIL: i32 = 99;
}

/// Whether an IPv6 socket also accepts IPv4 (`net.ipv6.bindv6only` is 0, the Linux default).
/// Go clears `IPV6_V6ONLY` itself; tokio cannot, so where the system default is IPv6-only a
/// wildcard listen stays on IPv4 rather than lose IPv4 clients.
fn ipv6_sockets_are_dual_stack() -> bool {
    std::fs::read_to_string("/proc/sys/net/ipv6/bindv6only").map_or(true, |v| v.trim() == "0")
}

/// Opens a TCP listener on `host:port` the way Go's `net.Listen("tcp", …)` does (see the module
/// documentation). `port` is the configured value, checked by [`listen_port`] before the host
/// is resolved, as Go does: 0 and -1 pick a free port, anything else outside 0..=65535 fails.
pub async fn bind_tcp(host: &str, port: i64) -> Result<TcpListener, ListenError> {
    let port = listen_port(port)?;
    let target = resolve_listen_host(host).await?;
    let fail = |shown: SocketAddr, (stage, err): (&str, std::io::Error)| {
        ListenError(format!(
            "listen tcp {shown}: {stage}: {}",
            go_os_error(&err)
        ))
    };
    match target {
        ListenTarget::Ip(ip) => {
            let addr = SocketAddr::new(ip, port);
            bind_socket(addr).map_err(|e| fail(addr, e))
        }
        ListenTarget::Any => {
            // Go names a wildcard listen `0.0.0.0:port` in errors, whichever family it used.
            let shown = SocketAddr::new(Ipv4Addr::UNSPECIFIED.into(), port);
            if !ipv6_sockets_are_dual_stack() {
                return bind_socket(shown).map_err(|e| fail(shown, e));
            }
            match bind_socket(SocketAddr::new(Ipv6Addr::UNSPECIFIED.into(), port)) {
                Ok(listener) => Ok(listener),
                Err((_, err)) if no_ipv6(&err) => bind_socket(shown).map_err(|e| fail(shown, e)),
                Err(e) => Err(fail(shown, e)),
            }
        }
    }
}

/// Formats `host:port` the way Go logs it (IPv6 in brackets).
pub fn host_port(host: &str, port: impl std::fmt::Display) -> String {
    if host.contains(':') && !host.starts_with('[') {
        format!("[{host}]:{port}")
    } else {
        format!("{host}:{port}")
    }
}

#[cfg(test)]
#[allow(clippy::expect_used)]
mod tests {
    use super::*;

    #[test]
    fn listen_go_os_error_text() {
        let err = std::io::Error::from_raw_os_error(98);
        assert_eq!(go_os_error(&err), "address already in use");
        let err = std::io::Error::from_raw_os_error(2);
        assert_eq!(go_os_error(&err), "no such file or directory");
    }

    #[tokio::test]
    async fn listen_bind_errors_read_like_go() {
        let taken = bind_tcp("127.0.0.1", 0).await.expect("bind");
        let port = taken.local_addr().expect("addr").port();
        let err = bind_tcp("127.0.0.1", i64::from(port))
            .await
            .expect_err("in use");
        assert_eq!(
            err.0,
            format!("listen tcp 127.0.0.1:{port}: bind: address already in use")
        );
        let err = bind_tcp("1.2.3.4.5", 0).await.expect_err("bad host");
        assert_eq!(err.0, "listen tcp: lookup 1.2.3.4.5: no such host");
    }

    #[test]
    fn listen_port_checks_like_go() {
        assert_eq!(listen_port(-1), Ok(0));
        assert_eq!(listen_port(0), Ok(0));
        assert_eq!(listen_port(4222), Ok(4222));
        assert_eq!(listen_port(65535), Ok(65535));
        for bad in [65536, 70000, 99_999_999, -2, -5, i64::MAX, i64::MIN] {
            assert_eq!(
                listen_port(bad),
                Err(ListenError(format!(
                    "listen tcp: address {bad}: invalid port"
                )))
            );
        }
    }

    #[tokio::test]
    async fn listen_bad_port_fails_before_the_host_is_resolved() {
        let err = bind_tcp("no.such.host.invalid", 70000)
            .await
            .expect_err("bad port");
        assert_eq!(err.0, "listen tcp: address 70000: invalid port");
    }
}
