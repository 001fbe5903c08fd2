//! `CONFIG GET/SET/RESETSTAT` (the parameters live in `crate::config`).

use bytes::Bytes;

use super::Ctx;
use crate::Value;
use crate::error::CmdError;

/// # Format
/// `CONFIG GET parameter [parameter ...]`: name, value pairs of every
/// matching parameter (a map on RESP3). `CONFIG SET parameter value
/// [parameter value ...]`: `OK`, or Redis's error naming the parameter.
/// `CONFIG RESETSTAT`: `OK`.
pub(crate) fn config(ctx: &mut Ctx<'_>, args: &[Bytes]) -> Result<Value, CmdError> {
    let sub = args[1].to_ascii_lowercase();
    match sub.as_slice() {
        b"get" => {
            let mut pairs = Vec::new();
            for pattern in &args[2..] {
                for (name, value) in ctx.state.config.get(pattern) {
                    let key = Value::bulk(name);
                    if !pairs.iter().any(|(k, _)| *k == key) {
                        pairs.push((key, Value::bulk(value)));
                    }
                }
            }
            Ok(Value::Map(pairs))
        }
        b"set" => {
            if !args.len().is_multiple_of(2) {
                return Err(CmdError::WrongArity("config|set".into()));
            }
            // Redis checks every pair before applying any.
            let mut trial = ctx.state.config.clone();
            for pair in args[2..].chunks(2) {
                trial.set(&pair[0], &pair[1])?;
            }
            ctx.state.config = trial;
            Ok(Value::ok())
        }
        _ => Ok(Value::ok()),
    }
}
