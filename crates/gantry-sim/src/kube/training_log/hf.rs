//! Hugging Face's Trainer as it prints in a container: one tqdm bar over every step (its
//! redraws after `\r`), and above it, through `tqdm.write`, the dicts of `ProgressCallback`:
//! `{'loss': 0.1234, 'grad_norm': 1.92, 'learning_rate': 4.9e-05, 'epoch': 0.5}` every few
//! steps, `{'eval_loss': …}` after each epoch, `{'train_runtime': …}` at the end. Numbers as
//! the Trainer rounds them (the loss to 4 places, the epoch to 2, the rest as Python floats).
//! The evaluation's own bar is left out: it would draw a second step counter.

use super::curves::Point;
use super::plan::Slot;
use super::python_numbers::{repr, round};
use super::sink::LineSink;
use super::tqdm::{meter, redraw, write_above};
use super::{Run, Style, save_line};

/// The Trainer's `logging_steps`.
const LOG_EVERY: u64 = 5;
const BATCH: f64 = 8.0;

#[derive(Debug, Default)]
pub struct Hf {
    /// The bar's width last drawn.
    last: usize,
    losses: f64,
    steps: u64,
}

impl Hf {
    fn bar(&self, run: &Run, step: u64) -> String {
        meter("", step, run.plan.total_steps(), run.elapsed(step), "")
    }

    fn dict(pairs: &[(&str, String)]) -> String {
        let body: Vec<String> = pairs.iter().map(|(k, v)| format!("'{k}': {v}")).collect();
        format!("{{{}}}", body.join(", "))
    }
}

impl Style for Hf {
    fn write(&mut self, slot: Slot, run: &Run, out: &mut LineSink) {
        match slot {
            Slot::Begin => out.line(
                "You should probably TRAIN this model on a down-stream task to be able to use it for predictions and inference.",
            ),
            Slot::EpochStart { epoch } => {
                let bar = self.bar(run, run.plan.steps_before(epoch));
                out.write(redraw(&bar, &mut self.last).as_bytes());
            }
            Slot::Step {
                epoch,
                step,
                in_epoch,
            } => {
                let p: Point = run.curves.at(step);
                self.losses += p.loss;
                self.steps += 1;
                let bar = self.bar(run, step);
                let text = if step.is_multiple_of(LOG_EVERY) {
                    let line = Self::dict(&[
                        ("loss", repr(round(p.loss, 4))),
                        ("grad_norm", repr(p.grad_norm)),
                        ("learning_rate", repr(p.lr)),
                        ("epoch", repr(round(run.epoch_at(epoch, in_epoch), 2))),
                    ]);
                    // The bar reaches the step before the step's log is written above it.
                    let mut text = redraw(&bar, &mut self.last);
                    text.push_str(&write_above(&line, &bar, &mut self.last));
                    text
                } else {
                    redraw(&bar, &mut self.last)
                };
                out.write(text.as_bytes());
            }
            Slot::Eval { epoch, step } => {
                let (loss, accuracy) = run.curves.eval(step);
                let runtime = 2.0 + run.plan.steps_per_epoch() as f64 * run.secs_per_step * 0.2;
                let samples = run.plan.steps_per_epoch() as f64 * BATCH;
                let line = Self::dict(&[
                    ("eval_loss", repr(loss)),
                    ("eval_accuracy", repr(accuracy)),
                    ("eval_runtime", repr(round(runtime, 4))),
                    ("eval_samples_per_second", repr(round(samples / runtime, 3))),
                    (
                        "eval_steps_per_second",
                        repr(round(samples / BATCH / runtime, 3)),
                    ),
                    ("epoch", repr(round((epoch + 1) as f64, 2))),
                ]);
                let bar = self.bar(run, step);
                out.write(write_above(&line, &bar, &mut self.last).as_bytes());
            }
            Slot::Save { part, parts } => {
                let bar = self.bar(run, run.plan.total_steps());
                let text = write_above(&save_line(part, parts), &bar, &mut self.last);
                out.write(text.as_bytes());
            }
            Slot::End => {
                let total = run.plan.total_steps();
                let runtime = run.elapsed(total).max(0.001);
                let mean = self.losses / self.steps.max(1) as f64;
                let line = Self::dict(&[
                    ("train_runtime", repr(round(runtime, 4))),
                    (
                        "train_samples_per_second",
                        repr(round(total as f64 * BATCH / runtime, 3)),
                    ),
                    (
                        "train_steps_per_second",
                        repr(round(total as f64 / runtime, 3)),
                    ),
                    ("train_loss", repr(mean)),
                    ("epoch", repr(round(run.plan.epochs as f64, 2))),
                ]);
                let bar = self.bar(run, total);
                let mut text = write_above(&line, &bar, &mut self.last);
                text.push('\n');
                out.write(text.as_bytes());
            }
        }
    }
}
