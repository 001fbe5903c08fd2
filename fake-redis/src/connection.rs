//! One client connection: requests in, replies and messages out, over any
//! byte stream (tokio TCP, turmoil TCP, an in-memory duplex).
//!
//! One task serves both directions, as Redis's event loop does: it reads,
//! runs the whole pipeline it read, and writes what that produced at once
//! (Redis writes its replies before it next waits, in `beforeSleep`). A
//! second task woken to write would add a wake-up and two locks of the
//! engine to every unpipelined request. Reading goes on while a write is
//! pending, so a client that sends a long pipeline before reading a
//! reply never deadlocks with the server.

use bytes::{Bytes, BytesMut};
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};

use crate::ConnId;
use crate::outbox::Take;
use crate::request::{ProtocolError, Request, RequestReader};
use crate::server::SharedEngine;

/// How much to ask the stream for per read.
const READ_CHUNK: usize = 16 * 1024;

/// Most commands run under one acquisition of the engine's lock.
const MAX_BATCH: usize = 256;

/// Most bytes one connection may have waiting to be parsed (Redis's
/// default `client-query-buffer-limit`, 1 GiB).
const MAX_QUERY_BUFFER: usize = 1024 * 1024 * 1024;

/// Runs every complete request in `buf`, in batches of at most
/// [`MAX_BATCH`] under one lock; whether the connection must close, or the
/// protocol error that ends it (after the commands before it ran).
fn run_requests(
    shared: &SharedEngine,
    conn: ConnId,
    requests: &mut RequestReader,
    buf: &mut BytesMut,
) -> Result<bool, ProtocolError> {
    let mut batch = Vec::new();
    loop {
        match requests.next_request(buf) {
            Request::Command(args) if args.is_empty() => {}
            Request::Command(args) => {
                batch.push(args);
                // A long pipeline runs in slices, so one client holds the
                // engine for a bounded time.
                if batch.len() >= MAX_BATCH && shared.execute(conn, std::mem::take(&mut batch)) {
                    return Ok(true);
                }
            }
            Request::Incomplete => break,
            Request::Invalid(e) => {
                if !batch.is_empty() && shared.execute(conn, batch) {
                    return Ok(true);
                }
                return Err(e);
            }
        }
    }
    Ok(!batch.is_empty() && shared.execute(conn, batch))
}

/// The read side of a connection: bytes not yet parsed, the parser's
/// state, and whether the client is still heard.
struct Input {
    buf: BytesMut,
    requests: RequestReader,
    open: bool,
}

impl Input {
    /// Runs what one read brought. When the connection stops reading (the
    /// client closed it or sent `QUIT`, a protocol error, the query
    /// buffer's limit), the engine forgets the client and its output is
    /// written before the socket closes.
    fn receive(&mut self, shared: &SharedEngine, conn: ConnId, read: std::io::Result<usize>) {
        let more = match read {
            Ok(0) => false,
            Ok(_) => match run_requests(shared, conn, &mut self.requests, &mut self.buf) {
                Ok(close) => !close,
                Err(e) => {
                    tracing::debug!(?conn, error = %e, "protocol error; closing");
                    shared.send_error(conn, e.reply_text());
                    false
                }
            },
            Err(e) => {
                tracing::debug!(?conn, error = %e, "read failed");
                false
            }
        };
        if more && self.buf.len() > MAX_QUERY_BUFFER {
            // Redis's client-query-buffer-limit: drop the client, no reply.
            tracing::debug!(?conn, "query buffer over limit; closing");
        } else if more {
            self.buf.reserve(READ_CHUNK);
            return;
        }
        self.open = false;
        shared.unregister(conn);
    }
}

/// Serves one connection until the client closes it, sends `QUIT`, sends
/// something that is not RESP (then it gets Redis's `-ERR Protocol error:
/// ...` first), or passes its output buffer limit (then it is closed at
/// once, its output dropped). Never panics on input; other connections are
/// not affected.
pub async fn serve_connection<S>(shared: SharedEngine, stream: S)
where
    S: AsyncRead + AsyncWrite + Unpin,
{
    let (conn, signals) = shared.register();
    let (mut rd, mut wr) = tokio::io::split(stream);
    let mut input = Input {
        buf: BytesMut::with_capacity(READ_CHUNK),
        requests: RequestReader::new(),
        open: true,
    };
    // The chunk being written and how much of it has gone.
    let mut out: Option<(Bytes, usize)> = None;
    loop {
        if out.is_none() {
            match shared.take(conn) {
                Take::Write(chunk) => out = Some((chunk, 0)),
                Take::Wait => {}
                Take::Done => break,
            }
        }
        let pending = out.as_ref().map_or(&[][..], |(chunk, at)| &chunk[*at..]);
        // Biased, so a seeded runtime (turmoil) replays it exactly; the
        // write goes first, so a read's replies leave before the next read.
        tokio::select! {
            biased;
            () = signals.killed.notified() => break,
            wrote = wr.write(pending), if !pending.is_empty() => match wrote {
                Ok(n) if n > 0 => {
                    if let Some((chunk, at)) = &mut out {
                        *at += n;
                        if *at == chunk.len() {
                            out = None;
                        }
                    }
                }
                _ => {
                    shared.kill(conn);
                    break;
                }
            },
            read = rd.read_buf(&mut input.buf), if input.open => {
                input.receive(&shared, conn, read);
            }
            () = signals.output.notified(), if pending.is_empty() => {}
        }
    }
    let _ = wr.shutdown().await;
    shared.remove(conn);
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use tokio::io::{AsyncReadExt, AsyncWriteExt, DuplexStream, duplex};

    use super::serve_connection;
    use crate::{Engine, LockScript, ManualClock, SharedEngine};

    fn open(shared: &SharedEngine) -> DuplexStream {
        let (client, server) = duplex(64 * 1024);
        tokio::spawn(serve_connection(shared.clone(), server));
        client
    }

    async fn expect(stream: &mut DuplexStream, want: &[u8]) {
        let mut got = vec![0u8; want.len()];
        stream.read_exact(&mut got).await.expect("read");
        assert_eq!(String::from_utf8_lossy(&got), String::from_utf8_lossy(want));
    }

    /// Over an in-memory stream (the server is generic over the byte
    /// stream, as turmoil's TCP needs): a RESP3 subscriber gets the unlock
    /// script's message as a push, the publisher gets the script's reply,
    /// and QUIT closes only its own connection. A delivery lost between
    /// connections or written in the wrong protocol fails the byte match.
    #[tokio::test]
    async fn unlock_message_reaches_a_resp3_subscriber() {
        let shared = SharedEngine::new(Engine::new(Arc::new(ManualClock::new(0))));
        let mut sub = open(&shared);
        let mut holder = open(&shared);
        sub.write_all(b"HELLO 3\r\nSUBSCRIBE ch\r\n")
            .await
            .expect("write");
        let mut hello = vec![0u8; 3];
        sub.read_exact(&mut hello).await.expect("read");
        assert_eq!(&hello, b"%7\r");
        let mut rest = Vec::new();
        while !rest.ends_with(b"*0\r\n") {
            rest.push(sub.read_u8().await.expect("read"));
        }
        expect(&mut sub, b">3\r\n$9\r\nsubscribe\r\n$2\r\nch\r\n:1\r\n").await;

        let eval = |s: LockScript, words: &[&str]| {
            let mut all = vec!["EVAL", s.text()];
            all.extend(words);
            let mut out = format!("*{}\r\n", all.len());
            for w in all {
                out.push_str(&format!("${}\r\n{w}\r\n", w.len()));
            }
            out
        };
        let acquire = eval(LockScript::Acquire, &["1", "lock", "30000", "a"]);
        let unlock = eval(LockScript::Unlock, &["2", "lock", "ch", "0", "30000", "a"]);
        holder.write_all(acquire.as_bytes()).await.expect("write");
        expect(&mut holder, b"$-1\r\n").await;
        holder.write_all(unlock.as_bytes()).await.expect("write");
        expect(&mut holder, b":1\r\n").await;
        expect(&mut sub, b">3\r\n$7\r\nmessage\r\n$2\r\nch\r\n$1\r\n0\r\n").await;

        holder.write_all(b"QUIT\r\n").await.expect("write");
        expect(&mut holder, b"+OK\r\n").await;
        assert_eq!(holder.read_u8().await.ok(), None, "QUIT must close");
        sub.write_all(b"PING\r\n").await.expect("write");
        expect(&mut sub, b"+PONG\r\n").await;
    }

    /// A protocol error gets Redis's text and closes that connection only.
    #[tokio::test]
    async fn protocol_error_closes_only_its_connection() {
        let shared = SharedEngine::new(Engine::new(Arc::new(ManualClock::new(0))));
        let mut bad = open(&shared);
        let mut good = open(&shared);
        bad.write_all(b"*1\r\n+PING\r\n").await.expect("write");
        expect(&mut bad, b"-ERR Protocol error: expected '$', got '+'\r\n").await;
        assert_eq!(bad.read_u8().await.ok(), None, "connection must close");
        good.write_all(b"*1\r\n$4\r\nPING\r\n")
            .await
            .expect("write");
        expect(&mut good, b"+PONG\r\n").await;
    }
}
