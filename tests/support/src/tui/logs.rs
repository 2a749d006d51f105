//! Log lines and how they reach the viewer: plain and stamped lines, the followed tail's and the
//! viewer's own fetch's, and the two pods' logs the attempts' states hold.

use gantry::engine::Report;
use gantry::engine::world::FollowLogs;
use gantry::k8s::logs::{LogLine, TailEvent};

use super::{Tui, ago};

pub fn line(text: &str) -> LogLine {
    LogLine {
        ts: None,
        bytes: bytes::Bytes::from(text.to_string()),
        continues: false,
    }
}

/// A line stamped `secs` before `now()`.
pub fn stamped(text: &str, secs_ago: i64) -> LogLine {
    LogLine {
        ts: ago(secs_ago).map(|t| t.as_nanosecond()),
        ..line(text)
    }
}

/// The lines of the followed tail (current generation).
pub fn tail_lines(app: &mut Tui, pod: &str, lines: Vec<LogLine>) -> Vec<FollowLogs> {
    let generation = app.model.logs.generation;
    app.on_event(Report::Tail {
        generation,
        event: TailEvent::Lines {
            pod: pod.into(),
            lines,
        },
    })
}

/// Lines of the viewer's own fetch (an older attempt, a previous container).
pub fn fetched_lines(app: &mut Tui, pod: &str, lines: Vec<LogLine>) {
    let generation = app.logs.fetched.as_ref().expect("a fetch").generation;
    app.on_fetched(
        generation,
        TailEvent::Lines {
            pod: pod.into(),
            lines,
        },
    );
}

pub fn oom_lines() -> Vec<LogLine> {
    vec![
        stamped("loading dataset shard 0/8 from gs://demo-bucket/train", 530),
        stamped("epoch 1/10 step 100 loss=2.3012 acc=0.112", 500),
        stamped(
            "RuntimeError: CUDA out of memory. Tried to allocate 2.00 GiB (GPU 0; 14.75 GiB total capacity)",
            470,
        ),
    ]
}

pub fn training_lines() -> Vec<LogLine> {
    let mut lines = vec![stamped(
        "loading dataset shard 0/8 from gs://demo-bucket/train",
        560,
    )];
    for (n, (loss, acc)) in [
        (2.2871, 0.131),
        (1.9044, 0.324),
        (1.5123, 0.472),
        (1.2210, 0.561),
        (0.9875, 0.644),
        (0.8120, 0.702),
    ]
    .into_iter()
    .enumerate()
    {
        let epoch = n + 1;
        lines.push(stamped(
            &format!(
                "epoch {epoch}/10 step {} loss={loss:.4} acc={acc:.3}",
                epoch * 100
            ),
            500 - 60 * n as i64,
        ));
    }
    lines.push(stamped(
        "checkpoint saved to gs://demo-bucket/ckpt/epoch-6.pt",
        150,
    ));
    lines
}
