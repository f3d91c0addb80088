//! The framing adapters over in-memory pipes: decoding across reads, pongs and close frames
//! queued for the writer, and the writer's framing (plain, compressed, browser-sized).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]

use std::sync::Arc;
use std::time::Duration;

use natrium_ws::{DecoderConfig, EncoderConfig, Event, FrameDecoder, FrameHeader, OpCode};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio_util::sync::CancellationToken;

use super::{Controls, WsRead, WsWrite};
use crate::client::io::{Inbound, OutSink};
use crate::client::{ClientHandle, ClosedReason, WsPeer};

fn handle() -> Arc<ClientHandle> {
    let addr = "127.0.0.1:5555".parse().unwrap();
    Arc::new(ClientHandle::new_websocket(
        1,
        addr,
        1 << 20,
        CancellationToken::new(),
        WsPeer { client_ip: None },
    ))
}

/// A masked client frame.
fn client_frame(opcode: OpCode, fin: bool, payload: &[u8]) -> Vec<u8> {
    let key = [1, 2, 3, 4];
    let header = FrameHeader {
        fin,
        rsv1: false,
        opcode,
        len: payload.len() as u64,
        mask: Some(key),
    };
    let mut out = header.encode().to_vec();
    out.extend(payload.iter().enumerate().map(|(i, b)| b ^ key[i % 4]));
    out
}

#[tokio::test]
async fn ws_read_decodes_across_reads_and_answers_pings() {
    let (mut client, server) = tokio::io::duplex(1024);
    let controls = Arc::new(Controls::default());
    let mut reader = WsRead::new(
        server,
        handle(),
        Arc::clone(&controls),
        DecoderConfig::default(),
    );
    let mut wire = client_frame(OpCode::Text, false, b"PI");
    wire.extend(client_frame(OpCode::Ping, true, b"p1"));
    wire.extend(client_frame(OpCode::Continuation, true, b"NG\r\n"));
    // Split in the middle of the ping's header.
    let (a, b) = wire.split_at(9);
    client.write_all(a).await.unwrap();
    let mut buf = Vec::with_capacity(512);
    let n = reader.read_into(&mut buf).await.unwrap();
    assert_eq!(&buf[..n], b"PI");
    client.write_all(b).await.unwrap();
    while buf.len() < 6 {
        reader.read_into(&mut buf).await.unwrap();
    }
    assert_eq!(buf, b"PING\r\n");
    assert!(controls.is_pending());
    let mut pongs = Vec::new();
    controls.take_frames(&mut pongs);
    assert_eq!(pongs, [0x8a, 2, b'p', b'1']);
    // A close: the echo is queued and the connection ends as closed by the client.
    client
        .write_all(&client_frame(OpCode::Close, true, b"\x03\xe8ok"))
        .await
        .unwrap();
    assert_eq!(
        reader.read_into(&mut buf).await,
        Err(ClosedReason::ClientClosed)
    );
    assert_eq!(
        controls.take_close().unwrap().as_bytes(),
        b"\x88\x04\x03\xe8ok"
    );
}

#[tokio::test]
async fn ws_read_frame_error_queues_protocol_close() {
    let (mut client, server) = tokio::io::duplex(1024);
    let controls = Arc::new(Controls::default());
    let mut reader = WsRead::new(
        server,
        handle(),
        Arc::clone(&controls),
        DecoderConfig::default(),
    );
    // Data before the bad frame is handed over first.
    let mut wire = client_frame(OpCode::Binary, true, b"PING\r\n");
    wire.extend([0x82, 0x01, b'x']);
    client.write_all(&wire).await.unwrap();
    let mut buf = Vec::with_capacity(512);
    assert_eq!(reader.read_into(&mut buf).await, Ok(6));
    assert_eq!(
        reader.read_into(&mut buf).await,
        Err(ClosedReason::ReadError)
    );
    let close = controls.take_close().unwrap();
    assert_eq!(&close.as_bytes()[2..4], &1002u16.to_be_bytes());
    assert_eq!(&close.as_bytes()[4..], b"mask bit missing");
}

#[test]
fn ws_pong_queue_is_bounded() {
    let controls = Controls::default();
    for _ in 0..10_000 {
        controls.push_pong(&[b'x'; 125]);
    }
    let mut frames = Vec::new();
    controls.take_frames(&mut frames);
    assert!(frames.len() <= super::CONTROL_QUEUE_BYTES_MAX);
    assert!(!controls.is_pending());
}

/// Everything the writer sent, as frames decoded by a client-side decoder.
async fn written_frames(
    cfg: EncoderConfig,
    batches: &[&[u8]],
    close: Option<ClosedReason>,
) -> Vec<(OpCode, Vec<u8>)> {
    let (server, mut client) = tokio::io::duplex(1 << 20);
    let controls = Arc::new(Controls::default());
    controls.push_pong(b"pp");
    let mut writer = WsWrite::new(server, controls, cfg);
    let timer = std::pin::pin!(tokio::time::sleep(Duration::from_secs(5)));
    let mut stall = crate::client::io::Stall::new(timer, Duration::from_secs(5));
    for batch in batches {
        writer.write_batch(batch, &mut stall).await.unwrap();
    }
    writer.write_close(close).await.unwrap();
    writer.shutdown().await.unwrap();
    drop(writer);
    let mut wire = Vec::new();
    client.read_to_end(&mut wire).await.unwrap();
    let mut decoder = FrameDecoder::new(DecoderConfig {
        compression: cfg.compression,
        masking_required: false,
        max_payload: 1 << 20,
    });
    let mut out: Vec<(OpCode, Vec<u8>)> = Vec::new();
    let mut at = 0;
    loop {
        let d = decoder.decode(&mut wire[at..]).unwrap();
        at += d.consumed;
        match d.event {
            None => break,
            Some(Event::Data(b)) => match out.last_mut() {
                Some((OpCode::Binary, data)) => data.extend_from_slice(b),
                _ => out.push((OpCode::Binary, b.to_vec())),
            },
            Some(Event::Ping(p)) => out.push((OpCode::Ping, p.to_vec())),
            Some(Event::Pong(p)) => out.push((OpCode::Pong, p.to_vec())),
            Some(Event::Close(c)) => {
                out.push((OpCode::Close, c.reply().as_bytes().to_vec()));
                break;
            }
        }
    }
    out
}

#[tokio::test]
async fn ws_write_frames_pongs_batches_and_close() {
    let big = vec![b'y'; 10_000];
    let frames = written_frames(
        EncoderConfig::default(),
        &[b"MSG a 1 2\r\nhi\r\n", &big],
        Some(ClosedReason::ServerShutdown),
    )
    .await;
    assert_eq!(frames[0], (OpCode::Pong, b"pp".to_vec()));
    let mut data = b"MSG a 1 2\r\nhi\r\n".to_vec();
    data.extend_from_slice(&big);
    assert_eq!(frames[1], (OpCode::Binary, data));
    assert_eq!(frames[2].0, OpCode::Close);
    assert_eq!(&frames[2].1[2..], b"Server Shutdown");
    // Compressed and browser framing carry the same bytes.
    for cfg in [
        EncoderConfig {
            compression: true,
            ..EncoderConfig::default()
        },
        EncoderConfig {
            browser: true,
            ..EncoderConfig::default()
        },
    ] {
        let frames = written_frames(cfg, &[&big], Some(ClosedReason::ReadError)).await;
        assert_eq!(frames[1], (OpCode::Binary, big.clone()), "{cfg:?}");
        // No close frame after a read error, as in Go.
        assert_eq!(frames.len(), 2, "{cfg:?}");
    }
}
