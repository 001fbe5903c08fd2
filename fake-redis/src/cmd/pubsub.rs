//! Pub/sub commands: PUBLISH, SUBSCRIBE, UNSUBSCRIBE.

use bytes::Bytes;

use super::Ctx;
use crate::Value;
use crate::error::CmdError;

/// # Format
/// `PUBLISH channel message`: how many subscribers received it. Each gets a
/// `["message", channel, message]` push in [`crate::Response::deliveries`].
pub(crate) fn publish(ctx: &mut Ctx<'_>, args: &[Bytes]) -> Result<Value, CmdError> {
    let receivers = ctx.state.pubsub.subscribers(&args[1]);
    for &conn in &receivers {
        ctx.out.deliveries.push((
            conn,
            Value::Push(vec![
                Value::bulk("message"),
                Value::Bulk(args[1].clone()),
                Value::Bulk(args[2].clone()),
            ]),
        ));
    }
    Ok(Value::Int(receivers.len() as i64))
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
/// `["unsubscribe", nil, 0]` when there are none.
pub(crate) fn unsubscribe(ctx: &mut Ctx<'_>, args: &[Bytes]) -> Result<Vec<Value>, CmdError> {
    let channels = if args.len() > 1 {
        args[1..].to_vec()
    } else {
        ctx.state.pubsub.channels_of(ctx.conn)
    };
    if channels.is_empty() {
        return Ok(vec![confirmation("unsubscribe", None, 0)]);
    }
    Ok(channels
        .into_iter()
        .map(|ch| {
            let n = ctx.state.pubsub.unsubscribe(ctx.conn, &ch);
            confirmation("unsubscribe", Some(ch), n)
        })
        .collect())
}
