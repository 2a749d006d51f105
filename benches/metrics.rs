//! Metrics parsing throughput on short log lines: each format on its own, lines without any
//! metric (the fast path most of a log takes), and a mixed stream through `MetricStream` as
//! the ingest path feeds it. The target: ingest with parsing stays at 5 M short lines/s or more.
//!
//! `cargo bench --bench metrics`
//!
//! Instruction counts, which the noise of a shared machine cannot move: with
//! `GANTRY_BENCH_COUNT=<case>:<n>` (a name of `LINES`, or `stream`) the binary runs that case `n`
//! times in `counted_*` functions instead of criterion, for callgrind to count them alone
//! (`--toggle-collect='*counted_*'`). `benches/instructions.sh` does it for every case and prints
//! instructions per line.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::hint::black_box;
use std::time::Duration;

use criterion::{Criterion, Throughput, criterion_group};
use gantry::metrics::LineParser;
use gantry::metrics::pieces::MetricStream;

const LINES: &[(&str, &str)] = &[
    (
        "no_metrics",
        "Loading checkpoint shards from the local cache, please wait",
    ),
    (
        "no_metrics_with_colon",
        "2024-05-01 12:00:01 INFO data.py:88] shard 3 ready",
    ),
    (
        "plain",
        "epoch 2/3 step 17/100 loss=0.8123 accuracy=0.6512 lr=3.0e-04",
    ),
    (
        "hf_dict",
        "{'loss': 2.3012, 'grad_norm': 1.9217, 'learning_rate': 4.9e-05, 'epoch': 0.05}",
    ),
    (
        "tqdm",
        "Epoch 0:  22%|██▏       | 4/18 [00:17<01:02, 4.47s/it, loss=10.07, v_num=1]",
    ),
    (
        "keras",
        "469/469 [==============================] - 8s 16ms/step - loss: 0.5815 - accuracy: 0.7712",
    ),
    ("json", r#"{"step": 100, "loss": 2.31, "lr": 0.0003}"#),
];

fn parse_each_format(c: &mut Criterion) {
    let mut group = c.benchmark_group("metrics_parse");
    group.measurement_time(Duration::from_secs(3));
    group.throughput(Throughput::Elements(1));
    for (name, line) in LINES {
        let mut parser = LineParser::new();
        group.bench_function(*name, |b| {
            b.iter(|| {
                let parsed = parser.parse(black_box(line.as_bytes()));
                black_box(parsed.map(|p| p.metrics().count()))
            })
        });
    }
    group.finish();
}

/// A log as a training pod writes it: nine lines in ten without metrics, the tenth a step line.
fn mixed_log(lines: usize) -> Vec<u8> {
    let mut log = Vec::new();
    for i in 0..lines {
        let line = if i % 10 == 9 {
            format!("step {i} loss={:.4} lr=3.0e-04\n", 1.0 / (i + 1) as f64)
        } else {
            format!(
                "INFO worker {} fetched batch {i} in the background\n",
                i % 8
            )
        };
        log.extend_from_slice(line.as_bytes());
    }
    log
}

/// Lines in the stream's log.
const STREAM_LINES: usize = 100_000;

fn ingest_stream(c: &mut Criterion) {
    const N: usize = STREAM_LINES;
    let log = mixed_log(N);
    let mut group = c.benchmark_group("metrics_ingest");
    group.measurement_time(Duration::from_secs(5));
    group.throughput(Throughput::Elements(N as u64));
    group.bench_function("mixed_log_in_64k_pieces", |b| {
        b.iter(|| black_box(ingest_log(&log)))
    });
    group.finish();
}

/// The stream's log through a new `MetricStream` in 64 KiB pieces, as the ingest path gives it;
/// the points read.
fn ingest_log(log: &[u8]) -> usize {
    let mut stream = MetricStream::new();
    let mut parser = LineParser::new();
    let mut points = 0usize;
    for piece in log.chunks(64 * 1024) {
        stream.push(&mut parser, piece, |s| points += s.metrics().count());
    }
    stream.finish(&mut parser, |s| points += s.metrics().count());
    points
}

/// One line parsed `n` times, as `parse_each_format` does (the parser made outside).
#[inline(never)]
fn counted_parse(parser: &mut LineParser, line: &[u8], n: usize) -> usize {
    let mut points = 0;
    for _ in 0..n {
        let parsed = parser.parse(black_box(line));
        points += parsed.map_or(0, |p| p.metrics().count());
    }
    points
}

/// The stream's log ingested `n` times (the log made outside).
#[inline(never)]
fn counted_stream(log: &[u8], n: usize) -> usize {
    (0..n).map(|_| ingest_log(black_box(log))).sum()
}

/// `GANTRY_BENCH_COUNT=<case>:<n>`: the case alone, `n` times (see the module's header).
fn count(spec: &str) {
    let (case, n) = spec
        .split_once(':')
        .and_then(|(case, n)| Some((case, n.parse::<usize>().ok()?)))
        .expect("GANTRY_BENCH_COUNT=<case>:<n>");
    let lines = if case == "stream" {
        let log = mixed_log(STREAM_LINES);
        black_box(counted_stream(&log, n));
        n * STREAM_LINES
    } else {
        let (_, line) = LINES
            .iter()
            .find(|(name, _)| *name == case)
            .expect("a case of LINES, or stream");
        let mut parser = LineParser::new();
        // The line's names judged once, outside the count, as in criterion's warm-up.
        black_box(parser.parse(line.as_bytes()).map(|p| p.metrics().count()));
        black_box(counted_parse(&mut parser, line.as_bytes(), n));
        n
    };
    println!("{case}: {lines} lines");
}

criterion_group!(benches, parse_each_format, ingest_stream);

fn main() {
    if let Ok(spec) = std::env::var("GANTRY_BENCH_COUNT") {
        count(&spec);
        return;
    }
    benches();
    Criterion::default().configure_from_args().final_summary();
}
