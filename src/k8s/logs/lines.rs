//! Turns a log stream requested with `timestamps=true` into lines, exactly once across
//! reconnections. Bytes, not strings: a line may hold anything but a newline, at any length.
//!
//! Each line starts with its RFC 3339 timestamp (the kubelet's, strictly increasing per
//! container in practice). A cursor remembers the newest line delivered, how many lines shared
//! its timestamp, and how much of it was delivered if it was cut into fragments. After a
//! reconnect from `sinceTime` (whole seconds), lines at or before the cursor are dropped. A
//! second cursor does the same for what the file on disk already holds, so a new session shows
//! a pod's whole log but appends only what the file lacks.

use bytes::Bytes;

use super::LogLine;
use super::timestamp::TimestampCache;

/// Longer lines are delivered in fragments of this size, so memory stays bounded.
pub const FRAGMENT_BYTES: usize = 256 * 1024;
/// A timestamp prefix is shorter than this; a longer run of bytes without a space is a line
/// without a timestamp.
const MAX_HEAD: usize = 64;

/// How far a consumer has got in one container's log.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Cursor {
    /// Nanosecond timestamp of the newest line delivered.
    pub ts: Option<i128>,
    /// How many delivered lines carry exactly `ts`.
    pub at_ts: u32,
    /// Bytes delivered of the newest line while it is incomplete (0: it is complete).
    pub partial: u64,
}

impl Cursor {
    /// `sinceTime` for a reconnect: the cursor's second, rounded down (the API's precision).
    pub fn since(&self) -> Option<jiff::Timestamp> {
        let ts = self.ts?;
        let secs = ts.div_euclid(1_000_000_000);
        jiff::Timestamp::from_second(i64::try_from(secs).ok()?).ok()
    }

    /// `ts at_ts partial`, one line, for the file beside a saved log.
    pub fn encode(&self) -> String {
        match self.ts {
            Some(ts) => format!("{ts} {} {}\n", self.at_ts, self.partial),
            None => String::new(),
        }
    }

    pub fn decode(text: &str) -> Option<Self> {
        let mut parts = text.split_whitespace();
        let ts = parts.next()?.parse().ok()?;
        let at_ts = parts.next()?.parse().ok()?;
        let partial = parts.next()?.parse().ok()?;
        Some(Self {
            ts: Some(ts),
            at_ts,
            partial,
        })
    }

    fn position(&self) -> (Option<i128>, u32) {
        (self.ts, self.at_ts)
    }
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum Verdict {
    /// Delivered before: drop it.
    Old,
    /// Partly delivered before: deliver from this byte on.
    Resume(u64),
    New,
}

/// A cursor and how many lines at its timestamp this pass has seen again.
#[derive(Debug, Clone, Default)]
struct Mark {
    cursor: Cursor,
    replayed: u32,
}

impl Mark {
    fn judge(&mut self, ts: i128) -> Verdict {
        let (verdict, replayed) = self.peek(ts);
        self.replayed = replayed;
        verdict
    }

    /// The verdict on the next line and the replay count after it, without counting it yet.
    fn peek(&self, ts: i128) -> (Verdict, u32) {
        match self.cursor.ts {
            Some(c) if ts < c => (Verdict::Old, self.replayed),
            Some(c) if ts == c => {
                let replayed = self.replayed + 1;
                let verdict = if replayed < self.cursor.at_ts {
                    Verdict::Old
                } else if replayed == self.cursor.at_ts {
                    if self.cursor.partial > 0 {
                        Verdict::Resume(self.cursor.partial)
                    } else {
                        Verdict::Old
                    }
                } else {
                    Verdict::New
                };
                (verdict, replayed)
            }
            _ => (Verdict::New, self.replayed),
        }
    }

    /// Bytes `..total` of a line stamped `ts` are delivered; `first` when it is the first time.
    fn delivered(&mut self, ts: i128, first: bool, total: u64, complete: bool) {
        if first {
            if self.cursor.ts == Some(ts) {
                self.cursor.at_ts += 1;
            } else {
                self.cursor.ts = Some(ts);
                self.cursor.at_ts = 1;
                self.replayed = 1;
            }
        }
        self.cursor.partial = if complete { 0 } else { total };
    }
}

/// One consumer's decision about the current line.
#[derive(Debug, Clone, Copy, Default)]
struct Take {
    /// Deliver bytes from this offset of the line body on (None: not at all).
    from: Option<u64>,
    /// Nothing of this line was delivered to this consumer before.
    first: bool,
}

#[derive(Debug)]
enum State {
    /// Reading the timestamp prefix.
    Head,
    /// Reading the body of a line.
    Body {
        ts: Option<i128>,
        show: Take,
        save: Take,
        /// The file's replay count once this line is shown: counted only when it is, since a
        /// line cut before it was shown comes again.
        save_replayed: Option<u32>,
        /// Offset in the line body of `body[0]`.
        start: u64,
    },
}

/// What one chunk of the stream produced.
#[derive(Debug, Default)]
pub struct Output {
    /// For whoever shows the log.
    pub lines: Vec<LogLine>,
    /// To append to the file: exactly the container's bytes, newlines included.
    pub save: Vec<u8>,
}

impl Output {
    /// No line to show and nothing to save.
    pub fn is_empty(&self) -> bool {
        self.lines.is_empty() && self.save.is_empty()
    }
}

/// The parser and both cursors for one container's log, across reconnects.
#[derive(Debug)]
pub struct LineReader {
    shown: Mark,
    saved: Option<Mark>,
    state: State,
    head: Vec<u8>,
    body: Vec<u8>,
    clock: TimestampCache,
}

impl LineReader {
    /// `saved`: the cursor of the file on disk (Some(default) for a new file), or None when
    /// nothing is saved.
    pub fn new(saved: Option<Cursor>) -> Self {
        Self {
            shown: Mark::default(),
            saved: saved.map(|cursor| Mark {
                cursor,
                replayed: 0,
            }),
            state: State::Head,
            head: Vec::new(),
            body: Vec::new(),
            clock: TimestampCache::default(),
        }
    }

    /// Where the consumer is: reconnect from `cursor().since()`.
    pub fn cursor(&self) -> Cursor {
        self.shown.cursor
    }

    /// What the file holds, to be stored beside it after each append.
    pub fn saved_cursor(&self) -> Option<Cursor> {
        self.saved.as_ref().map(|m| m.cursor)
    }

    /// Nothing more is saved: the file is no longer this reader's to append to.
    pub fn stop_saving(&mut self) {
        self.saved = None;
    }

    /// The connection ended: an unfinished line is dropped (it comes again, from the cursor).
    pub fn reconnect(&mut self) {
        self.state = State::Head;
        self.head.clear();
        self.body.clear();
        self.shown.replayed = 0;
    }

    /// The log is over for good: an unterminated last line is delivered as a line.
    pub fn finish(&mut self, out: &mut Output) {
        if matches!(self.state, State::Body { .. }) {
            self.flush(true, out);
        } else if !self.head.is_empty() {
            self.body = std::mem::take(&mut self.head);
            self.start_untimed();
            self.flush(true, out);
        }
        self.reconnect();
    }

    pub fn push(&mut self, mut chunk: &[u8], out: &mut Output) {
        while !chunk.is_empty() {
            match self.state {
                State::Head => {
                    let stop = memchr::memchr2(b' ', b'\n', chunk)
                        .filter(|i| self.head.len() + i < MAX_HEAD);
                    match stop {
                        Some(i) if chunk[i] == b' ' => {
                            self.head.extend_from_slice(&chunk[..i]);
                            chunk = &chunk[i + 1..];
                            self.start_line();
                        }
                        Some(i) => {
                            // A newline before any space: a line without a timestamp.
                            self.body = std::mem::take(&mut self.head);
                            self.body.extend_from_slice(&chunk[..i]);
                            chunk = &chunk[i + 1..];
                            self.start_untimed();
                            self.flush(true, out);
                        }
                        None if self.head.len() + chunk.len() < MAX_HEAD => {
                            self.head.extend_from_slice(chunk);
                            chunk = &[];
                        }
                        None => {
                            self.body = std::mem::take(&mut self.head);
                            self.start_untimed();
                        }
                    }
                }
                State::Body { .. } => {
                    let room = FRAGMENT_BYTES.saturating_sub(self.body.len()).max(1);
                    let scan = &chunk[..chunk.len().min(room)];
                    match memchr::memchr(b'\n', scan) {
                        Some(i) => {
                            self.body.extend_from_slice(&scan[..i]);
                            chunk = &chunk[i + 1..];
                            self.flush(true, out);
                        }
                        None => {
                            self.body.extend_from_slice(scan);
                            chunk = &chunk[scan.len()..];
                            if self.body.len() >= FRAGMENT_BYTES {
                                self.flush(false, out);
                            }
                        }
                    }
                }
            }
        }
    }

    fn start_line(&mut self) {
        let Some(ts) = self.clock.parse(&self.head) else {
            // Not a timestamp: the head is part of an untimed line.
            let mut body = std::mem::take(&mut self.head);
            body.push(b' ');
            self.body = body;
            self.start_untimed();
            return;
        };
        self.head.clear();
        let shown_verdict = self.shown.judge(ts);
        let show = take(shown_verdict);
        let mut save_replayed = None;
        let save = match (&mut self.saved, shown_verdict) {
            (None, _) | (_, Verdict::Old) => Take::default(),
            (Some(saved), Verdict::New) => {
                let (verdict, replayed) = saved.peek(ts);
                save_replayed = Some(replayed);
                take(verdict)
            }
            (Some(saved), Verdict::Resume(_)) => {
                // The line was cut while being delivered; the file got as much of it as was
                // shown, unless the file was already past it.
                if saved.cursor.position() == self.shown.cursor.position() {
                    if saved.cursor.partial > 0 {
                        Take {
                            from: Some(saved.cursor.partial),
                            first: false,
                        }
                    } else {
                        Take::default()
                    }
                } else {
                    Take::default()
                }
            }
        };
        self.state = State::Body {
            ts: Some(ts),
            show,
            save,
            save_replayed,
            start: 0,
        };
    }

    fn start_untimed(&mut self) {
        let all = Take {
            from: Some(0),
            first: true,
        };
        self.state = State::Body {
            ts: None,
            show: all,
            save: if self.saved.is_some() {
                all
            } else {
                Take::default()
            },
            save_replayed: None,
            start: 0,
        };
    }

    /// Delivers the buffered part of the current line; `complete` at its newline.
    fn flush(&mut self, complete: bool, out: &mut Output) {
        let State::Body {
            ts,
            show,
            save,
            save_replayed,
            start,
        } = &mut self.state
        else {
            return;
        };
        let end = *start + self.body.len() as u64;
        let slice_from = |from: u64| -> &[u8] {
            let skip = from.saturating_sub(*start).min(self.body.len() as u64) as usize;
            &self.body[skip..]
        };
        if let Some(from) = show.from
            && (complete || from < end)
        {
            let bytes = slice_from(from);
            if complete || !bytes.is_empty() {
                out.lines.push(LogLine {
                    ts: *ts,
                    bytes: Bytes::copy_from_slice(bytes),
                    continues: !complete,
                });
                if let Some(t) = ts {
                    self.shown.delivered(*t, show.first, end, complete);
                }
                if let (Some(r), Some(saved)) = (save_replayed.take(), &mut self.saved) {
                    saved.replayed = r;
                }
                show.first = false;
            }
        }
        if let Some(from) = save.from
            && (complete || from < end)
            && let Some(saved) = &mut self.saved
        {
            out.save.extend_from_slice(slice_from(from));
            if complete {
                out.save.push(b'\n');
            }
            if let Some(t) = ts {
                saved.delivered(*t, save.first, end, complete);
            }
            save.first = false;
        }
        *start = end;
        self.body.clear();
        if complete {
            self.state = State::Head;
        }
    }
}

fn take(v: Verdict) -> Take {
    match v {
        Verdict::Old => Take::default(),
        Verdict::Resume(from) => Take {
            from: Some(from),
            first: false,
        },
        Verdict::New => Take {
            from: Some(0),
            first: true,
        },
    }
}
