//! Frames on their way to a terminal: an SSH client's channel, or the local terminal. The viewer
//! draws into a `FrameWriter`; each flush is a frame, put on a small queue bounded in frames and
//! in bytes; one task per terminal writes the queue out, waiting on the terminal (an SSH
//! window, a pty nobody reads) as it must. A terminal that stalls (a hotel link, a suspended
//! `ssh`, a frozen tmux) fills the queue: the next frames are skipped, not queued, so it costs at
//! most `QUEUE_BYTES` here and never delays the engine or another viewer; once the queue has
//! drained, the viewer is told, and its next frame is drawn whole, so the screen is right again.

use std::io;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};

use tokio::io::{AsyncWrite, AsyncWriteExt};
use tokio::sync::mpsc;

use crate::viewer::Delivery;

/// Frames waiting for a client beyond the one being written.
pub const QUEUE_FRAMES: usize = 2;
/// Bytes waiting for a client, at most: a whole 200×60 frame with every cell styled fits.
pub const QUEUE_BYTES: usize = 256 * 1024;

/// What one client's queue has seen.
#[derive(Debug, Default)]
pub struct Stats {
    pub queued_bytes: AtomicUsize,
    pub max_queued_bytes: AtomicUsize,
    pub frames_sent: AtomicU64,
    pub frames_skipped: AtomicU64,
    pub bytes_sent: AtomicU64,
}

/// The viewer's side: `std::io::Write`, as ratatui's backend wants.
pub struct FrameWriter {
    frame: Vec<u8>,
    queue: mpsc::Sender<Vec<u8>>,
    delivery: Delivery,
    stats: Arc<Stats>,
    /// The last words are being written: flushes keep them, `finish` sends them.
    closing: bool,
}

/// A client's queue and the task that empties it into `channel`. The task ends when the
/// `FrameWriter` is dropped and the queue is empty, or when the client is gone.
pub fn start(
    channel: impl AsyncWrite + Send + Unpin + 'static,
    delivery: Delivery,
) -> (FrameWriter, Arc<Stats>, tokio::task::JoinHandle<()>) {
    let (queue, frames) = mpsc::channel(QUEUE_FRAMES);
    let stats = Arc::new(Stats::default());
    let task = tokio::spawn(deliver(channel, frames, delivery.clone(), stats.clone()));
    (
        FrameWriter {
            frame: Vec::new(),
            queue,
            delivery,
            stats: stats.clone(),
            closing: false,
        },
        stats,
        task,
    )
}

async fn deliver(
    mut channel: impl AsyncWrite + Send + Unpin,
    mut frames: mpsc::Receiver<Vec<u8>>,
    delivery: Delivery,
    stats: Arc<Stats>,
) {
    while let Some(frame) = frames.recv().await {
        // A frame is flushed whole: the local terminal's stdout holds what it is given until a
        // newline or a flush.
        let mut written = channel.write_all(&frame).await;
        if written.is_ok() {
            written = channel.flush().await;
        }
        stats.queued_bytes.fetch_sub(frame.len(), Ordering::AcqRel);
        if written.is_err() {
            return;
        }
        stats.frames_sent.fetch_add(1, Ordering::Relaxed);
        stats
            .bytes_sent
            .fetch_add(frame.len() as u64, Ordering::Relaxed);
        if frames.is_empty() && delivery.lost.load(Ordering::Acquire) {
            delivery.caught_up.notify_one();
        }
    }
    let _ = channel.flush().await;
}

impl io::Write for FrameWriter {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.frame.extend_from_slice(buf);
        Ok(buf.len())
    }

    /// Ends a frame: queued if there is room, else skipped (and the next drawn whole).
    fn flush(&mut self) -> io::Result<()> {
        if self.frame.is_empty() || self.closing {
            return Ok(());
        }
        let len = self.frame.len();
        // Counted before it is queued: the delivering task may take it at once.
        let now = self.stats.queued_bytes.fetch_add(len, Ordering::AcqRel) + len;
        if now > QUEUE_BYTES {
            self.stats.queued_bytes.fetch_sub(len, Ordering::AcqRel);
            self.skip();
            return Ok(());
        }
        match self.queue.try_send(std::mem::take(&mut self.frame)) {
            Ok(()) => {
                self.stats.max_queued_bytes.fetch_max(now, Ordering::AcqRel);
                Ok(())
            }
            Err(mpsc::error::TrySendError::Full(_)) => {
                self.stats.queued_bytes.fetch_sub(len, Ordering::AcqRel);
                self.skip();
                Ok(())
            }
            Err(mpsc::error::TrySendError::Closed(_)) => {
                self.stats.queued_bytes.fetch_sub(len, Ordering::AcqRel);
                Err(io::Error::new(
                    io::ErrorKind::BrokenPipe,
                    "the SSH client is gone",
                ))
            }
        }
    }
}

impl FrameWriter {
    fn skip(&mut self) {
        self.frame.clear();
        self.stats.frames_skipped.fetch_add(1, Ordering::Relaxed);
        self.delivery.lost.store(true, Ordering::Release);
    }

    /// What is written from now on is the last words to the terminal (leaving the alternate
    /// screen, the cursor shown): kept whole, never skipped, and sent by [`FrameWriter::finish`].
    pub fn closing(&mut self) {
        self.closing = true;
    }

    /// Sends what is written so far, waiting for room: the last words to a client (leaving the
    /// alternate screen) must not be skipped.
    pub async fn finish(&mut self) {
        if self.frame.is_empty() {
            return;
        }
        let frame = std::mem::take(&mut self.frame);
        self.stats
            .queued_bytes
            .fetch_add(frame.len(), Ordering::AcqRel);
        let _ = self.queue.send(frame).await;
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use std::io::Write;

    use super::*;

    #[tokio::test]
    async fn a_client_that_stops_reading_costs_a_bounded_queue_and_is_told_when_it_catches_up() {
        // A pipe with a small buffer stands for a client whose window is full.
        let (client, mut server_side) = tokio::io::duplex(64);
        let delivery = Delivery::default();
        let (mut writer, stats, _task) = start(client, delivery.clone());
        for i in 0..50 {
            writer.write_all(&vec![b'x'; 1000 + i]).unwrap();
            writer.flush().unwrap();
        }
        assert!(stats.frames_skipped.load(Ordering::Relaxed) > 0);
        assert!(delivery.lost.load(Ordering::Acquire));
        assert!(stats.max_queued_bytes.load(Ordering::Acquire) <= QUEUE_BYTES);
        // Reading again drains the queue, and the viewer hears it.
        let caught_up = delivery.caught_up.clone();
        let reader = tokio::spawn(async move {
            let mut sink = Vec::new();
            let _ = tokio::io::AsyncReadExt::read_to_end(&mut server_side, &mut sink).await;
            sink.len()
        });
        caught_up.notified().await;
        drop(writer);
        let read = reader.await.unwrap();
        let sent = stats.bytes_sent.load(Ordering::Relaxed) as usize;
        assert_eq!(read, sent);
        assert_eq!(stats.queued_bytes.load(Ordering::Acquire), 0);
    }
}
