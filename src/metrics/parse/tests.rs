//! A corpus of lines as the frameworks print them (from their sources: transformers'
//! `PrinterCallback`/`ProgressCallback`, tqdm's `format_meter`, Lightning's `TQDMProgressBar`,
//! Keras' `Progbar`), with the traps that make a naive reader see metrics that are not there.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use proptest::prelude::*;

use super::*;

fn parsed(line: &str) -> Parsed {
    parse(line.as_bytes()).unwrap_or_else(|| panic!("no metrics in {line:?}"))
}

fn named(pairs: &[(&str, f64)]) -> Vec<(String, f64)> {
    pairs.iter().map(|(n, v)| (n.to_string(), *v)).collect()
}

fn counter(done: f64, total: f64) -> Option<Counter> {
    Some(Counter { done, total })
}

#[test]
fn hugging_face_training_dicts_give_their_metrics_and_fractional_epoch() {
    let p =
        parsed("{'loss': 2.3012, 'grad_norm': 1.9217, 'learning_rate': 4.9e-05, 'epoch': 0.05}");
    assert_eq!(p.format, Format::PyDict);
    assert_eq!(
        p.metrics,
        named(&[
            ("loss", 2.3012),
            ("grad_norm", 1.9217),
            ("learning_rate", 4.9e-05)
        ])
    );
    assert_eq!((p.step, p.epoch), (None, Some(0.05)));
}

#[test]
fn hugging_face_eval_and_summary_dicts_give_every_number() {
    let p = parsed(
        "{'eval_loss': 0.4123, 'eval_accuracy': 0.8731, 'eval_runtime': 12.3456, \
         'eval_samples_per_second': 81.02, 'eval_steps_per_second': 10.13, 'epoch': 1.0}",
    );
    assert_eq!(p.metrics.len(), 5);
    assert_eq!(p.metrics[0], ("eval_loss".to_string(), 0.4123));
    let p = parsed(
        "{'train_runtime': 1234.5678, 'train_samples_per_second': 48.6, \
         'train_steps_per_second': 6.08, 'total_flos': 1.2e+16, 'train_loss': 0.5678, 'epoch': 3.0}",
    );
    let names: Vec<_> = p.metrics.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(
        names,
        [
            "train_runtime",
            "train_samples_per_second",
            "train_steps_per_second",
            "train_loss"
        ]
    );
}

#[test]
fn python_dicts_keep_nan_inf_and_numpy_scalars_and_skip_strings() {
    let p = parsed(
        "{'loss': nan, 'grad_norm': inf, 'delta': -inf, 'lr': np.float64(3e-4), \
         'scale': tensor(1.92, device='cuda:0'), 'name': 'run {1}', 'ok': True, 'hist': [1, 2]}",
    );
    let m = p.metrics;
    assert_eq!(m.len(), 5);
    assert!(m[0].1.is_nan());
    assert_eq!(m[1].1, f64::INFINITY);
    assert_eq!(m[2].1, f64::NEG_INFINITY);
    assert_eq!(m[3], ("lr".to_string(), 3e-4));
    assert_eq!(m[4], ("scale".to_string(), 1.92));
}

#[test]
fn a_dict_after_a_log_prefix_is_read() {
    let p = parsed("2024-05-01 12:00:01,234 - INFO - {'loss': 0.25, 'epoch': 0.5}");
    assert_eq!(p.metrics, named(&[("loss", 0.25)]));
}

#[test]
fn json_lines_give_step_metrics_and_nested_names() {
    let p = parsed(r#"{"step": 100, "loss": 2.31, "lr": 0.0003, "tokens_per_sec": 51234.5}"#);
    assert_eq!(p.format, Format::Json);
    assert_eq!(p.step, Some(100.0));
    assert_eq!(
        p.metrics,
        named(&[("loss", 2.31), ("lr", 0.0003), ("tokens_per_sec", 51234.5)])
    );
    let p = parsed(
        r#"{"epoch": 1, "train": {"loss": 0.5, "acc": 0.9}, "time": "2024-05-01T12:00:00Z"}"#,
    );
    assert_eq!(p.epoch, Some(1.0));
    assert_eq!(p.metrics, named(&[("train/loss", 0.5), ("train/acc", 0.9)]));
}

#[test]
fn json_as_python_writes_it_keeps_nan_and_infinity() {
    let p = parsed(
        r#"{"step": 7, "loss": NaN, "grad_norm": Infinity, "delta": -Infinity, "note": "NaN here"}"#,
    );
    assert_eq!(p.step, Some(7.0));
    assert_eq!(p.metrics.len(), 3);
    assert!(p.metrics[0].1.is_nan());
    assert_eq!(p.metrics[1].1, f64::INFINITY);
    assert_eq!(p.metrics[2].1, f64::NEG_INFINITY);
}

#[test]
fn a_structured_log_record_without_metrics_has_none() {
    assert_eq!(
        parse(br#"{"level": "info", "msg": "saving checkpoint", "ts": 1714560000.5}"#),
        None
    );
}

#[test]
fn lightning_bars_give_epoch_progress_and_postfix_metrics() {
    let p = parsed("Epoch 0:  22%|██▏       | 4/18 [00:17<01:02, 4.47s/it, loss=10.07, v_num=1]");
    assert_eq!(p.format, Format::Tqdm);
    assert_eq!(p.metrics, named(&[("loss", 10.07)]));
    assert_eq!(p.epoch, Some(0.0));
    assert_eq!(p.progress.step, counter(4.0, 18.0));
    assert_eq!(p.progress.percent, Some(22.0));
    let p = parsed(
        "Epoch 3: 100%|██████████| 1563/1563 [00:25<00:00, 61.27it/s, v_num=0, \
         train_loss_step=0.312, val_loss=0.401, val_acc=0.876, train_loss_epoch=0.355]",
    );
    assert_eq!(p.metrics.len(), 4);
    assert_eq!(p.progress.step, counter(1563.0, 1563.0));
}

#[test]
fn tqdm_postfix_numbers_in_short_form_are_read() {
    let p = parsed("Epoch 1:  50%|█████     | 9/18 [00:04<00:04,  2.01it/s, loss=nan, lr=3e-4]");
    assert!(p.metrics[0].1.is_nan());
    assert_eq!(p.metrics[1], ("lr".to_string(), 3e-4));
}

#[test]
fn hugging_face_bar_gives_step_progress_without_metrics() {
    let p = parsed(" 10%|█         | 50/500 [00:20<03:00,  2.49it/s]");
    assert!(p.metrics.is_empty());
    assert_eq!(p.progress.step, counter(50.0, 500.0));
    assert_eq!(p.progress.fraction(), Some(0.1));
}

#[test]
fn bars_of_validation_downloads_and_loading_are_not_training_progress() {
    for line in [
        "Validation DataLoader 0:  45%|████▌     | 71/157 [00:00<00:00, 212.81it/s]",
        "model.safetensors: 100%|██████████| 548M/548M [00:05<00:00, 98.7MB/s]",
        "Map: 100%|██████████| 1000/1000 [00:00<00:00, 12345.67 examples/s]",
        "Loading checkpoint shards: 100%|██████████| 2/2 [00:03<00:00,  1.50s/it]",
    ] {
        assert_eq!(parse(line.as_bytes()), None, "{line}");
    }
}

#[test]
fn keras_epoch_headers_give_epoch_progress() {
    let p = parsed("Epoch 1/2");
    assert!(p.metrics.is_empty());
    assert_eq!(p.epoch, Some(1.0));
    assert_eq!(p.progress.epoch, counter(1.0, 2.0));
}

#[test]
fn keras_2_lines_give_metrics_and_the_batch_counter() {
    let p = parsed(
        "469/469 [==============================] - 8s 16ms/step - loss: 0.5815 \
         - accuracy: 0.7712 - val_loss: 0.4311 - val_accuracy: 0.8459",
    );
    assert_eq!(p.format, Format::Keras);
    assert_eq!(
        p.metrics,
        named(&[
            ("loss", 0.5815),
            ("accuracy", 0.7712),
            ("val_loss", 0.4311),
            ("val_accuracy", 0.8459)
        ])
    );
    assert_eq!(p.progress.step, counter(469.0, 469.0));
    let p = parsed(
        " 32/469 [=>............................] - ETA: 3s - loss: 0.9876 - accuracy: 1.2345e-04",
    );
    assert_eq!(
        p.metrics,
        named(&[("loss", 0.9876), ("accuracy", 1.2345e-04)])
    );
}

#[test]
fn keras_3_lines_are_read_through_their_colour_codes() {
    let line = "\x1b[1m469/469\x1b[0m \x1b[32m━━━━━━━━━━━━━━━━━━━━\x1b[0m\x1b[37m\x1b[0m \x1b[1m3s\x1b[0m \
                5ms/step - accuracy: 0.8557 - loss: 0.4866 - val_accuracy: 0.9613 - val_loss: 0.1282";
    let p = parsed(line);
    assert_eq!(p.format, Format::Keras);
    assert_eq!(p.metrics.len(), 4);
    assert_eq!(p.metrics[1], ("loss".to_string(), 0.4866));
    let p = parsed("469/469 - 8s - 16ms/step - loss: 0.5815 - accuracy: 0.7712");
    assert_eq!(p.format, Format::Keras);
    assert_eq!(p.metrics.len(), 2);
}

#[test]
fn plain_loops_give_step_progress_and_metrics_with_units() {
    let p = parsed(
        "step 00010/01000 (1.00%) | loss: 6.123456 | grad_norm: 0.9312 | lrm: 1.00 | dt: 35.12ms \
         | tok/sec: 14,934,102 | mfu: 42.13",
    );
    assert_eq!(p.format, Format::Plain);
    assert_eq!(p.step, Some(10.0));
    assert_eq!(p.progress.step, counter(10.0, 1000.0));
    assert_eq!(
        p.metrics,
        named(&[
            ("loss", 6.123456),
            ("grad_norm", 0.9312),
            ("lrm", 1.0),
            ("dt (ms)", 35.12),
            ("tok/sec", 14_934_102.0),
            ("mfu", 42.13)
        ])
    );
}

#[test]
fn an_epoch_counter_beside_a_step_counter_gives_both() {
    let p = parsed("epoch 2/3 step 17/100 loss=0.8123 accuracy=0.6512 lr=3.0e-04 samples/s=1191.1");
    assert_eq!(p.progress.epoch, counter(2.0, 3.0));
    assert_eq!(p.progress.step, counter(17.0, 100.0));
    assert_eq!((p.epoch, p.step), (Some(2.0), Some(17.0)));
    assert_eq!(p.metrics.len(), 4);
    assert_eq!(p.metrics[2], ("lr".to_string(), 3e-4));
    assert!((p.progress.fraction().unwrap() - 1.17 / 3.0).abs() < 1e-9);
}

#[test]
fn colour_codes_between_keys_and_values_are_stripped() {
    let p = parsed("\x1b[32mloss\x1b[0m=\x1b[1m0.25\x1b[0m \x1b[36mstep\x1b[0m=3");
    assert_eq!(p.metrics, named(&[("loss", 0.25)]));
    assert_eq!(p.step, Some(3.0));
}

#[test]
fn log_prefixes_with_times_files_and_lines_are_not_metrics() {
    let p = parsed("2024-05-01 12:00:01,234 INFO trainer.py:123] step=50 loss=1.25 lr: 3e-4");
    assert_eq!(p.metrics, named(&[("loss", 1.25), ("lr", 3e-4)]));
    assert_eq!(p.step, Some(50.0));
}

#[test]
fn addresses_ports_versions_dates_paths_and_settings_are_not_metrics() {
    for line in [
        "I0501 12:00:01.234567 140245 train.py:88] Connecting to 10.0.0.12:29500 (MASTER_PORT=29500)",
        "Rendezvous at 10.128.0.5:29400, world_size=8, rank=3, local_rank: 3",
        "torch==2.3.1 transformers: 4.41.2 cuda: 12.1.105",
        "date: 2024-05-01 time: 12:00:01 elapsed=00:17",
        "saved to /data/run-3/step=100/loss=0.5.ckpt and s3://bucket/lr=3e-4/",
        "[rank 0/8] starting training: epochs=3 steps_per_epoch=100 device=cuda:0 seed=42",
        "http://10.0.0.1:8080/metrics?loss=1",
        "Epoch 3 took 12:30 on host-1.example.com:443",
        "  Num examples = 1,000",
        "  Num Epochs = 3",
        "  Instantaneous batch size per device = 8",
        "  Total train batch size (w. parallel, distributed & accumulation) = 8",
        "  Gradient Accumulation steps = 1",
        "  Total optimization steps = 375",
        "  Number of trainable parameters = 124,439,808",
    ] {
        let p = parse(line.as_bytes());
        assert!(
            p.as_ref().is_none_or(|p| p.metrics.is_empty()),
            "{line}: {p:?}"
        );
    }
}

#[test]
fn a_checkpoint_path_beside_metrics_is_left_out() {
    let p = parsed(
        "epoch 1/3 done: val_loss=0.9000 val_accuracy=0.5000 checkpoint=/workspace/ckpt/epoch-1.pt",
    );
    assert_eq!(
        p.metrics,
        named(&[("val_loss", 0.9), ("val_accuracy", 0.5)])
    );
    assert_eq!(p.progress.epoch, counter(1.0, 3.0));
}

#[test]
fn lines_without_metrics_give_none() {
    for line in [
        "",
        "Loading dataset",
        "INFO: all ranks ready",
        "=====",
        "{}",
        "{'a': 'b'}",
        "100%|",
    ] {
        assert_eq!(parse(line.as_bytes()), None, "{line}");
    }
}

#[test]
fn the_reusable_parser_gives_what_parse_gives() {
    let mut parser = LineParser::new();
    let line = b"step=5 loss=0.5 acc: 0.75";
    let p = parser.parse(line).unwrap();
    assert_eq!(
        p.metrics().collect::<Vec<_>>(),
        [("loss", 0.5), ("acc", 0.75)]
    );
    assert_eq!(Some(p.to_owned()), parse(line));
}

#[test]
fn one_line_gives_at_most_sixty_four_metrics() {
    let line: String = (0..200).map(|i| format!("m{i}={i} ")).collect();
    assert_eq!(parsed(&line).metrics.len(), 64);
}

proptest! {
    #[test]
    fn no_bytes_make_it_panic(bytes in proptest::collection::vec(any::<u8>(), 0..300)) {
        let _ = parse(&bytes);
    }

    #[test]
    fn no_near_miss_of_a_format_makes_it_panic(
        line in "[ a-z0-9.,:=/%|\\[\\]{}()'\"<>━█\x1b-]{0,200}"
    ) {
        let _ = parse(line.as_bytes());
    }
}
