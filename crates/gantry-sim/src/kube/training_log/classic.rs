//! The workload's own lines, printed when `SIM_LOG_FORMAT` is unset (kept as they were, since
//! tests and recorded drills depend on them): a start line, `epoch a/b step c/d loss=… accuracy=…`
//! per line, and a `val_loss=…` line closing each epoch.

use bytes::Bytes;
use rand::Rng;

#[derive(Debug)]
pub struct Classic {
    epochs: u64,
    total: u64,
    rank: u64,
    world: u64,
    seed: f64,
}

impl Classic {
    pub fn new(epochs: u64, log_lines: u64, rank: u64, world: u64) -> Self {
        Self {
            epochs,
            total: log_lines.max(1),
            rank,
            world,
            seed: rand::rng().random_range(0.0..0.05),
        }
    }

    pub fn line(&self, i: u64) -> Bytes {
        let lines_per_epoch = (self.total / self.epochs).max(1);
        let epoch = (i / lines_per_epoch).min(self.epochs - 1) + 1;
        let step = i % lines_per_epoch;
        let progress = i as f64 / self.total as f64;
        let loss = 2.3 * (-3.0 * progress).exp() + 0.05 + self.seed;
        let acc = (0.1 + 0.88 * (1.0 - (-4.0 * progress).exp())).min(0.99);
        let text = if i == 0 {
            format!(
                "[rank {}/{}] starting training: epochs={} steps_per_epoch={} device=cuda:0",
                self.rank, self.world, self.epochs, lines_per_epoch
            )
        } else if step == 0 {
            format!("epoch {epoch}/{} starting", self.epochs)
        } else if step + 1 == lines_per_epoch {
            format!(
                "epoch {epoch}/{} done: val_loss={:.4} val_accuracy={:.4} checkpoint=/workspace/ckpt/epoch-{epoch}.pt",
                self.epochs,
                loss * 1.08,
                acc * 0.97
            )
        } else {
            format!(
                "epoch {epoch}/{} step {step}/{lines_per_epoch} loss={loss:.4} accuracy={acc:.4} lr=3.0e-04 samples/s={:.1}",
                self.epochs,
                1180.0 + (i % 17) as f64 * 3.7
            )
        };
        Bytes::from(text)
    }
}
