//! Reading client requests off the wire, exactly as Redis 7.0 reads them.
//!
//! Redis takes two request forms: a multibulk (`*2\r\n$3\r\nGET\r\n$1\r\nk\r\n`)
//! and an inline command (`GET k\r\n`, split like a shell line). This parser
//! follows `processMultibulkBuffer` and `processInlineBuffer` of Redis 7.0,
//! including their limits and error texts, so malformed input gets the same
//! `-ERR Protocol error: ...` and the connection is closed. It never
//! allocates what a header declares: a bulk is only taken once all of its
//! bytes have arrived.
//!
//! Why not redis-protocol's decoder: Redis accepts inputs it rejects (a bulk
//! not followed by CRLF, an inline command), and its errors are not Redis's.

use bytes::{Buf, Bytes, BytesMut};

/// Longest inline request or header line without a line end (Redis's
/// `PROTO_INLINE_MAX_SIZE`).
pub const MAX_INLINE: usize = 64 * 1024;
/// Largest bulk string a client may declare (Redis's `proto-max-bulk-len`).
pub const MAX_BULK: i64 = 512 * 1024 * 1024;
/// Largest element count of a multibulk (Redis's `INT_MAX`).
pub const MAX_MULTIBULK: i64 = i32::MAX as i64;

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
}

impl ProtocolError {
    /// The full error reply text, as Redis writes it.
    pub fn reply_text(&self) -> String {
        format!("ERR Protocol error: {self}")
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

/// Takes the next request from the front of `buf` (consuming it unless
/// the result is [`Request::Incomplete`] or [`Request::Invalid`]). Stateless:
/// a connection reading in pieces should keep a [`RequestReader`].
pub fn parse_request(buf: &mut BytesMut) -> Request {
    RequestReader::default().next_request(buf)
}

/// How far into a multibulk the reader has checked.
#[derive(Debug, Clone)]
struct Progress {
    /// Elements still to read.
    remaining: i64,
    /// `(start, len)` of each element read so far.
    args: Vec<(usize, usize)>,
    /// Where the next element starts.
    pos: usize,
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

    /// Takes the next request from the front of `buf`, which must hold the
    /// same bytes as at the previous call plus any that arrived since.
    pub fn next_request(&mut self, buf: &mut BytesMut) -> Request {
        if self.progress.is_none() {
            match buf.first() {
                None => return Request::Incomplete,
                Some(b'*') => {}
                Some(_) => return parse_inline(buf),
            }
        }
        let mut progress = match self.progress.take() {
            Some(p) => p,
            None => match multibulk_header(buf) {
                Ok(Some(p)) => p,
                Ok(None) => return Request::Incomplete,
                Err(e) => return Request::Invalid(e),
            },
        };
        match read_elements(&mut progress, buf) {
            Ok(true) => {
                let frame = buf.split_to(progress.pos).freeze();
                Request::Command(
                    progress
                        .args
                        .into_iter()
                        .map(|(start, len)| frame.slice(start..start + len))
                        .collect(),
                )
            }
            Ok(false) => {
                self.progress = Some(progress);
                Request::Incomplete
            }
            Err(e) => Request::Invalid(e),
        }
    }
}

/// One header line (`*N` / `$N`): `Ok(None)` when incomplete.
fn header_line(
    buf: &[u8],
    too_big: ProtocolError,
) -> Result<Option<(usize, usize)>, ProtocolError> {
    match find(buf, b'\r') {
        None if buf.len() > MAX_INLINE => Err(too_big),
        None => Ok(None),
        // The '\n' after '\r' must have arrived too (Redis does not check
        // that it is a '\n').
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
        remaining: count.max(0),
        // A count is only a promise: grow with what arrives, never reserve it.
        args: Vec::new(),
        pos,
    }))
}

/// Reads the elements that have fully arrived; whether all have.
fn read_elements(p: &mut Progress, buf: &[u8]) -> Result<bool, ProtocolError> {
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
        // The bulk and the two bytes after it (Redis skips them unchecked).
        if rest.len() < body + len + 2 {
            return Ok(false);
        }
        p.args.push((p.pos + body, len));
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
    /// error text (or the wait for more bytes) is what it answered.
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
    /// is left in the buffer.
    #[test]
    fn accepted_forms() {
        assert_eq!(
            parse(b"*2\r\n$3\r\nGET\r\n$1\r\nk\r\nrest"),
            (cmd(&["GET", "k"]), 4)
        );
        assert_eq!(parse(b"*1\r\n$4\r\nPINGxx"), (cmd(&["PING"]), 0));
        assert_eq!(parse(b"*0\r\n"), (cmd(&[]), 0));
        assert_eq!(parse(b"*-1\r\n"), (cmd(&[]), 0));
        assert_eq!(parse(b"PING\n"), (cmd(&["PING"]), 0));
        assert_eq!(parse(b"\r\n"), (cmd(&[]), 0));
        assert_eq!(
            parse(b"set 'a b' \"c\\x41\"\r\n"),
            (cmd(&["set", "a b", "cA"]), 0)
        );
    }
}
