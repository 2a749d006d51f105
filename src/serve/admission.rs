//! Who gets to hold a connection, and for how long, before they have proved who they are. A
//! listener facing people with less trust than its owner must not let anyone who can reach the
//! port take all its descriptors: connections still authenticating are few (`max_startups`, as
//! sshd's `MaxStartups`) and brief (`login_grace`, as `LoginGraceTime`). At the cap the *oldest*
//! of them is closed to make room, so a flood of idle connections delays an honest client by
//! moments and never keeps it out, and an authenticated viewer is never the one to go.

use std::collections::{HashMap, VecDeque};
use std::net::IpAddr;
use std::pin::Pin;
use std::sync::Mutex;
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio_util::sync::{CancellationToken, WaitForCancellationFutureOwned};

/// sshd's `LoginGraceTime` is 120 s; a TUI's login takes a second.
pub const DEFAULT_LOGIN_GRACE: Duration = Duration::from_secs(30);
/// Connections still authenticating at once.
pub const DEFAULT_MAX_STARTUPS: usize = 64;
/// Authentication failures are logged once per source address in this long.
const FAILURE_LOG_EVERY: Duration = Duration::from_secs(60);
/// Sources remembered for that, at most (a scan from many addresses stays bounded).
const FAILURE_SOURCES_KEPT: usize = 4096;

/// The connections that have not authenticated yet, oldest first.
#[derive(Default)]
pub struct Startups {
    waiting: Mutex<Waiting>,
}

#[derive(Default)]
struct Waiting {
    next: u64,
    connections: VecDeque<(u64, CancellationToken)>,
}

/// One connection's place among those authenticating: its number, and what cuts it.
pub struct Admitted {
    pub id: u64,
    pub cut: CancellationToken,
}

impl Startups {
    fn lock(&self) -> std::sync::MutexGuard<'_, Waiting> {
        self.waiting.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Takes a new connection in; at `max` the oldest still authenticating is cut first.
    pub fn admit(&self, max: usize) -> Admitted {
        let mut waiting = self.lock();
        while waiting.connections.len() >= max.max(1) {
            if let Some((id, oldest)) = waiting.connections.pop_front() {
                tracing::debug!(
                    connection = id,
                    "closed the oldest unauthenticated connection"
                );
                oldest.cancel();
            }
        }
        waiting.next += 1;
        let id = waiting.next;
        let cut = CancellationToken::new();
        waiting.connections.push_back((id, cut.clone()));
        Admitted { id, cut }
    }

    /// The connection authenticated (or ended): it is no longer counted. Whether it was still
    /// waiting (false: it was cut to make room, or its grace ran out).
    pub fn leave(&self, id: u64) -> bool {
        let mut waiting = self.lock();
        let before = waiting.connections.len();
        waiting.connections.retain(|(i, _)| *i != id);
        waiting.connections.len() != before
    }

    /// The server stops: every connection still authenticating is closed now.
    pub fn cut_all(&self) {
        for (_, cut) in self.lock().connections.drain(..) {
            cut.cancel();
        }
    }

    /// How many are authenticating now.
    #[cfg(test)]
    fn len(&self) -> usize {
        self.lock().connections.len()
    }
}

/// A socket that can be cut from outside: once `cut` is cancelled, reads and writes fail, and
/// the SSH session on it ends (and closes it) wherever it was, even before the client's first
/// byte.
pub struct Cut<S> {
    inner: S,
    cut: Pin<Box<WaitForCancellationFutureOwned>>,
}

impl<S> Cut<S> {
    pub fn new(inner: S, cut: CancellationToken) -> Self {
        Self {
            inner,
            cut: Box::pin(cut.cancelled_owned()),
        }
    }

    fn is_cut(&mut self, cx: &mut Context<'_>) -> bool {
        self.cut.as_mut().poll(cx).is_ready()
    }
}

fn cut_error() -> std::io::Error {
    std::io::Error::new(
        std::io::ErrorKind::ConnectionAborted,
        "closed: not authenticated in time, or to make room",
    )
}

impl<S: AsyncRead + Unpin> AsyncRead for Cut<S> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        if self.is_cut(cx) {
            return Poll::Ready(Err(cut_error()));
        }
        Pin::new(&mut self.inner).poll_read(cx, buf)
    }
}

impl<S: AsyncWrite + Unpin> AsyncWrite for Cut<S> {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        if self.is_cut(cx) {
            return Poll::Ready(Err(cut_error()));
        }
        Pin::new(&mut self.inner).poll_write(cx, buf)
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        if self.is_cut(cx) {
            return Poll::Ready(Err(cut_error()));
        }
        Pin::new(&mut self.inner).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.inner).poll_shutdown(cx)
    }
}

/// Says a failed login once per source address a minute, with how many were not said.
#[derive(Default)]
pub struct FailureLog {
    sources: Mutex<HashMap<IpAddr, (Instant, u64)>>,
}

impl FailureLog {
    /// Whether to log a failure from `source` now, and how many went unsaid since the last.
    pub fn should_log(&self, source: Option<IpAddr>, now: Instant) -> Option<u64> {
        let source = source?;
        let mut sources = self.sources.lock().unwrap_or_else(|p| p.into_inner());
        if sources.len() >= FAILURE_SOURCES_KEPT {
            sources.retain(|_, (at, _)| now.duration_since(*at) < FAILURE_LOG_EVERY);
        }
        let full = sources.len() >= FAILURE_SOURCES_KEPT;
        match sources.get_mut(&source) {
            Some((at, unsaid)) if now.duration_since(*at) < FAILURE_LOG_EVERY => {
                *unsaid += 1;
                None
            }
            Some((at, unsaid)) => {
                let said = *unsaid;
                *at = now;
                *unsaid = 0;
                Some(said)
            }
            None if full => None,
            None => {
                sources.insert(source, (now, 0));
                Some(0)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;

    #[test]
    fn at_the_cap_the_oldest_waiting_connection_is_cut_and_an_authenticated_one_never() {
        let startups = Startups::default();
        let first = startups.admit(3);
        let second = startups.admit(3);
        // The second authenticates: it leaves the count, and is never cut for room.
        assert!(startups.leave(second.id));
        let third = startups.admit(3);
        let fourth = startups.admit(3);
        assert!(!first.cut.is_cancelled());
        let fifth = startups.admit(3);
        assert!(first.cut.is_cancelled(), "the oldest waiting goes first");
        assert!(!second.cut.is_cancelled());
        assert!(!third.cut.is_cancelled() && !fourth.cut.is_cancelled());
        assert!(!fifth.cut.is_cancelled());
        assert_eq!(startups.len(), 3);
        assert!(
            !startups.leave(first.id),
            "a cut connection is no longer waiting"
        );
    }

    #[tokio::test]
    async fn a_cut_socket_fails_its_pending_read() {
        use tokio::io::AsyncReadExt;
        let (a, _b) = tokio::io::duplex(64);
        let cut = CancellationToken::new();
        let mut stream = Cut::new(a, cut.clone());
        let reading = tokio::spawn(async move {
            let mut buf = [0u8; 8];
            stream.read(&mut buf).await
        });
        cut.cancel();
        let read = tokio::time::timeout(Duration::from_secs(10), reading)
            .await
            .unwrap()
            .unwrap();
        assert_eq!(
            read.unwrap_err().kind(),
            std::io::ErrorKind::ConnectionAborted
        );
    }

    #[test]
    fn failures_are_said_once_a_minute_per_source_with_what_went_unsaid() {
        let log = FailureLog::default();
        let at = Instant::now();
        let source = Some(IpAddr::from([127, 0, 0, 1]));
        assert_eq!(log.should_log(source, at), Some(0));
        for s in 1..=5 {
            assert_eq!(log.should_log(source, at + Duration::from_secs(s)), None);
        }
        let other = Some(IpAddr::from([127, 0, 0, 2]));
        assert_eq!(log.should_log(other, at), Some(0));
        assert_eq!(
            log.should_log(source, at + Duration::from_secs(61)),
            Some(5)
        );
    }
}
