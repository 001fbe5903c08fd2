//! A connection's output buffer, with Redis's `client-output-buffer-limit`.
//!
//! Redis keeps each client's pending replies in memory and closes a client
//! whose pending output passes its class's limit: at once over the hard
//! limit, or after staying over the soft limit for the soft time. Without
//! that, a subscriber that never reads makes the server buffer every
//! message it is sent. Here the limits apply to everything appended and not
//! yet written to the socket, including the chunk being written.

use std::time::{Duration, Instant};

use bytes::{Bytes, BytesMut};

/// One class's limits in bytes (0: no limit), as Redis's
/// `client-output-buffer-limit <class> <hard> <soft> <soft-seconds>`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Limit {
    /// Close as soon as pending output passes this.
    pub hard: u64,
    /// Close once pending output has stayed over this for `soft_seconds`.
    pub soft: u64,
    /// How long output may stay over `soft`.
    pub soft_seconds: u64,
}

/// The limits per client class (Redis 7's defaults: none for normal
/// clients; 32 MiB hard, 8 MiB for 60 s for pub/sub clients).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OutputLimits {
    /// Clients that are not subscribed.
    pub normal: Limit,
    /// Clients subscribed to at least one channel or pattern.
    pub pubsub: Limit,
}

impl Default for OutputLimits {
    fn default() -> Self {
        OutputLimits {
            normal: Limit::default(),
            pubsub: Limit {
                hard: 32 * 1024 * 1024,
                soft: 8 * 1024 * 1024,
                soft_seconds: 60,
            },
        }
    }
}

/// The instant a batch of commands ran, read from the clock the first
/// time it is asked for.
#[derive(Debug, Default)]
pub(crate) struct Now(Option<Instant>);

impl Now {
    /// The instant, read now if it was not yet.
    pub(crate) fn get(&mut self) -> Instant {
        *self.0.get_or_insert_with(Instant::now)
    }

    /// An instant already read.
    #[cfg(test)]
    pub(crate) fn at(instant: Instant) -> Now {
        Now(Some(instant))
    }
}

/// What a connection's task writes next.
#[derive(Debug)]
pub(crate) enum Take {
    /// Write these bytes, then take again.
    Write(Bytes),
    /// Nothing pending: wait to be woken.
    Wait,
    /// Nothing more will come (the connection stopped reading), or it was
    /// closed for its limit: close the socket.
    Done,
}

/// Pending output of one connection.
#[derive(Debug, Default)]
pub(crate) struct Outbox {
    buf: BytesMut,
    /// Bytes taken for writing and not yet written.
    in_flight: usize,
    /// Since when pending output has been over the soft limit.
    over_soft_since: Option<Instant>,
    /// Reading has stopped: close once everything is written.
    draining: bool,
    /// Closed for its limit: drop output, close now.
    killed: bool,
}

impl Outbox {
    /// The buffer to append replies to (nothing reaches a killed client).
    pub(crate) fn buf(&mut self) -> Option<&mut BytesMut> {
        (!self.killed).then_some(&mut self.buf)
    }

    /// Bytes appended and not yet written.
    pub(crate) fn pending(&self) -> usize {
        self.buf.len() + self.in_flight
    }

    /// Applies `limit` at `now` after output was appended, as Redis's
    /// `checkClientOutputBufferLimits`; whether the client must be closed.
    ///
    /// `now` is read only when output is over the soft limit: most
    /// batches never need the clock (`Now` reads it once, on demand).
    pub(crate) fn over_limit(&mut self, limit: Limit, now: &mut Now) -> bool {
        let pending = self.pending() as u64;
        if limit.hard > 0 && pending >= limit.hard {
            return true;
        }
        if limit.soft > 0 && pending >= limit.soft {
            let now = now.get();
            let since = *self.over_soft_since.get_or_insert(now);
            return now.duration_since(since) >= Duration::from_secs(limit.soft_seconds);
        }
        self.over_soft_since = None;
        false
    }

    /// Drops pending output; the connection's task closes the socket.
    pub(crate) fn kill(&mut self) {
        self.killed = true;
        self.buf = BytesMut::new();
    }

    /// Whether the client was closed for its limit.
    pub(crate) fn killed(&self) -> bool {
        self.killed
    }

    /// Nothing more will be appended: close after the last write.
    pub(crate) fn drain(&mut self) {
        self.draining = true;
    }

    /// Everything pending, as one chunk for one write; the chunk taken
    /// before, if any, has been written.
    pub(crate) fn take(&mut self) -> Take {
        self.in_flight = 0;
        if self.killed {
            Take::Done
        } else if !self.buf.is_empty() {
            self.in_flight = self.buf.len();
            Take::Write(self.buf.split().freeze())
        } else if self.draining {
            Take::Done
        } else {
            Take::Wait
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn with(bytes: usize) -> Outbox {
        let mut o = Outbox::default();
        o.buf().expect("open").extend_from_slice(&vec![b'x'; bytes]);
        o
    }

    /// The hard limit closes at once, the soft one only after its time, and
    /// dropping back under the soft limit restarts the soft clock, as in
    /// Redis; a chunk being written still counts.
    #[test]
    fn hard_and_soft_limits() {
        let limit = Limit {
            hard: 100,
            soft: 50,
            soft_seconds: 60,
        };
        let t0 = Instant::now();
        assert!(with(100).over_limit(limit, &mut Now::at(t0)));
        let mut o = with(60);
        assert!(!o.over_limit(limit, &mut Now::at(t0)));
        assert!(!o.over_limit(limit, &mut Now::at(t0 + Duration::from_secs(59))));
        assert!(o.over_limit(limit, &mut Now::at(t0 + Duration::from_secs(60))));
        let mut o = with(60);
        assert!(!o.over_limit(limit, &mut Now::at(t0)));
        let Take::Write(chunk) = o.take() else {
            panic!("pending output")
        };
        assert_eq!(chunk.len(), 60);
        assert_eq!(o.pending(), 60, "in flight counts");
        assert!(matches!(o.take(), Take::Wait), "written, nothing new");
        assert_eq!(o.pending(), 0);
        assert!(!o.over_limit(limit, &mut Now::at(t0 + Duration::from_secs(30))));
        o.buf().expect("open").extend_from_slice(&[b'x'; 60]);
        assert!(!o.over_limit(limit, &mut Now::at(t0 + Duration::from_secs(61))));
        assert!(
            !with(1 << 20).over_limit(Limit::default(), &mut Now::at(t0)),
            "0 is no limit"
        );
    }

    /// A killed outbox takes no output and tells the task to close, even
    /// with output pending; a draining one closes only once empty.
    #[test]
    fn kill_and_drain() {
        let mut o = with(10);
        o.kill();
        assert!(o.buf().is_none());
        assert!(matches!(o.take(), Take::Done));
        let mut o = with(10);
        o.drain();
        assert!(matches!(o.take(), Take::Write(_)));
        assert!(matches!(o.take(), Take::Done));
        assert!(matches!(Outbox::default().take(), Take::Wait));
    }
}
