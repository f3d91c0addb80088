//! WebSocket wrapping for any listener: the HTTP upgrade on an accepted (plain or TLS) stream,
//! then the framing adapters the connection's read loop and writer run over.

use std::net::SocketAddr;
use std::sync::Arc;

use natrium_ws::{Handshake, Upgrade};
use tokio::io::{AsyncRead, AsyncWrite};

use crate::client::ClientHandle;
use crate::ws::transport::{Controls, WsRead, WsWrite};

/// Reads HTTP requests from `stream` until one upgrades under `rules` (the response is written)
/// or the peer is refused (Go's reply is written and the stream shut down: `None`). Rejections
/// Go logs are logged with `addr`. The caller bounds the whole exchange with its timeout.
pub async fn upgrade<S>(stream: &mut S, rules: &Handshake, addr: SocketAddr) -> Option<Box<Upgrade>>
where
    S: AsyncRead + AsyncWrite + Unpin,
{
    crate::ws::upgrade::handshake(stream, rules, addr).await
}

/// The read and write adapters for an upgraded connection: [`WsRead`] decodes frames into the
/// protocol's bytes (at most `max_payload` per message) and answers pings and closes through
/// the writer; [`WsWrite`] frames outbound batches, compressed when the upgrade negotiated it.
pub fn transport<R, W>(
    read_half: R,
    write_half: W,
    handle: &Arc<ClientHandle>,
    up: &Upgrade,
    max_payload: usize,
) -> (WsRead<R>, WsWrite<W>) {
    let controls = Arc::new(Controls::default());
    let reader = WsRead::new(
        read_half,
        Arc::clone(handle),
        Arc::clone(&controls),
        up.decoder_config(max_payload),
    );
    let writer = WsWrite::new(write_half, controls, up.encoder_config());
    (reader, writer)
}
