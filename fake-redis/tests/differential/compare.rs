//! Comparing two servers' replies: byte for byte, with the allowances the
//! crate docs list (timing tolerance, masked HELLO ids, hash-ordered
//! replies as multisets).

use crate::wire::{line_end, show};

/// A frame as a flat token list: integers apart, everything else raw.
#[derive(Debug, PartialEq)]
pub(crate) enum Token {
    Int(i64),
    Raw(Vec<u8>),
}

pub(crate) fn tokens(frame: &[u8]) -> Vec<Token> {
    let mut out = Vec::new();
    let mut at = 0;
    while at < frame.len() {
        let Some(end) = line_end(frame, at) else {
            break;
        };
        let line = &frame[at..end];
        if line[0] == b':' {
            out.push(Token::Int(show(&line[1..]).parse().unwrap_or(i64::MIN)));
            at = end + 2;
        } else if line[0] == b'$' && !line.starts_with(b"$-") {
            let n: usize = show(&line[1..]).parse().unwrap_or(0);
            out.push(Token::Raw(frame[at..end + 2 + n + 2].to_vec()));
            at = end + 2 + n + 2;
        } else {
            out.push(Token::Raw(line.to_vec()));
            at = end + 2;
        }
    }
    out
}

/// HELLO's connection ids differ between servers by nature: mask them.
pub(crate) fn mask_hello_id(frame: &[u8]) -> Vec<u8> {
    let marker = b"$2\r\nid\r\n:";
    let Some(p) = frame.windows(marker.len()).position(|w| w == marker) else {
        return frame.to_vec();
    };
    let start = p + marker.len();
    let end = line_end(frame, start).unwrap_or(start);
    [&frame[..start], b"<id>", &frame[end..]].concat()
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum Timing {
    None,
    Millis,
    Seconds,
}

/// `UNSUBSCRIBE` without channels confirms them in Redis's dict order,
/// which depends on a hash seed drawn at server start: compare the set of
/// channels, and everything else in order.
pub(crate) fn same_unordered(real: &[Vec<u8>], fake: &[Vec<u8>]) -> bool {
    let split = |frames: &[Vec<u8>]| {
        let mut names = Vec::new();
        let mut rest = Vec::new();
        for f in frames {
            let mut t = tokens(f);
            if t.len() == 4 {
                names.push(t.remove(2));
            }
            rest.push(t);
        }
        names.sort_by_key(|t| format!("{t:?}"));
        (names, rest)
    };
    split(real) == split(fake)
}

pub(crate) fn same(real: &[u8], fake: &[u8], timing: Timing) -> bool {
    let (real, fake) = (mask_hello_id(real), mask_hello_id(fake));
    if real == fake {
        return true;
    }
    let (r, f) = (tokens(&real), tokens(&fake));
    r.len() == f.len()
        && r.iter().zip(&f).all(|pair| match pair {
            (Token::Int(a), Token::Int(b)) => {
                let (lo, diff) = ((*a).min(*b), (a - b).abs());
                a == b
                    || (timing == Timing::Millis && lo >= 1000 && diff <= 1000)
                    || (timing == Timing::Seconds && lo >= 5 && diff <= 1)
            }
            (x, y) => x == y,
        })
}

/// Replies whose element order is Redis's hash order (`KEYS`, `SCAN`,
/// `PUBSUB CHANNELS`): the same multiset of tokens, in any order.
pub(crate) fn same_multiset(real: &[Vec<u8>], fake: &[Vec<u8>]) -> bool {
    let sorted = |frames: &[Vec<u8>]| {
        let mut all: Vec<String> = frames
            .iter()
            .flat_map(|f| tokens(f))
            .map(|t| format!("{t:?}"))
            .collect();
        all.sort();
        all
    };
    sorted(real) == sorted(fake)
}
