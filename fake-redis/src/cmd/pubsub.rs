//! Pub/sub commands: PUBLISH, SUBSCRIBE, UNSUBSCRIBE, PSUBSCRIBE,
//! PUNSUBSCRIBE, PUBSUB CHANNELS/NUMSUB/NUMPAT.

use bytes::Bytes;

use super::Ctx;
use crate::Value;
use crate::error::CmdError;

/// # Format
/// `PUBLISH channel message`: how many subscribers received it. Each
/// channel subscriber gets a `["message", channel, message]` push, then
/// each matching pattern's subscriber a `["pmessage", pattern, channel,
/// message]`, in [`crate::Response::deliveries`].
pub(crate) fn publish(ctx: &mut Ctx<'_>, args: &[Bytes]) -> Result<Value, CmdError> {
    let (channel, message) = (&args[1], &args[2]);
    if ctx.state.cluster.is_some() {
        ctx.out.published.push((channel.clone(), message.clone()));
    }
    let n = deliver(&ctx.state.pubsub, channel, message, ctx.out);
    Ok(Value::Int(n as i64))
}

/// Pushes `message` on `channel` to this node's subscribers (channel
/// ones first, then patterns'); how many got it.
pub(crate) fn deliver(
    pubsub: &crate::pubsub::PubSub,
    channel: &Bytes,
    message: &Bytes,
    out: &mut crate::Response,
) -> usize {
    let receivers = pubsub.subscribers(channel);
    for &conn in &receivers {
        out.deliveries.push((
            conn,
            Value::Push(vec![
                Value::bulk("message"),
                Value::Bulk(channel.clone()),
                Value::Bulk(message.clone()),
            ]),
        ));
    }
    let by_pattern = pubsub.pattern_subscribers(channel);
    for (pattern, conn) in &by_pattern {
        out.deliveries.push((
            *conn,
            Value::Push(vec![
                Value::bulk("pmessage"),
                Value::Bulk(pattern.clone()),
                Value::Bulk(channel.clone()),
                Value::Bulk(message.clone()),
            ]),
        ));
    }
    receivers.len() + by_pattern.len()
}

fn confirmation(kind: &'static str, channel: Option<Bytes>, count: usize) -> Value {
    Value::Push(vec![
        Value::bulk(kind),
        channel.map_or(Value::Nil, Value::Bulk),
        Value::Int(count as i64),
    ])
}

/// # Format
/// `SUBSCRIBE channel [channel ...]`: one `["subscribe", channel, count]`
/// confirmation per channel, count being the connection's subscriptions.
pub(crate) fn subscribe(ctx: &mut Ctx<'_>, args: &[Bytes]) -> Result<Vec<Value>, CmdError> {
    Ok(args[1..]
        .iter()
        .map(|ch| {
            let n = ctx.state.pubsub.subscribe(ctx.conn, ch);
            confirmation("subscribe", Some(ch.clone()), n)
        })
        .collect())
}

/// # Format
/// `UNSUBSCRIBE [channel ...]`: one `["unsubscribe", channel, count]` per
/// channel; without channels, one per subscribed channel, or a single
/// `["unsubscribe", nil, count]` when there are none.
pub(crate) fn unsubscribe(ctx: &mut Ctx<'_>, args: &[Bytes]) -> Result<Vec<Value>, CmdError> {
    let channels = if args.len() > 1 {
        args[1..].to_vec()
    } else {
        ctx.state.pubsub.channels_of(ctx.conn)
    };
    if channels.is_empty() {
        let n = ctx.state.pubsub.count(ctx.conn);
        return Ok(vec![confirmation("unsubscribe", None, n)]);
    }
    Ok(channels
        .into_iter()
        .map(|ch| {
            let n = ctx.state.pubsub.unsubscribe(ctx.conn, &ch);
            confirmation("unsubscribe", Some(ch), n)
        })
        .collect())
}

/// # Format
/// `PSUBSCRIBE pattern [pattern ...]`: one `["psubscribe", pattern,
/// count]` per pattern.
pub(crate) fn psubscribe(ctx: &mut Ctx<'_>, args: &[Bytes]) -> Result<Vec<Value>, CmdError> {
    Ok(args[1..]
        .iter()
        .map(|p| {
            let n = ctx.state.pubsub.psubscribe(ctx.conn, p);
            confirmation("psubscribe", Some(p.clone()), n)
        })
        .collect())
}

/// # Format
/// `PUNSUBSCRIBE [pattern ...]`: as `UNSUBSCRIBE`, for patterns.
pub(crate) fn punsubscribe(ctx: &mut Ctx<'_>, args: &[Bytes]) -> Result<Vec<Value>, CmdError> {
    let patterns = if args.len() > 1 {
        args[1..].to_vec()
    } else {
        ctx.state.pubsub.patterns_of(ctx.conn)
    };
    if patterns.is_empty() {
        let n = ctx.state.pubsub.count(ctx.conn);
        return Ok(vec![confirmation("punsubscribe", None, n)]);
    }
    Ok(patterns
        .into_iter()
        .map(|p| {
            let n = ctx.state.pubsub.punsubscribe(ctx.conn, &p);
            confirmation("punsubscribe", Some(p), n)
        })
        .collect())
}

/// # Format
/// `PUBSUB CHANNELS [pattern]`: active channels (byte order; Redis's is
/// its hash order). `PUBSUB NUMSUB [channel ...]`: channel, count pairs.
/// `PUBSUB NUMPAT`: how many patterns are subscribed to.
pub(crate) fn pubsub(ctx: &mut Ctx<'_>, args: &[Bytes]) -> Result<Value, CmdError> {
    let sub = args[1].to_ascii_lowercase();
    let ps = &ctx.state.pubsub;
    match sub.as_slice() {
        b"channels" => {
            if args.len() > 3 {
                return Err(CmdError::WrongArity("pubsub|channels".into()));
            }
            Ok(Value::Array(
                ps.active_channels()
                    .filter(|c| args.get(2).is_none_or(|p| crate::glob::matches(p, c)))
                    .map(|c| Value::Bulk(c.clone()))
                    .collect(),
            ))
        }
        b"numsub" => Ok(Value::Array(
            args[2..]
                .iter()
                .flat_map(|c| [Value::Bulk(c.clone()), Value::Int(ps.numsub(c) as i64)])
                .collect(),
        )),
        _ => Ok(Value::Int(ps.numpat() as i64)),
    }
}
