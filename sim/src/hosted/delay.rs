//! One-way delays on a hosted engine: `delay-replies` and `delay-requests`
//! as a stream whose reads are held back. What is read from the socket
//! while the direction's window is open becomes readable the window's
//! delay later; nothing overtakes what came before it. The same stream
//! reads nothing while its gate is closed (a paused Redis leaves requests
//! in the socket and runs them, in order, once it resumes). Replies are
//! delayed where the client reads them, requests where Redis reads them,
//! so each side's writer never waits (a delayed write would hold up every
//! later one).

use std::collections::VecDeque;
use std::io;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::Duration;

use bytes::{Buf, Bytes};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::time::{Instant, Sleep};

use super::gate::Gate;

/// One direction's open delay windows, by fault index (the first in plan
/// order counts). Cloning shares it.
#[derive(Debug, Clone, Default)]
pub(crate) struct Delay(Arc<Mutex<std::collections::BTreeMap<usize, Duration>>>);

impl Delay {
    fn windows(&self) -> std::sync::MutexGuard<'_, std::collections::BTreeMap<usize, Duration>> {
        self.0.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Fault `i`'s window opens.
    pub(crate) fn open(&self, i: usize, delay: Duration) {
        self.windows().insert(i, delay);
    }

    /// Fault `i`'s window closes.
    pub(crate) fn close(&self, i: usize) {
        self.windows().remove(&i);
    }

    fn now(&self) -> Duration {
        self.windows()
            .values()
            .next()
            .copied()
            .unwrap_or(Duration::ZERO)
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
    sleep: Option<Pin<Box<Sleep>>>,
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
            sleep: None,
        }
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
                Poll::Ready(Ok(())) if read.filled().is_empty() => self.ended = Some(None),
                Poll::Ready(Ok(())) => {
                    let at = Instant::now() + self.delay.now();
                    // Never before what came earlier.
                    let at = self.queue.back().map_or(at, |(last, _)| at.max(*last));
                    let bytes = Bytes::copy_from_slice(read.filled());
                    self.queue.push_back((at, bytes));
                }
                Poll::Ready(Err(e)) => self.ended = Some(Some(e)),
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
            if at > Instant::now() {
                let sleep = this
                    .sleep
                    .get_or_insert_with(|| Box::pin(tokio::time::sleep_until(at)));
                sleep.as_mut().reset(at);
                if sleep.as_mut().poll(cx).is_pending() {
                    return Poll::Pending;
                }
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
}
