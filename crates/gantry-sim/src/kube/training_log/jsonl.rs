//! A JSON-lines logger: one object per line, written with Python's `json.dumps`, so a diverged
//! loss is `NaN` (JavaScript's name, which Python writes and most JSON readers refuse):
//! `{"step": 10, "epoch": 0.56, "loss": 2.31, "accuracy": 0.2, "lr": 0.0003, "grad_norm": 1.2}`
//! and, after each epoch, `{"step": 18, "epoch": 1.0, "eval_loss": …, "eval_accuracy": …}`.

use super::plan::Slot;
use super::python_numbers::{json, round};
use super::sink::LineSink;
use super::{Run, Style, save_line};

#[derive(Debug, Default)]
pub struct Jsonl;

fn object(step: u64, pairs: &[(&str, f64)]) -> String {
    let mut out = format!("{{\"step\": {step}");
    for (k, v) in pairs {
        out.push_str(&format!(", \"{k}\": {}", json(*v)));
    }
    out.push('}');
    out
}

impl Style for Jsonl {
    fn write(&mut self, slot: Slot, run: &Run, out: &mut LineSink) {
        match slot {
            Slot::Begin => out.line(format!(
                "starting training on rank {} of {} for {} epochs",
                run.rank, run.world, run.plan.epochs
            )),
            Slot::EpochStart { epoch } => {
                out.line(format!("epoch {} of {}", epoch + 1, run.plan.epochs))
            }
            Slot::Step {
                epoch,
                step,
                in_epoch,
            } => {
                let p = run.curves.at(step);
                out.line(object(
                    step,
                    &[
                        ("epoch", round(run.epoch_at(epoch, in_epoch), 2)),
                        ("loss", round(p.loss, 4)),
                        ("accuracy", round(p.accuracy, 4)),
                        ("lr", p.lr),
                        ("grad_norm", round(p.grad_norm, 4)),
                    ],
                ));
            }
            Slot::Eval { epoch, step } => {
                let (loss, accuracy) = run.curves.eval(step);
                out.line(object(
                    step,
                    &[
                        ("epoch", (epoch + 1) as f64),
                        ("eval_loss", round(loss, 4)),
                        ("eval_accuracy", round(accuracy, 4)),
                    ],
                ));
            }
            Slot::Save { part, parts } => out.line(save_line(part, parts)),
            Slot::End => out.line("training finished"),
        }
    }
}
