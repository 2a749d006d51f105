//! Training metrics read out of the log lines Gantry follows and saves: the loss, the accuracy,
//! the learning rate, how far the run has got. Pure code without I/O or UI, so that the live
//! tail, `gantry metrics` on saved logs and the tests all read lines the same way.
//!
//! - [`parse`]: one line (one `\r` or `\n` update) to its metrics, x axis and progress.
//! - [`pieces`]: raw container output, split as the kubelet splits it, to parsed updates with
//!   the x axis and progress a stream implies across lines.
//! - [`series`]: one metric's points, bounded however long the run.
//! - [`store`]: every attempt's, pod's and metric's series within one memory budget, with the
//!   aggregate across ranks.
//! - [`read`]: a whole saved log, read as the live stream is.
//! - [`alerts`]: a metric gone NaN or infinite, a loss jumping tenfold.
//! - [`eta`]: the time left, from the rate of progress.

pub mod alerts;
pub mod band;
pub mod eta;
pub mod parse;
pub mod pieces;
pub mod read;
pub mod series;
pub mod store;

mod number;
mod strip;

pub use parse::{Counter, Format, LineParser, Parsed, ParsedRef, Progress, parse};
