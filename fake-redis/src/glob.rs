//! Redis's glob patterns (`KEYS`, `SCAN MATCH`, `PSUBSCRIBE`, `CONFIG GET`).
//!
//! The syntax is Redis's `stringmatchlen`: `*`, `?`, `[abc]`, `[^a]`,
//! `[a-z]` (a reversed range is swapped), and `\x` for a literal `x`. The
//! pattern is first cut into tokens that each match exactly one byte, apart
//! from `*`; then matching is the classic two-pointer walk that backs up to
//! the last `*`, which is linear-times-pattern rather than exponential, so
//! a hostile pattern such as `*a*a*a*a*b` cannot stall the server (Redis
//! needed a special case for that).

/// One pattern element.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Token {
    Star,
    Any,
    Byte(u8),
    Class { negate: bool, items: Vec<(u8, u8)> },
}

fn tokens(pattern: &[u8]) -> Vec<Token> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < pattern.len() {
        match pattern[i] {
            b'*' => {
                if out.last() != Some(&Token::Star) {
                    out.push(Token::Star);
                }
            }
            b'?' => out.push(Token::Any),
            b'\\' if i + 1 < pattern.len() => {
                i += 1;
                out.push(Token::Byte(pattern[i]));
            }
            b'[' => {
                let (token, next) = class(pattern, i + 1);
                out.push(token);
                i = next;
                continue;
            }
            c => out.push(Token::Byte(c)),
        }
        i += 1;
    }
    out
}

/// A `[...]` class starting after its `[`; the token and where to go on.
/// An unclosed class ends with the pattern, as in Redis.
fn class(pattern: &[u8], mut i: usize) -> (Token, usize) {
    let negate = pattern.get(i) == Some(&b'^');
    if negate {
        i += 1;
    }
    let mut items = Vec::new();
    while i < pattern.len() && pattern[i] != b']' {
        if pattern[i] == b'\\' && i + 1 < pattern.len() {
            items.push((pattern[i + 1], pattern[i + 1]));
            i += 2;
        } else if i + 2 < pattern.len() && pattern[i + 1] == b'-' {
            let (a, b) = (pattern[i], pattern[i + 2]);
            items.push((a.min(b), a.max(b)));
            i += 3;
        } else {
            items.push((pattern[i], pattern[i]));
            i += 1;
        }
    }
    (Token::Class { negate, items }, i + 1)
}

fn one(token: &Token, c: u8) -> bool {
    match token {
        Token::Star => true,
        Token::Any => true,
        Token::Byte(b) => *b == c,
        Token::Class { negate, items } => {
            items.iter().any(|(lo, hi)| (*lo..=*hi).contains(&c)) != *negate
        }
    }
}

/// Whether `text` matches the glob `pattern`, case-sensitively.
pub(crate) fn matches(pattern: &[u8], text: &[u8]) -> bool {
    let toks = tokens(pattern);
    let (mut p, mut t) = (0, 0);
    let mut star: Option<(usize, usize)> = None;
    while t < text.len() {
        if p < toks.len() && toks[p] == Token::Star {
            star = Some((p, t));
            p += 1;
        } else if p < toks.len() && one(&toks[p], text[t]) {
            p += 1;
            t += 1;
        } else if let Some((sp, st)) = star {
            p = sp + 1;
            t = st + 1;
            star = Some((sp, st + 1));
        } else {
            return false;
        }
    }
    toks[p..].iter().all(|tok| *tok == Token::Star)
}

#[cfg(test)]
mod tests {
    use super::matches;

    /// Cases checked with `KEYS` on redis-server 7.0.15 (or its docs):
    /// each wrong branch of the matcher flips one of them.
    #[test]
    fn redis_glob_cases() {
        let yes: &[(&str, &str)] = &[
            ("*", ""),
            ("*", "anything"),
            ("h?llo", "hello"),
            ("h*llo", "heeeello"),
            ("h[ae]llo", "hallo"),
            ("h[^e]llo", "hallo"),
            ("h[a-b]llo", "hbllo"),
            ("h[b-a]llo", "hallo"),
            ("h\\*llo", "h*llo"),
            ("*a*b", "xxaxxab"),
            ("lock*", "lock"),
        ];
        let no: &[(&str, &str)] = &[
            ("h?llo", "hllo"),
            ("h[ae]llo", "hillo"),
            ("h[^e]llo", "hello"),
            ("h\\*llo", "hello"),
            (
                "*a*a*a*a*a*a*a*b",
                "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
            ),
            ("lock", "lock2"),
            ("a", ""),
            ("[", ""),
        ];
        for (p, t) in yes {
            assert!(matches(p.as_bytes(), t.as_bytes()), "{p} ~ {t}");
        }
        for (p, t) in no {
            assert!(!matches(p.as_bytes(), t.as_bytes()), "{p} !~ {t}");
        }
    }
}
