//! List commands: LPUSH, RPUSH, LPOP, RPOP, LLEN, LRANGE, LINDEX, LREM.

use bytes::Bytes;

use super::{Ctx, count_arg, int_arg};
use crate::Value;
use crate::db::{Data, Entry};
use crate::error::CmdError;

#[derive(Clone, Copy, PartialEq, Eq)]
enum End {
    Left,
    Right,
}

fn push(ctx: &mut Ctx<'_>, args: &[Bytes], end: End) -> Result<Value, CmdError> {
    let key = &args[1];
    let list = match ctx.db.get_list(key, ctx.now)? {
        Some(list) => list,
        None => {
            ctx.db.insert(
                key.clone(),
                Entry {
                    data: Data::List(Default::default()),
                    expires_at: None,
                },
            );
            ctx.db.get_list(key, ctx.now)?.ok_or(CmdError::WrongType)?
        }
    };
    for item in &args[2..] {
        match end {
            End::Left => list.push_front(item.clone()),
            End::Right => list.push_back(item.clone()),
        }
    }
    let len = list.len();
    ctx.db.touch(key);
    Ok(Value::Int(len as i64))
}

/// # Format
/// `LPUSH key element [element ...]`: pushes each to the head in turn; the
/// new length.
pub(crate) fn lpush(ctx: &mut Ctx<'_>, args: &[Bytes]) -> Result<Value, CmdError> {
    push(ctx, args, End::Left)
}

/// # Format
/// `RPUSH key element [element ...]`: pushes each to the tail; the new
/// length.
pub(crate) fn rpush(ctx: &mut Ctx<'_>, args: &[Bytes]) -> Result<Value, CmdError> {
    push(ctx, args, End::Right)
}

fn pop(ctx: &mut Ctx<'_>, args: &[Bytes], end: End, name: &str) -> Result<Value, CmdError> {
    if args.len() > 3 {
        return Err(CmdError::WrongArity(name.to_owned()));
    }
    let count = args.get(2).map(|raw| count_arg(raw)).transpose()?;
    let key = &args[1];
    let Some(list) = ctx.db.get_list(key, ctx.now)? else {
        return Ok(if count.is_some() {
            Value::NilArray
        } else {
            Value::Nil
        });
    };
    let take = count.unwrap_or(1).min(list.len());
    let popped: Vec<Bytes> = (0..take)
        .filter_map(|_| match end {
            End::Left => list.pop_front(),
            End::Right => list.pop_back(),
        })
        .collect();
    if take > 0 {
        ctx.db.touch(key);
    }
    ctx.db.drop_if_empty(key);
    Ok(match count {
        Some(_) => Value::Array(popped.into_iter().map(Value::Bulk).collect()),
        None => popped.into_iter().next().map_or(Value::Nil, Value::Bulk),
    })
}

/// # Format
/// `LPOP key [count]`: the head element (nil when missing); with a count,
/// an array of up to `count` (a nil array when missing).
pub(crate) fn lpop(ctx: &mut Ctx<'_>, args: &[Bytes]) -> Result<Value, CmdError> {
    pop(ctx, args, End::Left, "lpop")
}

/// # Format
/// `RPOP key [count]`: as `LPOP`, from the tail.
pub(crate) fn rpop(ctx: &mut Ctx<'_>, args: &[Bytes]) -> Result<Value, CmdError> {
    pop(ctx, args, End::Right, "rpop")
}

/// # Format
/// `LLEN key`: the length (0 when missing).
pub(crate) fn llen(ctx: &mut Ctx<'_>, args: &[Bytes]) -> Result<Value, CmdError> {
    let len = ctx.db.get_list(&args[1], ctx.now)?.map_or(0, |l| l.len());
    Ok(Value::Int(len as i64))
}

/// # Format
/// `LRANGE key start stop`: the elements from `start` to `stop` inclusive;
/// negative indexes count from the tail.
pub(crate) fn lrange(ctx: &mut Ctx<'_>, args: &[Bytes]) -> Result<Value, CmdError> {
    let (start, stop) = (int_arg(&args[2])?, int_arg(&args[3])?);
    let Some(list) = ctx.db.get_list(&args[1], ctx.now)? else {
        return Ok(Value::Array(vec![]));
    };
    let len = list.len() as i64;
    let start = if start < 0 {
        (len + start).max(0)
    } else {
        start
    };
    let stop = if stop < 0 {
        len + stop
    } else {
        stop.min(len - 1)
    };
    if start > stop || start >= len {
        return Ok(Value::Array(vec![]));
    }
    Ok(Value::Array(
        list.range(start as usize..=stop as usize)
            .map(|b| Value::Bulk(b.clone()))
            .collect(),
    ))
}

/// # Format
/// `LINDEX key index`: the element at `index` (negative counts from the
/// tail); nil when the key is missing or the index out of range. The fair
/// lock's scripts read the queue's head and tail with it.
pub(crate) fn lindex(ctx: &mut Ctx<'_>, args: &[Bytes]) -> Result<Value, CmdError> {
    let Some(list) = ctx.db.get_list(&args[1], ctx.now)? else {
        return Ok(Value::Nil);
    };
    // Redis reads the key before the index: a wrong type wins over a bad
    // index, a missing key answers nil whatever the index.
    let index = int_arg(&args[2])?;
    let len = list.len() as i64;
    let at = if index < 0 { len + index } else { index };
    Ok(match usize::try_from(at).ok().and_then(|i| list.get(i)) {
        Some(item) => Value::Bulk(item.clone()),
        None => Value::Nil,
    })
}

/// # Format
/// `LREM key count element`: removes the first `count` occurrences of
/// `element` from the head (`count` > 0), the last `-count` from the tail
/// (`count` < 0) or all of them (0); the number removed. The key goes
/// when its list empties.
pub(crate) fn lrem(ctx: &mut Ctx<'_>, args: &[Bytes]) -> Result<Value, CmdError> {
    let count = int_arg(&args[2])?;
    let key = &args[1];
    let Some(list) = ctx.db.get_list(key, ctx.now)? else {
        return Ok(Value::Int(0));
    };
    let limit = if count == 0 {
        usize::MAX
    } else {
        usize::try_from(count.unsigned_abs()).unwrap_or(usize::MAX)
    };
    let element = &args[3];
    let mut removed = 0usize;
    if count >= 0 {
        let mut i = 0;
        while i < list.len() && removed < limit {
            if list[i] == *element {
                list.remove(i);
                removed += 1;
            } else {
                i += 1;
            }
        }
    } else {
        let mut i = list.len();
        while i > 0 && removed < limit {
            i -= 1;
            if list[i] == *element {
                list.remove(i);
                removed += 1;
            }
        }
    }
    if removed > 0 {
        ctx.db.touch(key);
    }
    ctx.db.drop_if_empty(key);
    Ok(Value::Int(removed as i64))
}
