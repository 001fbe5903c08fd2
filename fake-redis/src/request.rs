//! Reading client requests off the wire: Redis 7.0's framing rules in
//! front of redis-protocol's RESP2 decoder.
//!
//! Redis takes two request forms: a multibulk (`*2\r\n$3\r\nGET\r\n$1\r\nk\r\n`),
//! which is RESP, and an inline command (`GET k\r\n`, split like a shell
//! line), which is not. Malformed input gets Redis's `-ERR Protocol error:
//! ...` and the connection is closed.
//!
//! # Who does what
//!
//! - **The guard** (this file) scans a multibulk's header lines in the read
//!   buffer as Redis 7.0's `processMultibulkBuffer` does. It checks each
//!   `*N` and `$N` line against Redis's limits ([`MAX_MULTIBULK`],
//!   [`MAX_BULK`], [`MAX_INLINE`] for a line with no end), gives Redis's
//!   exact error texts ([`ProtocolError`]) and finds where the request
//!   ends. It reads numbers in place and keeps only a count and an offset,
//!   so nothing is allocated on a header's word: a client declaring a
//!   512 MiB bulk costs what it has sent. It builds no arguments.
//! - **The arguments** are then each bulk's bytes, copied out of the read
//!   buffer (a stored key must not keep a whole read chunk alive). When
//!   every header line of the request ends in `\r\n` (what clients send)
//!   the guard has already found each bulk, and they are sliced out
//!   directly. Otherwise **redis-protocol**
//!   (`resp2::decode::decode_bytes_mut`) decodes exactly the bytes of that
//!   complete request, and its frame's bulks are the arguments or its
//!   error is the reply (see the divergence below). Both ways give the
//!   same arguments (`sliced_bulks_match_the_decoder`).
//! - **Inline commands** are split by `split_args`, Redis's
//!   `sdssplitargs` quoting rules.
//!
//! Why the guard, rather than redis-protocol alone: its decoder has none
//! of Redis's limits or error texts, accepts element types Redis refuses
//! (`+`, `:`, nested arrays), answers `*-1` with a null rather than an
//! empty command, and, given a partial frame, only says "incomplete", so
//! a long request arriving in pieces would be re-decoded from its start on
//! every read. The guard keeps its place across reads ([`RequestReader`])
//! and hands the decoder one complete request of bulks, once.
//!
//! # Divergence from Redis
//!
//! Redis ends a header line at its `\r` and skips the byte after it
//! unchecked; redis-protocol requires `\r\n`. A header whose `\r` is
//! followed by anything else (`*1\rX$4\r\nPING\r\n`) is a command to
//! Redis but here gets `-ERR Protocol error: <redis-protocol's reason>`
//! ([`ProtocolError::Decoder`]) and the connection closes. No client
//! writes that. The two bytes after a bulk's data are skipped unchecked
//! by both (`*1\r\n$4\r\nPINGxx` is `PING`). Both facts are pinned by
//! this file's tests and, against a real server, by `tests/wire.rs`.

use bytes::{Buf, Bytes, BytesMut};
use redis_protocol::error::RedisProtocolError;
use redis_protocol::resp2::{decode::decode_bytes_mut, types::BytesFrame};

/// Longest inline request or header line without a line end (Redis's
/// `PROTO_INLINE_MAX_SIZE`).
pub const MAX_INLINE: usize = 64 * 1024;
/// Largest bulk string a client may declare (Redis's `proto-max-bulk-len`).
pub const MAX_BULK: i64 = 512 * 1024 * 1024;
/// Largest element count of a multibulk (Redis's `INT_MAX`).
pub const MAX_MULTIBULK: i64 = i32::MAX as i64;

/// Longest redis-protocol reason quoted in a [`ProtocolError::Decoder`].
const MAX_REASON: usize = 100;

/// What the front of the read buffer holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Request {
    /// One complete command (possibly empty: Redis ignores `*0` and blank
    /// lines).
    Command(Vec<Bytes>),
    /// More bytes are needed.
    Incomplete,
    /// The input can never be a valid request: reply `-ERR Protocol error:
    /// <text>` and close the connection.
    Invalid(ProtocolError),
}

/// A fatal framing error; `Display` is the text after `ERR Protocol error: `.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ProtocolError {
    /// `*` header not a valid count.
    #[error("invalid multibulk length")]
    InvalidMultibulkLength,
    /// `$` header not a valid length.
    #[error("invalid bulk length")]
    InvalidBulkLength,
    /// A multibulk element that does not start with `$`.
    #[error("expected '$', got '{0}'")]
    ExpectedDollar(char),
    /// No line end within [`MAX_INLINE`] bytes of a multibulk header.
    #[error("too big mbulk count string")]
    TooBigMultibulkCount,
    /// No line end within [`MAX_INLINE`] bytes of a bulk header.
    #[error("too big bulk count string")]
    TooBigBulkCount,
    /// No line end within [`MAX_INLINE`] bytes of an inline command.
    #[error("too big inline request")]
    TooBigInline,
    /// An inline command with an open quote.
    #[error("unbalanced quotes in request")]
    UnbalancedQuotes,
    /// redis-protocol refused a request Redis would take (see the module
    /// docs): its reason, shortened to one line. Not a Redis text.
    #[error("{0}")]
    Decoder(String),
}

impl ProtocolError {
    /// The full error reply text, as Redis writes it.
    pub fn reply_text(&self) -> String {
        format!("ERR Protocol error: {self}")
    }

    fn decoder(reason: &str) -> ProtocolError {
        // One line (it becomes a simple error), and short: redis-protocol
        // may quote the rest of the input.
        let line: String = reason
            .chars()
            .map(|c| if c.is_control() { ' ' } else { c })
            .take(MAX_REASON)
            .collect();
        ProtocolError::Decoder(line)
    }
}

impl From<RedisProtocolError> for ProtocolError {
    fn from(e: RedisProtocolError) -> Self {
        match e.details() {
            "" => ProtocolError::decoder(e.kind().to_str()),
            details => ProtocolError::decoder(details),
        }
    }
}

/// Redis searches with `strchr`, which also stops at a NUL byte: input with
/// a NUL before the line end waits for more, as in Redis.
fn find(buf: &[u8], byte: u8) -> Option<usize> {
    for (i, &b) in buf.iter().enumerate() {
        if b == byte {
            return Some(i);
        }
        if b == 0 {
            return None;
        }
    }
    None
}

/// Takes the next request from the front of `buf`: a command's bytes are
/// consumed, an incomplete request's are left, and after an invalid one
/// the connection closes, so what is left does not matter. Stateless: a
/// connection reading in pieces should keep a [`RequestReader`].
pub fn parse_request(buf: &mut BytesMut) -> Request {
    RequestReader::default().next_request(buf)
}

/// How far into a multibulk the guard has checked.
#[derive(Debug, Clone)]
struct Progress {
    /// The declared element count (`<= 0` is an empty command to Redis).
    count: i64,
    /// Elements still to check.
    remaining: i64,
    /// Where the next element starts (once all are checked: the request's
    /// length).
    pos: usize,
    /// Every header line checked so far ends in `\r\n`: then the request
    /// is the bulks the guard delimited, and they are sliced out directly.
    crlf: bool,
}

/// Reads requests off a connection's growing buffer. It remembers how far
/// into an unfinished multibulk it has checked, so a long request arriving
/// in many pieces is scanned once, not once per piece.
#[derive(Debug, Default)]
pub struct RequestReader {
    progress: Option<Progress>,
}

impl RequestReader {
    /// A reader at the start of a stream.
    pub fn new() -> Self {
        Self::default()
    }

    /// Takes the next request from the front of `buf` (as [`parse_request`]
    /// does), which must hold the same bytes as at the previous call plus
    /// any that arrived since.
    pub fn next_request(&mut self, buf: &mut BytesMut) -> Request {
        let mut progress = match self.progress.take() {
            Some(p) => p,
            None => match buf.first() {
                None => return Request::Incomplete,
                Some(b'*') => match multibulk_header(buf) {
                    Ok(Some(p)) => p,
                    Ok(None) => return Request::Incomplete,
                    Err(e) => return Request::Invalid(e),
                },
                Some(_) => return parse_inline(buf),
            },
        };
        match check_elements(&mut progress, buf) {
            Ok(true) if progress.count <= 0 => {
                buf.advance(progress.pos);
                Request::Command(Vec::new())
            }
            Ok(true) if progress.crlf => Request::Command(slice_bulks(buf, progress.pos)),
            Ok(true) => decode(buf, progress.pos),
            Ok(false) => {
                self.progress = Some(progress);
                Request::Incomplete
            }
            Err(e) => Request::Invalid(e),
        }
    }
}

/// The bulks of the complete request that is the first `len` bytes of
/// `buf`, which the guard checked and found framed by `\r\n` throughout:
/// each header is then exactly what redis-protocol would read, so its
/// decoder (which would find the same lines again, build a frame and
/// collect it) is needed only for requests it reads differently (see
/// [`decode`]). This was a quarter of the server's time under
/// `redis-benchmark -P 16`.
fn slice_bulks(buf: &mut BytesMut, len: usize) -> Vec<Bytes> {
    let request = &buf[..len];
    let line_end = |from: usize| from + find(&request[from..], b'\r').unwrap_or(0);
    let cr = line_end(0);
    let count = crate::number::parse_i64(&request[1..cr]).unwrap_or(0);
    let count = usize::try_from(count).unwrap_or(0);
    let mut args = Vec::with_capacity(count);
    let mut pos = cr + 2;
    for _ in 0..count {
        let cr = line_end(pos);
        let size = crate::number::parse_i64(&request[pos + 1..cr]).unwrap_or(0);
        let start = cr + 2;
        let end = start + usize::try_from(size).unwrap_or(0);
        // An owned copy: a slice would pin the whole read buffer for as
        // long as the key or value it becomes lives.
        args.push(Bytes::copy_from_slice(&request[start..end]));
        // The two bytes after the bulk are skipped unchecked, as by Redis.
        pos = end + 2;
    }
    buf.advance(len);
    args
}

/// redis-protocol decodes the complete request that is the first `len`
/// bytes of `buf`; its bulks are the command.
fn decode(buf: &mut BytesMut, len: usize) -> Request {
    let mut request = buf.split_to(len);
    let items = match decode_bytes_mut(&mut request) {
        Ok(Some((BytesFrame::Array(items), used, _))) if used == len => items,
        // The guard delimited a request the decoder reads differently: only
        // a header line whose '\r' is not followed by '\n' does that.
        Ok(Some(_)) => {
            return Request::Invalid(ProtocolError::decoder("frame ends elsewhere"));
        }
        Ok(None) => return Request::Invalid(ProtocolError::decoder("incomplete frame")),
        Err(e) => return Request::Invalid(e.into()),
    };
    let args: Option<Vec<Bytes>> = items
        .into_iter()
        .map(|item| match item {
            // An owned copy: a slice would pin the whole read buffer for as
            // long as the key or value it becomes lives.
            BytesFrame::BulkString(b) => Some(Bytes::copy_from_slice(&b)),
            _ => None,
        })
        .collect();
    match args {
        Some(args) => Request::Command(args),
        // The guard lets only `$` elements through.
        None => Request::Invalid(ProtocolError::decoder("element is not a bulk string")),
    }
}

/// One header line (`*N` / `$N`): `Ok(None)` when incomplete, else where
/// its `\r` is and where the line's content ends.
fn header_line(
    buf: &[u8],
    too_big: ProtocolError,
) -> Result<Option<(usize, usize)>, ProtocolError> {
    match find(buf, b'\r') {
        None if buf.len() > MAX_INLINE => Err(too_big),
        None => Ok(None),
        // The byte after '\r' must have arrived too (Redis does not check
        // that it is a '\n'; redis-protocol does).
        Some(cr) if cr + 2 > buf.len() => Ok(None),
        Some(cr) => Ok(Some((cr, cr + 2))),
    }
}

/// The `*N` line: `None` when incomplete.
fn multibulk_header(buf: &[u8]) -> Result<Option<Progress>, ProtocolError> {
    let Some((cr, pos)) = header_line(buf, ProtocolError::TooBigMultibulkCount)? else {
        return Ok(None);
    };
    let count = crate::number::parse_i64(&buf[1..cr])
        .filter(|n| *n <= MAX_MULTIBULK)
        .ok_or(ProtocolError::InvalidMultibulkLength)?;
    Ok(Some(Progress {
        count,
        remaining: count.max(0),
        pos,
        crlf: buf[cr + 1] == b'\n',
    }))
}

/// Checks the elements that have fully arrived; whether all have. Reads
/// each `$N` in place and skips the data by offset: a declared length is
/// only a promise, never reserved.
fn check_elements(p: &mut Progress, buf: &[u8]) -> Result<bool, ProtocolError> {
    while p.remaining > 0 {
        let rest = &buf[p.pos..];
        let Some((cr, body)) = header_line(rest, ProtocolError::TooBigBulkCount)? else {
            return Ok(false);
        };
        if rest[0] != b'$' {
            return Err(ProtocolError::ExpectedDollar(char::from(rest[0])));
        }
        let len = crate::number::parse_i64(&rest[1..cr])
            .filter(|n| (0..=MAX_BULK).contains(n))
            .ok_or(ProtocolError::InvalidBulkLength)?;
        let len = usize::try_from(len).map_err(|_| ProtocolError::InvalidBulkLength)?;
        p.crlf &= rest[cr + 1] == b'\n';
        // The bulk and the two bytes after it (Redis skips them unchecked).
        if rest.len() < body + len + 2 {
            return Ok(false);
        }
        p.pos += body + len + 2;
        p.remaining -= 1;
    }
    Ok(true)
}

fn parse_inline(buf: &mut BytesMut) -> Request {
    let Some(nl) = find(buf, b'\n') else {
        return if buf.len() > MAX_INLINE {
            Request::Invalid(ProtocolError::TooBigInline)
        } else {
            Request::Incomplete
        };
    };
    let end = if nl > 0 && buf[nl - 1] == b'\r' {
        nl - 1
    } else {
        nl
    };
    let parsed = split_args(&buf[..end]);
    match parsed {
        Some(args) => {
            buf.advance(nl + 1);
            Request::Command(args)
        }
        None => Request::Invalid(ProtocolError::UnbalancedQuotes),
    }
}

fn hex(b: u8) -> Option<u8> {
    char::from(b)
        .to_digit(16)
        .and_then(|d| u8::try_from(d).ok())
}

/// Past a closing quote at `i`, which must end the word (`"a"b` is an
/// unbalanced request to Redis).
fn after_closing_quote(line: &[u8], i: usize) -> Option<usize> {
    match line.get(i + 1) {
        Some(next) if !next.is_ascii_whitespace() => None,
        _ => Some(i + 1),
    }
}

/// Redis's `sdssplitargs`: words split on whitespace, `"..."` with C-like
/// escapes (`\xHH`, `\n`, ...), `'...'` with `\'`. A closing quote must be
/// followed by whitespace or the end. `None` for unbalanced quotes.
pub(crate) fn split_args(line: &[u8]) -> Option<Vec<Bytes>> {
    let mut args = Vec::new();
    let mut i = 0;
    let n = line.len();
    loop {
        while i < n && line[i].is_ascii_whitespace() {
            i += 1;
        }
        if i >= n {
            return Some(args);
        }
        let mut word = Vec::new();
        let mut in_dq = false;
        let mut in_sq = false;
        loop {
            if in_dq {
                if i >= n {
                    return None;
                }
                if line[i] == b'\\'
                    && i + 3 < n
                    && line[i + 1] == b'x'
                    && let (Some(h), Some(l)) = (hex(line[i + 2]), hex(line[i + 3]))
                {
                    word.push(h * 16 + l);
                    i += 3;
                } else if line[i] == b'\\' && i + 1 < n {
                    i += 1;
                    word.push(match line[i] {
                        b'n' => b'\n',
                        b'r' => b'\r',
                        b't' => b'\t',
                        b'b' => 8,
                        b'a' => 7,
                        other => other,
                    });
                } else if line[i] == b'"' {
                    i = after_closing_quote(line, i)?;
                    break;
                } else {
                    word.push(line[i]);
                }
            } else if in_sq {
                if i >= n {
                    return None;
                }
                if line[i] == b'\\' && i + 1 < n && line[i + 1] == b'\'' {
                    i += 1;
                    word.push(b'\'');
                } else if line[i] == b'\'' {
                    i = after_closing_quote(line, i)?;
                    break;
                } else {
                    word.push(line[i]);
                }
            } else {
                if i >= n {
                    break;
                }
                match line[i] {
                    b' ' | b'\n' | b'\r' | b'\t' | 0 => break,
                    b'"' => in_dq = true,
                    b'\'' => in_sq = true,
                    c => word.push(c),
                }
            }
            i += 1;
        }
        args.push(Bytes::from(word));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A request fed one byte at a time to one reader parses exactly as
    /// when it arrives whole, and a second request right behind it follows.
    #[test]
    fn reader_resumes_across_pieces() {
        let input = b"*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$5\r\nhello\r\n*1\r\n$4\r\nPING\r\n";
        let mut reader = RequestReader::new();
        let mut buf = BytesMut::new();
        let mut got = Vec::new();
        for &b in input {
            buf.extend_from_slice(&[b]);
            loop {
                match reader.next_request(&mut buf) {
                    Request::Command(args) => got.push(args),
                    Request::Incomplete => break,
                    Request::Invalid(e) => panic!("{e}"),
                }
            }
        }
        let words = |w: &[&str]| -> Vec<Bytes> {
            w.iter()
                .map(|s| Bytes::copy_from_slice(s.as_bytes()))
                .collect()
        };
        assert_eq!(got, vec![words(&["SET", "k", "hello"]), words(&["PING"])]);
        assert!(buf.is_empty());
    }

    /// The guard's own slicing and redis-protocol's decoder take the same
    /// arguments out of every request framed by `\r\n`, whatever its
    /// bulks hold (empty, binary, line ends, a NUL, `$`), and leave the
    /// same bytes behind.
    #[test]
    fn sliced_bulks_match_the_decoder() {
        let requests: &[&[u8]] = &[
            b"*1\r\n$4\r\nPING\r\n",
            b"*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$5\r\nhello\r\nrest",
            b"*2\r\n$0\r\n\r\n$3\r\na\0b\r\n",
            b"*2\r\n$4\r\n\r\n\r\n\r\n$2\r\n$1\r\n*1\r\n",
            b"*1\r\n$4\r\nPINGxx",
            b"*2\r\n$10\r\n0123456789\r\n$1\r\n\xff\r\n",
        ];
        for input in requests {
            let mut p = multibulk_header(input).expect("valid").expect("complete");
            assert!(check_elements(&mut p, input).expect("valid"));
            assert!(p.crlf);
            let (mut a, mut b) = (BytesMut::from(*input), BytesMut::from(*input));
            let sliced = Request::Command(slice_bulks(&mut a, p.pos));
            assert_eq!(
                sliced,
                decode(&mut b, p.pos),
                "{:?}",
                String::from_utf8_lossy(input)
            );
            assert_eq!(a, b);
        }
    }

    fn parse(input: &[u8]) -> (Request, usize) {
        let mut buf = BytesMut::from(input);
        let r = parse_request(&mut buf);
        (r, buf.len())
    }

    fn cmd(words: &[&str]) -> Request {
        Request::Command(
            words
                .iter()
                .map(|w| Bytes::copy_from_slice(w.as_bytes()))
                .collect(),
        )
    }

    /// Each malformed input below was sent to redis-server 7.0.15; the
    /// error text (or the wait for more bytes) is what it answered. These
    /// are the guard's: none reaches redis-protocol.
    #[test]
    fn malformed_input_gets_redis_errors() {
        use ProtocolError::*;
        let cases: &[(&[u8], Request)] = &[
            (b"*abc\r\n", Request::Invalid(InvalidMultibulkLength)),
            (b"*+1\r\n", Request::Invalid(InvalidMultibulkLength)),
            (b"*3000000000\r\n", Request::Invalid(InvalidMultibulkLength)),
            (b"*1\r\n+foo\r\n", Request::Invalid(ExpectedDollar('+'))),
            (b"*1\r\n$999999999\r\n", Request::Invalid(InvalidBulkLength)),
            (b"*1\r\n$-1\r\n", Request::Invalid(InvalidBulkLength)),
            (b"*1\r\n$536870912\r\n", Request::Incomplete),
            (b"*1048577\r\n", Request::Incomplete),
            (b"*1\r\n$4\r\nPING", Request::Incomplete),
            (b"\x00\x01\xff\r\n", Request::Incomplete),
            (
                b"echo \"unterminated\r\n",
                Request::Invalid(UnbalancedQuotes),
            ),
        ];
        for (input, want) in cases {
            assert_eq!(
                &parse(input).0,
                want,
                "{:?}",
                String::from_utf8_lossy(input)
            );
        }
        assert_eq!(
            parse(&[b'a'; MAX_INLINE + 1]).0,
            Request::Invalid(TooBigInline)
        );
        let mut long = b"*1\r\n".to_vec();
        long.extend([b'x'; MAX_INLINE + 1]);
        assert_eq!(parse(&long).0, Request::Invalid(TooBigBulkCount));
    }

    /// Well-formed and Redis-tolerated inputs: the parsed command and what
    /// is left in the buffer. `PINGxx` shows redis-protocol, like Redis,
    /// skipping the two bytes after a bulk unchecked; `*-1` and `*0` are
    /// the guard's empty commands (redis-protocol would give a null).
    #[test]
    fn accepted_forms() {
        assert_eq!(
            parse(b"*2\r\n$3\r\nGET\r\n$1\r\nk\r\nrest"),
            (cmd(&["GET", "k"]), 4)
        );
        assert_eq!(parse(b"*1\r\n$4\r\nPINGxx"), (cmd(&["PING"]), 0));
        assert_eq!(parse(b"*0\r\n"), (cmd(&[]), 0));
        assert_eq!(parse(b"*-1\r\n"), (cmd(&[]), 0));
        assert_eq!(parse(b"*-5\r\nPING\r\n"), (cmd(&[]), 6));
        assert_eq!(
            parse(b"*2\r\n$0\r\n\r\n$3\r\na\0b\r\n"),
            (cmd(&["", "a\0b"]), 0)
        );
        assert_eq!(parse(b"PING\n"), (cmd(&["PING"]), 0));
        assert_eq!(parse(b"\r\n"), (cmd(&[]), 0));
        assert_eq!(
            parse(b"set 'a b' \"c\\x41\"\r\n"),
            (cmd(&["set", "a b", "cA"]), 0)
        );
    }

    /// The accepted divergence (module docs): Redis ends a header at `\r`
    /// and skips the next byte, so to redis-server 7.0.15 each input below
    /// is `PING` (it answers `+PONG`). redis-protocol wants `\r\n`, so here
    /// each is a protocol error quoting redis-protocol's reason, never a
    /// command, a panic or a wait for bytes that will not come.
    #[test]
    fn header_without_lf_is_refused_by_redis_protocol() {
        let cases: &[(&[u8], &str)] = &[
            (
                b"*1\rX$4\r\nPING\r\n",
                "ERR Protocol error: to_isize: Failed to parse as integer.",
            ),
            (
                b"*1\r\n$4\rXPING\r\n",
                "ERR Protocol error: to_isize: Failed to parse as integer.",
            ),
            (b"*1\r\n$4\rXPINGxx", "ERR Protocol error: incomplete frame"),
        ];
        for (input, want) in cases {
            match parse(input).0 {
                Request::Invalid(e @ ProtocolError::Decoder(_)) => {
                    assert_eq!(
                        e.reply_text(),
                        *want,
                        "{:?}",
                        String::from_utf8_lossy(input)
                    );
                }
                other => panic!("{:?}: {other:?}", String::from_utf8_lossy(input)),
            }
        }
    }

    /// redis-protocol's reasons can quote input: the reply text stays one
    /// short line whatever the reason holds.
    #[test]
    fn decoder_reason_is_one_short_line() {
        let e = ProtocolError::decoder(&format!("bad \r\n{}", "x".repeat(1000)));
        let text = e.reply_text();
        assert!(!text.contains(['\r', '\n']), "{text:?}");
        assert_eq!(text.len(), "ERR Protocol error: ".len() + MAX_REASON);
    }
}
