//! One-way delays and partitions on the turmoil engine: `delay-replies`
//! and `delay-requests` as a stream whose reads are held back. What is
//! read from the socket while the direction's window is open becomes
//! readable the window's delay later; nothing overtakes what came before
//! it. What is read while a partition is open becomes readable at TCP's
//! retransmission after the heal, timed from the first such read
//! (`crate::model::retransmission`), and so does what follows it until then
//! (turmoil's own hold would deliver everything at the heal). The same stream
//! reads nothing while its gate is closed (a paused Redis leaves requests
//! in the socket and runs them, in order, once it resumes). Replies are
//! delayed where the client reads them, requests where Redis reads them,
//! so each side's writer never waits (a delayed write would hold up every
//! later one).

use std::collections::{BTreeMap, VecDeque};
use std::io;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::Duration;

use bytes::{Buf, Bytes};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::time::{Instant, Sleep};

use super::gate::Gate;
use crate::model::retransmission::Stall;

/// One direction's open windows, by fault index: one-way delays (the
/// first in plan order counts) and partitions, each with when it heals
/// (turmoil's elapsed time). Cloning shares it.
#[derive(Debug, Clone, Default)]
pub(crate) struct Delay(Arc<Mutex<Open>>);

#[derive(Debug, Default)]
struct Open {
    delays: BTreeMap<usize, Duration>,
    heals: BTreeMap<usize, Duration>,
}

impl Delay {
    fn windows(&self) -> std::sync::MutexGuard<'_, Open> {
        self.0.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Fault `i`'s window opens.
    pub(crate) fn open(&self, i: usize, delay: Duration) {
        self.windows().delays.insert(i, delay);
    }

    /// Fault `i`'s window closes.
    pub(crate) fn close(&self, i: usize) {
        self.windows().delays.remove(&i);
    }

    /// Fault `i`'s partition cuts the link until turmoil's elapsed time
    /// reaches `heal`.
    pub(crate) fn partition(&self, i: usize, heal: Duration) {
        self.windows().heals.insert(i, heal);
    }

    /// Fault `i`'s partition heals.
    pub(crate) fn heal(&self, i: usize) {
        self.windows().heals.remove(&i);
    }

    fn now(&self) -> Duration {
        self.windows()
            .delays
            .values()
            .next()
            .copied()
            .unwrap_or(Duration::ZERO)
    }

    /// When the latest partition open now heals.
    fn healing(&self) -> Option<Duration> {
        self.windows().heals.values().max().copied()
    }
}

/// A stream whose reads are held back by its [`Gate`] and its [`Delay`].
pub(crate) struct DelayedStream<S> {
    inner: S,
    gate: Gate,
    delay: Delay,
    /// Chunks read from `inner`, each with when it becomes readable.
    queue: VecDeque<(Instant, Bytes)>,
    /// `inner` ended (or failed, with the error to give once the queue
    /// is drained).
    ended: Option<Option<io::Error>>,
    /// When the end may be read: a close sent into a partition arrives
    /// with its retransmission, as the data before it.
    ended_at: Option<Instant>,
    /// The partition stall under way (turmoil's elapsed time).
    stall: Option<Stall>,
    sleep: Option<Pin<Box<Sleep>>>,
}

/// What a partition does to what the stream reads now.
enum Held {
    /// Nothing: no partition is open and no stall is under way.
    No,
    /// It becomes readable at this instant, the retransmission's.
    Until(Instant),
    /// The kernel gave up before the heal: the connection is reset.
    Reset,
}

/// The most a [`DelayedStream`] holds back.
const MAX_QUEUED: usize = 1 << 20;

impl<S> DelayedStream<S> {
    fn queued(&self) -> usize {
        self.queue.iter().map(|(_, b)| b.len()).sum()
    }

    pub(crate) fn new(inner: S, gate: Gate, delay: Delay) -> Self {
        DelayedStream {
            inner,
            gate,
            delay,
            queue: VecDeque::new(),
            ended: None,
            ended_at: None,
            stall: None,
            sleep: None,
        }
    }

    /// What a partition does to what is read now: what arrives while one
    /// is open, or while the stall it began lasts, waits for TCP's
    /// retransmission (`crate::model::retransmission`), timed from the first such
    /// arrival. Outside a turmoil simulation there are no partitions.
    fn held(&mut self) -> Held {
        let Some(now) = turmoil::sim_elapsed() else {
            return Held::No;
        };
        let stall = match self.delay.healing() {
            Some(heal) => Stall::held(self.stall, now, heal),
            None => match self.stall {
                Some(s) if s.holds_at(now) => s,
                _ => return Held::No,
            },
        };
        self.stall = Some(stall);
        match stall.until {
            Some(until) => Held::Until(Instant::now() + until.saturating_sub(now)),
            None => Held::Reset,
        }
    }

    /// Whether `at` has come; if not, wakes the task then.
    fn due(&mut self, at: Instant, cx: &mut Context<'_>) -> bool {
        if at <= Instant::now() {
            return true;
        }
        let sleep = self
            .sleep
            .get_or_insert_with(|| Box::pin(tokio::time::sleep_until(at)));
        sleep.as_mut().reset(at);
        sleep.as_mut().poll(cx).is_ready()
    }
}

impl<S: AsyncRead + Unpin> DelayedStream<S> {
    /// Moves what `inner` has now into the queue, unless the gate is
    /// closed, up to [`MAX_QUEUED`] bytes (beyond, the bytes wait in the
    /// socket, and the sender's flow control holds it back, as TCP's
    /// would).
    fn pull(&mut self, cx: &mut Context<'_>) {
        if self.gate.is_closed_for(cx) {
            return;
        }
        while self.ended.is_none() && self.queued() < MAX_QUEUED {
            let mut chunk = [0u8; 8 * 1024];
            let mut read = ReadBuf::new(&mut chunk);
            match Pin::new(&mut self.inner).poll_read(cx, &mut read) {
                Poll::Ready(result) => {
                    let at = match self.held() {
                        Held::No => Instant::now(),
                        Held::Until(at) => at,
                        Held::Reset => {
                            let reset = io::ErrorKind::ConnectionReset;
                            self.ended = Some(Some(reset.into()));
                            break;
                        }
                    };
                    match result {
                        Ok(()) if read.filled().is_empty() => {
                            (self.ended, self.ended_at) = (Some(None), Some(at));
                        }
                        Ok(()) => {
                            let at = at.max(Instant::now() + self.delay.now());
                            // Never before what came earlier.
                            let at = self.queue.back().map_or(at, |(last, _)| at.max(*last));
                            let bytes = Bytes::copy_from_slice(read.filled());
                            self.queue.push_back((at, bytes));
                        }
                        Err(e) => {
                            // A reset ends the connection: what its stall
                            // still held never arrives (the fast engine
                            // drops a dead process's messages likewise).
                            let now = Instant::now();
                            self.queue.retain(|(at, _)| *at <= now);
                            self.ended = Some(Some(e));
                        }
                    }
                }
                Poll::Pending => break,
            }
        }
    }
}

impl<S: AsyncRead + Unpin> AsyncRead for DelayedStream<S> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let this = &mut *self;
        this.pull(cx);
        if let Some(&(at, _)) = this.queue.front() {
            if !this.due(at, cx) {
                return Poll::Pending;
            }
            if let Some((_, bytes)) = this.queue.front_mut() {
                let n = bytes.len().min(buf.remaining());
                buf.put_slice(&bytes[..n]);
                bytes.advance(n);
                if bytes.is_empty() {
                    this.queue.pop_front();
                }
            }
            return Poll::Ready(Ok(()));
        }
        if let Some(at) = this.ended_at
            && this.ended.is_some()
            && !this.due(at, cx)
        {
            return Poll::Pending;
        }
        match this.ended.take() {
            Some(Some(e)) => {
                this.ended = Some(None);
                Poll::Ready(Err(e))
            }
            Some(None) => {
                this.ended = Some(None);
                Poll::Ready(Ok(()))
            }
            None => Poll::Pending,
        }
    }
}

impl<S: AsyncWrite + Unpin> AsyncWrite for DelayedStream<S> {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.inner).poll_write(cx, buf)
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_shutdown(cx)
    }
}

#[cfg(test)]
mod tests {
    use tokio::io::{AsyncReadExt, AsyncWriteExt, duplex};

    use super::*;

    /// Bytes read while the window is open come out its delay later;
    /// bytes after it never overtake them; the end comes after both.
    #[tokio::test(start_paused = true)]
    async fn reads_in_the_window_come_late_and_in_order() {
        let (mut far, near) = duplex(1024);
        let delay = Delay::default();
        let mut stream = DelayedStream::new(near, Gate::default(), delay.clone());
        let start = Instant::now();
        delay.open(3, Duration::from_millis(400));
        far.write_all(b"late ").await.unwrap();
        let mut first = [0u8; 5];
        // Nothing is readable before the delay.
        let early =
            tokio::time::timeout(Duration::from_millis(399), stream.read_exact(&mut first)).await;
        assert!(early.is_err(), "read before the delay: {early:?}");
        delay.close(3);
        far.write_all(b"then").await.unwrap();
        drop(far);
        let mut all = Vec::new();
        stream.read_to_end(&mut all).await.unwrap();
        assert_eq!(all, b"late then");
        assert_eq!(start.elapsed(), Duration::from_millis(400));
    }

    /// A partition from 0 to 1 s: what is read at 0.1 s becomes readable
    /// at the first retransmission at or after the heal, 1.4 s after it
    /// (1.5 s); what comes after the heal waits behind it; the end comes
    /// last.
    #[test]
    fn reads_in_a_partition_come_at_the_retransmission() {
        let mut sim = turmoil::Builder::new().build();
        sim.client("reader", async {
            let (mut far, near) = duplex(1024);
            let delay = Delay::default();
            let mut stream = DelayedStream::new(near, Gate::default(), delay.clone());
            let start = turmoil::sim_elapsed().expect("in the simulation");
            delay.partition(0, start + Duration::from_secs(1));
            let writer = tokio::spawn(async move {
                tokio::time::sleep(Duration::from_millis(100)).await;
                far.write_all(b"held ").await.unwrap();
                tokio::time::sleep(Duration::from_millis(900)).await;
                delay.heal(0);
                tokio::time::sleep(Duration::from_millis(200)).await;
                far.write_all(b"behind").await.unwrap();
            });
            let mut first = [0u8; 5];
            stream.read_exact(&mut first).await?;
            let at = turmoil::sim_elapsed().expect("in the simulation") - start;
            assert_eq!((&first, at), (b"held ", Duration::from_millis(1_500)));
            let mut rest = Vec::new();
            stream.read_to_end(&mut rest).await?;
            assert_eq!(rest, b"behind");
            writer.await.unwrap();
            Ok(())
        });
        sim.run().expect("the reader's checks pass");
    }
}
