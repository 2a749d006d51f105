//! The simulated training workload every container runs: realistic training logs whose format,
//! length, pace and ending come from the container's environment (`SIM_*` variables, see the
//! README), or a captured log replayed from the simulator's replay directory.

use std::collections::HashMap;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use tokio_util::sync::CancellationToken;

use super::logbook::LogStream;
use super::quantity;
use super::training_log::replay::Replay;
use super::training_log::{LineSink, LogFormat, LogShape, TrainingLog};
use crate::clock::Clock;

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
    pub log_format: LogFormat,
    /// The training step from which the loss is NaN.
    pub diverge_at: Option<u64>,
    /// After this many updates the container writes nothing more and never exits by itself,
    /// as a training process hung in a collective: it runs until it is stopped.
    pub stall_after: Option<u64>,
    /// A file of the replay directory to write instead of a generated log.
    pub replay: Option<String>,
    /// A knob that could not be read: the container says so and exits 2.
    pub problem: Option<String>,
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
        let mut problem = None;
        let log_format = match env.get("SIM_LOG_FORMAT").map(|v| v.trim()) {
            None | Some("") => LogFormat::Classic,
            Some(v) => LogFormat::parse(v).unwrap_or_else(|| {
                problem = Some(format!(
                    "sim: SIM_LOG_FORMAT={v}: not a log format (give one of {})",
                    LogFormat::NAMES
                ));
                LogFormat::Classic
            }),
        };
        let diverge_at = match env.get("SIM_DIVERGE_AT").map(|v| v.trim()) {
            None | Some("") => None,
            Some(v) => v.parse().ok().or_else(|| {
                problem.get_or_insert(format!(
                    "sim: SIM_DIVERGE_AT={v}: not a step number (give a whole number such as 120)"
                ));
                None
            }),
        };
        let stall_after = match env.get("SIM_STALL_AFTER").map(|v| v.trim()) {
            None | Some("") => None,
            Some(v) => v.parse().ok().or_else(|| {
                problem.get_or_insert(format!(
                    "sim: SIM_STALL_AFTER={v}: not a number of log lines (give a whole number \
                     such as 40)"
                ));
                None
            }),
        };
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
            log_format,
            diverge_at,
            stall_after,
            replay: env.get("SIM_REPLAY").cloned().filter(|v| !v.is_empty()),
            problem,
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
    pub fn from_code(code: i32) -> Self {
        Self {
            code,
            reason: if code == 0 { "Completed" } else { "Error" },
        }
    }
}

/// Where a container's output comes from: the generated log, or a replayed file.
enum Source {
    Generated { log: TrainingLog, stop_at: u64 },
    Replay(Replay),
}

impl Source {
    /// Writes updates `from..to`; false once there are no more.
    async fn fill(&mut self, from: u64, to: u64, sink: &mut LineSink) -> Result<bool, String> {
        match self {
            Self::Generated { log, stop_at } => {
                let end = to.min(*stop_at);
                for i in from..end {
                    log.write(i, sink);
                }
                Ok(end < *stop_at)
            }
            Self::Replay(replay) => {
                for _ in from..to {
                    match replay.next().await {
                        Ok(Some(piece)) => sink.piece(piece),
                        Ok(None) => return Ok(false),
                        Err(e) => return Err(format!("sim: SIM_REPLAY: reading stopped: {e}")),
                    }
                }
                Ok(true)
            }
        }
    }
}

/// Runs the workload to its end (or until `cancel`), writing to `out`. A stalled workload
/// (`stall_after`) runs until `cancel` and gives None.
/// `ordinal` is which pod of its Job this is (0 for the first); `memory_limit` the container's;
/// `replay_dir` the simulator's `--replay-dir`.
pub async fn run(
    spec: &WorkloadSpec,
    ordinal: u64,
    memory_limit: Option<u64>,
    replay_dir: Option<&Path>,
    out: Arc<LogStream>,
    clock: Clock,
    cancel: CancellationToken,
) -> Option<Exit> {
    if let Some(problem) = &spec.problem {
        out.push(problem.clone());
        return Some(Exit::from_code(2));
    }
    let total = spec.log_lines;
    let oom_at = match (spec.oom_needs_bytes, memory_limit) {
        (Some(need), Some(limit)) if limit < need => Some(total / 2),
        (Some(u64::MAX), None) => Some(total / 2),
        _ => None,
    };
    let mut source = match &spec.replay {
        Some(name) => match Replay::open(replay_dir, name).await {
            Ok(replay) => Source::Replay(replay),
            Err(refusal) => {
                out.push(refusal);
                return Some(Exit::from_code(2));
            }
        },
        None => Source::Generated {
            log: TrainingLog::new(&log_shape(spec), ordinal),
            stop_at: oom_at.unwrap_or(total),
        },
    };
    let oom_at = oom_at.filter(|_| matches!(source, Source::Generated { .. }));
    let mut sink = LineSink::default();
    let start = tokio::time::Instant::now();
    let mut written = 0u64;
    loop {
        if cancel.is_cancelled() {
            return None;
        }
        if spec.stall_after.is_some_and(|n| written >= n) {
            return stall(&mut sink, &out, &cancel).await;
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
        let due = spec.stall_after.map_or(due, |n| due.min(n));
        let more = match source.fill(written, due, &mut sink).await {
            Ok(more) => more,
            Err(message) => {
                sink.end_line();
                sink.line(message);
                out.push_pieces(sink.take());
                return Some(Exit::from_code(2));
            }
        };
        out.push_pieces(sink.take());
        written = due;
        if !more {
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
        // Killed mid-line: what was written stays, without its newline.
        sink.finish();
        out.push_pieces(sink.take());
        return Some(Exit {
            code: 137,
            reason: "OOMKilled",
        });
    }
    if spec.stall_after.is_some() {
        // Stalled past the log's end: it never exits.
        return stall(&mut sink, &out, &cancel).await;
    }
    if ordinal < spec.fail_attempts {
        sink.end_line();
        sink.line("Traceback (most recent call last):");
        sink.line("  File \"/workspace/train.py\", line 142, in <module>");
        sink.line("RuntimeError: simulated failure (SIM_FAIL_ATTEMPTS)");
        out.push_pieces(sink.take());
        return Some(Exit::from_code(1));
    }
    sink.finish();
    out.push_pieces(sink.take());
    Some(Exit::from_code(spec.exit_code))
}

/// Writes nothing more until the container is stopped. An unterminated line stays unwritten,
/// as the runtime keeps it until its newline comes.
async fn stall(sink: &mut LineSink, out: &LogStream, cancel: &CancellationToken) -> Option<Exit> {
    out.push_pieces(sink.take());
    cancel.cancelled().await;
    None
}

fn log_shape(spec: &WorkloadSpec) -> LogShape {
    LogShape {
        format: spec.log_format,
        epochs: spec.epochs,
        updates: spec.log_lines,
        lines_per_second: spec.lines_per_second,
        diverge_at: spec.diverge_at,
        hostile: spec.hostile_output,
        rank: spec.rank,
        world: spec.world_size,
    }
}

#[cfg(test)]
#[path = "workload_tests.rs"]
mod tests;
