//! `probe-backticks` (Redisson 3.47.0, #6579, commit 23e70b6e1).
//!
//! 3.46.0's probe looked for `'WAITAOF'` in single quotes, Redis 7.0's
//! form; Redis 6.2 words its refusal with backticks ("ERR unknown command
//! \`WAITAOF\`, with args beginning with: \`0\`, \`0\`, \`0\`, "), so the
//! name was never found (#6579). 3.47.0 looks for backticks instead, and
//! so misses 7.0 and 7.1's single quotes (#6618). Either way the lock path
//! as modelled goes on alike: both keep WAIT, and until 3.52.0 whether
//! WAITAOF follows a script depends on the AOF alone. It fixes nothing
//! locksim can show; `machine/probe.rs`'s tests pin what it parses.

use super::SwitchInfo;
use crate::release::Version;

pub(super) const INFO: SwitchInfo = SwitchInfo {
    name: "probe-backticks",
    since: Some(Version::new(3, 47, 0)),
    upstream: "#6579",
    summary: "the probe finds an unsupported command by its name in backticks (Redis 6.2's text) instead of single quotes (7.0's)",
    fixes: false,
};
