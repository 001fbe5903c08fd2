//! The wire form of every command the lock sends, and the reading of its reply.
//!
//! Scripts go out as plain `EVAL <text> <numkeys> <keys...> <args...>`, with
//! the exact texts of [`LockScript`], so Redis (or fake-redis) sees what a
//! Java Redisson client sends.

use crate::Value;
use crate::script::LockScript;
use bytes::Bytes;

use super::Command;
use super::query::Query;
use super::wire::LockWords;
use crate::release::SwitchReads;
use crate::{CallOutcome, FencingToken, LockError, Switch};

/// The Redisson `UNLOCK_MESSAGE` published on the lock's channel.
pub(crate) const UNLOCK_MESSAGE: &str = "0";

/// `getPublishCommand()` on a single Redis (`SPUBLISH` only where a
/// cluster shards pub/sub): the scripts of 3.22+ publish with it.
pub(crate) const PUBLISH: &[u8] = b"PUBLISH";

/// `EVAL <script> <numkeys> <keys...> <args...>`, its words moved into
/// the shared command (one allocation: the iterator's length is known).
pub(crate) fn eval<const K: usize, const A: usize>(
    script: LockScript,
    keys: [Bytes; K],
    args: [Bytes; A],
) -> Command {
    eval_head(script, K)
        .into_iter()
        .chain(keys)
        .chain(args)
        .collect()
}

/// `EVAL <script> <numkeys>`, the words before a script's keys.
fn eval_head(script: LockScript, keys: usize) -> [Bytes; 3] {
    [
        Bytes::from_static(b"EVAL"),
        Bytes::from_static(script.text().as_bytes()),
        numkeys(keys),
    ]
}

/// A script's key count (one to three), without formatting it.
fn numkeys(n: usize) -> Bytes {
    match n {
        1 => Bytes::from_static(b"1"),
        2 => Bytes::from_static(b"2"),
        3 => Bytes::from_static(b"3"),
        n => Bytes::from(n.to_string()),
    }
}

/// The acquire script the release sends, for `field` with `lease`.
pub(crate) fn acquire(
    switches: &SwitchReads,
    lock: &LockWords,
    lease: Bytes,
    field: Bytes,
) -> Command {
    if switches.has(Switch::Fencing) {
        eval(
            LockScript::AcquireFenced,
            [lock.key.clone(), lock.fencing.clone()],
            [lease, field],
        )
    } else if switches.has(Switch::CombinedAcquireScript) {
        eval(LockScript::Acquire, [lock.key.clone()], [lease, field])
    } else {
        eval(
            LockScript::AcquireLegacy,
            [lock.key.clone()],
            [lease, field],
        )
    }
}

/// The renewal script: re-arm `lease` if `field` still holds the lock.
pub(crate) fn renew(lock: &LockWords, lease: Bytes, field: Bytes) -> Command {
    eval(LockScript::Renew, [lock.key.clone()], [lease, field])
}

/// The batched round's script for one chunk: `(key, field)` per lock,
/// every key re-armed with `lease` if its field still holds it.
pub(super) fn renew_batch(chunk: &[(Bytes, Bytes)], lease: Bytes) -> Command {
    eval_head(LockScript::RenewBatch, chunk.len())
        .into_iter()
        .chain(chunk.iter().map(|(key, _)| key.clone()))
        .chain(std::iter::once(lease))
        .chain(chunk.iter().map(|(_, field)| field.clone()))
        .collect()
}

/// `script` with any number of keys and arguments (`ReadLockTask`'s
/// chunks).
pub(super) fn eval_words(script: LockScript, keys: Vec<Bytes>, args: Vec<Bytes>) -> Command {
    eval_head(script, keys.len())
        .into_iter()
        .chain(keys)
        .chain(args)
        .collect()
}

/// The 3.24+ unlock script with its latch (`KEYS` lock, channel, latch;
/// `ARGV` message, lease, field, publish command, latch TTL).
pub(crate) fn unlock_latched(
    lock: &LockWords,
    lease: Bytes,
    field: Bytes,
    latch: &str,
    latch_ttl: Bytes,
) -> Command {
    eval(
        LockScript::UnlockLatched,
        [
            lock.key.clone(),
            lock.channel.clone(),
            Bytes::copy_from_slice(latch.as_bytes()),
        ],
        [
            Bytes::from_static(UNLOCK_MESSAGE.as_bytes()),
            lease,
            field,
            Bytes::from_static(PUBLISH),
            latch_ttl,
        ],
    )
}

/// `DEL <key>`.
pub(super) fn del(key: &str) -> Command {
    Command::from([Bytes::from_static(b"DEL"), Bytes::from(key.to_owned())])
}

/// `RedissonExpirable.expireAsync(ttl, unit, param, keys...)` from 3.17.0
/// (#4147, commit edab5ecd6; the same text to 4.7.0): `PEXPIRE` of each
/// key, with an option when `ARGV[2]` is not empty.
pub(crate) const EXPIRE_SCRIPT: &str = "local result = 0;for j = 1, #KEYS, 1 do local expireSet; if ARGV[2] ~= '' then expireSet = redis.call('pexpire', KEYS[j], ARGV[1], ARGV[2]); else expireSet = redis.call('pexpire', KEYS[j], ARGV[1]); end; if expireSet == 1 then result = expireSet;end; end; return result; ";

/// An `RLock`'s `expireAsync(lease)`: the script from 3.17.0
/// (`expire-script`), `PEXPIRE <key> <ms>` before.
pub(super) fn expire(switches: &SwitchReads, lock: &LockWords, lease: crate::Millis) -> Command {
    let ms = Bytes::from(lease.0.to_string());
    if switches.has(Switch::ExpireScript) {
        Command::from([
            Bytes::from_static(b"EVAL"),
            Bytes::from_static(EXPIRE_SCRIPT.as_bytes()),
            Bytes::from_static(b"1"),
            lock.key.clone(),
            ms,
            Bytes::new(),
        ])
    } else {
        Command::from([Bytes::from_static(b"PEXPIRE"), lock.key.clone(), ms])
    }
}

/// The unlock script (`KEYS` lock, channel; `ARGV` message, lease, field
/// and, from 3.22.0, the publish command).
pub(crate) fn unlock(
    switches: &SwitchReads,
    lock: &LockWords,
    lease: Bytes,
    field: Bytes,
) -> Command {
    let keys = [lock.key.clone(), lock.channel.clone()];
    let message = Bytes::from_static(UNLOCK_MESSAGE.as_bytes());
    if switches.has(Switch::PublishCommandArgument) {
        let args = [message, lease, field, Bytes::from_static(PUBLISH)];
        eval(LockScript::UnlockPublishArg, keys, args)
    } else {
        eval(LockScript::Unlock, keys, [message, lease, field])
    }
}

/// The force-unlock script (`KEYS` lock, channel; `ARGV` message and,
/// from 3.22.0, the publish command).
pub(crate) fn force_unlock(switches: &SwitchReads, lock: &LockWords) -> Command {
    let keys = [lock.key.clone(), lock.channel.clone()];
    let message = Bytes::from_static(UNLOCK_MESSAGE.as_bytes());
    if switches.has(Switch::PublishCommandArgument) {
        let args = [message, Bytes::from_static(PUBLISH)];
        eval(LockScript::ForceUnlockPublishArg, keys, args)
    } else {
        eval(LockScript::ForceUnlock, keys, [message])
    }
}

/// A read-only query.
pub(super) fn query(query: Query, lock: &LockWords, field: Bytes) -> Command {
    let key = lock.key.clone();
    match query {
        Query::IsLocked => Command::from([Bytes::from_static(b"EXISTS"), key]),
        Query::IsHeldByThread => Command::from([Bytes::from_static(b"HEXISTS"), key, field]),
        Query::HoldCount => Command::from([Bytes::from_static(b"HGET"), key, field]),
        Query::RemainTtl => Command::from([Bytes::from_static(b"PTTL"), key]),
        // The token key is the kind's (`start_query` builds it); K has none.
        Query::Token => Command::from([Bytes::from_static(b"GET"), key]),
    }
}

/// What an acquire script answered.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum AcquireReply {
    /// Acquired or re-entered (with the token under `fenced`).
    Acquired(Option<FencingToken>),
    /// Held by someone else, who still has this PTTL (ms; negative: none).
    Held(i64),
}

fn unexpected(what: &str, value: &Value) -> LockError {
    LockError::UnexpectedReply(format!("{what} replied {value:?}"))
}

/// Reads an acquire script's reply.
pub(super) fn parse_acquire(fencing: bool, value: &Value) -> Result<AcquireReply, LockError> {
    if fencing {
        if let Value::Array(items) = value {
            match items.as_slice() {
                [Value::Int(1), Value::Int(token)] if *token >= 0 => {
                    return Ok(AcquireReply::Acquired(Some(FencingToken(*token as u64))));
                }
                [Value::Int(0), Value::Int(ttl)] => return Ok(AcquireReply::Held(*ttl)),
                _ => {}
            }
        }
        return Err(unexpected("the fenced acquire script", value));
    }
    match value {
        Value::Nil => Ok(AcquireReply::Acquired(None)),
        Value::Int(ttl) => Ok(AcquireReply::Held(*ttl)),
        _ => Err(unexpected("the acquire script", value)),
    }
}

/// Reads the reply of `RFencedLock`'s token script (`EVAL_LONG_LIST`):
/// `{-1, token}` acquired, `{PTTL, -1}` held. Java takes a first element
/// of -1 as acquired whatever the second; a token that is no count (only
/// a K without a TTL could give `{-1, -1}`) is reported as unexpected.
pub(super) fn parse_token_acquire(value: &Value) -> Result<AcquireReply, LockError> {
    if let Value::Array(items) = value {
        match items.as_slice() {
            [Value::Int(-1), Value::Int(token)] if *token >= 0 => {
                return Ok(AcquireReply::Acquired(Some(FencingToken(*token as u64))));
            }
            [Value::Int(ttl), Value::Int(-1)] if *ttl != -1 => return Ok(AcquireReply::Held(*ttl)),
            _ => {}
        }
    }
    Err(unexpected("the fenced lock's token script", value))
}

/// Reads the renewal script's reply: whether the lease was re-armed.
pub(super) fn parse_renew(value: &Value) -> Result<bool, LockError> {
    match value {
        Value::Int(1) => Ok(true),
        Value::Int(0) => Ok(false),
        _ => Err(unexpected("the renewal script", value)),
    }
}

/// Reads the batched round's reply for a chunk of `keys` locks: which
/// were renewed. Redisson's `ContainsDecoder` takes an entry equal to 1 as
/// renewed and any other number as not; a reply that is no list of
/// numbers, or a longer one, fails its decoding (the round's future
/// completes with the error).
pub(super) fn parse_renew_batch(value: &Value, keys: usize) -> Result<Vec<bool>, LockError> {
    let Value::Array(items) = value else {
        return Err(unexpected("the batched renewal script", value));
    };
    if items.len() > keys {
        return Err(unexpected("the batched renewal script", value));
    }
    let mut renewed = vec![false; keys];
    for (slot, item) in renewed.iter_mut().zip(items) {
        match item {
            Value::Int(n) => *slot = *n == 1,
            _ => return Err(unexpected("the batched renewal script", value)),
        }
    }
    Ok(renewed)
}

/// Reads the unlock script's reply: `None` when not held by the field,
/// else whether the key was released.
pub(super) fn parse_unlock(value: &Value) -> Result<Option<bool>, LockError> {
    match value {
        Value::Nil => Ok(None),
        Value::Int(0) => Ok(Some(false)),
        Value::Int(1) => Ok(Some(true)),
        _ => Err(unexpected("the unlock script", value)),
    }
}

/// Reads the force-unlock script's reply: whether a key was deleted.
pub(super) fn parse_force_unlock(value: &Value) -> Result<bool, LockError> {
    match value {
        Value::Int(1) => Ok(true),
        Value::Int(0) => Ok(false),
        _ => Err(unexpected("the force-unlock script", value)),
    }
}

/// Reads a query's reply.
pub(super) fn parse_query(query: Query, value: &Value) -> Result<CallOutcome, LockError> {
    match (query, value) {
        (Query::IsLocked, Value::Int(n)) => Ok(CallOutcome::Bool(*n > 0)),
        (Query::IsHeldByThread, Value::Int(n)) => Ok(CallOutcome::Bool(*n == 1)),
        (Query::HoldCount, Value::Nil) => Ok(CallOutcome::Count(0)),
        (Query::RemainTtl, Value::Int(ttl)) => Ok(CallOutcome::Ttl(*ttl)),
        // `GET_LONG`'s `LongReplayConvertor` reads nil as 0.
        (Query::Token, Value::Nil) => Ok(CallOutcome::Count(0)),
        (Query::Token | Query::HoldCount, Value::Bulk(count)) => std::str::from_utf8(count)
            .ok()
            .and_then(|text| text.parse::<u64>().ok())
            .map(CallOutcome::Count)
            .ok_or_else(|| unexpected(query.command_name(), value)),
        _ => Err(unexpected(query.command_name(), value)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{LockName, Release};

    fn words(lock: &str) -> LockWords {
        LockWords::new(&LockName::new(lock).unwrap())
    }

    fn text(command: &[Bytes]) -> Vec<String> {
        command
            .iter()
            .map(|b| String::from_utf8_lossy(b).into_owned())
            .collect()
    }

    /// The acquire command carries the exact script text and Redisson's
    /// KEYS/ARGV order (doc 004 `tryLockInnerAsync`: KEYS[1] name, ARGV
    /// lease, field); the fenced one adds the fencing key. A wrong order
    /// would make fake-redis and Redis run the script on the wrong key.
    #[test]
    fn acquire_commands_have_redisson_layout() {
        let lock = words("orders");
        let u1 = Bytes::from_static(b"u:1");
        let c = text(&acquire(
            &SwitchReads::new(Release::REDISSON.switches()),
            &lock,
            Bytes::from_static(b"30000"),
            u1.clone(),
        ));
        assert_eq!(c[0], "EVAL");
        assert_eq!(c[1], LockScript::Acquire.text());
        assert_eq!(&c[2..], ["1", "orders", "30000", "u:1"]);
        let c = text(&acquire(
            &SwitchReads::new(Release::LEGACY.switches()),
            &lock,
            Bytes::from_static(b"5"),
            u1.clone(),
        ));
        assert_eq!(c[1], LockScript::AcquireLegacy.text());
        let c = text(&acquire(
            &SwitchReads::new(Release::FENCED.switches()),
            &lock,
            Bytes::from_static(b"5"),
            u1,
        ));
        assert_eq!(c[1], LockScript::AcquireFenced.text());
        assert_eq!(&c[2..], ["2", "orders", "{orders}:fencing", "5", "u:1"]);
    }

    /// Unlock sends KEYS [name, channel] and ARGV ["0", lease, field], as
    /// doc 004's `unlockInnerAsync`.
    #[test]
    fn unlock_command_layout() {
        let c = text(&unlock(
            &SwitchReads::new("3.21.3".parse::<Release>().unwrap().switches()),
            &words("a"),
            Bytes::from_static(b"10"),
            Bytes::from_static(b"u:7"),
        ));
        assert_eq!(c[1], LockScript::Unlock.text());
        assert_eq!(
            &c[2..],
            ["2", "a", "redisson_lock__channel:{a}", "0", "10", "u:7"]
        );
    }

    /// Replies of the wrong shape are typed errors, never panics.
    #[test]
    fn wrong_shapes_are_unexpected_replies() {
        let bad = Value::Simple("OK".into());
        assert!(matches!(
            parse_acquire(false, &bad),
            Err(LockError::UnexpectedReply(_))
        ));
        assert!(matches!(
            parse_acquire(true, &Value::Nil),
            Err(LockError::UnexpectedReply(_))
        ));
        assert!(parse_renew(&Value::Int(2)).is_err());
        assert!(parse_unlock(&Value::Int(7)).is_err());
        assert!(parse_query(Query::HoldCount, &Value::bulk("x")).is_err());
        assert_eq!(
            parse_query(Query::HoldCount, &Value::bulk("3")),
            Ok(CallOutcome::Count(3))
        );
        assert_eq!(
            parse_acquire(true, &Value::Array(vec![Value::Int(1), Value::Int(9)])),
            Ok(AcquireReply::Acquired(Some(FencingToken(9))))
        );
    }
}
