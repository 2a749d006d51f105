//! Lines as the training code large models are trained with prints them, one test per form
//! (the whole files, with where each format comes from, are `tests/metrics_samples/`).

#![allow(clippy::unwrap_used, clippy::expect_used)]

use super::*;

fn parsed(line: &str) -> Parsed {
    parse(line.as_bytes()).unwrap_or_else(|| panic!("no metrics in {line:?}"))
}

fn names(p: &Parsed) -> Vec<&str> {
    p.metrics.iter().map(|(n, _)| n.as_str()).collect()
}

fn value(p: &Parsed, name: &str) -> f64 {
    p.metrics
        .iter()
        .find(|(n, _)| n == name)
        .unwrap_or_else(|| panic!("no {name} in {p:?}"))
        .1
}

#[test]
fn nanogpt_lists_of_key_value_pairs_are_read_with_their_units() {
    let p = parsed("iter 100: loss 4.1234, time 123.45ms, mfu 12.34%");
    assert_eq!(p.step, Some(100.0));
    assert_eq!(names(&p), ["loss", "time (ms)", "mfu (%)"]);
    assert_eq!(value(&p, "time (ms)"), 123.45);
    assert_eq!(value(&p, "mfu (%)"), 12.34);
    let p = parsed("step 250: train loss 3.9876, val loss 4.0123");
    assert_eq!(p.step, Some(250.0));
    assert_eq!(names(&p), ["train loss", "val loss"]);
}

#[test]
fn one_pair_alone_is_prose_not_a_metric() {
    for line in [
        "  File \"train.py\", line 123, in <module>",
        "Initializing distributed: rank 0, world size 8",
        "saving checkpoint to out, step 5",
    ] {
        let p = parse(line.as_bytes());
        assert!(
            p.as_ref().is_none_or(|p| p.metrics.is_empty()),
            "{line}: {p:?}"
        );
    }
}

#[test]
fn megatron_names_are_kept_whole_and_the_iteration_is_the_step() {
    let p = parsed(
        " [2024-06-01 12:00:00] iteration      100/  500000 | consumed samples:        12800 | \
         elapsed time per iteration (ms): 1234.5 | throughput per GPU (TFLOP/s/GPU): 123.4 | \
         learning rate: 1.500000E-04 | global batch size:   128 | lm loss: 7.650000E+00 | \
         loss scale: 65536.0 | grad norm: 1.234 | number of skipped iterations:   0 | \
         number of nan iterations:   0 |",
    );
    assert_eq!(p.step, Some(100.0));
    assert_eq!(
        p.progress.step,
        Some(Counter {
            done: 100.0,
            total: 500000.0
        })
    );
    assert_eq!(
        names(&p),
        [
            "consumed samples",
            "elapsed time per iteration (ms)",
            "throughput per GPU (TFLOP/s/GPU)",
            "learning rate",
            "global batch size",
            "lm loss",
            "loss scale",
            "grad norm",
            "number of skipped iterations",
            "number of nan iterations",
        ]
    );
    assert_eq!(value(&p, "learning rate"), 1.5e-4);
    assert_eq!(value(&p, "lm loss"), 7.65);
}

#[test]
fn fairseq_counts_within_the_epoch_and_names_its_updates() {
    let p = parsed(
        "2023-01-01 12:00:00 | INFO | train_inner | epoch 001:    100 / 1000 loss=9.876, \
         nll_loss=9.5, ppl=724.2, wps=12345.6, ups=1.2, wpb=4096, bsz=32, num_updates=100, \
         lr=0.0005, gnorm=1.234, train_wall=45, gb_free=9.8, wall=50",
    );
    assert_eq!(p.epoch, Some(1.0));
    assert_eq!(p.step, Some(100.0));
    assert_eq!(
        p.progress.step,
        Some(Counter {
            done: 100.0,
            total: 1000.0
        })
    );
    assert_eq!(value(&p, "loss"), 9.876);
    assert!(!names(&p).contains(&"num_updates"));
    // The epoch's summary: `| key value |` pairs.
    let p = parsed(
        "2023-01-01 12:10:00 | INFO | train | epoch 001 | loss 9.1 | nll_loss 8.9 | ppl 478.4 \
         | wps 12000 | num_updates 1000 | lr 0.0005 | gnorm 1.1 | wall 600",
    );
    assert_eq!(p.step, Some(1000.0));
    assert_eq!(value(&p, "loss"), 9.1);
    assert_eq!(value(&p, "wall"), 600.0);
}

#[test]
fn deepspeed_lists_of_one_are_read_and_the_rank_is_not() {
    let p = parsed("[Rank 0] step=100, skipped=0, lr=[0.0001], mom=[(0.9, 0.999)]");
    assert_eq!(p.step, Some(100.0));
    assert_eq!(names(&p), ["skipped", "lr"]);
    assert_eq!(value(&p, "lr"), 1e-4);
}

#[test]
fn two_names_that_share_a_last_word_stay_two_series() {
    let p = parsed(
        "| loss: 1.5 | lm loss: 2.5 | number of skipped iterations: 1 | number of nan iterations: 2 |",
    );
    assert_eq!(
        names(&p),
        [
            "loss",
            "lm loss",
            "number of skipped iterations",
            "number of nan iterations"
        ]
    );
}

#[test]
fn a_word_after_a_number_is_not_part_of_a_name() {
    // torchtitan: fields two blanks apart, each name its own.
    let p = parsed(
        "step:  1  loss:  8.1234  grad_norm:  1.2345  memory: 12.34GiB(30.12%)  tps: 1,234  mfu: 5.67%",
    );
    assert_eq!(p.step, Some(1.0));
    assert_eq!(
        names(&p),
        ["loss", "grad_norm", "memory (GiB)", "tps", "mfu (%)"]
    );
    assert_eq!(value(&p, "tps"), 1234.0);
}

#[test]
fn a_rich_bar_counts_the_batches_of_its_epoch_after_the_bar() {
    let p = parsed(
        "Epoch 1/5  \u{2501}\u{2501}\u{2501}\u{2501}\u{2578}\u{2501} 32/32 0:00:01 • 0:00:00 28.17it/s v_num: 0.000 train_loss: 1.221",
    );
    assert_eq!(p.format, Format::Rich);
    assert_eq!(p.epoch, Some(1.0));
    assert_eq!(p.step, None);
    assert_eq!(
        p.progress.step,
        Some(Counter {
            done: 32.0,
            total: 32.0
        })
    );
    assert_eq!(names(&p), ["train_loss"]);
    // A validation bar is not the training's progress.
    let p = parse("Validation \u{2501}\u{2501}\u{2501} 5/10 0:00:01 • 0:00:01 9.1it/s".as_bytes());
    assert!(p.is_none_or(|p| p.progress.step.is_none()));
}

#[test]
fn json_values_written_as_strings_are_read() {
    let p = parsed(
        r#"{"epoch": 1, "update": 0.127, "loss": "12.846", "num_updates": "100", "lr": "1.25975e-05", "note": "12 parts"}"#,
    );
    assert_eq!(p.step, Some(100.0));
    assert_eq!(names(&p), ["update", "loss", "lr"]);
}
