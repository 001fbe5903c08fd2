//! One client connection: requests in, replies and messages out, over any
//! byte stream (tokio TCP, turmoil TCP, an in-memory duplex).

use bytes::BytesMut;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};

use crate::request::{Request, parse_request};
use crate::server::SharedEngine;

/// How much to ask the stream for per read.
const READ_CHUNK: usize = 16 * 1024;

/// Serves one connection until the client closes it, sends `QUIT`, or
/// sends something that is not RESP (then it gets Redis's `-ERR Protocol
/// error: ...` first). Never panics on input; other connections are not
/// affected.
pub async fn serve_connection<S>(shared: SharedEngine, stream: S)
where
    S: AsyncRead + AsyncWrite + Unpin,
{
    let (conn, mut outbox) = shared.register();
    let (mut rd, mut wr) = tokio::io::split(stream);
    let reader = async {
        let mut buf = BytesMut::new();
        'conn: loop {
            loop {
                match parse_request(&mut buf) {
                    Request::Command(args) if args.is_empty() => {}
                    Request::Command(args) => {
                        if shared.execute(conn, args) {
                            break 'conn;
                        }
                    }
                    Request::Incomplete => break,
                    Request::Invalid(e) => {
                        tracing::debug!(?conn, error = %e, "protocol error; closing");
                        shared.send_error(conn, e.reply_text());
                        break 'conn;
                    }
                }
            }
            buf.reserve(READ_CHUNK);
            match rd.read_buf(&mut buf).await {
                Ok(0) => break,
                Ok(_) => {}
                Err(e) => {
                    tracing::debug!(?conn, error = %e, "read failed");
                    break;
                }
            }
        }
        // Dropping the outbox's sender lets the writer finish what is queued.
        shared.unregister(conn);
    };
    let writer = async {
        while let Some(chunk) = outbox.recv().await {
            if wr.write_all(&chunk).await.is_err() {
                break;
            }
        }
        let _ = wr.shutdown().await;
    };
    tokio::join!(reader, writer);
}
