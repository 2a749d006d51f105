//! A hand-written training loop's `print`, in the style of nanoGPT's descendants: one line per
//! step, `step 00010/00054 (18.52%) | loss: 2.123456 | accuracy: 0.4123 | grad_norm: 0.9312 |
//! lr: 3.00e-04 | dt: 250.12ms | tok/sec: 2,096,152`, and an evaluation line after each epoch.
//! Steps count across the run, so no `epoch a/b` counter is printed beside them (it would make
//! the step counter read as one epoch's).

use super::plan::Slot;
use super::python_numbers::{exp_form, fixed, thousands};
use super::sink::LineSink;
use super::{Run, Style, save_line};

const TOKENS_PER_STEP: f64 = 524_288.0;

#[derive(Debug, Default)]
pub struct Plain;

impl Plain {
    fn counter(run: &Run, step: u64) -> String {
        let total = run.plan.total_steps();
        format!(
            "step {step:05}/{total:05} ({:.2}%)",
            100.0 * step as f64 / total.max(1) as f64
        )
    }
}

impl Style for Plain {
    fn write(&mut self, slot: Slot, run: &Run, out: &mut LineSink) {
        match slot {
            Slot::Begin => out.line(format!(
                "[rank {}/{}] starting training: epochs={} steps_per_epoch={} device=cuda:0",
                run.rank,
                run.world,
                run.plan.epochs,
                run.plan.steps_per_epoch()
            )),
            Slot::EpochStart { epoch } => out.line(format!(
                "reshuffling the training set for epoch {} of {}",
                epoch + 1,
                run.plan.epochs
            )),
            Slot::Step { step, .. } => {
                let p = run.curves.at(step);
                let dt = run.secs_per_step * (1.0 + 0.02 * ((step % 7) as f64 - 3.0) / 3.0);
                out.line(format!(
                    "{} | loss: {} | accuracy: {:.4} | grad_norm: {} | lr: {} | dt: {:.2}ms | tok/sec: {}",
                    Self::counter(run, step),
                    fixed(p.loss, 6),
                    p.accuracy,
                    fixed(p.grad_norm, 4),
                    exp_form(p.lr, 2),
                    dt * 1e3,
                    thousands((TOKENS_PER_STEP / dt.max(1e-6)) as u64)
                ));
            }
            Slot::Eval { step, .. } => {
                let (loss, accuracy) = run.curves.eval(step);
                out.line(format!(
                    "{} | eval_loss: {} | eval_accuracy: {accuracy:.4}",
                    Self::counter(run, step),
                    fixed(loss, 4)
                ));
            }
            Slot::Save { part, parts } => out.line(save_line(part, parts)),
            Slot::End => out.line(format!("[rank {}/{}] training done", run.rank, run.world)),
        }
    }
}
