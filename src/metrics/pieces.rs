//! One pod's container output, as it arrives, to parsed updates. The kubelet splits output
//! only at `\n`, and a long line comes in pieces; tqdm redraws its bar after a `\r` without a
//! newline for minutes on end. So the raw pieces are joined and cut at every `\r` and `\n`,
//! and every update is read, not only what a terminal would leave on screen.
//!
//! A stream also knows what one line does not: the epoch a Keras bar belongs to (from the
//! `Epoch 2/10` line before it), and an x axis that keeps going up when a bar's counter starts
//! again at each epoch (`Epoch 1:  0%| 0/18` follows `Epoch 0: 100%| 18/18`). A line without a
//! step of its own (Hugging Face's dicts, between its bar's updates) is placed at the last step
//! seen; a stream without steps uses a fractional epoch, and without either the update's
//! number in the stream. The x axis by precedence: a step the line names (`step`, `global_step`,
//! `num_updates`, `iteration`, `iter`) over a counter within the epoch (a bar's `4/18`, fairseq's
//! `100 / 1000`, made to keep going up), over a fractional epoch, over the update's number.

use memchr::memchr2_iter;

use super::parse::{Counter, LineParser, ParsedRef, Progress, Shape};

/// Longest update kept: the rest of a longer one (a 1 MiB line of base64) is dropped.
pub const MAX_UPDATE: usize = 64 * 1024;

/// Joins raw pieces and cuts them into `\r`- or `\n`-terminated updates.
#[derive(Debug, Default)]
pub struct Pieces {
    pending: Vec<u8>,
}

impl Pieces {
    pub fn new() -> Self {
        Self::default()
    }

    /// Calls `each` with every non-empty update that `piece` completes.
    pub fn push(&mut self, piece: &[u8], mut each: impl FnMut(&[u8])) {
        let mut start = 0;
        for end in memchr2_iter(b'\r', b'\n', piece) {
            let part = &piece[start..end];
            if self.pending.is_empty() {
                if !part.is_empty() {
                    each(part);
                }
            } else {
                self.keep(part);
                each(&self.pending);
                self.pending.clear();
            }
            start = end + 1;
        }
        self.keep(&piece[start..]);
    }

    /// As `push(line)` then `push(b"\n")`, without copying a line that arrives whole (the
    /// usual case: nothing pending, so its updates are read where they are).
    pub fn push_line(&mut self, line: &[u8], mut each: impl FnMut(&[u8])) {
        if !self.pending.is_empty() {
            self.push(line, &mut each);
            self.push(b"\n", each);
            return;
        }
        let mut start = 0;
        for end in memchr2_iter(b'\r', b'\n', line) {
            if end > start {
                each(&line[start..end]);
            }
            start = end + 1;
        }
        if start < line.len() {
            each(&line[start..]);
        }
    }

    /// Calls `each` with what is left at the end of the stream, an update without terminator.
    pub fn finish(&mut self, mut each: impl FnMut(&[u8])) {
        if !self.pending.is_empty() {
            each(&self.pending);
            self.pending.clear();
        }
    }

    fn keep(&mut self, bytes: &[u8]) {
        let room = MAX_UPDATE.saturating_sub(self.pending.len());
        self.pending
            .extend_from_slice(&bytes[..bytes.len().min(room)]);
    }
}

/// One update with metrics or progress, placed on the stream's x axis.
#[derive(Debug, Clone, Copy)]
pub struct Sample<'a> {
    pub x: f64,
    pub epoch: Option<f64>,
    /// The line's progress, with the epoch counter of the stream when the line has none.
    pub progress: &'a Progress,
    pub parsed: &'a ParsedRef<'a>,
}

/// The progress of a line that shows none.
static NO_PROGRESS: Progress = Progress {
    epoch: None,
    step: None,
    percent: None,
};

impl<'a> Sample<'a> {
    pub fn metrics(&self) -> impl Iterator<Item = (&'a str, f64)> + 'a {
        self.parsed.metrics()
    }
}

/// One pod's output to samples: [`Pieces`] and what the stream implies. The [`LineParser`]
/// is passed in: it is scratch space, so thousands of pods' streams can share one.
#[derive(Debug, Default)]
pub struct MetricStream {
    pieces: Pieces,
    context: Context,
}

impl MetricStream {
    pub fn new() -> Self {
        Self::default()
    }

    /// Feeds raw container output; `each` sees every sample it completes.
    pub fn push(
        &mut self,
        parser: &mut LineParser,
        piece: &[u8],
        mut each: impl FnMut(&Sample<'_>),
    ) {
        let Self { pieces, context } = self;
        pieces.push(piece, |update| {
            context.read(parser, update, &mut each);
        });
    }

    /// Feeds one whole line that has lost its `\n` (as the kubelet's lines and saved logs
    /// come).
    pub fn push_line(
        &mut self,
        parser: &mut LineParser,
        line: &[u8],
        mut each: impl FnMut(&Sample<'_>),
    ) {
        let Self { pieces, context } = self;
        pieces.push_line(line, |update| {
            context.read(parser, update, &mut each);
        });
    }

    /// Ends the stream: an unterminated last update is read too.
    pub fn finish(&mut self, parser: &mut LineParser, mut each: impl FnMut(&Sample<'_>)) {
        let Self { pieces, context } = self;
        pieces.finish(|update| {
            context.read(parser, update, &mut each);
        });
    }

    /// The latest progress the stream has shown.
    pub fn progress(&self) -> Progress {
        self.context.progress
    }
}

#[derive(Debug, Default)]
struct Context {
    /// Updates seen, with or without metrics: the x axis of last resort.
    updates: u64,
    epoch: Option<f64>,
    epoch_counter: Option<Counter>,
    /// The total of the bar that counts training steps; a bar with a smaller total counts
    /// something else (an evaluation loop inside training).
    main_total: Option<f64>,
    last_counter: Option<Counter>,
    counting_epoch: Option<f64>,
    /// `counting_epoch` when `last_counter` was seen.
    counter_epoch: Option<f64>,
    /// Added to a counter that starts again with the same total.
    offset: f64,
    last_step_x: Option<f64>,
    progress: Progress,
    /// The shape of the stream's last plain line: most lines of a run are read by it.
    shape: Shape,
}

impl Context {
    /// One update, read (by the stream's shape when it has it) and placed; `each` sees it
    /// when it is a sample.
    fn read(&mut self, parser: &mut LineParser, update: &[u8], each: impl FnOnce(&Sample<'_>)) {
        self.updates += 1;
        if let Some(parsed) = parser.parse_shaped(update, &mut self.shape) {
            each(&self.place(&parsed));
        }
    }

    /// The sample's progress is the stream's, set here when the line shows progress: a
    /// reference, not a copy (copying what the parser has just written a field at a time
    /// stalls the processor on every line).
    fn place<'a>(&'a mut self, parsed: &'a ParsedRef<'a>) -> Sample<'a> {
        if parsed.progress.epoch.is_some() {
            self.epoch_counter = parsed.progress.epoch;
        }
        if parsed.epoch.is_some() {
            self.epoch = parsed.epoch;
            // The epoch of a counting line (`Epoch 2/10`, `Epoch 1: 6%|..| 1/18`), not a
            // fractional one in a dict between two redraws of the same bar.
            if !parsed.progress.is_empty() {
                self.counting_epoch = parsed.epoch;
            }
        }
        let counter = parsed.progress.step.filter(|c| self.is_main(*c));
        let percent = parsed
            .progress
            .percent
            .filter(|_| counter.is_some() || parsed.progress.step.is_none());
        let shows = parsed.progress.epoch.is_some() || counter.is_some() || percent.is_some();
        if shows {
            self.progress.epoch = parsed.progress.epoch.or(self.epoch_counter);
            self.progress.step = counter;
            self.progress.percent = percent;
        }
        let step = match (parsed.step, counter) {
            (Some(step), _) if parsed.progress.step.is_none() || counter.is_some() => Some(step),
            (_, Some(c)) => Some(c.done),
            _ => None,
        };
        let x = if let Some(step) = step {
            // A counter that starts again (or, in a new epoch, shows the same count once more:
            // Keras prints only `469/469` per epoch in a pod) has gone round once.
            if let (Some(c), Some(last)) = (counter, self.last_counter)
                && c.total == last.total
                && (c.done < last.done
                    || c.done == last.done && self.counting_epoch != self.counter_epoch)
            {
                self.offset += c.total;
            }
            if counter.is_some() {
                self.last_counter = counter;
                self.counter_epoch = self.counting_epoch;
            }
            // A step the line names beside a counter of its own (fairseq's `num_updates=` after
            // `epoch 001:    100 / 1000`) counts the whole run already.
            let global = parsed.step.is_some() && counter.is_none_or(|c| c.done != step);
            let x = if global { step } else { step + self.offset };
            self.last_step_x = Some(x);
            x
        } else if let Some(x) = self.last_step_x {
            x
        } else if let Some(epoch) = parsed.epoch.or(self.epoch) {
            epoch
        } else {
            self.updates as f64
        };
        Sample {
            x,
            epoch: parsed.epoch.or(self.epoch),
            progress: if shows { &self.progress } else { &NO_PROGRESS },
            parsed,
        }
    }

    /// Whether a bar's counter counts training steps (see `main_total`).
    fn is_main(&mut self, counter: Counter) -> bool {
        match self.main_total {
            Some(total) if counter.total < total => false,
            Some(total) if counter.total == total => true,
            _ => {
                self.main_total = Some(counter.total);
                self.last_counter = None;
                true
            }
        }
    }
}

#[cfg(test)]
#[path = "pieces_tests.rs"]
mod tests;
