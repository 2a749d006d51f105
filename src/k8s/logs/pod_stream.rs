//! One pod's log stream: open a follow from the cursor, read bytes into lines, save and send
//! them; when the connection drops, back off and resume; when it ends cleanly, ask whether the
//! container is done, and if so read once more to the end and stop (as `PodDeleted` when the pod
//! is being deleted: its container was stopped, not finished).

use std::path::PathBuf;

use futures::AsyncBufReadExt;
use k8s_openapi::api::core::v1::Pod;
use kube::api::{Api, LogParams};
use tokio::sync::mpsc;
use tokio::time::{Duration, Instant};
use tokio_util::sync::CancellationToken;

use super::lines::{Cursor, LineReader, Output};
use super::sink::{PodSink, SinkError};
use super::{StreamEnd, TailEvent};
use crate::backoff::Backoff;

pub(crate) struct PodStream {
    pub api: Api<Pod>,
    pub pod: String,
    pub container: Option<String>,
    /// Where to save `<pod>.log` (None: nowhere).
    pub dir: Option<PathBuf>,
    pub tx: mpsc::Sender<TailEvent>,
    pub cancel: CancellationToken,
    /// Keep following until the container ends (else read what is there and stop).
    pub follow: bool,
    /// The previous container instance's log (never followed).
    pub previous: bool,
    /// Cancelled when the stream is to give its place to a waiting pod: it stops between two
    /// reads, never mid-delivery, and hands back its reader.
    pub lease: CancellationToken,
    /// Where a stream that gave its place left off (None: a first start).
    pub resume: Option<Box<LineReader>>,
}

/// How a stream's run ended.
pub(crate) enum Run {
    Ended(StreamEnd),
    /// It gave its place up: start it again later with this reader.
    Yielded(Box<LineReader>),
}

enum Outcome {
    End(StreamEnd),
    Yield,
}

enum Refusal {
    PodGone,
    /// The container has not started: try again later.
    Waiting(String),
    Transient(String),
    Fatal(String),
}

fn classify(e: &kube::Error) -> Refusal {
    match e {
        kube::Error::Api(s) => match s.code {
            404 => Refusal::PodGone,
            400 if s.message.contains("waiting to start")
                || s.message.contains("ContainerCreating")
                || s.message.contains("PodInitializing") =>
            {
                Refusal::Waiting(s.message.clone())
            }
            401 | 403 | 408 | 409 | 429 | 500..=599 => Refusal::Transient(s.message.clone()),
            _ => Refusal::Fatal(s.message.clone()),
        },
        other => Refusal::Transient(other.to_string()),
    }
}

/// What the pod says once a follow ended cleanly.
struct PodState {
    /// The container terminated (or the whole pod is over): read once more to the end, and stop.
    container_done: bool,
    /// The pod has a deletion timestamp: its container is being stopped, and the pod goes next.
    deleting: bool,
}

enum Pass {
    /// The server ended the response.
    Ended,
    Dropped(String),
    Stopped,
    Yield,
}

impl PodStream {
    pub(crate) async fn run(mut self) -> Run {
        let resumed = self.resume.take();
        let announced = resumed.is_some();
        let (mut reader, mut sink) = match resumed {
            Some(mut reader) => {
                reader.reconnect();
                let sink = self.reopen(&mut reader).await;
                (reader, sink)
            }
            None => {
                let (sink, saved) = self.open().await;
                (Box::new(LineReader::new(saved)), sink)
            }
        };
        // Dropping the sink (at the end, or to give the place up) releases the file's lock.
        match self.stream(&mut reader, &mut sink, announced).await {
            Outcome::End(end) => Run::Ended(end),
            Outcome::Yield => Run::Yielded(reader),
        }
    }

    /// The pod's file and how far it got, on a first start (None: not saving).
    async fn open(&self) -> (Option<PodSink>, Option<Cursor>) {
        let Some(dir) = &self.dir else {
            return (None, None);
        };
        match PodSink::open(dir, &self.pod) {
            Ok((sink, cursor)) => (Some(sink), Some(cursor)),
            Err(e) => {
                self.not_saving(e).await;
                (None, None)
            }
        }
    }

    /// The pod's file again, for a stream resuming after it gave its place up. The file must be
    /// as the reader left it: if another tail took the lock and saved meanwhile, the reader's
    /// idea of what the file holds is wrong, and appending would save lines twice or leave a gap.
    async fn reopen(&self, reader: &mut LineReader) -> Option<PodSink> {
        let left_at = reader.saved_cursor()?;
        let dir = self.dir.as_ref()?;
        match PodSink::open(dir, &self.pod) {
            Ok((sink, cursor)) if cursor == left_at => Some(sink),
            Ok(_) => {
                reader.stop_saving();
                self.send(TailEvent::SavedByAnother {
                    pod: self.pod.clone(),
                })
                .await;
                None
            }
            Err(e) => {
                reader.stop_saving();
                self.not_saving(e).await;
                None
            }
        }
    }

    async fn stream(
        &self,
        reader: &mut LineReader,
        sink: &mut Option<PodSink>,
        mut announced: bool,
    ) -> Outcome {
        let mut backoff = Backoff::default();
        let mut last_pass = !self.follow || self.previous;
        // The pod is being deleted: its stream ends because the pod goes, not because the
        // container finished its work, whatever the last read says.
        let mut deleting = false;
        loop {
            if self.cancel.is_cancelled() {
                return Outcome::End(StreamEnd::Stopped);
            }
            if !last_pass && self.lease.is_cancelled() {
                return Outcome::Yield;
            }
            let params = LogParams {
                container: self.container.clone(),
                follow: !last_pass,
                previous: self.previous,
                timestamps: true,
                since_time: reader.cursor().since(),
                ..Default::default()
            };
            let opened = tokio::select! {
                _ = self.cancel.cancelled() => return Outcome::End(StreamEnd::Stopped),
                _ = self.lease.cancelled(), if !last_pass => return Outcome::Yield,
                opened = self.api.log_stream(&self.pod, &params) => opened,
            };
            let stream = match opened {
                Ok(stream) => stream,
                Err(e) => {
                    match classify(&e) {
                        Refusal::PodGone => return Outcome::End(StreamEnd::PodDeleted),
                        Refusal::Fatal(m) => return Outcome::End(StreamEnd::Failed(m)),
                        Refusal::Waiting(m) if !self.follow => {
                            return Outcome::End(StreamEnd::Failed(m));
                        }
                        Refusal::Waiting(_) => {}
                        Refusal::Transient(m) => self.reconnecting(m).await,
                    }
                    if !self.pause(&mut backoff, !last_pass).await {
                        return Outcome::End(StreamEnd::Stopped);
                    }
                    continue;
                }
            };
            if !announced {
                announced = true;
                if !self
                    .send(TailEvent::PodStarted {
                        pod: self.pod.clone(),
                    })
                    .await
                {
                    return Outcome::End(StreamEnd::Stopped);
                }
            }
            let pass = self
                .pump(stream, reader, sink, &mut backoff, !last_pass)
                .await;
            match pass {
                Pass::Stopped => return Outcome::End(StreamEnd::Stopped),
                Pass::Yield => return Outcome::Yield,
                Pass::Ended if last_pass => {
                    let mut out = Output::default();
                    reader.finish(&mut out);
                    if !self.deliver(out, reader, sink).await {
                        return Outcome::End(StreamEnd::Stopped);
                    }
                    return Outcome::End(if deleting {
                        StreamEnd::PodDeleted
                    } else {
                        StreamEnd::Completed
                    });
                }
                Pass::Ended => {
                    reader.reconnect();
                    // A follow ends cleanly when the container exits, but also when a server
                    // restarts: only the pod can say which, and whether it is being deleted.
                    match self.pod_state().await {
                        Ok(state) => {
                            deleting |= state.deleting;
                            if state.container_done {
                                last_pass = true;
                            } else {
                                // A pod being deleted stops its container before the kubelet
                                // says so: no trouble, read on until it does or the pod is gone.
                                if !state.deleting {
                                    self.reconnecting(
                                        "the stream ended before the container did".into(),
                                    )
                                    .await;
                                }
                                if !self.pause(&mut backoff, !last_pass).await {
                                    return Outcome::End(StreamEnd::Stopped);
                                }
                            }
                        }
                        Err(e) => match classify(&e) {
                            Refusal::PodGone => return Outcome::End(StreamEnd::PodDeleted),
                            Refusal::Fatal(m) => return Outcome::End(StreamEnd::Failed(m)),
                            Refusal::Waiting(m) | Refusal::Transient(m) => {
                                self.reconnecting(m).await;
                                if !self.pause(&mut backoff, !last_pass).await {
                                    return Outcome::End(StreamEnd::Stopped);
                                }
                            }
                        },
                    }
                }
                Pass::Dropped(m) => {
                    reader.reconnect();
                    self.reconnecting(m).await;
                    if !self.pause(&mut backoff, !last_pass).await {
                        return Outcome::End(StreamEnd::Stopped);
                    }
                }
            }
        }
    }

    async fn pump(
        &self,
        stream: impl futures::AsyncBufRead,
        reader: &mut LineReader,
        sink: &mut Option<PodSink>,
        backoff: &mut Backoff,
        may_yield: bool,
    ) -> Pass {
        // Lines are parsed straight out of the response's own chunk buffer: a copy buffer per
        // pod would cost its size times the number of pods followed.
        let mut stream = std::pin::pin!(stream);
        let mut gather = Gather::default();
        let mut out = Output::default();
        // One timer, set again only when what is held is due at another time.
        let wait = tokio::time::sleep(Duration::ZERO);
        let mut wait = std::pin::pin!(wait);
        let mut set_for = None;
        loop {
            let due = gather.due(&out, Instant::now());
            if let Some(at) = due
                && set_for != due
            {
                wait.as_mut().reset(at);
                set_for = due;
            }
            let read = tokio::select! {
                _ = self.cancel.cancelled() => Err(Pass::Stopped),
                _ = self.lease.cancelled(), if may_yield => Err(Pass::Yield),
                _ = wait.as_mut(), if due.is_some() => Ok(None),
                read = stream.fill_buf() => match read {
                    Ok([]) => Err(Pass::Ended),
                    Ok(chunk) => {
                        reader.push(chunk, &mut out);
                        Ok(Some(chunk.len()))
                    }
                    Err(e) => Err(Pass::Dropped(e.to_string())),
                },
            };
            let pass = match read {
                Ok(Some(n)) => {
                    stream.as_mut().consume_unpin(n);
                    backoff.reset();
                    if out.is_empty() || !gather.hand_on_now(&out, Instant::now()) {
                        continue;
                    }
                    None
                }
                Ok(None) => None,
                Err(pass) => Some(pass),
            };
            // What was read goes on before the pass ends, however it ends: saved, and shown.
            if !out.is_empty() {
                gather.handed_on(Instant::now());
            }
            let delivered = self.deliver(std::mem::take(&mut out), reader, sink).await;
            match pass {
                Some(pass) => return pass,
                None if !delivered => return Pass::Stopped,
                None => {}
            }
        }
    }

    /// Saves, then sends. False when the receiver is gone or the stream is cancelled.
    async fn deliver(
        &self,
        out: Output,
        reader: &mut LineReader,
        sink: &mut Option<PodSink>,
    ) -> bool {
        if !out.save.is_empty()
            && let Some(s) = sink
            && let Some(cursor) = reader.saved_cursor()
            && let Err(e) = s.append(&out.save, cursor)
        {
            // Unsaved from here on, also after giving the place up: the file has a hole now.
            *sink = None;
            reader.stop_saving();
            self.not_saving(SinkError::Io(e)).await;
        }
        if out.lines.is_empty() {
            return true;
        }
        self.send(TailEvent::Lines {
            pod: self.pod.clone(),
            lines: out.lines,
        })
        .await
    }

    async fn pod_state(&self) -> Result<PodState, kube::Error> {
        let pod = self.api.get(&self.pod).await?;
        let deleting = pod.metadata.deletion_timestamp.is_some();
        let status = pod.status.unwrap_or_default();
        let container_done = matches!(status.phase.as_deref(), Some("Succeeded" | "Failed"))
            || status
                .container_statuses
                .iter()
                .flatten()
                .find(|c| self.container.as_ref().is_none_or(|name| &c.name == name))
                .and_then(|c| c.state.as_ref())
                .is_some_and(|s| s.terminated.is_some());
        Ok(PodState {
            container_done,
            deleting,
        })
    }

    async fn send(&self, event: TailEvent) -> bool {
        tokio::select! {
            _ = self.cancel.cancelled() => false,
            sent = self.tx.send(event) => sent.is_ok(),
        }
    }

    async fn reconnecting(&self, error: String) {
        tracing::debug!(pod = %self.pod, %error, "log stream dropped; resuming");
        self.send(TailEvent::Reconnecting {
            pod: self.pod.clone(),
            error,
        })
        .await;
    }

    async fn not_saving(&self, e: SinkError) {
        let pod = self.pod.clone();
        self.send(match e {
            SinkError::Busy { .. } => TailEvent::SavedByAnother { pod },
            SinkError::Io(e) => TailEvent::SaveFailed {
                pod,
                error: e.to_string(),
            },
        })
        .await;
    }

    /// Waits the next back-off (cut short to give the place up); false if cancelled meanwhile.
    async fn pause(&self, backoff: &mut Backoff, may_yield: bool) -> bool {
        tokio::select! {
            _ = self.cancel.cancelled() => false,
            _ = self.lease.cancelled(), if may_yield => true,
            _ = tokio::time::sleep(backoff.next_delay()) => true,
        }
    }
}

/// While a log comes faster than this, its lines are handed on (saved, sent to the engine) at
/// most once in this long. A program printing a line at a time arrives a line a chunk: at 1,000
/// lines a second, a file write, a message and a round of the engine for every line cost more
/// than reading them. A line after a quiet spell goes on at once; a held line reaches the screen
/// at most this much later (frames come 100 ms apart or more: a flood is not shown line by line).
const GATHER: Duration = Duration::from_millis(20);
/// Lines or bytes held that are handed on at once, however soon.
const GATHER_LINES: usize = 1024;
const GATHER_BYTES: usize = 256 * 1024;

/// When a stream hands on what it has read.
#[derive(Debug, Default)]
struct Gather {
    last: Option<Instant>,
}

impl Gather {
    /// Read lines are handed on now: the last handing-on is `GATHER` old, or there is a lot.
    fn hand_on_now(&self, out: &Output, now: Instant) -> bool {
        self.last.is_none_or(|at| now >= at + GATHER)
            || out.lines.len() >= GATHER_LINES
            || out.save.len() >= GATHER_BYTES
    }

    /// When what is held goes on without waiting for more (None: nothing is held).
    fn due(&self, out: &Output, now: Instant) -> Option<Instant> {
        if out.is_empty() {
            return None;
        }
        Some(self.last.map_or(now, |at| at + GATHER))
    }

    fn handed_on(&mut self, now: Instant) {
        self.last = Some(now);
    }
}

#[cfg(test)]
mod tests {
    use bytes::Bytes;
    use tokio::time::Instant;

    use super::{GATHER, GATHER_LINES, Gather};
    use crate::k8s::logs::LogLine;
    use crate::k8s::logs::lines::Output;

    fn lines(n: usize) -> Output {
        let line = LogLine {
            ts: None,
            bytes: Bytes::from_static(b"step 1 loss 0.5"),
            continues: false,
        };
        Output {
            lines: vec![line; n],
            save: Vec::new(),
        }
    }

    #[test]
    fn lines_go_on_at_once_after_a_quiet_spell_and_at_most_once_a_gather_while_they_keep_coming() {
        let start = Instant::now();
        let mut gather = Gather::default();
        assert_eq!(gather.due(&Output::default(), start), None, "nothing held");
        assert!(
            gather.hand_on_now(&lines(1), start),
            "the first goes at once"
        );
        gather.handed_on(start);

        let soon = start + GATHER / 4;
        assert!(
            !gather.hand_on_now(&lines(3), soon),
            "the last went 5 ms ago"
        );
        assert_eq!(gather.due(&lines(3), soon), Some(start + GATHER));
        assert!(
            gather.hand_on_now(&lines(GATHER_LINES), soon),
            "a full batch goes"
        );

        let later = start + GATHER * 3;
        assert!(
            gather.hand_on_now(&lines(1), later),
            "after a quiet spell, at once"
        );
    }
}
