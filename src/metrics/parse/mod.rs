//! One log line in, the training metrics it prints out. The formats are tried in the order that
//! makes each unambiguous: a JSON object, a Python dict (Hugging Face's Trainer), a tqdm or
//! Lightning progress bar, a Keras progress line, a Rich bar, then plain `key=value` /
//! `key: value` tokens.
//! Every scanner is a single forward pass over the line (linear in its length), and a line
//! without any of the bytes a metric needs is given up after one `memchr` pass.
//!
//! A line gives the metrics it names, the x axis it states (`step`, `global_step`, `iteration`,
//! `iter`, `it`; a fractional `epoch`) and the progress counters it shows (`epoch 1/3`,
//! `step 10/1000`, a bar's `4/18` and its percentage). What a stream implies across lines (the
//! epoch a Keras bar belongs to, the x of a line without one) is for [`super::pieces`].
//!
//! A stream's plain lines mostly share one shape, the same text with other numbers: such a
//! line is read by the shape of the one before ([`shape`]), giving what the full read would.

mod bars;
mod found;
mod naming;
mod object;
mod shape;
mod tokens;

#[cfg(test)]
mod framework_tests;
#[cfg(test)]
mod tests;

use memchr::{memchr, memchr3};

use found::Names;
pub(crate) use found::{Found, MAX_NAME};
pub use shape::Shape;

use super::strip::strip_escapes;

/// Which of the understood formats a line was read as.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    Json,
    PyDict,
    Tqdm,
    Keras,
    Rich,
    Plain,
}

/// `done` out of `total`, as printed (`epoch 1/3` is `1` of `3`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Counter {
    pub done: f64,
    pub total: f64,
}

/// How far a run has got, as far as a line (or a stream's context) says.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Progress {
    pub epoch: Option<Counter>,
    pub step: Option<Counter>,
    /// A progress bar's percentage.
    pub percent: Option<f64>,
}

impl Progress {
    pub fn is_empty(&self) -> bool {
        self.epoch.is_none() && self.step.is_none() && self.percent.is_none()
    }

    /// The share of the run done, in `0.0..=1.0`. With an epoch counter beside a step counter
    /// the steps are those of the current epoch (`epoch 2/3 step 50/100` is half of the second
    /// of three); epoch counters count from 1 as printed (`Epoch 1/2` starts the first).
    pub fn fraction(&self) -> Option<f64> {
        let share = |c: Counter| (c.total > 0.0).then(|| c.done / c.total);
        let value = match (self.epoch, self.step) {
            (Some(e), Some(s)) if e.total > 0.0 => {
                ((e.done - 1.0).max(0.0) + share(s).unwrap_or(0.0).min(1.0)) / e.total
            }
            (_, Some(s)) => share(s)?,
            (Some(e), None) => (e.done - 1.0).max(0.0) / e.total,
            (None, None) => self.percent? / 100.0,
        };
        value.is_finite().then(|| value.clamp(0.0, 1.0))
    }
}

/// What one line says, owned.
#[derive(Debug, Clone, PartialEq)]
pub struct Parsed {
    pub format: Format,
    pub metrics: Vec<(String, f64)>,
    pub step: Option<f64>,
    pub epoch: Option<f64>,
    pub progress: Progress,
}

/// What one line says, borrowing the line and the parser: nothing is allocated for a line in
/// the usual formats.
#[derive(Debug, Clone, Copy)]
pub struct ParsedRef<'a> {
    pub format: Format,
    pub step: Option<f64>,
    pub epoch: Option<f64>,
    pub progress: Progress,
    names: &'a Names,
    metrics: &'a [(u32, f64)],
}

impl<'a> ParsedRef<'a> {
    /// The metrics in the order the line gives them.
    pub fn metrics(&self) -> impl Iterator<Item = (&'a str, f64)> + 'a {
        self.metrics_by_id().map(|(_, name, value)| (name, value))
    }

    /// The metrics with the parser's id for each name: the same name has the same id for as
    /// long as [`ParsedRef::names_generation`] stays the same.
    pub(crate) fn metrics_by_id(&self) -> impl Iterator<Item = (u32, &'a str, f64)> + 'a {
        let names = self.names;
        self.metrics
            .iter()
            .map(move |(id, value)| (*id, names.get(*id), *value))
    }

    pub(crate) fn names_generation(&self) -> u64 {
        self.names.generation()
    }

    pub fn to_owned(&self) -> Parsed {
        Parsed {
            format: self.format,
            metrics: self.metrics().map(|(n, v)| (n.to_string(), v)).collect(),
            step: self.step,
            epoch: self.epoch,
            progress: self.progress,
        }
    }
}

/// A reusable parser: its buffers are kept from one line to the next.
#[derive(Debug, Default)]
pub struct LineParser {
    /// A line without its escape codes, when it had some.
    scratch: Vec<u8>,
    /// A JSON key's whole name (`train/loss` for `{"train": {"loss": …}}`) while it is made.
    arena: String,
    found: Found,
}

impl LineParser {
    pub fn new() -> Self {
        Self::default()
    }

    /// The metrics, x axis and progress in `line` (one update: no `\r` or `\n` inside), or
    /// `None` when it has none of them.
    pub fn parse<'a>(&'a mut self, line: &'a [u8]) -> Option<ParsedRef<'a>> {
        self.parse_with(line, None)
    }

    /// As [`LineParser::parse`], for a stream whose lines share a shape: read by `shape` when
    /// the line has it, else read in full and its shape taken.
    pub fn parse_shaped<'a>(
        &'a mut self,
        line: &'a [u8],
        shape: &mut Shape,
    ) -> Option<ParsedRef<'a>> {
        self.parse_with(line, Some(shape))
    }

    fn parse_with<'a>(
        &'a mut self,
        line: &'a [u8],
        shape: Option<&mut Shape>,
    ) -> Option<ParsedRef<'a>> {
        self.found.clear();
        let mut shape = shape;
        // A line of the stream's shape is read by it: it has no escape codes (neither has
        // the shape's text nor can a number), so it is read as it is.
        let format = if let Some(s) = shape.as_deref_mut()
            && s.read(line, &mut self.found)
        {
            (may_hold_metrics(line) && !self.found.is_empty()).then_some(Format::Plain)?
        } else {
            self.found.clear();
            if !may_hold_metrics(line) {
                return None;
            }
            // An escape code, an object's `{` and a Rich bar's first byte, looked for in one pass
            // (most lines have none of them); escape codes then looked for past the first.
            let mark = memchr3(ESC, b'{', bars::RICH_BAR[0], line);
            let marked = mark.is_some();
            let escaped =
                mark.is_some_and(|i| line[i] == ESC || memchr(ESC, &line[i + 1..]).is_some());
            let text = if escaped {
                strip_escapes(line, &mut self.scratch)
            } else {
                line
            };
            // A line with escape codes is read in full and gives no shape.
            let shape = shape.filter(|_| !escaped);
            // Taking escape codes out adds no byte: an unmarked line's text has none of them.
            read(text, marked, &mut self.arena, &mut self.found, shape)?
        };
        let found = &self.found;
        Some(ParsedRef {
            format,
            step: found.step,
            epoch: found.epoch,
            progress: found.progress,
            names: &found.names,
            metrics: &found.metrics,
        })
    }
}

/// The metrics, x axis and progress in one line; see [`LineParser::parse`].
pub fn parse(line: &[u8]) -> Option<Parsed> {
    LineParser::new().parse(line).map(|p| p.to_owned())
}

/// Every form needs one of these bytes: `=` or `:` after a key, `{` for objects, `/` for
/// counters (`epoch 1/3`, `469/469`), `%` for bars; escape codes may hide any of them. (A bare
/// `Epoch 3` on its own line is not read.)
fn may_hold_metrics(line: &[u8]) -> bool {
    memchr3(b'=', b':', b'/', line).is_some() || memchr3(b'{', b'%', b'\x1b', line).is_some()
}

const ESC: u8 = 0x1b;

/// Reads `text`; `marked` when it may hold an object or a Rich bar.
fn read(
    text: &[u8],
    marked: bool,
    arena: &mut String,
    found: &mut Found,
    shape: Option<&mut Shape>,
) -> Option<Format> {
    if marked && let Some(open) = memchr(b'{', text) {
        if let Some(format) = object::read(text, open, arena, found) {
            return Some(format);
        }
        found.clear();
    }
    let format = if bars::tqdm(text, found) {
        Format::Tqdm
    } else if bars::keras(text, found) {
        Format::Keras
    } else if marked && bars::rich(text, found) {
        Format::Rich
    } else {
        match shape {
            Some(shape) => shape.take(text, found),
            None => tokens::scan(text, 0, text.len(), found),
        }
        Format::Plain
    };
    (!found.is_empty()).then_some(format)
}
