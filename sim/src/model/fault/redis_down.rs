//! `redis-down`: Redis is stopped for a window, then comes back empty or
//! with its data.

use rand::RngExt;
use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};

use super::{Draw, Effects, Fault, Kind, Strike};

/// Redis is down: every connection closes when the window opens, and
/// every command or subscription sent while it lasts fails fast with a
/// connection error (as against a stopped server, where connecting is
/// refused), rather than timing out. When the window ends Redis is back,
/// empty or, with `keep_data`, with its keys (as after a restart from a
/// snapshot taken at the stop). Subscriptions are gone either way.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RedisDown {
    /// When it stops.
    pub at_ms: u64,
    /// How long it stays down.
    #[schemars(range(min = 1, max = crate::MAX_HORIZON_MS))]
    pub duration_ms: u64,
    /// Whether it comes back with its keys.
    #[serde(default)]
    pub keep_data: bool,
}

impl Kind for RedisDown {
    redis_window!();

    fn text(&self) -> String {
        let data = if self.keep_data {
            "with its data"
        } else {
            "empty"
        };
        format!("redis down {}ms (back {data})", self.duration_ms)
    }

    fn begin(&self, fx: &mut dyn Effects, s: &Strike) {
        fx.redis_down(s, true, self.keep_data);
    }

    fn end(&self, fx: &mut dyn Effects, s: &Strike) {
        fx.redis_down(s, false, self.keep_data);
    }
}

pub(crate) fn generate(r: &mut ChaCha8Rng, d: Draw) -> Fault {
    Fault::RedisDown(RedisDown {
        at_ms: d.at_ms,
        duration_ms: d.duration_ms,
        keep_data: r.random_bool(0.5),
    })
}

#[cfg(test)]
mod tests {
    use crate::model::history::{RecordKind, ServerCause};
    use crate::run::tests::{client, never_unlock, records, spec, thread};
    use crate::{Fault, FaultPlan, SimTime, run};

    use super::*;

    fn down(keep_data: bool) -> crate::Run {
        let mut s = spec(vec![client("A", vec![thread(0, never_unlock())])]);
        s.horizon_ms = 20_000;
        s.faults = FaultPlan(vec![Fault::RedisDown(RedisDown {
            at_ms: 9_000,
            duration_ms: 3_000,
            keep_data,
        })]);
        run(&s).expect("valid")
    }

    /// The renewal due at 10 s, while Redis is down, fails at once with a
    /// connection error (not after the 3 s timeout): its reply is recorded
    /// a round trip after it was sent.
    #[test]
    fn commands_fail_fast_while_down() {
        let h = down(true).history;
        let sent = records(&h, |k| matches!(k, RecordKind::RenewSent { .. }))
            .map(|r| r.at)
            .find(|t| *t >= SimTime::from_ms(9_000))
            .expect("a renewal during the window");
        let reply = records(
            &h,
            |k| matches!(k, RecordKind::RenewReply { reply, .. } if reply.contains("refused")),
        )
        .next()
        .expect("a refused renewal");
        assert!(reply.at < sent.plus_ms(100), "{h}");
        assert!(h.to_string().contains("(redis down: refused)"), "{h}");
    }

    /// Back empty, the key is gone at the window's end; back with its data,
    /// it is not.
    #[test]
    fn back_empty_or_with_data() {
        let lost = |r: &crate::Run| {
            r.history.records.iter().any(|rec| {
                matches!(
                    &rec.kind,
                    RecordKind::Server {
                        holder: None,
                        cause: ServerCause::Restart,
                        ..
                    }
                ) && rec.at == SimTime::from_ms(12_000)
            })
        };
        assert!(lost(&down(false)), "{}", down(false).history);
        assert!(!lost(&down(true)), "{}", down(true).history);
    }
}
