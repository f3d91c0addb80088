//! The monitoring listener. Each HTTP connection is served by hyper on its own task; handlers
//! only read server state, so a busy client port never blocks monitoring. Connections are
//! bounded in number and in how long they may stay silent ([`crate::limits`]).

use std::collections::BTreeMap;
use std::convert::Infallible;
use std::fmt::Write as _;
use std::net::SocketAddr;
use std::sync::Arc;

use bytes::Bytes;
use http_body_util::Full;
use hyper::body::Incoming;
use hyper::{Request, Response, StatusCode};
use hyper_util::rt::{TokioIo, TokioTimer};
use natrium_core::Server;
use parking_lot::Mutex;
use serde::Serialize;
use tokio::sync::Semaphore;

use crate::connz::{connz, ConnzOptions};
use crate::jsz::{jsz, JszOptions};
use crate::limits;
use crate::query::{Query, QueryError};
use crate::subsz::{subsz, SubszOptions};
use crate::varz::{varz, HttpInfo};

#[derive(Debug, Clone)]
pub struct MonitorSettings {
    pub host: String,
    /// As configured: 0 or -1 picks a free port; outside 0..=65535 fails to listen, as in Go.
    pub port: i64,
    pub base_path: String,
    /// Serve HTTPS with the client TLS certificate (`https_port`) instead of HTTP.
    pub tls: bool,
    /// Requests served per endpoint; shared with the system services, whose `VARZ` reports
    /// them too.
    pub req_stats: HttpReqStats,
}

/// Go's `http_req_stats`: requests per endpoint path since start.
#[derive(Debug, Clone, Default)]
pub struct HttpReqStats(Arc<Mutex<BTreeMap<String, u64>>>);

impl HttpReqStats {
    fn count(&self, path: &str) {
        *self.0.lock().entry(path.to_owned()).or_insert(0) += 1;
    }

    pub fn snapshot(&self) -> BTreeMap<String, u64> {
        self.0.lock().clone()
    }
}

/// Go: `can't listen to the monitor port: listen tcp 127.0.0.1:8222: bind: address already in
/// use` (the binary prefixes `Can't start monitoring: `).
#[derive(Debug, thiserror::Error)]
pub enum MonitorError {
    #[error("can't listen to the monitor port: {0}")]
    Listen(natrium_core::server::ListenError),
}

struct State {
    server: Server,
    host: String,
    /// As configured: Go's /varz reports `http_port` (or `https_port`) unresolved.
    port: i64,
    tls: bool,
    base_path: String,
    req_stats: HttpReqStats,
}

/// Binds the monitoring port (as the client port is bound: dual-stack for a wildcard host),
/// logs Go's `Starting http monitor on HOST:PORT` with the port actually bound, and serves
/// until the server shuts down. The endpoints answer as soon as this returns.
pub async fn start_monitor(
    server: Server,
    settings: MonitorSettings,
) -> Result<SocketAddr, MonitorError> {
    let listener = natrium_core::server::bind_tcp(&settings.host, settings.port)
        .await
        .map_err(MonitorError::Listen)?;
    let bound = listener.local_addr().map_err(|err| {
        MonitorError::Listen(natrium_core::server::ListenError(
            natrium_core::server::go_os_error(&err),
        ))
    })?;
    tracing::info!(
        "Starting {} monitor on {}",
        if settings.tls { "https" } else { "http" },
        natrium_core::server::host_port(&settings.host, bound.port())
    );
    let state = Arc::new(State {
        server: server.clone(),
        host: settings.host,
        port: settings.port,
        tls: settings.tls,
        base_path: settings.base_path.trim_end_matches('/').to_owned(),
        req_stats: settings.req_stats,
    });
    tokio::spawn(accept_loop(server, listener, state));
    Ok(bound)
}

/// Accepts monitoring connections until shutdown, each on its own task while fewer than
/// [`limits::CONNECTIONS_MAX`] are open; one more is closed at once.
async fn accept_loop(server: Server, listener: tokio::net::TcpListener, state: Arc<State>) {
    let open = Arc::new(Semaphore::new(limits::CONNECTIONS_MAX));
    let mut retry_delay = limits::ACCEPT_RETRY_DELAY_MIN;
    loop {
        let accepted = tokio::select! {
            () = server.shutdown_requested() => break,
            accepted = listener.accept() => accepted,
        };
        let Ok((stream, _)) = accepted else {
            // Out of descriptors, most likely: retry later rather than spin.
            tokio::select! {
                () = server.shutdown_requested() => break,
                () = tokio::time::sleep(retry_delay) => {}
            }
            retry_delay = (retry_delay * 2).min(limits::ACCEPT_RETRY_DELAY_MAX);
            continue;
        };
        retry_delay = limits::ACCEPT_RETRY_DELAY_MIN;
        let Ok(permit) = Arc::clone(&open).try_acquire_owned() else {
            drop(stream);
            continue;
        };
        let state = Arc::clone(&state);
        tokio::spawn(async move {
            if state.tls {
                // The certificate in force now: a reload applies to the next handshake.
                if let Some(stream) = crate::https::accept(&state.server, stream).await {
                    serve_http(state, stream).await;
                }
            } else {
                serve_http(state, stream).await;
            }
            drop(permit);
        });
    }
}

/// Serves HTTP/1.1 on one connection (plain or TLS) until the client is done.
async fn serve_http<S>(state: Arc<State>, stream: S)
where
    S: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin + Send + 'static,
{
    let service = hyper::service::service_fn(move |req| {
        let state = Arc::clone(&state);
        async move { Ok::<_, Infallible>(handle(&state, &req)) }
    });
    let _ = hyper::server::conn::http1::Builder::new()
        .timer(TokioTimer::new())
        .header_read_timeout(limits::REQUEST_HEAD_TIMEOUT)
        .serve_connection(TokioIo::new(stream), service)
        .await;
}

fn json_response<T: Serialize>(doc: &T, pretty: bool) -> Response<Full<Bytes>> {
    let body = if pretty {
        serde_json::to_vec_pretty(doc)
    } else {
        serde_json::to_vec(doc)
    };
    // Go's encoder escapes `<`, `>` and `&` (subjects such as `orders.>` included).
    let body = natrium_gofmt::json::go_escape(&body.unwrap_or_default());
    let mut response = Response::new(Full::new(Bytes::from(body)));
    let headers = response.headers_mut();
    headers.insert(
        "Content-Type",
        hyper::header::HeaderValue::from_static("application/json"),
    );
    headers.insert(
        "Access-Control-Allow-Origin",
        hyper::header::HeaderValue::from_static("*"),
    );
    response
}

/// The endpoints Go's index page links (less `raftz` and `debug/vars`, which Natrium does not
/// serve), with Go's labels, then our `/metrics`.
const INDEX_ENDPOINTS: [(&str, &str); 11] = [
    ("varz", "General"),
    ("jsz", "JetStream"),
    ("connz", "Connections"),
    ("accountz", "Accounts"),
    ("accstatz", "Account Stats"),
    ("subsz", "Subscriptions"),
    ("routez", "Routes"),
    ("leafz", "LeafNodes"),
    ("gatewayz", "Gateways"),
    ("healthz", "Health Probe"),
    ("metrics", "Metrics"),
];

fn index_page(base: &str) -> Response<Full<Bytes>> {
    let mut html = String::from(
        "<html lang=\"en\">\n<head><title>NATS Server</title></head>\n<body>\n<h1>Natrium</h1>\n",
    );
    for (endpoint, label) in INDEX_ENDPOINTS {
        let _ = writeln!(html, "<a href=\"{base}/{endpoint}\">{label}</a><br/>");
    }
    html.push_str("</body>\n</html>\n");
    let mut response = Response::new(Full::new(Bytes::from(html)));
    response.headers_mut().insert(
        "Content-Type",
        hyper::header::HeaderValue::from_static("text/html"),
    );
    response
}

fn handle(state: &State, req: &Request<Incoming>) -> Response<Full<Bytes>> {
    let path = req.uri().path();
    let Some(endpoint) = path.strip_prefix(state.base_path.as_str()) else {
        return not_found();
    };
    let endpoint = endpoint.trim_end_matches('/');
    let known = matches!(
        endpoint,
        "" | "/varz"
            | "/connz"
            | "/subsz"
            | "/subscriptionsz"
            | "/healthz"
            | "/routez"
            | "/gatewayz"
            | "/leafz"
            | "/accountz"
            | "/accstatz"
            | "/jsz"
            | "/metrics"
    );
    if known {
        let key = if endpoint.is_empty() { "/" } else { endpoint };
        state.req_stats.count(key);
    }
    match endpoint {
        "" => index_page(&state.base_path),
        "/varz" => {
            let http = HttpInfo {
                host: state.host.clone(),
                port: if state.tls { 0 } else { state.port },
                https_port: if state.tls { state.port } else { 0 },
                base_path: state.base_path.clone(),
                req_stats: state.req_stats.snapshot(),
            };
            json_response(&varz(&state.server, http), true)
        }
        "/connz" => {
            let query = Query::parse(req.uri().query());
            match ConnzOptions::parse(&query) {
                Ok(opts) => json_response(&connz(&state.server, &opts), true),
                Err(err) => bad_request(&err),
            }
        }
        "/subsz" | "/subscriptionsz" => {
            let query = Query::parse(req.uri().query());
            match SubszOptions::parse(&query) {
                Ok(opts) => json_response(&subsz(&state.server, &opts), true),
                Err(err) => bad_request(&err),
            }
        }
        "/healthz" => healthz(&state.server, &Query::parse(req.uri().query())),
        "/routez" => json_response(&crate::cluster::routez(&state.server), true),
        "/gatewayz" => json_response(&crate::cluster::gatewayz(&state.server), true),
        "/leafz" => json_response(&crate::cluster::leafz(&state.server), true),
        "/jsz" => {
            let query = Query::parse(req.uri().query());
            match JszOptions::parse(&query).and_then(|o| jsz(&state.server, &o)) {
                Ok(doc) => json_response(&doc, true),
                Err(err) => bad_request(&err),
            }
        }
        "/accountz" => {
            match crate::accounts::accountz(&state.server, &Query::parse(req.uri().query())) {
                Ok(doc) => json_response(&doc, true),
                Err(err) => bad_request(&err),
            }
        }
        "/accstatz" => {
            match crate::accounts::accstatz(&state.server, &Query::parse(req.uri().query())) {
                Ok(doc) => json_response(&doc, true),
                Err(err) => bad_request(&err),
            }
        }
        "/metrics" => {
            let mut response = Response::new(Full::new(Bytes::from(crate::metrics::metrics(
                &state.server,
            ))));
            response.headers_mut().insert(
                "Content-Type",
                hyper::header::HeaderValue::from_static("text/plain; version=0.0.4"),
            );
            response
        }
        _ => not_found(),
    }
}

fn healthz(server: &Server, q: &Query) -> Response<Full<Bytes>> {
    match crate::healthz::check(server, q) {
        Ok(report) => {
            let mut response = json_response(&report.doc, false);
            *response.status_mut() =
                StatusCode::from_u16(report.code).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
            response
        }
        Err(err) => bad_request(&err),
    }
}

/// Go answers a bad parameter with 400 and the bare error text.
fn bad_request(err: &QueryError) -> Response<Full<Bytes>> {
    let mut response = Response::new(Full::new(Bytes::from(err.0.clone())));
    *response.status_mut() = StatusCode::BAD_REQUEST;
    response
}

fn not_found() -> Response<Full<Bytes>> {
    let mut response = Response::new(Full::new(Bytes::from_static(b"404 page not found\n")));
    *response.status_mut() = StatusCode::NOT_FOUND;
    response
}
