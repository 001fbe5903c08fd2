//! A blocking RESP client that keeps raw reply bytes, and RESP framing.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::Duration;

pub(crate) const SENTINEL: &str = "__sentinel__";

/// A blocking RESP client that keeps raw reply bytes.
pub(crate) struct Client {
    stream: TcpStream,
    buf: Vec<u8>,
}

impl Client {
    pub(crate) fn connect(addr: SocketAddr) -> Client {
        let stream = TcpStream::connect(addr).unwrap_or_else(|e| panic!("connect {addr}: {e}"));
        stream
            .set_read_timeout(Some(Duration::from_secs(10)))
            .expect("set timeout");
        stream.set_nodelay(true).expect("nodelay");
        Client {
            stream,
            buf: Vec::new(),
        }
    }

    pub(crate) fn send(&mut self, args: &[Vec<u8>]) {
        let mut out = format!("*{}\r\n", args.len()).into_bytes();
        for a in args {
            out.extend(format!("${}\r\n", a.len()).as_bytes());
            out.extend(a);
            out.extend(b"\r\n");
        }
        self.stream.write_all(&out).expect("write");
    }

    pub(crate) fn read_frame(&mut self) -> Result<Vec<u8>, String> {
        loop {
            if let Some(n) = frame_len(&self.buf, 0) {
                return Ok(self.buf.drain(..n).collect());
            }
            let mut chunk = [0u8; 16384];
            match self.stream.read(&mut chunk) {
                Ok(0) => return Err(format!("connection closed; pending {:?}", show(&self.buf))),
                Ok(n) => self.buf.extend(&chunk[..n]),
                Err(e) => return Err(format!("read: {e}; pending {:?}", show(&self.buf))),
            }
        }
    }

    /// Sends `args` then the sentinel; every frame up to and including the
    /// sentinel's reply.
    pub(crate) fn roundtrip(&mut self, args: &[Vec<u8>]) -> Result<Vec<Vec<u8>>, String> {
        self.send(args);
        self.send(&[b"PING".to_vec(), SENTINEL.as_bytes().to_vec()]);
        let mut frames: Vec<Vec<u8>> = Vec::new();
        loop {
            let f = self.read_frame().map_err(|e| {
                let seen: Vec<String> = frames.iter().map(|f| show(f)).collect();
                format!("{e}; after the frames {seen:?}")
            })?;
            // The sentinel's own reply: a bulk, `["pong", sentinel]` when
            // subscribed, or `+QUEUED` inside MULTI (not a frame that merely
            // contains it, such as an EXEC reply with queued sentinels).
            let bulk = format!("${}\r\n{SENTINEL}\r\n", SENTINEL.len());
            let pong = format!("*2\r\n$4\r\npong\r\n{bulk}");
            let done = f == bulk.as_bytes()
                || f == pong.as_bytes()
                || (f == b"+QUEUED\r\n" && !frames.is_empty());
            frames.push(f);
            if done {
                return Ok(frames);
            }
        }
    }
}

pub(crate) fn show(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

pub(crate) fn line_end(buf: &[u8], at: usize) -> Option<usize> {
    buf.get(at..)?
        .windows(2)
        .position(|w| w == b"\r\n")
        .map(|p| at + p)
}

/// The length of the RESP2/RESP3 frame starting at `at`, if complete.
pub(crate) fn frame_len(buf: &[u8], at: usize) -> Option<usize> {
    let tag = *buf.get(at)?;
    let end = line_end(buf, at)?;
    let header = std::str::from_utf8(&buf[at + 1..end]).ok()?;
    let after = end + 2 - at;
    match tag {
        b'+' | b'-' | b':' | b'_' | b',' | b'#' => Some(after),
        b'$' => {
            let n: i64 = header.parse().ok()?;
            if n < 0 {
                return Some(after);
            }
            let total = after + n as usize + 2;
            (buf.len() >= at + total).then_some(total)
        }
        b'*' | b'>' | b'~' | b'%' => {
            let n: i64 = header.parse().ok()?;
            let items = if tag == b'%' { n * 2 } else { n };
            let mut len = after;
            for _ in 0..items.max(0) {
                len += frame_len(buf, at + len)?;
            }
            Some(len)
        }
        _ => panic!("not RESP at {at}: {:?}", show(&buf[at..])),
    }
}
