//! The simulated training workload every container runs: realistic training logs whose length,
//! pace and ending come from the container's environment (`SIM_*` variables, see the README).

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use rand::Rng;
use tokio_util::sync::CancellationToken;

use super::logbook::LogStream;
use super::quantity;
use crate::sim::clock::Clock;

/// The workload's knobs, read from the container's resolved environment.
#[derive(Debug, Clone, PartialEq)]
pub struct WorkloadSpec {
    pub epochs: u64,
    pub log_lines: u64,
    /// Lines per simulated second; 0 writes as fast as the simulator can.
    pub lines_per_second: f64,
    /// The first this-many pods of a Job fail with exit code 1.
    pub fail_attempts: u64,
    pub exit_code: i32,
    /// Memory the training needs: the container is OOMKilled when its limit is below it.
    pub oom_needs_bytes: Option<u64>,
    pub hostile_output: bool,
    pub rank: u64,
    pub world_size: u64,
}

impl WorkloadSpec {
    pub fn from_env(env: &HashMap<String, String>) -> Self {
        let num = |k: &str, d: u64| env.get(k).and_then(|v| v.trim().parse().ok()).unwrap_or(d);
        let flag = |k: &str| {
            env.get(k).is_some_and(|v| {
                matches!(v.trim().to_ascii_lowercase().as_str(), "1" | "true" | "yes")
            })
        };
        let oom = env.get("SIM_OOM").and_then(|v| {
            let v = v.trim();
            match v.to_ascii_lowercase().as_str() {
                "" | "0" | "false" | "no" => None,
                // Always: more than any node has.
                "1" | "true" | "yes" => Some(u64::MAX),
                _ => quantity::units(v),
            }
        });
        Self {
            epochs: num("SIM_EPOCHS", 3).max(1),
            log_lines: num("SIM_LOG_LINES", 60),
            lines_per_second: env
                .get("SIM_LINES_PER_SECOND")
                .and_then(|v| v.trim().parse::<f64>().ok())
                .filter(|v| v.is_finite() && *v >= 0.0)
                .unwrap_or(5.0),
            fail_attempts: num("SIM_FAIL_ATTEMPTS", 0),
            exit_code: env
                .get("SIM_EXIT_CODE")
                .and_then(|v| v.trim().parse().ok())
                .unwrap_or(0),
            oom_needs_bytes: oom,
            hostile_output: flag("SIM_HOSTILE_OUTPUT"),
            rank: num("RANK", num("JOB_COMPLETION_INDEX", 0)),
            world_size: num("WORLD_SIZE", 1).max(1),
        }
    }
}

/// How the container ended.
#[derive(Debug, Clone, PartialEq)]
pub struct Exit {
    pub code: i32,
    pub reason: &'static str,
}

impl Exit {
    fn from_code(code: i32) -> Self {
        Self {
            code,
            reason: if code == 0 { "Completed" } else { "Error" },
        }
    }
}

/// Runs the workload to its end (or until `cancel`), writing to `out`.
/// `ordinal` is which pod of its Job this is (0 for the first); `memory_limit` the container's.
pub async fn run(
    spec: &WorkloadSpec,
    ordinal: u64,
    memory_limit: Option<u64>,
    out: Arc<LogStream>,
    clock: Clock,
    cancel: CancellationToken,
) -> Option<Exit> {
    let mut lines = TrainingLog::new(spec, ordinal);
    let total = spec.log_lines;
    let oom_at = match (spec.oom_needs_bytes, memory_limit) {
        (Some(need), Some(limit)) if limit < need => Some(total / 2),
        (Some(u64::MAX), None) => Some(total / 2),
        _ => None,
    };
    let stop_at = oom_at.unwrap_or(total);
    let start = tokio::time::Instant::now();
    let mut written = 0u64;
    while written < stop_at {
        if cancel.is_cancelled() {
            return None;
        }
        let due = if spec.lines_per_second == 0.0 {
            written + 4096
        } else {
            let elapsed = start.elapsed().as_secs_f64();
            let sim_elapsed = if clock.scale() > 0.0 {
                elapsed / clock.scale()
            } else {
                f64::MAX
            };
            ((sim_elapsed * spec.lines_per_second) as u64 + 1).max(written + 1)
        };
        let batch_end = due.min(stop_at);
        out.push_many((written..batch_end).map(|i| lines.line(i)));
        written = batch_end;
        if written >= stop_at {
            break;
        }
        if spec.lines_per_second == 0.0 {
            tokio::task::yield_now().await;
        } else {
            let next_line_sim = (written as f64) / spec.lines_per_second;
            let wait_wall = clock
                .scaled_secs(next_line_sim)
                .saturating_sub(start.elapsed());
            // Batch lines into ticks of at least 5 ms so fast logging stays cheap.
            let wait = wait_wall.max(Duration::from_millis(5));
            tokio::select! {
                _ = cancel.cancelled() => return None,
                _ = tokio::time::sleep(wait) => {}
            }
        }
    }
    if oom_at.is_some() {
        return Some(Exit {
            code: 137,
            reason: "OOMKilled",
        });
    }
    if ordinal < spec.fail_attempts {
        out.push("Traceback (most recent call last):");
        out.push("  File \"/workspace/train.py\", line 142, in <module>");
        out.push("RuntimeError: simulated failure (SIM_FAIL_ATTEMPTS)");
        return Some(Exit::from_code(1));
    }
    Some(Exit::from_code(spec.exit_code))
}

/// Generates the lines of a plausible training run.
struct TrainingLog {
    epochs: u64,
    total: u64,
    rank: u64,
    world: u64,
    hostile: bool,
    seed: f64,
}

impl TrainingLog {
    fn new(spec: &WorkloadSpec, _ordinal: u64) -> Self {
        Self {
            epochs: spec.epochs,
            total: spec.log_lines.max(1),
            rank: spec.rank,
            world: spec.world_size,
            hostile: spec.hostile_output,
            seed: rand::rng().random_range(0.0..0.05),
        }
    }

    fn line(&mut self, i: u64) -> Bytes {
        if self.hostile
            && let Some(h) = hostile_line(i)
        {
            return h;
        }
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

/// What a hostile container prints now and then: escape sequences that would clear, retitle or
/// hijack a terminal, invalid UTF-8, control characters, and one 1 MiB line.
fn hostile_line(i: u64) -> Option<Bytes> {
    let line: Vec<u8> = match i % 10 {
        1 => b"\x1b[2J\x1b[Hscreen cleared by the container".to_vec(),
        2 => b"\x1b]0;pwned title\x07window title changed".to_vec(),
        3 => b"\x1b]52;c;ZWNobyBwd25lZA==\x07clipboard write attempt".to_vec(),
        4 => b"invalid utf-8: \xff\xfe\xc3\x28 end".to_vec(),
        5 => b"progress 10%\rprogress 100%\x08\x08 bell\x07 nul\x00 end".to_vec(),
        6 => b"\x1b[31mred\x1b[0m and \x1b[1;32mbold green\x1b[0m".to_vec(),
        7 => b"\x1b[?1049h\x1b[?25lalternate screen and hidden cursor\x1bP+q\x1b\\".to_vec(),
        8 if i % 1000 == 8 => {
            let mut big = b"one MiB line: ".to_vec();
            big.resize(1024 * 1024, b'A');
            big
        }
        _ => return None,
    };
    Some(Bytes::from(line))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(pairs: &[(&str, &str)]) -> HashMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn reads_knobs() {
        let s = WorkloadSpec::from_env(&env(&[
            ("SIM_EPOCHS", "4"),
            ("SIM_LOG_LINES", "100"),
            ("SIM_LINES_PER_SECOND", "0"),
            ("SIM_FAIL_ATTEMPTS", "2"),
            ("SIM_OOM", "2Gi"),
        ]));
        assert_eq!(s.epochs, 4);
        assert_eq!(s.log_lines, 100);
        assert_eq!(s.lines_per_second, 0.0);
        assert_eq!(s.fail_attempts, 2);
        assert_eq!(s.oom_needs_bytes, Some(2 << 30));
    }

    #[tokio::test]
    async fn writes_all_lines_then_exits() {
        let spec = WorkloadSpec::from_env(&env(&[
            ("SIM_LOG_LINES", "500"),
            ("SIM_LINES_PER_SECOND", "0"),
        ]));
        let out = Arc::new(LogStream::default());
        let exit = run(
            &spec,
            0,
            None,
            out.clone(),
            Clock::new(0.0),
            CancellationToken::new(),
        )
        .await;
        assert_eq!(
            exit,
            Some(Exit {
                code: 0,
                reason: "Completed"
            })
        );
        assert_eq!(out.len(), 500);
        let text = String::from_utf8_lossy(&out.read(1, 1)[0].text).to_string();
        assert!(text.contains("epoch"), "{text}");
    }

    #[tokio::test]
    async fn fails_first_attempts_and_ooms() {
        let spec = WorkloadSpec::from_env(&env(&[
            ("SIM_LOG_LINES", "10"),
            ("SIM_LINES_PER_SECOND", "0"),
            ("SIM_FAIL_ATTEMPTS", "1"),
        ]));
        let out = Arc::new(LogStream::default());
        let exit = run(
            &spec,
            0,
            None,
            out.clone(),
            Clock::new(0.0),
            CancellationToken::new(),
        )
        .await;
        assert_eq!(exit.map(|e| e.code), Some(1));
        let exit = run(
            &spec,
            1,
            None,
            out,
            Clock::new(0.0),
            CancellationToken::new(),
        )
        .await;
        assert_eq!(exit.map(|e| e.code), Some(0));
        let oom = WorkloadSpec::from_env(&env(&[
            ("SIM_LOG_LINES", "10"),
            ("SIM_LINES_PER_SECOND", "0"),
            ("SIM_OOM", "4Gi"),
        ]));
        let out = Arc::new(LogStream::default());
        let exit = run(
            &oom,
            0,
            Some(1 << 30),
            out.clone(),
            Clock::new(0.0),
            CancellationToken::new(),
        )
        .await;
        assert_eq!(
            exit,
            Some(Exit {
                code: 137,
                reason: "OOMKilled"
            })
        );
        assert_eq!(out.len(), 5);
        let out = Arc::new(LogStream::default());
        let exit = run(
            &oom,
            0,
            Some(8 << 30),
            out,
            Clock::new(0.0),
            CancellationToken::new(),
        )
        .await;
        assert_eq!(exit.map(|e| e.code), Some(0));
    }
}
