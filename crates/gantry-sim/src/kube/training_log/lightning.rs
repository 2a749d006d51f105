//! PyTorch Lightning's `TQDMProgressBar` as it prints in a container: one bar per epoch,
//! `Epoch 0:  22%|██▏       | 4/18 [00:17<01:02,  4.47s/it, v_num=0, train_loss=2.31]`,
//! redrawn after `\r` and left on its own line when the epoch ends. The postfix is
//! `get_metrics`: `v_num` (the logger's version: the attempt) then what the model logs with
//! `prog_bar=True`, shortened by tqdm to three significant digits; the validation metrics join
//! it once the epoch's validation has run. The validation bar itself is left out: Lightning
//! draws it on a second row with cursor moves.

use super::plan::Slot;
use super::python_numbers::tqdm_num;
use super::sink::LineSink;
use super::tqdm::{meter, redraw};
use super::{Run, Style, save_line};

#[derive(Debug, Default)]
pub struct Lightning {
    last: usize,
    /// The postfix as last set: tqdm keeps it across `reset` at each epoch.
    postfix: String,
    val: String,
}

impl Lightning {
    fn bar(&self, run: &Run, epoch: u64, in_epoch: u64) -> String {
        let elapsed = in_epoch as f64 * run.secs_per_step;
        let steps = run.plan.steps_per_epoch();
        meter(
            &format!("Epoch {epoch}"),
            in_epoch,
            steps,
            elapsed,
            &self.postfix,
        )
    }
}

impl Style for Lightning {
    fn write(&mut self, slot: Slot, run: &Run, out: &mut LineSink) {
        match slot {
            Slot::Begin => out.line("GPU available: True (cuda), used: True"),
            Slot::EpochStart { epoch } => {
                let bar = self.bar(run, epoch, 0);
                out.write(redraw(&bar, &mut self.last).as_bytes());
            }
            Slot::Step {
                epoch,
                step,
                in_epoch,
            } => {
                let p = run.curves.at(step);
                self.postfix = format!(
                    "v_num={}, train_loss={}, lr={}{}",
                    run.ordinal,
                    tqdm_num(p.loss),
                    tqdm_num(p.lr),
                    self.val
                );
                let bar = self.bar(run, epoch, in_epoch);
                out.write(redraw(&bar, &mut self.last).as_bytes());
            }
            Slot::Eval { epoch, step } => {
                let (loss, accuracy) = run.curves.eval(step);
                self.val = format!(
                    ", val_loss={}, val_acc={}",
                    tqdm_num(loss),
                    tqdm_num(accuracy)
                );
                let p = run.curves.at(step);
                self.postfix = format!(
                    "v_num={}, train_loss={}, lr={}{}",
                    run.ordinal,
                    tqdm_num(p.loss),
                    tqdm_num(p.lr),
                    self.val
                );
                let bar = self.bar(run, epoch, run.plan.steps_per_epoch());
                let mut text = redraw(&bar, &mut self.last);
                text.push('\n');
                self.last = 0;
                out.write(text.as_bytes());
            }
            Slot::Save { part, parts } => out.line(save_line(part, parts)),
            Slot::End => out.line(format!(
                "`Trainer.fit` stopped: `max_epochs={}` reached.",
                run.plan.epochs
            )),
        }
    }
}
