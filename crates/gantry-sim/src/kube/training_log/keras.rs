//! Keras 2's `Progbar` (`model.fit(verbose=1)`) as it prints in a container. It redraws in
//! place whenever `'posix' in sys.modules`, so on Linux it does so even without a terminal:
//! each update erases the last with backspaces, goes back with `\r` and draws
//! ` 12/469 [>.............................] - ETA: 3s - loss: 2.1012 - accuracy: 0.2130`; the
//! epoch's last update adds the validation metrics and a newline:
//! `469/469 [==============================] - 8s 16ms/step - loss: 0.5815 - ... - val_accuracy: 0.8400`.
//! The metrics shown are means over the epoch so far, as Keras averages them.

use super::plan::Slot;
use super::python_numbers::{exp_form, fixed};
use super::sink::LineSink;
use super::{Run, Style, save_line};

const WIDTH: u64 = 30;

#[derive(Debug, Default)]
pub struct Keras {
    /// The width of the last update, erased by the next.
    drawn: usize,
    loss_sum: f64,
    accuracy_sum: f64,
    seen: u64,
}

/// `' %.4f'` above 1e-3, else `' %.4e'` (NaN fails the test, so it prints `nan`).
fn value(v: f64) -> String {
    if v.abs() > 1e-3 {
        fixed(v, 4)
    } else {
        exp_form(v, 4)
    }
}

/// `%.0f` of a duration with its unit, as `_format_time`.
fn per_step(secs: f64) -> String {
    if secs >= 1.0 || secs == 0.0 {
        format!("{secs:.0}s/step")
    } else if secs >= 1e-3 {
        format!("{:.0}ms/step", secs * 1e3)
    } else {
        format!("{:.0}us/step", secs * 1e6)
    }
}

fn eta(secs: f64) -> String {
    let s = secs.max(0.0) as u64;
    if secs > 3600.0 {
        format!("{}:{:02}:{:02}", s / 3600, (s % 3600) / 60, s % 60)
    } else if secs > 60.0 {
        format!("{}:{:02}", s / 60, s % 60)
    } else {
        format!("{s}s")
    }
}

impl Keras {
    fn bar(current: u64, target: u64) -> String {
        let digits = target.max(1).ilog10() as usize + 1;
        let mut bar = format!("{current:>digits$}/{target} [");
        let filled = (WIDTH * current / target.max(1)).min(WIDTH);
        if filled > 0 {
            bar.push_str(&"=".repeat(filled as usize - 1));
            bar.push(if current < target { '>' } else { '=' });
        }
        bar.push_str(&".".repeat((WIDTH - filled) as usize));
        bar.push(']');
        bar
    }

    fn update(&mut self, bar: String, info: String, last: bool, out: &mut LineSink) {
        let mut text = "\x08".repeat(self.drawn);
        text.push('\r');
        let width = bar.len() + info.len();
        text.push_str(&bar);
        text.push_str(&info);
        text.push_str(&" ".repeat(self.drawn.saturating_sub(width)));
        self.drawn = width;
        if last {
            text.push('\n');
            self.drawn = 0;
        }
        out.write(text.as_bytes());
    }

    fn means(&self) -> String {
        let n = self.seen.max(1) as f64;
        format!(
            " - loss: {} - accuracy: {}",
            value(self.loss_sum / n),
            value(self.accuracy_sum / n)
        )
    }
}

impl Style for Keras {
    fn write(&mut self, slot: Slot, run: &Run, out: &mut LineSink) {
        match slot {
            Slot::Begin => out.line("Found 60000 files belonging to 10 classes."),
            Slot::EpochStart { epoch } => {
                (self.loss_sum, self.accuracy_sum, self.seen) = (0.0, 0.0, 0);
                out.line(format!("Epoch {}/{}", epoch + 1, run.plan.epochs));
            }
            Slot::Step { step, in_epoch, .. } => {
                let p = run.curves.at(step);
                self.loss_sum += p.loss;
                self.accuracy_sum += p.accuracy;
                self.seen += 1;
                let target = run.plan.steps_per_epoch();
                let left = target.saturating_sub(in_epoch) as f64 * run.secs_per_step;
                let info = format!(" - ETA: {}{}", eta(left), self.means());
                self.update(Self::bar(in_epoch, target), info, false, out);
            }
            Slot::Eval { step, .. } => {
                let target = run.plan.steps_per_epoch();
                let (loss, accuracy) = run.curves.eval(step);
                let info = format!(
                    " - {:.0}s {}{} - val_loss: {} - val_accuracy: {}",
                    target as f64 * run.secs_per_step,
                    per_step(run.secs_per_step),
                    self.means(),
                    value(loss),
                    value(accuracy)
                );
                self.update(Self::bar(target, target), info, true, out);
            }
            Slot::Save { part, parts } => out.line(save_line(part, parts)),
            Slot::End => out.line("Saved the model to /workspace/model.keras"),
        }
    }
}
