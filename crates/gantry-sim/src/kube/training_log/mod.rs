//! The lines the simulated training container prints, in the format `SIM_LOG_FORMAT` names:
//! Hugging Face's Trainer (`hf`), PyTorch Lightning (`lightning`), Keras (`keras`), a JSON-lines
//! logger (`jsonl`), a hand-written loop (`plain`), or, unset, the workload's classic lines.
//! Each is written byte for byte as the framework prints it in a container (progress bars
//! redrawn after `\r`, Python's number forms), so that what reads real training logs can be
//! run against the simulator. Every format draws the same [`plan`] and [`curves`]: the updates
//! (`SIM_LOG_LINES` of them: each a printed line or a bar redraw) and the numbers they show.

mod classic;
mod curves;
mod hf;
mod hostile;
mod jsonl;
mod keras;
mod lightning;
mod plain;
mod plan;
mod python_numbers;
pub mod replay;
pub mod sink;
mod tqdm;

pub use hostile::hostile_line;
pub use sink::LineSink;

use classic::Classic;
use curves::{Curves, Decay};
use plan::{Plan, Slot};

/// `SIM_LOG_FORMAT`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum LogFormat {
    /// Unset: the workload's classic lines.
    #[default]
    Classic,
    Plain,
    Hf,
    Lightning,
    Keras,
    Jsonl,
}

impl LogFormat {
    pub const NAMES: &str = "plain, hf, lightning, keras, jsonl";

    pub fn parse(value: &str) -> Option<Self> {
        Some(match value.trim().to_ascii_lowercase().as_str() {
            "plain" => Self::Plain,
            "hf" => Self::Hf,
            "lightning" => Self::Lightning,
            "keras" => Self::Keras,
            "jsonl" => Self::Jsonl,
            _ => return None,
        })
    }
}

/// What every format needs to know of the run.
#[derive(Debug)]
pub struct Run {
    plan: Plan,
    curves: Curves,
    /// Simulated seconds a step takes: what bars show as elapsed time and rate.
    secs_per_step: f64,
    rank: u64,
    world: u64,
    /// The pod's ordinal in its Job: Lightning shows it as the logger's version.
    ordinal: u64,
}

impl Run {
    fn elapsed(&self, step: u64) -> f64 {
        step as f64 * self.secs_per_step
    }

    /// The fractional epoch after step `in_epoch` of `epoch`.
    fn epoch_at(&self, epoch: u64, in_epoch: u64) -> f64 {
        epoch as f64 + in_epoch as f64 / self.plan.steps_per_epoch().max(1) as f64
    }
}

/// One format: how it prints each update of the plan.
trait Style: Send + std::fmt::Debug {
    fn write(&mut self, slot: Slot, run: &Run, out: &mut LineSink);
}

/// What the training script prints as it saves its last checkpoint ([`Slot::Save`]).
fn save_line(part: u64, parts: u64) -> String {
    format!("saving checkpoint shard {part} of {parts} to /workspace/ckpt")
}

/// The knobs a training log is made from.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LogShape {
    pub format: LogFormat,
    pub epochs: u64,
    pub updates: u64,
    pub lines_per_second: f64,
    pub diverge_at: Option<u64>,
    pub hostile: bool,
    pub rank: u64,
    pub world: u64,
}

/// Generates the updates of a plausible training run, in order.
#[derive(Debug)]
pub struct TrainingLog {
    hostile: bool,
    kind: Kind,
}

#[derive(Debug)]
enum Kind {
    Classic(Classic),
    Styled(Run, Box<dyn Style>),
}

impl TrainingLog {
    /// `ordinal` (which pod of its Job this is) sets the run's curves; the rank their noise.
    pub fn new(shape: &LogShape, ordinal: u64) -> Self {
        let plan = Plan::new(shape.updates, shape.epochs);
        let (peak_lr, decay, style): (f64, Decay, Box<dyn Style>) = match shape.format {
            LogFormat::Classic => {
                let classic = Classic::new(shape.epochs, shape.updates, shape.rank, shape.world);
                return Self {
                    hostile: shape.hostile,
                    kind: Kind::Classic(classic),
                };
            }
            LogFormat::Hf => (5e-5, Decay::Linear, Box::new(hf::Hf::default())),
            LogFormat::Lightning => (1e-3, Decay::Cosine, Box::<lightning::Lightning>::default()),
            LogFormat::Keras => (1e-3, Decay::Cosine, Box::<keras::Keras>::default()),
            LogFormat::Jsonl => (3e-4, Decay::Cosine, Box::new(jsonl::Jsonl)),
            LogFormat::Plain => (3e-4, Decay::Cosine, Box::new(plain::Plain)),
        };
        let curves = Curves::new(
            plan.total_steps(),
            peak_lr,
            decay,
            ordinal,
            shape.rank,
            shape.diverge_at,
        );
        let secs_per_step = if shape.lines_per_second > 0.0 {
            1.0 / shape.lines_per_second
        } else {
            0.25
        };
        let run = Run {
            plan,
            curves,
            secs_per_step,
            rank: shape.rank,
            world: shape.world,
            ordinal,
        };
        Self {
            hostile: shape.hostile,
            kind: Kind::Styled(run, style),
        }
    }

    /// Writes update `i` (called for 0, 1, 2, … in order).
    pub fn write(&mut self, i: u64, out: &mut LineSink) {
        if self.hostile
            && let Some(line) = hostile_line(i)
        {
            out.line(line);
            return;
        }
        match &mut self.kind {
            Kind::Classic(classic) => out.line(classic.line(i)),
            Kind::Styled(run, style) => style.write(run.plan.slot(i), run, out),
        }
    }
}

#[cfg(test)]
mod tests;
