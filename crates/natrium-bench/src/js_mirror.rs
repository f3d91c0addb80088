//! JetStream mirror row: an origin file stream filled with `messages` messages (untimed), then
//! a file mirror of it created and timed until its stream info counts every message.

use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};

use crate::js_fetch::{fill_stream, request};
use crate::outcome::Outcome;
use crate::wire::{Conn, Endpoint};

/// How often the mirror's info is asked for while it catches up: often enough to time a
/// multi-second catch-up within a percent, rarely enough to cost the server nothing.
const POLL: Duration = Duration::from_millis(20);
/// A catch-up taking longer than this fails the run.
const CATCH_UP_MAX: Duration = Duration::from_secs(300);

/// The messages a stream's info reports.
fn stored(conn: &mut Conn, stream: &str) -> Result<u64> {
    let info = request(conn, &format!("$JS.API.STREAM.INFO.{stream}"), "")?;
    let info: serde_json::Value = serde_json::from_slice(&info)?;
    info["state"]["messages"]
        .as_u64()
        .with_context(|| format!("no state in stream info: {info}"))
}

pub fn catch_up(ep: &Endpoint, payload: usize, messages: u64) -> Result<Outcome> {
    let mut conn = Conn::open(ep)?;
    fill_stream(&mut conn, "ORIGIN", "origin.msgs", payload, messages)?;
    let body = r#"{"name":"MIRROR","storage":"file","mirror":{"name":"ORIGIN"}}"#;
    let start = Instant::now();
    let answer = request(&mut conn, "$JS.API.STREAM.CREATE.MIRROR", body)?;
    if !answer.windows(10).any(|w| w == b"did_create") {
        bail!("mirror create failed: {}", String::from_utf8_lossy(&answer));
    }
    loop {
        let got = stored(&mut conn, "MIRROR")?;
        if got >= messages {
            break;
        }
        if start.elapsed() > CATCH_UP_MAX {
            bail!("mirror holds {got} of {messages} after {CATCH_UP_MAX:?}");
        }
        std::thread::sleep(POLL);
    }
    Ok(Outcome {
        msgs: messages,
        payload_bytes: messages * payload as u64,
        elapsed: start.elapsed(),
        ..Outcome::default()
    })
}
