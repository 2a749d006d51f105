//! One store of log lines: a bounded buffer of sanitised lines (every line is also on disk) of
//! the source being followed. The engine keeps one for the newest attempt's pods, however many
//! viewers read it; a viewer that looks at a previous container or an older attempt keeps a
//! small one of its own. Every line has an absolute number (counted from the first line of the
//! source), so a viewer's place does not move when lines arrive or the oldest leave.

use std::collections::HashMap;

pub use super::log_lines::{Line, LineBuffer};
use crate::k8s::logs::{LogLine, StreamEnd};
use crate::sanitize;

/// Lines held for the screen; older ones stay in the files on disk.
pub const DEFAULT_CAPACITY: usize = 100_000;
/// Characters of one line kept for display (the file on disk keeps the whole line).
pub const DISPLAY_CHARS: usize = 4096;

#[derive(Debug, Clone, PartialEq)]
pub struct Source {
    pub attempt: String,
    /// None: every pod of the attempt, merged.
    pub pod: Option<String>,
    pub previous: bool,
}

#[derive(Debug, Clone)]
pub struct LogStore {
    pub source: Option<Source>,
    /// Bumped on every change of source: events of an older tail are dropped.
    pub generation: u64,
    pub pods: Vec<String>,
    /// `pods` the other way round: a batch finds its pod without walking 5,000 names.
    pod_numbers: HashMap<String, u32>,
    pub lines: LineBuffer,
    capacity: usize,
    /// Lines received since the source was chosen (more than held once the buffer rolls over).
    pub received: u64,
    /// The same, per pod (by pod number).
    pub received_of: Vec<u64>,
    pub saved_to: Option<String>,
    /// Streams ended since the source was chosen (each told as a notice when it ends, not
    /// kept: a Job of thousands of pods would keep every name again).
    pub ended: usize,
    /// The tail's pod watch failed (why), and has not listed the pods again since: pods that
    /// started meanwhile are not followed yet.
    pub pods_stale: Option<String>,
    /// Pods whose last line goes on in the next piece (very long lines come in pieces), and
    /// that line's number (counted as `received` counts).
    continuing: Vec<(u32, u64)>,
}

impl Default for LogStore {
    fn default() -> Self {
        Self::with_capacity(DEFAULT_CAPACITY)
    }
}

impl LogStore {
    pub fn with_capacity(capacity: usize) -> Self {
        Self {
            source: None,
            generation: 0,
            pods: Vec::new(),
            pod_numbers: HashMap::new(),
            lines: LineBuffer::default(),
            capacity: capacity.max(1),
            received: 0,
            received_of: Vec::new(),
            saved_to: None,
            ended: 0,
            pods_stale: None,
            continuing: Vec::new(),
        }
    }

    /// Starts over on a new source; returns the generation the tail must carry.
    pub fn switch(&mut self, source: Source) -> u64 {
        self.generation += 1;
        self.source = Some(source);
        self.pods.clear();
        self.pod_numbers.clear();
        self.lines.clear();
        self.received = 0;
        self.received_of.clear();
        self.saved_to = None;
        self.ended = 0;
        self.pods_stale = None;
        self.continuing.clear();
        self.generation
    }

    fn pod_index(&mut self, pod: &str) -> u32 {
        if let Some(&n) = self.pod_numbers.get(pod) {
            return n;
        }
        let n = self.pods.len() as u32;
        self.pods.push(pod.to_string());
        self.received_of.push(0);
        self.pod_numbers.insert(pod.to_string(), n);
        n
    }

    /// Adds a batch of lines from one pod.
    pub fn push(&mut self, pod: &str, lines: &[LogLine]) {
        let index = self.pod_index(pod);
        for line in lines {
            // Only a pod in the middle of a very long line has an entry to extend: found by its
            // number, however many lines of other pods came in between (unless it has left).
            let last = match self.continuing.iter().position(|(p, _)| *p == index) {
                Some(at) => {
                    let (_, number) = self.continuing.swap_remove(at);
                    let first = self.received - self.lines.len() as u64;
                    number
                        .checked_sub(first)
                        .map(|i| i as usize)
                        .filter(|&i| i < self.lines.len())
                }
                None => None,
            };
            match last {
                Some(at) => {
                    let held = self.lines.get(at).map_or(0, |l| l.text.chars().count());
                    let room = DISPLAY_CHARS.saturating_sub(held);
                    // A line already at its display length takes no more (the file has it all).
                    if room > 0 {
                        let piece = sanitize::screen_styled(&line.bytes);
                        let text = truncate_chars(&piece.text, room);
                        self.lines.extend(at, text, &piece.runs);
                    }
                }
                None => {
                    let piece = sanitize::screen_styled(&line.bytes);
                    if self.lines.is_empty() {
                        // Untouched pages cost nothing: one allocation instead of regrowing.
                        self.lines.reserve(self.capacity);
                    }
                    self.lines.push_back(
                        index,
                        line.ts.and_then(|t| i64::try_from(t).ok()),
                        truncate_chars(&piece.text, DISPLAY_CHARS),
                        &piece.runs,
                    );
                    self.received += 1;
                    if let Some(n) = self.received_of.get_mut(index as usize) {
                        *n += 1;
                    }
                }
            }
            if line.continues {
                let number = match last {
                    Some(at) => self.received - self.lines.len() as u64 + at as u64,
                    None => self.received - 1,
                };
                self.continuing.push((index, number));
            }
        }
        self.lines.keep_newest(self.capacity);
    }

    /// A pod's stream ended: counted; returns how, in words.
    pub fn ended(&mut self, why: &StreamEnd) -> String {
        self.ended += 1;
        match why {
            StreamEnd::Completed => "ended".to_string(),
            StreamEnd::PodDeleted => "pod deleted".to_string(),
            StreamEnd::Stopped => "stopped".to_string(),
            StreamEnd::Failed(e) => format!("failed: {e}"),
        }
    }

    /// The number of the oldest line held (lines are numbered from 0 since the source began).
    pub fn first_number(&self) -> u64 {
        self.received - self.lines.len() as u64
    }

    /// The number of the line held at `index`.
    pub fn number_of(&self, index: usize) -> u64 {
        self.first_number() + index as u64
    }

    /// Where line `number` is held: None once it has left (or before it came).
    pub fn index_of(&self, number: u64) -> Option<usize> {
        number
            .checked_sub(self.first_number())
            .map(|i| i as usize)
            .filter(|&i| i < self.lines.len())
    }

    /// The number a pod's lines carry in `Line::pod`, if it has sent any.
    pub fn pod_number(&self, pod: &str) -> Option<u32> {
        self.pod_numbers.get(pod).copied()
    }

    pub fn source_label(&self) -> String {
        match &self.source {
            None => "no attempt yet".into(),
            Some(s) => {
                let who = s.pod.clone().unwrap_or_else(|| "all pods".into());
                if s.previous {
                    format!("{who} (previous)")
                } else {
                    who
                }
            }
        }
    }
}

/// The first `max` characters of `text` (all of it when shorter).
fn truncate_chars(text: &str, max: usize) -> &str {
    // A text of at most `max` bytes has at most `max` characters: no need to count them.
    if text.len() <= max {
        return text;
    }
    match text.char_indices().nth(max) {
        Some((at, _)) => &text[..at],
        None => text,
    }
}

/// `HH:MM:SS.mmm` (UTC) of a kubelet timestamp in nanoseconds, as the logs pane shows it.
pub fn time_of_day(ts: i64) -> Option<String> {
    let t = jiff::Timestamp::from_nanosecond(i128::from(ts)).ok()?;
    Some(t.strftime("%H:%M:%S%.3f").to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn line(text: &str) -> LogLine {
        LogLine {
            ts: None,
            bytes: bytes::Bytes::from(text.to_string()),
            continues: false,
        }
    }

    #[test]
    fn an_ended_stream_is_counted_and_said_in_words() {
        let mut view = LogStore::default();
        assert_eq!(view.ended(&StreamEnd::Completed), "ended");
        assert_eq!(view.ended(&StreamEnd::PodDeleted), "pod deleted");
        assert_eq!(view.ended(&StreamEnd::Stopped), "stopped");
        assert_eq!(
            view.ended(&StreamEnd::Failed("container is waiting to start".into())),
            "failed: container is waiting to start"
        );
        assert_eq!(view.ended, 4);
    }

    #[test]
    fn bounded_and_sanitised() {
        let mut view = LogStore::with_capacity(3);
        view.switch(Source {
            attempt: "a".into(),
            pod: None,
            previous: false,
        });
        view.push(
            "p",
            &[line("one"), line("\x1b[2Jtwo"), line("three"), line("four")],
        );
        assert_eq!(view.lines.len(), 3);
        assert_eq!(view.received, 4);
        assert_eq!(view.lines.get(0).map(|l| l.text), Some("two"));
    }

    #[test]
    fn a_long_line_is_joined_whatever_other_pods_say_meanwhile() {
        let mut view = LogStore::with_capacity(1_000);
        view.switch(Source {
            attempt: "a".into(),
            pod: None,
            previous: false,
        });
        let piece = |text: &str| LogLine {
            continues: true,
            ..line(text)
        };
        view.push("worker-0", &[line("before"), piece("first half, ")]);
        let chatter: Vec<LogLine> = (0..500).map(|i| line(&format!("step {i}"))).collect();
        view.push("worker-1", &chatter);
        view.push("worker-0", &[piece("second, "), line("end"), line("after")]);
        let mine: Vec<&str> = view
            .lines
            .iter()
            .filter(|l| l.pod == 0)
            .map(|l| l.text)
            .collect();
        assert_eq!(mine, ["before", "first half, second, end", "after"]);
        assert_eq!(view.received, 503);

        // Once the line has left the buffer, the rest starts a line of its own.
        let mut small = LogStore::with_capacity(3);
        small.switch(Source {
            attempt: "a".into(),
            pod: None,
            previous: false,
        });
        small.push("worker-0", &[piece("gone ")]);
        small.push("worker-1", &[line("1"), line("2"), line("3")]);
        small.push("worker-0", &[line("rest")]);
        let texts: Vec<&str> = small.lines.iter().map(|l| l.text).collect();
        assert_eq!(texts, ["2", "3", "rest"]);
    }
}
