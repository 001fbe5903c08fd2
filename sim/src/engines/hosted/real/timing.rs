//! The real engine's time: the spec's time zero, read on Redis's own
//! clock (which `MONITOR`'s timestamps use), and the poll that records
//! keys' expiries as the shadow sees them.

use std::cell::RefCell;
use std::rc::Rc;
use std::time::Duration;

use lockcore::{RespTransport, Shard, Transport, Value};
use tokio::time::Instant;

use super::{BOOT, failed, within, words};
use crate::SimError;
use crate::engines::hosted::monitor::Shadow;
use crate::engines::hosted::recorder::{self, Shared};

/// How many `TIME` round trips calibrate Redis's clock against ours.
const CALIBRATION_SAMPLES: usize = 5;
/// How often expiries are looked for, in real time.
const EXPIRY_POLL: Duration = Duration::from_millis(1);

/// The spec's time zero (after the boot phase) and Redis's Unix µs
/// then, read from Redis's own clock (`TIME`), which `MONITOR`'s
/// timestamps use: the sample with the shortest round trip of a few.
pub(super) async fn calibrate(
    control: &RespTransport,
    target: &str,
) -> Result<(Instant, u64), SimError> {
    let mut best: Option<(Duration, Instant, u64)> = None;
    for _ in 0..CALIBRATION_SAMPLES {
        let asked = Instant::now();
        let time = within("cannot read TIME on", target, async {
            control
                .send(Shard(0), &words(&["TIME"]))
                .await
                .map_err(|e| e.to_string())
        })
        .await?;
        let answered = Instant::now();
        let unix_us =
            redis_time_us(&time).ok_or_else(|| failed(format!("TIME answered {time:?}")))?;
        let rtt = answered - asked;
        if best.is_none_or(|(r, ..)| rtt < r) {
            // Redis read its clock about halfway through the round trip.
            best = Some((rtt, asked + rtt / 2, unix_us));
        }
    }
    let (_, mid, unix_us) = best.ok_or_else(|| failed("no TIME sample".to_owned()))?;
    let zero = Instant::now() + BOOT;
    Ok((zero, unix_us + (zero - mid).as_micros() as u64))
}

/// Looks for expiries every [`EXPIRY_POLL`] on the shadow; returns the
/// longest stall of the run's thread it measured.
///
/// The poll wakes every millisecond on the thread that runs every
/// client, proxy and the recorder: how late it wakes is how long that
/// thread was held (descheduled on a loaded machine, or busy), a delay
/// any message or timer of the run may have suffered. (A stall of a
/// `redis-server` process itself is not seen here.)
pub(super) fn watch_expiries(
    recorder: &Shared,
    shadow: &Rc<RefCell<Shadow>>,
    zero: Instant,
) -> Rc<std::cell::Cell<Duration>> {
    let expiring = (recorder.clone(), shadow.clone());
    let stall = Rc::new(std::cell::Cell::new(Duration::ZERO));
    let stalled = stall.clone();
    tokio::task::spawn_local(async move {
        loop {
            let due = Instant::now() + EXPIRY_POLL;
            tokio::time::sleep_until(due).await;
            // The clients' boot, before time zero, is not the run's.
            if due >= zero {
                let late = Instant::now().saturating_duration_since(due);
                stalled.set(stalled.get().max(late));
            }
            let mut rec = recorder::lock(&expiring.0);
            // A script's lines arrive together: the one last seen is
            // whole by now.
            expiring.1.borrow_mut().flush(&mut rec);
            let now = rec.now();
            rec.expire(now, |lock, at| expiring.1.borrow_mut().view(lock, at));
        }
    });
    stall
}

/// `TIME`'s answer in Unix µs.
fn redis_time_us(time: &Value) -> Option<u64> {
    let Value::Array(parts) = time else {
        return None;
    };
    let number = |i: usize| match parts.get(i) {
        Some(Value::Bulk(b)) => std::str::from_utf8(b).ok()?.parse::<u64>().ok(),
        _ => None,
    };
    Some(number(0)? * 1_000_000 + number(1)?)
}
