//! Container logs as the kubelet keeps them: per pod, per container, per container instance
//! (restart), each line stamped with a strictly increasing time, readable until the pod is deleted.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use bytes::Bytes;
use tokio::sync::watch;

#[derive(Debug, Clone)]
pub struct LogLine {
    /// Nanoseconds since the Unix epoch.
    pub ts: i128,
    /// The line without its newline; any bytes at all (`\r` included: the runtime cuts output
    /// only at `\n`).
    pub text: Bytes,
    /// No newline follows: a piece of a line longer than the runtime keeps in one (containerd's
    /// partial lines), or output that ended without one. `kubectl logs` shows the pieces joined.
    pub partial: bool,
}

#[derive(Debug, Default)]
struct StreamState {
    lines: Vec<LogLine>,
    last_ts: i128,
}

/// One container instance's output. Followers wait on `progress` (line count, finished).
#[derive(Debug)]
pub struct LogStream {
    state: Mutex<StreamState>,
    progress: watch::Sender<(usize, bool)>,
}

impl Default for LogStream {
    fn default() -> Self {
        Self {
            state: Mutex::new(StreamState::default()),
            progress: watch::channel((0, false)).0,
        }
    }
}

fn now_nanos() -> i128 {
    jiff::Timestamp::now().as_nanosecond()
}

impl LogStream {
    /// Appends lines, stamping each with the current time (never earlier than the line before).
    pub fn push_many(&self, lines: impl IntoIterator<Item = Bytes>) {
        self.push_pieces(lines.into_iter().map(|text| (text, false)));
    }

    /// Appends lines and pieces of lines (`true`: no newline follows), stamped as `push_many`.
    pub fn push_pieces(&self, pieces: impl IntoIterator<Item = (Bytes, bool)>) {
        let mut state = self.state.lock().unwrap_or_else(|p| p.into_inner());
        let now = now_nanos();
        for (text, partial) in pieces {
            let ts = now.max(state.last_ts + 1);
            state.last_ts = ts;
            state.lines.push(LogLine { ts, text, partial });
        }
        let len = state.lines.len();
        drop(state);
        self.progress.send_modify(|p| p.0 = len);
    }

    pub fn push(&self, line: impl Into<Bytes>) {
        self.push_many(std::iter::once(line.into()));
    }

    /// The container has exited: followers end after the last line.
    pub fn finish(&self) {
        self.progress.send_modify(|p| p.1 = true);
    }

    pub fn is_finished(&self) -> bool {
        self.progress.borrow().1
    }

    pub fn len(&self) -> usize {
        self.progress.borrow().0
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Lines from index `from` on, at most `max` of them.
    pub fn read(&self, from: usize, max: usize) -> Vec<LogLine> {
        let state = self.state.lock().unwrap_or_else(|p| p.into_inner());
        let end = state.lines.len().min(from.saturating_add(max));
        state
            .lines
            .get(from..end)
            .map(<[LogLine]>::to_vec)
            .unwrap_or_default()
    }

    /// Index of the first line stamped at or after `ts`.
    pub fn first_at_or_after(&self, ts: i128) -> usize {
        let state = self.state.lock().unwrap_or_else(|p| p.into_inner());
        state.lines.partition_point(|l| l.ts < ts)
    }

    pub fn watch(&self) -> watch::Receiver<(usize, bool)> {
        self.progress.subscribe()
    }
}

type ContainerKey = (String, String, String);

/// Every container's output in one cluster.
#[derive(Debug, Default)]
pub struct LogBook {
    streams: Mutex<HashMap<ContainerKey, Vec<Arc<LogStream>>>>,
}

impl LogBook {
    /// A new stream for the next instance of a container (a start or a restart).
    pub fn start_instance(&self, namespace: &str, pod: &str, container: &str) -> Arc<LogStream> {
        let stream = Arc::new(LogStream::default());
        self.streams
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .entry((namespace.into(), pod.into(), container.into()))
            .or_default()
            .push(stream.clone());
        stream
    }

    /// The current instance's stream, or with `previous` the one before it.
    pub fn stream(
        &self,
        namespace: &str,
        pod: &str,
        container: &str,
        previous: bool,
    ) -> Option<Arc<LogStream>> {
        let streams = self.streams.lock().unwrap_or_else(|p| p.into_inner());
        let instances = streams.get(&(namespace.into(), pod.into(), container.into()))?;
        let skip = usize::from(previous);
        instances.iter().rev().nth(skip).cloned()
    }

    /// A deleted pod's logs go with it.
    pub fn forget_pod(&self, namespace: &str, pod: &str) {
        self.streams
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .retain(|(ns, p, _), _| !(ns == namespace && p == pod));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stamps_strictly_increase() {
        let s = LogStream::default();
        s.push_many((0..1000).map(|i| Bytes::from(format!("line {i}"))));
        let lines = s.read(0, usize::MAX);
        assert_eq!(lines.len(), 1000);
        assert!(lines.windows(2).all(|w| w[0].ts < w[1].ts));
        assert_eq!(s.first_at_or_after(lines[500].ts), 500);
    }

    #[test]
    fn previous_instance() {
        let book = LogBook::default();
        let first = book.start_instance("ns", "p", "c");
        first.push("one");
        let second = book.start_instance("ns", "p", "c");
        second.push("two");
        let prev = book.stream("ns", "p", "c", true).map(|s| s.read(0, 10));
        assert_eq!(prev.map(|l| l[0].text.clone()), Some(Bytes::from("one")));
        book.forget_pod("ns", "p");
        assert!(book.stream("ns", "p", "c", false).is_none());
    }
}
